// LinkSpec: the --link grammar (link_spec.h) and its application to a leaf-spine's links.
#include "engine/lab/link_spec.h"

#include <charconv>
#include <cmath>
#include <string_view>

#include "engine/lab/leaf_spine.h"

namespace droce::engine {

namespace {

bool parse_u32(std::string_view s, std::uint32_t& v) {
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  return !s.empty() && r.ec == std::errc() && r.ptr == s.data() + s.size();
}

bool parse_double(std::string_view s, double lo, double hi, double& v) {
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  return !s.empty() && r.ec == std::errc() && r.ptr == s.data() + s.size() && std::isfinite(v) && v >= lo && v <= hi;
}

// Bytes, with K or M for 1024 and 1024 * 1024 (what droce's byte options mean by them); at most 1 GiB.
bool parse_bytes(std::string_view s, std::uint64_t& v) {
  std::uint64_t factor = 1;
  if (!s.empty() && (s.back() == 'K' || s.back() == 'M')) {
    factor = s.back() == 'K' ? 1024 : 1024 * 1024;
    s.remove_suffix(1);
  }
  std::uint64_t n = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), n);
  if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size() || n > (1ull << 30) / factor) return false;
  v = n * factor;
  return true;
}

// "A:B:C" split in three, or false.
bool split3(std::string_view s, std::string_view out[3]) {
  const std::size_t a = s.find(':');
  if (a == std::string_view::npos) return false;
  const std::size_t b = s.find(':', a + 1);
  if (b == std::string_view::npos || s.find(':', b + 1) != std::string_view::npos) return false;
  out[0] = s.substr(0, a);
  out[1] = s.substr(a + 1, b - a - 1);
  out[2] = s.substr(b + 1);
  return true;
}

}  // namespace

Status LinkSpec::parse(const std::string& spec, LinkSpec& out) {
  const auto bad = [&](const std::string& why) {
    return Status::error(StatusCode::kInvalidArgument, "--link: '" + spec + "': " + why);
  };
  const std::string_view v(spec);
  const std::size_t colon = v.find(':');
  if (colon == std::string_view::npos) return bad("expected leafL-spineS:KEY=VALUE[,KEY=VALUE...]");
  LinkSpec s;
  s.text = spec;
  const std::string_view name = v.substr(0, colon);
  const std::size_t dash = name.find("-spine");
  if (name.substr(0, 4) != "leaf" || dash == std::string_view::npos || !parse_u32(name.substr(4, dash - 4), s.leaf) ||
      !parse_u32(name.substr(dash + 6), s.spine))
    return bad("a link is named leafL-spineS (e.g. leaf0-spine1)");
  std::string_view rest = v.substr(colon + 1);
  if (rest.empty()) return bad("no settings after the link's name");
  std::vector<std::string_view> seen;
  bool pfc_given = false;
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    const std::string_view kv = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    if (comma != std::string_view::npos && rest.empty()) return bad("a trailing ','");
    const std::size_t eq = kv.find('=');
    if (eq == std::string_view::npos) return bad("'" + std::string(kv) + "' is not KEY=VALUE");
    const std::string_view key = kv.substr(0, eq), val = kv.substr(eq + 1);
    for (std::string_view k : seen)
      if (k == key) return bad("'" + std::string(key) + "' given twice");
    seen.push_back(key);
    const std::string k(key);
    if (key == "dir") {
      if (val == "both") {
        s.up = s.down = true;
      } else if (val == "up" || val == "down") {
        s.up = val == "up";
        s.down = !s.up;
      } else {
        return bad("dir must be both, up or down");
      }
    } else if (key == "gbps") {
      double g = 0;
      if (!parse_double(val, 0, 1000, g)) return bad("gbps must be a rate in [0, 1000]");
      s.gbps = g;
    } else if (key == "buffer") {
      std::uint64_t b = 0;
      if (!parse_bytes(val, b) || b < 2048) return bad("buffer must be bytes (K, M), 2048..1G");
      s.buffer_bytes = b;
    } else if (key == "delay-us") {
      double d = 0;
      if (!parse_double(val, 0, 1e6, d)) return bad("delay-us must be in [0, 1e6]");
      s.port.delay_us = d;
    } else if (key == "ecn") {
      std::string_view f[3];
      std::uint64_t kmin = 0, kmax = 0;
      double pmax = 0;
      if (!split3(val, f) || !parse_bytes(f[0], kmin) || !parse_bytes(f[1], kmax) || !parse_double(f[2], 0, 1, pmax))
        return bad("ecn must be KMIN:KMAX:PMAX (bytes with K, M; PMAX in [0, 1])");
      if (kmin > kmax) return bad("ecn: KMIN must not exceed KMAX");
      s.port.kmin_bytes = kmin;
      s.port.kmax_bytes = kmax;
      s.port.pmax = pmax;
    } else if (key == "pfc") {
      pfc_given = true;
      if (val == "on" || val == "off") {
        s.port.pfc = val == "on";
      } else {
        const std::size_t c = val.find(':');
        std::uint64_t xoff = 0, xon = 0;
        if (c == std::string_view::npos || !parse_bytes(val.substr(0, c), xoff) || !parse_bytes(val.substr(c + 1), xon))
          return bad("pfc must be on, off or XOFF:XON (bytes with K, M)");
        if (xon >= xoff) return bad("pfc: XON must be below XOFF");
        s.port.pfc = true;
        s.port.pfc_xoff_bytes = xoff;
        s.port.pfc_xon_bytes = xon;
      }
    } else {
      return bad("unknown key '" + k + "' (dir, gbps, buffer, delay-us, ecn, pfc)");
    }
  }
  // PFC is enabled per link at both ends (802.1Qbb 36.1.3.2, agreed by DCBX): not one way.
  if (pfc_given && !(s.up && s.down)) return bad("pfc is set for the link both ways: leave dir at both");
  out = s;
  return {};
}

