// ICRC by linearity (icrc_template.h): equal to the full CRC on every rxe capture frame, blind to
// §7.8.1's variant fields only, a template mismatch checked by the full CRC; the seeded CRC itself.
#include <zlib.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "protocols/wire/crc32.h"
#include "protocols/wire/icrc.h"
#include "protocols/wire/icrc_template.h"
#include "protocols/wire/parse.h"
#include "tests/common/pcap_frames.h"

using namespace droce::wire;

namespace {

const char* const kCaptures[] = {"rc_pingpong.pcap", "rc_pingpong_4k.pcap",   "send_bw.pcap",  "send_bw_64.pcap",
                                 "write_bw.pcap",    "write_bw_mtu4096.pcap", "read_bw.pcap",  "send_lat.pcap",
                                 "write_lat.pcap",   "read_lat.pcap",         "send_nak.pcap", "write_nak.pcap",
                                 "read_loss.pcap",   "write_ackloss.pcap"};

struct Roce {
  std::vector<std::uint8_t> frame;
  PacketInfo pi;
};

// Every RoCEv2 frame of a capture that parses (the ICRC checked by the parser's full CRC).
std::vector<Roce> roce_frames(const std::string& name) {
  std::vector<Roce> out;
  droce::test::for_each_pcap_frame(name, [&](const u_char* data, std::uint32_t caplen, int) {
    Roce r;
    if (parse_frame(data, caplen, r.pi) != DropReason::kNone) return;
    r.frame.assign(data, data + r.pi.frame_len);
    out.push_back(std::move(r));
  });
  return out;
}

std::uint32_t covered(const PacketInfo& pi) { return pi.frame_len - kIcrcBytes - pi.l3_offset; }
std::uint32_t stored_icrc(const Roce& r) { return icrc_load(r.frame.data() + r.pi.frame_len - kIcrcBytes); }

// Whether flipping bit `bit` of byte `off` (from l3) touches a field §7.8.1 leaves out of the ICRC.
bool variant_bit(bool ipv6, std::uint32_t off, int bit) {
  if (ipv6) {
    if (off == 0) return bit < 4;  // traffic class, high nibble (low nibble of byte 0)
    return off == 1 || off == 2 || off == 3 || off == 7 || off == 46 || off == 47 || off == 52;
  }
  return off == 1 || off == 8 || off == 10 || off == 11 || off == 26 || off == 27 || off == 32;
}

}  // namespace

TEST_CASE("crc32_continue is zlib's crc32, seeded across any split", "[wire][icrc][crc32]") {
  std::vector<std::uint8_t> b(600);
  std::mt19937 rng(37);
  for (auto& x : b) x = static_cast<std::uint8_t>(rng());
  for (std::uint32_t len : {0u, 1u, 3u, 7u, 8u, 15u, 16u, 31u, 48u, 64u, 100u, 127u, 128u, 200u, 255u, 256u, 600u}) {
    const auto want = static_cast<std::uint32_t>(crc32(0, b.data(), len));
    INFO(crc32_implementation() << ", " << len << " bytes");
    CHECK(crc32_continue(0, b.data(), len) == want);
    for (std::uint32_t cut : {0u, 1u, len / 3, len / 2, len}) {
      if (cut > len) continue;
      CHECK(crc32_continue(crc32_continue(0, b.data(), cut), b.data() + cut, len - cut) == want);
    }
  }
}

TEST_CASE("every rxe capture frame verifies through a per-QP template, learned from the capture",
          "[wire][icrc][captures]") {
  int frames = 0, by_template = 0;
  for (const char* name : kCaptures) {
    INFO(name);
    const auto roce = roce_frames(name);
    CHECK(!roce.empty());
    // One template per receiving QP (destination address and QPN: both ends of an rxe capture
    // use the same QPN), as each endpoint keeps one per QP slot.
    std::map<std::pair<std::string, std::uint32_t>, IcrcTemplate> per_qp;
    std::uint32_t misses = 0;
    for (const Roce& r : roce) {
      const std::uint8_t* l3 = r.frame.data() + r.pi.l3_offset;
      const std::string dst(reinterpret_cast<const char*>(l3 + (r.pi.ipv6 ? 24 : 16)), r.pi.ipv6 ? 16 : 4);
      IcrcTemplate& t = per_qp[{dst, r.pi.dest_qpn}];
      const std::uint32_t before = t.misses;
      CHECK(icrc_by_template(t, r.frame.data() + r.pi.l3_offset, covered(r.pi), r.pi.ipv6) == stored_icrc(r));
      if (t.misses == before) ++by_template;
      misses += t.misses - before;
      ++frames;
    }
    // rxe keeps a QP's addresses and source port: each QP learns once (its first frame), so the
    // rest took the template path.
    CHECK(misses == per_qp.size());
  }
  CHECK(frames == 609);
  CHECK(by_template == 609 - 28);  // 14 captures, a QP at each end
}

