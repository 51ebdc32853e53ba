// Frame builders: a per-QP header template plus per-packet fields -> RoCEv2 headers, ACKs, CNPs.
#pragma once

#include <cstdint>
#include <cstring>

#include "protocols/wire/ib_headers.h"
#include "protocols/wire/icrc.h"
#include "protocols/wire/icrc_template.h"
#include "protocols/wire/l2l3_headers.h"
#include "protocols/wire/opcode.h"

namespace droce::wire {

// Addressing of one side of a connection.
struct L2L3Address {
  std::uint8_t mac[6] = {};
  std::uint8_t ip[16] = {};  // IPv4 in the first 4 bytes
};

struct TemplateConfig {
  L2L3Address local;
  L2L3Address remote;
  bool ipv6 = false;
  bool vlan = false;
  std::uint16_t vlan_id = 0;
  std::uint8_t vlan_pcp = 0;
  std::uint8_t dscp = 0;
  std::uint8_t ecn = kEcnEct0;  // data leaves ECT(0) so switches can mark CE (DCQCN)
  std::uint8_t ttl = 64;
  std::uint16_t udp_src_port = 0xC000;
  std::uint16_t pkey = kDefaultPkey;
  std::uint32_t dest_qpn = 0;
};

// UDP source port for a QP pair, as Linux computes it (rdma_get_udp_sport: flow label from
// lqpn * rqpn folded to 20 bits, then 14 bits into 0xC000..0xFFFF). Matches rxe on the wire.
[[nodiscard]] std::uint16_t roce_udp_src_port(std::uint32_t local_qpn, std::uint32_t remote_qpn);

// The bytes every packet of a QP starts with (Ethernet [VLAN] IP UDP BTH), prebuilt once.
struct HeaderTemplate {
  static constexpr std::uint32_t kMaxBytes = 14 + 4 + 40 + 8 + 12;
  std::uint8_t bytes[kMaxBytes] = {};
  std::uint16_t l3_offset = 0;
  std::uint16_t bth_offset = 0;  // also the length of the template
  bool ipv6 = false;