Status apply_link_specs(const std::vector<LinkSpec>& specs, LeafSpineConfig& cfg) {
  const std::size_t links = std::size_t{cfg.leaves} * cfg.spines;
  if (specs.empty()) return {};
  if (cfg.uplinks.empty()) cfg.uplinks.assign(links, cfg.uplink);
  if (cfg.downlinks.empty()) cfg.downlinks.assign(links, cfg.downlink);
  if (cfg.uplinks.size() != links || cfg.downlinks.size() != links)
    return Status::fail(StatusCode::kInvalidArgument, "leaf-spine: per-link parameters need one per leaf-spine link");
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const LinkSpec& s = specs[i];
    if (s.leaf >= cfg.leaves || s.spine >= cfg.spines)
      return Status::error(StatusCode::kInvalidArgument, "--link: no link " + s.name() + " in a fabric of " +
                                                             std::to_string(cfg.leaves) + " leaves and " +
                                                             std::to_string(cfg.spines) + " spines");
    for (std::size_t j = 0; j < i; ++j)
      if (specs[j].leaf == s.leaf && specs[j].spine == s.spine && ((specs[j].up && s.up) || (specs[j].down && s.down)))
        return Status::error(StatusCode::kInvalidArgument, "--link: " + s.name() + " given twice for one direction");
    const std::size_t k = std::size_t{s.leaf} * cfg.spines + s.spine;
    for (LinkQueueParams* p : {s.up ? &cfg.uplinks[k] : nullptr, s.down ? &cfg.downlinks[k] : nullptr}) {
      if (p == nullptr) continue;
      if (s.gbps) p->gbps = *s.gbps;
      if (s.buffer_bytes) p->buffer_bytes = *s.buffer_bytes;
      p->port = s.port;
    }
  }
  return {};
}

}  // namespace droce::engine
