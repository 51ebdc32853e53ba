// droce-gen's own control lines over the TCP connection that ibv_rc_pingpong's exchange opened
// (docs/droce-gen.md): the server's responder buffer (MR), the client's end of run (END) and the
// server's answer (RESULT). They are droce-gen's private protocol, so they live here and not in
// libdroce; the line framing (OobConnection::send_line / recv_line) and the strict number
// parsers (parse_line_decimal, parse_line_hex) stay in engine/exchange/oob_exchange.h. Every
// error is kPeer: the line came from the peer.
#pragma once

#include <droce/engine/core/status.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace droce::gen {

// "MR <vaddr hex> <rkey hex> <slots decimal>": a responder buffer the peer may WRITE or READ.
struct MrLine {
  std::uint64_t vaddr = 0;
  std::uint32_t rkey = 0;
  std::uint32_t slots = 0;  // at least 1
};
[[nodiscard]] std::string format_mr_line(const MrLine& m);
[[nodiscard]] engine::Status parse_mr_line(const std::string& line, MrLine& out);
// "END <count> ...": the client's end of run, one count per QP (exactly `qps` of them).
[[nodiscard]] std::string format_end_line(const std::vector<std::uint64_t>& counts);
[[nodiscard]] engine::Status parse_end_line(const std::string& line, std::size_t qps,
                                            std::vector<std::uint64_t>& counts);
// "RESULT <received> <lost> <duplicated> <out of order> <corrupted> <errors>": the server's answer.
struct ResultLine {
  std::uint64_t received = 0, lost = 0, duplicated = 0, out_of_order = 0, corrupted = 0, errors = 0;
};
[[nodiscard]] std::string format_result_line(const ResultLine& r);
[[nodiscard]] engine::Status parse_result_line(const std::string& line, ResultLine& out);

}  // namespace droce::gen
