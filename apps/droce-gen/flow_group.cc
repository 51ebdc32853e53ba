// droce-gen's --flow-group specs (see flow_group.h).
#include "apps/droce-gen/flow_group.h"

#include <algorithm>
#include <cstdio>

#include "apps/common/cli/values.h"
#include "apps/common/cli_number.h"

namespace droce::gen {

namespace {

using engine::Status;
using engine::StatusCode;

constexpr std::size_t kMaxNameChars = 32;

Status bad(const std::string& message) {
  return Status::error(StatusCode::kInvalidArgument, "--flow-group " + message);
}

bool name_ok(const std::string& n) {
  return !n.empty() && n.size() <= kMaxNameChars && std::all_of(n.begin(), n.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

// One KEY=VALUE into g, each value checked as the run-wide option of that name checks it.
Status parse_key(const std::string& key, const std::string& v, FlowGroup& g) {
  Options& w = g.workload;
  const std::string opt = "--flow-group " + key;
  if (key == "name") {
    if (!name_ok(v)) return bad("name=" + v + ": 1.." + std::to_string(kMaxNameChars) + " letters, digits, '_' or '-'");
    g.name = v;
    return {};
  }
  if (key == "qps") return apps::parse_uint(opt, v, 1, kMaxQps, w.qps);
  if (key == "op") {
    static constexpr const char* kOps[] = {"send", "write", "read"};
    for (std::size_t i = 0; i < 3; ++i)
      if (v == kOps[i]) return w.op = static_cast<Op>(i), Status{};
    // An atomic's check is one counter per run's QP against the run's operations; not per group.
    return bad("op=" + v + ": send, write or read (atomics run without groups)");
  }
  if (key == "mix") {
    if (Status s = parse_mix(v, w.mix); !s.ok()) return s.context("--flow-group ");
    return {};
  }
  if (key == "size") {
    if (is_weighted_sizes(v)) return parse_weighted_sizes(v, kMaxMessageBytes, w.size_weights, w.sizes);
    return parse_sizes(v, w.sizes);
  }
  if (key == "rate-gbps") return apps::parse_real(opt, v, 0.001, 400, w.rate_gbps);
  if (key == "msg-rate") return apps::parse_real(opt, v, 1, 1e9, w.msg_rate, apps::Suffixes::kDecimal);
  if (key == "arrivals") {
    static constexpr const char* kKinds[] = {"constant", "poisson", "onoff"};
    for (std::size_t i = 0; i < 3; ++i)
      if (v == kKinds[i]) return w.arrivals = static_cast<Arrivals>(i), Status{};
    return bad("arrivals=" + v + ": constant, poisson or onoff");
  }
  if (key == "burst") return apps::parse_uint(opt, v, 1, 1'000'000, w.burst);
  if (key == "on-us") return apps::parse_real(opt, v, 0.001, 1e9, w.on_us);
  if (key == "off-us") return apps::parse_real(opt, v, 0.001, 1e9, w.off_us);
  if (key == "inflight") return apps::parse_uint(opt, v, 1, 128, w.inflight);
  if (key == "dscp") return apps::parse_uint(opt, v, 0, 63, w.dscp);
  if (key == "start") return apps::parse_real(opt, v, 0, 3600, g.start_s);
  if (key == "stop") return apps::parse_real(opt, v, 0.001, 3600, g.stop_s);
  return bad(key + "=" + v +
             ": unknown key (name, qps, op, mix, size, rate-gbps, msg-rate, arrivals, burst, on-us, off-us, "
             "inflight, dscp, start, stop)");
}

// The keys that make sense only together, within one group (as the run-wide options are checked).
Status check_group(const FlowGroup& g, const Options& run) {
  const Options& w = g.workload;
  const std::string who = g.name + ": ";
  if (g.has("op") && g.has("mix")) return bad(who + "op and mix both set: give one");
  if (g.has("rate-gbps") && g.has("msg-rate"))
    return bad(who + "rate-gbps and msg-rate both set: give one offered load");
  const bool open = g.has("rate-gbps") || g.has("msg-rate");
  if ((g.has("arrivals") || g.has("burst")) && !open)
    return bad(who + "arrivals and burst shape an offered load: give rate-gbps or msg-rate");
  if ((g.has("on-us") || g.has("off-us")) && w.arrivals != Arrivals::kOnOff)
    return bad(who + "on-us and off-us shape arrivals=onoff: give it");
  if (g.start_s >= run.duration_s)
    return bad(who + "start=" + apps::cli::num(g.start_s) + " is not before the run's end (--duration " +
               apps::cli::num(run.duration_s) + ")");
  if (g.has("stop") && g.stop_s <= g.start_s)
    return bad(who + "stop=" + apps::cli::num(g.stop_s) + " is not after start=" + apps::cli::num(g.start_s));
  if (g.stop_s > run.duration_s)
    return bad(who + "stop=" + apps::cli::num(g.stop_s) + " is after the run's end (--duration " +
               apps::cli::num(run.duration_s) + ")");
  // Selective repeat holds all of a READ's PSNs in flight at once (as the run-wide check).
  if (run.recovery == rc::Recovery::kSelectiveRepeat && w.carries(Op::kRead) &&
      w.max_size() > std::uint64_t{run.sr_bdp_pkts} * run.mtu)
    return bad(who + "--recovery sr: a READ spans at most --sr-bdp-packets x --mtu = " +
               std::to_string(std::uint64_t{run.sr_bdp_pkts} * run.mtu) + " bytes, and size " +
               std::to_string(w.max_size()) + " is more");
  return {};
}

}  // namespace

Status parse_flow_group(const std::string& spec, FlowGroup& g) {
  g = FlowGroup{};
  g.spec = spec;
  for (std::size_t start = 0;;) {
    const std::size_t semi = spec.find(';', start);
    const std::string item = spec.substr(start, semi == std::string::npos ? std::string::npos : semi - start);
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
      return bad("'" + item + "': each item is KEY=VALUE, items separated by ';' (e.g. name=rpc;qps=2;op=send)");
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    if (g.has(key)) return bad(key + " given twice in '" + spec + "'");
    if (g.keys.size() == 32) return bad("'" + spec + "': too many items");
    g.keys.push_back(key);
    if (Status s = parse_key(key, value, g); !s.ok()) return s;
    if (semi == std::string::npos) break;
    start = semi + 1;
  }
  if (g.name.empty()) return bad("'" + spec + "': give the group a name=NAME");
  return {};
}

Status finish_flow_groups(Options& o, const std::function<bool(const std::string&)>& given) {
  if (o.groups.empty()) return {};
  if (o.mode != Mode::kLoopback)
    return bad(
        "runs in --mode loopback only (the exchange does not carry the groups: a server could not verify "
        "by them)");
  if (o.groups.size() > kMaxFlowGroups) return bad("at most " + std::to_string(kMaxFlowGroups) + " groups");
  // What a group sets, or what would cut across groups, is not given for the whole run as well.
  static constexpr const char* kGroupSet[] = {"--op",       "--mix",        "--size",      "--qps",      "--active-qps",
                                              "--inflight", "--rate-gbps",  "--msg-rate",  "--arrivals", "--burst",
                                              "--on-us",    "--off-us",     "--dscp",      "--count",    "--minbytes",
                                              "--maxbytes", "--stepfactor", "--stepbytes", "--clients"};
  for (const char* name : kGroupSet)
    if (given(name))
      return Status::error(StatusCode::kInvalidArgument,
                           std::string(name) + " and --flow-group both set: each group sets its own (or, for " +
                               "--count, --active-qps, --clients and a sweep, a group has none)");
  std::uint64_t qps = 0;
  std::uint32_t inflight = 1;
  Options run = o;
  run.groups.clear();
  for (std::size_t i = 0; i < o.groups.size(); ++i) {
    FlowGroup& g = o.groups[i];
    for (std::size_t k = 0; k < i; ++k)
      if (o.groups[k].name == g.name) return bad("name=" + g.name + " given to two groups");
    if (Status s = check_group(g, run); !s.ok()) return s;
    // The run's options, with the group's keys over them.
    const Options keys = g.workload;
    Options w = run;
    w.qps = keys.qps;
    w.op = keys.op;
    w.mix = keys.mix;
    w.sizes = keys.sizes;
    w.size_weights = keys.size_weights;
    w.rate_gbps = keys.rate_gbps;
    w.msg_rate = keys.msg_rate;
    w.arrivals = keys.arrivals;
    w.burst = keys.burst;
    w.on_us = keys.on_us;
    w.off_us = keys.off_us;
    w.inflight = keys.inflight;
    w.dscp = keys.dscp;
    g.workload = std::move(w);
    g.first_qp = static_cast<std::uint32_t>(qps);
    qps += g.workload.qps;
    inflight = std::max(inflight, g.workload.inflight);
    if (qps > kMaxQps) return bad("the groups' qps add up to more than " + std::to_string(kMaxQps));
  }
  o.qps = static_cast<std::uint32_t>(qps);
  o.inflight = inflight;
  return {};
}

std::string flow_group_text(const FlowGroup& g) {
  const Options& w = g.workload;
  std::string t = "name=" + g.name + ";qps=" + std::to_string(w.qps);
  if (w.mix.empty()) t += std::string(";op=") + op_name(w.op);
  for (std::size_t i = 0; i < w.mix.size(); ++i)
    t += std::string(i == 0 ? ";mix=" : ",") + op_name(static_cast<Op>(w.mix.value(i))) + ":" +
         std::to_string(w.mix.weight(i));
  t += ";size=" + (w.size_weights.empty() ? sizes_text(w.sizes) : w.size_weights.text());
  if (w.rate_gbps > 0) t += ";rate-gbps=" + apps::cli::num(w.rate_gbps);
  if (w.msg_rate > 0) t += ";msg-rate=" + apps::cli::num(w.msg_rate);
  t += ";inflight=" + std::to_string(w.inflight) + ";dscp=" + std::to_string(w.dscp);
  t += ";start=" + apps::cli::num(g.start_s);
  if (g.stop_s > 0) t += ";stop=" + apps::cli::num(g.stop_s);
  return t;
}

}  // namespace droce::gen
