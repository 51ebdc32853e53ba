// perftest 6.06's -R exchange: the comm connection, the data connections, the 56-byte binary key
// message, and the disconnects, all driven from the endpoint's poll with deadlines.
#include "engine/exchange/perftest_cm_exchange.h"

#include <arpa/inet.h>

#include <chrono>
#include <cstring>

#include "protocols/cm/cm_messages.h"

namespace droce::engine {
namespace {

constexpr std::uint64_t kSyncWrId = 5;  // perftest's SYNC_SPEC_ID (local only: never on the wire)
constexpr std::size_t kMaxEarlyReqs = 64;

void put_be32(std::uint8_t* p, std::uint32_t v) {
  p[0] = static_cast<std::uint8_t>(v >> 24);
  p[1] = static_cast<std::uint8_t>(v >> 16);
  p[2] = static_cast<std::uint8_t>(v >> 8);
  p[3] = static_cast<std::uint8_t>(v);
}

std::uint64_t now_ms() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

// The REJ reasons a perftest peer's kernel sends (§12.6.7, table 112), in words.
std::string rej_text(std::uint16_t reason) {
  std::string s = "REJ reason " + std::to_string(reason);
  switch (static_cast<cm::RejReason>(reason)) {
    case cm::RejReason::kInvalidServiceId:
      return s + " (invalid service ID: nobody listens on that port)";
    case cm::RejReason::kConsumerReject:
      return s + " (consumer reject: the application refused it)";
    case cm::RejReason::kNoResources:
      return s + " (no resources)";
    case cm::RejReason::kTimeout:
      return s + " (timeout)";
    case cm::RejReason::kStaleConnection:
      return s + " (stale connection)";
    case cm::RejReason::kInvalidMtu:
      return s + " (invalid MTU)";
    case cm::RejReason::kInvalidGid:
      return s + " (invalid GID: the peer cannot resolve the REQ's primary path)";
    case cm::RejReason::kInvalidAlternateGid:
      return s + " (invalid alternate GID: the peer took the REQ to name an alternate path)";
    default:
      return s;
  }
}

// For messages: the address in its family's text (IPv6 as inet_ntop writes it, RFC 5952).
std::string ip_text(const wire::L2L3Address& a, bool ipv6) {
  char text[INET6_ADDRSTRLEN] = {};
  if (inet_ntop(ipv6 ? AF_INET6 : AF_INET, a.ip, text, sizeof(text)) == nullptr) return "?";
  return text;
}

}  // namespace

void format_perftest_dest(const PerftestKeys& k, std::uint8_t out[kPerftestDestBytes]) {
  std::memset(out, 0, kPerftestDestBytes);
  put_be32(out + 0, k.lid);
  put_be32(out + 4, k.out_reads);
  put_be32(out + 8, k.qpn & 0xFFFFFF);
  put_be32(out + 12, k.psn & 0xFFFFFF);
  put_be32(out + 16, k.rkey);
  // 20..23: the pad before the 8-byte-aligned vaddr.
  put_be32(out + 24, static_cast<std::uint32_t>(k.vaddr >> 32));
  put_be32(out + 28, static_cast<std::uint32_t>(k.vaddr));
  std::memcpy(out + 32, k.gid, 16);
  put_be32(out + 48, k.srqn);
  // 52..55: gid_index, which the reader ignores (perftest sends its own; 0 here).
}

Status parse_perftest_dest(const std::uint8_t* m, std::size_t len, PerftestKeys& out) {
  if (len != kPerftestDestBytes)
    return Status::error(StatusCode::kPeer, "perftest -R key message has " + std::to_string(len) +
                                                " bytes, expected 56 (a binary struct pingpong_dest)");
  const std::uint32_t lid = parse_be32(m), out_reads = parse_be32(m + 4), qpn = parse_be32(m + 8),
                      psn = parse_be32(m + 12);
  if (lid > 0xFFFF)
    return Status::error(StatusCode::kPeer, "perftest -R key message: LID " + std::to_string(lid) + " is over 16 bits");
  if (out_reads > 0xFFFF)
    return Status::error(StatusCode::kPeer,
                         "perftest -R key message: out_reads " + std::to_string(out_reads) + " is over 16 bits");
  if (qpn > 0xFFFFFF)
    return Status::error(StatusCode::kPeer, "perftest -R key message: QPN " + std::to_string(qpn) + " is over 24 bits");
  if (psn > 0xFFFFFF)
    return Status::error(StatusCode::kPeer, "perftest -R key message: PSN " + std::to_string(psn) + " is over 24 bits");
  out.lid = static_cast<std::uint16_t>(lid);
  out.out_reads = static_cast<std::uint16_t>(out_reads);
  out.qpn = qpn;
  out.psn = psn;
  out.rkey = parse_be32(m + 16);
  out.vaddr = parse_be64(m + 24);
  std::memcpy(out.gid, m + 32, 16);
  out.srqn = 0;  // rdma_read_keys does not read it either
  return {};
}

PerftestCmSession::PerftestCmSession(RcEndpoint& ep, PerftestRole role, const PerftestCmConfig& cfg,
                                     std::uint32_t timeout_ms)
    : PerftestControl(role, timeout_ms), ep_(ep), cfg_(cfg), memory_(ep.config().queues.memory) {}

PerftestCmSession::~PerftestCmSession() {
  // The comm QP's posted receive (and a SEND not yet acknowledged) point into this object: an
  // open comm QP goes to ERROR first, flushing them, so nothing lands here after we are gone.
  if (comm_qpn_ != 0) {
    const rc::RcQp* qp = ep_.qp(comm_qpn_);
    if (qp != nullptr && qp->state() != rc::QpState::kError) (void)ep_.set_error(comm_qpn_);
  }
  if (registered_) (void)memory_->deregister(mr_.lkey);
}

std::string PerftestCmSession::server_text() const {
  return ip_text(cfg_.server, ep_.config().addresses.ipv6) + " port " + std::to_string(cfg_.port);
}

void PerftestCmSession::pump() {
  if (idle_)
    idle_();
  else
    ep_.poll();
  CmEndpointEvent e;
  for (std::uint32_t i = 0; i < EndpointCm::kEventQueue && ep_.cm_next_event(e); ++i) on_event(e);
  if (comm_qpn_ == 0) return;
  rc::Completion c[4];
  const unsigned n = ep_.poll_cq(comm_qpn_, c, 4);
  for (unsigned i = 0; i < n; ++i) {
    if (c[i].status != rc::WcStatus::kSuccess) {
      if (comm_error_.empty())
        comm_error_ = std::string(c[i].is_recv ? "a receive" : "a SEND") + " on the comm QP completed with " +
                      rc::wc_status_name(c[i].status);
      continue;
    }
    if (!c[i].is_recv) {
      send_done_ = true;
      continue;
    }
    if (stash_full_) {
      if (comm_error_.empty())
        comm_error_ = "the peer sent a second comm message before we read the first (perftest sends one at a time)";
      continue;
    }
    std::memcpy(stash_, recv_buf(), std::min<std::size_t>(c[i].byte_len, kPerftestDestBytes));
    stash_len_ = c[i].byte_len;
    stash_full_ = true;
    // rdma_read_keys posts the next receive after taking the message; so do we (one at a time).
    if (Status s = post_comm_recv(); !s.ok() && comm_error_.empty()) comm_error_ = s.message();
  }
}

void PerftestCmSession::on_event(const CmEndpointEvent& e) {
  if (e.kind == CmEndpointEventKind::kConnectRequest) {
    if (role_ == PerftestRole::kServer && phase_ == Phase::kAcceptComm && comm_.conn == 0) {
      // establish_connection's rdma_accept: the first REQ on the port is the comm connection.
      comm_ = Conn{};
      comm_.conn = e.conn;
      peer_ = e.peer;
      if (Status s = ep_.cm_accept(e.conn, comm_qpn_); !s.ok()) {
        comm_.failed = true;
        comm_.failure = "accepting it failed: " + s.message();
      }
    } else if (role_ == PerftestRole::kServer && phase_ == Phase::kAcceptData) {
      accept_data(e);
    } else if (role_ == PerftestRole::kServer && phase_ != Phase::kRunning && early_reqs_.size() < kMaxEarlyReqs) {
      early_reqs_.push_back(e);  // a data REQ before our barrier finished: taken when the data phase starts
    } else {
      // perftest's server refuses REQs beyond its QPs (rdma_cm_connection_request_handler); a
      // client listens for none.
      (void)ep_.cm_reject(e.conn);
      ++refused_;
    }
    return;
  }
  Conn* c = nullptr;
  std::size_t data_index = data_conn_.size();
  if (comm_.conn != 0 && e.conn == comm_.conn) {
    c = &comm_;
  } else {
    for (std::size_t i = 0; i < data_conn_.size(); ++i)
      if (data_conn_[i].conn != 0 && data_conn_[i].conn == e.conn) {
        c = &data_conn_[i];
        data_index = i;
        break;
      }
  }
  if (c == nullptr) return;  // a connection given up on (a retried one's old ID)
  switch (e.kind) {
    case CmEndpointEventKind::kEstablished:
      c->established = true;
      if (data_index < data_.size()) {
        PerftestCmDataQp& d = data_[data_index];
        d.established = true;
        d.remote_qpn = e.params.remote_qpn;
        d.send_psn = e.params.send_psn;
        d.expected_psn = e.params.expected_psn;
      }
      break;
    case CmEndpointEventKind::kRejected:
      c->failed = true;
      c->failure = e.by_peer ? "refused by the peer: " + rej_text(e.reject_reason)
                             : "refused by us: " + rej_text(e.reject_reason);
      break;
    case CmEndpointEventKind::kTimedOut:
      c->failed = true;
      c->failure = role_ == PerftestRole::kClient ? "no answer to our REQ through every CM retry"
                                                  : "no RTU for our REP through every CM retry";
      break;
    case CmEndpointEventKind::kDisconnected:
      c->disconnected = true;
      if (data_index < data_.size()) data_[data_index].disconnected = true;
      break;
    case CmEndpointEventKind::kClosed:
      c->closed = true;
      break;
    case CmEndpointEventKind::kConnectRequest:
      break;
  }
}

void PerftestCmSession::accept_data(const CmEndpointEvent& e) {
  if (data_accepted_ >= data_.size()) {
    (void)ep_.cm_reject(e.conn);
    ++refused_;
    return;
  }
  // rdma_cm_connection_request_handler: QP number connection_index takes the REQ, in arrival order.
  const std::size_t i = data_accepted_++;
  Conn& c = data_conn_[i];
  c = Conn{};
  c.conn = e.conn;
  PerftestCmDataQp& d = data_[i];
  d.conn = e.conn;
  d.remote_qpn = e.params.remote_qpn;
  // We send at the REQ's Starting PSN; our REP announces the QP's configured first PSN as the one
  // we receive at (CmLocalConfig::start_psn).
  d.send_psn = e.params.send_psn;
  // On the port owner of several workers the QP may be another worker's (ep_.qp finds none there):
  // the established event gives its agreed PSNs either way.
  if (const rc::RcQp* qp = ep_.qp(d.qpn); qp != nullptr) d.expected_psn = qp->attr().sq_psn;
  if (Status s = ep_.cm_accept(e.conn, d.qpn); !s.ok()) {
    c.failed = true;
    c.failure = "accepting it failed: " + s.message();
  }
}

Status PerftestCmSession::wait_for(const std::function<bool()>& done, std::uint32_t ms, const std::string& what) {
  const std::uint64_t deadline = now_ms() + ms;
  for (;;) {
    pump();
    if (done()) return {};
    if (!abandon_.empty()) {
      const std::string why = std::move(abandon_);
      abandon_.clear();
      return Status::error(StatusCode::kTimeout, "perftest -R: " + why + " (waiting for " + what + ")");
    }
    if (now_ms() > deadline)
      return Status::error(StatusCode::kTimeout, "perftest -R: no " + what + " within " + std::to_string(ms) + " ms");
  }
}

Status PerftestCmSession::comm_broken(const char* doing) const {
  if (!comm_error_.empty()) return Status::error(StatusCode::kPeer, "perftest -R: " + comm_error_ + " (" + doing + ")");
  if (comm_.disconnected)
    return Status::error(StatusCode::kPeer,
                         std::string("perftest -R: the peer disconnected the comm connection (") + doing + ")");
  if (comm_.failed)
    return Status::error(StatusCode::kPeer, "perftest -R: the comm connection " + comm_.failure + " (" + doing + ")");
  return {};
}

Status PerftestCmSession::post_comm_recv() {
  rc::RecvWr r;
  r.wr_id = kSyncWrId;
  r.sge = {reinterpret_cast<std::uint64_t>(recv_buf()), static_cast<std::uint32_t>(kPerftestDestBytes), mr_.lkey};
  return ep_.post_recv(comm_qpn_, r);
}

Status PerftestCmSession::send_message(const void* p, std::size_t n, const char* what) {
  if (n > kPerftestDestBytes)
    return Status::error(StatusCode::kInvalidArgument, std::string("perftest -R: ") + what + " of " +
                                                           std::to_string(n) +
                                                           " bytes is longer than perftest's 56-byte comm receive");
  if (Status s = comm_broken(what); !s.ok()) return s;
  std::memcpy(send_buf(), p, n);
  rc::SendWr w;
  w.wr_id = kSyncWrId;
  w.opcode = rc::WrOpcode::kSend;
  w.sge = {reinterpret_cast<std::uint64_t>(send_buf()), static_cast<std::uint32_t>(n), mr_.lkey};
  send_done_ = false;
  if (Status s = ep_.post_send(comm_qpn_, w); !s.ok())
    return s.context(std::string("perftest -R: sending ") + what + ": ");
  // rdma_write_data waits for its SEND's completion: the peer has the message.
  if (Status s = wait_for([&] { return send_done_ || !comm_broken(what).ok(); }, timeout_ms_,
                          std::string("acknowledgement of our ") + what + " on the comm connection");
      !s.ok())
    return s;
  return comm_broken(what);
}

Status PerftestCmSession::recv_message(void* p, std::size_t n, const char* what) {
  if (Status s = wait_for([&] { return stash_full_ || !comm_broken(what).ok(); }, timeout_ms_,
                          std::string("") + what + " from the peer on the comm connection");
      !s.ok())
    return s;
  if (!stash_full_) return comm_broken(what);
  stash_full_ = false;
  if (stash_len_ != n)
    return Status::error(StatusCode::kPeer, std::string("perftest -R: the peer's ") + what + " has " +
                                                std::to_string(stash_len_) + " bytes, expected " + std::to_string(n));
  std::memcpy(p, stash_, n);
  return {};
}

Status PerftestCmSession::exchange(const void* mine, void* theirs, std::size_t n, const char* what) {
  if (role_ == PerftestRole::kClient) {
    if (Status s = send_message(mine, n, what); !s.ok()) return s;
    return recv_message(theirs, n, what);
  }
  if (Status s = recv_message(theirs, n, what); !s.ok()) return s;
  return send_message(mine, n, what);
}

Status PerftestCmSession::handshake(const PerftestKeys& mine, PerftestKeys& theirs) {
  std::uint8_t out[kPerftestDestBytes], in[kPerftestDestBytes];
  format_perftest_dest(mine, out);
  if (Status s = exchange(out, in, sizeof(in), "key message"); !s.ok()) return s;
  return parse_perftest_dest(in, sizeof(in), theirs);
}

Status PerftestCmSession::close(const PerftestKeys& mine) {
  PerftestKeys ignored;
  return handshake(mine, ignored);
}

Status PerftestCmSession::end_without_message() { return {}; }

Status PerftestCmSession::open() {
  if (comm_qpn_ != 0) return Status::error(StatusCode::kBadState, "perftest -R: the comm connection is open already");
  if (memory_ == nullptr)
    return Status::error(StatusCode::kInvalidArgument,
                         "perftest -R: the endpoint has no memory registry (EndpointConfig queues.memory)");
  if (Status s = memory_->register_memory(bufs_, sizeof(bufs_), rc::kAccessLocalWrite, mr_); !s.ok())
    return s.context("perftest -R: registering the comm buffers: ");
  registered_ = true;
  if (Status s = ep_.create_qp(cfg_.comm_qp, comm_qpn_); !s.ok()) return s.context("perftest -R: the comm QP: ");
  // Both sides post the comm QP's one receive before connecting (post_one_recv_wqe).
  if (Status s = post_comm_recv(); !s.ok()) return s.context("perftest -R: the comm QP's receive: ");
  return role_ == PerftestRole::kClient ? connect_comm() : accept_comm();
}

Status PerftestCmSession::connect_comm() {
  const std::uint32_t tries = std::max<std::uint32_t>(cfg_.comm_connect_tries, 1);
  for (std::uint32_t t = 1;; ++t) {
    comm_ = Conn{};
    CmConnectTo to;
    to.peer = cfg_.server;
    to.port = cfg_.port;
    if (Status s = ep_.cm_connect(comm_qpn_, to, comm_.conn); !s.ok())
      return s.context("perftest -R: the comm connection: ");
    if (Status s =
            wait_for([&] { return comm_.established || comm_.failed; }, timeout_ms_,
                     "answer from " + server_text() + " to the comm connection's REQ (is the server running with -R?)");
        !s.ok())
      return s;
    if (comm_.established) break;
    if (t >= tries)
      return Status::error(StatusCode::kPeer,
                           "perftest -R: the comm connection to " + server_text() + " was " + comm_.failure);
    // The QP stays in INIT after a REJ: the same QP tries again once the old connection is closed.
    if (Status s = wait_for([&] { return comm_.closed; }, timeout_ms_, "end of the refused comm connection"); !s.ok())
      return s;
    const std::uint64_t again = now_ms() + cfg_.retry_gap_ms;
    (void)wait_for([&] { return now_ms() >= again; }, cfg_.retry_gap_ms + 1000, "retry gap");
  }
  peer_ = cfg_.server;
  phase_ = Phase::kRunning;
  return {};
}

Status PerftestCmSession::accept_comm() {
  if (Status s = ep_.cm_listen(cfg_.port); !s.ok()) return s.context("perftest -R: ");
  phase_ = Phase::kAcceptComm;
  if (Status s = wait_for([&] { return comm_.conn != 0; }, timeout_ms_,
                          "client's rdma_cm REQ on port " + std::to_string(cfg_.port));
      !s.ok())
    return s;
  // rdma_server_connect returns once rdma_accept has sent the REP; the client's first SEND (or
  // its RTU) makes the connection established on our side.
  phase_ = Phase::kIdle;
  if (comm_.failed)
    return Status::error(StatusCode::kError, "perftest -R: the client's comm connection: " + comm_.failure);
  return {};
}

Status PerftestCmSession::request_data(std::size_t i) {
  Conn& c = data_conn_[i];
  c = Conn{};
  CmConnectTo to;
  to.peer = peer_;
  to.port = cfg_.port;
  if (Status s = ep_.cm_connect(data_[i].qpn, to, c.conn); !s.ok())
    return s.context("perftest -R: data QP " + std::to_string(i) + " (QPN " + std::to_string(data_[i].qpn) + "): ");
  data_[i].conn = c.conn;
  // Our REQ's Starting PSN (the REP gives send_psn). On the port owner of several workers the QP
  // may be another worker's, which ep_.qp does not find (the CM reached it through GroupCmQps;
  // docs/cm.md, "QPs of other workers"): the established event gives the agreed PSNs either way.
  if (const rc::RcQp* qp = ep_.qp(data_[i].qpn); qp != nullptr) data_[i].expected_psn = qp->attr().sq_psn;
  return {};
}

Status PerftestCmSession::connect_data_qps(const std::vector<std::uint32_t>& qpns) {
  if (comm_qpn_ == 0) return Status::error(StatusCode::kBadState, "perftest -R: open() the comm connection first");
  if (qpns.empty()) return Status::error(StatusCode::kInvalidArgument, "perftest -R: no data QP to connect");
  data_.assign(qpns.size(), PerftestCmDataQp{});
  data_conn_.assign(qpns.size(), Conn{});
  for (std::size_t i = 0; i < qpns.size(); ++i) data_[i].qpn = qpns[i];
  const std::size_t n = qpns.size();
  if (role_ == PerftestRole::kServer) {
    // rdma_cm_server_connection: accept N REQs on the port, in arrival order, without waiting
    // for their RTUs (the client's next barrier comes after all of them).
    data_accepted_ = 0;
    phase_ = Phase::kAcceptData;
    std::vector<CmEndpointEvent> early;
    early.swap(early_reqs_);
    for (const CmEndpointEvent& e : early) accept_data(e);
    Status s = wait_for([&] { return data_accepted_ == n || !comm_broken("").ok(); }, timeout_ms_,
                        "rdma_cm REQ from the client for every data QP");
    phase_ = Phase::kRunning;
    if (!s.ok()) return s.context("(" + std::to_string(data_accepted_) + " of " + std::to_string(n) + " came) ");
    if (Status b = comm_broken("accepting the data connections"); !b.ok()) return b;
    for (std::size_t i = 0; i < n; ++i)
      if (data_conn_[i].failed)
        return Status::error(StatusCode::kError,
                             "perftest -R: data QP " + std::to_string(i) + ": " + data_conn_[i].failure);
    return {};
  }
  // rdma_cm_client_connection: every REQ at once; a refused one again after the gap (perftest's
  // server listens for them only once its barrier is done), up to data_connect_tries each.
  std::vector<std::uint32_t> tries(n, 1);
  std::vector<std::uint64_t> retry_at(n, 0);
  for (std::size_t i = 0; i < n; ++i)
    if (Status s = request_data(i); !s.ok()) return s;
  const std::uint64_t deadline =
      now_ms() + timeout_ms_ + std::uint64_t{cfg_.retry_gap_ms} * std::max<std::uint32_t>(cfg_.data_connect_tries, 1);
  for (;;) {
    pump();
    if (Status b = comm_broken("connecting the data QPs"); !b.ok()) return b;
    std::size_t up = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const Conn& c = data_conn_[i];
      if (c.established) {
        ++up;
        continue;
      }
      if (!c.failed) continue;
      if (tries[i] >= cfg_.data_connect_tries)
        return Status::error(StatusCode::kPeer, "perftest -R: data QP " + std::to_string(i) + " (QPN " +
                                                    std::to_string(data_[i].qpn) + ") to " + server_text() + " was " +
                                                    c.failure + ", " + std::to_string(tries[i]) + " tries");
      if (retry_at[i] == 0) retry_at[i] = now_ms() + cfg_.retry_gap_ms;
      if (now_ms() >= retry_at[i] && ep_.cm_state(c.conn) == cm::CmState::kClosed) {
        if (Status s = request_data(i); !s.ok()) return s;
        ++tries[i];
        retry_at[i] = 0;
      }
    }
    if (up == n) break;
    if (now_ms() > deadline) {
      std::string waiting;
      for (std::size_t i = 0; i < n && waiting.size() < 200; ++i)
        if (!data_conn_[i].established) waiting += " " + std::to_string(i);
      return Status::error(StatusCode::kTimeout, "perftest -R: no REP from " + server_text() + " for data QP(s)" +
                                                     waiting + " (" + std::to_string(up) + " of " + std::to_string(n) +
                                                     " connected)");
    }
  }
  phase_ = Phase::kRunning;
  return {};
}

