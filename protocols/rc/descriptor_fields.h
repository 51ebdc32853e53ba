// The wire fields of a transport descriptor: what the engine (and test links) hand the builders.
#pragma once

#include "protocols/rc/types.h"
#include "protocols/wire/build.h"

namespace droce::rc {

[[nodiscard]] inline wire::PacketFields packet_fields(const TxDescriptor& d) {
  wire::PacketFields f;
  f.opcode = d.opcode;
  f.psn = d.psn;
  f.ack_req = d.ack_req;
  f.se = d.se;
  f.payload_len = d.payload_len;
  // Only the extension headers the opcode carries (§9.3): a descriptor's other fields may be a
  // previous packet's (TxDescriptor's rule, types.h); the rest of `f` keeps its defaults.
  const auto& op = wire::opcode_info(d.opcode);
  if (op.headers & wire::kHdrReth) {
    f.reth_va = d.reth_va;
    f.reth_rkey = d.reth_rkey;
    f.reth_len = d.reth_len;
  }
  if (op.headers & wire::kHdrAeth) {
    f.aeth_syndrome = d.aeth_syndrome;
    f.aeth_msn = d.aeth_msn;
  }
  if (op.headers & wire::kHdrImmDt) f.imm = d.imm;
  if (op.headers & wire::kHdrIeth) f.ieth_rkey = d.ieth_rkey;
  if (op.headers & wire::kHdrAtomicEth) {
    f.atomic_va = d.atomic_va;
    f.atomic_rkey = d.atomic_rkey;
    f.atomic_swap_add = d.atomic_swap_add;
    f.atomic_compare = d.atomic_compare;
  }
  if (op.headers & wire::kHdrAtomicAckEth) f.atomic_ack_orig = d.atomic_ack_orig;
  // Data leaves ECT(0), READ response data included: it is the bulk of a READ flow, so a switch
  // must be able to mark it and the responder's reaction point must slow it (DCQCN governs the QP
  // that sends the data, Annex A17.9). ACKs, NAKs and atomic acknowledgements carry no payload
  // and stay Not-ECT, as RoCE NICs send them.
  if (!op.is_request && op.kind != wire::OpKind::kReadResponse) f.ecn_override = wire::kEcnNotEct;
  return f;
}

}  // namespace droce::rc
