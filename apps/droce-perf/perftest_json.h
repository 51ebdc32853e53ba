// --out_json: perftest's own JSON report (perftest_parameters.c write_test_info_to_file,
// write_bw_report_to_file, write_report_lat_to_file, write_report_lat_duration_to_file): a
// "test_info" object with the banner's settings under perftest's keys, and a "results" object
// with the last row's figures (perftest rewrites the file at every row it prints, so the last
// one stays; with -b that is the sum of both directions).
#pragma once

#include <string>

#include "apps/droce-perf/banner.h"
#include "apps/droce-perf/options.h"
#include "apps/droce-perf/report.h"

namespace droce::perf {

// The file's text for the last bw row or latency row (exactly one of them non-null).
[[nodiscard]] std::string perftest_json(const Options& o, const BannerFacts& f, const BwRow* bw, const LatRow* lat);

}  // namespace droce::perf
