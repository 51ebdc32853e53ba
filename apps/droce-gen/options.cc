// droce-gen option parsing: every bad value is one clear message naming the option.
#include "apps/droce-gen/options.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>

namespace droce::gen {

const char* op_name(Op op) { return op == Op::kSend ? "send" : op == Op::kWrite ? "write" : "read"; }

namespace {

void usage(const Options& d) {
  std::printf(
      "usage: droce-gen [EAL options] -- [options]\n"
      "RoCEv2 RC traffic generator: real queue pairs with go-back-N reliability, every message\n"
      "verified on arrival. With no EAL options it builds an in-process lab (two endpoints on net_ring\n"
      "ports through a relay that can drop frames) and runs a short test.\n\n"
      "  --mode loopback          both ends in this process (default %s; client/server: not yet)\n"
      "  --op send|write|read     RC operation (default %s; send/write carry immediate data = sequence)\n"
      "  --size BYTES             message size, 1..1048576 (default %u)\n"
      "  --mtu BYTES              path MTU: 256, 512, 1024, 2048 or 4096 (default %u)\n"
      "  --qps N                  queue pairs, 1..64 (default %u)\n"
      "  --inflight N             outstanding messages per QP, 1..128 (default %u)\n"
      "  --duration S             seconds to run after warm-up (default %g)\n"
      "  --count N                stop after N messages in total instead (default: by duration)\n"
      "  --warmup S               seconds excluded from the statistics (default %g)\n"
      "  --loss P                 lab impairment: drop this fraction of frames, [0, 0.5] (default %g)\n"
      "  --seed S                 seed of the impairment (default %llu)\n"
      "  --json FILE              write the report as JSON\n"
      "  --pcap FILE              capture endpoint A's frames (pcapng, Wireshark decodes RoCEv2)\n"
      "  --quiet                  no live line\n"
      "  --help                   this text\n",
      d.mode.c_str(), op_name(d.op), d.size, d.mtu, d.qps, d.inflight, d.duration_s, d.warmup_s, d.loss,
      static_cast<unsigned long long>(d.seed));
}

bool number(const std::string& opt, const std::string& s, double lo, double hi, double& out) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || errno != 0 || *end != '\0' || !(v >= lo && v <= hi)) {
    std::fprintf(stderr, "droce-gen: %s: '%s' is not a number in [%g, %g]\n", opt.c_str(), s.c_str(), lo, hi);
    return false;
  }
  out = v;
  return true;
}

}  // namespace

int parse_options(const std::vector<std::string>& args, Options& o) {
  const Options defaults;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](std::string& v) {
      if (i + 1 >= args.size()) {
        std::fprintf(stderr, "droce-gen: %s needs a value (see --help)\n", a.c_str());
        return false;
      }
      v = args[++i];
      return true;
    };
    std::string v;
    double d = 0;
    if (a == "--help" || a == "-h") {
      usage(defaults);
      return 1;
    } else if (a == "--quiet") {
      o.quiet = true;
    } else if (a == "--mode") {
      if (!value(v)) return -1;
      if (v != "loopback") {
        std::fprintf(stderr, "droce-gen: --mode %s: only 'loopback' is implemented in this version\n", v.c_str());
        return -1;
      }
      o.mode = v;
    } else if (a == "--op") {
      if (!value(v)) return -1;
      if (v == "send") o.op = Op::kSend;
      else if (v == "write") o.op = Op::kWrite;
      else if (v == "read") o.op = Op::kRead;
      else return std::fprintf(stderr, "droce-gen: --op: '%s' is not send, write or read\n", v.c_str()), -1;
    } else if (a == "--size") {
      if (!value(v) || !number(a, v, 1, 1 << 20, d)) return -1;
      o.size = static_cast<std::uint32_t>(d);
    } else if (a == "--mtu") {
      if (!value(v) || !number(a, v, 256, 4096, d)) return -1;
      o.mtu = static_cast<std::uint32_t>(d);
      if (o.mtu != 256 && o.mtu != 512 && o.mtu != 1024 && o.mtu != 2048 && o.mtu != 4096)
        return std::fprintf(stderr, "droce-gen: --mtu: %u is not an IB MTU (256, 512, 1024, 2048, 4096)\n", o.mtu), -1;
    } else if (a == "--qps") {
      if (!value(v) || !number(a, v, 1, 64, d)) return -1;
      o.qps = static_cast<std::uint32_t>(d);
    } else if (a == "--inflight") {
      if (!value(v) || !number(a, v, 1, 128, d)) return -1;
      o.inflight = static_cast<std::uint32_t>(d);
    } else if (a == "--duration") {
      if (!value(v) || !number(a, v, 0.01, 86400, d)) return -1;
      o.duration_s = d;
    } else if (a == "--count") {
      if (!value(v) || !number(a, v, 1, 1e12, d)) return -1;
      o.count = static_cast<std::uint64_t>(d);
    } else if (a == "--warmup") {
      if (!value(v) || !number(a, v, 0, 3600, d)) return -1;
      o.warmup_s = d;
    } else if (a == "--loss") {
      if (!value(v) || !number(a, v, 0, 0.5, d)) return -1;
      o.loss = d;
    } else if (a == "--seed") {
      if (!value(v) || !number(a, v, 0, 1e18, d)) return -1;
      o.seed = static_cast<std::uint64_t>(d);
    } else if (a == "--json") {
      if (!value(o.json)) return -1;
    } else if (a == "--pcap") {
      if (!value(o.pcap)) return -1;
    } else {
      std::fprintf(stderr, "droce-gen: unknown option '%s' (see --help)\n", a.c_str());
      return -1;
    }
  }
  // Buffers: inflight slots of `size` bytes per QP on each side.
  if (static_cast<std::uint64_t>(o.inflight) * o.size * o.qps > (512ull << 20))
    return std::fprintf(stderr, "droce-gen: --qps x --inflight x --size needs more than 512 MiB of buffers\n"), -1;
  return 0;
}

}  // namespace droce::gen
