// Addresses as users type them (IPv4 dotted quad, IPv6 text, colon MAC), the GID an address is
// exchanged as, and the lab default MAC for an IP.
#pragma once

#include <droce/engine/core/status.h>
#include <droce/protocols/wire/build.h>

#include <cstdint>
#include <string>

namespace droce::engine {

// False on anything malformed.
[[nodiscard]] bool parse_ipv4(const std::string& s, std::uint8_t out[4]);
[[nodiscard]] bool parse_mac(const std::string& s, std::uint8_t out[6]);
// An IPv4 address and its MAC; without one, 02:00:<IPv4> (locally administered, stable, and unique
// per address in a lab whose ports deliver every frame, such as net_memif).
[[nodiscard]] wire::L2L3Address lab_address(const std::uint8_t ip[4], const std::uint8_t* mac);

// A RoCEv2 address of either family, in network order: IPv4 in the first 4 bytes, or IPv6.
struct IpAddress {
  bool ipv6 = false;
  std::uint8_t bytes[16] = {};
};
// An IPv4 dotted quad or IPv6 text (fd00::1, 2001:db8::5). False on anything malformed.
[[nodiscard]] bool parse_ip(const std::string& s, IpAddress& out);
// Why `ip` cannot be a RoCE endpoint's address, or nullptr. Refused IPv6: the unspecified address,
// loopback, multicast (RFC 4291 §2.5.2, §2.5.3, §2.7: no host owns them; Neighbor Discovery
// cannot resolve them) and IPv4-mapped ::ffff:a.b.c.d (its GID reads as the IPv4 address a.b.c.d:
// give that instead). IPv4 is taken as typed, as before.
[[nodiscard]] const char* unusable_ip(const IpAddress& ip);
[[nodiscard]] std::string ip_text(const IpAddress& ip);
[[nodiscard]] const char* family_name(const IpAddress& ip);  // "IPv4" or "IPv6"
// The GID our exchanges carry for `ip` (RoCEv2, IBTA A17.4.5.1): IPv4 as ::ffff:a.b.c.d, IPv6 as itself.
void gid_of(const IpAddress& ip, std::uint8_t gid[16]);
// The peer's address in its GID (the inverse of gid_of), which must be of our family (`ours`):
// one endpoint's frames all carry one IP version. Otherwise an error naming both addresses.
[[nodiscard]] Status peer_ip_of_gid(const std::uint8_t gid[16], const IpAddress& ours, IpAddress& peer);
// `ip` and its MAC; without one, 02:00 and the address's last 4 bytes (as the IPv4 rule).
[[nodiscard]] wire::L2L3Address lab_address(const IpAddress& ip, const std::uint8_t* mac);

}  // namespace droce::engine
