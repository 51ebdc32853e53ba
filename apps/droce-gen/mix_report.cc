// droce-gen's report of a --mix run (see mix_report.h).
#include "apps/droce-gen/mix_report.h"

#include <cstdio>

namespace droce::gen {

namespace {

using ull = unsigned long long;

double gbps(std::uint64_t bytes, double secs) { return secs > 0 ? static_cast<double>(bytes) * 8.0 / secs / 1e9 : 0; }

double share(std::uint64_t part, std::uint64_t whole) {
  return whole != 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0;
}

std::uint64_t mix_messages(const RunOutcome& r) {
  std::uint64_t n = 0;
  for (const OpFigures& f : r.ops) n += f.messages;
  return n;
}

}  // namespace

std::string mix_text(const Options& o) {
  std::string t;
  for (std::size_t i = 0; i < o.mix.size(); ++i) {
    if (i != 0) t += ',';
    t += op_name(static_cast<Op>(o.mix.value(i)));
    t += ':';
    t += std::to_string(o.mix.weight(i));
  }
  return t;
}

std::string workload_sizes_text(const Options& o) {
  return o.size_weights.empty() ? sizes_text(o.sizes) : o.size_weights.text();
}

nlohmann::json size_messages_json(const Options& o, const RunOutcome& r) {
  nlohmann::json a = nlohmann::json::array();
  for (std::size_t i = 0; i < o.size_weights.size(); ++i) a.push_back(r.sizes[i]);
  return a;
}

void print_mix(const Options& o, const RunOutcome& r) {
  if (!o.size_weights.empty()) {
    std::uint64_t all = 0;
    for (std::size_t i = 0; i < o.size_weights.size(); ++i) all += r.sizes[i];
    std::printf(" sizes drawn from --seed %llu, messages completed:", static_cast<ull>(o.seed));
    for (std::size_t i = 0; i < o.size_weights.size(); ++i)
      std::printf("%s %u x %llu (%.1f%%, weight %.1f%%)", i == 0 ? "" : ",", o.size_weights.value(i),
                  static_cast<ull>(r.sizes[i]), 100 * share(r.sizes[i], all),
                  100 * share(o.size_weights.weight(i), o.size_weights.total()));
    std::printf("\n");
  }
  if (o.mix.empty()) return;
  const std::uint64_t all = mix_messages(r);
  std::printf(
      " mix %s (each message's op drawn from --seed %llu): completed at the requesters; %llu SENDs and WRITEs "
      "checked at the responders\n",
      mix_text(o).c_str(), static_cast<ull>(o.seed), static_cast<ull>(r.mix_received));
  for (std::size_t i = 0; i < o.mix.size(); ++i) {
    const OpFigures& f = r.ops[o.mix.value(i)];
    const engine::LatencyHistogram& h = f.hist;
    std::printf(
        "   %-5s %10llu messages (%5.1f%%, weight %5.1f%%)  %9.3f Gb/s  latency ns p50 %llu  p99 %llu  max %llu\n",
        op_name(static_cast<Op>(o.mix.value(i))), static_cast<ull>(f.messages), 100 * share(f.messages, all),
        100 * share(o.mix.weight(i), o.mix.total()), gbps(f.bytes, r.secs), static_cast<ull>(h.percentile(0.5)),
        static_cast<ull>(h.percentile(0.99)), static_cast<ull>(h.max()));
  }
}

nlohmann::json mix_json(const Options& o, const RunOutcome& r) {
  const std::uint64_t all = mix_messages(r);
  nlohmann::json ops = nlohmann::json::array();
  for (std::size_t i = 0; i < o.mix.size(); ++i) {
    const OpFigures& f = r.ops[o.mix.value(i)];
    const engine::LatencyHistogram& h = f.hist;
    ops.push_back({{"op", op_name(static_cast<Op>(o.mix.value(i)))},
                   {"weight", o.mix.weight(i)},
                   {"messages", f.messages},
                   {"share", share(f.messages, all)},
                   {"bytes", f.bytes},
                   {"goodput_gbps", gbps(f.bytes, r.secs)},
                   {"msg_rate_mps", r.secs > 0 ? static_cast<double>(f.messages) / r.secs / 1e6 : 0.0},
                   {"latency_ns",
                    {{"min", h.min()},
                     {"p50", h.percentile(0.5)},
                     {"p90", h.percentile(0.9)},
                     {"p99", h.percentile(0.99)},
                     {"p999", h.percentile(0.999)},
                     {"max", h.max()}}}});
  }
  // The SENDs and WRITEs the responders checked (sequence and content) since the start: with no
  // --warmup, the requesters' SEND and WRITE counts.
  return {{"spec", mix_text(o)}, {"seed", o.seed}, {"received_at_responder", r.mix_received}, {"ops", ops}};
}

}  // namespace droce::gen
