// Addresses as users type them (IPv4 dotted quad, colon MAC) and the lab default MAC for an IP.
#pragma once

#include <cstdint>
#include <string>

#include <droce/protocols/wire/build.h>

namespace droce::engine {

// False on anything malformed.
[[nodiscard]] bool parse_ipv4(const std::string& s, std::uint8_t out[4]);
[[nodiscard]] bool parse_mac(const std::string& s, std::uint8_t out[6]);
// An IPv4 address and its MAC; without one, 02:00:<IPv4> (locally administered, stable, and unique
// per address in a lab whose ports deliver every frame, such as net_memif).
[[nodiscard]] wire::L2L3Address lab_address(const std::uint8_t ip[4], const std::uint8_t* mac);

}  // namespace droce::engine