Status PerftestCmSession::connect(PerftestTest t, const std::vector<PerftestKeys>& mine,
                                  std::vector<PerftestKeys>& theirs, const std::function<Status()>& connect_qps) {
  if (mine.empty()) return Status::error(StatusCode::kInvalidArgument, "perftest exchange without a QP");
  // create_rdma_cm_connection: ctx_hand_shake(my_dest[0], rem_dest[0]) before and after the
  // connections, while my_dest is still all zeros (set_up_connection fills it afterwards).
  const PerftestKeys zero{};
  PerftestKeys scratch;
  if (Status s = handshake(zero, scratch); !s.ok())
    return s.context("the barrier before the rdma_cm data connections: ");
  std::vector<std::uint32_t> qpns;
  qpns.reserve(mine.size());
  for (const PerftestKeys& k : mine) qpns.push_back(k.qpn);
  if (Status s = connect_data_qps(qpns); !s.ok()) return s;
  if (Status s = handshake(zero, scratch); !s.ok())
    return s.context("the barrier after the rdma_cm data connections: ");
  // The steps that follow are the TCP mode's. Where it connects the QPs, ours are in RTS already:
  // the peer's keys are checked against the connections and handed over.
  return PerftestControl::connect(t, mine, theirs, [&]() -> Status {
    for (std::size_t i = 0; i < theirs.size(); ++i) {
      bool known = false;
      for (const PerftestCmDataQp& d : data_) known = known || d.remote_qpn == theirs[i].qpn;
      if (!known)
        return Status::error(StatusCode::kPeer, "perftest -R: the peer's key message " + std::to_string(i) +
                                                    " names QPN " + std::to_string(theirs[i].qpn) +
                                                    ", none of its rdma_cm-connected QPs");
    }
    return connect_qps ? connect_qps() : Status{};
  });
}

