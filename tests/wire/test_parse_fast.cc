// parse_frame's fast path against the general parser: built frames of every opcode and shape, each
// header byte corrupted, every truncation -> the same DropReason and the same PacketInfo, field by field.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "protocols/wire/build.h"
#include "protocols/wire/icrc.h"
#include "protocols/wire/parse.h"
#include "protocols/wire/parse_fast.h"
#include "protocols/wire/parse_general.h"

using namespace droce::wire;

namespace {

struct Shape {
  bool ipv6 = false;
  bool vlan = false;
  std::uint8_t ecn = kEcnEct0;
  std::uint8_t dscp = 0;
  std::uint16_t pkey = kDefaultPkey;
};

std::vector<std::uint8_t> build(std::uint8_t opcode, std::uint32_t payload_len, const Shape& s,
                                std::uint32_t seed = 0) {
  TemplateConfig c;
  for (int i = 0; i < 6; ++i) {
    c.local.mac[i] = static_cast<std::uint8_t>(0x10 + i + seed);
    c.remote.mac[i] = static_cast<std::uint8_t>(0xA0 + i);
  }
  for (int i = 0; i < 16; ++i) {
    c.local.ip[i] = static_cast<std::uint8_t>(0x30 + 7 * i + seed);
    c.remote.ip[i] = static_cast<std::uint8_t>(0xC0 + i);
  }
  c.ipv6 = s.ipv6;
  c.vlan = s.vlan;
  c.vlan_id = 0x123;
  c.vlan_pcp = 5;
  c.dscp = s.dscp;
  c.ecn = s.ecn;
  c.pkey = s.pkey;
  c.dest_qpn = 0xABCDEF ^ seed;
  c.udp_src_port = roce_udp_src_port(0x11 + seed, 0x22);
  const auto t = HeaderTemplate::make(c);
  PacketFields f;
  f.opcode = opcode;
  f.psn = 0xFFFFFF - seed;
  f.ack_req = (seed & 1) != 0;
  f.se = (seed & 2) != 0;
  f.becn = (seed & 4) != 0;
  f.payload_len = opcode_info(opcode).has_payload ? payload_len : 0;
  f.ip_id = static_cast<std::uint16_t>(0x1234 + seed);
  f.ecn_override = s.ecn;
  f.dscp_override = s.dscp;
  f.reth_va = 0x8877665544332211ull + seed;
  f.reth_rkey = 0xCAFEBABE;
  f.reth_len = payload_len;
  f.aeth_syndrome = static_cast<std::uint8_t>(0x60 | (seed & 0x1F));
  f.aeth_msn = 0xABCDEF;
  f.imm = 0xDEADBEEF;
  f.ieth_rkey = 0x01020304;
  f.atomic_va = 0x8000;
  f.atomic_rkey = 7;
  f.atomic_swap_add = 5;
  f.atomic_compare = 9;
  f.atomic_ack_orig = 0x42;
  std::vector<std::uint8_t> payload(f.payload_len);
  for (std::size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<std::uint8_t>(i * 7 + seed);
  std::vector<std::uint8_t> out(f.payload_len + kMaxHeaderBytes + 16);
  out.resize(build_frame(t, f, payload.data(), out.data(), static_cast<std::uint32_t>(out.size())));
  return out;
}

// The first field in which two parse results differ, or "" when none does.
std::string first_difference(const PacketInfo& a, const PacketInfo& b) {
#define DROCE_SAME_BYTES(f) \
  if (std::memcmp(a.f, b.f, sizeof(a.f)) != 0) return #f;
#define DROCE_SAME(f) \
  if (a.f != b.f) return #f;
  DROCE_SAME_BYTES(dst_mac)
  DROCE_SAME_BYTES(src_mac)
  DROCE_SAME(has_vlan)
  DROCE_SAME(vlan_pcp)
  DROCE_SAME(vlan_id)
  DROCE_SAME(ipv6)
  DROCE_SAME(ecn)
  DROCE_SAME(dscp)
  DROCE_SAME_BYTES(src_ip)
  DROCE_SAME_BYTES(dst_ip)
  DROCE_SAME(udp_src_port)
  DROCE_SAME(l3_offset)
  DROCE_SAME(bth_offset)
  DROCE_SAME(payload_offset)
  DROCE_SAME(payload_len)
  DROCE_SAME(frame_len)
  DROCE_SAME(opcode)
  DROCE_SAME(se)
  DROCE_SAME(mig_req)
  DROCE_SAME(pad_count)
  DROCE_SAME(pkey)
  DROCE_SAME(fecn)
  DROCE_SAME(becn)
  DROCE_SAME(dest_qpn)
  DROCE_SAME(ack_req)
  DROCE_SAME(psn)
  DROCE_SAME(reth_va)
  DROCE_SAME(reth_rkey)
  DROCE_SAME(reth_dma_len)
  DROCE_SAME(aeth_syndrome)
  DROCE_SAME(aeth_msn)
  DROCE_SAME(imm_data)
  DROCE_SAME(ieth_rkey)
  DROCE_SAME(atomic_va)
  DROCE_SAME(atomic_rkey)
  DROCE_SAME(atomic_swap_add)
  DROCE_SAME(atomic_compare)
  DROCE_SAME(atomic_ack_orig)
#undef DROCE_SAME
#undef DROCE_SAME_BYTES
  return "";
}

// Option sets a receiver uses: everything checked; checksums off (so corrupted headers get past
// them and reach the later rules); P_Key checking against a partition the frames may or may not be in.
std::vector<ParseOptions> option_sets() {
  ParseOptions strict;
  ParseOptions lax;
  lax.verify_icrc = false;
  lax.verify_ip_checksum = false;
  ParseOptions pkey;
  pkey.check_pkey = true;
  pkey.pkey = 0x8001;
  ParseOptions pkey_lax = lax;
  pkey_lax.check_pkey = true;
  pkey_lax.pkey = 0x7FFF;
  return {strict, lax, pkey, pkey_lax};
}

// Runs parse_frame and parse_frame_general on the same bytes (as an exact-size copy) under every
// option set, into records prefilled with different garbage so that an unwritten field shows.
struct Differ {
  std::uint64_t frames = 0;
  std::uint64_t accepted = 0;
  std::uint64_t mismatches = 0;
  std::string first;

  void run(const std::vector<std::uint8_t>& bytes, const std::string& what) {
    for (const ParseOptions& o : option_sets()) {
      const std::vector<std::uint8_t> f(bytes);
      PacketInfo fast, general;
      std::memset(&fast, 0xA5, sizeof(fast));
      std::memset(&general, 0x5A, sizeof(general));
      const auto n = static_cast<std::uint32_t>(f.size());
      const DropReason rf = parse_frame(f.data(), n, fast, o);
      const DropReason rg = parse_frame_general(f.data(), n, general, o);
      ++frames;
      if (rg == DropReason::kNone) ++accepted;
      std::string diff = rf != rg ? "drop reason" : first_difference(fast, general);
      if (diff.empty()) continue;
      if (mismatches++ == 0) {
        std::ostringstream s;
        s << what << " (len " << n << ", icrc " << o.verify_icrc << ", ipsum " << o.verify_ip_checksum << ", pkey "
          << o.check_pkey << "): " << diff << ": " << drop_reason_name(rf) << " vs " << drop_reason_name(rg);
        first = s.str();
      }
    }
  }

  // Each header byte (through the ext headers and 8 bytes beyond) flipped in a few ways,
  // with the ICRC left stale and with it recomputed, so the flip is what the parser judges.
  void run_corruptions(const std::vector<std::uint8_t>& base, std::uint32_t l3, bool ipv6, const std::string& what) {
    const std::size_t header_end = std::min<std::size_t>(base.size(), 14 + 4 + 40 + 8 + 12 + 28 + 8);
    for (std::size_t i = 0; i < header_end; ++i) {
      for (std::uint8_t flip : {0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0xFF}) {
        auto f = base;
        f[i] ^= flip;
        run(f, what + " byte " + std::to_string(i) + " ^ " + std::to_string(flip));
        if (f.size() >= l3 + 4) {
          const auto n = static_cast<std::uint32_t>(f.size());
          icrc_store(f.data() + n - 4, icrc_compute(f.data() + l3, n - 4 - l3, ipv6));
          run(f, what + " byte " + std::to_string(i) + " ^ " + std::to_string(flip) + " (ICRC redone)");
        }
      }
    }
  }

  void run_truncations(const std::vector<std::uint8_t>& base, const std::string& what) {
    for (std::size_t cut = 0; cut < base.size(); ++cut)
      run(std::vector<std::uint8_t>(base.begin(), base.begin() + static_cast<std::ptrdiff_t>(cut)),
          what + " cut at " + std::to_string(cut));
  }
};

bool fast_path_takes(const std::vector<std::uint8_t>& f) {
  PacketInfo pi;
  return parse_headers_fast(f.data(), static_cast<std::uint32_t>(f.size()), pi, ParseOptions{});
}

const std::uint8_t kCommonOpcodes[] = {0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09,
                                       0x0A, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F, 0x10, 0x11, 0x81};

}  // namespace

TEST_CASE("fast path takes the common frames: IPv4, no VLAN, RC SEND/WRITE/READ/ACK and CNP", "[wire][parse_fast]") {
  for (std::uint8_t opc : kCommonOpcodes) {
    for (std::uint32_t len : {0u, 1u, 64u, 4096u}) {
      INFO(opcode_info(opc).name << " payload " << len);
      CHECK(fast_path_takes(build(opc, len, Shape{})));
    }
  }
  // Padding after the IP packet (a NIC's minimum-size frame) is still the common shape.
  auto ack = build(0x11, 0, Shape{});
  ack.resize(ack.size() + 10, 0);
  CHECK(fast_path_takes(ack));
}

TEST_CASE("fast path declines VLAN, IPv6, atomics, IETH and malformed frames", "[wire][parse_fast]") {
  CHECK_FALSE(fast_path_takes(build(0x04, 64, Shape{false, true})));
  CHECK_FALSE(fast_path_takes(build(0x04, 64, Shape{true, false})));
  for (std::uint8_t opc : {0x12, 0x13, 0x14, 0x16, 0x17}) CHECK_FALSE(fast_path_takes(build(opc, 8, Shape{})));
  auto bad_sum = build(0x04, 64, Shape{});
  bad_sum[24] ^= 0x01;
  CHECK_FALSE(fast_path_takes(bad_sum));
  auto bad_pad = build(0x04, 0, Shape{});
  bad_pad[43] |= 0x30;  // PadCnt 3 with no payload
  CHECK_FALSE(fast_path_takes(bad_pad));
}

TEST_CASE("fast path == general parser on built frames: every opcode, shape, payload size, ECN/DSCP, P_Key",
          "[wire][parse_fast]") {
  Differ d;
  std::vector<std::uint32_t> lens;
  for (std::uint32_t l = 0; l <= 67; ++l) lens.push_back(l);
  for (std::uint32_t l : {255u, 256u, 1021u, 1022u, 1023u, 1024u, 4093u, 4094u, 4095u, 4096u}) lens.push_back(l);
  std::uint32_t seed = 0;
  for (int opc = 0; opc < 256; ++opc) {
    if (!opcode_info(static_cast<std::uint8_t>(opc)).valid()) continue;
    for (bool ipv6 : {false, true}) {
      for (bool vlan : {false, true}) {
        for (std::uint32_t len : lens) {
          Shape s{ipv6, vlan, static_cast<std::uint8_t>(seed & 3), static_cast<std::uint8_t>((seed * 5) & 0x3F),
                  (seed % 3 == 0)   ? std::uint16_t{0x8001}
                  : (seed % 3 == 1) ? std::uint16_t{0x7FFF}
                                    : kDefaultPkey};
          const auto f = build(static_cast<std::uint8_t>(opc), len, s, seed++ & 0xFF);
          d.run(f, std::string(opcode_info(static_cast<std::uint8_t>(opc)).name) + " payload " + std::to_string(len));
          auto padded = f;
          padded.resize(f.size() + 7, 0xEE);  // bytes after the IP packet are not the packet's
          d.run(padded, std::string(opcode_info(static_cast<std::uint8_t>(opc)).name) + " + trailer");
        }
      }
    }
  }
  INFO(d.first);
  CHECK(d.mismatches == 0);
  CHECK(d.accepted > d.frames / 4);  // the comparison is mostly over accepted frames, not drops
}

TEST_CASE("fast path == general parser on every header byte corrupted and every truncation", "[wire][parse_fast]") {
  Differ d;
  for (std::uint8_t opc : kCommonOpcodes) {
    for (std::uint32_t len : {0u, 3u, 64u}) {
      const auto f = build(opc, len, Shape{false, false, kEcnCe, 26, 0x8001}, len);
      const std::string what = std::string(opcode_info(opc).name) + " payload " + std::to_string(len);
      d.run_corruptions(f, 14, false, what);
      d.run_truncations(f, what);
    }
  }
  // Shapes the fast path declines, so that corrupting them into the common shape is compared too.
  for (std::uint8_t opc : {0x04, 0x0B, 0x12, 0x13, 0x17}) {
    d.run_corruptions(build(opc, 16, Shape{false, true}), 18, false, "VLAN " + std::string(opcode_info(opc).name));
    d.run_corruptions(build(opc, 16, Shape{}), 14, false, std::string(opcode_info(opc).name));
  }
  d.run_truncations(build(0x06, 4096, Shape{}), "WRITE First 4096");
  INFO(d.first);
  CHECK(d.mismatches == 0);
  CHECK(d.accepted > 0);
}

// The receive path's parse (parse_headers, the fast path inline) writes only the ext headers the
// opcode carries: every other field as the general parser leaves it, the carried ext headers'
// fields too, and the fields of headers the opcode lacks untouched (still the garbage they held).
TEST_CASE("parse_headers fills only the ext headers the opcode carries, the rest as the general parser",
          "[wire][parse_fast]") {
  for (std::uint8_t opc : kCommonOpcodes) {
    for (std::uint32_t len : {0u, 3u, 64u, 4096u}) {
      for (std::uint32_t seed : {0u, 7u}) {
        INFO(opcode_info(opc).name << " payload " << len << " seed " << seed);
        const auto f = build(opc, len, Shape{false, false, kEcnCe, 26, 0x8001}, seed);
        const auto n = static_cast<std::uint32_t>(f.size());
        PacketInfo fast, general, garbage;
        std::memset(&garbage, 0xA5, sizeof(garbage));
        fast = garbage;
        std::memset(&general, 0x5A, sizeof(general));
        ParseOptions o;
        o.verify_icrc = false;  // parse_headers leaves the ICRC to its caller
        REQUIRE(parse_headers(f.data(), n, fast, o) == DropReason::kNone);
        REQUIRE(parse_headers_general(f.data(), n, general, o) == DropReason::kNone);
        const std::uint8_t h = opcode_info(opc).headers;
        // The lacked headers' fields still hold the garbage.
        if ((h & kHdrReth) == 0) CHECK(fast.reth_va == garbage.reth_va);
        if ((h & kHdrAeth) == 0 && (h & kHdrImmDt) == 0) CHECK(fast.aeth_msn == garbage.aeth_msn);
        if ((h & kHdrImmDt) == 0 && (h & kHdrAeth) == 0) CHECK(fast.imm_data == garbage.imm_data);
        CHECK(fast.atomic_va == garbage.atomic_va);
        CHECK(fast.atomic_ack_orig == garbage.atomic_ack_orig);
        // Everything else, carried ext headers included, as the general parser's record.
        complete_ext_headers(fast);
        CHECK(first_difference(fast, general).empty());
      }
    }
  }
}