  [[nodiscard]] static HeaderTemplate make(const TemplateConfig& cfg);
};

// Per-packet fields; only those of the opcode's headers are used.
struct PacketFields {
  std::uint8_t opcode = 0;
  std::uint32_t psn = 0;
  bool ack_req = false;
  bool se = false;
  bool becn = false;
  std::uint32_t dest_qpn = 0;  // 0: the template's
  std::uint32_t payload_len = 0;
  std::uint16_t ip_id = 0;
  std::uint8_t ecn_override = 0xFF;  // 0xFF: the template's ECN; ACK/CNP use Not-ECT
  std::uint8_t dscp_override = 0xFF;
  std::uint64_t reth_va = 0;
  std::uint32_t reth_rkey = 0;
  std::uint32_t reth_len = 0;
  std::uint8_t aeth_syndrome = 0;
  std::uint32_t aeth_msn = 0;
  std::uint32_t imm = 0;
  std::uint32_t ieth_rkey = 0;
  std::uint64_t atomic_va = 0;
  std::uint32_t atomic_rkey = 0;
  std::uint64_t atomic_swap_add = 0;
  std::uint64_t atomic_compare = 0;
  std::uint64_t atomic_ack_orig = 0;
};

[[nodiscard]] constexpr std::uint32_t pad_for(std::uint32_t payload_len) { return (4 - (payload_len & 3)) & 3; }

// Writes L2 through the last extended header into `out` (room: HeaderTemplate::kMaxBytes + 28)
// and returns their length. IP total length, ID and checksum and UDP length already account
// for payload + pad + ICRC, so the caller appends payload, pad zeros and the ICRC (see
// icrc.h) and the frame is complete.
[[nodiscard]] std::uint32_t write_headers(const HeaderTemplate& t, const PacketFields& f, std::uint8_t* out);

// Largest frame write_headers can start.
inline constexpr std::uint32_t kMaxHeaderBytes = HeaderTemplate::kMaxBytes + 28;

// Builds a complete contiguous frame (headers, copied payload, pad, ICRC) into `out` of
// `room` bytes; returns the frame length or 0 if it does not fit. For tests, ACKs and CNPs —
// the zero-copy datapath attaches the payload instead.
[[nodiscard]] std::uint32_t build_frame(const HeaderTemplate& t, const PacketFields& f, const std::uint8_t* payload,
                                        std::uint8_t* out, std::uint32_t room);

// --- Transmit fast path: a QP's headers copied as they leave, the ICRC from its template ---
//
// TxTemplate is a HeaderTemplate prepared once per QP for the datapath: two images of the headers
// exactly as they leave (data with the template's ECN, acknowledgements Not-ECT), so that
// write_tx_headers copies one and writes only what changes per frame (IPv4 total length, ID and
// checksum / IPv6 payload length, UDP length, BTH opcode, flags, AckReq and PSN, the extension
// headers). The ICRC (A17.4.1) is its template's CRC combined with those bytes
// (icrc_template.h), which reads none of the invariant ones: the variant fields that A17.4.1 and
// §7.8.1 replace with ones (IPv4 TOS, TTL, checksum / IPv6 traffic class, flow label, hop limit;
// UDP checksum; BTH byte 4) hold their real values from the copy on and are never stored twice.
// The IPv4 header checksum is the template's partial sum plus the two words a frame changes
// (total length, ID), the incremental form of RFC 1624 eqn. 3 (HC' = ~(C + m'), C the sum over
// the words that stay), instead of a sum over the whole header per frame.
//
// The extension headers after the BTH, in wire order (RETH or AtomicETH, AETH, AtomicAckETH, ImmDt,
// IETH; §9.3), from any fields type that names them as PacketFields does (rc::TxDescriptor too);
// returns the byte after them. The one writer of both header builders. `kHeaders` says which
// headers the caller can meet at all, so a builder that never sends atomics tests nothing for
// them per frame. A CNP's body is the caller's.
template <std::uint8_t kHeaders, class F>
[[gnu::always_inline]] inline std::uint8_t* write_ext_headers(const OpcodeInfo& op, const F& f, std::uint8_t* ext) {
  const std::uint8_t h = op.headers & kHeaders;
  if (h & kHdrReth) {
    auto* r = reinterpret_cast<Reth*>(ext);
    r->va = Be64(f.reth_va);
    r->rkey = Be32(f.reth_rkey);
    r->dma_len = Be32(f.reth_len);
    ext += sizeof(Reth);
  }
  if (h & kHdrAtomicEth) {
    auto* a = reinterpret_cast<AtomicEth*>(ext);
    a->va = Be64(f.atomic_va);
    a->rkey = Be32(f.atomic_rkey);
    a->swap_add = Be64(f.atomic_swap_add);
    a->compare = Be64(f.atomic_compare);
    ext += sizeof(AtomicEth);
  }
  if (h & kHdrAeth) {  // syndrome, then the 24-bit MSN: one big-endian word
    const std::uint32_t w =
        __builtin_bswap32(static_cast<std::uint32_t>(f.aeth_syndrome) << 24 | (f.aeth_msn & 0x00FFFFFFu));
    std::memcpy(ext, &w, 4);
    ext += sizeof(Aeth);
  }
  if (h & kHdrAtomicAckEth) {
    reinterpret_cast<AtomicAckEth*>(ext)->orig_data = Be64(f.atomic_ack_orig);
    ext += sizeof(AtomicAckEth);
  }
  if (h & kHdrImmDt) {
    reinterpret_cast<ImmDt*>(ext)->imm = Be32(f.imm);
    ext += sizeof(ImmDt);
  }
  if (h & kHdrIeth) {
    reinterpret_cast<Ieth*>(ext)->rkey = Be32(f.ieth_rkey);
    ext += sizeof(Ieth);
  }
  return ext;
}

// Only the opcodes whose extended headers are among RETH, AETH, ImmDt and IETH take this path
// (every opcode the RC datapath sends but the atomics); the others go through write_headers.
inline constexpr std::uint8_t kTxTemplateHeaders = kHdrReth | kHdrAeth | kHdrImmDt | kHdrIeth;
[[nodiscard]] inline bool tx_template_covers(const OpcodeInfo& op) {
  return op.valid() && (op.headers & ~kTxTemplateHeaders) == 0;
}

struct TxTemplate {
  // The headers as they leave, [0] with the template's ECN (data), [1] Not-ECT (acknowledgements;
  // as write_headers' ecn_override = kEcnNotEct); lengths, ID and IPv4 checksum zero.
  std::uint8_t image[2][HeaderTemplate::kMaxBytes] = {};
  std::uint16_t l3_offset = 0;
  std::uint16_t bth_offset = 0;
  bool ipv6 = false;
  std::uint32_t ip_sum[2] = {};  // IPv4: ones' complement sum of the words a frame keeps, per image
  IcrcTemplate icrc;             // the ICRC template of both images (ECN is an ICRC-variant field)

