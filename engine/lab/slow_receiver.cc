// The slow receiver's NIC: a FIFO of fixed capacity filled by the switch and drained at a rate.
#include "engine/lab/slow_receiver.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>

namespace droce::engine {

Status SlowReceiverConfig::parse(const std::string& option, const std::string& text, SlowReceiverConfig& out) {
  const auto bad = [&](const std::string& why) {
    return Status::error(StatusCode::kInvalidArgument, option + ": '" + text + "': " + why);
  };
  const std::size_t colon = text.find(':');
  if (colon == std::string::npos) return bad("expected N:F, a port (droce-coll: a rank) and a fraction (e.g. 2:0.25)");
  SlowReceiverConfig c;
  const char* first = text.data();
  const auto r = std::from_chars(first, first + colon, c.port);
  if (colon == 0 || r.ec != std::errc() || r.ptr != first + colon || c.port > 63)
    return bad("the port (rank) must be 0..63");
  const std::string f = text.substr(colon + 1);
  char* end = nullptr;
  c.fraction = std::strtod(f.c_str(), &end);
  if (f.empty() || end != f.c_str() + f.size() || !(c.fraction > 0 && c.fraction < 1))
    return bad("F, the fraction of the link rate the host drains, must be above 0 and below 1");
  out = c;
  return {};
}

Status check_slow_receivers(const std::vector<SlowReceiverConfig>& slow, const std::vector<std::uint16_t>& stuck_ports,
                            std::size_t ports, bool pfc, std::uint64_t buffer_bytes) {
  for (std::size_t i = 0; i < slow.size(); ++i) {
    const std::uint16_t p = slow[i].port;
    const std::string at = "--slow-receiver: port (rank) " + std::to_string(p);
    if (p >= ports) return Status::error(StatusCode::kInvalidArgument, at + " does not exist");
    if (std::find(stuck_ports.begin(), stuck_ports.end(), p) != stuck_ports.end())
      return Status::error(StatusCode::kInvalidArgument, at + " is a stuck port already");
    for (std::size_t j = 0; j < i; ++j)
      if (slow[j].port == p) return Status::error(StatusCode::kInvalidArgument, at + " given twice");
  }
  if (!slow.empty() && !pfc)
    return Status::fail(StatusCode::kInvalidArgument,
                        "--slow-receiver: a slow receiver pauses lossless classes: give --pfc");
  if (!slow.empty() && buffer_bytes < 4 * 9'000)
    return Status::fail(StatusCode::kInvalidArgument, "--slow-receiver-buffer-bytes: at least 36000 (4 jumbo frames)");
  return {};
}

SlowReceiverNic::~SlowReceiverNic() {
  for (std::size_t i = 0; i < count_; ++i) rte_pktmbuf_free(fifo_[(head_ + i) % fifo_.size()]);
}

void SlowReceiverNic::init(double fraction, double link_gbps, std::uint64_t buffer_bytes, std::uint64_t tsc_hz) {
  buffer_bytes_ = buffer_bytes;
  xoff_bytes_ = buffer_bytes / 2;
  xon_bytes_ = buffer_bytes / 4;
  // Frames of at least 60 bytes: never more than this many held.
  fifo_.assign(static_cast<std::size_t>(buffer_bytes / 60 + 1), nullptr);
  tsc_per_byte_ = 8.0 * static_cast<double>(tsc_hz) / (fraction * link_gbps * 1e9);
  bank_tsc_ = tsc_hz / 500'000;
  catch_up_tsc_ = tsc_hz / 1'000;
}

std::uint16_t SlowReceiverNic::accept(rte_mbuf* const* pkts, std::uint16_t n) {
  std::uint16_t k = 0;
  for (; k < n; ++k) {
    const std::uint32_t len = rte_pktmbuf_pkt_len(pkts[k]);
    if (c_.held_bytes + len > buffer_bytes_ || count_ == fifo_.size()) break;
    fifo_[(head_ + count_) % fifo_.size()] = pkts[k];
    ++count_;
    c_.held_bytes += len;
  }
  c_.held_max_bytes = std::max(c_.held_max_bytes, c_.held_bytes);
  return k;
}

void SlowReceiverNic::drain(std::uint64_t now_tsc, FramePort& link) {
  // Idle, the NIC banks 2 us, as the switch's idle ports do; backlogged since the last call, it
  // catches up on what a late poll left (its host drained all along), up to 1 ms of it.
  const std::uint64_t bank = count_ != 0 ? catch_up_tsc_ : bank_tsc_;
  std::uint64_t next = std::max(next_tsc_, now_tsc > bank ? now_tsc - bank : 0);
  while (count_ != 0 && next <= now_tsc) {
    rte_mbuf* m = fifo_[head_];
    const std::uint32_t len = rte_pktmbuf_pkt_len(m);
    if (link.tx_burst(&m, 1) != 1) break;  // the host's ring is full: it waits there too
    head_ = (head_ + 1) % fifo_.size();
    --count_;
    c_.held_bytes -= len;
    ++c_.delivered_frames;
    // Ethernet's 24 bytes of preamble, FCS and gap, as the switch's shaper counts them.
    next += static_cast<std::uint64_t>(static_cast<double>(len + 24) * tsc_per_byte_);
  }
  next_tsc_ = next;
}

bool SlowReceiverNic::wants_pause() {
  if (!pausing_ && c_.held_bytes > xoff_bytes_) {
    pausing_ = true;
    ++c_.pauses;
  } else if (pausing_ && c_.held_bytes <= xon_bytes_) {
    pausing_ = false;
    ++c_.resumes;
  }
  return pausing_;
}

}  // namespace droce::engine
