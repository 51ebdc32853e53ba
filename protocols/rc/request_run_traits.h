// What a request packet's opcode decides when the responder executes it inside a receive run
// (RcQp::on_request_run): read from one 256-entry table instead of derived per packet from the
// opcode's kind, position and headers. A run is dozens of packets; every comparison saved here is
// saved dozens of times a burst (issue 37, bench/callgrind).
#pragma once

#include <array>
#include <cstdint>

#include "protocols/wire/opcode.h"

namespace droce::rc {

// Bits of RunTraits::flags.
inline constexpr std::uint8_t kRunJoins = 1u << 0;        // a run may hold it: a SEND without IETH, or a WRITE
inline constexpr std::uint8_t kRunStarts = 1u << 1;       // FIRST or ONLY: a message begins
inline constexpr std::uint8_t kRunEnds = 1u << 2;         // LAST or ONLY: a message ends
inline constexpr std::uint8_t kRunWrite = 1u << 3;        // an RDMA WRITE (else a SEND)
inline constexpr std::uint8_t kRunConsumesWqe = 1u << 4;  // takes a receive WQE (§9.7.5.1.5): a SEND
                                                          // at its first packet, a WRITE with ImmDt
inline constexpr std::uint8_t kRunCompletes = 1u << 5;    // ends a message that completes a receive WQE
inline constexpr std::uint8_t kRunImm = 1u << 6;          // carries ImmDt
inline constexpr std::uint8_t kRunFullPmtu = 1u << 7;     // FIRST or MIDDLE: exactly one PMTU (§9.7.5.1.6)

struct RunTraits {
  std::uint8_t flags = 0;
  std::uint8_t expects = 0;  // the message in progress it needs: 0 at FIRST/ONLY, else its kind
  std::uint8_t leaves = 0;   // the message in progress after it: 0 at LAST/ONLY, else its kind
};

namespace detail {
constexpr std::array<RunTraits, 256> make_run_traits() {
  using wire::OpKind;
  using wire::OpPosition;
  std::array<RunTraits, 256> t{};
  // RC opcodes only (< 0xC0): selective repeat's twins take their own receive path.
  for (unsigned code = 0; code < 0xC0; ++code) {
    const wire::OpcodeInfo& op = wire::kOpcodeTable[code];
    const bool send = op.kind == OpKind::kSend && (op.headers & wire::kHdrIeth) == 0;
    if (!op.is_request || !(send || op.kind == OpKind::kWrite)) continue;
    const bool starts = op.position == OpPosition::kFirst || op.position == OpPosition::kOnly;
    const bool ends = op.position == OpPosition::kLast || op.position == OpPosition::kOnly;
    const bool imm = (op.headers & wire::kHdrImmDt) != 0;
    const auto kind = static_cast<std::uint8_t>(op.kind);
    RunTraits& r = t[code];
    r.flags = static_cast<std::uint8_t>(kRunJoins | (starts ? kRunStarts : 0) | (ends ? kRunEnds : 0) |
                                        (send ? 0 : kRunWrite) | ((send ? starts : imm) ? kRunConsumesWqe : 0) |
                                        (ends && (send || imm) ? kRunCompletes : 0) | (imm ? kRunImm : 0) |
                                        (starts || ends ? 0 : kRunFullPmtu) |
                                        (op.position == OpPosition::kFirst ? kRunFullPmtu : 0));
    r.expects = starts ? 0 : kind;
    r.leaves = ends ? 0 : kind;
  }
  return t;
}
}  // namespace detail

inline constexpr std::array<RunTraits, 256> kRunTraits = detail::make_run_traits();

[[nodiscard]] constexpr const RunTraits& run_traits(std::uint8_t opcode) { return kRunTraits[opcode]; }

static_assert(run_traits(0x04).flags == (kRunJoins | kRunStarts | kRunEnds | kRunConsumesWqe | kRunCompletes));
static_assert(run_traits(0x07).flags == (kRunJoins | kRunWrite | kRunFullPmtu) && run_traits(0x07).expects != 0);
static_assert(run_traits(0x09).flags == (kRunJoins | kRunEnds | kRunWrite | kRunConsumesWqe | kRunCompletes | kRunImm));
static_assert(run_traits(0x06).flags == (kRunJoins | kRunStarts | kRunWrite | kRunFullPmtu) &&
              run_traits(0x06).leaves != 0);
static_assert(run_traits(0x17).flags == 0 && run_traits(0xC4).flags == 0 && run_traits(0x0C).flags == 0);

}  // namespace droce::rc
