// perftest 6.06's Ethernet exchange: strict formats and the per-test sequence of barriers.
#include "engine/exchange/perftest_exchange.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace droce::engine {
namespace {

constexpr char kDone[] = "done";  // sizeof == 5: perftest writes the NUL too

// IB MTU enum (IBTA §7.7.x, ibv_mtu): 1 = 256 ... 5 = 4096.
int mtu_enum(std::uint32_t bytes) {
  for (int e = 1; e <= 5; ++e)
    if (bytes == (128u << e)) return e;
  return 0;
}

}  // namespace

std::string format_perftest_version(const std::string& version) {
  std::string v(kPerftestVersionBytes, '\0');
  std::memcpy(v.data(), version.data(), std::min(version.size(), kPerftestVersionBytes - 1));
  return v;
}

Status parse_perftest_version(const std::uint8_t* m, std::size_t len, std::string& version) {
  if (len != kPerftestVersionBytes)
    return Status::error(StatusCode::kPeer,
                         "perftest version message has " + std::to_string(len) + " bytes, expected 16");
  const void* nul = std::memchr(m, 0, len);
  if (nul == nullptr) return Status::error(StatusCode::kPeer, "perftest version is not NUL-terminated");
  version.assign(reinterpret_cast<const char*>(m), static_cast<const std::uint8_t*>(nul) - m);
  // "major.minor" (perftest compares it with atof): digits, one dot, digits.
  const auto dot = version.find('.');
  bool ok = dot != std::string::npos && dot > 0 && dot + 1 < version.size() && dot < 4;
  for (std::size_t i = 0; ok && i < version.size(); ++i) ok = i == dot || (version[i] >= '0' && version[i] <= '9');
  if (!ok)
    return Status::error(StatusCode::kPeer,
                         "perftest version '" + version + "' is not a version number (is the peer perftest?)");
  if (std::strtod(version.c_str(), nullptr) < kPerftestOldestCompatible)
    return Status::error(StatusCode::kPeer,
                         "the peer runs perftest " + version + "; versions older than 5.70 use another exchange");
  return {};
}

std::string format_be32(std::uint32_t v) {
  const char b[4] = {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
                     static_cast<char>(v)};
  return std::string(b, 4);
}

std::uint32_t parse_be32(const std::uint8_t* p) {
  return static_cast<std::uint32_t>(p[0]) << 24 | static_cast<std::uint32_t>(p[1]) << 16 |
         static_cast<std::uint32_t>(p[2]) << 8 | p[3];
}

std::string format_be64(std::uint64_t v) {
  return format_be32(static_cast<std::uint32_t>(v >> 32)) + format_be32(static_cast<std::uint32_t>(v));
}

std::uint64_t parse_be64(const std::uint8_t* p) {
  return static_cast<std::uint64_t>(parse_be32(p)) << 32 | parse_be32(p + 4);
}

namespace {

Status check_report_figure(double v, double max, const char* name) {
  if (!std::isfinite(v) || v < 0 || v > max) {
    char b[160];
    std::snprintf(b, sizeof(b), "the peer's BW report: %s %g is not a figure from 0 to %g", name, v, max);
    return Status::error(StatusCode::kPeer, b);
  }
  return {};
}

}  // namespace

Status validate_perftest_bw_report(const PerftestBwReport& r) {
  if (r.size > kPerftestMaxReportSize)
    return Status::error(StatusCode::kPeer,
                         "the peer's BW report: message size " + std::to_string(r.size) + " is over 2^31 bytes");
  if (Status s = check_report_figure(r.bw_peak, kPerftestMaxReportBw, "BW peak"); !s.ok()) return s;
  if (Status s = check_report_figure(r.bw_avg, kPerftestMaxReportBw, "BW average"); !s.ok()) return s;
  if (Status s = check_report_figure(r.msg_rate, kPerftestMaxReportMsgRate, "message rate"); !s.ok()) return s;
  return {};
}

