// droce-echo option parsing: every bad value or combination is one message naming the option.
#include "apps/droce-echo/options.h"

#include <cstdio>

#include "apps/common/address_text.h"
#include "apps/common/cli_number.h"
#include "apps/common/output_file.h"
#include "apps/common/version_line.h"

namespace droce::echo {

namespace {

void usage(const Options& d) {
  std::printf(
      "usage: droce-echo [EAL options] -- [options]\n"
      "A request/response service on droce's messaging API: the server echoes every message, the\n"
      "client sends one at a time and reports round-trip times. With no EAL options, loopback runs\n"
      "both in this process over net_ring; server/client use net_memif on /tmp/droce-echo.sock.\n"
      "With --peer rc_pingpong either end talks to rdma-core's ibv_rc_pingpong on a RoCE NIC or\n"
      "Linux Soft-RoCE (run it with -g <GID index of the IPv4 GID>, the same -s and -m, and -n equal\n"
      "to --warmup + --count). With --peer srq_pingpong it talks to ibv_srq_pingpong the same way (its -q\n"
      "equal to --qps, -n to --warmup + --count).\n\n"
      "  --mode loopback|server|client  (default %s)\n"
      "  --peer droce|rc_pingpong|srq_pingpong\n"
      "                           the other end: droce-echo (the sequence rides in immediate data),\n"
      "                           ibv_rc_pingpong (plain SENDs; both sides send --warmup + --count messages;\n"
      "                           the client checks each reply against its request, the server checks each\n"
      "                           request after the first against its previous reply) or ibv_srq_pingpong\n"
      "                           (--qps QPs a side whose receives all come from one shared receive queue;\n"
      "                           --warmup + --count exchanges in all, over every QP; the server answers each\n"
      "                           request on the QP it came on; the client checks every reply, the server\n"
      "                           every request, against the first) (default %s)\n"
      "  --thread worker|app      client logic on the worker lcore, polling inline, or on an application\n"
      "                           thread handing work over through QpChannel (default %s; worker only with\n"
      "                           --peer rc_pingpong or srq_pingpong)\n"
      "  --size BYTES             message size, 1..65536 (default %u)\n"
      "  --count N                measured round trips (default %llu)\n"
      "  --warmup N               round trips before measuring (default %llu; 0 with --peer rc_pingpong or\n"
      "                           srq_pingpong)\n"
      "  --mtu BYTES              path MTU: 256, 512, 1024, 2048 or 4096 (default %u; 1024 with --peer\n"
      "                           rc_pingpong or srq_pingpong, as their -m)\n"
      "  --qp-timeout N           local ACK timeout 4.096 us * 2^N, 1..31 (default %u: 67 ms, as perftest\n"
      "                           and ibv_rc_pingpong set)\n"
      "  --oob-port N             TCP port of the connection exchange (default %u; the server may give 0:\n"
      "                           any free port)\n"
      "  --oob-host HOST          the server's host, for the client (default %s)\n"
      "  --local-ip A.B.C.D       our RoCE address, sent as GID ::ffff:A.B.C.D (default 10.0.0.1 client,\n"
      "                           10.0.0.2 server)\n"
      "  --local-mac XX:..:XX     source MAC of our frames (default: the port's MAC)\n"
      "  --peer-mac XX:..:XX      the peer's MAC (default: found by ARP; a peer that does not answer ARP needs it)\n"
      "  --loss P                 lab impairment: drop this fraction of received frames, [0, 0.5]\n"
      "                           (default %g; server/client only)\n"
      "  --seed S                 seed of the impairment (default %llu)\n"
      "  --timeout S              give up after this long without progress (default %g)\n"
      "  --json FILE              results as JSON (rtt_ns p50/p90/p99/p999/max; the server's: echoed, and a\n"
      "                           \"workers\" array with each worker's share)\n"
      "  --workers N              server: N poll-mode workers, each on its own EAL lcore (the main lcore is\n"
      "                           worker 0; -l must give N) with its own RX/TX queue pair; the client's QP i\n"
      "                           is served by worker i %% N. Client: N queue pairs, all polled by its one lcore\n"
      "                           (give the server's N: net_memif pairs the two sides' queues). 1..16 (default %u)\n"
      "  --qps N                  client: N QPs, each with one round trip in flight, --warmup + --count round\n"
      "                           trips each (default %u; --peer droce, --thread worker). With --peer\n"
      "                           srq_pingpong: its -q, 1..64 (default 16, as its own); the server takes\n"
      "                           the client's count\n"
      "  --rx-depth N             --peer srq_pingpong: receives the shared receive queue holds, at least\n"
      "                           --qps (its -r; default %u); --rx-depth x --size at most 64 MiB\n"
      "  --version                droce's and DPDK's versions\n",
      d.mode.c_str(), d.peer.c_str(), d.thread.c_str(), d.size, static_cast<unsigned long long>(d.count),
      static_cast<unsigned long long>(d.warmup), d.mtu, d.qp_timeout, d.oob_port, d.oob_host.c_str(), d.loss,
      static_cast<unsigned long long>(d.seed), d.timeout_s, d.workers, d.qps, d.rx_depth);
}

}  // namespace

int parse_options(const std::vector<std::string>& args, Options& o) {
  const Options d;
  bool warmup_given = false, mtu_given = false, timeout_given = false, qps_given = false, rx_depth_given = false;
  auto fail = [](const std::string& message) { return std::fprintf(stderr, "droce-echo: %s\n", message.c_str()), -1; };
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      usage(d);
      return 1;
    }
    if (a == "--version") {
      apps::print_version("droce-echo");
      return 1;
    }
    if (i + 1 >= args.size()) return fail(apps::printable(a) + " needs a value (or is unknown; see --help)");
    const std::string v = args[++i];
    auto bad = [&](const char* what) { return fail(a + ": " + apps::quoted(v) + " " + what); };
    std::string e;  // from the number and path parsers: one message naming the option
    std::uint8_t scratch[6];
    if (a == "--mode") {
      if (v != "loopback" && v != "server" && v != "client") return bad("is not loopback, server or client");
      o.mode = v;
    } else if (a == "--thread") {
      if (v != "worker" && v != "app") return bad("is not worker or app");
      o.thread = v;
    } else if (a == "--peer") {
      if (v != "droce" && v != "rc_pingpong" && v != "srq_pingpong") return bad("is not droce, rc_pingpong or srq_pingpong");
      o.peer = v;
    } else if (a == "--size") {
      e = apps::parse_uint(a, v, 1, 65536, o.size);
    } else if (a == "--count" || a == "--warmup") {
      e = apps::parse_uint(a, v, a == "--count" ? 1 : 0, 10'000'000'000ull, a == "--count" ? o.count : o.warmup);
      warmup_given |= a == "--warmup";
    } else if (a == "--mtu") {
      e = apps::parse_uint(a, v, 256, 4096, o.mtu);
      if (e.empty() && o.mtu != 256 && o.mtu != 512 && o.mtu != 1024 && o.mtu != 2048 && o.mtu != 4096)
        return bad("is not 256, 512, 1024, 2048 or 4096");
      mtu_given = true;
    } else if (a == "--qp-timeout") {
      e = apps::parse_uint(a, v, 1, 31, o.qp_timeout);
      timeout_given = true;
    } else if (a == "--oob-port") {
      e = apps::parse_uint(a, v, 0, 65535, o.oob_port);
    } else if (a == "--oob-host") {
      if (v.empty()) return bad("is not a host name or address");
      o.oob_host = v;
    } else if (a == "--local-ip") {
      if (!engine::parse_ipv4(v, scratch)) return bad("is not an IPv4 address");
      o.local_ip = v;
    } else if (a == "--local-mac" || a == "--peer-mac") {
      if (!engine::parse_mac(v, scratch)) return bad("is not a MAC address (XX:XX:XX:XX:XX:XX)");
      (a == "--local-mac" ? o.local_mac : o.peer_mac) = v;
    } else if (a == "--loss") {
      e = apps::parse_real(a, v, 0, 0.5, o.loss);
    } else if (a == "--seed") {
      e = apps::parse_uint(a, v, 0, 1'000'000'000'000'000'000ull, o.seed);
    } else if (a == "--timeout") {
      e = apps::parse_real(a, v, 0.1, 3600, o.timeout_s);
    } else if (a == "--workers") {
      e = apps::parse_uint(a, v, 1, 16, o.workers);
    } else if (a == "--qps") {
      e = apps::parse_uint(a, v, 1, 64, o.qps);
      qps_given = true;
    } else if (a == "--rx-depth") {
      e = apps::parse_uint(a, v, 1, 65536, o.rx_depth);
      rx_depth_given = true;
    } else if (a == "--json") {
      e = apps::check_output_path(a, v);
      o.json = v;
    } else {
      return fail("unknown option " + apps::quoted(a) + " (see --help)");
    }
    if (!e.empty()) return fail(e);
  }
  if (o.mode == "server" && o.thread == "app")
    return fail("--thread app is the client's; the server always echoes on its worker");
  if (o.mode == "loopback" && (o.pingpong_tool() || o.loss > 0 || !o.local_ip.empty() || !o.local_mac.empty() || !o.peer_mac.empty()))
    return std::fprintf(stderr, "droce-echo: --peer rc_pingpong or srq_pingpong, --loss and the addressing options need --mode server or client\n"), -1;
  if (o.pingpong_tool() && o.thread == "app")
    return std::fprintf(stderr, "droce-echo: --peer %s runs the client on the worker (--thread worker)\n", o.peer.c_str()), -1;
  if (o.mode == "loopback" && (o.workers > 1 || o.qps > 1))
    return fail("--workers and --qps need --mode server or client (loopback runs one QP)");
  if (o.mode == "server" && o.qps > 1) return fail("--qps is the client's: the server serves as many QPs as the client opens");
  if (o.rc_pingpong() && (o.workers > 1 || o.qps > 1))
    return fail("--peer rc_pingpong runs one QP on one worker (--workers and --qps need --peer droce)");
  if (o.thread == "app" && (o.workers > 1 || o.qps > 1))
    return fail("--thread app drives one QP on one worker (--workers and --qps need --thread worker)");
  if (o.srq_pingpong() && o.workers > 1) return fail("--peer srq_pingpong runs its QPs and their shared receive queue on one worker (no --workers)");
  if (rx_depth_given && !o.srq_pingpong()) return fail("--rx-depth is the shared receive queue's (--peer srq_pingpong)");
  if (o.srq_pingpong() && !qps_given && o.mode == "client") o.qps = 16;
  if (o.srq_pingpong() && o.mode == "client" && o.rx_depth < o.qps)
    return fail("--rx-depth " + std::to_string(o.rx_depth) + " is less than --qps " + std::to_string(o.qps) +
                ": the shared receive queue needs a receive for each QP");
  if (o.srq_pingpong() && std::uint64_t{o.rx_depth} * o.size > (64ull << 20))
    return fail("--rx-depth x --size is over 64 MiB (the shared receive queue's buffers)");
  if (o.mode == "client" && o.oob_port == 0)
    return std::fprintf(stderr, "droce-echo: --oob-port 0 (any port) is only for the server\n"), -1;
  if (o.pingpong_tool()) {
    if (!warmup_given) o.warmup = 0;
    if (!mtu_given) o.mtu = 1024;
    if (!timeout_given) o.qp_timeout = 14;
  }
  return 0;
}

}  // namespace droce::echo
