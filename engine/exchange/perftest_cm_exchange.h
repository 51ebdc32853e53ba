// perftest 6.06's rdma_cm mode (-R: "rdma_cm QPs : ON", "Data ex. method : rdma_cm"), so that
// `ib_write_bw -R` & co. can be either side against droce. Read from perftest's
// perftest_communication.c (create_comm_struct, establish_connection, rdma_client_connect,
// rdma_server_connect, ctx_hand_shake with rdma_write_keys / rdma_read_keys, ctx_xchg_data_rdma,
// create_rdma_cm_connection and its rdma_cm_* event handlers) and perftest_resources.c
// (destroy_ctx, rdma_cm_disconnect_nodes). docs/cm.md, "perftest -R", has the wire sequence.
//
// In -R mode perftest makes 1 + N rdma_cm connections (RDMA_PS_TCP), all to the same port (-p,
// default 18515):
//   1. the "comm" connection: an RC QP of its own (tx and rx depth 1), which carries everything
//      the TCP socket carries in the default mode, each message one SEND: the version and
//      preamble, every ctx_hand_shake (a 56-byte binary pingpong_dest, below), the BW reports;
//   2. after a barrier on it, one connection per data QP, all requested at once; the passive side
//      binds its QPs to the REQs in the order they arrive.
// The data QPs' remote QPN and PSNs come from the CM (REQ/REP), not from the key messages: their
// QPN and PSN fields are printed, never used; rkey and vaddr are.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "engine/core/memory_region.h"
#include "engine/core/status.h"
#include "engine/endpoint/rc_endpoint.h"
#include "engine/exchange/perftest_exchange.h"

namespace droce::engine {

inline constexpr std::uint16_t kPerftestDefaultPort = 18515;  // DEF_PORT, for -p, TCP and rdma_cm alike
// sizeof(struct pingpong_dest) on LP64: seven 32-bit fields, the 64-bit vaddr (aligned, so four
// pad bytes after rkey) and the 16-byte GID. Also the length of every receive perftest posts on
// the comm QP (post_one_recv_wqe): no comm message may be longer.
inline constexpr std::size_t kPerftestDestBytes = 56;
// perftest's client tries the data connections 10 times, 100 ms apart (rdma_cm_client_connection):
// its server starts listening for them only after the barrier that precedes them.
inline constexpr std::uint32_t kPerftestCmConnectTries = 10;
inline constexpr std::uint32_t kPerftestCmRetryGapMs = 100;

// ---- the key message over SEND (pure) ----
// rdma_write_keys with HAVE_ENDIAN (every Linux build): each integer big-endian at its offset:
//   0 lid, 4 out_reads, 8 qpn, 12 psn, 16 rkey, 20 pad, 24 vaddr (8), 32 gid (16), 48 srqn,
//   52 gid_index. The pad is perftest's stack (we send zeros and read nothing there); the reader
//   (rdma_read_keys) ignores srqn and gid_index.
void format_perftest_dest(const PerftestKeys& k, std::uint8_t out[kPerftestDestBytes]);
// Strict: exactly 56 bytes; LID and out_reads within 16 bits, QPN and PSN within 24. QPN 0 is
// legal: the barriers around the rdma_cm connections send an all-zero pingpong_dest.
[[nodiscard]] Status parse_perftest_dest(const std::uint8_t* msg, std::size_t len, PerftestKeys& out);

// One data QP's rdma_cm connection as the CM agreed it.
struct PerftestCmDataQp {
  std::uint32_t qpn = 0;         // ours
  std::uint32_t conn = 0;        // our communication ID
  std::uint32_t remote_qpn = 0;  // the peer's QP (REP's or REQ's local QPN)
  // A Starting PSN is what its sender receives at (docs/cm.md): we send at the peer's REQ's or
  // REP's and receive at ours (the QP's configured sq_psn).
  std::uint32_t send_psn = 0;      // our first PSN: the peer's Starting PSN
  std::uint32_t expected_psn = 0;  // the peer's first PSN: our Starting PSN
  bool established = false;        // RTU seen (passive: or the first packet); active: REP taken
  bool disconnected = false;
};

struct PerftestCmConfig {
  std::uint16_t port = kPerftestDefaultPort;  // -p
  // Client: the server's MAC and IP (the MAC resolved beforehand, e.g. by ARP). Server: unused
  // (the REQ says who the client is).
  wire::L2L3Address server;
  // The comm QP: perftest's is RC with depth 1 each way; RNR retry 7 (infinite) as perftest's.
  rc::QpAttr comm_qp = [] {
    rc::QpAttr a;
    a.sq_depth = 16;
    a.rq_depth = 16;
    a.rnr_retry = 7;
    a.recv_mode = rc::RecvMode::kPostedBuffers;
    return a;
  }();
  std::uint32_t data_connect_tries = kPerftestCmConnectTries;  // per data QP, on REJ
  std::uint32_t retry_gap_ms = kPerftestCmRetryGapMs;
  // Tries of the comm connection: perftest's rdma_client_connect makes one.
  std::uint32_t comm_connect_tries = 1;
  // The end: how long the server waits for the client's DREQs before sending its own.
  std::uint32_t teardown_ms = 2000;
  // How long each side waits for its DREQs to be answered. A lost DREQ or DREP is sent again only
  // after the peer's CM response timeout (4.096 us x 2^20 = 4.3 s at rdma_cm's default, 20): one
  // loss among 1 % lost MADs made a 2 s wait end with connections still open. Two tries fit.
  std::uint32_t answer_ms = 10'000;
};

// One side of perftest's -R exchange over one RcEndpoint: the comm QP and all data QPs live on
// it (its QP1 carries their CM messages). Everything is driven by polling: every wait polls
// (the idle function when one is set, else the endpoint's poll()) and has a deadline, and a
// timed-out wait names what did not arrive. Single-threaded, on the endpoint's thread.
//
// Use (either role):
//   PerftestCmSession s(ep, role, cfg, timeout_ms);
//   s.open();                       // the comm connection (establish_connection)
//   s.preamble(mtu, pre);           // as PerftestControl, over the comm QP
//   create the data QPs (INIT), fill `mine` (qpn, rkey, vaddr, out_reads, gid)
//   s.connect(test, mine, theirs, cb); // barrier, rdma_cm data connections, barrier, keys...
//   ... traffic, before_size / after_size ...
//   s.finish(test, ...);            // reports, the close barrier
//   s.disconnect();                 // DREQs as perftest's destroy_ctx sends them
class PerftestCmSession final : public PerftestControl {
 public:
  PerftestCmSession(RcEndpoint& ep, PerftestRole role, const PerftestCmConfig& cfg, std::uint32_t timeout_ms);
  // Moves a comm QP still open to ERROR (its buffers live here), then deregisters them.
  ~PerftestCmSession() override;