std::uint64_t double_bits(double d) {
  std::uint64_t b;
  std::memcpy(&b, &d, sizeof(b));
  return b;
}

double bits_double(std::uint64_t bits) {
  double d;
  std::memcpy(&d, &bits, sizeof(d));
  return d;
}

std::string format_perftest_mtu(std::uint32_t mtu_bytes) {
  return std::string(1, static_cast<char>('0' + mtu_enum(mtu_bytes))) + '\0';
}

Status parse_perftest_mtu(const std::uint8_t* m, std::size_t len, std::uint32_t& mtu_bytes) {
  if (len != 2)
    return Status::error(StatusCode::kPeer, "perftest MTU message has " + std::to_string(len) + " bytes, expected 2");
  if (m[0] < '1' || m[0] > '5' || m[1] != 0)
    return Status::error(StatusCode::kPeer, "perftest MTU message is not an IB MTU enum 1..5 followed by NUL");
  mtu_bytes = 128u << (m[0] - '0');
  return {};
}

std::string format_perftest_keys(const PerftestKeys& k) {
  char buf[kPerftestKeyBytes + 8];
  int n = std::snprintf(buf, sizeof(buf), "%04x:%04x:%06x:%06x:%08x:%016llx:", k.lid, k.out_reads, k.qpn & 0xFFFFFF,
                        k.psn & 0xFFFFFF, k.rkey, static_cast<unsigned long long>(k.vaddr));
  for (int i = 0; i < 16; ++i)
    n += std::snprintf(buf + n, sizeof(buf) - static_cast<std::size_t>(n), "%02x:", k.gid[i]);
  std::snprintf(buf + n, sizeof(buf) - static_cast<std::size_t>(n), "%08x:", k.srqn);
  return std::string(buf, kPerftestKeyBytes - 1) + '\0';
}

Status parse_perftest_keys(const std::uint8_t* m, std::size_t len, PerftestKeys& out) {
  if (len != kPerftestKeyBytes)
    return Status::error(StatusCode::kPeer, "perftest key message has " + std::to_string(len) +
                                                " bytes, expected 108 (is the peer using -x, the GID?)");
  if (m[107] != 0) return Status::error(StatusCode::kPeer, "perftest key message is not NUL-terminated");
  // Field (offset, digits, name); each is followed by ':'.
  struct Field {
    std::size_t at, digits;
    const char* name;
  };
  static constexpr Field kFields[] = {{0, 4, "LID"},  {5, 4, "out_reads"}, {10, 6, "QPN"},
                                      {17, 6, "PSN"}, {24, 8, "rkey"},     {33, 16, "vaddr"}};
  std::uint64_t v[6];
  for (int i = 0; i < 6; ++i) {
    const Field& f = kFields[i];
    if (m[f.at + f.digits] != ':')
      return Status::error(StatusCode::kPeer, std::string("perftest key message: ':' missing after ") + f.name);
    if (!parse_hex_digits(m + f.at, f.digits, v[i]))
      return Status::error(StatusCode::kPeer, std::string("perftest key message: ") + f.name + " is not hex");
  }
  for (int i = 0; i < 16; ++i) {
    std::uint64_t b;
    if (!parse_hex_digits(m + 50 + 3 * i, 2, b) || m[52 + 3 * i] != ':')
      return Status::error(StatusCode::kPeer,
                           "perftest key message: GID byte " + std::to_string(i) + " is not two hex digits and ':'");
    out.gid[i] = static_cast<std::uint8_t>(b);
  }
  std::uint64_t srqn;
  if (!parse_hex_digits(m + 98, 8, srqn) || m[106] != ':')
    return Status::error(StatusCode::kPeer, "perftest key message: SRQN is not hex");
  if (v[2] == 0) return Status::error(StatusCode::kPeer, "perftest key message: QPN 0 is not an RC QP");
  out.lid = static_cast<std::uint16_t>(v[0]);
  out.out_reads = static_cast<std::uint16_t>(v[1]);
  out.qpn = static_cast<std::uint32_t>(v[2]);
  out.psn = static_cast<std::uint32_t>(v[3]);
  out.rkey = static_cast<std::uint32_t>(v[4]);
  out.vaddr = v[5];
  out.srqn = static_cast<std::uint32_t>(srqn);
  return {};
}

