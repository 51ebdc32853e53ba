// udp_blaster: the kernel's UDP message rate and goodput — a sendmmsg sender and a recvmmsg
// receiver, batch by batch. The receiver's figures are what the kernel delivered; the sender's
// are what it accepted (the difference is dropped in the stack).
#include <sys/socket.h>

#include <fstream>
#include <string>
#include <vector>

#include "bench/e2e/udp_socket.h"

using namespace droce::bench;

namespace {

constexpr const char* kTool = "udp_blaster";

struct Options {
  std::string role;  // send | recv
  std::string addr = "127.0.0.1";
  std::uint16_t port = 9400;
  std::uint32_t size = 64;
  std::uint32_t batch = 32;
  double duration_s = 2;
  std::uint64_t count = 0;  // 0: by duration (sender) / until idle (receiver)
  double idle_s = 0.5;
  double timeout_s = 10;
  std::string json;
};

void usage(const Options& d) {
  std::printf(
      "usage: udp_blaster --role send|recv [options]\n"
      "Kernel UDP throughput: the sender sends --size-byte datagrams in sendmmsg batches for\n"
      "--duration (or --count datagrams); the receiver counts what recvmmsg delivers and reports the\n"
      "rate between its first and last datagram.\n\n"
      "  --role send|recv         required\n"
      "  --addr A.B.C.D           receiver's address: bound by recv, sent to by send (default %s)\n"
      "  --port N                 UDP port (default %u)\n"
      "  --size BYTES             datagram payload, 1..%u (default %u)\n"
      "  --batch N                datagrams per sendmmsg/recvmmsg call, 1..1024 (default %u)\n"
      "  --duration S             sender: seconds to send (default %g)\n"
      "  --count N                sender: datagrams to send; receiver: stop after this many (default: none)\n"
      "  --idle S                 receiver: stop this long after the last datagram (default %g)\n"
      "  --timeout S              receiver: give up if nothing arrives in this long (default %g)\n"
      "  --json FILE              results as JSON\n",
      d.addr.c_str(), d.port, kMaxUdpPayload, d.size, d.batch, d.duration_s, d.idle_s, d.timeout_s);
}

int parse(int argc, char** argv, Options& o) {
  const Options d;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") return usage(d), 1;
    if (i + 1 >= argc) return std::fprintf(stderr, "%s: %s needs a value (or is unknown; see --help)\n", kTool, a.c_str()), -1;
    const std::string v = argv[++i];
    double n = 0;
    if (a == "--role") {
      if (v != "send" && v != "recv") return std::fprintf(stderr, "%s: --role: '%s' is not send or recv\n", kTool, v.c_str()), -1;
      o.role = v;
    } else if (a == "--addr") {
      o.addr = v;
    } else if (a == "--port") {
      if (!parse_number(kTool, a, v, 1, 65535, n)) return -1;
      o.port = static_cast<std::uint16_t>(n);
    } else if (a == "--size") {
      if (!parse_number(kTool, a, v, 1, kMaxUdpPayload, n)) return -1;
      o.size = static_cast<std::uint32_t>(n);
    } else if (a == "--batch") {
      if (!parse_number(kTool, a, v, 1, 1024, n)) return -1;
      o.batch = static_cast<std::uint32_t>(n);
    } else if (a == "--duration" || a == "--idle" || a == "--timeout") {
      if (!parse_number(kTool, a, v, 0.01, 3600, n)) return -1;
      (a == "--duration" ? o.duration_s : a == "--idle" ? o.idle_s : o.timeout_s) = n;
    } else if (a == "--count") {
      if (!parse_number(kTool, a, v, 1, 1e12, n)) return -1;
      o.count = static_cast<std::uint64_t>(n);
    } else if (a == "--json") {
      o.json = v;
    } else {
      return std::fprintf(stderr, "%s: unknown option '%s' (see --help)\n", kTool, a.c_str()), -1;
    }
  }
  if (o.role.empty()) return std::fprintf(stderr, "%s: --role send|recv is required\n", kTool), -1;
  return 0;
}

struct Result {
  std::uint64_t datagrams = 0, bytes = 0, errors = 0;
  std::uint64_t window_datagrams = 0;  // those the rate is computed from
  double seconds = 0;
};

