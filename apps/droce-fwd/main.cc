// droce-fwd: the engine's raw rx -> tx forwarding loop on any ports (datapath baseline vs testpmd io).
#include <droce/engine/core/counters.h>
#include <droce/engine/core/eal.h>
#include <droce/engine/core/forwarder.h>
#include <droce/engine/core/mempool.h>
#include <droce/engine/core/port.h>
#include <droce/engine/core/stop_signal.h>
#include <droce/engine/core/worker.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "apps/common/output_file.h"
#include "apps/common/telemetry_setup.h"
#include "apps/droce-fwd/options.h"

using namespace droce::engine;

namespace {

// Bytes come from the PMD's counters: the forwarder itself never touches a frame.
std::uint64_t ethdev_rx_bytes(std::uint16_t port) {
  rte_eth_stats st{};
  return rte_eth_stats_get(port, &st) == 0 ? st.ibytes : 0;
}

// Rare work behind one TSC compare: stats lines and the deadline.
class FwdLoop {
 public:
  FwdLoop(Forwarder& f, std::uint16_t rx_port, const QueueCounters& rxc, double period_s, double duration_s)
      : fwd_(f), rx_port_(rx_port), rxc_(rxc), hz_(rte_get_tsc_hz()) {
    start_ = rte_rdtsc();
    period_ = period_s > 0 ? static_cast<std::uint64_t>(period_s * hz_) : 0;
    next_ = period_ ? start_ + period_ : UINT64_MAX;
    deadline_ = duration_s > 0 ? start_ + static_cast<std::uint64_t>(duration_s * hz_) : UINT64_MAX;
  }
  static constexpr bool kReadsClockItself = true;
  void poll(std::uint64_t) {
    fwd_.poll(0);
    // The clock is only for the stats line and the deadline: sample it every 64 iterations.
    if ((++iterations_ & 63) == 0) [[unlikely]] {
      const std::uint64_t now = rte_rdtsc();
      if (now >= next_ || now >= deadline_) tick(now);
    }
  }
  void finish() { end_ = rte_rdtsc(); }
  [[nodiscard]] double seconds() const { return static_cast<double>(end_ - start_) / hz_; }

 private:
  void tick(std::uint64_t now) {
    if (now >= deadline_) request_stop();
    if (period_ != 0 && now >= next_) {
      const double dt = static_cast<double>(now - (last_tsc_ != 0 ? last_tsc_ : start_)) / hz_;
      const std::uint64_t pk = rxc_.rx_packets - last_pkts_;
      const std::uint64_t bytes = ethdev_rx_bytes(rx_port_);
      // A PMD may reset its byte counter when a peer goes away: never print a wrapped delta.
      const std::uint64_t db = bytes >= last_bytes_ ? bytes - last_bytes_ : 0;
      std::printf("droce-fwd: %.2f Mpps  %.2f Gb/s rx\n", pk / dt / 1e6, db * 8.0 / dt / 1e9);
      std::fflush(stdout);
      last_tsc_ = now;
      last_pkts_ = rxc_.rx_packets;
      last_bytes_ = bytes;
      next_ = now + period_;
    }
  }
  Forwarder& fwd_;
  std::uint16_t rx_port_;
  const QueueCounters& rxc_;
  double hz_;
  std::uint64_t start_ = 0, end_ = 0, period_ = 0, next_ = 0, deadline_ = 0;
  std::uint64_t last_tsc_ = 0, last_pkts_ = 0, last_bytes_ = 0;
  std::uint64_t iterations_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  SplitArgs split = split_args(argc, argv);
  droce::fwd::Options opt;
  if (int rc = droce::fwd::parse_options(split.app, opt, split.eal); rc != 0) return rc > 0 ? 0 : 2;
  if (split.eal.empty()) {
    split.eal = {"--vdev", "net_ring0", "--no-pci"};
    if (opt.tx_first == 0) opt.tx_first = 256;
    std::printf("droce-fwd: no EAL options: forwarding on a net_ring loopback port with --tx-first %u\n", opt.tx_first);
  }
  install_stop_signals();
  Status err;
  auto eal = Eal::init("droce-fwd", split.eal, err);
  if (!eal) return std::fprintf(stderr, "droce-fwd: %s\n", err.message().c_str()), 1;
  droce::apps::start_telemetry("droce-fwd");

