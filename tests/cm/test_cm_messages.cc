// CM messages: every field lands at the byte and bit of §12.6's tables (checked against bytes
// written out by hand from those tables), and every message decodes back to what was encoded.
#include <catch2/catch.hpp>
#include <cstring>

#include "tests/cm/cm_test_util.h"

using namespace droce::cm;
using droce::cm::test::data_byte;
using droce::cm::test::decode;
using droce::cm::test::encode;
using droce::cm::test::Mad;

namespace {

void fill(std::uint8_t* p, std::uint32_t n, std::uint8_t seed) {
  for (std::uint32_t i = 0; i < n; ++i) p[i] = static_cast<std::uint8_t>(seed + i * 7);
}

CmPath sample_path(std::uint8_t seed) {
  CmPath p;
  p.local_lid = 0xFFFF;
  p.remote_lid = 0xFFFE;
  fill(p.local_gid, 16, seed);
  fill(p.remote_gid, 16, static_cast<std::uint8_t>(seed + 100));
  p.flow_label = 0xABCDE;
  p.packet_rate = 0x2A;
  p.traffic_class = 0x68;
  p.hop_limit = 64;
  p.sl = 0xB;
  p.subnet_local = true;
  p.local_ack_timeout = 0x13;
  return p;
}

CmReq sample_req() {
  CmReq r;
  r.local_comm_id = 0x11223344;
  r.vendor_id = 0xA1B2C3;
  r.service_id = 0x0000000001064E20ull;
  r.local_ca_guid = 0x0002C9FFFE123456ull;
  r.local_qkey = 0xCAFEF00D;
  r.local_qpn = 0x000123;
  r.responder_resources = 4;
  r.local_eecn = 0x456789;
  r.initiator_depth = 5;
  r.remote_eecn = 0x98765A;
  r.remote_cm_response_timeout = 20;
  r.transport_service_type = kTransportRc;
  r.end_to_end_flow_control = true;
  r.starting_psn = 0xABCDEF;
  r.local_cm_response_timeout = 18;
  r.retry_count = 7;
  r.pkey = 0xFFFF;
  r.path_mtu = 3;
  r.rdc_exists = false;
  r.rnr_retry_count = 6;
  r.max_cm_retries = 15;
  r.srq = true;
  r.extended_transport_type = 0;
  r.primary = sample_path(1);
  r.alternate = sample_path(50);
  fill(r.private_data, kReqPrivateBytes, 9);
  return r;
}

bool same_path(const CmPath& a, const CmPath& b) {
  return a.local_lid == b.local_lid && a.remote_lid == b.remote_lid && std::memcmp(a.local_gid, b.local_gid, 16) == 0 &&
         std::memcmp(a.remote_gid, b.remote_gid, 16) == 0 && a.flow_label == b.flow_label &&
         a.packet_rate == b.packet_rate && a.traffic_class == b.traffic_class && a.hop_limit == b.hop_limit &&
         a.sl == b.sl && a.subnet_local == b.subnet_local && a.local_ack_timeout == b.local_ack_timeout;
}

}  // namespace

TEST_CASE("cm: the MAD header of an encoded message is ComMgtSend, class 0x07 version 2", "[cm][msg]") {
  const Mad m = encode(CmRtu{}, 0x1122334455667788ull);
  const std::uint8_t want[24] = {1,    0x07, 2,    0x03, 0,    0,    0, 0, 0x11, 0x22, 0x33, 0x44,
                                 0x55, 0x66, 0x77, 0x88, 0x00, 0x14, 0, 0, 0,    0,    0,    0};
  CHECK(std::memcmp(m.data(), want, 24) == 0);
}