const char* perftest_test_name(PerftestTest t) {
  switch (t) {
    case PerftestTest::kSendBw:
      return "send_bw";
    case PerftestTest::kWriteBw:
      return "write_bw";
    case PerftestTest::kReadBw:
      return "read_bw";
    case PerftestTest::kSendLat:
      return "send_lat";
    case PerftestTest::kWriteLat:
      return "write_lat";
    case PerftestTest::kReadLat:
      return "read_lat";
    case PerftestTest::kAtomicBw:
      return "atomic_bw";
    case PerftestTest::kAtomicLat:
      return "atomic_lat";
  }
  return "?";
}

bool perftest_is_bw(PerftestTest t) {
  return t == PerftestTest::kSendBw || t == PerftestTest::kWriteBw || t == PerftestTest::kReadBw ||
         t == PerftestTest::kAtomicBw;
}

bool perftest_is_atomic(PerftestTest t) { return t == PerftestTest::kAtomicBw || t == PerftestTest::kAtomicLat; }

bool perftest_uses_out_reads(PerftestTest t) {
  return t == PerftestTest::kReadBw || t == PerftestTest::kReadLat || perftest_is_atomic(t);
}

// A gap over this between two steps is this side's own work (creating QPs, resolving the peer's
// MAC) long enough to be worth naming when the step after it fails.
constexpr std::chrono::milliseconds kSlowComing{1000};

Status PerftestSession::exchange(const void* mine, void* theirs, std::size_t n, const char* what) {
  const auto began = std::chrono::steady_clock::now();
  Status s = exchange_steps(mine, theirs, n, what);
  if (s.ok()) {
    last_step_end_ = std::chrono::steady_clock::now();
    stepped_ = true;
    return s;
  }
  const auto gap = std::chrono::duration_cast<std::chrono::milliseconds>(began - last_step_end_);
  if (!stepped_ || gap < kSlowComing) return s;
  return Status::error(s.code(), s.message() + " (this side came to the step " + std::to_string(gap.count()) +
                                     " ms after the one before it ended)");
}

Status PerftestSession::exchange_steps(const void* mine, void* theirs, std::size_t n, const char* what) {
  const std::string sending = std::string("sending ") + what;
  const std::string waiting = std::string("the peer's ") + what;
  if (role_ == PerftestRole::kClient) {
    if (Status s = conn_.send_bytes(mine, n, timeout_ms_, sending.c_str()); !s.ok()) return s;
    return conn_.recv_bytes(theirs, n, timeout_ms_, waiting.c_str(), idle_);
  }
  if (Status s = conn_.recv_bytes(theirs, n, timeout_ms_, waiting.c_str(), idle_); !s.ok()) return s;
  return conn_.send_bytes(mine, n, timeout_ms_, sending.c_str());
}

