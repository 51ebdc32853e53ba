// The scenario file read with nlohmann-json: every key known or refused, every value typed and in
// range, each refusal one line naming the file and the JSON path (docs/scenario.md, "Rules").
#include <cmath>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>

#include "apps/common/fabric_topology.h"
#include "apps/common/scenario/scenario.h"

namespace droce::apps {

namespace {

using Json = nlohmann::json;

constexpr std::size_t kMaxFileBytes = 1 << 20;  // a scenario is a page of text, not a data set
constexpr std::size_t kMaxFlows = 4096;         // droce-sim's most senders
constexpr std::size_t kMaxListStrings = 256;    // links, link_down
constexpr std::uint64_t kMaxBytes = 1'000'000'000'000;
constexpr double kMaxMs = 3'600'000;  // an hour: more than any app runs

// One refusal, thrown from deep in a nested object and caught once in parse_scenario.
struct Refused {
  std::string path, why;
};

// Text from the user (the file name, the JSON parser's message) with control bytes shown as '?' so the
// message stays one line, not cut (cli_number's printable() cuts at 40 characters).
std::string one_line(const std::string& file) {
  std::string s;
  for (char c : file) s += static_cast<unsigned char>(c) < 0x20 || c == 0x7F ? '?' : c;
  return s;
}

[[noreturn]] void refuse(const std::string& path, const std::string& why) { throw Refused{path, why}; }

std::string join(std::initializer_list<const char*> names) {
  std::string s;
  for (const char* n : names) s += (s.empty() ? "" : ", ") + std::string(n);
  return s;
}

std::string child(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }

// An object whose every key is among `known`: a misspelt key is refused, never ignored.
const Json& object(const Json& j, const std::string& path, std::initializer_list<const char*> known) {
  if (!j.is_object()) refuse(path.empty() ? "(top)" : path, "must be an object");
  for (const auto& [key, value] : j.items()) {
    bool ok = false;
    for (const char* k : known) ok = ok || key == k;
    if (!ok) refuse(child(path, printable(key)), "unknown key (known: " + join(known) + ")");
  }
  return j;
}

const Json* field(const Json& j, const char* key) {
  const auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}

std::string string_at(const Json& v, const std::string& path) {
  if (!v.is_string()) refuse(path, "must be a string");
  return v.get<std::string>();
}

std::string choice_at(const Json& v, const std::string& path, std::initializer_list<const char*> names) {
  const std::string s = string_at(v, path);
  for (const char* n : names)
    if (s == n) return s;
  refuse(path, apps::quoted(s) + " is not one of " + join(names));
}

double real_at(const Json& v, const std::string& path, double lo, double hi, bool open_lo = false,
               bool open_hi = false) {
  if (!v.is_number()) refuse(path, "must be a number");
  const double d = v.get<double>();
  if (!std::isfinite(d) || d < lo || d > hi || (open_lo && d == lo) || (open_hi && d == hi)) {
    std::ostringstream m;
    m << d << " is out of range " << (open_lo ? "(" : "[") << lo << ", " << hi << (open_hi ? ")" : "]");
    refuse(path, m.str());
  }
  return d;
}

// An unsigned integer; with `suffixes` also a string as the apps' options take it ("64K").
std::uint64_t uint_at(const Json& v, const std::string& path, std::uint64_t lo, std::uint64_t hi,
                      Suffixes suffixes = Suffixes::kNone) {
  std::string text;
  if (v.is_number_unsigned()) {
    text = std::to_string(v.get<std::uint64_t>());
  } else if (v.is_string() && suffixes != Suffixes::kNone) {
    text = v.get<std::string>();
  } else {
    refuse(path, suffixes != Suffixes::kNone ? "must be a whole number or a string such as \"64K\""
                                             : "must be a whole number");
  }
  std::uint64_t out = 0;
  // cli_number names the "option" first; here the option is the JSON path.
  if (Status s = parse_uint(path, text, lo, hi, out, suffixes); !s.ok())
    refuse(path, s.message().substr(path.size() + 2));
  return out;
}

std::uint64_t size_at(const Json& v, const std::string& path, std::uint64_t lo = 0) {
  return uint_at(v, path, lo, kMaxBytes, Suffixes::kBinary);
}

std::vector<std::string> strings_at(const Json& v, const std::string& path) {
  if (!v.is_array()) refuse(path, "must be an array of strings");
  if (v.size() > kMaxListStrings) refuse(path, "more than " + std::to_string(kMaxListStrings) + " entries");
  std::vector<std::string> out;
  for (std::size_t i = 0; i < v.size(); ++i) out.push_back(string_at(v[i], path + "[" + std::to_string(i) + "]"));
  return out;
}

void read_fabric(const Json& j, ScenarioFabric& f) {
  const std::string p = "fabric";
  object(j, p,
         {"topology", "host_gbps", "uplink_gbps", "ecmp_hash", "delay_us", "buffer_bytes", "ecn", "pfc", "loss",
          "links", "link_down"});
  if (const Json* v = field(j, "topology")) {
    f.topology = string_at(*v, p + ".topology");
    FabricTopology t;
    if (Status s = FabricTopology::parse(*f.topology, t); !s.ok()) {
      const std::string m = s.message();  // "--fabric: ...": the path stands for the option
      refuse(p + ".topology", m.rfind("--fabric: ", 0) == 0 ? m.substr(10) : m);
    }
    f.leaves = t.leaves;
    f.spines = t.spines;
  }
  if (const Json* v = field(j, "host_gbps")) f.host_gbps = real_at(*v, p + ".host_gbps", 0, 1e4, true);
  if (const Json* v = field(j, "uplink_gbps")) f.uplink_gbps = real_at(*v, p + ".uplink_gbps", 0, 1e4, true);
  if (const Json* v = field(j, "ecmp_hash")) f.ecmp_hash = string_at(*v, p + ".ecmp_hash");
  if (const Json* v = field(j, "delay_us")) f.delay_us = real_at(*v, p + ".delay_us", 0, 1e6);
  if (const Json* v = field(j, "buffer_bytes")) f.buffer_bytes = size_at(*v, p + ".buffer_bytes", 1);
  if (const Json* v = field(j, "loss")) f.loss = real_at(*v, p + ".loss", 0, 1, false, true);
  if (const Json* v = field(j, "ecn")) {
    const std::string q = p + ".ecn";
    object(*v, q, {"kmin_bytes", "kmax_bytes", "pmax"});
    ScenarioEcn e;
    if (const Json* w = field(*v, "kmin_bytes")) e.kmin_bytes = size_at(*w, q + ".kmin_bytes");
    if (const Json* w = field(*v, "kmax_bytes")) e.kmax_bytes = size_at(*w, q + ".kmax_bytes");
    if (const Json* w = field(*v, "pmax")) e.pmax = real_at(*w, q + ".pmax", 0, 1);
    if (e.kmin_bytes && e.kmax_bytes && *e.kmin_bytes > *e.kmax_bytes) refuse(q + ".kmin_bytes", "exceeds kmax_bytes");
    f.ecn = e;
  }
  if (const Json* v = field(j, "pfc")) {
    const std::string q = p + ".pfc";
    ScenarioPfc pfc;
    if (v->is_boolean()) {
      pfc.lossless = v->get<bool>();
    } else if (v->is_object()) {
      object(*v, q, {"xoff_bytes", "xon_bytes"});
      pfc.lossless = true;
      if (const Json* w = field(*v, "xoff_bytes")) pfc.xoff_bytes = size_at(*w, q + ".xoff_bytes", 1);
      if (const Json* w = field(*v, "xon_bytes")) pfc.xon_bytes = size_at(*w, q + ".xon_bytes");
      if (pfc.xoff_bytes && pfc.xon_bytes && *pfc.xon_bytes > *pfc.xoff_bytes)
        refuse(q + ".xon_bytes", "exceeds xoff_bytes");
    } else {
      refuse(q, "must be true, false or an object {xoff_bytes, xon_bytes}");
    }
    f.pfc = pfc;
  }
  if (const Json* v = field(j, "links")) {
    f.links = strings_at(*v, p + ".links");
    f.has_links = true;
  }
  if (const Json* v = field(j, "link_down")) {
    f.link_down = strings_at(*v, p + ".link_down");
    f.has_link_down = true;
  }
  // Leaf-spine only (docs/scenario.md): on the star they would mean nothing.
  if (f.leaves == 0)
    for (const char* k : {"uplink_gbps", "ecmp_hash", "links", "link_down"})
      if (field(j, k) != nullptr) refuse(p + "." + k, "only with topology leafspine:L,S");
}

void read_transport(const Json& j, ScenarioTransport& t) {
  const std::string p = "transport";
  object(j, p, {"cc", "preset", "line_gbps", "recovery", "mtu", "message_bytes"});
  if (const Json* v = field(j, "cc")) t.cc = choice_at(*v, p + ".cc", {"none", "dcqcn"});
  if (const Json* v = field(j, "preset")) t.preset = choice_at(*v, p + ".preset", {"paper", "mlx5"});
  if (const Json* v = field(j, "recovery")) t.recovery = choice_at(*v, p + ".recovery", {"gbn", "sr"});
  if (const Json* v = field(j, "line_gbps")) t.line_gbps = real_at(*v, p + ".line_gbps", 0, 1e4, true);
  if (const Json* v = field(j, "mtu")) {
    if (!v->is_number_unsigned()) refuse(p + ".mtu", "must be a whole number (256, 512, 1024, 2048 or 4096)");
    std::uint32_t mtu = 0;
    if (Status s = parse_ib_mtu(p + ".mtu", std::to_string(v->get<std::uint64_t>()), mtu); !s.ok())
      refuse(p + ".mtu", s.message().substr(p.size() + 6));
    t.mtu = mtu;
  }
  if (const Json* v = field(j, "message_bytes")) t.message_bytes = size_at(*v, p + ".message_bytes", 1);
}

void read_traffic(const Json& j, ScenarioTraffic& t, const std::optional<double>& duration_ms) {
  const std::string p = "traffic";
  object(j, p, {"flows", "pattern", "algo", "ranks", "size"});
  const bool flows = field(j, "flows") != nullptr, pattern = field(j, "pattern") != nullptr;
  if (flows == pattern) refuse(p, "give exactly one of flows and pattern");
  if (flows) {
    for (const char* k : {"algo", "ranks", "size"})
      if (field(j, k) != nullptr) refuse(p + "." + k, "only with pattern, not with flows");
    const Json& a = j["flows"];
    if (!a.is_array() || a.empty()) refuse(p + ".flows", "must be a non-empty array of {start_ms, stop_ms}");
    if (a.size() > kMaxFlows) refuse(p + ".flows", "more than " + std::to_string(kMaxFlows) + " flows");
    const double end = duration_ms.value_or(kMaxMs);
    for (std::size_t i = 0; i < a.size(); ++i) {
      const std::string q = p + ".flows[" + std::to_string(i) + "]";
      object(a[i], q, {"start_ms", "stop_ms"});
      ScenarioFlow f;
      if (const Json* v = field(a[i], "start_ms")) f.start_ms = real_at(*v, q + ".start_ms", 0, end, false, true);
      if (const Json* v = field(a[i], "stop_ms")) {
        f.stop_ms = real_at(*v, q + ".stop_ms", 0, end, true);
        if (*f.stop_ms <= f.start_ms) refuse(q + ".stop_ms", "must be after start_ms");
      }
      t.flows.push_back(f);
    }
    t.has_flows = true;
    return;
  }
  t.pattern = string_at(j["pattern"], p + ".pattern");
  if (const Json* v = field(j, "algo")) t.algo = string_at(*v, p + ".algo");
  if (const Json* v = field(j, "ranks")) t.ranks = uint_at(*v, p + ".ranks", 2, 1u << 20, Suffixes::kDecimal);
  if (const Json* v = field(j, "size")) t.size = size_at(*v, p + ".size", 1);
}

void read(const Json& j, Scenario& s) {
  object(j, "", {"name", "description", "seed", "duration_ms", "fabric", "transport", "traffic"});
  const Json* name = field(j, "name");
  if (name == nullptr) refuse("name", "required");
  s.name = string_at(*name, "name");
  if (s.name.empty() || s.name.size() > 64) refuse("name", "must be 1..64 characters of a-z, 0-9, _ and -");
  for (char c : s.name)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
      refuse("name", apps::quoted(s.name) + ": only a-z, 0-9, _ and - (it names output)");
  if (const Json* v = field(j, "description")) s.description = string_at(*v, "description");
  if (const Json* v = field(j, "seed")) s.seed = uint_at(*v, "seed", 0, UINT64_MAX);
  if (const Json* v = field(j, "duration_ms")) s.duration_ms = real_at(*v, "duration_ms", 0, kMaxMs, true);
  if (const Json* v = field(j, "fabric")) read_fabric(*v, s.fabric);
  if (const Json* v = field(j, "transport")) read_transport(*v, s.transport);
  if (const Json* v = field(j, "traffic")) read_traffic(*v, s.traffic, s.duration_ms);
}

}  // namespace

Status parse_scenario(std::string_view text, const std::string& file, Scenario& out) {
  Scenario s;
  s.file = file;
  Json j;
  try {
    j = Json::parse(text.begin(), text.end());
  } catch (const Json::parse_error& e) {
    return Status::error(StatusCode::kInvalidArgument,
                         "scenario " + one_line(file) + ": not JSON: " + one_line(e.what()));
  }
  try {
    read(j, s);
  } catch (const Refused& r) {
    return Status::error(StatusCode::kInvalidArgument, "scenario " + one_line(file) + ": " + r.path + ": " + r.why);
  }
  out = std::move(s);
  return {};
}

Status load_scenario(const std::string& file, Scenario& out) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return Status::error(StatusCode::kInvalidArgument, "scenario " + one_line(file) + ": cannot be read");
  std::string text;
  text.resize(kMaxFileBytes + 1);
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) return Status::error(StatusCode::kInvalidArgument, "scenario " + one_line(file) + ": cannot be read");
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > kMaxFileBytes)
    return Status::error(StatusCode::kInvalidArgument, "scenario " + one_line(file) + ": larger than 1 MiB");
  return parse_scenario(text, file, out);
}

Status scenario_refusal(const Scenario& s, std::string_view path, std::string_view why) {
  return Status::error(StatusCode::kInvalidArgument,
                       "scenario " + one_line(s.file) + ": " + std::string(path) + ": " + std::string(why));
}

}  // namespace droce::apps
