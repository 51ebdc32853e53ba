// pfc_storm: a stuck NIC's PFC storm over the lab leaf-spine, and what the switches' PFC watchdog
// makes of it (issue 39's benchmark; docs/fabric-lab.md "A PFC storm"). Every number comes from
// droce's own LabSwitch/LeafSpine on the fabric's own clock (one round per --round-ns), so a run
// is the same on a busy host as on an idle one.
//
// The fabric: 4 leaves of 2 hosts, 2 spines, every link --link-gbps, PFC on every switch port,
// one lossless class (DSCP 26, priority 3). Hosts are frame sources that honour their leaf's PFC
// as a NIC does (802.1Qbb: a pause holds the priority for its quanta at the link rate, a zero
// quanta resumes it). Host h = leaf * 2 + k. Three storm flows, h2, h4, h6 -> h0, and four
// innocent ones around the leaves, h1 -> h3 -> h5 -> h7 -> h1: none of them goes to h0, but h1
// shares h0's leaf and h7 -> h1 the spines' downlinks towards it. With --stuck-endpoint 0, h0's
// NIC pauses forever (Microsoft's "RDMA over Commodity Ethernet at Scale", SIGCOMM'16, §4.3).
#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_udp.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "apps/common/cli/app.h"
#include "apps/common/cli/values.h"
#include "apps/common/cli_number.h"
#include "engine/core/eal.h"
#include "engine/core/mempool.h"
#include "engine/lab/leaf_spine.h"
#include "protocols/wire/pfc.h"

using namespace droce;
using namespace droce::engine;