TEST_CASE("cm: REQ fields sit at the offsets of the REQ table", "[cm][msg][req]") {
  const Mad m = encode(sample_req());
  CHECK(m[17] == 0x10);  // attribute ID
  const std::uint8_t want[52] = {
      0x11,
      0x22,
      0x33,
      0x44,  // 0 local communication ID
      0x00,
      0xA1,
      0xB2,
      0xC3,  // 4 reserved, 5 vendor ID
      0x00,
      0x00,
      0x00,
      0x00,
      0x01,
      0x06,
      0x4E,
      0x20,  // 8 service ID: TCP port 20000
      0x00,
      0x02,
      0xC9,
      0xFF,
      0xFE,
      0x12,
      0x34,
      0x56,  // 16 local CA GUID
      0x00,
      0x00,
      0x00,
      0x00,  // 24 reserved
      0xCA,
      0xFE,
      0xF0,
      0x0D,  // 28 local Q_Key
      0x00,
      0x01,
      0x23,
      0x04,  // 32 local QPN, responder resources
      0x45,
      0x67,
      0x89,
      0x05,  // 36 local EECN, initiator depth
      0x98,
      0x76,
      0x5A,
      (20 << 3) | (0 << 1) | 1,  // 40 remote EECN; remote CM timeout, RC, E2E
      0xAB,
      0xCD,
      0xEF,
      (18 << 3) | 7,  // 44 starting PSN; local CM timeout, retry count
      0xFF,
      0xFF,                      // 48 P_Key
      (3 << 4) | (0 << 3) | 6,   // 50 path MTU, RDC exists, RNR retry count
      (15 << 4) | (1 << 3) | 0,  // 51 max CM retries, SRQ, extended transport
  };
  for (std::uint32_t i = 0; i < sizeof(want); ++i) {
    INFO("REQ data byte " << i);
    CHECK(data_byte(m, i) == want[i]);
  }
  // Primary path at 52: LIDs, GIDs, then flow label / packet rate word, TC, hop limit, SL, ACK timeout.
  CHECK(data_byte(m, 52) == 0xFF);
  CHECK(data_byte(m, 53) == 0xFF);
  CHECK(data_byte(m, 54) == 0xFF);
  CHECK(data_byte(m, 55) == 0xFE);
  CHECK(data_byte(m, 56) == sample_path(1).local_gid[0]);
  CHECK(data_byte(m, 72) == sample_path(1).remote_gid[0]);
  CHECK(data_byte(m, 88) == 0xAB);  // flow label 0xABCDE in the top 20 bits
  CHECK(data_byte(m, 89) == 0xCD);
  CHECK(data_byte(m, 90) == 0xE0);
  CHECK(data_byte(m, 91) == 0x2A);  // packet rate in the low 6 bits
  CHECK(data_byte(m, 92) == 0x68);
  CHECK(data_byte(m, 93) == 64);
  CHECK(data_byte(m, 94) == ((0xB << 4) | 0x08));
  CHECK(data_byte(m, 95) == (0x13 << 3));
  // Alternate path at 96, private data at 140..231.
  CHECK(data_byte(m, 100) == sample_path(50).local_gid[0]);
  CHECK(data_byte(m, 116) == sample_path(50).remote_gid[0]);
  CHECK(data_byte(m, 139) == (0x13 << 3));
  CHECK(data_byte(m, 140) == sample_req().private_data[0]);
  CHECK(data_byte(m, 231) == sample_req().private_data[91]);
}

TEST_CASE("cm: REQ decodes back field for field", "[cm][msg][req]") {
  const CmReq a = sample_req();
  const CmMessage d = decode(encode(a, 77));
  CHECK(d.header.tid == 77);
  const auto& b = std::get<CmReq>(d.body);
  CHECK(b.local_comm_id == a.local_comm_id);
  CHECK(b.vendor_id == a.vendor_id);
  CHECK(b.service_id == a.service_id);
  CHECK(b.local_ca_guid == a.local_ca_guid);
  CHECK(b.local_qkey == a.local_qkey);
  CHECK(b.local_qpn == a.local_qpn);
  CHECK(b.responder_resources == a.responder_resources);
  CHECK(b.local_eecn == a.local_eecn);
  CHECK(b.initiator_depth == a.initiator_depth);
  CHECK(b.remote_eecn == a.remote_eecn);
  CHECK(b.remote_cm_response_timeout == a.remote_cm_response_timeout);
  CHECK(b.transport_service_type == a.transport_service_type);
  CHECK(b.end_to_end_flow_control == a.end_to_end_flow_control);
  CHECK(b.starting_psn == a.starting_psn);
  CHECK(b.local_cm_response_timeout == a.local_cm_response_timeout);
  CHECK(b.retry_count == a.retry_count);
  CHECK(b.pkey == a.pkey);
  CHECK(b.path_mtu == a.path_mtu);
  CHECK(b.rdc_exists == a.rdc_exists);
  CHECK(b.rnr_retry_count == a.rnr_retry_count);
  CHECK(b.max_cm_retries == a.max_cm_retries);
  CHECK(b.srq == a.srq);
  CHECK(b.extended_transport_type == a.extended_transport_type);
  CHECK(same_path(b.primary, a.primary));
  CHECK(same_path(b.alternate, a.alternate));
  CHECK(std::memcmp(b.private_data, a.private_data, kReqPrivateBytes) == 0);
}

