// perftest 6.06's default out-of-band exchange ("Data ex. method : Ethernet", not rdma_cm), byte
// for byte, so that ib_send_bw & co. can be either side against droce. Read from perftest's
// perftest_communication.c (ctx_xchg_data, ctx_hand_shake, xchg_bw_reports, ctx_close_connection,
// exchange_versions, check_sys_data, check_mtu) and checked against real captures
// (tests/data/pcaps/*_bw.pcap, *_lat.pcap).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/exchange/oob_exchange.h"

namespace droce::engine {

inline constexpr char kPerftestVersion[] = "6.06";
inline constexpr std::size_t kPerftestVersionBytes = 16;      // MAX_VERSION, NUL-padded
inline constexpr double kPerftestOldestCompatible = 5.70;     // perftest refuses older peers
inline constexpr std::size_t kPerftestKeyBytes = 108;         // KEY_MSG_SIZE_GID, NUL included
inline constexpr std::uint32_t kPerftestCycleBuffer = 4096;   // what perftest sends: the page size
inline constexpr std::uint32_t kPerftestCacheLine = 64;       // DEF_CACHE_LINE_SIZE
inline constexpr std::uint16_t kPerftestOutReadsRead = 0x80;  // max_qp_rd_atom on rxe, sent by read and atomic tests

// One QP's "pingpong_dest": what a key message carries.
struct PerftestKeys {
  std::uint16_t lid = 0;        // 0 on RoCE
  std::uint16_t out_reads = 1;  // outstanding RDMA READs and atomics (1 unless the test reads or runs atomics)
  std::uint32_t qpn = 0;        // 24 bits
  std::uint32_t psn = 0;        // 24 bits
  std::uint32_t rkey = 0;       // the buffer the peer may WRITE / READ (0 is legal for SEND)
  std::uint64_t vaddr = 0;
  std::uint8_t gid[16] = {};
  std::uint32_t srqn = 0;  // XRC only; 0 here
};

// The BW report the two sides of write_bw/read_bw/atomic_bw swap after the run (struct bw_report_data,
// first five fields, each big-endian; doubles as their IEEE-754 bits).
struct PerftestBwReport {
  std::uint64_t size = 0;
  std::uint64_t iters = 0;
  double bw_peak = 0;
  double bw_avg = 0;
  double msg_rate = 0;
};

// What steps 1-4 settle: the peer's version, and values both sides then use (perftest takes the
// larger cycle buffer and cache line, and the smaller MTU).
struct PerftestPreamble {
  std::string peer_version;
  std::uint32_t cycle_buffer = kPerftestCycleBuffer;
  std::uint32_t cache_line = kPerftestCacheLine;
  std::uint32_t mtu = 1024;  // bytes
};

// ---- message formats (pure) ----
[[nodiscard]] std::string format_perftest_version(const std::string& version = kPerftestVersion);  // 16 bytes
// Strict: NUL-terminated inside the 16 bytes, "major.minor" digits, and at least 5.70.
[[nodiscard]] Status parse_perftest_version(const std::uint8_t* msg, std::size_t len, std::string& version);
[[nodiscard]] std::string format_be32(std::uint32_t v);  // sys data: int32, big-endian
[[nodiscard]] std::uint32_t parse_be32(const std::uint8_t* p);
// The MTU as perftest sends it: the IB enum (1=256 ... 5=4096) as a decimal string + NUL, 2 bytes.
[[nodiscard]] std::string format_perftest_mtu(std::uint32_t mtu_bytes);
[[nodiscard]] Status parse_perftest_mtu(const std::uint8_t* msg, std::size_t len, std::uint32_t& mtu_bytes);
// "%04x:%04x:%06x:%06x:%08x:%016llx:" + 16 x "%02x:" + "%08x:" + NUL = 108 bytes.
[[nodiscard]] std::string format_perftest_keys(const PerftestKeys& k);
// Strict: exact length and layout, hex digits only, QPN non-zero; the error names the field.
[[nodiscard]] Status parse_perftest_keys(const std::uint8_t* msg, std::size_t len, PerftestKeys& out);
[[nodiscard]] std::string format_be64(std::uint64_t v);
[[nodiscard]] std::uint64_t parse_be64(const std::uint8_t* p);
// The client's report as the server of write_bw/read_bw/atomic_bw prints it: sizes within an RDMA
// message, figures finite and non-negative and below what no link reaches; the error names the
// field. (The report perftest's server sends back is uninitialised stack memory, see
// tests/data/pcaps/write_bw.pcap: only the server's copy of the client's is checked.)
inline constexpr std::uint64_t kPerftestMaxReportSize = std::uint64_t{1} << 31;  // IBTA: messages up to 2^31 bytes
inline constexpr double kPerftestMaxReportBw = 1e9;                              // MB/s or Gb/s: 8 Pb/s and more
inline constexpr double kPerftestMaxReportMsgRate = 1e6;                         // Mpps: 10^12 messages a second
[[nodiscard]] Status validate_perftest_bw_report(const PerftestBwReport& r);
[[nodiscard]] std::uint64_t double_bits(double d);
[[nodiscard]] double bits_double(std::uint64_t bits);

// ---- the sequence ----
enum class PerftestTest { kSendBw, kWriteBw, kReadBw, kSendLat, kWriteLat, kReadLat, kAtomicBw, kAtomicLat };
enum class PerftestRole { kClient, kServer };

[[nodiscard]] const char* perftest_test_name(PerftestTest t);  // "send_bw", ...
[[nodiscard]] bool perftest_is_bw(PerftestTest t);
// READ and atomic tests: perftest advertises its out_reads (responder resources) in the key
// message and takes the peer's as its initiator depth; the others advertise 1.
[[nodiscard]] bool perftest_uses_out_reads(PerftestTest t);
[[nodiscard]] bool perftest_is_atomic(PerftestTest t);

// What a run needs of perftest's control exchange, whichever channel carries it: the TCP socket
// of perftest's default "Data ex. method : Ethernet" (PerftestSession, below) or the rdma_cm
// SEND channel of its -R mode (PerftestCmSession, perftest_cm_exchange.h). perftest's mains call
// the same functions in the same order either way (ctx_xchg_data, ctx_hand_shake,
// xchg_bw_reports, ctx_close_connection); only how bytes and key messages travel, where the QPs
// get connected and how the run ends differ, and those are what the channels implement.
// Every step has a deadline (set_timeout); while a step waits for the peer it calls the idle
// function, so the caller's transport keeps running (ACKs, retransmissions, READ responses).
// The counts below are those of perftest 6.06 for one run (k = one key exchange, q = QPs); the
// captures show them for q = 1:
//   send_bw, send_lat   q k, [connect], k, q k  | per size: k before (+ k after, send_bw -a) | k, "done"
//   write_bw, read_bw   q k, [connect], q k, k  | client's traffic | k, 5 x 8-byte report, k, "done"
//   write_lat           k, q k, [connect], q k, k | traffic | nothing (the sockets just close)
//   read_lat            k, q k, [connect], q k, k | client's traffic | k, "done"
// atomic_bw runs read_bw's sequence and atomic_lat read_lat's, step for step (perftest's
// atomic_bw.c / atomic_lat.c mains against read_bw.c / read_lat.c).
// The duration mode (-D) sends the same messages: only the traffic phase changes.
class PerftestControl {
 public:
  PerftestControl(PerftestRole role, std::uint32_t timeout_ms) : role_(role), timeout_ms_(timeout_ms) {}
  virtual ~PerftestControl() = default;
  PerftestControl(const PerftestControl&) = delete;
  PerftestControl& operator=(const PerftestControl&) = delete;
  void set_timeout(std::uint32_t ms) { timeout_ms_ = ms; }
  void set_idle(std::function<void()> idle) { idle_ = std::move(idle); }
  [[nodiscard]] PerftestRole role() const { return role_; }

