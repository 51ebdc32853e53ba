// Address parsing for command lines.
#include "apps/common/address_text.h"

#include <arpa/inet.h>

#include <cstdio>
#include <cstring>
#include <string_view>

namespace droce::engine {

bool parse_ipv4(const std::string& s, std::uint8_t out[4]) { return inet_pton(AF_INET, s.c_str(), out) == 1; }

bool parse_mac(const std::string& s, std::uint8_t out[6]) {
  unsigned v[6];
  char tail = 0;
  if (std::sscanf(s.c_str(), "%2x:%2x:%2x:%2x:%2x:%2x%c", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &tail) != 6)
    return false;
  for (int i = 0; i < 6; ++i) out[i] = static_cast<std::uint8_t>(v[i]);
  return true;
}

wire::L2L3Address lab_address(const std::uint8_t ip[4], const std::uint8_t* mac) {
  wire::L2L3Address a;
  std::memcpy(a.ip, ip, 4);
  if (mac != nullptr) {
    std::memcpy(a.mac, mac, 6);
  } else {
    a.mac[0] = 0x02;
    std::memcpy(a.mac + 2, ip, 4);
  }
  return a;
}

namespace {

constexpr std::uint8_t kV4MappedPrefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF};

}  // namespace

bool parse_ip(const std::string& s, IpAddress& out) {
  IpAddress ip;
  if (inet_pton(AF_INET, s.c_str(), ip.bytes) == 1) {
    out = ip;
    return true;
  }
  // IPv6 text has a colon; inet_pton takes no zone ("%eth0") and no brackets.
  if (std::string_view(s).find(':') == std::string_view::npos || inet_pton(AF_INET6, s.c_str(), ip.bytes) != 1)
    return false;
  ip.ipv6 = true;
  out = ip;
  return true;
}

const char* unusable_ip(const IpAddress& ip) {
  if (!ip.ipv6) return nullptr;
  static constexpr std::uint8_t kZero[16] = {};
  if (std::memcmp(ip.bytes, kZero, 15) == 0 && ip.bytes[15] <= 1)
    return ip.bytes[15] == 0 ? "is the unspecified address" : "is the loopback address";
  if (ip.bytes[0] == 0xFF) return "is a multicast address";
  if (std::memcmp(ip.bytes, kV4MappedPrefix, 12) == 0)
    return "is IPv4-mapped: give the IPv4 address itself (RoCEv2 over IPv4)";
  return nullptr;
}

std::string ip_text(const IpAddress& ip) {
  char b[INET6_ADDRSTRLEN] = {};
  (void)inet_ntop(ip.ipv6 ? AF_INET6 : AF_INET, ip.bytes, b, sizeof(b));
  return b;
}

const char* family_name(const IpAddress& ip) { return ip.ipv6 ? "IPv6" : "IPv4"; }

void gid_of(const IpAddress& ip, std::uint8_t gid[16]) {
  if (ip.ipv6) {
    std::memcpy(gid, ip.bytes, 16);
    return;
  }
  std::memcpy(gid, kV4MappedPrefix, 12);
  std::memcpy(gid + 12, ip.bytes, 4);
}

Status peer_ip_of_gid(const std::uint8_t gid[16], const IpAddress& ours, IpAddress& peer) {
  IpAddress p;
  p.ipv6 = std::memcmp(gid, kV4MappedPrefix, 12) != 0;
  std::memcpy(p.bytes, p.ipv6 ? gid : gid + 12, p.ipv6 ? 16 : 4);
  if (p.ipv6 != ours.ipv6)
    return Status::error(StatusCode::kInvalidArgument, "the peer's GID " + ip_text(p) + " is an " + family_name(p) +
                                                           " address and ours, " + ip_text(ours) + ", is " +
                                                           family_name(ours) +
                                                           ": start both sides with addresses of the same family");
  peer = p;
  return {};
}

wire::L2L3Address lab_address(const IpAddress& ip, const std::uint8_t* mac) {
  wire::L2L3Address a;
  std::memcpy(a.ip, ip.bytes, ip.ipv6 ? 16 : 4);
  if (mac != nullptr) {
    std::memcpy(a.mac, mac, 6);
  } else {
    a.mac[0] = 0x02;
    std::memcpy(a.mac + 2, ip.bytes + (ip.ipv6 ? 12 : 0), 4);
  }
  return a;
}

}  // namespace droce::engine