TEST_CASE("a flipped bit in any covered byte fails the ICRC; one in a variant field does not",
          "[wire][icrc][captures]") {
  int flips = 0, variant = 0;
  for (const char* name : kCaptures) {
    INFO(name);
    const auto roce = roce_frames(name);
    // The first frames of each capture (every opcode mix rxe sends there) and its longest one of
    // up to 1 KiB of payload (a 4 KiB one costs four times as many CRCs and checks nothing more).
    std::vector<const Roce*> picked;
    for (std::size_t i = 0; i < roce.size() && i < 6; ++i) picked.push_back(&roce[i]);
    const Roce* longest = nullptr;
    for (const Roce& r : roce)
      if (r.pi.frame_len <= 1100 && (longest == nullptr || r.pi.frame_len > longest->pi.frame_len)) longest = &r;
    if (longest != nullptr) picked.push_back(longest);
    for (const Roce* r : picked) {
      IcrcTemplate learned;
      learned.learn(r->frame.data() + r->pi.l3_offset, r->pi.ipv6);
      const std::uint32_t want = stored_icrc(*r);
      const std::uint32_t n = covered(r->pi);
      std::vector<std::uint8_t> f = r->frame;
      std::uint8_t* l3 = f.data() + r->pi.l3_offset;
      // Every bit from the IP header to the ICRC, the ICRC's own bytes included.
      for (std::uint32_t off = 0; off < n + kIcrcBytes; ++off) {
        for (int bit = 0; bit < 8; ++bit) {
          l3[off] ^= static_cast<std::uint8_t>(1u << bit);
          IcrcTemplate t = learned;  // the template of the unflipped frame: a flipped invariant byte misses it
          const std::uint32_t by_template = icrc_by_template(t, l3, n, r->pi.ipv6);
          const std::uint32_t full = icrc_compute(l3, n, r->pi.ipv6);
          const std::uint32_t got_stored = icrc_load(l3 + n);
          INFO("offset " << off << " bit " << bit);
          CHECK(by_template == full);
          if (off >= n) {
            CHECK(got_stored != full);  // the ICRC itself damaged
          } else if (variant_bit(r->pi.ipv6, off, bit)) {
            CHECK(full == want);
            ++variant;
          } else {
            CHECK(full != want);
          }
          l3[off] ^= static_cast<std::uint8_t>(1u << bit);
          ++flips;
        }
      }
    }
  }
  CHECK(flips > 50000);
  CHECK(variant > 0);
}

TEST_CASE("a template mismatch is not an error: the frame is checked by the full CRC and learned", "[wire][icrc]") {
  std::mt19937 rng(3737);
  for (const bool ipv6 : {false, true}) {
    const std::uint32_t hdr = ipv6 ? 60 : 40;
    std::vector<std::uint8_t> a(hdr + 64 + 16);
    for (auto& x : a) x = static_cast<std::uint8_t>(rng());
    a[0] = ipv6 ? 0x60 : 0x45;
    const auto n = static_cast<std::uint32_t>(a.size());
    IcrcTemplate t;
    INFO((ipv6 ? "IPv6" : "IPv4"));
    CHECK(icrc_by_template(t, a.data(), n, ipv6) == icrc_compute(a.data(), n, ipv6));
    CHECK(t.misses == 1);  // the first frame teaches the template
    // The per-frame bytes (lengths, IPv4 ID, BTH opcode, flags, AckReq, PSN) and payload change:
    // the template path, the same CRC as a full one.
    for (int k = 0; k < 200; ++k) {
      std::vector<std::uint8_t> b = a;
      const std::uint32_t var4[] = {2, 3, 4, 5, 24, 25, 28, 29, 36, 37, 38, 39};
      const std::uint32_t var6[] = {4, 5, 44, 45, 48, 49, 56, 57, 58, 59};
      if (ipv6) {
        for (std::uint32_t o : var6) b[o] = static_cast<std::uint8_t>(rng());
      } else {
        for (std::uint32_t o : var4) b[o] = static_cast<std::uint8_t>(rng());
      }
      for (std::uint32_t o = hdr; o < n; ++o) b[o] = static_cast<std::uint8_t>(rng());
      CHECK(icrc_by_template(t, b.data(), n, ipv6) == icrc_compute(b.data(), n, ipv6));
    }
    CHECK(t.misses == 1);
    // Another UDP source port (an invariant byte): missed, CRC'd in full, learned.
    std::vector<std::uint8_t> c = a;
    c[ipv6 ? 40 : 20] ^= 0x5A;
    CHECK(icrc_by_template(t, c.data(), n, ipv6) == icrc_compute(c.data(), n, ipv6));
    CHECK(t.misses == 2);
    CHECK(icrc_by_template(t, c.data(), n, ipv6) == icrc_compute(c.data(), n, ipv6));
    CHECK(t.misses == 2);
    // A frame of the other IP version misses too; one too short for the headers gives 0.
    std::vector<std::uint8_t> other(60 + 32, 0x11);
    other[0] = ipv6 ? 0x45 : 0x60;
    CHECK(icrc_by_template(t, other.data(), 92, !ipv6) == icrc_compute(other.data(), 92, !ipv6));
    CHECK(icrc_by_template(t, a.data(), hdr - 1, ipv6) == 0);
  }
}