  [[nodiscard]] static TxTemplate make(const HeaderTemplate& t);
};

// The IPv4 header checksum of a TxTemplate frame from its total length and ID as stored (network
// order, read natively): the partial sum plus those two words, folded (RFC 1071 §2, RFC 1624).
// Returned in the byte order it is stored in, like the rest of the sum (native order).
[[nodiscard]] inline std::uint16_t tx_ipv4_checksum(const TxTemplate& t, std::uint16_t total_be, std::uint16_t id_be,
                                                    bool not_ect) {
  std::uint32_t sum = t.ip_sum[not_ect] + total_be + id_be;
  sum = (sum & 0xFFFFu) + (sum >> 16);
  sum = (sum & 0xFFFFu) + (sum >> 16);
  return static_cast<std::uint16_t>(~sum);
}

// Writes the headers of one packet at `out` (room: kMaxHeaderBytes), final but for the ICRC, and
// returns their length; the caller appends payload and pad, then seal_tx_frame (or, for a payload
// elsewhere, icrc_from_template_split). `F` is any struct with PacketFields' names for the BTH and
// RETH/AETH/ImmDt/IETH fields (rc::TxDescriptor has them); `op` must be opcode_info(f.opcode) and
// tx_template_covers(op). Byte-identical to write_headers with ecn_override = kEcnNotEct when
// `not_ect` (tests/wire/test_build_tx.cc).
template <class F>
[[nodiscard, gnu::always_inline]] inline std::uint32_t write_tx_headers(const TxTemplate& t, const OpcodeInfo& op,
                                                                        const F& f, std::uint16_t ip_id, bool not_ect,
                                                                        std::uint8_t* out) {
  const std::uint32_t pad = op.has_payload ? pad_for(f.payload_len) : 0;
  static_assert(sizeof(t.image[0]) <= kMaxHeaderBytes);
  std::memcpy(out, t.image[not_ect], sizeof(t.image[0]));  // fixed size: inline moves, not a call
  const std::uint32_t udp_len =
      static_cast<std::uint32_t>(sizeof(UdpHdr) + sizeof(Bth)) + op.ext_bytes + f.payload_len + pad + kIcrcBytes;
  std::uint8_t* l3 = out + t.l3_offset;
  const std::uint16_t udp_len_be = __builtin_bswap16(static_cast<std::uint16_t>(udp_len));
  if (t.ipv6) {
    std::memcpy(l3 + 4, &udp_len_be, 2);  // payload length
  } else {
    // Total length and ID, and the checksum from them (RFC 1624).
    const std::uint16_t total_be = __builtin_bswap16(static_cast<std::uint16_t>(udp_len + sizeof(Ipv4Hdr)));
    const std::uint16_t id_be = __builtin_bswap16(ip_id);
    std::memcpy(l3 + 2, &total_be, 2);
    std::memcpy(l3 + 4, &id_be, 2);
    const std::uint16_t cksum = tx_ipv4_checksum(t, total_be, id_be, not_ect);
    std::memcpy(l3 + 10, &cksum, 2);
  }
  std::uint8_t* bth = out + t.bth_offset;
  std::memcpy(bth - 4, &udp_len_be, 2);  // UDP length
  bth[0] = f.opcode;
  bth[1] = static_cast<std::uint8_t>((f.se ? 0x80 : 0) | pad << 4);  // SE, MigReq 0, PadCnt, TVer 0; P_Key stays
  const std::uint32_t ack_psn = __builtin_bswap32((f.ack_req ? 0x80000000u : 0u) | (f.psn & 0x00FFFFFFu));
  std::memcpy(bth + 8, &ack_psn, 4);
  std::uint8_t* ext = write_ext_headers<kTxTemplateHeaders>(op, f, bth + sizeof(Bth));
  return static_cast<std::uint32_t>(ext - out);
}

// The ICRC of a frame whose `len` bytes at `out` are headers written by write_tx_headers, payload
// and pad (A17.4.1): the header CRC from the template and the bytes the frame set
// (icrc_template.h), continued over extension headers, payload and pad. The headers are a copy
// of the template's, so their invariant bytes are not compared.
[[nodiscard]] inline std::uint32_t tx_icrc(const TxTemplate& t, const std::uint8_t* out, std::uint32_t len) {
  return icrc_from_template(t.icrc, out + t.l3_offset, len - t.l3_offset);
}

// Finishes such a frame: stores its ICRC after the `len` bytes and returns the frame length.
[[nodiscard]] inline std::uint32_t seal_tx_frame(const TxTemplate& t, std::uint8_t* out, std::uint32_t len) {
  icrc_store(out + len, tx_icrc(t, out, len));
  return len + kIcrcBytes;
}

// ACKNOWLEDGE (opcode 0x11) with an AETH: ACK, NAK or RNR NAK per `syndrome`, §9.3.5.
[[nodiscard]] std::uint32_t build_ack(const HeaderTemplate& t, std::uint32_t psn, std::uint8_t syndrome,
                                      std::uint32_t msn, std::uint8_t* out, std::uint32_t room);

// CNP, Annex A17.9.3: opcode 0x81, BECN set, DestQP = the sender's QP, PSN 0, 16 reserved zero
// bytes, ICRC; not ECN-capable (it must not itself be marked); `dscp` per the fabric's CNP
// class (mlx5 default 48).
[[nodiscard]] std::uint32_t build_cnp(const HeaderTemplate& t, std::uint32_t dest_qpn, std::uint8_t dscp,
                                      std::uint8_t* out, std::uint32_t room);

}  // namespace droce::wire