  // establish_connection. Client: the comm QP, one receive posted, REQ to the server's port,
  // until the REP (kEstablished). Server: listens on the port, takes the first REQ, accepts it
  // with the comm QP (perftest's server does not wait for the RTU either: the client's first
  // SEND stands for it). A REJ, a REQ timeout or the deadline is an error naming it.
  [[nodiscard]] Status open();

  // ctx_xchg_data_rdma: one SEND of n bytes (n <= 56) each way; the client writes first. Each
  // write waits for its SEND's completion (the peer's ACK), as rdma_write_data does.
  [[nodiscard]] Status exchange(const void* mine, void* theirs, std::size_t n, const char* what) override;
  // One 56-byte pingpong_dest each way (format_perftest_dest).
  [[nodiscard]] Status handshake(const PerftestKeys& mine, PerftestKeys& theirs) override;
  // ctx_close_connection in -R mode: the key exchange alone ("done" is for the socket only).
  [[nodiscard]] Status close(const PerftestKeys& mine) override;
  // create_rdma_cm_connection, then the test's sequence: an all-zero barrier on the comm QP; the
  // data connections, one per mine[i].qpn (each QP in INIT): the client requests them all at once
  // (retrying one the server refuses, data_connect_tries times, retry_gap_ms apart); the server
  // binds mine[0], mine[1], ... to the REQs in their order of arrival and refuses any beyond
  // them; the zero barrier again; then the steps of PerftestControl::connect. `connect_qps` is
  // called where the TCP mode connects: the QPs are in RTS already (do not connect them again);
  // `theirs` holds the peer's keys for their rkey, vaddr and out_reads. Each key's QPN must be
  // one of the peer's connected QPs (QPs pair by arrival order, not by index: see data_qps()).
  [[nodiscard]] Status connect(PerftestTest t, const std::vector<PerftestKeys>& mine, std::vector<PerftestKeys>& theirs,
                               const std::function<Status()>& connect_qps) override;
  // The data connections alone (connect() runs them between its barriers), for callers that
  // drive their own sequence.
  [[nodiscard]] Status connect_data_qps(const std::vector<std::uint32_t>& qpns);

