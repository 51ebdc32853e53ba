// Internal to the wire library, its tests and parse_headers (parse_fast.h): the general parser,
// the reference for every frame shape.
#pragma once

#include <cstdint>

#include "protocols/wire/parse.h"

namespace droce::wire {

// Every header rule of parse_frame, in parse_frame's order, up to and including the pad count:
// everything but the P_Key and ICRC checks. Zeroes `out` first, so on kNone every field is set
// (fields of ext headers the opcode lacks are zero); on a drop, the fields parsed so far.
[[nodiscard]] DropReason parse_headers_general(const std::uint8_t* frame, std::uint32_t len, PacketInfo& out,
                                               const ParseOptions& opt);

// parse_frame without the fast path: parse_headers_general then the P_Key and ICRC checks.
// The reference the fast path is tested against; same contract as parse_frame.
[[nodiscard]] DropReason parse_frame_general(const std::uint8_t* frame, std::uint32_t len, PacketInfo& out,
                                             const ParseOptions& opt = {});

}  // namespace droce::wire
