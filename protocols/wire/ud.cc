// UD frames: parse after the RC parser's L2-L4 and BTH rules, the receiving QP's P_Key and Q_Key
// rules, and the SEND ONLY [with immediate] builder on top of write_headers.
#include "protocols/wire/ud.h"

#include <cstring>

#include "protocols/wire/icrc.h"
#include "protocols/wire/l2l3_headers.h"
#include "protocols/wire/opcode.h"
#include "protocols/wire/parse_general.h"

namespace droce::wire {
namespace {

constexpr std::uint32_t ud_ext_bytes(bool with_imm) {
  return static_cast<std::uint32_t>(sizeof(Deth) + (with_imm ? sizeof(ImmDt) : 0));
}

}  // namespace

UdRefusal parse_ud_frame(const std::uint8_t* frame, std::uint32_t len, UdPacket& out, DropReason& frame_reason,
                         bool verify_icrc) {
  out = UdPacket{};
  frame_reason = DropReason::kNone;
  PacketInfo pi;
  const DropReason r = parse_headers_general(frame, len, pi, ParseOptions{});
  // The RC parser stops at an opcode its table lacks, after the L2-L4 rules and the TVer check;
  // an opcode it knows is not UD.
  if (r == DropReason::kNone) return UdRefusal::kNotUd;
  if (r != DropReason::kUnknownOpcode) {
    frame_reason = r;
    return UdRefusal::kFrame;
  }
  if (!is_ud_opcode(pi.opcode)) return UdRefusal::kNotUd;

  std::memcpy(out.dst_mac, pi.dst_mac, 6);
  std::memcpy(out.src_mac, pi.src_mac, 6);
  out.has_vlan = pi.has_vlan;
  out.vlan_id = pi.vlan_id;
  out.vlan_pcp = pi.vlan_pcp;
  out.ipv6 = pi.ipv6;
  out.dscp = pi.dscp;
  std::memcpy(out.src_ip, pi.src_ip, 16);
  std::memcpy(out.dst_ip, pi.dst_ip, 16);
  out.udp_src_port = pi.udp_src_port;
  out.l3_offset = pi.l3_offset;

  // The parser checked that the UDP datagram lies inside the frame and holds a BTH and an ICRC.
  const std::uint32_t bth_off = pi.bth_offset;
  const auto* udp = reinterpret_cast<const UdpHdr*>(frame + bth_off - sizeof(UdpHdr));
  const std::uint32_t ib_len = udp->dgram_len.value() - static_cast<std::uint32_t>(sizeof(UdpHdr));
  const auto* bth = reinterpret_cast<const Bth*>(frame + bth_off);
  out.opcode = bth->opcode;
  out.se = bth->se();
  out.pkey = bth->pkey.value();
  out.dest_qpn = bth->dest_qp.value();
  out.psn = bth->psn.value();

  const std::uint32_t after_bth = ib_len - static_cast<std::uint32_t>(sizeof(Bth)) - kIcrcBytes;
  out.has_imm = out.opcode == kOpUdSendOnlyImm;
  const std::uint32_t ext = ud_ext_bytes(out.has_imm);
  if (after_bth < ext) return UdRefusal::kTruncatedDeth;
  const std::uint8_t* p = frame + bth_off + sizeof(Bth);
  const auto* deth = reinterpret_cast<const Deth*>(p);
  out.qkey = deth->qkey.value();
  out.src_qpn = deth->src_qp.value();
  if (out.has_imm) out.imm = reinterpret_cast<const ImmDt*>(p + sizeof(Deth))->imm.value();

  const std::uint32_t padded = after_bth - ext;
  const std::uint32_t pad = bth->pad_count();
  if (pad > padded || (padded & 3) != 0) return UdRefusal::kBadPadCount;
  out.payload_offset = static_cast<std::uint16_t>(bth_off + sizeof(Bth) + ext);
  out.payload_len = padded - pad;
  out.frame_len = bth_off + ib_len;

  if (verify_icrc) {
    const std::uint32_t icrc_off = bth_off + ib_len - kIcrcBytes;
    if (icrc_compute(frame + out.l3_offset, icrc_off - out.l3_offset, out.ipv6) != icrc_load(frame + icrc_off))
      return UdRefusal::kBadIcrc;
  }
  return UdRefusal::kNone;
}

UdRefusal ud_accept(const UdPacket& p, const UdQpRules& qp) {
  if (p.dest_qpn != qp.qpn) return UdRefusal::kWrongQp;
  if (!pkey_valid(p.pkey)) return UdRefusal::kBadPkey;
  bool pkey_ok = false;
  if (qp.pkeys == nullptr) {
    pkey_ok = pkey_matches(p.pkey, kDefaultPkey);
  } else {
    for (std::uint32_t i = 0; i < qp.pkey_count && !pkey_ok; ++i)
      pkey_ok = pkey_valid(qp.pkeys[i]) && pkey_matches(p.pkey, qp.pkeys[i]);
  }
  if (!pkey_ok) return UdRefusal::kBadPkey;
  // A datagram whose Q_Key differs from the QP's is silently dropped (ch. 9, UD Q_Key check).
  if (p.qkey != qp.qkey) return UdRefusal::kBadQkey;
  return UdRefusal::kNone;
}

UdSendFields gsi_reply_fields(const UdPacket& request) {
  UdSendFields f;
  f.dest_qpn = request.src_qpn;
  f.qkey = kGsiQkey;
  f.src_qpn = kGsiQpn;
  f.pkey = request.pkey;
  return f;
}

std::uint32_t ud_frame_bytes(const HeaderTemplate& t, bool with_imm, std::uint32_t payload_len) {
  return t.bth_offset + static_cast<std::uint32_t>(sizeof(Bth)) + ud_ext_bytes(with_imm) + payload_len +
         pad_for(payload_len) + kIcrcBytes;
}

std::uint32_t build_ud_send(const HeaderTemplate& t, const UdSendFields& f, const std::uint8_t* payload,
                            std::uint32_t payload_len, std::uint8_t* out, std::uint32_t room) {
  if (payload_len > 0xFFFF) return 0;
  const std::uint32_t total = ud_frame_bytes(t, f.with_imm, payload_len);
  if (room < total || room < kMaxHeaderBytes) return 0;
  // The headers up to the BTH are those of an RC SEND ONLY whose payload is DETH [+ ImmDt] + the
  // datagram: the same lengths, checksum and pad count. Only the opcode and the QPN differ.
  const std::uint32_t ext = ud_ext_bytes(f.with_imm);
  PacketFields pf;
  pf.opcode = static_cast<std::uint8_t>(Opcode::kSendOnly);
  pf.psn = f.psn;
  pf.se = f.se;
  pf.payload_len = ext + payload_len;
  pf.ip_id = f.ip_id;
  const std::uint32_t hdr = write_headers(t, pf, out);
  auto* bth = reinterpret_cast<Bth*>(out + t.bth_offset);
  bth->opcode = f.with_imm ? kOpUdSendOnlyImm : kOpUdSendOnly;
  bth->dest_qp = Be24(f.dest_qpn);
  if (f.pkey != 0) bth->pkey = Be16(f.pkey);
  bth->set_ack_req(false);
  std::uint8_t* p = out + hdr;
  auto* deth = reinterpret_cast<Deth*>(p);
  deth->qkey = Be32(f.qkey);
  deth->reserved = 0;
  deth->src_qp = Be24(f.src_qpn);
  if (f.with_imm) reinterpret_cast<ImmDt*>(p + sizeof(Deth))->imm = Be32(f.imm);
  p += ext;
  if (payload_len != 0) std::memcpy(p, payload, payload_len);
  p += payload_len;
  const std::uint32_t pad = pad_for(payload_len);
  std::memset(p, 0, pad);
  p += pad;
  const auto len = static_cast<std::uint32_t>(p - out);
  icrc_store(p, icrc_compute(out + t.l3_offset, len - t.l3_offset, t.ipv6));
  return len + kIcrcBytes;
}

}  // namespace droce::wire
