// EcmpHash: how a lab switch spreads flows over equal-cost next hops — the flow's 5-tuple read
// from the frame (IPv4 or IPv6, UDP ports when the frame is UDP), the fields a user chose
// (--ecmp-hash), a seed, and DPDK's CRC32C hash (rte_hash_crc). Pure functions: no EAL needed.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "engine/core/status.h"

namespace droce::engine {

// The 5-tuple of a frame. Addresses are in network order; an IPv4 address fills the first four
// bytes and leaves the rest zero.
struct FlowKey {
  std::uint8_t src[16] = {};
  std::uint8_t dst[16] = {};
  std::uint8_t proto = 0;                    // IPv4 protocol or IPv6 next header (17: UDP, RoCEv2's)
  std::uint16_t src_port = 0, dst_port = 0;  // host order; zero when not UDP
  bool ipv6 = false;
};

// Fields of the hash (bits of EcmpHashConfig::fields).
enum EcmpField : std::uint8_t {
  kEcmpSrcIp = 1,
  kEcmpDstIp = 2,
  kEcmpProto = 4,
  kEcmpSrcPort = 8,  // RoCEv2's entropy: the UDP source port (IBTA Annex A17.3.3)
  kEcmpDstPort = 16,
  kEcmpAll = 31,
};

struct EcmpHashConfig {
  std::uint8_t fields = kEcmpAll;
  std::uint32_t seed = 0;

  // "src-ip,dst-ip,proto,src-port,dst-port" (any subset, at least one), optionally with
  // "seed=N"; "5-tuple" names all five. Ok, or kInvalidArgument naming the bad item.
  [[nodiscard]] static Status parse(std::string_view spec, EcmpHashConfig& out);
  // The spec parse() reads back (for reports).
  [[nodiscard]] std::string describe() const;
};

// The flow of an Ethernet frame (optionally VLAN-tagged) carrying IPv4 or IPv6; false when the
// frame is too short or not IP. A fragment or a non-UDP packet keeps ports zero.
[[nodiscard]] bool flow_key_of(const std::uint8_t* frame, std::uint32_t len, FlowKey& key);

// The hash of the chosen fields (the others count as zero): their CRC32C seeded with the seed,
// and for a non-zero seed that CRC mixed by Jenkins' hash under it (another seed parts other
// flows, even over a power-of-two number of hops; seed 0 is the plain CRC).
[[nodiscard]] std::uint32_t ecmp_hash(const FlowKey& key, const EcmpHashConfig& cfg);

// Which of `n` next hops (n > 0) the flow takes.
[[nodiscard]] inline std::uint32_t ecmp_pick(const FlowKey& key, const EcmpHashConfig& cfg, std::uint32_t n) {
  return ecmp_hash(key, cfg) % n;
}

}  // namespace droce::engine