Result blast(int fd, const Options& o) {
  std::vector<std::uint8_t> buf(o.size, 0x5a);
  std::vector<iovec> iov(o.batch, iovec{buf.data(), buf.size()});
  std::vector<mmsghdr> msgs(o.batch);
  for (std::uint32_t i = 0; i < o.batch; ++i) {
    msgs[i].msg_hdr = {};
    msgs[i].msg_hdr.msg_iov = &iov[i];
    msgs[i].msg_hdr.msg_iovlen = 1;
  }
  Result r;
  const std::uint64_t t0 = now_ns();
  const auto end = t0 + static_cast<std::uint64_t>(o.duration_s * 1e9);
  while (!g_stop && now_ns() < end && (o.count == 0 || r.datagrams < o.count)) {
    std::uint32_t n = o.batch;
    if (o.count != 0 && o.count - r.datagrams < n) n = static_cast<std::uint32_t>(o.count - r.datagrams);
    const int s = sendmmsg(fd, msgs.data(), n, 0);
    // ENOBUFS / ECONNREFUSED (no receiver yet): counted, and the loop is bounded by the clock.
    if (s < 0) ++r.errors;
    else r.datagrams += static_cast<std::uint64_t>(s);
  }
  r.bytes = r.datagrams * o.size;
  r.window_datagrams = r.datagrams;
  r.seconds = static_cast<double>(now_ns() - t0) / 1e9;
  return r;
}

Result drain(int fd, const Options& o) {
  // One buffer per slot; a datagram larger than --size is truncated and still counted.
  std::vector<std::uint8_t> buf(static_cast<std::size_t>(o.batch) * o.size);
  std::vector<iovec> iov(o.batch);
  std::vector<mmsghdr> msgs(o.batch);
  Result r;
  const std::uint64_t start = now_ns();
  std::uint64_t first = 0, last = 0, first_batch = 0;
  while (!g_stop && (o.count == 0 || r.datagrams < o.count)) {
    for (std::uint32_t i = 0; i < o.batch; ++i) {
      iov[i] = iovec{buf.data() + static_cast<std::size_t>(i) * o.size, o.size};
      msgs[i].msg_hdr = {};
      msgs[i].msg_hdr.msg_iov = &iov[i];
      msgs[i].msg_hdr.msg_iovlen = 1;
    }
    // MSG_WAITFORONE: block (up to SO_RCVTIMEO) for the first, then take what is queued.
    const int n = recvmmsg(fd, msgs.data(), o.batch, MSG_WAITFORONE, nullptr);
    const std::uint64_t now = now_ns();
    if (n > 0) {
      if (r.datagrams == 0) {
        first = now;
        first_batch = static_cast<std::uint64_t>(n);
      }
      last = now;
      r.datagrams += static_cast<std::uint64_t>(n);
      for (int i = 0; i < n; ++i) r.bytes += msgs[static_cast<std::size_t>(i)].msg_len;
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) ++r.errors;
    if (r.datagrams == 0 ? now - start > static_cast<std::uint64_t>(o.timeout_s * 1e9)
                         : now - last > static_cast<std::uint64_t>(o.idle_s * 1e9))
      break;
  }
  // The first batch's arrival opens the window: its datagrams are not part of the rate.
  r.seconds = static_cast<double>(last - first) / 1e9;
  r.window_datagrams = r.datagrams - first_batch;
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (int r = parse(argc, argv, o); r != 0) return r > 0 ? 0 : 2;
  install_udp_stop();
  const bool recv = o.role == "recv";
  const int fd = udp_socket(kTool, o.addr, o.port, recv, 100);
  if (fd < 0) return 1;
  const Result r = recv ? drain(fd, o) : blast(fd, o);
  close(fd);
  const double rate = r.seconds > 0 ? static_cast<double>(r.window_datagrams) / r.seconds : 0;
  const double gbps = rate * o.size * 8 / 1e9;
  std::printf("udp_blaster %s: %llu datagrams of %u bytes in %.3f s: %.3f Mpps, %.3f Gb/s goodput, %llu errors\n",
              o.role.c_str(), static_cast<unsigned long long>(r.datagrams), o.size, r.seconds, rate / 1e6, gbps,
              static_cast<unsigned long long>(r.errors));
  if (!o.json.empty()) {
    std::ofstream out(o.json);
    out << "{\"role\": \"" << o.role << "\", \"size\": " << o.size << ", \"datagrams\": " << r.datagrams
        << ", \"bytes\": " << r.bytes << ", \"seconds\": " << r.seconds << ", \"msg_rate_mps\": " << rate / 1e6
        << ", \"goodput_gbps\": " << gbps << ", \"errors\": " << r.errors << "}\n";
    if (!out) return std::fprintf(stderr, "%s: cannot write %s\n", kTool, o.json.c_str()), 1;
  }
  return r.datagrams > 0 ? 0 : 1;
}
