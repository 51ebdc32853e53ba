// The shared parameters, their bytes and the comparison that names the first difference.
#include "apps/droce-coll/run_params.h"

#include <cstring>

#include "apps/droce-coll/card_codec.h"

namespace droce::coll {

namespace {

std::uint64_t bits(double d) {
  std::uint64_t u = 0;
  std::memcpy(&u, &d, sizeof u);
  return u;
}

std::string value_text(const char* option, std::uint64_t v) {
  static const char* kReals[] = {"--timeout", "--line-gbps", "--dcqcn-g", "--dcqcn-ai", "--dcqcn-hai", "--dcqcn-min"};
  for (const char* r : kReals)
    if (std::strncmp(option, r, std::strlen(r)) == 0) {
      double d = 0;
      std::memcpy(&d, &v, sizeof d);
      char t[40];
      std::snprintf(t, sizeof t, "%g", d);
      return t;
    }
  return std::to_string(v);
}

}  // namespace

std::vector<RunParam> run_params(const Options& o, std::uint32_t world) {
  const dcqcn::DcqcnParams& d = o.dcqcn;
  return {{"--ranks-per-process", o.ranks_per_process},
          {"--ranks (mpirun -np)", world},
          {"--pattern", static_cast<std::uint64_t>(o.pattern)},
          {"--algo", static_cast<std::uint64_t>(o.algo)},
          {"--dtype", static_cast<std::uint64_t>(o.dtype)},
          {"--root", o.root},
          {"--minbytes (--size)", o.minbytes},
          {"--maxbytes (--size)", o.maxbytes},
          {"--stepfactor", o.stepfactor},
          {"--iters", o.iters},
          {"--warmup_iters", o.warmup_iters},
          {"--placement", static_cast<std::uint64_t>(o.placement)},
          {"--chunk", o.chunk_bytes},
          {"--buffers", o.buffers},
          {"--qps-per-peer", o.qps_per_peer},
          {"--udp-sport", std::uint64_t{o.udp_sport.base} << 16 | o.udp_sport.stride},
          {"--mtu", o.mtu},
          {"--recovery", static_cast<std::uint64_t>(o.recovery)},
          {"--sr-bdp-packets", o.sr_bdp_pkts},
          {"--qp-timeout", o.qp_timeout},
          {"--retry-cnt", o.retry_cnt},
          {"--adaptive-rto", o.adaptive_rto ? 1u : 0u},
          {"--dscp", o.dscp},
          {"--cc", o.cc == "dcqcn" ? 1u : 0u},
          {"--line-gbps", bits(o.line_gbps)},
          {"--dcqcn-g", bits(d.g)},
          {"--dcqcn-rate-increase-us", d.rate_increase_period_ns},
          {"--dcqcn-alpha-period-us", d.alpha_update_period_ns},
          {"--dcqcn-byte-counter-bytes", d.byte_counter_bytes},
          {"--dcqcn-ai-mbps", bits(d.ai_rate_bps)},
          {"--dcqcn-hai-mbps", bits(d.hai_rate_bps)},
          {"--dcqcn-min-rate-mbps", bits(d.min_rate_bps)},
          {"--seed", o.seed},
          {"--timeout", bits(o.timeout_s)},
          {"the card layout version", kCardVersion}};
}

std::vector<std::uint8_t> encode_params(const std::vector<RunParam>& p) {
  std::vector<std::uint8_t> b(4 + 8 * p.size());
  const auto n = static_cast<std::uint32_t>(p.size());
  for (int i = 0; i < 4; ++i) b[i] = static_cast<std::uint8_t>(n >> (24 - 8 * i));
  for (std::size_t k = 0; k < p.size(); ++k)
    for (int i = 0; i < 8; ++i) b[4 + 8 * k + i] = static_cast<std::uint8_t>(p[k].value >> (56 - 8 * i));
  return b;
}

engine::Status compare_params(const std::vector<RunParam>& mine, const std::uint8_t* b, std::size_t n,
                              std::uint32_t peer) {
  const std::string who = "rank " + std::to_string(peer);
  if (n != 4 + 8 * mine.size() ||
      (std::uint32_t{b[0]} << 24 | std::uint32_t{b[1]} << 16 | std::uint32_t{b[2]} << 8 | b[3]) != mine.size())
    return engine::Status::error(engine::StatusCode::kPeer,
                                 who + " sent " + std::to_string(n) + " bytes of parameters, rank 0 expects " +
                                     std::to_string(4 + 8 * mine.size()) + " (the same droce-coll on every host)");
  for (std::size_t k = 0; k < mine.size(); ++k) {
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = v << 8 | b[4 + 8 * k + i];
    if (v != mine[k].value)
      return engine::Status::error(engine::StatusCode::kInvalidArgument,
                                   who + " runs with " + mine[k].option + " " + value_text(mine[k].option, v) +
                                       ", rank 0 with " + value_text(mine[k].option, mine[k].value) +
                                       ": every rank needs the same parameters");
  }
  return {};
}

}  // namespace droce::coll
