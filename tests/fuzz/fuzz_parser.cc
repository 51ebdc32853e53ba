// libFuzzer target: parse_frame on arbitrary bytes (with and without ICRC checks), then
// rebuild accepted packets and parse them again: the parser must never crash or read out of bounds.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "protocols/wire/build.h"
#include "protocols/wire/parse.h"

using namespace droce::wire;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 16384) return 0;
  // An exact-size heap copy so ASan sees any read past the end.
  std::vector<std::uint8_t> frame(data, data + size);
  PacketInfo pi;
  ParseOptions strict;
  ParseOptions lax;
  lax.verify_icrc = false;
  lax.verify_ip_checksum = false;
  lax.check_pkey = true;
  lax.pkey = 0x8001;
  ParseOptions open;
  open.verify_icrc = false;
  open.verify_ip_checksum = false;
  // droce's selective-repeat opcodes (manufacturer-specific): unknown unless accepted.
  ParseOptions sr = open;
  sr.accept_droce_sr = true;
  (void)parse_frame(frame.data(), static_cast<std::uint32_t>(frame.size()), pi, strict);
  if (parse_frame(frame.data(), static_cast<std::uint32_t>(frame.size()), pi, lax) != DropReason::kNone &&
      parse_frame(frame.data(), static_cast<std::uint32_t>(frame.size()), pi, open) != DropReason::kNone &&
      parse_frame(frame.data(), static_cast<std::uint32_t>(frame.size()), pi, sr) != DropReason::kNone)
    return 0;
  // Accepted only with the SR opcodes allowed: a parser without them must still refuse it as an
  // unknown opcode (never take it for anything else).
  const bool sr_only = is_manufacturer_opcode(pi.opcode);
  if (sr_only) {
    PacketInfo refused;
    if (parse_frame(frame.data(), static_cast<std::uint32_t>(frame.size()), refused, open) !=
        DropReason::kUnknownOpcode)
      __builtin_trap();
  }
  // Round trip: what was accepted, rebuilt by our builder, must parse with the same fields.
  TemplateConfig c;
  c.ipv6 = pi.ipv6;
  c.dest_qpn = pi.dest_qpn;
  const auto t = HeaderTemplate::make(c);
  PacketFields f;
  f.opcode = pi.opcode;
  f.psn = pi.psn;
  f.ack_req = pi.ack_req;
  f.payload_len = pi.payload_len;
  f.reth_va = pi.reth_va;
  f.reth_rkey = pi.reth_rkey;
  f.reth_len = pi.reth_dma_len;
  f.aeth_syndrome = pi.aeth_syndrome;
  f.aeth_msn = pi.aeth_msn;
  f.imm = pi.imm_data;
  std::vector<std::uint8_t> out(pi.payload_len + kMaxHeaderBytes + 16);
  const auto n =
      build_frame(t, f, frame.data() + pi.payload_offset, out.data(), static_cast<std::uint32_t>(out.size()));
  if (n == 0) __builtin_trap();
  PacketInfo again;
  ParseOptions reparse;
  reparse.accept_droce_sr = sr_only;
  if (parse_frame(out.data(), n, again, reparse) != DropReason::kNone) __builtin_trap();
  if (again.opcode != pi.opcode || again.psn != pi.psn || again.payload_len != pi.payload_len ||
      again.dest_qpn != pi.dest_qpn)
    __builtin_trap();
  return 0;
}
