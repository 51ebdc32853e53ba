// The transmit fast path (TxTemplate, write_tx_headers, seal_tx_frame) against the general
// builder: the same bytes, ICRC included, for every opcode it covers, every payload size edge of
// each PMTU, IPv4 and IPv6, PSNs across the 24-bit wrap; the zero-copy ICRC of the same frame;
// the receiver's full CRC over it; the IPv4 checksum from the template's partial sum against a
// full RFC 1071 recompute.
#include <catch2/catch.hpp>
#include <cstring>
#include <random>
#include <vector>

#include "protocols/wire/build.h"
#include "protocols/wire/icrc.h"

using namespace droce::wire;

namespace {

// RFC 1071 over a 20-byte IPv4 header with its checksum field taken as zero, in network order:
// the reference the template's partial sum must agree with.
std::uint16_t full_ipv4_checksum(const std::uint8_t* l3) {
  std::uint32_t sum = 0;
  for (int i = 0; i < 20; i += 2) {
    if (i == 10) continue;
    sum += static_cast<std::uint32_t>(l3[i]) << 8 | l3[i + 1];
  }
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  return static_cast<std::uint16_t>(~sum);
}

TemplateConfig random_config(std::mt19937& rng, bool ipv6, bool vlan) {
  TemplateConfig c;
  for (auto& b : c.local.mac) b = static_cast<std::uint8_t>(rng());
  for (auto& b : c.remote.mac) b = static_cast<std::uint8_t>(rng());
  for (auto& b : c.local.ip) b = static_cast<std::uint8_t>(rng());
  for (auto& b : c.remote.ip) b = static_cast<std::uint8_t>(rng());
  c.ipv6 = ipv6;
  c.vlan = vlan;
  c.vlan_id = static_cast<std::uint16_t>(rng() & 0x0FFF);
  c.vlan_pcp = static_cast<std::uint8_t>(rng() & 7);
  c.dscp = static_cast<std::uint8_t>(rng() & 0x3F);
  c.ecn = static_cast<std::uint8_t>(rng() & 3);
  c.ttl = static_cast<std::uint8_t>(rng());
  c.udp_src_port = static_cast<std::uint16_t>(0xC000 | (rng() & 0x3FFF));
  c.pkey = static_cast<std::uint16_t>(rng());
  c.dest_qpn = rng() & 0xFFFFFF;
  return c;
}

PacketFields random_fields(std::mt19937& rng, std::uint8_t opcode, std::uint32_t payload_len) {
  PacketFields f;
  f.opcode = opcode;
  f.psn = rng();  // wider than 24 bits: both builders keep the low 24
  f.ack_req = (rng() & 1) != 0;
  f.se = (rng() & 1) != 0;
  f.payload_len = payload_len;
  f.ip_id = static_cast<std::uint16_t>(rng());
  f.reth_va = (std::uint64_t{rng()} << 32) | rng();
  f.reth_rkey = rng();
  f.reth_len = rng();
  f.aeth_syndrome = static_cast<std::uint8_t>(rng());
  f.aeth_msn = rng();
  f.imm = rng();
  f.ieth_rkey = rng();
  return f;
}

}  // namespace

TEST_CASE("the IPv4 checksum from the template's partial sum equals a full recompute", "[wire][build]") {
  std::mt19937 rng(1624);
  int checked = 0;
  for (int k = 0; k < 200; ++k) {
    const HeaderTemplate h = HeaderTemplate::make(random_config(rng, false, (k & 1) != 0));
    const TxTemplate t = TxTemplate::make(h);
    for (const bool not_ect : {false, true}) {
      // Edge values of both per-frame words, then random ones.
      std::vector<std::uint32_t> values = {0, 1, 0xFF, 0x100, 0x7FFF, 0x8000, 0xFFFE, 0xFFFF};
      for (int i = 0; i < 40; ++i) values.push_back(rng() & 0xFFFF);
      for (const std::uint32_t len : values) {
        for (const std::uint32_t id : values) {
          std::uint8_t l3[20];
          std::memcpy(l3, h.bytes + h.l3_offset, 20);
          if (not_ect) l3[1] &= static_cast<std::uint8_t>(~3u);
          l3[2] = static_cast<std::uint8_t>(len >> 8);
          l3[3] = static_cast<std::uint8_t>(len);
          l3[4] = static_cast<std::uint8_t>(id >> 8);
          l3[5] = static_cast<std::uint8_t>(id);
          std::uint16_t len_be, id_be;
          std::memcpy(&len_be, l3 + 2, 2);
          std::memcpy(&id_be, l3 + 4, 2);
          const std::uint16_t c = tx_ipv4_checksum(t, len_be, id_be, not_ect);  // as stored: network order
          const std::uint16_t want = full_ipv4_checksum(l3);
          std::uint8_t stored[2];
          std::memcpy(stored, &c, 2);
          INFO("template " << k << " not_ect " << not_ect << " length " << len << " id " << id);
          REQUIRE(stored[0] == static_cast<std::uint8_t>(want >> 8));
          REQUIRE(stored[1] == static_cast<std::uint8_t>(want));
          ++checked;
        }
      }
    }
  }
  CHECK(checked == 200 * 2 * 48 * 48);
}

