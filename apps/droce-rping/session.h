// One rping connection over RDMA-CM and its pings, either role, on one endpoint polled by this
// thread: the buffers (one registered region), the CM steps (listen/accept or connect, then the
// client's DREQ), the ping loop of rping's protocol, and the results the report shows. Every wait
// polls the endpoint and ends at --timeout without progress, on Ctrl-C, or on the first error.
#pragma once

#include <cstdint>
#include <string>

#include "apps/droce-rping/options.h"
#include "apps/droce-rping/rping_data.h"
#include "apps/droce-rping/setup.h"
#include <droce/engine/core/status.h>
#include <droce/engine/endpoint/endpoint_cm.h>
#include <droce/protocols/rc/types.h>

namespace droce::rping {

struct Results {
  std::uint64_t pings = 0;      // round trips completed
  std::uint64_t verified = 0;   // of them, those whose data checked
  std::uint32_t ping_size = 0;  // the client's size (the server learns it from the first advertisement)
  std::uint32_t conn = 0;       // our communication ID
  std::uint32_t qpn = 0;
  std::uint8_t peer_ip[4] = {};
  std::uint8_t peer_mac[6] = {};
  const char* mac_from = "";    // "given", "arp" (client) or "req" (server: the REQ's frame)
  engine::CmEndpointEvent established;  // kEstablished: the agreed parameters
  bool connected = false;
  bool disconnected = false;
  bool disconnected_by_peer = false;
  std::uint16_t reject_reason = 0;
};

class Session {
 public:
  Session(const Options& o, Setup& st);
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // The buffers, registered for local write and remote read and write.
  [[nodiscard]] engine::Status prepare();
  // Client: the server's MAC (--peer-mac or ARP), a QP, REQ; returns at kEstablished.
  // Server: listens on -p, accepts the first REQ; returns at kEstablished.
  [[nodiscard]] engine::Status connect();
  // The pings: the client's -C, or the server's until the client disconnects.
  [[nodiscard]] engine::Status run();
  // Client: DREQ, and the wait for the DREP. Server: nothing (the client disconnected). Either:
  // a moment of polling so that our last MADs and ACKs leave.
  [[nodiscard]] engine::Status finish();

  [[nodiscard]] const Results& results() const { return r_; }

 private:
  // The region (Setup::buffers): two receive slots, two send slots (16 bytes each), the start and sink buffers.
  static constexpr std::uint32_t kSlots = 2;
  std::uint8_t* recv_slot(std::uint32_t i) const { return st_.buffers.get() + i * kAdvertBytes; }
  std::uint8_t* send_slot(std::uint32_t i) const { return st_.buffers.get() + (kSlots + i) * kAdvertBytes; }
  std::uint8_t* start_buf() const { return st_.buffers.get() + 2 * kSlots * kAdvertBytes; }
  std::uint8_t* sink_buf() const { return start_buf() + kBufBytes; }
  static constexpr std::uint32_t kBufBytes = 65536;

  [[nodiscard]] engine::Status create_qp(std::uint32_t pmtu);
  [[nodiscard]] engine::Status post_receive(std::uint32_t slot);
  [[nodiscard]] engine::Status send_advert(std::uint32_t slot, const std::uint8_t* buf, std::uint32_t size);
  [[nodiscard]] engine::Status post_rdma(rc::WrOpcode op, std::uint32_t len, std::uint64_t remote_addr, std::uint32_t rkey);
  // The next received advertisement (one must be waiting); its slot is posted again.
  [[nodiscard]] engine::Status take_advert(std::uint8_t out[16]);
  [[nodiscard]] engine::Status run_client();
  [[nodiscard]] engine::Status run_server();

  // Polls until done() holds; `what` names the wait in the timeout's message.
  template <class Done>
  [[nodiscard]] engine::Status wait_for(const std::string& what, Done done);
  // One poll: the endpoint, its completions and its CM events.
  void step();
  void on_completion(const rc::Completion& c);
  void on_cm_event(const engine::CmEndpointEvent& e);

  const Options& o_;
  Setup& st_;
  engine::RcEndpoint& ep_;
  rc::MemoryRegion mr_{};
  Results r_;
  engine::Status error_;          // the first failure seen while polling
  bool request_waiting_ = false;  // server: a REQ to answer (req_)
  engine::CmEndpointEvent req_;
  std::uint32_t recv_ring_[kSlots] = {};  // slots holding received advertisements, in order
  std::uint32_t recv_head_ = 0, recv_len_ = 0;
  std::uint64_t sends_posted_ = 0, sends_done_ = 0;
  bool read_done_ = false, write_done_ = false;
  bool disconnecting_ = false;  // flushed completions are expected from here on
};

}  // namespace droce::rping
