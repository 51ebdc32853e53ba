// The parameters every rank of an MPI job must share (pattern, sizes, iterations, type, transport,
// DCQCN, ...): a fixed list of named 64-bit values that travels as bytes, compared at bootstrap so
// that ranks started with different command lines refuse, naming the rank and the option.
#pragma once

#include <droce/engine/core/status.h>

#include <cstdint>
#include <string>
#include <vector>

#include "apps/droce-coll/options.h"

namespace droce::coll {

struct RunParam {
  const char* option;  // the command-line option that sets it
  std::uint64_t value;
};

// Every shared parameter of `o` for a job of `world` ranks, in a fixed order.
[[nodiscard]] std::vector<RunParam> run_params(const Options& o, std::uint32_t world);
// As bytes: a count, then the values (big-endian u64).
[[nodiscard]] std::vector<std::uint8_t> encode_params(const std::vector<RunParam>& p);
// Empty when rank `peer`'s bytes equal `mine`; else one line naming the rank and the first option
// that differs (or why the bytes are unreadable).
[[nodiscard]] engine::Status compare_params(const std::vector<RunParam>& mine, const std::uint8_t* b, std::size_t n,
                                            std::uint32_t peer);

}  // namespace droce::coll
