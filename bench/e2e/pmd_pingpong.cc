// pmd_pingpong: the bare-PMD round trip — frames bounced between two ports with nothing but
// rx_burst/tx_burst in between. It is the floor droce-echo's RTT is compared with: the same PMD,
// the same frame sizes (a message of --size bytes is ceil(size / --frame-payload) frames, as
// droce's PMTU 4096 splits it), no transport.
//
//   ring    one process: two net_ring ports back to back (engine RingLink), client and reflector
//           in one loop on one lcore.
//   server  reflector on a net_memif server port (or the first port of the EAL options).
//   client  sender on a net_memif client port; reports RTT percentiles.
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "apps/common/cli/app.h"
#include "apps/common/cli/values.h"
#include "apps/common/latency_histogram.h"
#include "engine/core/eal.h"
#include "engine/core/mempool.h"
#include "engine/core/port.h"
#include "engine/core/stop_signal.h"
#include "engine/lab/ring_link.h"

using namespace droce::engine;

namespace {

constexpr std::uint32_t kEthHeader = 14;
constexpr std::uint16_t kEtherType = 0x88b5;  // IEEE 802 local experimental: no stack claims it
constexpr std::uint32_t kMaxFrames = 256;     // per message

struct Options {
  std::string mode = "ring";  // ring | server | client
  std::uint32_t size = 64;
  std::uint32_t frame_payload = 4096;
  std::uint64_t count = 100000;
  std::uint64_t warmup = 1000;
  double timeout_s = 10;
  std::string json;
};

constexpr const char* kUsage =
    "usage: pmd_pingpong [EAL options] -- [options]\n"
    "Bare-PMD round trips: a message of --size bytes goes out as frames, the reflector sends each\n"
    "frame straight back, the client times first frame out to last frame back. With no EAL options,\n"
    "server/client use net_memif on /tmp/droce-pmd-pingpong.sock; ring needs none.";

int parse(const std::vector<std::string>& args, Options& o) {
  namespace cli = droce::apps::cli;
  using droce::apps::Suffixes;
  const auto app = cli::make_app("pmd_pingpong", kUsage);
  const std::string d = " (default ";
  const char* g = "round trips";
  cli::add_choice(*app, g, "--mode", {"ring", "server", "client"}, o.mode,
                  "both ends here over net_ring, or one end each" + d + o.mode + ")");
  cli::add_uint(*app, g, "--size", "BYTES", o.size, 1, 1u << 20,
                "message size, 1..1048576 (1M)" + d + std::to_string(o.size) + ")", Suffixes::kBinary);
  cli::add_uint(*app, g, "--frame-payload", "BYTES", o.frame_payload, 46, 9000,
                "payload bytes per frame, 46..9000" + d + std::to_string(o.frame_payload) + ", droce's PMTU)");
  cli::add_uint(*app, g, "--count", "N", o.count, 1, 10'000'000'000ull,
                "measured round trips" + d + std::to_string(o.count) + ")", Suffixes::kDecimal);
  cli::add_uint(*app, g, "--warmup", "N", o.warmup, 0, 10'000'000'000ull,
                "round trips before measuring" + d + std::to_string(o.warmup) + ")", Suffixes::kDecimal);
  cli::add_real(*app, g, "--timeout", "S", o.timeout_s, 0.1, 3600,
                "give up after this long without a reply" + d + cli::num(o.timeout_s) + ")");
  cli::add_output(*app, g, "--json", o.json, "results as JSON (rtt_ns p50/p90/p99/p999/max)");
  if (int rc = cli::parse(*app, args); rc != 0) return rc;
  if ((o.size + o.frame_payload - 1) / o.frame_payload > kMaxFrames)
    return cli::fail(*app, "--size / --frame-payload needs more than " + std::to_string(kMaxFrames) + " frames");
  return 0;
}

// Sends every received frame back out of the same port: the reflector's whole job.
std::uint64_t reflect(Port& p) {
  rte_mbuf* pkts[32];
  const std::uint16_t n = p.rx_burst(0, pkts, 32);
  std::uint16_t sent = 0;
  // Bounded: a ring or memif queue that stays full drops the rest instead of spinning.
  for (int tries = 0; sent < n && tries < 1000; ++tries) sent += p.tx_burst(0, pkts + sent, n - sent);
  if (sent < n) rte_pktmbuf_free_bulk(pkts + sent, n - sent);
  return n;
}

// The client side of one round trip: build the message's frames, send them, collect them back.
class Pinger {
 public:
  Pinger(Port& port, rte_mempool* pool, const Options& o)
      : port_(port), pool_(pool), frames_((o.size + o.frame_payload - 1) / o.frame_payload), o_(o) {}
  [[nodiscard]] std::uint32_t frames() const { return frames_; }
  [[nodiscard]] std::uint64_t bad() const { return bad_; }

