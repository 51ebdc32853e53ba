// One rping connection over RDMA-CM and its pings, either role: its QP on one worker's endpoint,
// its buffers (its part of one region, registered in that worker's registry), the CM steps on the
// port owner's endpoint (connect and the client's DREQ; the server's accept), the ping loop of
// rping's protocol, and the results the report shows. The client's waits poll every worker and end
// at --timeout without progress, on Ctrl-C, or on the first error. The server's pings are a state
// machine (serve) that server.cc drives for each connection on its worker's lcore.
#pragma once

#include <droce/engine/core/status.h>
#include <droce/engine/endpoint/endpoint_cm.h>
#include <droce/protocols/rc/types.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "apps/common/recovery_offer.h"
#include "apps/droce-rping/options.h"
#include "apps/droce-rping/rping_data.h"
#include "apps/droce-rping/setup.h"

namespace droce::rping {

struct Results {
  std::uint64_t pings = 0;      // round trips completed
  std::uint64_t verified = 0;   // of them, those whose data checked
  std::uint32_t ping_size = 0;  // the client's size (the server learns it from the first advertisement)
  std::uint32_t conn = 0;       // our communication ID
  std::uint32_t qpn = 0;
  std::uint16_t worker = 0;  // the worker whose endpoint holds the QP
  engine::IpAddress peer_ip;
  std::uint8_t peer_mac[6] = {};
  const char* mac_from = "";            // "given", "arp", "nd" (client) or "req" (server: the REQ's frame)
  engine::CmEndpointEvent established;  // kEstablished: the agreed parameters
  bool connected = false;
  bool disconnected = false;
  bool disconnected_by_peer = false;
  std::uint16_t reject_reason = 0;
  rc::Recovery recovery = rc::Recovery::kGoBackN;  // what the QP uses (agreed in REQ/REP)
  const char* offer = "none";          // the peer's REQ/REP private data: "sr"/"gbn", or why it was no offer
  std::uint32_t peer_sr_bdp_pkts = 0;  // the peer's cap, when it offered or accepted SR
  // The QP's counters at the end (rc::RcCounters): packets resent, and SR's PSNs a SACK showed missing.
  std::uint64_t retransmitted_packets = 0;
  std::uint64_t sr_resent_on_sack = 0;
};

class Session {
 public:
  // The region's bytes one session uses (two receive and two send slots, the start and sink buffers).
  static constexpr std::uint32_t kBufBytes = 65536;
  static constexpr std::uint32_t kSlots = 2;
  static constexpr std::size_t kRegionBytes = 2 * kSlots * kAdvertBytes + 2 * std::size_t{kBufBytes};

  // `region`: kRegionBytes of memory registered as `mr` in worker `worker`'s registry
  // (Setup::buffers, session i's part); the session's QP is created on that worker, in the
  // region's protection domain (mr.pd).
  Session(const Options& o, Setup& st, std::uint16_t worker, std::uint8_t* region, const rc::MemoryRegion& mr);
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Client: the server's MAC (--peer-mac or ARP), a QP, REQ (with our recovery offer under
  // --recovery sr); returns at kEstablished.
  [[nodiscard]] engine::Status connect();
  // Client: its -C pings.
  [[nodiscard]] engine::Status run();
  // Client: DREQ, the wait for the DREP, and a moment of polling so that our last MADs and ACKs
  // leave (the server's is Server::finish).
  [[nodiscard]] engine::Status finish();

  // Server: a QP for the REQ `req` with first PSN `psn` (drawn by the port owner's thread), its
  // recovery (selective repeat only when we run --recovery sr and the REQ offers it), and our
  // acceptance when SR. On the QP's worker's thread.
  [[nodiscard]] engine::Status prepare_accept(const engine::CmEndpointEvent& req, std::uint32_t psn);
  // Server, after prepare_accept: the REP (cm_accept), on the port owner's thread. The QP is in INIT
  // and unconnected, so its worker's poll does not write it meanwhile (docs/cm.md).
  [[nodiscard]] engine::Status send_rep();
  // Server: both, on one thread (the QP on the port owner's worker, or no worker running).
  [[nodiscard]] engine::Status accept(const engine::CmEndpointEvent& req, std::uint32_t psn) {
    if (engine::Status s = prepare_accept(req, psn); !s.ok()) return s;
    return send_rep();
  }
  // Server: advances the pings as far as what arrived allows; `progressed` is set when a step was
  // taken. An error ends this connection (the run fails).
  [[nodiscard]] engine::Status serve(bool& progressed);
  [[nodiscard]] bool served() const { return serve_ == Serve::kDone; }
  // Server: what serve() waits for (the timeout's message).
  [[nodiscard]] std::string waiting_for() const;
  // Either role: this connection's CM event, and its completions.
  void on_cm_event(const engine::CmEndpointEvent& e);
  void poll_completions();
  // The QP's counters into the results (at the end of the run).
  void take_counters();

