// udp_blaster: the kernel's UDP message rate and goodput — a sendmmsg sender and a recvmmsg
// receiver, batch by batch. The receiver's figures are what the kernel delivered; the sender's
// are what it accepted (the difference is dropped in the stack).
#include <sys/socket.h>

#include <fstream>
#include <string>
#include <vector>

#include "apps/common/cli/app.h"
#include "apps/common/cli/values.h"
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

constexpr const char* kUsage =
    "usage: udp_blaster --role send|recv [options]\n"
    "Kernel UDP throughput: the sender sends --size-byte datagrams in sendmmsg batches for\n"
    "--duration (or --count datagrams); the receiver counts what recvmmsg delivers and reports the\n"
    "rate between its first and last datagram.";

int parse(int argc, char** argv, Options& o) {
  namespace cli = droce::apps::cli;
  using droce::apps::Suffixes;
  const auto app = cli::make_app(kTool, kUsage);
  const std::string d = " (default ";
  const char* g = "udp";
  cli::add_choice(*app, g, "--role", {"send", "recv"}, o.role, "required")->required();
  cli::add_value(*app, g, "--addr", "A.B.C.D", "receiver's address: bound by recv, sent to by send" + d + o.addr + ")",
                 [&o](const std::string& v) { return o.addr = v, std::string(); });
  cli::add_uint(*app, g, "--port", "N", o.port, 1, 65535, "UDP port" + d + std::to_string(o.port) + ")");
  cli::add_uint(*app, g, "--size", "BYTES", o.size, 1, kMaxUdpPayload,
                "datagram payload, 1.." + std::to_string(kMaxUdpPayload) + d + std::to_string(o.size) + ")",
                Suffixes::kBinary);
  cli::add_uint(*app, g, "--batch", "N", o.batch, 1, 1024,
                "datagrams per sendmmsg/recvmmsg call, 1..1024" + d + std::to_string(o.batch) + ")");
  cli::add_real(*app, g, "--duration", "S", o.duration_s, 0.01, 3600,
                "sender: seconds to send" + d + cli::num(o.duration_s) + ")");
  cli::add_uint(*app, g, "--count", "N", o.count, 1, 1'000'000'000'000ull,
                "sender: datagrams to send; receiver: stop after this many (default: none)", Suffixes::kDecimal);
  cli::add_real(*app, g, "--idle", "S", o.idle_s, 0.01, 3600,
                "receiver: stop this long after the last datagram" + d + cli::num(o.idle_s) + ")");
  cli::add_real(*app, g, "--timeout", "S", o.timeout_s, 0.01, 3600,
                "receiver: give up if nothing arrives in this long" + d + cli::num(o.timeout_s) + ")");
  cli::add_output(*app, g, "--json", o.json, "results as JSON");
  return cli::parse(*app, std::vector<std::string>(argv + 1, argv + argc));
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
    if (s < 0)
      ++r.errors;
    else
      r.datagrams += static_cast<std::uint64_t>(s);
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
