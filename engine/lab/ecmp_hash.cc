// EcmpHash: the 5-tuple from the frame's headers, hashed with rte_hash_crc (CRC32C, the same
// value with or without SSE4.2), a non-zero seed mixed in by rte_jhash_1word.
#include "engine/lab/ecmp_hash.h"

#include <rte_hash_crc.h>
#include <rte_jhash.h>

#include <charconv>
#include <cstring>

namespace droce::engine {

namespace {

struct FieldName {
  const char* name;
  std::uint8_t bit;
};
constexpr FieldName kFields[] = {{"src-ip", kEcmpSrcIp},     {"dst-ip", kEcmpDstIp},     {"proto", kEcmpProto},
                                 {"src-port", kEcmpSrcPort}, {"dst-port", kEcmpDstPort}, {"5-tuple", kEcmpAll}};

// What is hashed: a fixed layout, fields left out stay zero.
struct HashInput {
  std::uint8_t src[16];
  std::uint8_t dst[16];
  std::uint16_t src_port;
  std::uint16_t dst_port;
  std::uint8_t proto;
  std::uint8_t ipv6;
  std::uint8_t pad[2];
};
static_assert(sizeof(HashInput) == 40);

}  // namespace

Status EcmpHashConfig::parse(std::string_view spec, EcmpHashConfig& out) {
  EcmpHashConfig c;
  c.fields = 0;
  while (!spec.empty()) {
    const std::size_t comma = spec.find(',');
    const std::string_view item = spec.substr(0, comma);
    spec = comma == std::string_view::npos ? std::string_view{} : spec.substr(comma + 1);
    if (item.substr(0, 5) == "seed=") {
      const std::string_view v = item.substr(5);
      const auto r = std::from_chars(v.data(), v.data() + v.size(), c.seed);
      if (v.empty() || r.ec != std::errc{} || r.ptr != v.data() + v.size())
        return Status::error(StatusCode::kInvalidArgument,
                             "--ecmp-hash: seed must be a 32-bit number, not '" + std::string(v) + "'");
      continue;
    }
    bool known = false;
    for (const FieldName& f : kFields)
      if (item == f.name) {
        c.fields |= f.bit;
        known = true;
      }
    if (!known)
      return Status::error(StatusCode::kInvalidArgument,
                           "--ecmp-hash: unknown field '" + std::string(item) +
                               "' (src-ip, dst-ip, proto, src-port, dst-port, 5-tuple, seed=N)");
  }
  if (c.fields == 0) return Status::fail(StatusCode::kInvalidArgument, "--ecmp-hash: name at least one field to hash");
  out = c;
  return {};
}

std::string EcmpHashConfig::describe() const {
  std::string s;
  for (const FieldName& f : kFields) {
    if (f.bit == kEcmpAll || (fields & f.bit) == 0) continue;
    if (!s.empty()) s += ',';
    s += f.name;
  }
  return s + ",seed=" + std::to_string(seed);
}

bool flow_key_of(const std::uint8_t* f, std::uint32_t len, FlowKey& key) {
  key = FlowKey{};
  if (len < 14) return false;
  std::uint32_t l3 = 14;
  std::uint16_t type = static_cast<std::uint16_t>(f[12] << 8 | f[13]);
  if (type == 0x8100) {
    if (len < 18) return false;
    type = static_cast<std::uint16_t>(f[16] << 8 | f[17]);
    l3 = 18;
  }
  std::uint32_t l4 = 0;
  bool first_fragment = true;
  if (type == 0x0800) {
    if (len < l3 + 20 || (f[l3] >> 4) != 4) return false;
    const std::uint32_t ihl = (f[l3] & 0x0Fu) * 4u;
    if (ihl < 20 || len < l3 + ihl) return false;
    std::memcpy(key.src, f + l3 + 12, 4);
    std::memcpy(key.dst, f + l3 + 16, 4);
    key.proto = f[l3 + 9];
    // A later fragment carries no UDP header (RFC 791: fragment offset != 0).
    first_fragment = ((f[l3 + 6] & 0x1F) | f[l3 + 7]) == 0;
    l4 = l3 + ihl;
  } else if (type == 0x86DD) {
    if (len < l3 + 40 || (f[l3] >> 4) != 6) return false;
    key.ipv6 = true;
    std::memcpy(key.src, f + l3 + 8, 16);
    std::memcpy(key.dst, f + l3 + 24, 16);
    key.proto = f[l3 + 6];  // extension headers are not followed: RoCEv2 sends none
    l4 = l3 + 40;
  } else {
    return false;
  }
  if (key.proto == 17 && first_fragment && len >= l4 + 4) {
    key.src_port = static_cast<std::uint16_t>(f[l4] << 8 | f[l4 + 1]);
    key.dst_port = static_cast<std::uint16_t>(f[l4 + 2] << 8 | f[l4 + 3]);
  }
  return true;
}

std::uint32_t ecmp_hash(const FlowKey& key, const EcmpHashConfig& cfg) {
  HashInput in{};
  if (cfg.fields & kEcmpSrcIp) std::memcpy(in.src, key.src, 16);
  if (cfg.fields & kEcmpDstIp) std::memcpy(in.dst, key.dst, 16);
  if (cfg.fields & kEcmpSrcPort) in.src_port = key.src_port;
  if (cfg.fields & kEcmpDstPort) in.dst_port = key.dst_port;
  if (cfg.fields & kEcmpProto) in.proto = key.proto;
  in.ipv6 = key.ipv6 ? 1 : 0;
  // rte_hash_crc reads its input as 64-bit words: hand it words, not the struct (an optimiser may
  // otherwise read the words before the struct's narrower stores land: strict aliasing).
  std::uint64_t words[sizeof(HashInput) / 8];
  std::memcpy(words, &in, sizeof in);
  const std::uint32_t crc = rte_hash_crc(words, sizeof words, cfg.seed);
  // CRC32C is linear: the XOR of two flows' CRCs is the same under every seed, and `hash % S` with
  // S a power of two keeps low bits, so two flows that collide under one CRC seed collide under
  // all (a seed would only renumber the spines). A switch's hash seed exists to part colliding
  // flows, so a non-zero seed also mixes the CRC through Jenkins' hash (rte_jhash_1word), which is
  // not linear; seed 0 is the plain CRC.
  return cfg.seed == 0 ? crc : rte_jhash_1word(crc, cfg.seed);
}

}  // namespace droce::engine