TEST_CASE("cm: fields wider than their bits are truncated, not spilled into neighbours", "[cm][msg][req]") {
  CmReq r;
  r.local_qpn = 0xFF123456;  // 24 bits
  r.responder_resources = 0;
  r.remote_cm_response_timeout = 0xFF;  // 5 bits
  r.transport_service_type = 0;
  r.path_mtu = 0xFF;  // 4 bits
  r.rnr_retry_count = 0;
  const Mad m = encode(r);
  CHECK(data_byte(m, 32) == 0x12);
  CHECK(data_byte(m, 35) == 0x00);
  CHECK(data_byte(m, 43) == 0xF8);
  CHECK(data_byte(m, 50) == 0xF0);
}

TEST_CASE("cm: MRA layout and round trip", "[cm][msg][mra]") {
  CmMra a;
  a.local_comm_id = 0x01020304;
  a.remote_comm_id = 0x05060708;
  a.message = MraTarget::kRep;
  a.service_timeout = 0x15;
  fill(a.private_data, kMraPrivateBytes, 3);
  const Mad m = encode(a);
  CHECK(m[17] == 0x11);
  CHECK(data_byte(m, 0) == 0x01);
  CHECK(data_byte(m, 7) == 0x08);
  CHECK(data_byte(m, 8) == (1 << 6));
  CHECK(data_byte(m, 9) == (0x15 << 3));
  CHECK(data_byte(m, 10) == a.private_data[0]);
  CHECK(data_byte(m, 231) == a.private_data[kMraPrivateBytes - 1]);
  const auto b = std::get<CmMra>(decode(m).body);
  CHECK(b.local_comm_id == a.local_comm_id);
  CHECK(b.remote_comm_id == a.remote_comm_id);
  CHECK(b.message == a.message);
  CHECK(b.service_timeout == a.service_timeout);
  CHECK(std::memcmp(b.private_data, a.private_data, kMraPrivateBytes) == 0);
}

TEST_CASE("cm: REJ layout and round trip", "[cm][msg][rej]") {
  CmRej a;
  a.local_comm_id = 0xA0A1A2A3;
  a.remote_comm_id = 0xB0B1B2B3;
  a.message = RejTarget::kNoMessage;
  a.ari_length = 8;
  a.reason = static_cast<std::uint16_t>(RejReason::kInvalidServiceId);
  fill(a.ari, kRejAriBytes, 40);
  fill(a.private_data, kRejPrivateBytes, 60);
  const Mad m = encode(a);
  CHECK(m[17] == 0x12);
  CHECK(data_byte(m, 8) == (2 << 6));
  CHECK(data_byte(m, 9) == (8 << 1));
  CHECK(data_byte(m, 10) == 0x00);
  CHECK(data_byte(m, 11) == 8);
  CHECK(data_byte(m, 12) == a.ari[0]);
  CHECK(data_byte(m, 83) == a.ari[71]);
  CHECK(data_byte(m, 84) == a.private_data[0]);
  CHECK(data_byte(m, 231) == a.private_data[147]);
  const auto b = std::get<CmRej>(decode(m).body);
  CHECK(b.local_comm_id == a.local_comm_id);
  CHECK(b.remote_comm_id == a.remote_comm_id);
  CHECK(b.message == a.message);
  CHECK(b.ari_length == a.ari_length);
  CHECK(b.reason == a.reason);
  CHECK(std::memcmp(b.ari, a.ari, kRejAriBytes) == 0);
  CHECK(std::memcmp(b.private_data, a.private_data, kRejPrivateBytes) == 0);
}