namespace {

constexpr const char* kTool = "pfc_storm";
constexpr std::uint32_t kLeaves = 4, kSpines = 2, kPerLeaf = 2, kHosts = kLeaves * kPerLeaf;
constexpr std::uint8_t kDscp = 26;  // priority 3 by the switches' default DSCP / 8 map
constexpr std::uint32_t kPrio = 3;
constexpr std::uint16_t kUdpRoce = 4791;

struct Options {
  double duration_ms = 200;
  double round_ns = 1000;
  double link_gbps = 10;
  double flow_gbps = 3;
  std::uint32_t payload = 1000;
  int stuck = -1;  // endpoint, or -1: none
  double watchdog_ms = 0;
  std::uint64_t xoff = 40'000, xon = 20'000;
  double series_ms = 1;
  std::string json;
};

constexpr const char* kUsage =
    "usage: pfc_storm [options]\n"
    "A stuck NIC's PFC storm on the lab leaf-spine (4 leaves of 2 hosts, 2 spines), on the fabric's\n"
    "own clock: three flows into host 0, four innocent flows around the leaves, each host honouring\n"
    "its leaf's pauses. Prints what was paused and what the innocent flows delivered.";

int parse(int argc, char** argv, Options& o) {
  namespace cli = droce::apps::cli;
  const auto app = cli::make_app(kTool, kUsage);
  const std::string d = " (default ";
  const char* g = "storm";
  cli::add_real(*app, g, "--duration-ms", "MS", o.duration_ms, 1, 10'000,
                "fabric time to run" + d + cli::num(o.duration_ms) + ")");
  cli::add_real(*app, g, "--round-ns", "NS", o.round_ns, 100, 100'000,
                "fabric time per polling round" + d + cli::num(o.round_ns) + ")");
  cli::add_real(*app, g, "--link-gbps", "G", o.link_gbps, 0.01, 100,
                "every link's rate" + d + cli::num(o.link_gbps) + ")");
  cli::add_real(*app, g, "--flow-gbps", "G", o.flow_gbps, 0.001, 100,
                "each flow's offered rate" + d + cli::num(o.flow_gbps) + ")");
  cli::add_value(*app, g, "--stuck-endpoint", "H|none", "the host whose NIC pauses forever, 0..7 (default none)",
                 [&o](const std::string& v) {
                   if (v == "none") return o.stuck = -1, std::string();
                   std::uint32_t h = 0;
                   const Status s = droce::apps::parse_uint("--stuck-endpoint", v, 0, kHosts - 1, h);
                   if (s.ok()) o.stuck = static_cast<int>(h);
                   return s.message();
                 });
  cli::add_real(*app, g, "--pfc-watchdog-ms", "MS", o.watchdog_ms, 0, 10'000,
                "every switch's PFC watchdog, 0: off (default 0)");
  cli::add_uint(*app, g, "--pfc-xoff-bytes", "B", o.xoff, 1'000, 10'000'000,
                "per ingress, pause above" + d + std::to_string(o.xoff) + ")");
  cli::add_uint(*app, g, "--pfc-xon-bytes", "B", o.xon, 0, 10'000'000,
                "per ingress, resume below" + d + std::to_string(o.xon) + ")");
  cli::add_real(*app, g, "--series-ms", "MS", o.series_ms, 0.01, 1'000,
                "time series sampling" + d + cli::num(o.series_ms) + ")");
  cli::add_output(*app, g, "--json", o.json, "results as JSON");
  if (int r = cli::parse(*app, std::vector<std::string>(argv + 1, argv + argc)); r != 0) return r;
  if (o.xon >= o.xoff) return cli::fail(*app, "--pfc-xon-bytes must be below --pfc-xoff-bytes");
  if (o.flow_gbps > o.link_gbps) return cli::fail(*app, "--flow-gbps above --link-gbps");
  return 0;
}

std::uint32_t host_ip(std::uint32_t h) { return RTE_IPV4(10, 0, 0, h + 1); }

struct Flow {
  std::uint32_t src = 0, dst = 0;
  bool storm = false;
  std::uint64_t sent = 0, delivered = 0, delivered_second_half = 0;
  std::uint64_t series_delivered = 0;  // since the last sample
};

// A host's NIC: one flow's frames at its offered rate, held while its leaf pauses the class.
struct Host {
  int flow = -1;
  double credit_bytes = 0;
  std::uint64_t paused_until_ns = 0;
  std::uint64_t paused_rounds = 0, pauses_received = 0;
  [[nodiscard]] bool paused(std::uint64_t now_ns) const { return now_ns < paused_until_ns; }
};

rte_mbuf* make_frame(rte_mempool* pool, std::uint32_t src, std::uint32_t dst, std::uint32_t payload,
                     std::uint16_t ip_id) {
  rte_mbuf* m = rte_pktmbuf_alloc(pool);
  if (m == nullptr) return nullptr;
  const auto len =
      static_cast<std::uint16_t>(sizeof(rte_ether_hdr) + sizeof(rte_ipv4_hdr) + sizeof(rte_udp_hdr) + payload);
  auto* eth = reinterpret_cast<rte_ether_hdr*>(rte_pktmbuf_append(m, len));
  if (eth == nullptr) {
    rte_pktmbuf_free(m);
    return nullptr;
  }
  std::memset(eth, 0, len);
  eth->src_addr.addr_bytes[0] = 0x02;
  eth->src_addr.addr_bytes[5] = static_cast<std::uint8_t>(src);
  eth->dst_addr.addr_bytes[0] = 0x02;
  eth->dst_addr.addr_bytes[5] = static_cast<std::uint8_t>(dst);
  eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
  auto* ip = reinterpret_cast<rte_ipv4_hdr*>(eth + 1);
  ip->version_ihl = RTE_IPV4_VHL_DEF;
  ip->type_of_service = static_cast<std::uint8_t>(kDscp << 2 | 2);  // ECT(0), as RoCE data leaves
  ip->total_length = rte_cpu_to_be_16(static_cast<std::uint16_t>(len - sizeof(rte_ether_hdr)));
  ip->packet_id = rte_cpu_to_be_16(ip_id);
  ip->time_to_live = 64;
  ip->next_proto_id = IPPROTO_UDP;
  ip->src_addr = rte_cpu_to_be_32(host_ip(src));
  ip->dst_addr = rte_cpu_to_be_32(host_ip(dst));
  ip->hdr_checksum = rte_ipv4_cksum(ip);
  auto* udp = reinterpret_cast<rte_udp_hdr*>(ip + 1);
  udp->src_port = rte_cpu_to_be_16(static_cast<std::uint16_t>(0xC000 + src));
  udp->dst_port = rte_cpu_to_be_16(kUdpRoce);
  udp->dgram_len = rte_cpu_to_be_16(static_cast<std::uint16_t>(sizeof(rte_udp_hdr) + payload));
  return m;
}

// Every egress port of the fabric, named as its link: "leaf0-ep1", "leaf0-spine1", "spine1-leaf0".
struct EgressPort {
  std::string name;
  bool spine = false;
  std::uint32_t sw = 0, port = 0;
  std::uint64_t paused_rounds = 0;
};

std::vector<EgressPort> egress_ports() {
  std::vector<EgressPort> v;
  for (std::uint32_t l = 0; l < kLeaves; ++l) {
    for (std::uint32_t k = 0; k < kPerLeaf; ++k)
      v.push_back({"leaf" + std::to_string(l) + "-ep" + std::to_string(l * kPerLeaf + k), false, l, k, 0});
    for (std::uint32_t s = 0; s < kSpines; ++s)
      v.push_back({"leaf" + std::to_string(l) + "-spine" + std::to_string(s), false, l, kPerLeaf + s, 0});
  }
  for (std::uint32_t s = 0; s < kSpines; ++s)
    for (std::uint32_t l = 0; l < kLeaves; ++l)
      v.push_back({"spine" + std::to_string(s) + "-leaf" + std::to_string(l), true, s, l, 0});
  return v;
}

struct Series {
  std::vector<double> t_ms, innocent_gbps, storm_gbps;
  std::vector<std::uint32_t> hosts_paused, ports_paused;
};

template <typename T>
std::string json_list(const std::vector<T>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

int run(const Options& o, rte_mempool* pool) {
  LeafSpineConfig c;
  c.leaves = kLeaves;
  c.spines = kSpines;
  c.endpoints_per_leaf = kPerLeaf;
  for (std::uint32_t h = 0; h < kHosts; ++h) c.ipv4.push_back(host_ip(h));
  for (LabSwitchConfig* t : {&c.leaf, &c.spine}) {
    t->pfc = true;
    t->pfc_xoff_bytes = o.xoff;
    t->pfc_xon_bytes = o.xon;
    t->link_gbps_for_pfc = o.link_gbps;
    t->pfc_watchdog_ms = o.watchdog_ms;
  }
  c.to_endpoint.gbps = c.uplink.gbps = c.downlink.gbps = o.link_gbps;
  if (o.stuck >= 0) c.stuck_endpoints = {static_cast<std::uint32_t>(o.stuck)};
  c.ring_slots = 4096;
  c.pool = pool;
  Status err;
  auto f = LeafSpine::create(c, err);
  if (!f) return std::fprintf(stderr, "%s: %s\n", kTool, err.message().c_str()), 1;

  std::vector<Flow> flows = {{2, 0, true},  {4, 0, true},  {6, 0, true}, {1, 3, false},
                             {3, 5, false}, {5, 7, false}, {7, 1, false}};
  std::vector<Host> hosts(kHosts);
  for (std::size_t i = 0; i < flows.size(); ++i) hosts[flows[i].src].flow = static_cast<int>(i);
  std::vector<EgressPort> ports = egress_ports();
  const std::uint32_t frame_bytes = 14 + 20 + 8 + o.payload;
  const double wire_bytes = frame_bytes + 24.0;  // preamble, FCS and gap, as the shaper counts
  const double credit_per_round = o.flow_gbps * o.round_ns / 8;
  const auto rounds = static_cast<std::uint64_t>(o.duration_ms * 1e6 / o.round_ns);
  const auto series_every = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(o.series_ms * 1e6 / o.round_ns));
  const double hz = static_cast<double>(rte_get_tsc_hz());
  const std::uint64_t t0 = rte_get_tsc_cycles();
  Series series;
  std::vector<std::uint8_t> host_paused_in_sample(kHosts, 0), port_paused_in_sample(ports.size(), 0);
  std::uint64_t alloc_failures = 0, ring_full = 0;
  std::uint16_t ip_id = 0;

  for (std::uint64_t r = 0; r < rounds; ++r) {
    const auto now_ns = static_cast<std::uint64_t>(static_cast<double>(r) * o.round_ns);
    const auto now_tsc = t0 + static_cast<std::uint64_t>(static_cast<double>(now_ns) * hz / 1e9);
    // Hosts send what their rate allows, unless paused; credit does not bank past two frames.
    for (std::uint32_t h = 0; h < kHosts; ++h) {
      Host& host = hosts[h];
      if (host.flow < 0) continue;
      host.credit_bytes = std::min(host.credit_bytes + credit_per_round, 2 * wire_bytes);
      if (host.paused(now_ns)) continue;
      Flow& fl = flows[static_cast<std::size_t>(host.flow)];
      while (host.credit_bytes >= wire_bytes) {
        rte_mbuf* m = make_frame(pool, fl.src, fl.dst, o.payload, ip_id++);
        if (m == nullptr) {
          ++alloc_failures;
          break;
        }
        if (f->endpoint_end(h).send(&m, 1) != 1) {
          rte_pktmbuf_free(m);
          ++ring_full;
          break;
        }
        host.credit_bytes -= wire_bytes;
        ++fl.sent;
      }
    }
    f->poll(now_tsc);
    // Hosts receive: PFC from their leaf, data frames of the flows.
    for (std::uint32_t h = 0; h < kHosts; ++h) {
      rte_mbuf* pkts[64];
      const std::uint16_t n = f->endpoint_end(h).receive(pkts, 64);
      for (std::uint16_t k = 0; k < n; ++k) {
        const auto* d = rte_pktmbuf_mtod(pkts[k], const std::uint8_t*);
        wire::PfcFrame pfc;
        if (wire::parse_pfc(d, rte_pktmbuf_data_len(pkts[k]), pfc)) {
          if ((pfc.class_enable & (1u << kPrio)) == 0) continue;
          const std::uint16_t q = pfc.quanta[kPrio];
          hosts[h].paused_until_ns = q == 0 ? now_ns : now_ns + wire::pfc_quanta_to_ns(q, o.link_gbps * 1e9);
          if (q != 0) ++hosts[h].pauses_received;
          continue;
        }
        const auto* ip = reinterpret_cast<const rte_ipv4_hdr*>(d + sizeof(rte_ether_hdr));
        const std::uint32_t src = (rte_be_to_cpu_32(ip->src_addr) & 0xFF) - 1;
        for (Flow& fl : flows)
          if (fl.src == src && fl.dst == h) {
            ++fl.delivered;
            ++fl.series_delivered;
            if (r >= rounds / 2) ++fl.delivered_second_half;
          }
      }
      rte_pktmbuf_free_bulk(pkts, n);
    }
    // Who is paused now: hosts by their leaf's pauses, egress ports by their peers'.
    for (std::uint32_t h = 0; h < kHosts; ++h)
      if (hosts[h].paused(now_ns)) {
        ++hosts[h].paused_rounds;
        host_paused_in_sample[h] = 1;
      }
    for (std::size_t i = 0; i < ports.size(); ++i) {
      const LabSwitch& sw = ports[i].spine ? f->spine(ports[i].sw) : f->leaf(ports[i].sw);
      if ((sw.paused_priorities(ports[i].port) >> kPrio) & 1u) {
        ++ports[i].paused_rounds;
        port_paused_in_sample[i] = 1;
      }
    }
    if ((r + 1) % series_every == 0) {
      const double seconds = static_cast<double>(series_every) * o.round_ns * 1e-9;
      std::uint64_t innocent = 0, storm = 0;
      for (Flow& fl : flows) {
        (fl.storm ? storm : innocent) += fl.series_delivered;
        fl.series_delivered = 0;
      }
      series.t_ms.push_back(static_cast<double>(now_ns + static_cast<std::uint64_t>(o.round_ns)) / 1e6);
      series.innocent_gbps.push_back(static_cast<double>(innocent) * o.payload * 8 / seconds / 1e9);
      series.storm_gbps.push_back(static_cast<double>(storm) * o.payload * 8 / seconds / 1e9);
      std::uint32_t hp = 0, pp = 0;
      for (auto& b : host_paused_in_sample) hp += std::exchange(b, 0);
      for (auto& b : port_paused_in_sample) pp += std::exchange(b, 0);
      series.hosts_paused.push_back(hp);
      series.ports_paused.push_back(pp);
    }
  }

  // The report.
  const double secs = o.duration_ms / 1e3, half = secs / 2;
  auto gbps = [&](std::uint64_t frames, double s) { return static_cast<double>(frames) * o.payload * 8 / s / 1e9; };
  double innocent = 0, innocent_half = 0, storm = 0;
  for (const Flow& fl : flows) {
    if (fl.storm) {
      storm += gbps(fl.delivered, secs);
    } else {
      innocent += gbps(fl.delivered, secs);
      innocent_half += gbps(fl.delivered_second_half, half);
    }
  }
  std::uint32_t hosts_paused = 0, ports_paused = 0;
  for (const Host& h : hosts) hosts_paused += h.paused_rounds != 0;
  for (const EgressPort& p : ports) ports_paused += p.paused_rounds != 0;
  std::uint64_t trips = 0, wd_drops = 0, tail_drops = 0;
  for (const EgressPort& p : ports) {
    const SwitchPortCounters& pc = (p.spine ? f->spine(p.sw) : f->leaf(p.sw)).counters(p.port);
    trips += pc.pfc_watchdog_trips;
    wd_drops += pc.pfc_watchdog_drops;
    tail_drops += pc.tail_drops;
  }
  // Offered as payload: each flow's --flow-gbps is on the wire (headers, preamble, FCS and gap).
  const double offered = 4 * o.flow_gbps * o.payload / wire_bytes;
  char watchdog[32] = "off";
  if (o.watchdog_ms > 0) std::snprintf(watchdog, sizeof watchdog, "%g ms", o.watchdog_ms);
  std::printf(
      "pfc_storm: %g ms, stuck endpoint %s, PFC watchdog %s: innocent flows %.3f Gb/s (last half %.3f) of "
      "%.3f offered; storm flows %.3f Gb/s; hosts ever paused %u of %u, egress ports ever paused %u of %zu; "
      "watchdog trips %llu, drops %llu; tail drops %llu\n",
      o.duration_ms, o.stuck >= 0 ? std::to_string(o.stuck).c_str() : "none", watchdog, innocent, innocent_half,
      offered, storm, hosts_paused, kHosts, ports_paused, ports.size(), static_cast<unsigned long long>(trips),
      static_cast<unsigned long long>(wd_drops), static_cast<unsigned long long>(tail_drops));
  if (alloc_failures + ring_full != 0)
    std::printf("pfc_storm: frames not sent: %llu (no mbuf), %llu (host ring full)\n",
                static_cast<unsigned long long>(alloc_failures), static_cast<unsigned long long>(ring_full));
  if (!o.json.empty()) {
    std::ofstream out(o.json);
    out << "{\"config\": {\"duration_ms\": " << o.duration_ms << ", \"round_ns\": " << o.round_ns
        << ", \"link_gbps\": " << o.link_gbps << ", \"flow_gbps\": " << o.flow_gbps << ", \"payload\": " << o.payload
        << ", \"stuck_endpoint\": " << o.stuck << ", \"pfc_watchdog_ms\": " << o.watchdog_ms
        << ", \"pfc_xoff_bytes\": " << o.xoff << ", \"pfc_xon_bytes\": " << o.xon << ", \"leaves\": " << kLeaves
        << ", \"spines\": " << kSpines << ", \"hosts\": " << kHosts << "},\n";
    out << " \"summary\": {\"innocent_gbps\": " << innocent << ", \"innocent_gbps_last_half\": " << innocent_half
        << ", \"innocent_offered_gbps\": " << offered << ", \"storm_gbps\": " << storm
        << ", \"hosts_paused\": " << hosts_paused << ", \"egress_ports_paused\": " << ports_paused
        << ", \"egress_ports\": " << ports.size() << ", \"watchdog_trips\": " << trips
        << ", \"watchdog_drops\": " << wd_drops << ", \"tail_drops\": " << tail_drops
        << ", \"frames_not_sent\": " << alloc_failures + ring_full << "},\n \"flows\": [";
    for (std::size_t i = 0; i < flows.size(); ++i) {
      const Flow& fl = flows[i];
      out << (i ? ",\n   " : "\n   ") << "{\"src\": " << fl.src << ", \"dst\": " << fl.dst << ", \"kind\": \""
          << (fl.storm ? "storm" : "innocent") << "\", \"sent\": " << fl.sent << ", \"delivered\": " << fl.delivered
          << ", \"gbps\": " << gbps(fl.delivered, secs)
          << ", \"gbps_last_half\": " << gbps(fl.delivered_second_half, half) << "}";
    }
    out << "],\n \"hosts\": [";
    for (std::uint32_t h = 0; h < kHosts; ++h)
      out << (h ? ", " : "") << "{\"host\": " << h
          << ", \"paused_fraction\": " << static_cast<double>(hosts[h].paused_rounds) / static_cast<double>(rounds)
          << ", \"pauses_received\": " << hosts[h].pauses_received << "}";
    out << "],\n \"egress_ports\": [";
    for (std::size_t i = 0; i < ports.size(); ++i) {
      const SwitchPortCounters& pc =
          (ports[i].spine ? f->spine(ports[i].sw) : f->leaf(ports[i].sw)).counters(ports[i].port);
      out << (i ? ",\n   " : "\n   ") << "{\"name\": \"" << ports[i].name
          << "\", \"paused_fraction\": " << static_cast<double>(ports[i].paused_rounds) / static_cast<double>(rounds)
          << ", \"tx_frames\": " << pc.tx_frames << ", \"pauses_sent\": " << pc.pfc_pause_sent
          << ", \"watchdog_trips\": " << pc.pfc_watchdog_trips << ", \"watchdog_drops\": " << pc.pfc_watchdog_drops
          << ", \"tail_drops\": " << pc.tail_drops << "}";
    }
    out << "],\n \"series\": {\"t_ms\": " << json_list(series.t_ms)
        << ", \"innocent_gbps\": " << json_list(series.innocent_gbps)
        << ", \"storm_gbps\": " << json_list(series.storm_gbps)
        << ", \"hosts_paused\": " << json_list(series.hosts_paused)
        << ", \"egress_ports_paused\": " << json_list(series.ports_paused) << "}}\n";
    if (!out) return std::fprintf(stderr, "%s: cannot write %s\n", kTool, o.json.c_str()), 1;
  }
  f->finish();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (int r = parse(argc, argv, o); r != 0) return r > 0 ? 0 : 2;
  Status err;
  auto eal = Eal::init(
      kTool,
      {"-l", "0", "--no-huge", "-m", "512", "--no-pci", "--no-telemetry", "--no-shconf", "--log-level", "lib.*:error"},
      err, /*quiet=*/true);
  if (!eal) return std::fprintf(stderr, "%s: %s\n", kTool, err.message().c_str()), 1;
  MbufPool pool;
  if (Status s = MbufPool::create(PoolConfig{"pfc_storm_pool", 65535, 256, 2176, -1}, pool); !s.ok())
    return std::fprintf(stderr, "%s: %s\n", kTool, s.message().c_str()), 1;
  return run(o, pool.get());
}
