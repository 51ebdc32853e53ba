// IcrcTemplate: the per-position tables (built once from crc32_continue) and learning a template.
#include "protocols/wire/icrc_template.h"

#include "protocols/wire/icrc.h"

namespace droce::wire {
namespace {

constexpr std::uint8_t kDistance[detail::kTables] = {56, 55, 38, 37, 36, 35, 16, 15, 12, 11, 4, 3, 2, 1};

// L(b, 0 x (d-1)) = crc(b, 0 x (d-1)) ^ crc(0 x d): the affine constant of a d-byte message
// cancels, leaving the linear part, which leading zeros do not change (icrc_template.h).
struct DeltaTables {
  std::uint32_t t[detail::kTables][256];
  DeltaTables() {
    std::uint8_t buf[64] = {};
    for (int k = 0; k < detail::kTables; ++k) {
      const std::uint32_t d = kDistance[k];
      const std::uint32_t zeros = crc32_continue(0, buf, d);
      for (std::uint32_t b = 0; b < 256; ++b) {
        buf[0] = static_cast<std::uint8_t>(b);
        t[k][b] = crc32_continue(0, buf, d) ^ zeros;
      }
      buf[0] = 0;
    }
  }
};

const DeltaTables tables;

template <std::size_t W, std::size_t V>
void fill(IcrcTemplate& t, std::uint8_t* masked, const std::uint64_t (&care)[W], const detail::VariableByte (&var)[V]) {
  // masked: 8 ones (the LRH stand-in), then the headers with §7.8.1's variant fields as ones.
  const std::uint8_t* l3 = masked + 8;
  for (std::size_t i = 0; i < W; ++i) t.word[i] = detail::load64(l3 + 8 * i) & care[i];
  for (const detail::VariableByte& v : var) masked[8 + v.offset] = 0;
}

}  // namespace

const std::uint32_t (*const detail::icrc_delta_tables)[256] = tables.t;

void IcrcTemplate::learn(const std::uint8_t* l3, bool ipv6_frame) {
  std::uint8_t masked[detail::kIcrcMaskedMax];
  const std::uint32_t n = detail::icrc_masked_header(l3, ipv6_frame, masked);
  if (ipv6_frame) {
    fill(*this, masked, detail::kIpv6Care, detail::kIpv6Variable);
  } else {
    fill(*this, masked, detail::kIpv4Care, detail::kIpv4Variable);
  }
  base_crc = crc32_continue(0, masked, n);
  ipv6 = ipv6_frame;
  valid = true;
}

std::uint32_t icrc_from_template_split(const IcrcTemplate& t, const std::uint8_t* l3, std::uint32_t hdr_len,
                                       const std::uint8_t* payload, std::uint32_t payload_len, std::uint32_t pad) {
  static constexpr std::uint8_t kZeros[4] = {0, 0, 0, 0};
  std::uint32_t crc = icrc_from_template(t, l3, hdr_len);
  crc = crc32_continue(crc, payload, payload_len);
  return crc32_continue(crc, kZeros, pad & 3);
}

std::uint32_t icrc_relearn(IcrcTemplate& t, const std::uint8_t* l3, std::uint32_t len, bool ipv6) {
  ++t.misses;
  t.learn(l3, ipv6);
  return icrc_from_template(t, l3, len);
}

}  // namespace droce::wire
