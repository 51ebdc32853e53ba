// ARP's and Neighbor Discovery's parts of the endpoint's neighbour engine: their tables and
// senders from the endpoint's addresses, address text, and what a received frame did.
#include "engine/endpoint/neighbour_protocols.h"

#include <arpa/inet.h>

#include <cstdio>
#include <cstring>

namespace droce::engine {

arp::NeighbourTable ArpProtocol::table(const EndpointConfig& cfg) {
  arp::NeighbourConfig t;
  std::memcpy(t.local_mac, cfg.addresses.local.mac, 6);
  t.local_ip = arp::load_ipv4(cfg.addresses.local.ip);
  return arp::NeighbourTable(t);
}

arp::ArpSender ArpProtocol::sender(const EndpointConfig& cfg) {
  arp::ArpSender s;
  std::memcpy(s.mac, cfg.addresses.local.mac, 6);
  s.ip = arp::load_ipv4(cfg.addresses.local.ip);
  s.vlan_id = cfg.addresses.vlan_id;
  s.vlan_pcp = cfg.addresses.vlan_pcp;
  return s;
}

std::string ArpProtocol::text(const Address& ip) {
  char b[16];
  std::snprintf(b, sizeof(b), "%u.%u.%u.%u", ip >> 24, (ip >> 16) & 0xFFu, (ip >> 8) & 0xFFu, ip & 0xFFu);
  return b;
}

Heard ArpProtocol::hear(Table& t, const std::uint8_t* frame, std::uint32_t len, bool any_dst_mac, std::uint64_t now_ns,
                        Verdict& out) {
  const arp::ArpRefusal r = arp::parse_arp(frame, len, out.frame);
  if (r == arp::ArpRefusal::kNotArp) return Heard::kNotOurs;
  if (r != arp::ArpRefusal::kNone) return Heard::kMalformed;
  out.table = t.on_frame(out.frame, any_dst_mac, now_ns);
  return Heard::kTaken;
}

nd::NeighbourTable NdProtocol::table(const EndpointConfig& cfg) {
  nd::NeighbourConfig t;
  std::memcpy(t.local_mac, cfg.addresses.local.mac, 6);
  t.local_ip = nd::to_address(cfg.addresses.local.ip);
  return nd::NeighbourTable(t);
}

nd::NdSender NdProtocol::sender(const EndpointConfig& cfg) {
  nd::NdSender s;
  std::memcpy(s.mac, cfg.addresses.local.mac, 6);
  std::memcpy(s.ip, cfg.addresses.local.ip, 16);
  s.vlan_id = cfg.addresses.vlan_id;
  s.vlan_pcp = cfg.addresses.vlan_pcp;
  return s;
}

std::string NdProtocol::text(const Address& ip) {
  char b[INET6_ADDRSTRLEN] = {};
  (void)inet_ntop(AF_INET6, ip.data(), b, sizeof(b));
  return b;
}

Heard NdProtocol::hear(Table& t, const std::uint8_t* frame, std::uint32_t len, bool any_dst_mac, std::uint64_t now_ns,
                       Verdict& out) {
  const nd::NdRefusal r = nd::parse_nd(frame, len, out.frame);
  if (nd::not_nd(r)) return Heard::kNotOurs;
  if (r != nd::NdRefusal::kNone) return Heard::kMalformed;
  out.table = t.on_frame(out.frame, any_dst_mac, now_ns);
  return Heard::kTaken;
}

}  // namespace droce::engine