  // ctx_xchg_data: the client writes then reads, the server reads then writes, n bytes each way.
  [[nodiscard]] virtual Status exchange(const void* mine, void* theirs, std::size_t n, const char* what) = 0;
  // ctx_hand_shake: one key exchange (the channel's key message format).
  [[nodiscard]] virtual Status handshake(const PerftestKeys& mine, PerftestKeys& theirs) = 0;
  // ctx_close_connection: the last key exchange, and what the channel sends after it.
  [[nodiscard]] virtual Status close(const PerftestKeys& mine) = 0;

  // Steps 1-4: version (16), cycle buffer (4), cache line (4), MTU (2).
  [[nodiscard]] Status preamble(std::uint32_t local_mtu, PerftestPreamble& out);
  // xchg_bw_reports: five 8-byte exchanges (size, iters, peak, average, message rate). The
  // server refuses a client report that validate_perftest_bw_report refuses.
  [[nodiscard]] Status exchange_bw_report(const PerftestBwReport& mine, PerftestBwReport& theirs);
  // Everything before the traffic. `connect_qps` runs where perftest moves its QPs to RTR/RTS,
  // with the peer's keys (one per QP) filled in. A channel that connects the QPs itself (rdma_cm)
  // still calls it there, for the caller to take the peer's keys (see PerftestCmSession).
  [[nodiscard]] virtual Status connect(PerftestTest t, const std::vector<PerftestKeys>& mine,
                                       std::vector<PerftestKeys>& theirs, const std::function<Status()>& connect_qps);
  // Around each message size's traffic (-a runs every size; otherwise there is one).
  [[nodiscard]] Status before_size(PerftestTest t, const PerftestKeys& mine);
  [[nodiscard]] Status after_size(PerftestTest t, bool all_sizes, const PerftestKeys& mine);
  // After the traffic: the end barrier, the BW reports (write_bw/read_bw/atomic_bw: `theirs` gets the peer's),
  // and the close.
  [[nodiscard]] Status finish(PerftestTest t, const PerftestKeys& mine, const PerftestBwReport& report,
                              PerftestBwReport& theirs);

