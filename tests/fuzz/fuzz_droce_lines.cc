// libFuzzer target: droce's own control lines (framing: engine/exchange/oob_exchange.h; droce-gen's
// lines: apps/droce-gen/control_lines.h) as a peer's byte stream. OobConnection's line framing reads it from a socket
// pair (it must never buffer past the 255-byte limit, return a line with a '\n' or a non-text byte, or loop), and each
// line goes through the MR, END and RESULT parsers: whatever they accept is strict digits within range and formats back
// to a line that parses to the same values.
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "apps/droce-gen/control_lines.h"
#include "engine/exchange/oob_exchange.h"

using namespace droce::engine;
using namespace droce::gen;

namespace {

// A number the strict parsers took is its digits exactly: no sign, space or prefix crept in.
void check_number(const std::string& text, std::uint64_t v, std::uint64_t max) {
  if (v > max) __builtin_trap();
  std::uint64_t again = 0;
  if (!parse_line_decimal(text, max, again) || again != v) __builtin_trap();
}

void parse_line(const std::string& line, std::size_t qps) {
  MrLine m;
  if (parse_mr_line(line, m).ok()) {
    MrLine again;
    if (m.slots == 0 || !parse_mr_line(format_mr_line(m), again).ok()) __builtin_trap();
    if (again.vaddr != m.vaddr || again.rkey != m.rkey || again.slots != m.slots) __builtin_trap();
  }
  std::vector<std::uint64_t> counts;
  if (parse_end_line(line, qps, counts).ok()) {
    std::vector<std::uint64_t> again;
    if (counts.size() != qps || !parse_end_line(format_end_line(counts), qps, again).ok() || again != counts)
      __builtin_trap();
    for (auto c : counts) check_number(std::to_string(c), c, kMaxLineCount);
  }
  ResultLine r;
  if (parse_result_line(line, r).ok()) {
    ResultLine again;
    if (!parse_result_line(format_result_line(r), again).ok() || again.received != r.received ||
        again.errors != r.errors)
      __builtin_trap();
  }
  // The number parsers on the whole line: accepted means digits only, and the value they spell.
  std::uint64_t v = 0;
  if (parse_line_decimal(line, ~std::uint64_t{0}, v)) {
    for (char ch : line)
      if (ch < '0' || ch > '9') __builtin_trap();
    std::string digits = std::to_string(v);
    if (line.size() < digits.size() || line.compare(line.size() - digits.size(), digits.size(), digits) != 0)
      __builtin_trap();
  }
  if (parse_line_hex(line, 0xFFFFFFFF, v) && (v > 0xFFFFFFFF || line.empty() || line.size() > 16)) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // The first byte picks the QP count END lines must carry; the rest is the peer's stream (a
  // socket pair's buffer takes it whole, so nothing here waits).
  if (size < 1 || size > 8192) return 0;
  const std::size_t qps = 1 + data[0] % 8;
  const std::string stream(reinterpret_cast<const char*>(data + 1), size - 1);
  parse_line(stream, qps);  // the parsers on arbitrary text, newlines and all

  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return 0;
  if (!stream.empty() &&
      ::send(sv[1], stream.data(), stream.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(stream.size()))
    __builtin_trap();
  ::close(sv[1]);  // the peer is done: every read below ends in data or end of file
  OobConnection conn(sv[0]);
  std::size_t consumed = 0;
  for (std::size_t round = 0; round <= stream.size() + 1; ++round) {
    std::string line;
    bool closed = false;
    Status why;
    if (conn.poll_line(line, closed, &why)) {
      if (line.size() > kMaxLineBytes) __builtin_trap();
      for (char ch : line)
        if (ch < 0x20 || ch > 0x7e) __builtin_trap();
      consumed += line.size() + 1;
      if (consumed > stream.size() || stream[consumed - 1] != '\n') __builtin_trap();
      parse_line(line, qps);
      continue;
    }
    if (closed) {
      if (why.ok()) __builtin_trap();  // a reason always comes with the end
      return 0;
    }
  }
  __builtin_trap();  // a stream that neither ends nor yields a line: poll_line looped
}
