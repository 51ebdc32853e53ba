// droce-echo's connection with --peer srq_pingpong (see srq_exchange.h).
#include "apps/droce-echo/srq_exchange.h"

#include <cstring>
#include <string>

#include "apps/common/address_text.h"

namespace droce::echo {

using engine::ConnInfo;
using engine::kRcPingpongMsgBytes;
using engine::Status;

std::vector<std::uint8_t> format_srq_table(const std::vector<ConnInfo>& local) {
  std::vector<std::uint8_t> t(kSrqPingpongEntries * kRcPingpongMsgBytes);
  const ConnInfo zero;  // what the tool sends for the QPs it does not have (all fields 0)
  for (std::size_t i = 0; i < kSrqPingpongEntries; ++i) {
    const std::string m = engine::format_rc_pingpong(i < local.size() ? local[i] : zero);
    std::memcpy(t.data() + i * kRcPingpongMsgBytes, m.data(), kRcPingpongMsgBytes);
  }
  return t;
}

Status parse_srq_table(const std::vector<std::uint8_t>& table, std::uint32_t max_qps, std::vector<ConnInfo>& peer) {
  peer.clear();
  if (table.size() != kSrqPingpongEntries * kRcPingpongMsgBytes)
    return Status::error(StatusCode::kPeer, "the peer's QP table has the wrong size");
  bool ended = false;
  for (std::size_t i = 0; i < kSrqPingpongEntries; ++i) {
    const std::uint8_t* m = table.data() + i * kRcPingpongMsgBytes;
    if (std::memcmp(m + 5, "000000", 6) == 0) {  // QPN 0: past the peer's QPs
      ended = true;
      continue;
    }
    if (ended)
      return Status::error(StatusCode::kPeer,
                           "the peer's QP table names QP " + std::to_string(i) + " after an empty entry");
    ConnInfo c;
    if (Status s = engine::parse_rc_pingpong(m, kRcPingpongMsgBytes, c); !s.ok())
      return Status::error(StatusCode::kPeer, "the peer's QP " + std::to_string(i) + ": " + s.message());
    peer.push_back(c);
  }
  if (peer.empty()) return Status::error(StatusCode::kPeer, "the peer's QP table names no QP");
  if (peer.size() > max_qps)
    return Status::error(StatusCode::kPeer, "the peer has " + std::to_string(peer.size()) +
                                                " QPs; droce-echo serves at most " + std::to_string(max_qps));
  return {};
}

Status connect_srq_qps(const Options& o, Setup& st, engine::PsnSource& psns, apps::PeerMac& peer_mac,
                       const std::function<void()>& poll) {
  const bool server = o.mode == "server";
  const auto timeout_ms = static_cast<std::uint32_t>(o.timeout_s * 1000);
  engine::RcEndpoint& ep = st.group->worker(0).endpoint();
  engine::OobConnection& oob = st.oob;
  // The client's table first: the server learns from it how many QPs to open.
  std::vector<std::uint8_t> in(kSrqPingpongEntries * kRcPingpongMsgBytes);
  std::vector<ConnInfo> peer;
  if (server) {
    if (Status s = oob.recv_bytes(in.data(), in.size(), timeout_ms, "the client's QP table", poll); !s.ok()) return s;
    if (Status s = parse_srq_table(in, kMaxQps, peer); !s.ok()) return s;
    if (o.rx_depth < peer.size())
      return Status::error(StatusCode::kPeer, "the client has " + std::to_string(peer.size()) +
                                                  " QPs and --rx-depth is " + std::to_string(o.rx_depth) +
                                                  ": the shared receive queue needs a receive for each QP");
  }
  const std::uint32_t qps = server ? static_cast<std::uint32_t>(peer.size()) : o.qps;
  if (Status s = ep.create_srq(o.rx_depth, st.srq_id); !s.ok()) return s;
  std::vector<ConnInfo> local(qps);
  for (std::uint32_t i = 0; i < qps; ++i) {
    rc::QpAttr a = echo_qp_attr(o, psns.next());  // drawn; our QP table tells the peer
    a.recv_mode = rc::RecvMode::kPostedBuffers;   // an SRQ hands out posted buffers (verbs semantics)
    if (Status s = ep.create_qp(a, local[i].qpn); !s.ok()) return s;
    if (Status s = ep.attach_srq(local[i].qpn, st.srq_id); !s.ok()) return s;
    local[i].psn = a.sq_psn;
    engine::gid_of(st.ip, local[i].gid);
  }
  if (!server) {
    const std::vector<std::uint8_t> out = format_srq_table(local);
    if (Status s = oob.send_bytes(out.data(), out.size(), timeout_ms, "our QP table"); !s.ok()) return s;
    if (Status s = oob.recv_bytes(in.data(), in.size(), timeout_ms, "the server's QP table", poll); !s.ok()) return s;
    if (Status s = parse_srq_table(in, kMaxQps, peer); !s.ok()) return s;
    // The tool connects its first -q QPs to ours: a different count leaves QPs unconnected.
    if (peer.size() != qps)
      return Status::error(StatusCode::kPeer, "the server has " + std::to_string(peer.size()) +
                                                  " QPs and this client " + std::to_string(qps) +
                                                  ": give --qps equal to its -q");
  }
  // QP i to the peer's QP i. The peer's IP comes from its GID (of our family); its MAC from
  // --peer-mac, ARP or Neighbor Discovery (once; later QPs find it known).
  for (std::uint32_t i = 0; i < qps; ++i) {
    engine::IpAddress peer_ip;
    std::uint8_t mac[6] = {};
    if (Status s = engine::peer_ip_of_gid(peer[i].gid, st.ip, peer_ip); !s.ok()) return s;
    if (Status s = peer_mac.of_gid(peer[i].gid, timeout_ms, mac); !s.ok()) return s;
    if (Status s =
            ep.connect(local[i].qpn, engine::RemoteQp{engine::lab_address(peer_ip, mac), peer[i].qpn, peer[i].psn});
        !s.ok())
      return s;
    st.own_qps.push_back({0, local[i].qpn});
    if (i == 0) st.mac_by_arp = peer_mac.by_arp(), std::memcpy(st.peer_mac, mac, 6), st.peer_ip = peer_ip;
  }
  static constexpr char kDone[] = "done";  // 5 bytes with its NUL, as the tool writes and reads it
  if (!server) return oob.send_bytes(kDone, sizeof(kDone), timeout_ms, "\"done\"");
  const std::vector<std::uint8_t> out = format_srq_table(local);
  if (Status s = oob.send_bytes(out.data(), out.size(), timeout_ms, "our QP table"); !s.ok()) return s;
  char done[sizeof(kDone)] = {};
  if (Status s = oob.recv_bytes(done, sizeof(done), timeout_ms, "the client's \"done\"", poll); !s.ok()) return s;
  if (std::memcmp(done, kDone, sizeof(kDone)) != 0)
    return Status::error(StatusCode::kPeer, "the client sent something other than \"done\" after the exchange");
  return {};
}

}  // namespace droce::echo