  // destroy_ctx's order: the data connections, then the comm one. The client disconnects every
  // established data connection (DREQ) and waits for each to end; the server waits teardown_ms
  // for the client's DREQs, then disconnects what is left; then the comm connection likewise.
  // An answer missing after answer_ms is an error naming the connection (the peer may simply
  // have exited: its kernel answers DREQs even then, so this is rare).
  [[nodiscard]] Status disconnect();

  // The data QPs, in the order of `mine` (the CM's agreed QPNs and PSNs).
  [[nodiscard]] const std::vector<PerftestCmDataQp>& data_qps() const { return data_; }
  [[nodiscard]] std::uint32_t comm_qpn() const { return comm_qpn_; }
  // The peer's address, from the comm connection (the server learns it from the REQ).
  [[nodiscard]] const wire::L2L3Address& peer() const { return peer_; }
  // Ends the wait in progress (or the next one, if none is) with an error naming `why`, once: for
  // a caller's idle function that sees a reason to stop waiting which the session cannot (a
  // stalled peer, a Ctrl-C). Later waits run as usual (disconnect() after it, for one).
  void abandon_wait(std::string why) { abandon_ = std::move(why); }
  // The peer disconnected the comm connection (perftest exits, or a Ctrl-C): a run may stop.
  [[nodiscard]] bool peer_disconnected() const { return comm_.disconnected; }

 private:
  enum class Phase : std::uint8_t { kIdle, kAcceptComm, kAcceptData, kRunning };
  struct Conn {
    std::uint32_t conn = 0;
    bool established = false, disconnected = false, closed = false, failed = false;
    std::string failure;  // kRejected / kTimedOut, said in words
  };

  // One turn of the transport and the CM's events.
  void pump();
  void on_event(const CmEndpointEvent& e);
  void accept_data(const CmEndpointEvent& e);
  // Polls until done() or the deadline; the error names `what`.
  [[nodiscard]] Status wait_for(const std::function<bool()>& done, std::uint32_t ms, const std::string& what);
  [[nodiscard]] Status comm_broken(const char* doing) const;
  [[nodiscard]] Status post_comm_recv();
  [[nodiscard]] Status send_message(const void* p, std::size_t n, const char* what);
  [[nodiscard]] Status recv_message(void* p, std::size_t n, const char* what);
  [[nodiscard]] Status connect_comm();
  [[nodiscard]] Status accept_comm();
  [[nodiscard]] Status request_data(std::size_t i);
  [[nodiscard]] Status end_without_message() override;
  [[nodiscard]] Status disconnect_all(std::vector<Conn*>& conns, bool passive, const char* what);
  [[nodiscard]] std::string server_text() const;

  RcEndpoint& ep_;
  PerftestCmConfig cfg_;
  MemoryRegistry* memory_ = nullptr;
  rc::MemoryRegion mr_{};
  bool registered_ = false;
  // The comm QP's buffers, one registration: the receive (56 bytes posted, perftest's length) at
  // 0, the send at 64.
  alignas(64) std::uint8_t bufs_[128] = {};
  std::uint8_t* recv_buf() { return bufs_; }
  std::uint8_t* send_buf() { return bufs_ + 64; }
  std::uint32_t comm_qpn_ = 0;
  Conn comm_;
  wire::L2L3Address peer_;
  Phase phase_ = Phase::kIdle;
  // A received comm message not yet read (the one receive is posted again at once).
  std::uint8_t stash_[kPerftestDestBytes] = {};
  std::uint32_t stash_len_ = 0;
  bool stash_full_ = false;
  std::string comm_error_;  // a failed completion on the comm QP
  std::string abandon_;     // abandon_wait's reason, until a wait takes it
  bool send_done_ = false;
  // REQs that came before the data phase (kept until it starts), and the data connections.
  std::vector<CmEndpointEvent> early_reqs_;
  std::vector<PerftestCmDataQp> data_;
  std::vector<Conn> data_conn_;
  std::size_t data_accepted_ = 0;
  std::uint64_t refused_ = 0;  // REQs beyond the data QPs, refused
};

}  // namespace droce::engine
