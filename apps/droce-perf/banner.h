// perftest's banner before the results (perftest_parameters.c ctx_print_test_info,
// ctx_print_pingpong_data), printed by droce-perf so that its output reads as perftest's.
#pragma once

#include <droce/engine/exchange/perftest_exchange.h>

#include <cstdint>
#include <string>
#include <vector>

#include "apps/droce-perf/options.h"

namespace droce::perf {

struct BannerFacts {
  std::string device;  // our port's name
  std::uint32_t mtu = 0, tx_depth = 0, rx_depth = 0, cq_mod = 0;
};

inline constexpr const char* kLine =
    "---------------------------------------------------------------------------------------\n";

// The test's settings, every QP's address on both sides, and the result table's header.
void print_banner(const Options& o, const BannerFacts& f, const std::vector<engine::PerftestKeys>& mine,
                  const std::vector<engine::PerftestKeys>& peer);

}  // namespace droce::perf
