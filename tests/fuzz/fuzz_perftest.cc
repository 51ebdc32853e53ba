// libFuzzer target: perftest 6.06's exchange messages (engine/exchange/perftest_exchange.h) from
// a hostile peer. The first byte picks the mode; with bit 7 set the rest is one message, given to
// the parser of its length (version 16, MTU 2, key message 108, BW report 40, sys data 4), whose
// accepted values must format back and parse to the same; otherwise the rest is the peer's whole
// byte stream, read by a PerftestSession (role, test and -a from the mode byte) from a socket
// pair through the preamble, the connection, the per-size barriers and the end. Nothing may
// crash, read out of bounds, or wait: the stream ends in end of file.
#include <sys/socket.h>
#include <unistd.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "engine/exchange/perftest_exchange.h"

using namespace droce::engine;

namespace {

void parse_one(const std::vector<std::uint8_t>& m) {
  std::string version;
  if (parse_perftest_version(m.data(), m.size(), version).ok()) {
    if (version.size() >= kPerftestVersionBytes || version.find('.') == std::string::npos) __builtin_trap();
    std::string again;
    if (!parse_perftest_version(reinterpret_cast<const std::uint8_t*>(format_perftest_version(version).data()),
                                kPerftestVersionBytes, again)
             .ok() ||
        again != version)
      __builtin_trap();
  }
  std::uint32_t mtu = 0;
  if (parse_perftest_mtu(m.data(), m.size(), mtu).ok()) {
    if (mtu < 256 || mtu > 4096 || format_perftest_mtu(mtu) != std::string(reinterpret_cast<const char*>(m.data()), 2))
      __builtin_trap();
  }
  PerftestKeys k;
  if (parse_perftest_keys(m.data(), m.size(), k).ok()) {
    if (k.qpn == 0 || k.qpn > 0xFFFFFF || k.psn > 0xFFFFFF) __builtin_trap();
    const std::string f = format_perftest_keys(k);
    PerftestKeys again;
    if (f.size() != kPerftestKeyBytes ||
        !parse_perftest_keys(reinterpret_cast<const std::uint8_t*>(f.data()), f.size(), again).ok())
      __builtin_trap();
    if (again.qpn != k.qpn || again.psn != k.psn || again.rkey != k.rkey || again.vaddr != k.vaddr ||
        again.lid != k.lid || again.out_reads != k.out_reads || again.srqn != k.srqn ||
        std::memcmp(again.gid, k.gid, 16) != 0)
      __builtin_trap();
  }
  if (m.size() == 40) {
    const PerftestBwReport r{parse_be64(m.data()), parse_be64(m.data() + 8), bits_double(parse_be64(m.data() + 16)),
                             bits_double(parse_be64(m.data() + 24)), bits_double(parse_be64(m.data() + 32))};
    if (validate_perftest_bw_report(r).ok()) {
      for (double d : {r.bw_peak, r.bw_avg, r.msg_rate})
        if (!std::isfinite(d) || d < 0) __builtin_trap();
      if (r.size > kPerftestMaxReportSize) __builtin_trap();
    }
  }
  if (m.size() == 4 && format_be32(parse_be32(m.data())) != std::string(reinterpret_cast<const char*>(m.data()), 4))
    __builtin_trap();
}

Status run_session(std::uint8_t mode, OobConnection& conn) {
  static constexpr PerftestTest kTests[] = {PerftestTest::kSendBw,   PerftestTest::kWriteBw,  PerftestTest::kReadBw,
                                            PerftestTest::kSendLat,  PerftestTest::kWriteLat, PerftestTest::kReadLat,
                                            PerftestTest::kAtomicBw, PerftestTest::kAtomicLat};
  const PerftestTest t = kTests[(mode >> 2) % 8];
  PerftestSession s(conn, (mode & 1) != 0 ? PerftestRole::kClient : PerftestRole::kServer, 1000);
  if ((mode & 2) != 0) s.set_idle([] {});
  PerftestPreamble pre;
  if (Status st = s.preamble(1024, pre); !st.ok()) return st;
  if (pre.mtu > 1024 || pre.cycle_buffer > (1u << 20) || pre.cache_line > 4096) __builtin_trap();
  PerftestKeys mine;
  mine.qpn = 0x11;
  std::vector<PerftestKeys> theirs;
  if (Status st = s.connect(t, {mine}, theirs, [] { return Status(); }); !st.ok()) return st;
  if (theirs.size() != 1 || theirs[0].qpn == 0) __builtin_trap();
  if (Status st = s.before_size(t, mine); !st.ok()) return st;
  if (Status st = s.after_size(t, (mode & 0x40) != 0, mine); !st.ok()) return st;
  PerftestBwReport report{4096, 8, 0.5, 0.5, 0.0001}, peer;
  Status st = s.finish(t, mine, report, peer);
  // What a server takes from a client is a report it can print.
  const bool reports = t == PerftestTest::kWriteBw || t == PerftestTest::kReadBw || t == PerftestTest::kAtomicBw;
  if (st.ok() && s.role() == PerftestRole::kServer && reports && !validate_perftest_bw_report(peer).ok())
    __builtin_trap();
  return st;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1 || size > 8192) return 0;
  const std::uint8_t mode = data[0];
  // An exact-size heap copy so ASan sees any read past the end.
  const std::vector<std::uint8_t> rest(data + 1, data + size);
  if ((mode & 0x80) != 0) {
    parse_one(rest);
    return 0;
  }
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return 0;
  if (!rest.empty() && ::send(sv[1], rest.data(), rest.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(rest.size()))
    __builtin_trap();
  // The peer has said all it will: our reads end in data or end of file. Its receive side stays
  // open (our answers land in its buffer, a few hundred bytes) until the session is over.
  ::shutdown(sv[1], SHUT_WR);
  {
    OobConnection conn(sv[0]);
    (void)run_session(mode, conn);
  }
  ::close(sv[1]);
  return 0;
}