  // False when the pool is empty (the peer holds our frames) or the port takes nothing.
  bool send(std::uint64_t seq) {
    rte_mbuf* m[kMaxFrames];
    if (rte_pktmbuf_alloc_bulk(pool_, m, frames_) != 0) return false;
    std::uint32_t left = o_.size;
    for (std::uint32_t i = 0; i < frames_; ++i) {
      const std::uint32_t pay = left < o_.frame_payload ? left : o_.frame_payload;
      left -= pay;
      // Short frames are padded to Ethernet's 60-byte minimum, as a NIC would.
      const std::uint32_t len = std::max<std::uint32_t>(kEthHeader + std::max<std::uint32_t>(pay, 16), 60);
      auto* d =
          static_cast<std::uint8_t*>(static_cast<void*>(rte_pktmbuf_append(m[i], static_cast<std::uint16_t>(len))));
      if (d == nullptr) {
        rte_pktmbuf_free_bulk(m, frames_);
        return false;
      }
      std::memset(d, 0xff, 6);  // broadcast: the memif peer needs no MAC
      std::memset(d + 6, 0x02, 6);
      d[12] = kEtherType >> 8;
      d[13] = kEtherType & 0xff;
      std::memcpy(d + kEthHeader, &seq, 8);
      std::memcpy(d + kEthHeader + 8, &i, 4);
    }
    std::uint32_t sent = 0;
    for (int tries = 0; sent < frames_ && tries < 100000; ++tries)
      sent += port_.tx_burst(0, m + sent, static_cast<std::uint16_t>(frames_ - sent));
    if (sent < frames_) rte_pktmbuf_free_bulk(m + sent, frames_ - sent);
    expect_seq_ = seq;
    got_ = 0;
    return sent == frames_;
  }
  // Drains what arrived; true once all of this message's frames are back.
  bool collect() {
    rte_mbuf* pkts[32];
    const std::uint16_t n = port_.rx_burst(0, pkts, 32);
    for (std::uint16_t i = 0; i < n; ++i) {
      std::uint64_t seq = 0;
      const auto* d = rte_pktmbuf_mtod(pkts[i], const std::uint8_t*);
      if (rte_pktmbuf_data_len(pkts[i]) >= kEthHeader + 8) std::memcpy(&seq, d + kEthHeader, 8);
      if (seq == expect_seq_)
        ++got_;
      else
        ++bad_;
    }
    if (n > 0) rte_pktmbuf_free_bulk(pkts, n);
    return got_ >= frames_;
  }

