// droce-gen's report of a --split run (see split_report.h).
#include "apps/droce-gen/split_report.h"

#include <cstdio>
#include <vector>

#include "apps/droce-gen/job.h"

namespace droce::gen {

namespace {

using ull = unsigned long long;

// The run's QPs of QP i's stripe: K consecutive entries of its worker's job (QP i is entry
// i / workers of job i % workers), the stripe's first QP first.
std::vector<std::uint32_t> stripe_of(const Options& o, std::uint32_t i) {
  const std::uint32_t w = i % o.workers, entry = i / o.workers, first = entry - entry % o.split;
  std::vector<std::uint32_t> v;
  for (std::uint32_t j = 0; j < o.split; ++j) v.push_back((first + j) * o.workers + w);
  return v;
}

// QP i's bytes over its stripe's (1/K when the cut is even and every part completed).
double byte_share(const Options& o, Setup& st, std::uint32_t i) {
  std::uint64_t stripe = 0;
  for (std::uint32_t q : stripe_of(o, i)) stripe += st.requester(q).bytes_ok;
  return stripe != 0 ? static_cast<double>(st.requester(i).bytes_ok) / static_cast<double>(stripe) : 0;
}

}  // namespace

void print_split(const Options& o, Setup& st) {
  if (o.split == 1 || o.qps == 0) return;
  std::uint64_t min_parts = UINT64_MAX, max_parts = 0;
  double min_share = 2, max_share = -1;
  std::uint32_t min_qp = 0, max_qp = 0;
  for (std::uint32_t i = 0; i < o.qps; ++i) {
    const std::uint64_t parts = st.requester(i).completed_ok;
    min_parts = std::min(min_parts, parts);
    max_parts = std::max(max_parts, parts);
    const double s = byte_share(o, st, i);
    if (s < min_share) min_share = s, min_qp = i;
    if (s > max_share) max_share = s, max_qp = i;
  }
  std::printf(
      " split: every message in %u parts, one on each QP of its stripe (%u stripes of %u QPs); parts completed per "
      "QP %llu..%llu; a QP's share of its stripe's bytes: min %.4f (QP %u) max %.4f (QP %u)\n",
      o.split, o.qps / o.split, o.split, static_cast<ull>(min_parts), static_cast<ull>(max_parts), min_share, min_qp,
      max_share, max_qp);
}

nlohmann::json split_json(const Options& o, Setup& st) {
  if (o.split == 1) return nullptr;
  nlohmann::json stripes = nlohmann::json::array(), parts = nlohmann::json::array(), bytes = nlohmann::json::array(),
                 shares = nlohmann::json::array();
  for (std::uint32_t i = 0; i < o.qps; ++i) {
    const std::vector<std::uint32_t> s = stripe_of(o, i);
    if (s.front() == i) stripes.push_back(s);
    parts.push_back(st.requester(i).completed_ok);
    bytes.push_back(st.requester(i).bytes_ok);
    shares.push_back(byte_share(o, st, i));
  }
  return {{"parts_per_message", o.split},
          {"stripes", o.qps / o.split},
          {"stripe_qps", stripes},
          {"qp_parts", parts},
          {"qp_bytes", bytes},
          {"qp_byte_share", shares}};
}

}  // namespace droce::gen
