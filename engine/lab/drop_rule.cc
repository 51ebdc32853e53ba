// DropRule: the rules' matching. Flows are keyed by their 5-tuple (ecmp_hash's FlowKey reading),
// counted in an rte_hash whose slots index the per-flow frame counts.
#include "engine/lab/drop_rule.h"

#include <rte_errno.h>
#include <rte_jhash.h>

#include <atomic>
#include <charconv>
#include <cstring>

#include "engine/lab/ecmp_hash.h"

namespace droce::engine {

namespace {

std::atomic<unsigned> g_rules{0};

// The 5-tuple as a hash key: aligned words (rte_jhash reads 32-bit words), no padding bytes left unset.
struct FlowHashKey {
  alignas(8) std::uint8_t b[40] = {};
  explicit FlowHashKey(const FlowKey& k) {
    std::memcpy(b, k.src, 16);
    std::memcpy(b + 16, k.dst, 16);
    b[32] = k.proto;
    std::memcpy(b + 33, &k.src_port, 2);
    std::memcpy(b + 35, &k.dst_port, 2);
    b[37] = k.ipv6 ? 1 : 0;
  }
};

bool parse_number(const std::string& s, unsigned long long hi, unsigned long long& v) {
  int base = 10;
  std::size_t at = 0;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    at = 2;
  }
  const char* first = s.data() + at;
  const char* last = s.data() + s.size();
  const auto r = std::from_chars(first, last, v, base);
  return first != last && r.ec == std::errc() && r.ptr == last && v <= hi;
}

}  // namespace

Status DropRuleConfig::parse(const std::string& text, DropRuleConfig& out) {
  unsigned long long v = 0;
  if (text.rfind("every:", 0) == 0) {
    if (!parse_number(text.substr(6), 1'000'000'000, v) || v < 2)
      return Status::error(StatusCode::kInvalidArgument,
                           "--drop-rule: every:N takes N in 2..1000000000, not '" + text.substr(6) + "'");
    out.every_nth = static_cast<std::uint32_t>(v);
    return {};
  }
  if (text.rfind("ip-id:", 0) == 0) {
    if (!parse_number(text.substr(6), 255, v))
      return Status::error(StatusCode::kInvalidArgument,
                           "--drop-rule: ip-id:B takes a byte 0..255 (or 0x00..0xff), not '" + text.substr(6) + "'");
    out.ip_id_low_byte = static_cast<int>(v);
    return {};
  }
  return Status::error(StatusCode::kInvalidArgument, "--drop-rule: '" + text + "' is not every:N or ip-id:B");
}

std::unique_ptr<DropRule> DropRule::create(const DropRuleConfig& cfg, Status& err) {
  std::unique_ptr<DropRule> r(new DropRule());
  r->cfg_ = cfg;
  if (cfg.every_nth != 0) {
    const std::string name = "droce_drop_rule" + std::to_string(g_rules.fetch_add(1));
    rte_hash_parameters hp{};
    hp.name = name.c_str();
    hp.entries = kMaxFlows;
    hp.key_len = sizeof(FlowHashKey::b);
    hp.hash_func = rte_jhash;
    hp.socket_id = SOCKET_ID_ANY;
    r->flows_ = rte_hash_create(&hp);
    if (r->flows_ == nullptr) {
      err = Status::error(StatusCode::kNoMemory,
                          "drop rule: rte_hash_create failed: " + std::string(rte_strerror(rte_errno)));
      return nullptr;
    }
    // rte_hash may hand out slots up to entries plus its per-lcore caches.
    r->frames_.assign(static_cast<std::size_t>(rte_hash_max_key_id(r->flows_)) + 1, 0);
  }
  err = Status();
  return r;
}

DropRule::~DropRule() {
  if (flows_ != nullptr) rte_hash_free(flows_);
}

bool DropRule::drops(const std::uint8_t* f, std::uint32_t len) {
  bool ip = false, drop = false;
  if (cfg_.ip_id_low_byte >= 0) {
    // The IPv4 Identification (RFC 791), bytes 4-5 of the header, after an optional 802.1Q tag.
    std::uint32_t l3 = 14;
    std::uint16_t type = len >= 14 ? static_cast<std::uint16_t>(f[12] << 8 | f[13]) : 0;
    if (type == 0x8100 && len >= 18) {
      type = static_cast<std::uint16_t>(f[16] << 8 | f[17]);
      l3 = 18;
    }
    if (type == 0x0800 && len >= l3 + 20) {
      ip = true;
      drop = f[l3 + 5] == static_cast<std::uint8_t>(cfg_.ip_id_low_byte);
    }
  }
  FlowKey k;
  if (flows_ != nullptr && flow_key_of(f, len, k)) {
    ip = true;
    const FlowHashKey key(k);
    const std::int32_t slot = rte_hash_add_key(flows_, key.b);
    if (slot < 0 || static_cast<std::size_t>(slot) >= frames_.size()) {
      ++c_.untracked;
    } else if (std::uint32_t& n = frames_[static_cast<std::size_t>(slot)]; ++n == cfg_.every_nth) {
      n = 0;
      drop = true;
    }
  }
  c_.seen += ip ? 1 : 0;
  c_.dropped += drop ? 1 : 0;
  return drop;
}

}  // namespace droce::engine
