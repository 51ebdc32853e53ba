// Header writers: copy the template, patch lengths/ID/checksum, BTH and ext headers; ICRC last.
#include "protocols/wire/build.h"

#include <cstring>

#include "protocols/wire/icrc.h"

namespace droce::wire {
namespace {

// RFC 1071 over the 20-byte header (no options: RoCEv2 sends none) as five 32-bit adds: the
// ones' complement sum is the same in either byte order, so the folded native-order sum is
// stored as is. rte_ipv4_cksum's general loop cost ~70 instructions per frame here; this ~15.
void set_ipv4_checksum(std::uint8_t* l3) {
  auto* ip = reinterpret_cast<Ipv4Hdr*>(l3);
  ip->hdr_checksum = Be16(0);
  std::uint32_t w[5];
  std::memcpy(w, l3, sizeof(w));
  std::uint64_t sum = std::uint64_t{w[0]} + w[1] + w[2] + w[3] + w[4];
  sum = (sum & 0xFFFFFFFFu) + (sum >> 32);
  sum = (sum & 0xFFFFu) + (sum >> 16);
  sum = (sum & 0xFFFFu) + (sum >> 16);
  sum = (sum & 0xFFFFu) + (sum >> 16);
  const auto c = static_cast<std::uint16_t>(~sum);
  std::memcpy(l3 + 10, &c, sizeof(c));  // byte offset of the checksum field
}

}  // namespace

std::uint16_t roce_udp_src_port(std::uint32_t local_qpn, std::uint32_t remote_qpn) {
  std::uint64_t v = static_cast<std::uint64_t>(local_qpn) * remote_qpn;
  v ^= v >> 20;
  v ^= v >> 40;
  const auto fl = static_cast<std::uint32_t>(v & 0xFFFFF);
  const std::uint32_t low = (fl & 0x3FFF) ^ ((fl & 0xFC000) >> 14);
  return static_cast<std::uint16_t>(low | 0xC000);
}

HeaderTemplate HeaderTemplate::make(const TemplateConfig& c) {
  HeaderTemplate t;
  t.ipv6 = c.ipv6;
  std::uint8_t* p = t.bytes;
  auto* eth = reinterpret_cast<EthHdr*>(p);
  std::memcpy(eth->dst, c.remote.mac, 6);
  std::memcpy(eth->src, c.local.mac, 6);
  std::uint32_t off = sizeof(EthHdr);
  const std::uint16_t l3_type = c.ipv6 ? kEtherTypeIpv6 : kEtherTypeIpv4;
  if (c.vlan) {
    eth->ether_type = Be16(kEtherTypeVlan);
    auto* v = reinterpret_cast<VlanHdr*>(p + off);
    v->tci = Be16(static_cast<std::uint16_t>((c.vlan_pcp & 7) << 13 | (c.vlan_id & 0x0FFF)));
    v->ether_type = Be16(l3_type);
    off += sizeof(VlanHdr);
  } else {
    eth->ether_type = Be16(l3_type);
  }
  t.l3_offset = static_cast<std::uint16_t>(off);
  const std::uint8_t tos = static_cast<std::uint8_t>((c.dscp & 0x3F) << 2 | (c.ecn & 3));
  if (c.ipv6) {
    auto* ip = reinterpret_cast<Ipv6Hdr*>(p + off);
    ip->vtc_flow = Be32(6u << 28 | static_cast<std::uint32_t>(tos) << 20);
    ip->next_header = kIpProtoUdp;
    ip->hop_limits = c.ttl;
    std::memcpy(ip->src_addr, c.local.ip, 16);
    std::memcpy(ip->dst_addr, c.remote.ip, 16);
    off += sizeof(Ipv6Hdr);
  } else {
    auto* ip = reinterpret_cast<Ipv4Hdr*>(p + off);
    ip->version_ihl = 0x45;
    ip->tos = tos;
    ip->fragment_offset = Be16(kIpv4DontFragment);
    ip->ttl = c.ttl;
    ip->protocol = kIpProtoUdp;
    std::memcpy(ip->src_addr, c.local.ip, 4);
    std::memcpy(ip->dst_addr, c.remote.ip, 4);
    off += sizeof(Ipv4Hdr);
  }
  auto* udp = reinterpret_cast<UdpHdr*>(p + off);
  udp->src_port = Be16(c.udp_src_port);
  udp->dst_port = Be16(kRoceV2UdpPort);
  udp->dgram_cksum = Be16(0);  // A17.4.2: RoCEv2 senders send 0
  off += sizeof(UdpHdr);
  t.bth_offset = static_cast<std::uint16_t>(off);
  auto* bth = reinterpret_cast<Bth*>(p + off);
  bth->pkey = Be16(c.pkey);
  bth->dest_qp = Be24(c.dest_qpn);
  return t;
}

std::uint32_t write_headers(const HeaderTemplate& t, const PacketFields& f, std::uint8_t* out) {
  const OpcodeInfo& op = opcode_info(f.opcode);
  const std::uint32_t pad = op.has_payload ? pad_for(f.payload_len) : 0;
  // The whole template array, a fixed size the compiler copies inline (a library call for the
  // run-time length cost ~20 instructions); what lies past this template's BTH is overwritten
  // by the ext headers and payload or trimmed away by the caller.
  static_assert(sizeof(t.bytes) <= kMaxHeaderBytes);
  std::memcpy(out, t.bytes, sizeof(t.bytes));
  const std::uint32_t ib_len =
      static_cast<std::uint32_t>(sizeof(Bth)) + op.ext_bytes + f.payload_len + pad + kIcrcBytes;
  const std::uint32_t udp_len = ib_len + static_cast<std::uint32_t>(sizeof(UdpHdr));
  std::uint8_t* l3 = out + t.l3_offset;
  if (t.ipv6) {
    auto* ip = reinterpret_cast<Ipv6Hdr*>(l3);
    ip->payload_len = Be16(static_cast<std::uint16_t>(udp_len));
    if (f.ecn_override != 0xFF || f.dscp_override != 0xFF) {
      std::uint32_t v = ip->vtc_flow.value();
      std::uint8_t tc = static_cast<std::uint8_t>(v >> 20);
      if (f.ecn_override != 0xFF) tc = static_cast<std::uint8_t>((tc & ~3u) | (f.ecn_override & 3));
      if (f.dscp_override != 0xFF) tc = static_cast<std::uint8_t>((tc & 3u) | (f.dscp_override & 0x3F) << 2);
      ip->vtc_flow = Be32((v & 0xF00FFFFFu) | static_cast<std::uint32_t>(tc) << 20);
    }
  } else {
    auto* ip = reinterpret_cast<Ipv4Hdr*>(l3);
    ip->total_length = Be16(static_cast<std::uint16_t>(udp_len + sizeof(Ipv4Hdr)));
    ip->packet_id = Be16(f.ip_id);
    if (f.ecn_override != 0xFF) ip->tos = static_cast<std::uint8_t>((ip->tos & ~3u) | (f.ecn_override & 3));
    if (f.dscp_override != 0xFF) ip->tos = static_cast<std::uint8_t>((ip->tos & 3u) | (f.dscp_override & 0x3F) << 2);
    set_ipv4_checksum(l3);
  }
  auto* udp = reinterpret_cast<UdpHdr*>(out + t.bth_offset - sizeof(UdpHdr));
  udp->dgram_len = Be16(static_cast<std::uint16_t>(udp_len));

  auto* bth = reinterpret_cast<Bth*>(out + t.bth_offset);
  bth->opcode = f.opcode;
  bth->set_flags(f.se, false, static_cast<std::uint8_t>(pad));
  bth->fecn_becn = f.becn ? 0x40 : 0x00;
  if (f.dest_qpn != 0) bth->dest_qp = Be24(f.dest_qpn);
  bth->set_ack_req(f.ack_req);
  bth->psn = Be24(f.psn);

  std::uint8_t* ext = write_ext_headers<0xFF>(op, f, out + t.bth_offset + sizeof(Bth));
  if (op.headers & kHdrCnp) {
    std::memset(ext, 0, sizeof(CnpBody));
    ext += sizeof(CnpBody);
  }
  return static_cast<std::uint32_t>(ext - out);
}

TxTemplate TxTemplate::make(const HeaderTemplate& h) {
  TxTemplate t;
  t.l3_offset = h.l3_offset;
  t.bth_offset = h.bth_offset;
  t.ipv6 = h.ipv6;
  std::memcpy(t.image[0], h.bytes, sizeof(t.image[0]));
  std::memcpy(t.image[1], h.bytes, sizeof(t.image[1]));
  std::uint8_t* not_ect = t.image[1] + h.l3_offset;
  if (h.ipv6) {
    // Traffic class bits 27:20 of the first word; ECN is its low two bits (RFC 3168 §5).
    not_ect[1] = static_cast<std::uint8_t>(not_ect[1] & ~(3u << 4));
  } else {
    not_ect[1] = static_cast<std::uint8_t>(not_ect[1] & ~3u);  // TOS's ECN bits
    // The words a frame keeps, read as stored (the ones' complement sum is the same in either
    // byte order, RFC 1071 §2(B)): all but total length, ID and the checksum, all zero here.
    for (int v = 0; v < 2; ++v) {
      const std::uint8_t* l3 = t.image[v] + h.l3_offset;
      std::uint32_t sum = 0;
      for (std::size_t i = 0; i < sizeof(Ipv4Hdr); i += 2) {
        std::uint16_t w;
        std::memcpy(&w, l3 + i, 2);
        sum += w;
      }
      t.ip_sum[v] = sum;
    }
  }
  // Both images differ only in ECN, which the ICRC masks (§7.8.1): one template for both.
  t.icrc.learn(t.image[0] + h.l3_offset, h.ipv6);
  return t;
}

std::uint32_t build_frame(const HeaderTemplate& t, const PacketFields& f, const std::uint8_t* payload,
                          std::uint8_t* out, std::uint32_t room) {
  const OpcodeInfo& op = opcode_info(f.opcode);
  if (!op.valid()) return 0;
  const std::uint32_t pad = op.has_payload ? pad_for(f.payload_len) : 0;
  const std::uint32_t need =
      t.bth_offset + static_cast<std::uint32_t>(sizeof(Bth)) + op.ext_bytes + f.payload_len + pad + kIcrcBytes;
  if (need > room || (!op.has_payload && f.payload_len != 0)) return 0;
  std::uint32_t n = 0;
  if (room >= kMaxHeaderBytes) {
    n = write_headers(t, f, out);
  } else {  // write_headers needs kMaxHeaderBytes of room
    std::uint8_t hdr[kMaxHeaderBytes];
    n = write_headers(t, f, hdr);
    std::memcpy(out, hdr, n);
  }
  if (f.payload_len != 0) std::memcpy(out + n, payload, f.payload_len);
  n += f.payload_len;
  std::memset(out + n, 0, pad);
  n += pad;
  icrc_store(out + n, icrc_compute_in_place(out + t.l3_offset, n - t.l3_offset, t.ipv6));
  return n + kIcrcBytes;
}

std::uint32_t build_ack(const HeaderTemplate& t, std::uint32_t psn, std::uint8_t syndrome, std::uint32_t msn,
                        std::uint8_t* out, std::uint32_t room) {
  PacketFields f;
  f.opcode = static_cast<std::uint8_t>(Opcode::kAck);
  f.psn = psn;
  f.aeth_syndrome = syndrome;
  f.aeth_msn = msn;
  f.ecn_override = kEcnNotEct;
  return build_frame(t, f, nullptr, out, room);
}

std::uint32_t build_cnp(const HeaderTemplate& t, std::uint32_t dest_qpn, std::uint8_t dscp, std::uint8_t* out,
                        std::uint32_t room) {
  PacketFields f;
  f.opcode = static_cast<std::uint8_t>(Opcode::kCnp);
  f.dest_qpn = dest_qpn;
  f.becn = true;
  f.ecn_override = kEcnNotEct;
  f.dscp_override = dscp;
  return build_frame(t, f, nullptr, out, room);
}

}  // namespace droce::wire