Status PerftestControl::preamble(std::uint32_t local_mtu, PerftestPreamble& out) {
  if (mtu_enum(local_mtu) == 0)
    return Status::error(StatusCode::kInvalidArgument, "MTU " + std::to_string(local_mtu) + " is not an IB MTU");
  std::uint8_t in[kPerftestVersionBytes];
  const std::string v = format_perftest_version();
  if (Status s = exchange(v.data(), in, v.size(), "perftest version"); !s.ok()) return s;
  if (Status s = parse_perftest_version(in, sizeof(in), out.peer_version); !s.ok()) return s;
  // check_sys_data: cycle buffer, then cache line size; both sides keep the larger.
  const std::string cb = format_be32(kPerftestCycleBuffer), cl = format_be32(kPerftestCacheLine);
  if (Status s = exchange(cb.data(), in, 4, "cycle buffer size"); !s.ok()) return s;
  const std::uint32_t peer_cb = parse_be32(in);
  if (Status s = exchange(cl.data(), in, 4, "cache line size"); !s.ok()) return s;
  const std::uint32_t peer_cl = parse_be32(in);
  // Bounds a sane peer respects: page sizes to 1 MiB, cache lines to 4 KiB, powers of two.
  if (peer_cb == 0 || peer_cb > (1u << 20) || (peer_cb & (peer_cb - 1)) != 0)
    return Status::error(StatusCode::kPeer, "the peer's cycle buffer size " + std::to_string(peer_cb) +
                                                " is not a power of two up to 1 MiB");
  if (peer_cl == 0 || peer_cl > 4096 || (peer_cl & (peer_cl - 1)) != 0)
    return Status::error(StatusCode::kPeer,
                         "the peer's cache line size " + std::to_string(peer_cl) + " is not a power of two up to 4096");
  out.cycle_buffer = std::max(kPerftestCycleBuffer, peer_cb);
  out.cache_line = std::max(kPerftestCacheLine, peer_cl);
  // check_mtu: both use the smaller MTU.
  const std::string mtu = format_perftest_mtu(local_mtu);
  if (Status s = exchange(mtu.data(), in, 2, "MTU"); !s.ok()) return s;
  std::uint32_t peer_mtu = 0;
  if (Status s = parse_perftest_mtu(in, 2, peer_mtu); !s.ok()) return s;
  out.mtu = std::min(local_mtu, peer_mtu);
  return {};
}

Status PerftestSession::handshake(const PerftestKeys& mine, PerftestKeys& theirs) {
  const std::string msg = format_perftest_keys(mine);
  std::uint8_t in[kPerftestKeyBytes];
  if (Status s = exchange(msg.data(), in, sizeof(in), "key message"); !s.ok()) return s;
  return parse_perftest_keys(in, sizeof(in), theirs);
}

Status PerftestControl::exchange_bw_report(const PerftestBwReport& mine, PerftestBwReport& theirs) {
  const std::uint64_t out[5] = {mine.size, mine.iters, double_bits(mine.bw_peak), double_bits(mine.bw_avg),
                                double_bits(mine.msg_rate)};
  std::uint64_t got[5];
  for (int i = 0; i < 5; ++i) {
    const std::string b = format_be64(out[i]);
    std::uint8_t in[8];
    if (Status s = exchange(b.data(), in, 8, "BW report"); !s.ok()) return s;
    got[i] = parse_be64(in);
  }
  theirs.size = got[0];
  theirs.iters = got[1];
  theirs.bw_peak = bits_double(got[2]);
  theirs.bw_avg = bits_double(got[3]);
  theirs.msg_rate = bits_double(got[4]);
  // Only the server uses what it got (it prints the client's figures); perftest's server sends
  // uninitialised memory, which the client ignores as perftest's does.
  if (role_ == PerftestRole::kServer) return validate_perftest_bw_report(theirs);
  return {};
}

Status PerftestSession::close(const PerftestKeys& mine) {
  PerftestKeys ignored;
  if (Status s = handshake(mine, ignored); !s.ok()) return s;
  // Both sides write "done" and close without waiting (perftest never reads it). We read the
  // peer's when it comes; a peer that closed (or reset, its close having found our unread
  // "done") after its own barrier has finished too.
  if (Status s = conn_.send_bytes(kDone, sizeof(kDone), timeout_ms_, "sending \"done\""); !s.ok()) return s;
  std::uint8_t in[sizeof(kDone)];
  bool closed = false;
  Status s = conn_.recv_bytes(in, sizeof(in), timeout_ms_, "the peer's \"done\"", idle_, &closed);
  if (!s.ok()) return closed ? Status() : s;
  if (std::memcmp(in, kDone, sizeof(kDone)) != 0)
    return Status::error(StatusCode::kPeer, "the peer sent something other than \"done\" at the end");
  return {};
}

