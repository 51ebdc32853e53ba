// Address parsing for command lines.
#include "apps/common/address_text.h"

#include <arpa/inet.h>

#include <cstdio>
#include <cstring>

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

}  // namespace droce::engine