 private:
  Port& port_;
  rte_mempool* pool_;
  std::uint32_t frames_;
  const Options& o_;
  std::uint64_t expect_seq_ = 0, bad_ = 0;
  std::uint32_t got_ = 0;
};

int report(const Options& o, const LatencyHistogram& h, std::uint32_t frames, std::uint64_t bad, bool stalled) {
  std::printf("pmd_pingpong %s: %llu round trips of %u bytes (%u frames) after %llu warm-up\n", o.mode.c_str(),
              static_cast<unsigned long long>(h.count()), o.size, frames, static_cast<unsigned long long>(o.warmup));
  std::printf("  RTT ns: min %llu  p50 %llu  p90 %llu  p99 %llu  p99.9 %llu  max %llu\n",
              static_cast<unsigned long long>(h.min()), static_cast<unsigned long long>(h.percentile(0.5)),
              static_cast<unsigned long long>(h.percentile(0.9)), static_cast<unsigned long long>(h.percentile(0.99)),
              static_cast<unsigned long long>(h.percentile(0.999)), static_cast<unsigned long long>(h.max()));
  std::printf("  stray frames %llu%s\n", static_cast<unsigned long long>(bad),
              stalled ? ", STALLED (no reply within --timeout)" : "");
  if (!o.json.empty()) {
    nlohmann::json j;
    j["mode"] = o.mode;
    j["size"] = o.size;
    j["frames_per_message"] = frames;
    j["round_trips"] = h.count();
    j["rtt_ns"] = {{"min", h.min()},
                   {"p50", h.percentile(0.5)},
                   {"p90", h.percentile(0.9)},
                   {"p99", h.percentile(0.99)},
                   {"p999", h.percentile(0.999)},
                   {"max", h.max()}};
    j["stray_frames"] = bad;
    j["stalled"] = stalled;
    std::ofstream out(o.json);
    out << j.dump(2) << "\n";
    if (!out) return std::fprintf(stderr, "pmd_pingpong: cannot write %s\n", o.json.c_str()), 1;
  }
  return !stalled && h.count() == o.count ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  SplitArgs split = split_args(argc, argv);
  Options o;
  if (int r = parse(split.app, o); r != 0) return r > 0 ? 0 : 2;
  const bool defaults = split.eal.empty();
  if (defaults) split.eal = {"--no-pci"};
  install_stop_signals();
  Status err;
  auto eal = Eal::init("pmd_pingpong", split.eal, err);
  if (!eal) return std::fprintf(stderr, "pmd_pingpong: %s\n", err.message().c_str()), 1;
  MbufPool pool;
  // One frame per mbuf up to --frame-payload; 2 x kMaxFrames in flight at most.
  const auto room =
      static_cast<std::uint16_t>(RTE_PKTMBUF_HEADROOM + kEthHeader + std::max<std::uint32_t>(o.frame_payload, 2048));
  if (Status s = MbufPool::create(PoolConfig{"pp_pool", 4095, 128, room, -1}, pool); !s.ok())
    return std::fprintf(stderr, "pmd_pingpong: %s\n", s.message().c_str()), 1;

  std::unique_ptr<RingLink> link;
  std::unique_ptr<Port> port;
  Port* client = nullptr;
  Port* reflector = nullptr;
  const auto timeout_ms = static_cast<std::uint32_t>(o.timeout_s * 1000);
  if (o.mode == "ring") {
    link = RingLink::create("pp", pool.get(), err);
    if (!link) return std::fprintf(stderr, "pmd_pingpong: %s\n", err.message().c_str()), 1;
    client = &link->end(0);
    reflector = &link->end(1);
  } else {
    PortConfig pc;
    pc.rx_pool = pool.get();
    pc.promiscuous = true;
    if (defaults) {
      pc.devargs = "net_memif0,role=" + o.mode + ",socket=/tmp/droce-pmd-pingpong.sock";
    } else {
      std::uint16_t first = 0;
      RTE_ETH_FOREACH_DEV(first) break;
      char name[RTE_ETH_NAME_MAX_LEN];
      if (rte_eth_dev_count_avail() == 0 || rte_eth_dev_get_name_by_port(first, name) != 0)
        return std::fprintf(stderr, "pmd_pingpong: no port: give one in the EAL options\n"), 1;
      pc.devargs = name;
    }
    port = Port::open(pc, err);
    if (!port) return std::fprintf(stderr, "pmd_pingpong: %s\n", err.message().c_str()), 1;
    if (Status s = port->wait_link_up(timeout_ms); !s.ok())
      return std::fprintf(stderr, "pmd_pingpong: %s (is the peer running?)\n", s.message().c_str()), 1;
    (o.mode == "server" ? reflector : client) = port.get();
  }
  const auto stall_tsc = static_cast<std::uint64_t>(o.timeout_s * static_cast<double>(rte_get_tsc_hz()));

  if (client == nullptr) {
    // The reflector alone: until stopped, or idle for --timeout (also before the first frame).
    std::uint64_t last = rte_rdtsc(), reflected = 0;
    while (!stop_requested()) {
      const std::uint64_t n = reflect(*reflector);
      const std::uint64_t now = rte_rdtsc();
      if (n > 0) {
        reflected += n;
        last = now;
      } else if (now - last > stall_tsc) {
        break;
      }
    }
    std::printf("pmd_pingpong server: reflected %llu frames\n", static_cast<unsigned long long>(reflected));
    return reflected > 0 ? 0 : 1;
  }

  Pinger pinger(*client, pool.get(), o);
  LatencyHistogram hist;
  const double ns_per_tsc = 1e9 / static_cast<double>(rte_get_tsc_hz());
  bool stalled = false;
  for (std::uint64_t seq = 0; seq < o.warmup + o.count && !stop_requested() && !stalled; ++seq) {
    const std::uint64_t t0 = rte_rdtsc();
    bool sent = pinger.send(seq);
    // A full pool or queue is retried until the deadline: the peer may still be returning frames.
    while (!sent && !(stalled = rte_rdtsc() - t0 > stall_tsc)) {
      if (reflector != nullptr) reflect(*reflector);
      (void)pinger.collect();
      sent = pinger.send(seq);
    }
    if (!sent) break;
    for (;;) {
      if (reflector != nullptr) reflect(*reflector);
      if (pinger.collect()) break;
      if (rte_rdtsc() - t0 > stall_tsc || stop_requested()) {
        stalled = rte_rdtsc() - t0 > stall_tsc;
        break;
      }
    }
    if (stalled || stop_requested()) break;
    if (seq >= o.warmup) hist.record(static_cast<std::uint64_t>(static_cast<double>(rte_rdtsc() - t0) * ns_per_tsc));
  }
  return report(o, hist, pinger.frames(), pinger.bad(), stalled);
}
