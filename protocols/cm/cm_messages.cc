// CM message bodies to and from MAD bytes, field by field at the offsets of §12.6.
#include "protocols/cm/cm_messages.h"

#include <cstring>

namespace droce::cm {
namespace {

// Big-endian loads and stores at a byte offset of the MAD data; 24-bit fields are QPNs, PSNs and
// EECNs (the high three bytes of a word whose low byte is another field).
struct Out {
  std::uint8_t* d;
  void u8(std::uint32_t off, std::uint32_t v) const { d[off] = static_cast<std::uint8_t>(v); }
  void u16(std::uint32_t off, std::uint32_t v) const {
    d[off] = static_cast<std::uint8_t>(v >> 8);
    d[off + 1] = static_cast<std::uint8_t>(v);
  }
  void u24(std::uint32_t off, std::uint32_t v) const {
    d[off] = static_cast<std::uint8_t>(v >> 16);
    d[off + 1] = static_cast<std::uint8_t>(v >> 8);
    d[off + 2] = static_cast<std::uint8_t>(v);
  }
  void u32(std::uint32_t off, std::uint32_t v) const {
    u16(off, v >> 16);
    u16(off + 2, v & 0xFFFF);
  }
  void u64(std::uint32_t off, std::uint64_t v) const {
    u32(off, static_cast<std::uint32_t>(v >> 32));
    u32(off + 4, static_cast<std::uint32_t>(v));
  }
  void bytes(std::uint32_t off, const std::uint8_t* p, std::uint32_t n) const { std::memcpy(d + off, p, n); }
};

struct In {
  const std::uint8_t* d;
  [[nodiscard]] std::uint8_t u8(std::uint32_t off) const { return d[off]; }
  [[nodiscard]] std::uint16_t u16(std::uint32_t off) const {
    return static_cast<std::uint16_t>(d[off] << 8 | d[off + 1]);
  }
  [[nodiscard]] std::uint32_t u24(std::uint32_t off) const {
    return std::uint32_t{d[off]} << 16 | std::uint32_t{d[off + 1]} << 8 | d[off + 2];
  }
  [[nodiscard]] std::uint32_t u32(std::uint32_t off) const { return std::uint32_t{u16(off)} << 16 | u16(off + 2); }
  [[nodiscard]] std::uint64_t u64(std::uint32_t off) const { return std::uint64_t{u32(off)} << 32 | u32(off + 4); }
  void bytes(std::uint32_t off, std::uint8_t* p, std::uint32_t n) const { std::memcpy(p, d + off, n); }
};

// A path at `off` (REQ data byte 52 or 96), §12.6.5: LIDs, GIDs, then
// +36: flow label (20 bits), reserved (6), packet rate (6); +40 traffic class; +41 hop limit;
// +42: SL b7..b4, subnet local b3; +43: local ACK timeout b7..b3.
void put_path(const Out& o, std::uint32_t off, const CmPath& p) {
  o.u16(off, p.local_lid);
  o.u16(off + 2, p.remote_lid);
  o.bytes(off + 4, p.local_gid, 16);
  o.bytes(off + 20, p.remote_gid, 16);
  o.u32(off + 36, (p.flow_label & 0xFFFFFu) << 12 | (p.packet_rate & 0x3Fu));
  o.u8(off + 40, p.traffic_class);
  o.u8(off + 41, p.hop_limit);
  o.u8(off + 42, (p.sl & 0xFu) << 4 | (p.subnet_local ? 0x08u : 0u));
  o.u8(off + 43, (p.local_ack_timeout & 0x1Fu) << 3);
}
void get_path(const In& in, std::uint32_t off, CmPath& p) {
  p.local_lid = in.u16(off);
  p.remote_lid = in.u16(off + 2);
  in.bytes(off + 4, p.local_gid, 16);
  in.bytes(off + 20, p.remote_gid, 16);
  const std::uint32_t w = in.u32(off + 36);
  p.flow_label = w >> 12;
  p.packet_rate = static_cast<std::uint8_t>(w & 0x3F);
  p.traffic_class = in.u8(off + 40);
  p.hop_limit = in.u8(off + 41);
  p.sl = in.u8(off + 42) >> 4;
  p.subnet_local = (in.u8(off + 42) & 0x08) != 0;
  p.local_ack_timeout = in.u8(off + 43) >> 3;
}

void put(const Out& o, const CmReq& m) {
  o.u32(0, m.local_comm_id);
  o.u24(5, m.vendor_id);
  o.u64(8, m.service_id);
  o.u64(16, m.local_ca_guid);
  o.u32(28, m.local_qkey);
  o.u24(32, m.local_qpn);
  o.u8(35, m.responder_resources);
  o.u24(36, m.local_eecn);
  o.u8(39, m.initiator_depth);
  o.u24(40, m.remote_eecn);
  o.u8(43, (m.remote_cm_response_timeout & 0x1Fu) << 3 | (m.transport_service_type & 0x3u) << 1 |
               (m.end_to_end_flow_control ? 1u : 0u));
  o.u24(44, m.starting_psn);
  o.u8(47, (m.local_cm_response_timeout & 0x1Fu) << 3 | (m.retry_count & 0x7u));
  o.u16(48, m.pkey);
  o.u8(50, (m.path_mtu & 0xFu) << 4 | (m.rdc_exists ? 0x08u : 0u) | (m.rnr_retry_count & 0x7u));
  o.u8(51, (m.max_cm_retries & 0xFu) << 4 | (m.srq ? 0x08u : 0u) | (m.extended_transport_type & 0x7u));
  put_path(o, 52, m.primary);
  put_path(o, 96, m.alternate);
  o.bytes(140, m.private_data, kReqPrivateBytes);
}
void get(const In& in, CmReq& m) {
  m.local_comm_id = in.u32(0);
  m.vendor_id = in.u24(5);
  m.service_id = in.u64(8);
  m.local_ca_guid = in.u64(16);
  m.local_qkey = in.u32(28);
  m.local_qpn = in.u24(32);
  m.responder_resources = in.u8(35);
  m.local_eecn = in.u24(36);
  m.initiator_depth = in.u8(39);
  m.remote_eecn = in.u24(40);
  m.remote_cm_response_timeout = in.u8(43) >> 3;
  m.transport_service_type = (in.u8(43) >> 1) & 0x3;
  m.end_to_end_flow_control = (in.u8(43) & 1) != 0;
  m.starting_psn = in.u24(44);
  m.local_cm_response_timeout = in.u8(47) >> 3;
  m.retry_count = in.u8(47) & 0x7;
  m.pkey = in.u16(48);
  m.path_mtu = in.u8(50) >> 4;
  m.rdc_exists = (in.u8(50) & 0x08) != 0;
  m.rnr_retry_count = in.u8(50) & 0x7;
  m.max_cm_retries = in.u8(51) >> 4;
  m.srq = (in.u8(51) & 0x08) != 0;
  m.extended_transport_type = in.u8(51) & 0x7;
  get_path(in, 52, m.primary);
  get_path(in, 96, m.alternate);
  in.bytes(140, m.private_data, kReqPrivateBytes);
}

void put(const Out& o, const CmMra& m) {
  o.u32(0, m.local_comm_id);
  o.u32(4, m.remote_comm_id);
  o.u8(8, (static_cast<std::uint32_t>(m.message) & 0x3u) << 6);
  o.u8(9, (m.service_timeout & 0x1Fu) << 3);
  o.bytes(10, m.private_data, kMraPrivateBytes);
}
void get(const In& in, CmMra& m) {
  m.local_comm_id = in.u32(0);
  m.remote_comm_id = in.u32(4);
  m.message = static_cast<MraTarget>(in.u8(8) >> 6);
  m.service_timeout = in.u8(9) >> 3;
  in.bytes(10, m.private_data, kMraPrivateBytes);
}

void put(const Out& o, const CmRej& m) {
  o.u32(0, m.local_comm_id);
  o.u32(4, m.remote_comm_id);
  o.u8(8, (static_cast<std::uint32_t>(m.message) & 0x3u) << 6);
  o.u8(9, (m.ari_length & 0x7Fu) << 1);
  o.u16(10, m.reason);
  o.bytes(12, m.ari, kRejAriBytes);
  o.bytes(84, m.private_data, kRejPrivateBytes);
}
void get(const In& in, CmRej& m) {
  m.local_comm_id = in.u32(0);
  m.remote_comm_id = in.u32(4);
  m.message = static_cast<RejTarget>(in.u8(8) >> 6);
  m.ari_length = in.u8(9) >> 1;
  m.reason = in.u16(10);
  in.bytes(12, m.ari, kRejAriBytes);
  in.bytes(84, m.private_data, kRejPrivateBytes);
}

void put(const Out& o, const CmRep& m) {
  o.u32(0, m.local_comm_id);
  o.u32(4, m.remote_comm_id);
  o.u32(8, m.local_qkey);
  o.u24(12, m.local_qpn);
  o.u24(16, m.local_eecn);
  o.u24(20, m.starting_psn);
  o.u8(24, m.responder_resources);
  o.u8(25, m.initiator_depth);
  o.u8(26,
       (m.target_ack_delay & 0x1Fu) << 3 | (m.failover_accepted & 0x3u) << 1 | (m.end_to_end_flow_control ? 1u : 0u));
  o.u8(27, (m.rnr_retry_count & 0x7u) << 5 | (m.srq ? 0x10u : 0u));
  o.u64(28, m.local_ca_guid);
  o.bytes(36, m.private_data, kRepPrivateBytes);
}
void get(const In& in, CmRep& m) {
  m.local_comm_id = in.u32(0);
  m.remote_comm_id = in.u32(4);
  m.local_qkey = in.u32(8);
  m.local_qpn = in.u24(12);
  m.local_eecn = in.u24(16);
  m.starting_psn = in.u24(20);
  m.responder_resources = in.u8(24);
  m.initiator_depth = in.u8(25);
  m.target_ack_delay = in.u8(26) >> 3;
  m.failover_accepted = (in.u8(26) >> 1) & 0x3;
  m.end_to_end_flow_control = (in.u8(26) & 1) != 0;
  m.rnr_retry_count = in.u8(27) >> 5;
  m.srq = (in.u8(27) & 0x10) != 0;
  m.local_ca_guid = in.u64(28);
  in.bytes(36, m.private_data, kRepPrivateBytes);
}

void put(const Out& o, const CmRtu& m) {
  o.u32(0, m.local_comm_id);
  o.u32(4, m.remote_comm_id);
  o.bytes(8, m.private_data, kRtuPrivateBytes);
}
void get(const In& in, CmRtu& m) {
  m.local_comm_id = in.u32(0);
  m.remote_comm_id = in.u32(4);
  in.bytes(8, m.private_data, kRtuPrivateBytes);
}

void put(const Out& o, const CmDreq& m) {
  o.u32(0, m.local_comm_id);
  o.u32(4, m.remote_comm_id);
  o.u24(8, m.remote_qpn);
  o.bytes(12, m.private_data, kDreqPrivateBytes);
}
void get(const In& in, CmDreq& m) {
  m.local_comm_id = in.u32(0);
  m.remote_comm_id = in.u32(4);
  m.remote_qpn = in.u24(8);
  in.bytes(12, m.private_data, kDreqPrivateBytes);
}

void put(const Out& o, const CmDrep& m) {
  o.u32(0, m.local_comm_id);
  o.u32(4, m.remote_comm_id);
  o.bytes(8, m.private_data, kDrepPrivateBytes);
}
void get(const In& in, CmDrep& m) {
  m.local_comm_id = in.u32(0);
  m.remote_comm_id = in.u32(4);
  in.bytes(8, m.private_data, kDrepPrivateBytes);
}

template <class... F>
struct Overload : F... {
  using F::operator()...;
};
template <class... F>
Overload(F...) -> Overload<F...>;

}  // namespace

CmAttr cm_attr_of(const CmBody& body) {
  return std::visit(Overload{[](const CmReq&) { return CmAttr::kReq; }, [](const CmMra&) { return CmAttr::kMra; },
                             [](const CmRej&) { return CmAttr::kRej; }, [](const CmRep&) { return CmAttr::kRep; },
                             [](const CmRtu&) { return CmAttr::kRtu; }, [](const CmDreq&) { return CmAttr::kDreq; },
                             [](const CmDrep&) { return CmAttr::kDrep; }},
                    body);
}

std::uint32_t cm_receiver_comm_id(const CmBody& body) {
  return std::visit(
      Overload{[](const CmReq&) { return std::uint32_t{0}; }, [](const auto& m) { return m.remote_comm_id; }}, body);
}

std::uint32_t cm_sender_comm_id(const CmBody& body) {
  return std::visit([](const auto& m) { return m.local_comm_id; }, body);
}

void encode_cm(const CmBody& body, std::uint64_t tid, std::uint8_t* out) {
  MadHeader h;
  h.tid = tid;
  h.attr_id = static_cast<std::uint16_t>(cm_attr_of(body));
  std::memset(out, 0, kMadBytes);
  write_mad_header(h, out);
  const Out o{out + kMadHeaderBytes};
  std::visit([&o](const auto& m) { put(o, m); }, body);
}

MadRefusal decode_cm(const std::uint8_t* mad, std::uint32_t len, CmMessage& out) {
  const MadRefusal r = parse_mad(mad, len, out.header);
  if (r != MadRefusal::kNone) return r;
  const In in{mad + kMadHeaderBytes};
  switch (static_cast<CmAttr>(out.header.attr_id)) {
    case CmAttr::kReq:
      get(in, out.body.emplace<CmReq>());
      break;
    case CmAttr::kMra:
      get(in, out.body.emplace<CmMra>());
      break;
    case CmAttr::kRej:
      get(in, out.body.emplace<CmRej>());
      break;
    case CmAttr::kRep:
      get(in, out.body.emplace<CmRep>());
      break;
    case CmAttr::kRtu:
      get(in, out.body.emplace<CmRtu>());
      break;
    case CmAttr::kDreq:
      get(in, out.body.emplace<CmDreq>());
      break;
    case CmAttr::kDrep:
      get(in, out.body.emplace<CmDrep>());
      break;
    default:
      return MadRefusal::kUnknownAttribute;  // parse_mad let through only the seven above
  }
  return MadRefusal::kNone;
}

}  // namespace droce::cm