Status PerftestSession::end_without_message() {
  // write_lat ends without a word: both sides just close. We half-close and keep the transport
  // running until the peer closes too (at most 2 s): our ACK of its last WRITE may need
  // resending. Silence is no error, but bytes are.
  conn_.shutdown_send();
  std::uint8_t b;
  bool closed = false;
  Status s = conn_.recv_bytes(&b, 1, std::min<std::uint32_t>(timeout_ms_, 2000), "the peer's close", idle_, &closed);
  if (s.ok()) return Status::error(StatusCode::kPeer, "the peer sent data after write_lat, where perftest sends none");
  return {};
}

Status PerftestControl::connect(PerftestTest t, const std::vector<PerftestKeys>& mine,
                                std::vector<PerftestKeys>& theirs, const std::function<Status()>& connect_qps) {
  if (mine.empty()) return Status::error(StatusCode::kInvalidArgument, "perftest exchange without a QP");
  theirs.assign(mine.size(), PerftestKeys{});
  PerftestKeys scratch;
  auto per_qp = [&]() -> Status {
    for (std::size_t i = 0; i < mine.size(); ++i)
      if (Status s = handshake(mine[i], theirs[i]); !s.ok()) return s;
    return {};
  };
  const bool lat_rdma = t == PerftestTest::kWriteLat || t == PerftestTest::kReadLat || t == PerftestTest::kAtomicLat;
  const bool send = t == PerftestTest::kSendBw || t == PerftestTest::kSendLat;
  // write_lat/read_lat/atomic_lat start with a barrier on QP 0 (main(): ctx_hand_shake(my_dest, rem_dest)).
  if (lat_rdma)
    if (Status s = handshake(mine[0], scratch); !s.ok()) return s;
  if (Status s = per_qp(); !s.ok()) return s;
  if (Status s = connect_qps(); !s.ok()) return s;
  // SEND tests: one barrier after RTR/RTS, then the per-QP exchange that prints the remote side.
  if (send)
    if (Status s = handshake(mine[0], scratch); !s.ok()) return s;
  std::vector<PerftestKeys> again(mine.size());
  for (std::size_t i = 0; i < mine.size(); ++i)
    if (Status s = handshake(mine[i], again[i]); !s.ok()) return s;
  // RDMA tests: "an additional handshake is required after moving qp to RTR".
  if (!send)
    if (Status s = handshake(mine[0], scratch); !s.ok()) return s;
  return {};
}

Status PerftestControl::before_size(PerftestTest t, const PerftestKeys& mine) {
  // SEND tests: the receiver has posted its receives for this size (ctx_set_recv_wqes) first.
  if (t != PerftestTest::kSendBw && t != PerftestTest::kSendLat) return {};
  PerftestKeys ignored;
  return handshake(mine, ignored);
}

Status PerftestControl::after_size(PerftestTest t, bool all_sizes, const PerftestKeys& mine) {
  if (t != PerftestTest::kSendBw || !all_sizes) return {};
  PerftestKeys ignored;
  return handshake(mine, ignored);
}

Status PerftestControl::finish(PerftestTest t, const PerftestKeys& mine, const PerftestBwReport& report,
                               PerftestBwReport& theirs) {
  switch (t) {
    case PerftestTest::kWriteLat:
      return end_without_message();
    case PerftestTest::kWriteBw:
    case PerftestTest::kReadBw:
    case PerftestTest::kAtomicBw: {
      PerftestKeys ignored;
      if (Status s = handshake(mine, ignored); !s.ok()) return s;
      if (Status s = exchange_bw_report(report, theirs); !s.ok()) return s;
      return close(mine);
    }
    default:
      return close(mine);
  }
}

}  // namespace droce::engine
