// CM messages REQ, MRA, REJ, REP, RTU, DREQ, DREP (IBTA vol. 1 §12.6.5-12.6.11): host-order
// structs, and their encoding into / decoding from a 256-byte MAD with every field at its
// byte and bit offset. Offsets below are from the start of the MAD data (after the 24-byte
// header), as the spec's tables give them; "b7" is the most significant bit of a byte.
#pragma once

#include <cstdint>
#include <variant>

#include "protocols/cm/mad.h"

namespace droce::cm {

// Private data sizes (§12.6: what is left of the 232 bytes of each message).
inline constexpr std::uint32_t kReqPrivateBytes = 92;
inline constexpr std::uint32_t kMraPrivateBytes = 222;
inline constexpr std::uint32_t kRejAriBytes = 72;
inline constexpr std::uint32_t kRejPrivateBytes = 148;
inline constexpr std::uint32_t kRepPrivateBytes = 196;
inline constexpr std::uint32_t kRtuPrivateBytes = 224;
inline constexpr std::uint32_t kDreqPrivateBytes = 220;
inline constexpr std::uint32_t kDrepPrivateBytes = 224;

// Transport service type in REQ (byte 43 bits 2:1), §12.6.5.
inline constexpr std::uint8_t kTransportRc = 0;
inline constexpr std::uint8_t kTransportUc = 1;
inline constexpr std::uint8_t kTransportRd = 2;

// The IB path MTU code as REQ and path records carry it: 1 = 256 bytes ... 5 = 4096.
[[nodiscard]] constexpr std::uint32_t mtu_bytes(std::uint8_t code) { return code >= 1 && code <= 5 ? 128u << code : 0; }

// A path as REQ carries it (primary at data byte 52, alternate at 96; 44 bytes each).
// For RoCE the LIDs are the permissive LID 0xFFFF and the GIDs are the IP addresses
// (::ffff:a.b.c.d for IPv4), which is also what Linux sends when the hop limit is above 1.
struct CmPath {
  std::uint16_t local_lid = 0xFFFF;
  std::uint16_t remote_lid = 0xFFFF;
  std::uint8_t local_gid[16] = {};
  std::uint8_t remote_gid[16] = {};
  std::uint32_t flow_label = 0;  // 20 bits
  std::uint8_t packet_rate = 0;  // 6 bits
  std::uint8_t traffic_class = 0;
  std::uint8_t hop_limit = 0;
  std::uint8_t sl = 0;  // 4 bits
  bool subnet_local = false;
  std::uint8_t local_ack_timeout = 0;  // 5 bits: 4.096 us * 2^n
};

// REQ, §12.6.5.
struct CmReq {
  std::uint32_t local_comm_id = 0;                     // 0
  std::uint32_t vendor_id = 0;                         // 5..7 (24 bits)
  std::uint64_t service_id = 0;                        // 8
  std::uint64_t local_ca_guid = 0;                     // 16
  std::uint32_t local_qkey = 0;                        // 28
  std::uint32_t local_qpn = 0;                         // 32..34
  std::uint8_t responder_resources = 0;                // 35
  std::uint32_t local_eecn = 0;                        // 36..38
  std::uint8_t initiator_depth = 0;                    // 39
  std::uint32_t remote_eecn = 0;                       // 40..42
  std::uint8_t remote_cm_response_timeout = 0;         // 43 b7..b3
  std::uint8_t transport_service_type = kTransportRc;  // 43 b2..b1
  bool end_to_end_flow_control = false;                // 43 b0
  std::uint32_t starting_psn = 0;                      // 44..46
  std::uint8_t local_cm_response_timeout = 0;          // 47 b7..b3
  std::uint8_t retry_count = 0;                        // 47 b2..b0
  std::uint16_t pkey = 0xFFFF;                         // 48
  std::uint8_t path_mtu = 0;                           // 50 b7..b4
  bool rdc_exists = false;                             // 50 b3
  std::uint8_t rnr_retry_count = 0;                    // 50 b2..b0
  std::uint8_t max_cm_retries = 0;                     // 51 b7..b4
  bool srq = false;                                    // 51 b3
  std::uint8_t extended_transport_type = 0;            // 51 b2..b0
  CmPath primary;                                      // 52..95
  CmPath alternate;                                    // 96..139
  std::uint8_t private_data[kReqPrivateBytes] = {};    // 140..231
};

// What an MRA acknowledges (§12.6.6, byte 8 b7..b6).
enum class MraTarget : std::uint8_t { kReq = 0, kRep = 1, kLap = 2 };

// MRA, §12.6.6.
struct CmMra {
  std::uint32_t local_comm_id = 0;                   // 0
  std::uint32_t remote_comm_id = 0;                  // 4
  MraTarget message = MraTarget::kReq;               // 8 b7..b6
  std::uint8_t service_timeout = 0;                  // 9 b7..b3
  std::uint8_t private_data[kMraPrivateBytes] = {};  // 10..231
};

// What a REJ rejects (§12.6.7, byte 8 b7..b6).
enum class RejTarget : std::uint8_t { kReq = 0, kRep = 1, kNoMessage = 2 };

// REJ reasons, §12.6.7 (those droce sends or acts on by name; any value decodes).
enum class RejReason : std::uint16_t {
  kNoQp = 1,
  kNoResources = 3,
  kTimeout = 4,
  kUnsupportedRequest = 5,
  kInvalidCommId = 6,
  kInvalidCommInstance = 7,
  kInvalidServiceId = 8,
  kInvalidTransportType = 9,
  kStaleConnection = 10,
  kInvalidGid = 12,
  kInvalidAlternateGid = 18,
  kInvalidMtu = 26,
  kInsufficientResponderResources = 27,
  kConsumerReject = 28,
  kInvalidRnrRetry = 29,
  kInvalidClassVersion = 31,
};

// REJ, §12.6.7.
struct CmRej {
  std::uint32_t local_comm_id = 0;                   // 0
  std::uint32_t remote_comm_id = 0;                  // 4
  RejTarget message = RejTarget::kReq;               // 8 b7..b6
  std::uint8_t ari_length = 0;                       // 9 b7..b1
  std::uint16_t reason = 0;                          // 10
  std::uint8_t ari[kRejAriBytes] = {};               // 12..83
  std::uint8_t private_data[kRejPrivateBytes] = {};  // 84..231
};

// REP, §12.6.8.
struct CmRep {
  std::uint32_t local_comm_id = 0;                   // 0
  std::uint32_t remote_comm_id = 0;                  // 4
  std::uint32_t local_qkey = 0;                      // 8
  std::uint32_t local_qpn = 0;                       // 12..14
  std::uint32_t local_eecn = 0;                      // 16..18
  std::uint32_t starting_psn = 0;                    // 20..22
  std::uint8_t responder_resources = 0;              // 24
  std::uint8_t initiator_depth = 0;                  // 25
  std::uint8_t target_ack_delay = 0;                 // 26 b7..b3
  std::uint8_t failover_accepted = 0;                // 26 b2..b1
  bool end_to_end_flow_control = false;              // 26 b0
  std::uint8_t rnr_retry_count = 0;                  // 27 b7..b5
  bool srq = false;                                  // 27 b4
  std::uint64_t local_ca_guid = 0;                   // 28
  std::uint8_t private_data[kRepPrivateBytes] = {};  // 36..231
};

// RTU, §12.6.9.
struct CmRtu {
  std::uint32_t local_comm_id = 0;                   // 0
  std::uint32_t remote_comm_id = 0;                  // 4
  std::uint8_t private_data[kRtuPrivateBytes] = {};  // 8..231
};

// DREQ, §12.6.10.
struct CmDreq {
  std::uint32_t local_comm_id = 0;                    // 0
  std::uint32_t remote_comm_id = 0;                   // 4
  std::uint32_t remote_qpn = 0;                       // 8..10: the receiver's QPN
  std::uint8_t private_data[kDreqPrivateBytes] = {};  // 12..231
};

// DREP, §12.6.11.
struct CmDrep {
  std::uint32_t local_comm_id = 0;                    // 0
  std::uint32_t remote_comm_id = 0;                   // 4
  std::uint8_t private_data[kDrepPrivateBytes] = {};  // 8..231
};

using CmBody = std::variant<CmReq, CmMra, CmRej, CmRep, CmRtu, CmDreq, CmDrep>;

// A decoded CM MAD.
struct CmMessage {
  MadHeader header;
  CmBody body;
};

// The attribute ID of a body.
[[nodiscard]] CmAttr cm_attr_of(const CmBody& body);
// The communication ID the message names as its receiver's (remote_comm_id; 0 for a REQ, which
// names none): what a CM uses to find the connection a message belongs to.
[[nodiscard]] std::uint32_t cm_receiver_comm_id(const CmBody& body);
// The sender's communication ID (local_comm_id of every message).
[[nodiscard]] std::uint32_t cm_sender_comm_id(const CmBody& body);

// Encodes `body` as a full MAD (header: ComMgtSend, CM class version 2, its attribute ID,
// transaction ID `tid`) into `out`, which must hold kMadBytes. Reserved fields are zero and
// fields are truncated to their width.
void encode_cm(const CmBody& body, std::uint64_t tid, std::uint8_t* out);

// Decodes a MAD: parse_mad's rules, then the body of its attribute. Every bit pattern of a body
// decodes (value checks are the state machines'), so the refusals are parse_mad's.
[[nodiscard]] MadRefusal decode_cm(const std::uint8_t* mad, std::uint32_t len, CmMessage& out);

}  // namespace droce::cm
