// General frame parser: every frame shape, bounds-checked at every header, drop reason per rule (IBTA §9.2-9.3, A17.4).
#include "protocols/wire/parse_general.h"

#include <rte_ip.h>

#include <cstring>

#include "protocols/wire/ib_headers.h"
#include "protocols/wire/l2l3_headers.h"

namespace droce::wire {
namespace {

template <typename T>
const T* header_at(const std::uint8_t* frame, std::uint32_t len, std::uint32_t off) {
  return off + sizeof(T) <= len ? reinterpret_cast<const T*>(frame + off) : nullptr;
}

// RFC 1071: a correct header (checksum included) sums to all ones, in either byte order.
bool ipv4_checksum_ok(const std::uint8_t* h, std::uint32_t n) { return rte_raw_cksum(h, n) == 0xFFFF; }

}  // namespace

DropReason parse_headers_general(const std::uint8_t* frame, std::uint32_t len, PacketInfo& out,
                                 const ParseOptions& opt) {
  std::memset(&out, 0, sizeof(out));
  const auto* eth = header_at<EthHdr>(frame, len, 0);
  if (eth == nullptr) return DropReason::kTruncatedEthernet;
  std::memcpy(out.dst_mac, eth->dst, 6);
  std::memcpy(out.src_mac, eth->src, 6);
  std::uint32_t off = sizeof(EthHdr);
  std::uint16_t type = eth->ether_type.value();
  if (type == kEtherTypeQinQ) return DropReason::kStackedVlan;
  if (type == kEtherTypeVlan) {
    const auto* vlan = header_at<VlanHdr>(frame, len, off);
    if (vlan == nullptr) return DropReason::kTruncatedEthernet;
    out.has_vlan = true;
    out.vlan_pcp = vlan->pcp();
    out.vlan_id = vlan->vid();
    type = vlan->ether_type.value();
    off += sizeof(VlanHdr);
    if (type == kEtherTypeVlan || type == kEtherTypeQinQ) return DropReason::kStackedVlan;
  }

  out.l3_offset = static_cast<std::uint16_t>(off);
  std::uint32_t l4_len = 0;  // UDP datagram bytes according to the IP header
  if (type == kEtherTypeIpv4) {
    const auto* ip = header_at<Ipv4Hdr>(frame, len, off);
    if (ip == nullptr) return DropReason::kTruncatedIp;
    if (ip->version() != 4) return DropReason::kBadIpVersion;
    if (ip->header_bytes() < sizeof(Ipv4Hdr)) return DropReason::kBadIpHeaderLength;
    if (ip->header_bytes() != sizeof(Ipv4Hdr)) return DropReason::kIpOptions;  // RoCEv2 never sends options
    const std::uint32_t total = ip->total_length.value();
    if (total < sizeof(Ipv4Hdr) + sizeof(UdpHdr) || off + total > len) return DropReason::kBadIpTotalLength;
    if (opt.verify_ip_checksum && !ipv4_checksum_ok(frame + off, sizeof(Ipv4Hdr))) return DropReason::kBadIpChecksum;
    if (ip->more_fragments() || ip->frag_offset_units() != 0) return DropReason::kIpFragment;
    if (ip->protocol != kIpProtoUdp) return DropReason::kNotUdp;
    out.ecn = ip->ecn();
    out.dscp = ip->dscp();
    std::memcpy(out.src_ip, ip->src_addr, 4);
    std::memcpy(out.dst_ip, ip->dst_addr, 4);
    off += sizeof(Ipv4Hdr);
    l4_len = total - static_cast<std::uint32_t>(sizeof(Ipv4Hdr));
  } else if (type == kEtherTypeIpv6) {
    const auto* ip = header_at<Ipv6Hdr>(frame, len, off);
    if (ip == nullptr) return DropReason::kTruncatedIp;
    if (ip->version() != 6) return DropReason::kBadIpVersion;
    const std::uint32_t payload = ip->payload_len.value();
    if (payload < sizeof(UdpHdr) || off + sizeof(Ipv6Hdr) + payload > len) return DropReason::kBadIpTotalLength;
    if (ip->next_header != kIpProtoUdp) return DropReason::kNotUdp;  // no extension headers on RoCEv2
    out.ipv6 = true;
    out.ecn = ip->ecn();
    out.dscp = static_cast<std::uint8_t>(ip->traffic_class() >> 2);
    std::memcpy(out.src_ip, ip->src_addr, 16);
    std::memcpy(out.dst_ip, ip->dst_addr, 16);
    off += sizeof(Ipv6Hdr);
    l4_len = payload;
  } else {
    return DropReason::kNotIp;
  }

  const auto* udp = header_at<UdpHdr>(frame, len, off);
  if (udp == nullptr) return DropReason::kTruncatedUdp;
  if (udp->dst_port.value() != kRoceV2UdpPort) return DropReason::kNotRocePort;
  const std::uint32_t udp_len = udp->dgram_len.value();
  if (udp_len != l4_len) return DropReason::kBadUdpLength;
  out.udp_src_port = udp->src_port.value();
  off += sizeof(UdpHdr);

  // Everything after the UDP header: BTH, ext headers, payload, pad, ICRC.
  const std::uint32_t ib_len = udp_len - static_cast<std::uint32_t>(sizeof(UdpHdr));
  if (ib_len < sizeof(Bth) + kIcrcBytes) return DropReason::kTruncatedBth;
  const auto* bth = reinterpret_cast<const Bth*>(frame + off);
  out.bth_offset = static_cast<std::uint16_t>(off);
  if (bth->tver() != 0) return DropReason::kBadTver;
  out.opcode = bth->opcode;
  const OpcodeInfo& op = opcode_info(bth->opcode);
  if (!op.valid() || (is_manufacturer_opcode(bth->opcode) && !opt.accept_droce_sr)) return DropReason::kUnknownOpcode;
  out.se = bth->se();
  out.mig_req = bth->mig_req();  // accepted either way: some hardware sets M on ACKs
  out.pad_count = bth->pad_count();
  out.pkey = bth->pkey.value();
  out.fecn = bth->fecn();
  out.becn = bth->becn();
  out.dest_qpn = bth->dest_qp.value();
  out.ack_req = bth->ack_requested();
  out.psn = bth->psn.value();
  off += sizeof(Bth);

  const std::uint32_t after_bth = ib_len - static_cast<std::uint32_t>(sizeof(Bth)) - kIcrcBytes;
  if (after_bth < op.ext_bytes) return DropReason::kTruncatedExtHeaders;
  const std::uint8_t* ext = frame + off;
  if (op.headers & kHdrReth) {
    const auto* h = reinterpret_cast<const Reth*>(ext);
    out.reth_va = h->va.value();
    out.reth_rkey = h->rkey.value();
    out.reth_dma_len = h->dma_len.value();
    ext += sizeof(Reth);
  }
  if (op.headers & kHdrAtomicEth) {
    const auto* h = reinterpret_cast<const AtomicEth*>(ext);
    out.atomic_va = h->va.value();
    out.atomic_rkey = h->rkey.value();
    out.atomic_swap_add = h->swap_add.value();
    out.atomic_compare = h->compare.value();
    ext += sizeof(AtomicEth);
  }
  if (op.headers & kHdrAeth) {
    const auto* h = reinterpret_cast<const Aeth*>(ext);
    out.aeth_syndrome = h->syndrome;
    out.aeth_msn = h->msn.value();
    ext += sizeof(Aeth);
  }
  if (op.headers & kHdrAtomicAckEth) {
    out.atomic_ack_orig = reinterpret_cast<const AtomicAckEth*>(ext)->orig_data.value();
    ext += sizeof(AtomicAckEth);
  }
  if (op.headers & kHdrImmDt) {
    out.imm_data = reinterpret_cast<const ImmDt*>(ext)->imm.value();
    ext += sizeof(ImmDt);
  }
  if (op.headers & kHdrIeth) {
    out.ieth_rkey = reinterpret_cast<const Ieth*>(ext)->rkey.value();
    ext += sizeof(Ieth);
  }
  off += op.ext_bytes;

  // Payload + pad is what remains; pad makes it a multiple of 4 (§9.2: PadCnt).
  const std::uint32_t padded = after_bth - op.ext_bytes;
  if (!op.has_payload) {
    if (padded != 0 || out.pad_count != 0) return DropReason::kBadPadCount;
  } else if (out.pad_count > padded || (padded & 3) != 0) {
    return DropReason::kBadPadCount;
  }
  out.payload_offset = static_cast<std::uint16_t>(off);
  out.payload_len = padded - out.pad_count;
  out.frame_len = off + padded + kIcrcBytes;

  return DropReason::kNone;
}

}  // namespace droce::wire
