// droce-gen's control lines (control_lines.h): strict, every field checked, the peer's text
// quoted short and printable in the errors.
#include "apps/droce-gen/control_lines.h"

#include <droce/engine/exchange/oob_exchange.h>

#include <cstdio>
#include <string_view>

namespace droce::gen {
namespace {

// The fields of a line, split at single spaces; an empty field (two spaces, a leading or
// trailing one) makes it malformed.
bool split_fields(const std::string& line, std::vector<std::string_view>& out) {
  out.clear();
  std::string_view rest(line);
  for (std::size_t i = 0; i <= engine::kMaxLineBytes; ++i) {
    const auto sp = rest.find(' ');
    out.push_back(rest.substr(0, sp));
    if (out.back().empty()) return false;
    if (sp == std::string_view::npos) return true;
    rest.remove_prefix(sp + 1);
  }
  return false;
}

// The peer's text in an error message: printable, and short.
std::string quoted(std::string_view s) {
  std::string q = "'";
  for (std::size_t i = 0; i < s.size() && i < 40; ++i) q += s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
  return q + (s.size() > 40 ? "...'" : "'");
}

}  // namespace

std::string format_mr_line(const MrLine& m) {
  char b[64];
  std::snprintf(b, sizeof(b), "MR %llx %x %u", static_cast<unsigned long long>(m.vaddr), m.rkey, m.slots);
  return b;
}

engine::Status parse_mr_line(const std::string& line, MrLine& out) {
  std::vector<std::string_view> f;
  if (!split_fields(line, f) || f[0] != "MR" || f.size() != 4)
    return engine::Status::error(
        StatusCode::kPeer,
        "the peer sent " + quoted(line) + " where 'MR <vaddr> <rkey> <slots>' was expected (is it droce-gen?)");
  std::uint64_t va, rkey, slots;
  if (!engine::parse_line_hex(f[1], ~std::uint64_t{0}, va))
    return engine::Status::error(StatusCode::kPeer,
                                 "MR line from the peer: vaddr " + quoted(f[1]) + " is not a 64-bit hex number");
  if (!engine::parse_line_hex(f[2], 0xFFFFFFFF, rkey))
    return engine::Status::error(StatusCode::kPeer,
                                 "MR line from the peer: rkey " + quoted(f[2]) + " is not a 32-bit hex number");
  if (!engine::parse_line_decimal(f[3], 0xFFFFFFFF, slots) || slots == 0)
    return engine::Status::error(
        StatusCode::kPeer, "MR line from the peer: slots " + quoted(f[3]) + " is not a count from 1 to 4294967295");
  out = {va, static_cast<std::uint32_t>(rkey), static_cast<std::uint32_t>(slots)};
  return {};
}

std::string format_end_line(const std::vector<std::uint64_t>& counts) {
  std::string l = "END";
  for (auto c : counts) l += " " + std::to_string(c);
  return l;
}

engine::Status parse_end_line(const std::string& line, std::size_t qps, std::vector<std::uint64_t>& counts) {
  std::vector<std::string_view> f;
  if (!split_fields(line, f) || f[0] != "END")
    return engine::Status::error(StatusCode::kPeer,
                                 "the peer sent " + quoted(line) + " where 'END <count per QP>' was expected");
  if (f.size() - 1 != qps)
    return engine::Status::error(StatusCode::kPeer, "END line from the peer has " + std::to_string(f.size() - 1) +
                                                        " counts for " + std::to_string(qps) + " QPs");
  counts.assign(qps, 0);
  for (std::size_t i = 0; i < qps; ++i)
    if (!engine::parse_line_decimal(f[i + 1], engine::kMaxLineCount, counts[i]))
      return engine::Status::error(StatusCode::kPeer, "END line from the peer: QP " + std::to_string(i) + "'s count " +
                                                          quoted(f[i + 1]) + " is not a decimal count up to 2^53-1");
  return {};
}

std::string format_result_line(const ResultLine& r) {
  return "RESULT " + std::to_string(r.received) + " " + std::to_string(r.lost) + " " + std::to_string(r.duplicated) +
         " " + std::to_string(r.out_of_order) + " " + std::to_string(r.corrupted) + " " + std::to_string(r.errors);
}

engine::Status parse_result_line(const std::string& line, ResultLine& out) {
  std::vector<std::string_view> f;
  if (!split_fields(line, f) || f[0] != "RESULT" || f.size() != 7)
    return engine::Status::error(StatusCode::kPeer,
                                 "the peer sent " + quoted(line) + " where 'RESULT' and six counts were expected");
  static constexpr const char* kNames[6] = {"received", "lost", "duplicated", "out of order", "corrupted", "errors"};
  std::uint64_t v[6];
  for (int i = 0; i < 6; ++i)
    if (!engine::parse_line_decimal(f[static_cast<std::size_t>(i) + 1], engine::kMaxLineCount, v[i]))
      return engine::Status::error(StatusCode::kPeer, std::string("RESULT line from the peer: ") + kNames[i] + " " +
                                                          quoted(f[static_cast<std::size_t>(i) + 1]) +
                                                          " is not a decimal count up to 2^53-1");
  out = {v[0], v[1], v[2], v[3], v[4], v[5]};
  return {};
}

}  // namespace droce::gen
