// The kernel-UDP baselines' shared parts: option values, an IPv4 UDP socket bound or connected
// with a receive timeout, a monotonic clock, and the stop flag SIGINT/SIGTERM set.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace droce::bench {

// IPv4 UDP datagrams carry at most 65535 - 20 (IP) - 8 (UDP) bytes.
constexpr std::uint32_t kMaxUdpPayload = 65507;

inline volatile sig_atomic_t g_stop = 0;
inline void on_stop(int) { g_stop = 1; }
inline void install_udp_stop() {
  struct sigaction sa {};
  sa.sa_handler = on_stop;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

inline std::uint64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

// A number option in [lo, hi], or one error line naming the option.
inline bool parse_number(const char* tool, const std::string& opt, const std::string& s, double lo, double hi,
                         double& out) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || errno != 0 || *end != '\0' || !(v >= lo && v <= hi)) {
    std::fprintf(stderr, "%s: %s: '%s' is not a number in [%g, %g]\n", tool, opt.c_str(), s.c_str(), lo, hi);
    return false;
  }
  out = v;
  return true;
}

// A UDP socket on addr:port: bound there (`bind_it`) or connected to it. Every receive waits at
// most `rcv_timeout_ms`, so no loop blocks forever. Returns -1 after printing why.
inline int udp_socket(const char* tool, const std::string& addr, std::uint16_t port, bool bind_it, int rcv_timeout_ms) {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  if (inet_pton(AF_INET, addr.c_str(), &sa.sin_addr) != 1) {
    std::fprintf(stderr, "%s: '%s' is not an IPv4 address\n", tool, addr.c_str());
    return -1;
  }
  const int fd = socket(AF_INET, SOCK_DGRAM, 0);
  if (fd < 0) {
    std::fprintf(stderr, "%s: socket: %s\n", tool, std::strerror(errno));
    return -1;
  }
  timeval tv{rcv_timeout_ms / 1000, (rcv_timeout_ms % 1000) * 1000};
  (void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  // Large buffers: the blaster's bursts would otherwise overflow the default 208 KiB. FORCE
  // passes net.core.rmem_max for root; the plain call is the fallback for everyone else.
  const int buf = 8 << 20;
  if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof(buf)) != 0)
    (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
  if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &buf, sizeof(buf)) != 0)
    (void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
  const int one = 1;
  (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  const int r = bind_it ? bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa))
                        : connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa));
  if (r != 0) {
    std::fprintf(stderr, "%s: %s %s:%u: %s\n", tool, bind_it ? "bind" : "connect", addr.c_str(), port,
                 std::strerror(errno));
    close(fd);
    return -1;
  }
  return fd;
}

}  // namespace droce::bench
