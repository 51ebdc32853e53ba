// droce-gen's per-message draws (see mix.h).
#include "apps/droce-gen/mix.h"

#include <algorithm>
#include <string_view>

#include "apps/common/cli_number.h"

namespace droce::gen {

using engine::Status;
using engine::StatusCode;

Status WeightedDraw::add(std::uint32_t value, std::uint32_t weight) {
  if (n_ == kMaxChoices)
    return Status::error(StatusCode::kInvalidArgument, "more than " + std::to_string(kMaxChoices) + " entries");
  cum_[n_] = total() + weight;
  values_[n_] = value;
  ++n_;
  return {};
}

namespace {

// SplitMix64's finaliser (Steele, Lea, Flood, OOPSLA 2014): every input bit reaches every output
// bit, so neighbouring sequence numbers and QPs draw independently.
std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace

std::size_t WeightedDraw::draw_index(std::uint64_t seed, std::uint64_t stream, std::uint32_t qp,
                                     std::uint64_t seq) const {
  if (n_ <= 1) return 0;
  const std::uint64_t h = mix64(mix64(mix64(seed ^ (stream << 48)) ^ qp) ^ seq);
  // total() <= 64 x 10^6: the modulo's bias is below 2^-37.
  const std::uint64_t u = h % total();
  return static_cast<std::size_t>(std::upper_bound(cum_.begin(), cum_.begin() + n_, u) - cum_.begin());
}

std::string WeightedDraw::text() const {
  std::string t;
  for (std::size_t i = 0; i < n_; ++i) {
    if (i != 0) t += ',';
    t += std::to_string(values_[i]);
    t += ':';
    t += std::to_string(weight(i));
  }
  return t;
}

namespace {

// Splits "A:W,B:W" into its entries; each entry's name and weight checked by `entry`.
template <typename Entry>
Status for_each_entry(const char* option, const std::string& text, Entry entry) {
  if (text.empty()) return Status::error(StatusCode::kInvalidArgument, std::string(option) + ": empty");
  for (std::size_t start = 0;;) {
    const std::size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const std::size_t colon = item.find(':');
    if (colon == std::string::npos || item.find(':', colon + 1) != std::string::npos)
      return Status::error(StatusCode::kInvalidArgument,
                           std::string(option) + ": " + apps::quoted(item) + " is not NAME:WEIGHT");
    std::uint32_t weight = 0;
    if (Status s = apps::parse_uint(std::string(option) + " weight", item.substr(colon + 1), 1,
                                    WeightedDraw::kMaxWeight, weight);
        !s.ok())
      return s;
    if (Status s = entry(item.substr(0, colon), weight); !s.ok()) return s;
    if (comma == std::string::npos) return {};
    start = comma + 1;
  }
}

bool has_value(const WeightedDraw& d, std::uint32_t v) {
  for (std::size_t i = 0; i < d.size(); ++i)
    if (d.value(i) == v) return true;
  return false;
}

}  // namespace

Status parse_mix(const std::string& text, WeightedDraw& out) {
  WeightedDraw mix;
  static constexpr std::string_view kOps[] = {"send", "write", "read"};
  Status s = for_each_entry("--mix", text, [&mix](const std::string& name, std::uint32_t weight) {
    if (name == "fetch_add" || name == "cmp_swap")
      return Status::error(StatusCode::kInvalidArgument,
                           "--mix: " + name +
                               " cannot be mixed (an atomic's result is checked against every earlier operation "
                               "on its QP's counter): use --op " +
                               name);
    for (std::uint32_t op = 0; op < 3; ++op) {
      if (name != kOps[op]) continue;
      if (has_value(mix, op)) return Status::error(StatusCode::kInvalidArgument, "--mix: " + name + " given twice");
      return mix.add(op, weight);
    }
    return Status::error(StatusCode::kInvalidArgument,
                         "--mix: unknown op " + apps::quoted(name) + " (send, write or read)");
  });
  if (!s.ok()) return s;
  out = mix;
  return {};
}

bool is_weighted_sizes(const std::string& text) { return text.find(':') != std::string::npos; }

Status parse_weighted_sizes(const std::string& text, std::uint32_t max_bytes, WeightedDraw& out,
                            std::vector<std::uint32_t>& sizes) {
  WeightedDraw d;
  std::vector<std::uint32_t> list;
  Status s = for_each_entry("--size", text, [&](const std::string& name, std::uint32_t weight) {
    std::uint32_t size = 0;
    if (Status e = apps::parse_uint("--size", name, 1, max_bytes, size, apps::Suffixes::kBinary); !e.ok()) return e;
    if (has_value(d, size))
      return Status::error(StatusCode::kInvalidArgument, "--size: " + std::to_string(size) + " given twice");
    if (Status e = d.add(size, weight); !e.ok())
      return Status::error(StatusCode::kInvalidArgument, "--size: " + e.message());
    list.push_back(size);
    return Status{};
  });
  if (!s.ok()) return s;
  out = d;
  sizes = std::move(list);
  return {};
}

}  // namespace droce::gen
