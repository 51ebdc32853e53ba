#include "engine/workers/rss_placement.h"

#include <rte_byteorder.h>
#include <rte_ethdev.h>
#include <rte_thash.h>

#include <array>
#include <cstring>
#include <string>

namespace droce::engine {

namespace {

constexpr std::size_t kMinKeyBytes = 40;   // the IPv6 4-tuple (36 bytes) + 4
constexpr std::size_t kMaxKeyBytes = 128;  // larger than any PMD's hash_key_size

std::uint32_t word(const std::uint8_t* p) {  // 4 bytes in network order, as a host integer
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return rte_be_to_cpu_32(v);
}

}  // namespace

// The Toeplitz input is the tuple in network byte order (source address, destination address,
// source port, destination port); rte_softrss takes it as host-order 32-bit words.
std::uint32_t inbound_rss_hash(const InboundFlow& f, std::span<const std::uint8_t> key, std::uint16_t dst_port) {
  if (key.size() < kMinKeyBytes) return 0;
  std::array<std::uint32_t, 9> t{};
  std::uint32_t n = 0;
  const std::uint32_t addr_words = f.ipv6 ? 4 : 1;
  for (std::uint32_t i = 0; i < addr_words; ++i) t[n++] = word(f.src_ip + 4 * i);
  for (std::uint32_t i = 0; i < addr_words; ++i) t[n++] = word(f.dst_ip + 4 * i);
  t[n++] = static_cast<std::uint32_t>(f.src_port) << 16 | dst_port;
  return rte_softrss(t.data(), n, key.data());
}

RetaPlan plan_reta(std::span<const std::uint16_t> current, std::span<const std::uint8_t> key,
                   std::span<const InboundFlow> flows) {
  RetaPlan p;
  p.entries.assign(current.begin(), current.end());
  p.changed.assign(current.size(), false);
  if (current.empty()) {
    p.conflicts = static_cast<std::uint32_t>(flows.size());
    return p;
  }
  std::vector<bool> claimed(current.size(), false);
  for (const InboundFlow& f : flows) {
    const std::size_t e = inbound_rss_hash(f, key) % current.size();
    if (!claimed[e]) {
      claimed[e] = true;
      p.entries[e] = f.owner;
      p.changed[e] = f.owner != current[e];
      ++p.placed;
    } else if (p.entries[e] == f.owner) {
      ++p.placed;
    } else {
      ++p.conflicts;
    }
  }
  return p;
}

Status place_flows_on_reta(std::uint16_t port_id, std::span<const InboundFlow> flows, RssPlacement& out) {
  out = RssPlacement{};
  out.flows = static_cast<std::uint32_t>(flows.size());
  rte_eth_dev_info info{};
  if (int rc = rte_eth_dev_info_get(port_id, &info); rc != 0)
    return Status::error(StatusCode::kError,
                         "port " + std::to_string(port_id) + ": no device info (" + std::to_string(rc) + ")");
  out.reta_size = info.reta_size;
  if (info.reta_size == 0 || info.nb_rx_queues < 2) {
    out.why = info.reta_size == 0 ? "the PMD has no RSS redirection table" : "one RX queue";
    return {};
  }
  std::array<std::uint8_t, kMaxKeyBytes> key{};
  rte_eth_rss_conf rss{};
  rss.rss_key = key.data();
  rss.rss_key_len = static_cast<std::uint8_t>(
      info.hash_key_size != 0 && info.hash_key_size <= kMaxKeyBytes ? info.hash_key_size : kMaxKeyBytes);
  if (int rc = rte_eth_dev_rss_hash_conf_get(port_id, &rss); rc != 0 || rss.rss_hf == 0) {
    out.why = rc != 0 ? "the PMD does not report its RSS key (" + std::to_string(rc) + ")" : "RSS is off on the port";
    return {};
  }
  if (rss.rss_key_len < kMinKeyBytes) {
    out.why = "an RSS key of " + std::to_string(rss.rss_key_len) + " bytes (not Toeplitz over 40)";
    return {};
  }
  const std::uint16_t groups =
      static_cast<std::uint16_t>((info.reta_size + RTE_ETH_RETA_GROUP_SIZE - 1) / RTE_ETH_RETA_GROUP_SIZE);
  std::vector<rte_eth_rss_reta_entry64> reta(groups);
  for (auto& g : reta) g.mask = ~0ULL;
  if (int rc = rte_eth_dev_rss_reta_query(port_id, reta.data(), info.reta_size); rc != 0) {
    out.why = "the PMD does not report its redirection table (" + std::to_string(rc) + ")";
    return {};
  }
  std::vector<std::uint16_t> current(info.reta_size);
  for (std::uint16_t i = 0; i < info.reta_size; ++i)
    current[i] = reta[i / RTE_ETH_RETA_GROUP_SIZE].reta[i % RTE_ETH_RETA_GROUP_SIZE];
  const RetaPlan plan = plan_reta(current, std::span<const std::uint8_t>(key.data(), rss.rss_key_len), flows);
  out.placed = plan.placed;
  out.conflicts = plan.conflicts;
  bool any = false;
  for (std::uint16_t i = 0; i < info.reta_size; ++i) {
    auto& g = reta[i / RTE_ETH_RETA_GROUP_SIZE];
    const std::uint32_t bit = i % RTE_ETH_RETA_GROUP_SIZE;
    if (bit == 0) g.mask = 0;
    if (plan.changed[i]) {
      g.mask |= 1ULL << bit;
      g.reta[bit] = plan.entries[i];
      any = true;
    }
  }
  if (any) {
    if (int rc = rte_eth_dev_rss_reta_update(port_id, reta.data(), info.reta_size); rc != 0) {
      out.why = "the PMD refused the redirection table (" + std::to_string(rc) + ")";
      return {};
    }
  }
  out.applied = true;
  return {};
}

}  // namespace droce::engine
