// droce-echo option parsing: every bad value or combination is one message naming the option.
#include "apps/droce-echo/options.h"

#include <cstdio>

#include "apps/common/cli/address_options.h"
#include "apps/common/cli/app.h"
#include "apps/common/cli/groups.h"
#include "apps/common/cli/values.h"

namespace droce::echo {

namespace {

constexpr const char* kUsage =
    "usage: droce-echo [EAL options] -- [options]\n"
    "A request/response service on droce's messaging API: the server echoes every message, the\n"
    "client sends one at a time and reports round-trip times. With no EAL options, loopback runs\n"
    "both in this process over net_ring; server/client use net_memif on /tmp/droce-echo.sock.\n"
    "With --peer rc_pingpong either end talks to rdma-core's ibv_rc_pingpong on a RoCE NIC or\n"
    "Linux Soft-RoCE (run it with -g <GID index of the IPv4 GID>, the same -s and -m, and -n equal\n"
    "to --warmup + --count). With --peer srq_pingpong it talks to ibv_srq_pingpong the same way (its -q\n"
    "equal to --qps, -n to --warmup + --count).";

// Every option, by group; the shared ones from apps/common/cli/groups.h.
void declare(CLI::App& app, Options& o) {
  namespace cli = apps::cli;
  const std::string d = " (default ";
  const char* g = cli::kConnection;
  cli::add_choice(app, g, "--mode", {"loopback", "server", "client"}, o.mode,
                  "both ends in this process, or one end each (default " + o.mode + ")");
  cli::add_choice(app, g, "--peer", {"droce", "rc_pingpong", "srq_pingpong"}, o.peer,
                  "the other end: droce-echo (the sequence rides in immediate data),\n"
                  "ibv_rc_pingpong (plain SENDs; both sides send --warmup + --count messages;\n"
                  "the client checks each reply against its request, the server checks each\n"
                  "request after the first against its previous reply) or ibv_srq_pingpong\n"
                  "(--qps QPs a side whose receives all come from one shared receive queue;\n"
                  "--warmup + --count exchanges in all, over every QP; the server answers each\n"
                  "request on the QP it came on; the client checks every reply, the server\n"
                  "every request, against the first)" +
                      d + o.peer + ")");
  cli::add_choice(app, g, "--thread", {"worker", "app"}, o.thread,
                  "client logic on the worker lcore, polling inline, or on an application\n"
                  "thread handing work over through QpChannel" +
                      d + o.thread +
                      "; worker only with\n"
                      "--peer rc_pingpong or srq_pingpong)");
  cli::ConnectionFields conn;
  conn.qp_timeout = &o.qp_timeout;
  conn.adaptive_rto = &o.adaptive_rto;
  conn.oob_port = &o.oob_port;
  conn.oob_port_zero = "the server may\ngive 0: any free port";
  conn.oob_host = &o.oob_host;
  cli::add_connection(app, conn);
  cli::add_ip(app, g, "--local-ip", o.local_ip,
              "our RoCE address, IPv4 or IPv6 (e.g. fd00::1), sent as our GID: IPv4 as\n"
              "::ffff:A.B.C.D, IPv6 as itself; the peer's GID must be of the same family\n"
              "(default 10.0.0.1 client, 10.0.0.2 server)");
  cli::add_mac(app, g, "--local-mac", o.local_mac, "source MAC of our frames (default: the port's MAC)");
  cli::add_mac(app, g, "--peer-mac", o.peer_mac,
               "the peer's MAC (default: found by ARP for IPv4, by Neighbor Discovery for\n"
               "IPv6; a peer that answers neither needs it)");
  cli::add_dscp(app, g, o.dscp);
  cli::add_vlan(app, g, o.vlan_id);
  cli::add_pcp(app, g, o.vlan_pcp);
  cli::add_real(app, g, "--timeout", "S", o.timeout_s, 0, 3600,
                "give up after this long without progress, 0..3600 s" + d + cli::num(o.timeout_s) +
                    ");\n0: the server waits for its client forever, as ibv_rc_pingpong's\n(Ctrl-C ends it), every "
                    "later wait keeping the default");

  g = cli::kWorkload;
  cli::add_uint(app, g, "--size", "BYTES", o.size, 1, 65536,
                "message size, 1..65536 (64K)" + d + std::to_string(o.size) + ")", apps::Suffixes::kBinary);
  cli::add_uint(app, g, "--count", "N", o.count, 1, 10'000'000'000ull,
                "measured round trips" + d + std::to_string(o.count) + ")", apps::Suffixes::kDecimal);
  cli::add_uint(
      app, g, "--warmup", "N", o.warmup, 0, 10'000'000'000ull,
      "round trips before measuring" + d + std::to_string(o.warmup) + "; 0 with --peer rc_pingpong or\nsrq_pingpong)",
      apps::Suffixes::kDecimal);
  cli::WorkloadFields work;
  work.mtu = &o.mtu;
  work.mtu_note = "; 1024 with --peer\nrc_pingpong or srq_pingpong, as their -m";
  cli::add_workload(app, work);
  cli::add_uint(app, g, "--workers", "N", o.workers, 1, 16,
                "server: N poll-mode workers, each on its own EAL lcore (the main lcore is\n"
                "worker 0; -l must give N) with its own RX/TX queue pair; the client's QP i\n"
                "is served by worker i % N. Client: N queue pairs, all polled by its one lcore\n"
                "(give the server's N: net_memif pairs the two sides' queues). 1..16" +
                    d + std::to_string(o.workers) + ")");
  cli::add_uint(app, g, "--qps", "N", o.qps, 1, 64,
                "client: N QPs, each with one round trip in flight, --warmup + --count round\n"
                "trips each" +
                    d + std::to_string(o.qps) +
                    "; --peer droce, --thread worker). With --peer\n"
                    "srq_pingpong: its -q, 1..64 (default 16, as its own); the server takes\n"
                    "the client's count");
  cli::add_uint(app, g, "--rx-depth", "N", o.rx_depth, 1, 65536,
                "--peer srq_pingpong: receives the shared receive queue holds, at least\n"
                "--qps (its -r; default " +
                    std::to_string(o.rx_depth) + "); --rx-depth x --size at most 64 MiB");

  cli::ImpairmentFields imp;
  imp.group = cli::kImpairmentDirected;
  imp.loss = &o.loss;
  imp.loss_note = "; server/client only";
  imp.direction = &o.impair_direction;
  imp.seed = &o.seed;
  imp.seed_help = "seed of the lab loss; when given, of the first PSNs too (else drawn from\nthe OS's entropy)";
  cli::add_impairment(app, imp);

  cli::OutputFields out;
  out.json = &o.json;
  out.json_help =
      "results as JSON (rtt_ns p50/p90/p99/p999/max; the server's: echoed, and a\n"
      "\"workers\" array with each worker's share)";
  out.pcap = &o.pcap;
  out.pcap_snaplen = &o.pcap_snaplen;
  out.pcap_max_mb = &o.pcap_max_mb;
  out.pcap_files = &o.pcap_files;
  cli::add_output(app, out);
}

}  // namespace

int parse_options(const std::vector<std::string>& args, Options& o, const std::vector<std::string>& eal) {
  const auto app = apps::cli::make_app("droce-echo", kUsage);
  o.pcap_snaplen = apps::cli::kDefaultPcapSnaplen;
  declare(*app, o);
  if (int rc = apps::cli::parse(*app, args, eal); rc != 0) return rc;
  const bool warmup_given = apps::cli::given(*app, "--warmup"), mtu_given = apps::cli::given(*app, "--mtu");
  const bool timeout_given = apps::cli::given(*app, "--qp-timeout"), qps_given = apps::cli::given(*app, "--qps");
  const bool rx_depth_given = apps::cli::given(*app, "--rx-depth");
  if (apps::cli::given(*app, "--seed")) o.psn_seed = o.seed;
  auto fail = [&app](const std::string& message) { return apps::cli::fail(*app, message); };
  if (o.mode == "server" && o.thread == "app")
    return fail("--thread app is the client's; the server always echoes on its worker");
  if (o.mode == "loopback" &&
      (o.pingpong_tool() || o.loss > 0 || apps::cli::given(*app, "--impair-direction") || !o.local_ip.empty() ||
       !o.local_mac.empty() || !o.peer_mac.empty() || o.dscp != 0 || o.vlan_id != 0 || !o.pcap.empty()))
    return std::fprintf(stderr,
                        "droce-echo: --peer rc_pingpong or srq_pingpong, --loss, --impair-direction, --pcap and the "
                        "addressing options "
                        "(--dscp and --vlan too) need --mode server or client\n"),
           -1;
  if (apps::cli::given(*app, "--pcp") && o.vlan_id == 0)
    return fail("--pcp is the priority of the 802.1Q tag: give --vlan too");
  if (o.pingpong_tool() && o.thread == "app")
    return std::fprintf(stderr, "droce-echo: --peer %s runs the client on the worker (--thread worker)\n",
                        o.peer.c_str()),
           -1;
  if (o.mode == "loopback" && (o.workers > 1 || o.qps > 1))
    return fail("--workers and --qps need --mode server or client (loopback runs one QP)");
  if (o.mode == "server" && o.qps > 1)
    return fail("--qps is the client's: the server serves as many QPs as the client opens");
  if (o.rc_pingpong() && (o.workers > 1 || o.qps > 1))
    return fail("--peer rc_pingpong runs one QP on one worker (--workers and --qps need --peer droce)");
  if (o.thread == "app" && (o.workers > 1 || o.qps > 1))
    return fail("--thread app drives one QP on one worker (--workers and --qps need --thread worker)");
  if (o.srq_pingpong() && o.workers > 1)
    return fail("--peer srq_pingpong runs its QPs and their shared receive queue on one worker (no --workers)");
  if (rx_depth_given && !o.srq_pingpong())
    return fail("--rx-depth is the shared receive queue's (--peer srq_pingpong)");
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