 protected:
  // write_lat's end, where perftest sends no message at all.
  [[nodiscard]] virtual Status end_without_message() = 0;
  // The idle function, or nothing.
  void idle() const {
    if (idle_) idle_();
  }

  PerftestRole role_;
  std::uint32_t timeout_ms_;
  std::function<void()> idle_;
};

// One side of perftest's exchange on an open TCP connection, checked against real captures:
// 108-byte text key messages, and "done" after the close.
class PerftestSession final : public PerftestControl {
 public:
  PerftestSession(OobConnection& conn, PerftestRole role, std::uint32_t timeout_ms)
      : PerftestControl(role, timeout_ms), conn_(conn) {}

  [[nodiscard]] Status exchange(const void* mine, void* theirs, std::size_t n, const char* what) override;
  // One 108-byte key message each way.
  [[nodiscard]] Status handshake(const PerftestKeys& mine, PerftestKeys& theirs) override;
  // A key exchange, then "done" (5 bytes with the NUL) each way.
  [[nodiscard]] Status close(const PerftestKeys& mine) override;

 private:
  [[nodiscard]] Status end_without_message() override;
  [[nodiscard]] Status exchange_steps(const void* mine, void* theirs, std::size_t n, const char* what);
  OobConnection& conn_;
  // When the last step ended: a failed step says how long this side took to come to it, when that
  // was long (the peer's timeout may have run out while we worked, e.g. resolving its MAC).
  std::chrono::steady_clock::time_point last_step_end_{};
  bool stepped_ = false;
};

}  // namespace droce::engine