TEST_CASE("template-built frames are byte-identical to build_frame for every covered opcode", "[wire][build]") {
  std::mt19937 rng(7);
  int covered = 0, frames = 0, wrapped = 0;
  // Payload sizes: the small edges, then each PMTU (256, 1024, 4096) less one and itself.
  const std::uint32_t sizes[] = {0, 1, 2, 3, 4, 61, 63, 64, 255, 256, 1023, 1024, 4095, 4096};
  // PSNs across the 24-bit wrap, and values wider than 24 bits (both builders keep the low 24).
  const std::uint32_t psns[] = {0xFFFFFEu, 0xFFFFFFu, 0u, 1u, 0x1000000u, 0xFF800000u};
  for (int opc = 0; opc < 256; ++opc) {
    const OpcodeInfo& op = opcode_info(static_cast<std::uint8_t>(opc));
    if (!op.valid()) continue;
    if (!tx_template_covers(op)) {
      // What the fast path leaves to write_headers: the atomics and the CNP.
      CHECK((op.headers & (kHdrAtomicEth | kHdrAtomicAckEth | kHdrCnp)) != 0);
      continue;
    }
    ++covered;
    for (const bool ipv6 : {false, true}) {
      for (const bool vlan : {false, true}) {
        for (const bool not_ect : {false, true}) {
          for (const std::uint32_t len : sizes) {
            if (!op.has_payload && len != 0) continue;
            const HeaderTemplate h = HeaderTemplate::make(random_config(rng, ipv6, vlan));
            const TxTemplate t = TxTemplate::make(h);
            PacketFields f = random_fields(rng, static_cast<std::uint8_t>(opc), len);
            if ((rng() & 1) != 0) {
              f.psn = psns[rng() % std::size(psns)];
              ++wrapped;
            }
            if (not_ect) f.ecn_override = kEcnNotEct;
            std::vector<std::uint8_t> payload(len);
            for (auto& b : payload) b = static_cast<std::uint8_t>(rng());
            std::vector<std::uint8_t> want(kMaxHeaderBytes + len + 8, 0xA5), got(want.size(), 0x5A);
            const std::uint32_t n =
                build_frame(h, f, payload.data(), want.data(), static_cast<std::uint32_t>(want.size()));
            REQUIRE(n != 0);
            const std::uint32_t hlen = write_tx_headers(t, op, f, f.ip_id, not_ect, got.data());
            const std::uint32_t pad = op.has_payload ? pad_for(len) : 0;
            // Zero-copy frames CRC the headers and the payload where it lies, the pad as zeros.
            const std::uint32_t split = icrc_from_template_split(t.icrc, got.data() + t.l3_offset, hlen - t.l3_offset,
                                                                 payload.data(), len, pad);
            if (len != 0) std::memcpy(got.data() + hlen, payload.data(), len);
            std::memset(got.data() + hlen + len, 0, pad);
            const std::uint32_t m = seal_tx_frame(t, got.data(), hlen + len + pad);
            INFO(op.name << (ipv6 ? " IPv6" : " IPv4") << (vlan ? " VLAN" : "") << " not_ect " << not_ect << " payload "
                         << len << " psn " << f.psn);
            REQUIRE(m == n);
            CHECK(std::memcmp(got.data(), want.data(), n) == 0);
            CHECK(split == icrc_load(want.data() + n - kIcrcBytes));
            // The receiver's full CRC (no template) over the frame as it leaves.
            CHECK(icrc_compute(got.data() + t.l3_offset, n - t.l3_offset - kIcrcBytes, ipv6) ==
                  icrc_load(got.data() + n - kIcrcBytes));
            ++frames;
          }
        }
      }
    }
  }
  // Every valid opcode but the atomics, their acknowledgements and CNP: 20 RC ones and the 20 of
  // the selective-repeat extension (docs/selective-repeat.md: SEND, WRITE, READ request and
  // responses, SACK; its CmpSwap, FetchAdd and ATOMIC Acknowledge are left out as the RC ones).
  CHECK(covered == 40);
  CHECK(frames > 10 * 8 * 14);  // at least the ten RC opcodes with a payload, every size
  CHECK(wrapped > 100);
}
