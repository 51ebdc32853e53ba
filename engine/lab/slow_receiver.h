// SlowReceiverNic: the NIC at the far end of a lab switch port whose host drains it at a fraction
// of the link rate, pausing the switch as its receive buffer fills — SIGCOMM'16's slow receivers
// ("RDMA over Commodity Ethernet at Scale", §4.4: a NIC short of receive resources sends pauses,
// thousands a second, and the switch holds its port). The switch transmits into it at the port's
// rate; it hands the frames on to the port's link (ethdev or ring) at `fraction` of that rate,
// in order, never dropping: what does not fit in its buffer stays in the switch's queue. Above
// xoff bytes held it asks for an 802.1Qbb pause of the lossless priorities, and at or below xon
// for the resume (LabSwitch applies both to the port, counted as pauses received).
#pragma once

#include <rte_mbuf.h>

#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/lab/frame_port.h"

namespace droce::engine {

// A port's slow receiver: "PORT:F" on the command line.
struct SlowReceiverConfig {
  std::uint16_t port = 0;
  double fraction = 1;  // of the port's rate, (0, 1)
  // "PORT:F", F in (0, 1); Ok, or kInvalidArgument naming `option`.
  [[nodiscard]] static Status parse(const std::string& option, const std::string& text, SlowReceiverConfig& out);
};

// Ok when every slow receiver names one of `ports` once, none a stuck port, with PFC on and a
// buffer of at least four jumbo frames; else kInvalidArgument naming --slow-receiver.
[[nodiscard]] Status check_slow_receivers(const std::vector<SlowReceiverConfig>& slow,
                                          const std::vector<std::uint16_t>& stuck_ports, std::size_t ports, bool pfc,
                                          std::uint64_t buffer_bytes);

struct SlowReceiverCounters {
  std::uint64_t pauses = 0;   // XOFFs the NIC sent the switch
  std::uint64_t resumes = 0;  // XONs
  std::uint64_t held_bytes = 0, held_max_bytes = 0;
  std::uint64_t delivered_frames = 0;
};

class SlowReceiverNic {
 public:
  SlowReceiverNic() = default;
  ~SlowReceiverNic();
  SlowReceiverNic(const SlowReceiverNic&) = delete;
  SlowReceiverNic& operator=(const SlowReceiverNic&) = delete;

  // Drains at fraction x link_gbps; holds up to buffer_bytes; pauses above buffer / 2, resumes at
  // buffer / 4 (room above the threshold for what a paused switch has already committed).
  void init(double fraction, double link_gbps, std::uint64_t buffer_bytes, std::uint64_t tsc_hz);
  // Takes pkts[0..n) in order while they fit; returns how many it took (the rest stay the caller's).
  std::uint16_t accept(rte_mbuf* const* pkts, std::uint16_t n);
  // Hands the host what its drain rate allows by now_tsc, through `link`.
  void drain(std::uint64_t now_tsc, FramePort& link);
  // The pause state the NIC wants now: true while it holds above xoff, until it drains to xon.
  [[nodiscard]] bool wants_pause();
  [[nodiscard]] const SlowReceiverCounters& counters() const { return c_; }

 private:
  std::vector<rte_mbuf*> fifo_;  // a ring of capacity fifo_.size()
  std::size_t head_ = 0, count_ = 0;
  std::uint64_t buffer_bytes_ = 0, xoff_bytes_ = 0, xon_bytes_ = 0;
  double tsc_per_byte_ = 0;
  std::uint64_t next_tsc_ = 0, bank_tsc_ = 0, catch_up_tsc_ = 0;
  bool pausing_ = false;
  SlowReceiverCounters c_;
};

}  // namespace droce::engine
