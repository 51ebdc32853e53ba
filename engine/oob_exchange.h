// Out-of-band connection exchange over TCP, byte-compatible with rdma-core's ibv_rc_pingpong
// (libibverbs/examples/rc_pingpong.c): "LID:QPN:PSN:GID" as "%04x:%06x:%06x:%32 hex>" plus NUL.
#pragma once

#include <cstdint>
#include <string>

#include "engine/status.h"

namespace droce::engine {

struct ConnInfo {
  std::uint16_t lid = 0;      // 0 on RoCE
  std::uint32_t qpn = 0;      // 24 bits
  std::uint32_t psn = 0;      // 24 bits
  std::uint8_t gid[16] = {};  // RoCEv2 over IPv4: ::ffff:a.b.c.d
};

inline constexpr std::size_t kRcPingpongMsgBytes = 52;  // 4+1+6+1+6+1+32 characters + NUL

// GID helpers: IPv4-mapped IPv6 addresses are how RoCEv2 GIDs name IPv4 endpoints (GID index 1
// on Linux rxe). ipv4_from_gid fails for a GID of another type (link-local, global IPv6).
void gid_from_ipv4(const std::uint8_t ip[4], std::uint8_t gid[16]);
[[nodiscard]] Status ipv4_from_gid(const std::uint8_t gid[16], std::uint8_t ip[4]);

// The 52-byte message, NUL included.
[[nodiscard]] std::string format_rc_pingpong(const ConnInfo& c);
// Strict: exact length and layout, lowercase or uppercase hex only, values in range. The error
// names the field that is wrong.
[[nodiscard]] Status parse_rc_pingpong(const std::uint8_t* msg, std::size_t len, ConnInfo& out);

// Client side (what ibv_rc_pingpong does with a server name): connects to host:port — retrying
// until `timeout_ms` while nobody listens yet — sends our info first, then reads the peer's.
[[nodiscard]] Status rc_pingpong_client(const std::string& host, std::uint16_t port, const ConnInfo& local,
                                        ConnInfo& peer, std::uint32_t timeout_ms);
// Server side: listens on `port` (0 = any; `bound_port` tells which), accepts one client within
// `timeout_ms`, reads its info first, then answers with ours.
class RcPingpongServer {
 public:
  [[nodiscard]] Status listen(std::uint16_t port, std::uint16_t& bound_port);
  [[nodiscard]] Status exchange(const ConnInfo& local, ConnInfo& peer, std::uint32_t timeout_ms);
  ~RcPingpongServer();

 private:
  int listen_fd_ = -1;
};

}  // namespace droce::engine
