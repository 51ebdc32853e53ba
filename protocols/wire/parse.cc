// parse_frame: the fast path for the common frame shape, else the general parser; then P_Key and ICRC.
#include "protocols/wire/parse.h"

#include "protocols/wire/icrc.h"
#include "protocols/wire/parse_fast.h"
#include "protocols/wire/parse_general.h"

namespace droce::wire {
namespace {

// The last two rules, on a fully parsed header set: the P_Key (§10.9.3), then the ICRC over
// the IP packet (A17.4.1), checked last because it is the only rule that reads the payload.
DropReason check_pkey_and_icrc(const std::uint8_t* frame, const PacketInfo& pi, const ParseOptions& opt) {
  if (opt.check_pkey && !pkey_matches(pi.pkey, opt.pkey)) return DropReason::kWrongPkey;
  if (opt.verify_icrc) {
    const std::uint8_t* l3 = frame + pi.l3_offset;
    const std::uint32_t covered = pi.frame_len - kIcrcBytes - pi.l3_offset;
    if (icrc_compute(l3, covered, pi.ipv6) != icrc_load(frame + pi.frame_len - kIcrcBytes)) return DropReason::kBadIcrc;
  }
  return DropReason::kNone;
}

}  // namespace

DropReason parse_frame(const std::uint8_t* frame, std::uint32_t len, PacketInfo& out, const ParseOptions& opt) {
  // The fast path either parses the whole header set as the general parser would (the ext headers
  // the opcode lacks completed here), or declines without judging the frame; the general parser
  // then names the rule it broke.
  if (!parse_headers_fast(frame, len, out, opt)) [[unlikely]]
    return parse_frame_general(frame, len, out, opt);
  complete_ext_headers(out);  // the whole record, as the general parser leaves it
  if (!opt.check_pkey && !opt.verify_icrc) return DropReason::kNone;
  return check_pkey_and_icrc(frame, out, opt);
}

DropReason parse_frame_general(const std::uint8_t* frame, std::uint32_t len, PacketInfo& out, const ParseOptions& opt) {
  const DropReason r = parse_headers_general(frame, len, out, opt);
  if (r != DropReason::kNone) return r;
  return check_pkey_and_icrc(frame, out, opt);
}

}  // namespace droce::wire
