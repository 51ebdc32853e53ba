// udp_pingpong: the kernel's UDP round trip — one datagram out, the server sends it back. Blocking
// mode sleeps in recv (wake-up latency included); busy-poll mode spins on MSG_DONTWAIT, the
// kernel's best case and the fair match for droce's polling. Both ends use the same mode.
#include <sys/socket.h>

#include <fstream>
#include <string>
#include <vector>

#include "apps/common/cli/app.h"
#include "apps/common/cli/values.h"
#include "apps/common/latency_histogram.h"
#include "bench/e2e/udp_socket.h"

using namespace droce::bench;

namespace {

constexpr const char* kTool = "udp_pingpong";
constexpr std::uint64_t kMaxLostRounds = 10;

struct Options {
  std::string role;  // server | client
  std::string addr = "127.0.0.1";
  std::uint16_t port = 9401;
  std::uint32_t size = 64;
  std::uint64_t count = 20000;
  std::uint64_t warmup = 500;
  bool busy_poll = false;
  double timeout_s = 2;
  std::string json;
};

constexpr const char* kUsage =
    "usage: udp_pingpong --role server|client [options]\n"
    "Kernel UDP round trips: the client sends one --size-byte datagram and waits for it to come\n"
    "back. The server echoes until an empty datagram (the client's goodbye), a signal, or\n"
    "--timeout without traffic.";

int parse(int argc, char** argv, Options& o) {
  namespace cli = droce::apps::cli;
  using droce::apps::Suffixes;
  const auto app = cli::make_app(kTool, kUsage);
  const std::string d = " (default ";
  const char* g = "udp";
  cli::add_choice(*app, g, "--role", {"server", "client"}, o.role, "required")->required();
  cli::add_value(*app, g, "--addr", "A.B.C.D",
                 "server's address: bound by server, sent to by client" + d + o.addr + ")",
                 [&o](const std::string& v) { return o.addr = v, std::string(); });
  cli::add_uint(*app, g, "--port", "N", o.port, 1, 65535, "UDP port" + d + std::to_string(o.port) + ")");
  cli::add_uint(*app, g, "--size", "BYTES", o.size, 8, kMaxUdpPayload,
                "datagram payload, 8.." + std::to_string(kMaxUdpPayload) + d + std::to_string(o.size) + ")",
                Suffixes::kBinary);
  cli::add_uint(*app, g, "--count", "N", o.count, 1, 10'000'000'000ull,
                "measured round trips" + d + std::to_string(o.count) + ")", Suffixes::kDecimal);
  cli::add_uint(*app, g, "--warmup", "N", o.warmup, 0, 10'000'000'000ull,
                "round trips before measuring" + d + std::to_string(o.warmup) + ")", Suffixes::kDecimal);
  cli::add_flag(*app, g, "--busy-poll", o.busy_poll, "spin on non-blocking receives instead of sleeping in recv");
  cli::add_real(*app, g, "--timeout", "S", o.timeout_s, 0.01, 3600,
                "a round trip lost after this long; server: idle limit" + d + cli::num(o.timeout_s) + ")");
  cli::add_output(*app, g, "--json", o.json, "results as JSON (rtt_ns p50/p90/p99/p999/max)");
  return cli::parse(*app, std::vector<std::string>(argv + 1, argv + argc));
}

// One receive that gives up at `deadline`: blocking recv wakes every SO_RCVTIMEO (100 ms) to
// check it; busy-poll spins. Returns the datagram's length, or -1 when the deadline passed.
ssize_t receive(int fd, std::vector<std::uint8_t>& buf, bool busy, std::uint64_t deadline, sockaddr_in* from) {
  socklen_t fl = sizeof(sockaddr_in);
  for (;;) {
    const ssize_t n = recvfrom(fd, buf.data(), buf.size(), busy ? MSG_DONTWAIT : 0, reinterpret_cast<sockaddr*>(from),
                               from != nullptr ? &fl : nullptr);
    if (n >= 0) return n;
    if (g_stop || now_ns() > deadline) return -1;
  }
}

int serve(int fd, const Options& o) {
  std::vector<std::uint8_t> buf(kMaxUdpPayload);
  std::uint64_t echoed = 0;
  for (;;) {
    sockaddr_in from{};
    const ssize_t n = receive(fd, buf, o.busy_poll, now_ns() + static_cast<std::uint64_t>(o.timeout_s * 1e9), &from);
    if (n <= 0) break;  // goodbye, signal or idle
    if (sendto(fd, buf.data(), static_cast<std::size_t>(n), 0, reinterpret_cast<sockaddr*>(&from), sizeof(from)) == n)
      ++echoed;
  }
  std::printf("udp_pingpong server: echoed %llu datagrams\n", static_cast<unsigned long long>(echoed));
  return echoed > 0 ? 0 : 1;
}

int ping(int fd, const Options& o) {
  std::vector<std::uint8_t> out(o.size, 0xa5), in(kMaxUdpPayload);
  droce::engine::LatencyHistogram hist;
  std::uint64_t lost = 0, stray = 0, send_errors = 0;
  const auto round_ns = static_cast<std::uint64_t>(o.timeout_s * 1e9);
  for (std::uint64_t seq = 0; seq < o.warmup + o.count && !g_stop && lost < kMaxLostRounds; ++seq) {
    std::memcpy(out.data(), &seq, 8);
    const std::uint64_t t0 = now_ns();
    if (send(fd, out.data(), out.size(), 0) != static_cast<ssize_t>(out.size())) {
      ++send_errors;
      ++lost;
      continue;
    }
    for (;;) {
      const ssize_t n = receive(fd, in, o.busy_poll, t0 + round_ns, nullptr);
      if (n < 0) {
        ++lost;
        break;
      }
      std::uint64_t got = ~0ull;
      if (n >= 8) std::memcpy(&got, in.data(), 8);
      if (got != seq || static_cast<std::uint32_t>(n) != o.size) {
        ++stray;  // a late reply to a lost round
        continue;
      }
      if (seq >= o.warmup) hist.record(now_ns() - t0);
      break;
    }
  }
  for (int i = 0; i < 3; ++i) (void)send(fd, out.data(), 0, 0);  // goodbye: an empty datagram
  std::printf("udp_pingpong client (%s): %llu round trips of %u bytes after %llu warm-up\n",
              o.busy_poll ? "busy-poll" : "blocking", static_cast<unsigned long long>(hist.count()), o.size,
              static_cast<unsigned long long>(o.warmup));
  std::printf("  RTT ns: min %llu  p50 %llu  p90 %llu  p99 %llu  p99.9 %llu  max %llu\n",
              static_cast<unsigned long long>(hist.min()), static_cast<unsigned long long>(hist.percentile(0.5)),
              static_cast<unsigned long long>(hist.percentile(0.9)),
              static_cast<unsigned long long>(hist.percentile(0.99)),
              static_cast<unsigned long long>(hist.percentile(0.999)), static_cast<unsigned long long>(hist.max()));
  std::printf("  lost rounds %llu, stray replies %llu, send errors %llu\n", static_cast<unsigned long long>(lost),
              static_cast<unsigned long long>(stray), static_cast<unsigned long long>(send_errors));
  if (!o.json.empty()) {
    std::ofstream j(o.json);
    j << "{\"mode\": \"" << (o.busy_poll ? "busy-poll" : "blocking") << "\", \"size\": " << o.size
      << ", \"round_trips\": " << hist.count() << ", \"rtt_ns\": {\"min\": " << hist.min()
      << ", \"p50\": " << hist.percentile(0.5) << ", \"p90\": " << hist.percentile(0.9)
      << ", \"p99\": " << hist.percentile(0.99) << ", \"p999\": " << hist.percentile(0.999)
      << ", \"max\": " << hist.max() << "}, \"lost_rounds\": " << lost << ", \"stray_replies\": " << stray << "}\n";
    if (!j) return std::fprintf(stderr, "%s: cannot write %s\n", kTool, o.json.c_str()), 1;
  }
  if (lost >= kMaxLostRounds)
    std::fprintf(stderr, "%s: gave up after %llu lost round trips\n", kTool, static_cast<unsigned long long>(lost));
  return hist.count() == o.count ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (int r = parse(argc, argv, o); r != 0) return r > 0 ? 0 : 2;
  install_udp_stop();
  const bool server = o.role == "server";
  const int fd = udp_socket(kTool, o.addr, o.port, server, 100);
  if (fd < 0) return 1;
  const int rc = server ? serve(fd, o) : ping(fd, o);
  close(fd);
  return rc;
}
