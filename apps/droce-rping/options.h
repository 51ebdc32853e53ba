// droce-rping options: rdma-core rping's flags (-s/-c, -a, -p, -C, -S, -v, -V) plus droce's
// addressing on a real link, in one struct with the defaults --help prints.
#pragma once

#include <droce/protocols/rc/qp_attr.h>

#include <cstdint>
#include <string>
#include <vector>

namespace droce::rping {

// rping's limits on -S: room for "rdma-ping-<INT_MAX>: " and its terminating NUL, and a buffer
// below its 64 KiB (RPING_BUFSIZE - 1).
inline constexpr std::uint32_t kMinSize = 26;
inline constexpr std::uint32_t kMaxSize = 65535;
inline constexpr std::uint16_t kDefaultPort = 7174;
inline constexpr std::uint32_t kMaxClients = 64;  // the engine's CM connection slots
inline constexpr std::uint32_t kMaxWorkers = 16;

struct Options {
  bool server = false;                // -s
  bool client = false;                // -c
  std::string address;                // -a: the server's address (client); our address (server)
  std::uint16_t port = kDefaultPort;  // -p: the RDMA-CM port (RDMA_PS_TCP)
  // -C: pings. Client: how many it sends (rping's 0, for ever, is not offered: every run ends).
  // Server: 0 serves until the client disconnects; N requires exactly N.
  std::uint64_t count = 10;
  bool count_given = false;
  std::uint32_t size = 64;  // -S: ping data size (the client's; the server advertises its own)
  bool verbose = false;     // -v: print each ping's data
  bool validate = false;    // -V: rping's flag; droce-rping checks every ping in any case
  std::string local_ip, local_mac, peer_mac;
  double timeout_s = 30;  // give up after this long without progress
  std::string json;
  // Lab loss (apps/common/lab_impairments.h): frames dropped where impair_direction says.
  double loss = 0;
  std::uint64_t seed = 1;
  std::string impair_direction = "rx";
  // Loss recovery (docs/selective-repeat.md): selective repeat only with a droce peer that asks or
  // accepts it in the CM private data (apps/common/recovery_offer.h); go-back-N with any other.
  rc::Recovery recovery = rc::Recovery::kGoBackN;
  std::uint32_t sr_bdp_pkts = rc::kSrMaxBdpPkts;  // SR: PSNs in flight per QP, 1..128
  std::uint32_t clients = 1;                      // server: connections to serve, each on its own QP, 1..kMaxClients
  std::uint32_t connections = 1;                  // client: connections made one after another, 1..kMaxClients
  // Poll-mode workers (engine/workers/worker_group.h): connection i's QP on worker i % workers,
  // as droce-perf and droce-gen place QP i. Server: one EAL lcore each (the main one is worker 0,
  // the port owner, whose CM accepts every client). Client: as many queue pairs, all polled by
  // its one lcore (net_memif pairs the two sides' queues).
  std::uint32_t workers = 1;

  [[nodiscard]] const char* role() const { return server ? "server" : "client"; }
};

[[nodiscard]] const char* recovery_name(rc::Recovery r);  // "gbn" or "sr"
[[nodiscard]] const char* recovery_text(rc::Recovery r);  // "go-back-N" or "selective repeat"

// 0: run; 1: --help or --version was printed; -1: an error was printed.
// `eal`: the arguments before `--`, where the app's own long options are refused by name.
[[nodiscard]] int parse_options(const std::vector<std::string>& args, Options& o,
                                const std::vector<std::string>& eal = {});

}  // namespace droce::rping
