// One rping connection and its pings (see session.h).
#include "apps/droce-rping/session.h"

#include <droce/engine/core/stop_signal.h>
#include <droce/protocols/cm/cm_messages.h>
#include <rte_cycles.h>

#include <cstdio>
#include <cstring>

#include "apps/common/address_text.h"
#include "apps/common/peer_mac.h"
#include "apps/common/recovery_offer.h"
#include "apps/droce-rping/reject_reason.h"

namespace droce::rping {

using engine::CmEndpointEvent;
using engine::CmEndpointEventKind;
using engine::Status;

namespace {

// After the last step: polls this long so that our last MADs (DREP, a resent DREQ) and ACKs leave.
constexpr std::uint64_t kLingerUs = 50'000;

std::string ping_name(std::uint64_t i) { return "ping " + std::to_string(i); }

}  // namespace

Session::Session(const Options& o, Setup& st, std::uint16_t worker, std::uint8_t* region, const rc::MemoryRegion& mr)
    : o_(o), st_(st), ep_(st.group->worker(worker).endpoint()), cm_(st.cm()), psns_(st.psns), region_(region), mr_(mr) {
  r_.worker = worker;
}

Status Session::create_qp(std::uint32_t pmtu, std::uint32_t psn) {
  rc::QpAttr a;
  a.pmtu = pmtu;
  a.recovery = r_.recovery;  // the client sets SR at the REP (connect), the server before its REP
  a.sr_bdp_pkts = o_.sr_bdp_pkts;
  a.sq_psn = psn;                                             // drawn, as rdma_cm's; the CM tells the peer
  a.access = rc::kAccessRemoteRead | rc::kAccessRemoteWrite;  // the peer READs our start buffer, WRITEs our sink
  a.pd = mr_.pd;    // the QP reaches this session's region alone (the server's: a domain per client)
  a.sq_depth = 16;  // rping's RPING_SQ_DEPTH
  a.rq_depth = 16;
  a.min_rnr_timer = 1;
  a.recv_mode = rc::RecvMode::kPostedBuffers;
  if (Status s = ep_.create_qp(a, r_.qpn); !s.ok()) return s;
  // Before REP or REQ leaves: the peer's first SEND may follow our REP or its RTU at once.
  for (std::uint32_t i = 0; i < kSlots; ++i)
    if (Status s = post_receive(i); !s.ok()) return s;
  return {};
}

Status Session::post_receive(std::uint32_t slot) {
  rc::RecvWr w;
  w.wr_id = slot;
  w.sge = {reinterpret_cast<std::uint64_t>(recv_slot(slot)), kAdvertBytes, mr_.lkey};
  return ep_.post_recv(r_.qpn, w);
}

Status Session::send_advert(std::uint32_t slot, const std::uint8_t* buf, std::uint32_t size) {
  BufferAdvert a;
  a.addr = reinterpret_cast<std::uint64_t>(buf);
  a.rkey = mr_.rkey;
  a.size = size;
  write_advert(a, send_slot(slot));
  rc::SendWr w;
  w.wr_id = slot;
  w.opcode = rc::WrOpcode::kSend;
  w.sge = {reinterpret_cast<std::uint64_t>(send_slot(slot)), kAdvertBytes, mr_.lkey};
  if (Status s = ep_.post_send(r_.qpn, w); !s.ok()) return s;
  ++sends_posted_;
  return {};
}

Status Session::post_rdma(rc::WrOpcode op, std::uint32_t len, std::uint64_t remote_addr, std::uint32_t rkey) {
  rc::SendWr w;
  w.wr_id = 100;
  w.opcode = op;
  w.sge = {reinterpret_cast<std::uint64_t>(sink_buf()), len, mr_.lkey};
  w.remote_addr = remote_addr;
  w.rkey = rkey;
  (op == rc::WrOpcode::kRead ? read_done_ : write_done_) = false;
  return ep_.post_send(r_.qpn, w);
}

Status Session::take_advert(std::uint8_t out[16]) {
  const std::uint32_t slot = recv_ring_[recv_head_];
  recv_head_ = (recv_head_ + 1) % kSlots;
  --recv_len_;
  std::memcpy(out, recv_slot(slot), kAdvertBytes);
  return post_receive(slot);
}

// ---- polling ----

template <class Done>
Status Session::wait_for(const std::string& what, Done done) {
  const std::uint64_t hz = rte_get_tsc_hz();
  const std::uint64_t deadline = rte_rdtsc() + static_cast<std::uint64_t>(o_.timeout_s * static_cast<double>(hz));
  for (;;) {
    step();
    if (!error_.ok()) return error_;
    if (done()) return {};
    if (engine::stop_requested()) return Status::error(StatusCode::kError, "interrupted while waiting for " + what);
    if (rte_rdtsc() > deadline) {
      char secs[32];
      std::snprintf(secs, sizeof secs, "%g", o_.timeout_s);
      return Status::error(StatusCode::kTimeout, "no " + what + " within " + secs + " s");
    }
  }
}

void Session::step() {
  // Every worker: the port owner's CM (first, so that the moves it posts for another worker's QP
  // are run by that worker's poll in the same round), then the QP's worker.
  st_.poll_all();
  // Events first: a disconnect flushes the QP's receives in the same poll, and its event says
  // those flushes are expected.
  CmEndpointEvent e;
  for (int k = 0; k < 16 && cm_.cm_next_event(e); ++k) on_cm_event(e);
  poll_completions();
}

void Session::poll_completions() {
  rc::Completion cs[16];
  const unsigned n = r_.qpn == 0 ? 0 : ep_.poll_cq(r_.qpn, cs, 16);
  for (unsigned i = 0; i < n; ++i) on_completion(cs[i]);
}

void Session::take_counters() {
  const rc::RcQp* q = r_.qpn == 0 ? nullptr : ep_.qp(r_.qpn);
  if (q == nullptr) return;
  r_.recovery = q->attr().recovery;  // what the QP ran, as the engine holds it
  r_.retransmitted_packets = q->counters().retransmitted_packets;
  r_.sr_resent_on_sack = q->counters().sr_resent_on_sack;
}

void Session::on_completion(const rc::Completion& c) {
  if (c.status != rc::WcStatus::kSuccess) {
    // A disconnect moves the QP to ERROR: what was still posted (our receives) comes back flushed.
    if (c.status == rc::WcStatus::kWrFlushErr && (disconnecting_ || r_.disconnected)) return;
    if (c.status == rc::WcStatus::kWrFlushErr && o_.server) {
      flushed_early_ = true;  // the DREQ's event may still be on its way (session.h)
      return;
    }
    const char* what = c.is_recv                          ? "receive"
                       : c.opcode == rc::WcOpcode::kRead  ? "RDMA READ"
                       : c.opcode == rc::WcOpcode::kWrite ? "RDMA WRITE"
                                                          : "SEND";
    if (error_.ok())
      error_ = Status::error(StatusCode::kError,
                             std::string(what) + " completed with '" + rc::wc_status_name(c.status) + "'");
    return;
  }
  if (c.is_recv) {
    if (c.byte_len != kAdvertBytes) {
      if (error_.ok())
        error_ = Status::error(StatusCode::kPeer, "received a " + std::to_string(c.byte_len) +
                                                      "-byte message, not rping's 16-byte buffer advertisement");
      return;
    }
    recv_ring_[(recv_head_ + recv_len_) % kSlots] = static_cast<std::uint32_t>(c.wr_id);
    ++recv_len_;
    return;
  }
  if (c.opcode == rc::WcOpcode::kRead)
    read_done_ = true;
  else if (c.opcode == rc::WcOpcode::kWrite)
    write_done_ = true;
  else
    ++sends_done_;
}

void Session::on_cm_event(const CmEndpointEvent& e) {
  switch (e.kind) {
    case CmEndpointEventKind::kConnectRequest:
      (void)cm_.cm_reject(e.conn);  // the server's are server.cc's: none reaches a session
      return;
    case CmEndpointEventKind::kEstablished:
      if (e.conn != r_.conn) return;
      r_.established = e;
      r_.connected = true;
      return;
    case CmEndpointEventKind::kRejected:
      if (e.conn != r_.conn) return;
      r_.reject_reason = e.reject_reason;
      if (error_.ok())
        error_ = Status::error(
            StatusCode::kPeer,
            std::string(e.by_peer ? "the server rejected the connection" : "the connection was refused here") +
                ": REJ reason " + std::to_string(e.reject_reason) + " (" + reject_reason_text(e.reject_reason) + ")");
      return;
    case CmEndpointEventKind::kTimedOut:
      if (e.conn != r_.conn) return;
      if (error_.ok())
        error_ = Status::error(StatusCode::kTimeout,
                               o_.client ? "the server's CM did not answer our REQ (retried until it timed out)"
                                         : "the client's CM did not answer our REP (retried until it timed out)");
      return;
    case CmEndpointEventKind::kDisconnected:
      if (e.conn != r_.conn) return;
      r_.disconnected = true;
      r_.disconnected_by_peer = e.by_peer;
      return;
    case CmEndpointEventKind::kClosed:
      return;
  }
}

// ---- the connection ----

namespace {

// Client, at the REP (before the QP leaves INIT): selective repeat only when the server's REP
// carries its acceptance; a Linux rping server's REP is zeros, so go-back-N.
rc::Recovery recovery_from_rep(const std::uint8_t* priv, std::uint32_t len) {
  apps::RecoveryOffer a;
  if (apps::decode_recovery_offer(priv, len, a) != apps::OfferRefusal::kNone) return rc::Recovery::kGoBackN;
  return a.recovery;
}

// What the peer's private data said: "sr"/"gbn", or why it was no offer ("no_magic": zeros).
const char* offer_text(const std::uint8_t* priv, std::uint32_t len, apps::RecoveryOffer& out) {
  const apps::OfferRefusal r = apps::decode_recovery_offer(priv, len, out);
  if (r != apps::OfferRefusal::kNone) return apps::offer_refusal_name(r);
  return recovery_name(out.recovery);
}

}  // namespace

Status Session::connect() {
  engine::IpAddress ip;
  (void)engine::parse_ip(o_.address, ip);  // validated by the parser, of our family
  r_.peer_ip = ip;
  apps::PeerMac peer_mac(o_.peer_mac, cm_, [this] { st_.poll_all(); });
  peer_mac.announce();
  const auto wait_ms = static_cast<std::uint32_t>(o_.timeout_s * 1000);
  // The server's MAC: ARP for IPv4, Neighbor Discovery for IPv6 (rdma_resolve_addr's two ways).
  if (Status s =
          ip.ipv6 ? peer_mac.of_ipv6(ip.bytes, wait_ms, r_.peer_mac) : peer_mac.of_ipv4(ip.bytes, wait_ms, r_.peer_mac);
      !s.ok())
    return s;
  r_.mac_from = !peer_mac.by_arp() ? "given" : ip.ipv6 ? "nd" : "arp";
  if (Status s = create_qp(1024, psns_.next()); !s.ok()) return s;
  engine::CmConnectTo to;
  to.peer = engine::lab_address(ip, r_.peer_mac);
  to.port = o_.port;
  // --recovery sr: our offer in the REQ; the QP stays go-back-N unless the REP accepts it (the
  // engine asks recovery_from_rep before it moves the QP to RTR). Without: no private data, as rping.
  std::uint8_t offer[apps::kRecoveryOfferBytes];
  if (o_.recovery == rc::Recovery::kSelectiveRepeat) {
    apps::encode_recovery_offer(apps::RecoveryOffer{o_.recovery, static_cast<std::uint16_t>(o_.sr_bdp_pkts)}, offer);
    to.private_data = offer;
    to.private_len = sizeof offer;
    to.recovery_at_rep = recovery_from_rep;
  }
  if (Status s = cm_.cm_connect(r_.qpn, to, r_.conn); !s.ok()) return s;
  if (Status s = wait_for("answer to our REQ from " + o_.address + " port " + std::to_string(o_.port),
                          [this] { return r_.connected; });
      !s.ok())
    return s;
  apps::RecoveryOffer a;
  r_.offer = offer_text(r_.established.private_data, r_.established.private_len, a);
  if (o_.recovery == rc::Recovery::kSelectiveRepeat)
    r_.recovery = recovery_from_rep(r_.established.private_data, r_.established.private_len);
  if (r_.recovery == rc::Recovery::kSelectiveRepeat) r_.peer_sr_bdp_pkts = a.sr_bdp_pkts;
  return {};
}

Status Session::prepare_accept(const CmEndpointEvent& req, std::uint32_t psn) {
  // The client's addresses come from its REQ's frame: no ARP, no --peer-mac.
  r_.peer_ip.ipv6 = ep_.config().addresses.ipv6;  // a REQ reaches us in our family only
  std::memcpy(r_.peer_ip.bytes, req.peer.ip, r_.peer_ip.ipv6 ? 16 : 4);
  std::memcpy(r_.peer_mac, req.peer.mac, 6);
  r_.mac_from = "req";
  r_.conn = req.conn;
  // Selective repeat only when both ask: we run --recovery sr and the REQ carries a valid SR
  // offer. A Linux rping's REQ carries zeros (no offer): go-back-N, and a REP of zeros, as rping's.
  apps::RecoveryOffer offer;
  r_.offer = offer_text(req.private_data, req.private_len, offer);
  const bool sr = o_.recovery == rc::Recovery::kSelectiveRepeat && std::strcmp(r_.offer, "sr") == 0;
  r_.recovery = sr ? rc::Recovery::kSelectiveRepeat : rc::Recovery::kGoBackN;
  if (sr) r_.peer_sr_bdp_pkts = offer.sr_bdp_pkts;
  const std::uint32_t pmtu = cm::mtu_bytes(req.params.path_mtu);
  if (Status s = create_qp(pmtu == 0 ? 1024 : pmtu, psn); !s.ok()) return s;
  apps::encode_recovery_offer(apps::RecoveryOffer{r_.recovery, static_cast<std::uint16_t>(o_.sr_bdp_pkts)},
                              acceptance_);
  acceptance_len_ = sr ? sizeof acceptance_ : 0;
  return {};
}

Status Session::send_rep() {
  return cm_.cm_accept(r_.conn, r_.qpn, acceptance_len_ != 0 ? acceptance_ : nullptr, acceptance_len_);
}

Status Session::run() {
  const std::uint32_t size = o_.size;
  r_.ping_size = size;
  for (std::uint64_t i = 0; i < o_.count; ++i) {
    std::memset(sink_buf(), 0, size);
    fill_ping(i, start_buf(), size);
    auto step_done = [this] { return recv_len_ > 0 && sends_done_ == sends_posted_; };
    auto lost = [i](const char* when) {
      return Status::error(StatusCode::kPeer, "the server disconnected " + std::string(when) + " " + ping_name(i));
    };
    if (Status s = send_advert(0, start_buf(), size); !s.ok()) return s;
    if (Status s = wait_for("go-ahead from the server after its RDMA READ of " + ping_name(i),
                            [&] { return step_done() || r_.disconnected; });
        !s.ok())
      return s;
    if (!step_done()) return lost("before its RDMA READ of");
    std::uint8_t adv[kAdvertBytes];
    if (Status s = take_advert(adv); !s.ok()) return s;
    if (Status s = send_advert(1, sink_buf(), size); !s.ok()) return s;
    if (Status s = wait_for("go-ahead from the server after its RDMA WRITE of " + ping_name(i),
                            [&] { return step_done() || r_.disconnected; });
        !s.ok())
      return s;
    if (!step_done()) return lost("before its RDMA WRITE of");
    if (Status s = take_advert(adv); !s.ok()) return s;
    ++r_.pings;
    if (std::memcmp(start_buf(), sink_buf(), size) != 0) {
      std::uint32_t k = 0;
      while (k < size && start_buf()[k] == sink_buf()[k]) ++k;
      return Status::error(
          StatusCode::kPeer,
          ping_name(i) + ": the data the server wrote back differs from ours at byte " + std::to_string(k));
    }
    ++r_.verified;
    if (o_.verbose) std::printf("ping data: %s\n", reinterpret_cast<const char*>(sink_buf()));
  }
  return {};
}

std::string Session::waiting_for() const {
  if (flushed_early_ && !r_.disconnected)
    return "DREQ event from the CM after this client's QP was flushed (" + waiting_for_step() + ")";
  return waiting_for_step();
}

std::string Session::waiting_for_step() const {
  switch (serve_) {
    case Serve::kWaitRtu:
      return "RTU (or first packet) from the client";
    case Serve::kWaitStart:
      return "buffer advertisement (or DREQ) from the client for " + ping_name(ping_);
    case Serve::kWaitRead:
      return "RDMA READ of the client's " + ping_name(ping_);
    case Serve::kWaitSink:
      return "the client's sink advertisement for " + ping_name(ping_);
    case Serve::kWaitWrite:
      return "RDMA WRITE into the client's sink for " + ping_name(ping_);
    case Serve::kDone:
      break;
  }
  return "nothing";
}

Status Session::serve(bool& progressed) {
  // A ping is four transitions: a few rounds take what one poll brought.
  for (int k = 0; k < 8; ++k) {
    if (!error_.ok()) return error_;
    Status s;
    if (!serve_once(s)) return s;
    progressed = true;
  }
  return error_;
}

bool Session::serve_once(Status& s) {
  // Bounded by -C when given, else by rping's count limit; normally the client's DREQ ends it.
  const std::uint64_t most = o_.count_given ? o_.count : 1'000'000'000ull;
  const bool got = recv_len_ > 0 && sends_done_ == sends_posted_;
  std::uint8_t raw[kAdvertBytes];
  switch (serve_) {
    case Serve::kWaitRtu:
      if (!r_.connected) return false;
      serve_ = Serve::kWaitStart;
      return true;
    case Serve::kWaitStart:
      if (!got && !r_.disconnected) return false;
      if (!got) {  // the client disconnected: its run is over
        if (r_.pings == 0)
          s = Status::error(StatusCode::kPeer, "the client disconnected before its first ping");
        else if (o_.count_given && r_.pings != o_.count)
          s = Status::error(StatusCode::kPeer, "the client disconnected after " + std::to_string(r_.pings) +
                                                   " pings, not -C " + std::to_string(o_.count));
        if (!s.ok()) return false;
        serve_ = Serve::kDone;
        return true;
      }
      if (ping_ == most)
        return s = Status::error(StatusCode::kPeer,
                                 "the client pinged more than -C " + std::to_string(most) + " times"),
               false;
      if (s = take_advert(raw); !s.ok()) return false;
      start_ = read_advert(raw);
      if (Status bad = check_start_advert(start_, kBufBytes); !bad.ok())
        return s = bad.context(ping_name(ping_) + ": "), false;
      if (r_.ping_size == 0) r_.ping_size = start_.size;
      if (s = post_rdma(rc::WrOpcode::kRead, start_.size, start_.addr, start_.rkey); !s.ok()) return false;
      serve_ = Serve::kWaitRead;
      return true;
    case Serve::kWaitRead:
      if (!read_done_) return false;
      if (const std::uint32_t k = check_ping(ping_, sink_buf(), start_.size); k != start_.size)
        return s = Status::error(StatusCode::kPeer,
                                 ping_name(ping_) +
                                     ": the data READ from the client is not rping's ping text at byte " +
                                     std::to_string(k)),
               false;
      if (o_.verbose) std::printf("server ping data: %s\n", reinterpret_cast<const char*>(sink_buf()));
      // The go-ahead: our own buffer's advertisement, as rping's server sends it.
      if (s = send_advert(0, sink_buf(), o_.size); !s.ok()) return false;
      serve_ = Serve::kWaitSink;
      return true;
    case Serve::kWaitSink: {
      if (!got && !r_.disconnected) return false;
      if (!got)
        return s = Status::error(StatusCode::kPeer, "the client disconnected in the middle of " + ping_name(ping_)),
               false;
      if (s = take_advert(raw); !s.ok()) return false;
      const BufferAdvert sink = read_advert(raw);
      if (Status bad = check_sink_advert(sink, start_); !bad.ok())
        return s = bad.context(ping_name(ping_) + ": "), false;
      // rping writes the text and its NUL (strlen + 1): the whole ping, once it checked.
      if (s = post_rdma(rc::WrOpcode::kWrite, start_.size, sink.addr, sink.rkey); !s.ok()) return false;
      serve_ = Serve::kWaitWrite;
      return true;
    }
    case Serve::kWaitWrite:
      if (!write_done_) return false;
      if (s = send_advert(1, sink_buf(), o_.size); !s.ok()) return false;
      ++r_.pings;
      ++r_.verified;
      ++ping_;
      serve_ = Serve::kWaitStart;
      return true;
    case Serve::kDone:
      return false;
  }
  return false;
}

Status Session::finish() {
  Status s;
  if (o_.client && r_.connected && !r_.disconnected) {
    disconnecting_ = true;
    s = cm_.cm_disconnect(r_.conn);
    if (s.ok()) s = wait_for("DREP from the server", [this] { return r_.disconnected; });
  }
  const std::uint64_t end = rte_rdtsc() + rte_get_tsc_hz() / 1'000'000 * kLingerUs;
  for (std::uint64_t k = 0; k < 1'000'000'000ull && rte_rdtsc() < end; ++k) step();
  return s;
}

}  // namespace droce::rping