Status PerftestCmSession::disconnect_all(std::vector<Conn*>& conns, bool passive, const char* what) {
  auto over = [](const Conn* c) { return c->disconnected || c->closed || c->failed; };
  auto all_over = [&] {
    for (const Conn* c : conns)
      if (!over(c)) return false;
    return true;
  };
  // perftest's server leaves the disconnects to its client (destroy_ctx: only the client counts
  // disconnects_left); so do we, for a while.
  if (passive) (void)wait_for(all_over, cfg_.teardown_ms, "DREQ");
  for (Conn* c : conns)
    if (!over(c) && ep_.cm_state(c->conn) == cm::CmState::kEstablished) (void)ep_.cm_disconnect(c->conn);
  // Connections we could not disconnect (a passive one whose RTU never came) end by their timers.
  auto ours_over = [&] {
    for (const Conn* c : conns)
      if (!over(c) && ep_.cm_state(c->conn) != cm::CmState::kEstablished &&
          ep_.cm_state(c->conn) != cm::CmState::kRepSent && ep_.cm_state(c->conn) != cm::CmState::kMraRepRcvd)
        return false;
    return true;
  };
  Status s = wait_for(ours_over, cfg_.answer_ms, std::string("end of every ") + what);
  if (!s.ok()) {
    std::string left;
    for (std::size_t i = 0; i < conns.size() && left.size() < 200; ++i)
      if (!over(conns[i])) left += " " + std::to_string(conns[i]->conn);
    return s.context(std::string("(") + what + "s still open:" + left + ") ");
  }
  return {};
}

Status PerftestCmSession::disconnect() {
  const bool passive = role_ == PerftestRole::kServer;
  std::vector<Conn*> data;
  for (Conn& c : data_conn_)
    if (c.conn != 0) data.push_back(&c);
  Status first = disconnect_all(data, passive, "data connection");
  std::vector<Conn*> comm;
  if (comm_.conn != 0) comm.push_back(&comm_);
  Status second = disconnect_all(comm, passive, "comm connection");
  return first.ok() ? second : first;
}

}  // namespace droce::engine
