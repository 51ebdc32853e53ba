// droce-rping option parsing: every bad value or combination is one message naming the option.
#include "apps/droce-rping/options.h"

#include "apps/common/address_text.h"
#include "apps/common/cli/address_options.h"
#include "apps/common/cli/app.h"
#include "apps/common/cli/groups.h"
#include "apps/common/cli/values.h"

namespace droce::rping {

namespace {

constexpr const char* kUsage =
    "usage: droce-rping [EAL options] -- -s|-c [options]\n"
    "Either end of rdma-core's rping over RDMA-CM (a REQ/REP/RTU on QP1, no TCP exchange): the\n"
    "client SENDs the address, R_Key and size of its start buffer; the server RDMA READs it and SENDs\n"
    "its own buffer's as the go-ahead; the client SENDs its sink buffer's; the server RDMA WRITEs the\n"
    "data there and SENDs the go-ahead; the client compares the two buffers. -C times, then the\n"
    "client disconnects (DREQ). The server serves one client, or with --clients N that many at once,\n"
    "each on its own QP (QP i on worker i % --workers); --recovery sr agrees selective repeat with\n"
    "a droce peer, go-back-N with any other. Exit 0 only when every ping was verified. With no\n"
    "EAL options the two ends meet over net_memif on /tmp/droce-rping.sock; against Linux:\n"
    "rping -s, or rping -c -a <--local-ip> -C N -V, on a RoCE NIC or Soft-RoCE.";

void declare(CLI::App& app, Options& o) {
  namespace cli = apps::cli;
  const std::string d = " (default ";
  const char* g = cli::kConnection;
  cli::add_flag(app, g, "-s,--server", o.server, "server side: listen on -p, answer the client's pings");
  cli::add_flag(app, g, "-c,--client", o.client, "client side: connect to -a:-p and ping");
  cli::add_value(app, g, "-a,--address", "IP",
                 "client: the server's IPv4 or IPv6 address (required); server: ours, as\n"
                 "--local-ip",
                 [&o](const std::string& v) {
                   engine::IpAddress ip;
                   if (!engine::parse_ip(v, ip)) return "-a: '" + v + "' is not an IPv4 or IPv6 address";
                   if (const char* why = engine::unusable_ip(ip)) return "-a: " + v + " " + why;
                   o.address = v;
                   return std::string();
                 });
  cli::add_uint(app, g, "-p,--port", "PORT", o.port, 1, 65535,
                "the RDMA-CM port (service ID 0x1060000 + PORT)" + d + std::to_string(o.port) + ")");
  cli::add_ip(app, g, "--local-ip", o.local_ip,
              "our RoCE address, IPv4 or IPv6, of -a's family (default -a on the server;\n"
              "10.0.0.1 client, 10.0.0.2 server; an IPv6 client gives it)");
  cli::add_mac(app, g, "--local-mac", o.local_mac, "source MAC of our frames (default: the port's MAC)");
  cli::add_mac(app, g, "--peer-mac", o.peer_mac,
               "client: the server's MAC (default: found by ARP); the server takes the\n"
               "client's from its REQ");
  cli::add_real(app, g, "--timeout", "S", o.timeout_s, 0.1, 3600,
                "give up after this long without progress" + d + cli::num(o.timeout_s) + ")");

  g = cli::kWorkload;
  cli::add_uint(app, g, "-C,--count", "N", o.count, 1, 1'000'000'000ull,
                "client: pings to send" + d + std::to_string(o.count) +
                    "); server: the pings it\n"
                    "must see before the client disconnects (default: any number, at least one)",
                apps::Suffixes::kDecimal);
  cli::add_uint(app, g, "-S,--size", "BYTES", o.size, kMinSize, kMaxSize,
                "ping data size, " + std::to_string(kMinSize) + ".." + std::to_string(kMaxSize) + d +
                    std::to_string(o.size) + "; the client's decides what moves)");
  cli::add_flag(app, g, "-v,--verbose", o.verbose, "print each ping's data, as rping -v");
  cli::add_flag(app, g, "-V,--validate", o.validate,
                "rping's -V; droce-rping always checks: the client compares its sink with its\n"
                "start buffer, the server checks what it READs against rping's pattern");

  cli::add_choice(
      app, g, "--recovery", {"gbn", "sr"},
      "loss recovery: gbn (go-back-N, IBTA) or sr (selective repeat, with a droce\n"
      "peer only: the client offers it in its REQ, a --recovery sr server accepts it\n"
      "in its REP; with any other peer, Linux rping included, go-back-N)" +
          d + recovery_name(o.recovery) + ")",
      [&o](std::size_t i) { o.recovery = i == 0 ? rc::Recovery::kGoBackN : rc::Recovery::kSelectiveRepeat; });
  cli::add_uint(app, g, "--sr-bdp-packets", "N", o.sr_bdp_pkts, 1, rc::kSrMaxBdpPkts,
                "selective repeat: PSNs in flight per QP, 1.." + std::to_string(rc::kSrMaxBdpPkts) +
                    "; the server's RDMA READ\nof a ping spans at most N x the path MTU" + d +
                    std::to_string(o.sr_bdp_pkts) + ")");
  cli::add_uint(app, cli::kConnection, "--clients", "N", o.clients, 1, kMaxClients,
                "server: serve N clients at once, each on its own QP, and end when all N\n"
                "have pinged and disconnected; a REQ beyond N is rejected. 1.." +
                    std::to_string(kMaxClients) + d + std::to_string(o.clients) + ")");
  cli::add_uint(app, cli::kConnection, "--connections", "N", o.connections, 1, kMaxClients,
                "client: N connections one after another, each its own QP, its -C pings and\n"
                "its DREQ. 1.." +
                    std::to_string(kMaxClients) + d + std::to_string(o.connections) + ")");
  cli::add_uint(app, cli::kConnection, "--workers", "N", o.workers, 1, kMaxWorkers,
                "poll-mode workers; connection i's QP on worker i % N. Server: each on its\n"
                "own EAL lcore (-l must give N; the main lcore is worker 0, whose CM accepts\n"
                "every client) with its own RX/TX queue pair. Client: N queue pairs, all\n"
                "polled by its one lcore (give the server's N: net_memif pairs the two\n"
                "sides' queues). 1.." +
                    std::to_string(kMaxWorkers) + d + std::to_string(o.workers) + ")");

  cli::ImpairmentFields imp;
  imp.group = cli::kImpairmentDirected;
  imp.loss = &o.loss;
  imp.seed = &o.seed;
  imp.seed_help = "seed of the lab loss";
  imp.direction = &o.impair_direction;
  cli::add_impairment(app, imp);

  cli::OutputFields out;
  out.json = &o.json;
  out.json_help =
      "the report as JSON: pings verified, the peer, the recovery, the QP1 (CM)\n"
      "counters, and per connection its peer, recovery and QP counters";
  cli::add_output(app, out);
}

}  // namespace

const char* recovery_name(rc::Recovery r) { return r == rc::Recovery::kSelectiveRepeat ? "sr" : "gbn"; }
const char* recovery_text(rc::Recovery r) {
  return r == rc::Recovery::kSelectiveRepeat ? "selective repeat" : "go-back-N";
}

int parse_options(const std::vector<std::string>& args, Options& o, const std::vector<std::string>& eal) {
  const auto app = apps::cli::make_app("droce-rping", kUsage);
  declare(*app, o);
  if (int rc = apps::cli::parse(*app, args, eal); rc != 0) return rc;
  auto fail = [&app](const std::string& message) { return apps::cli::fail(*app, message); };
  if (o.server == o.client) return fail("give exactly one of -s (server) and -c (client)");
  if (o.client && o.address.empty()) return fail("-c needs -a, the server's address");
  if (o.server && !o.peer_mac.empty())
    return fail("--peer-mac is the client's: the server takes the client's MAC from its REQ");
  if (o.server && !o.address.empty() && !o.local_ip.empty() && o.address != o.local_ip)
    return fail("-a " + o.address + " and --local-ip " + o.local_ip + " differ: on the server both name our address");
  if (o.client && apps::cli::given(*app, "--clients"))
    return fail("--clients is the server's: a client makes one connection (or --connections N, one after another)");
  if (o.server && apps::cli::given(*app, "--connections"))
    return fail("--connections is the client's: the server serves --clients N");
  if (o.server && o.local_ip.empty()) o.local_ip = o.address;
  // One endpoint's frames all carry one IP version: the server's address is of ours.
  engine::IpAddress server_ip, local;
  const bool have_server = !o.address.empty() && engine::parse_ip(o.address, server_ip);
  const bool have_local = !o.local_ip.empty() && engine::parse_ip(o.local_ip, local);
  if (o.client && have_server && have_local && server_ip.ipv6 != local.ipv6)
    return fail("-a " + o.address + " is " + engine::family_name(server_ip) + " and --local-ip " + o.local_ip + " " +
                engine::family_name(local) + ": give both of one family");
  if (o.client && have_server && server_ip.ipv6 && !have_local)
    return fail("-a " + o.address + " is IPv6: give --local-ip, our IPv6 address, too");
  o.count_given = apps::cli::given(*app, "--count");
  if (o.server && !o.count_given) o.count = 0;
  return 0;
}

}  // namespace droce::rping