  const int nports = rte_eth_dev_count_avail();
  if (nports == 0) return std::fprintf(stderr, "droce-fwd: no ports: give one with --vdev or a PCI address\n"), 1;
  if (opt.tx_port < 0) opt.tx_port = opt.rx_port;
  if (opt.rx_port >= nports || opt.tx_port >= nports)
    return std::fprintf(stderr, "droce-fwd: port %d does not exist (%d port(s))\n",
                        opt.rx_port >= nports ? opt.rx_port : opt.tx_port, nports),
           1;

  MbufPool pool;
  if (Status s = MbufPool::create(PoolConfig{"fwd_pool", opt.mbufs, 256, 2176, -1}, pool); !s.ok())
    return std::fprintf(stderr, "droce-fwd: %s\n", s.message().c_str()), 1;
  std::vector<std::unique_ptr<Port>> ports;
  for (int p : {opt.rx_port, opt.tx_port}) {
    if (!ports.empty() && p == opt.rx_port) break;
    char name[RTE_ETH_NAME_MAX_LEN];
    if (rte_eth_dev_get_name_by_port(static_cast<std::uint16_t>(p), name) != 0)
      return std::fprintf(stderr, "droce-fwd: port %d has no name\n", p), 1;
    PortConfig cfg;
    cfg.devargs = name;
    cfg.rx_pool = pool.get();
    cfg.promiscuous = true;
    cfg.want_fast_free = true;  // every mbuf is direct and from one pool
    auto port = Port::open(cfg, err);
    if (!port) return std::fprintf(stderr, "droce-fwd: %s\n", err.message().c_str()), 1;
    ports.push_back(std::move(port));
  }
  Port& rx = *ports.front();
  Port& tx = *ports.back();
  for (auto& p : ports)
    if (Status s = p->wait_link_up(10000); !s.ok())
      return std::fprintf(stderr, "droce-fwd: %s\n", s.message().c_str()), 1;

  auto& rxc = CounterRegistry::instance().add_port(rx.id(), rx.name(), rx.driver(), 1);
  auto& txc = &rx == &tx ? rxc : CounterRegistry::instance().add_port(tx.id(), tx.name(), tx.driver(), 1);
  Forwarder fwd(rx.id(), 0, tx.id(), 0, rxc.queues[0], txc.queues[0]);
  for (unsigned i = 0; i < opt.tx_first; ++i) {
    rte_mbuf* m = rte_pktmbuf_alloc(pool.get());
    if (m == nullptr)
      return std::fprintf(stderr, "droce-fwd: mbuf pool too small for --tx-first %u\n", opt.tx_first), 1;
    auto* p =
        static_cast<std::uint8_t*>(static_cast<void*>(rte_pktmbuf_append(m, static_cast<std::uint16_t>(opt.pkt_size))));
    std::memset(p, 0, opt.pkt_size);
    std::memset(p, 0xFF, 6);
    p[6] = 0x02;
    p[12] = 0x88;
    p[13] = 0xB5;
    if (fwd.inject(&m, 1) != 1) {
      rte_pktmbuf_free(m);
      break;
    }
  }
  FwdLoop loop(fwd, rx.id(), rxc.queues[0], opt.stats_period_s, opt.duration_s);
  run_poll_loop(loop);
  fwd.finish();
  const double secs = loop.seconds();
  const auto& q = rxc.queues[0];
  const std::uint64_t rx_bytes = ethdev_rx_bytes(rx.id());
  std::printf("droce-fwd: %llu frames in %.3f s = %.3f Mpps, %.3f Gb/s (tx deferred %llu, backlog drops %llu)\n",
              static_cast<unsigned long long>(q.rx_packets), secs, q.rx_packets / secs / 1e6,
              rx_bytes * 8.0 / secs / 1e9, static_cast<unsigned long long>(txc.queues[0].tx_deferred),
              static_cast<unsigned long long>(txc.queues[0].tx_backlog_drops));
  if (!opt.json.empty()) {
    std::ostringstream f;
    f << "{\"seconds\": " << secs << ", \"rx_packets\": " << q.rx_packets << ", \"mpps\": " << q.rx_packets / secs / 1e6
      << ", \"ports\": " << CounterRegistry::instance().json() << "}\n";
    if (Status s = droce::apps::write_text_file(opt.json, f.str()); !s.ok())
      return std::fprintf(stderr, "droce-fwd: %s\n", s.message().c_str()), 1;
  }
  return 0;
}
