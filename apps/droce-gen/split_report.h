// droce-gen's report of a --split run: the stripes, and each QP's share of the parts and bytes,
// in the text report and the JSON ("split").
#pragma once

#include <nlohmann/json.hpp>

#include "apps/droce-gen/options.h"
#include "apps/droce-gen/setup.h"

namespace droce::gen {

// One line (nothing without --split): the cut, the stripes, the least and most parts a QP
// completed, and the least and most share of its stripe's bytes a QP carried.
void print_split(const Options& o, Setup& st);
// {"parts_per_message", "stripes", "stripe_qps": [[QP, ..], ..], "qp_parts", "qp_bytes",
// "qp_byte_share"} (per QP in QP order, since the start: the parts its requester completed, their
// bytes, and those bytes over its stripe's); null without --split.
[[nodiscard]] nlohmann::json split_json(const Options& o, Setup& st);

}  // namespace droce::gen