  [[nodiscard]] const Results& results() const { return r_; }
  [[nodiscard]] std::uint32_t conn() const { return r_.conn; }

 private:
  // The region: two receive slots, two send slots (16 bytes each), the start and sink buffers.
  std::uint8_t* recv_slot(std::uint32_t i) const { return region_ + i * kAdvertBytes; }
  std::uint8_t* send_slot(std::uint32_t i) const { return region_ + (kSlots + i) * kAdvertBytes; }
  std::uint8_t* start_buf() const { return region_ + 2 * kSlots * kAdvertBytes; }
  std::uint8_t* sink_buf() const { return start_buf() + kBufBytes; }
  // The server's pings, one state per wait of rping's server loop.
  enum class Serve : std::uint8_t { kWaitRtu, kWaitStart, kWaitRead, kWaitSink, kWaitWrite, kDone };

  [[nodiscard]] engine::Status create_qp(std::uint32_t pmtu, std::uint32_t psn);
  [[nodiscard]] engine::Status post_receive(std::uint32_t slot);
  [[nodiscard]] engine::Status send_advert(std::uint32_t slot, const std::uint8_t* buf, std::uint32_t size);
  [[nodiscard]] engine::Status post_rdma(rc::WrOpcode op, std::uint32_t len, std::uint64_t remote_addr,
                                         std::uint32_t rkey);
  // The next received advertisement (one must be waiting); its slot is posted again.
  [[nodiscard]] engine::Status take_advert(std::uint8_t out[16]);
  // Server: what the current step of serve() waits for.
  [[nodiscard]] std::string waiting_for_step() const;
  // Server: one transition of serve(); false when it waits.
  [[nodiscard]] bool serve_once(engine::Status& s);

  // Polls until done() holds; `what` names the wait in the timeout's message.
  template <class Done>
  [[nodiscard]] engine::Status wait_for(const std::string& what, Done done);
  // One poll (the client's): every worker, the CM's events, this QP's completions.
  void step();
  void on_completion(const rc::Completion& c);

  const Options& o_;
  Setup& st_;
  engine::RcEndpoint& ep_;   // the QP's worker's
  engine::RcEndpoint& cm_;   // the port owner's (its CM)
  engine::PsnSource& psns_;  // Setup::psns (the client's QPs; the server's PSNs come with the REQ)
  std::uint8_t* region_;
  rc::MemoryRegion mr_;
  Results r_;
  engine::Status error_;  // the first failure seen while polling
  Serve serve_ = Serve::kWaitRtu;
  std::uint64_t ping_ = 0;                // server: the ping in progress
  BufferAdvert start_{};                  // server: its client's start buffer
  std::uint32_t recv_ring_[kSlots] = {};  // slots holding received advertisements, in order
  std::uint32_t recv_head_ = 0, recv_len_ = 0;
  std::uint64_t sends_posted_ = 0, sends_done_ = 0;
  bool read_done_ = false, write_done_ = false;
  bool disconnecting_ = false;  // flushed completions are expected from here on
  // The server's ERROR move at a DREQ runs on the QP's worker, and the event that says so comes
  // through the port owner's thread (cm_inbox.h): the flushes may be seen first. They are then
  // left unjudged; the DREQ's event ends the connection, and without it the run times out.
  bool flushed_early_ = false;
  std::uint8_t acceptance_[apps::kRecoveryOfferBytes] = {};  // the REP's private data (prepare_accept -> send_rep)
  std::uint32_t acceptance_len_ = 0;
};

}  // namespace droce::rping