TEST_CASE("cm: REP layout and round trip", "[cm][msg][rep]") {
  CmRep a;
  a.local_comm_id = 0x10203040;
  a.remote_comm_id = 0x50607080;
  a.local_qkey = 0x11111111;
  a.local_qpn = 0x00ABCD;
  a.local_eecn = 0x123456;
  a.starting_psn = 0x654321;
  a.responder_resources = 16;
  a.initiator_depth = 8;
  a.target_ack_delay = 0x1F;
  a.failover_accepted = 1;
  a.end_to_end_flow_control = true;
  a.rnr_retry_count = 7;
  a.srq = true;
  a.local_ca_guid = 0x0102030405060708ull;
  fill(a.private_data, kRepPrivateBytes, 5);
  const Mad m = encode(a);
  CHECK(m[17] == 0x13);
  const std::uint8_t want[36] = {0x10,
                                 0x20,
                                 0x30,
                                 0x40,
                                 0x50,
                                 0x60,
                                 0x70,
                                 0x80,  // comm IDs
                                 0x11,
                                 0x11,
                                 0x11,
                                 0x11,  // 8 local Q_Key
                                 0x00,
                                 0xAB,
                                 0xCD,
                                 0x00,  // 12 local QPN, reserved
                                 0x12,
                                 0x34,
                                 0x56,
                                 0x00,  // 16 local EECN
                                 0x65,
                                 0x43,
                                 0x21,
                                 0x00,  // 20 starting PSN
                                 16,
                                 8,                           // 24, 25
                                 (0x1F << 3) | (1 << 1) | 1,  // 26 ACK delay, failover, E2E
                                 (7 << 5) | (1 << 4),         // 27 RNR retry, SRQ
                                 1,
                                 2,
                                 3,
                                 4,
                                 5,
                                 6,
                                 7,
                                 8};  // 28 local CA GUID
  for (std::uint32_t i = 0; i < sizeof(want); ++i) {
    INFO("REP data byte " << i);
    CHECK(data_byte(m, i) == want[i]);
  }
  CHECK(data_byte(m, 36) == a.private_data[0]);
  CHECK(data_byte(m, 231) == a.private_data[195]);
  const auto b = std::get<CmRep>(decode(m).body);
  CHECK(b.local_comm_id == a.local_comm_id);
  CHECK(b.remote_comm_id == a.remote_comm_id);
  CHECK(b.local_qkey == a.local_qkey);
  CHECK(b.local_qpn == a.local_qpn);
  CHECK(b.local_eecn == a.local_eecn);
  CHECK(b.starting_psn == a.starting_psn);
  CHECK(b.responder_resources == a.responder_resources);
  CHECK(b.initiator_depth == a.initiator_depth);
  CHECK(b.target_ack_delay == a.target_ack_delay);
  CHECK(b.failover_accepted == a.failover_accepted);
  CHECK(b.end_to_end_flow_control == a.end_to_end_flow_control);
  CHECK(b.rnr_retry_count == a.rnr_retry_count);
  CHECK(b.srq == a.srq);
  CHECK(b.local_ca_guid == a.local_ca_guid);
  CHECK(std::memcmp(b.private_data, a.private_data, kRepPrivateBytes) == 0);
}

TEST_CASE("cm: RTU, DREQ and DREP layouts and round trips", "[cm][msg]") {
  CmRtu rtu;
  rtu.local_comm_id = 1;
  rtu.remote_comm_id = 2;
  fill(rtu.private_data, kRtuPrivateBytes, 1);
  Mad m = encode(rtu);
  CHECK(m[17] == 0x14);
  CHECK(data_byte(m, 3) == 1);
  CHECK(data_byte(m, 7) == 2);
  CHECK(data_byte(m, 8) == rtu.private_data[0]);
  const auto rtu2 = std::get<CmRtu>(decode(m).body);
  CHECK(rtu2.local_comm_id == 1);
  CHECK(rtu2.remote_comm_id == 2);
  CHECK(std::memcmp(rtu2.private_data, rtu.private_data, kRtuPrivateBytes) == 0);

  CmDreq dreq;
  dreq.local_comm_id = 3;
  dreq.remote_comm_id = 4;
  dreq.remote_qpn = 0xC0FFEE;
  fill(dreq.private_data, kDreqPrivateBytes, 2);
  m = encode(dreq);
  CHECK(m[17] == 0x15);
  CHECK(data_byte(m, 8) == 0xC0);
  CHECK(data_byte(m, 9) == 0xFF);
  CHECK(data_byte(m, 10) == 0xEE);
  CHECK(data_byte(m, 11) == 0x00);
  CHECK(data_byte(m, 12) == dreq.private_data[0]);
  const auto dreq2 = std::get<CmDreq>(decode(m).body);
  CHECK(dreq2.remote_qpn == 0xC0FFEE);
  CHECK(std::memcmp(dreq2.private_data, dreq.private_data, kDreqPrivateBytes) == 0);

  CmDrep drep;
  drep.local_comm_id = 5;
  drep.remote_comm_id = 6;
  fill(drep.private_data, kDrepPrivateBytes, 4);
  m = encode(drep);
  CHECK(m[17] == 0x16);
  const auto drep2 = std::get<CmDrep>(decode(m).body);
  CHECK(drep2.local_comm_id == 5);
  CHECK(drep2.remote_comm_id == 6);
  CHECK(std::memcmp(drep2.private_data, drep.private_data, kDrepPrivateBytes) == 0);
}

TEST_CASE("cm: communication IDs name sender and receiver", "[cm][msg]") {
  CmRep rep;
  rep.local_comm_id = 9;
  rep.remote_comm_id = 10;
  CHECK(cm_sender_comm_id(rep) == 9);
  CHECK(cm_receiver_comm_id(rep) == 10);
  CmReq req;
  req.local_comm_id = 11;
  CHECK(cm_receiver_comm_id(req) == 0);
  CHECK(cm_attr_of(req) == CmAttr::kReq);
  CHECK(cm_attr_of(CmDrep{}) == CmAttr::kDrep);
}
