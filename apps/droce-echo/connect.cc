// droce-echo's connection (see connect.h).
#include "apps/droce-echo/connect.h"

#include <rte_cycles.h>

#include <cstring>
#include <functional>
#include <string>
#include <string_view>

#include "apps/common/address_text.h"
#include "apps/common/oob_waits.h"
#include "apps/common/peer_mac.h"
#include "apps/common/rss_line.h"
#include "apps/droce-echo/srq_exchange.h"

namespace droce::echo {

using engine::ConnInfo;
using engine::OobConnection;
using engine::Status;

namespace {

// After the first QP's exchange between droce-echo peers: the client says how many QPs it opens
// and over how many queue pairs ("QPS <qps> <queue pairs>"); the server reads it. net_memif pairs
// the two sides' queues ring by ring, so a server whose queue pairs differ from the client's would
// send some replies where the client never reads: it refuses, naming both. A hostile count is
// refused with a line naming it.
Status exchange_qp_count(OobConnection& oob, bool server, std::uint32_t workers, std::uint32_t& qps,
                         std::uint32_t timeout_ms, const std::function<void()>& poll) {
  if (!server) return oob.send_line("QPS " + std::to_string(qps) + " " + std::to_string(workers), timeout_ms);
  std::string line;
  if (Status s = engine::recv_line_stoppable(oob, line, timeout_ms, "the client's QP count", poll); !s.ok()) return s;
  const std::string_view v(line);
  const std::size_t space = v.find(' ', 4);
  std::uint64_t n = 0, w = 0;
  if (v.substr(0, 4) != "QPS " || space == std::string_view::npos ||
      !engine::parse_line_decimal(v.substr(4, space - 4), kMaxQps, n) || n == 0 ||
      !engine::parse_line_decimal(v.substr(space + 1), 16, w) || w == 0)
    return Status::error(StatusCode::kPeer, "the client's QP count is not 'QPS <1.." + std::to_string(kMaxQps) +
                                                "> <1..16>': '" + line.substr(0, 80) + "'");
  if (w != workers)
    return Status::error(StatusCode::kPeer, "the client has " + std::to_string(w) + " queue pair(s) and this server " +
                                                std::to_string(workers) + ": give both the same --workers");
  qps = static_cast<std::uint32_t>(n);
  return {};
}

}  // namespace

Status connect_qps(const Options& o, Setup& st, std::uint32_t for_client_ms) {
  const bool server = o.mode == "server";
  const auto timeout_ms = static_cast<std::uint32_t>(o.timeout_s * 1000);
  OobConnection& oob = st.oob;
  // The rc_pingpong exchange, once per QP (QP i on worker i % N); between droce-echo peers the
  // client says after the first how many QPs follow ("QPS n"). The peer's MAC is not in the
  // exchange: --peer-mac, or ARP (IPv4) or Neighbor Discovery (IPv6) through worker 0's endpoint
  // (the queue those frames reach, docs/arp.md), which is polled whenever we wait for the peer so
  // that we answer its ARP or ND too. DSCP and the VLAN tag are each side's own (not exchanged).
  // The workers run on their lcores only after this, so polling worker 0 here races nothing.
  const std::function<void()> poll = [&st] { st.group->worker(0).poll(rte_rdtsc()); };
  apps::PeerMac peer_mac(o.peer_mac, st.group->worker(0).endpoint(), poll);
  peer_mac.announce();  // without --peer-mac only; it leaves with the first poll
  std::uint16_t bound = 0;
  Status s = server ? st.listener.listen(o.oob_port, bound)
                    : engine::connect_stoppable(o.oob_host, o.oob_port, timeout_ms, oob);
  if (s.ok() && server) s = engine::accept_stoppable(st.listener, for_client_ms, oob);
  // ibv_srq_pingpong's exchange is one table of QPs each way (srq_exchange.h).
  engine::PsnSource psns = engine::PsnSource::from(o.psn_seed);
  if (s.ok() && o.srq_pingpong()) s = connect_srq_qps(o, st, psns, peer_mac, poll);
  std::uint32_t qps = o.srq_pingpong() ? 0 : server ? 1 : o.qps;
  for (std::uint32_t i = 0; s.ok() && i < qps; ++i) {
    engine::RcEndpoint& ep = st.group->worker(static_cast<std::uint16_t>(i % o.workers)).endpoint();
    const std::uint32_t psn = psns.next();  // drawn (docs/hardening.md, "First PSNs"); the exchange tells the peer
    std::uint32_t qpn = 0;
    rc::QpAttr attr = echo_qp_attr(o, psn);
    // The server gives its client a protection domain of its own (docs/hardening.md, "Protection
    // domains"): the echo buffer EchoServer registers in the QP's domain is reached by this QP alone.
    if (server) s = st.memories[i % o.workers]->create_domain(attr.pd);
    if (s.ok()) s = ep.create_qp(attr, qpn);
    ConnInfo local, peer;
    local.qpn = qpn;
    local.psn = psn;
    engine::gid_of(st.ip, local.gid);
    if (s.ok())
      s = server ? oob.server_read_peer(peer, timeout_ms, poll) : oob.exchange_as_client(local, peer, timeout_ms, poll);
    // The peer's IP comes from its GID, of our family (one endpoint speaks one IP version); its
    // MAC from --peer-mac, ARP or Neighbor Discovery (once: later QPs find it known). Resolutions
    // go on until --timeout: lab loss drops ARP and ND frames too.
    engine::IpAddress peer_ip;
    std::uint8_t mac[6] = {};
    if (s.ok()) s = engine::peer_ip_of_gid(peer.gid, st.ip, peer_ip);
    if (s.ok()) s = peer_mac.of_gid(peer.gid, timeout_ms, mac);
    if (s.ok()) s = ep.connect(qpn, engine::RemoteQp{engine::lab_address(peer_ip, mac), peer.qpn, peer.psn});
    if (s.ok() && server) s = oob.server_answer(local, timeout_ms, poll);
    if (s.ok()) st.own_qps.push_back({i % o.workers, qpn});
    if (s.ok() && i == 0 && !o.pingpong_tool()) s = exchange_qp_count(oob, server, o.workers, qps, timeout_ms, poll);
    if (s.ok() && i == 0) st.mac_by_arp = peer_mac.by_arp(), std::memcpy(st.peer_mac, mac, 6), st.peer_ip = peer_ip;
  }
  if (!s.ok()) return s;
  apps::place_flows_and_say("droce-echo", *st.group);  // N > 1 workers: the port's RSS table, where it has one
  engine::RcEndpoint& ep0 = st.group->worker(0).endpoint();
  (server ? st.server_ep : st.client_ep) = &ep0;
  (server ? st.server_mem : st.client_mem) = st.memories[0].get();
  (server ? st.server_qpn : st.client_qpn) = st.own_qps[0].qpn;
  return {};
}

}  // namespace droce::echo
