// Out-of-band connection exchange over TCP, byte-compatible with rdma-core's ibv_rc_pingpong
// (libibverbs/examples/rc_pingpong.c): "LID:QPN:PSN:GID" as "%04x:%06x:%06x:%32 hex>" plus NUL.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/status.h"

namespace droce::engine {

struct ConnInfo {
  std::uint16_t lid = 0;      // 0 on RoCE
  std::uint32_t qpn = 0;      // 24 bits
  std::uint32_t psn = 0;      // 24 bits
  std::uint8_t gid[16] = {};  // RoCEv2 over IPv4: ::ffff:a.b.c.d
};

inline constexpr std::size_t kRcPingpongMsgBytes = 52;  // 4+1+6+1+6+1+32 characters + NUL

// GID helpers: IPv4-mapped IPv6 addresses are how RoCEv2 GIDs name IPv4 endpoints (GID index 1
// on Linux rxe). ipv4_from_gid fails for a GID of another type (link-local, global IPv6).
void gid_from_ipv4(const std::uint8_t ip[4], std::uint8_t gid[16]);
[[nodiscard]] Status ipv4_from_gid(const std::uint8_t gid[16], std::uint8_t ip[4]);

// Exactly n hex digits (either case) into v; false on anything else. Shared by the text formats.
[[nodiscard]] bool parse_hex_digits(const std::uint8_t* p, std::size_t n, std::uint64_t& v);

// The 52-byte message, NUL included.
[[nodiscard]] std::string format_rc_pingpong(const ConnInfo& c);
// Strict: exact length and layout, lowercase or uppercase hex only, values in range. The error
// names the field that is wrong.
[[nodiscard]] Status parse_rc_pingpong(const std::uint8_t* msg, std::size_t len, ConnInfo& out);

// ---- droce's own control lines (droce-gen and droce-echo after the first rc_pingpong exchange) ----
// Their framing is OobConnection::send_line / recv_line; the lines themselves belong to the app
// that speaks them (droce-gen's MR, END and RESULT: apps/droce-gen/control_lines.h).
// Every number in a peer's line is strict: digits only (no sign, no "0x", no spaces), within
// the field's range; a peer's text never wraps around to a huge count.
inline constexpr std::size_t kMaxLineBytes = 255;  // without the '\n'
// The largest count a line may carry: no run gets near it (285 years at 1 Mmsg/s), a double
// holds it exactly, and sums of a few thousand of them stay far from 2^64.
inline constexpr std::uint64_t kMaxLineCount = (std::uint64_t{1} << 53) - 1;
[[nodiscard]] bool parse_line_decimal(std::string_view s, std::uint64_t max, std::uint64_t& v);
[[nodiscard]] bool parse_line_hex(std::string_view s, std::uint64_t max, std::uint64_t& v);

// True when a connected TCP socket's local address and port are its peer's: a client whose
// connect() picked, as its ephemeral source port, the very port it connects to while nobody
// listens there yet completes a simultaneous open with itself (RFC 793 §3.4) and would read back
// its own bytes as the peer's. The ports tests and tools pick with bind(0) come from the same
// ephemeral range. OobConnection::connect closes such a socket and retries.
[[nodiscard]] bool connected_to_itself(int fd);
// "local -> peer" of a connected socket ("127.0.0.1:40312 -> 127.0.0.1:18515"), "" when either
// is unknown: how both ends' errors name the one connection they share.
[[nodiscard]] std::string connection_text(int fd);

// Asked while a call waits for the peer; true ends the wait at once with an "interrupted"
// error. Empty: droce's process-wide stop flag (Ctrl-C, engine/core/stop_signal.h).
using StopCheck = std::function<bool()>;

// One TCP connection to the peer, kept for the whole run: the rc_pingpong exchange (once per QP),
// then short text lines (droce's own messages: memory keys for WRITE/READ, the end-of-run
// report). Every call has a deadline, and a wait ends early when the stop check says so (an
// operation that needs no wait still completes: the end-of-run lines after Ctrl-C go out). The
// destructor closes the socket.
class OobConnection {
 public:
  OobConnection() = default;
  explicit OobConnection(int fd) : fd_(fd), endpoints_(connection_text(fd)) {}
  OobConnection(OobConnection&& o) noexcept
      : fd_(o.fd_),
        endpoints_(std::move(o.endpoints_)),
        buffered_(std::move(o.buffered_)),
        line_error_(std::move(o.line_error_)),
        stop_(std::move(o.stop_)) {
    o.fd_ = -1;
  }
  OobConnection& operator=(OobConnection&& o) noexcept;
  OobConnection(const OobConnection&) = delete;
  OobConnection& operator=(const OobConnection&) = delete;
  ~OobConnection();

  // Connects to host:port, retrying until `timeout_ms` while nobody listens yet (or the SYN goes
  // unanswered, or the attempt reached this client itself: connected_to_itself); `out` gets the
  // stop check too.
  [[nodiscard]] static Status connect(const std::string& host, std::uint16_t port, std::uint32_t timeout_ms,
                                      OobConnection& out, StopCheck stop = {});
  [[nodiscard]] bool is_open() const { return fd_ >= 0; }
  // The socket (for diagnostics and tests; -1 when closed). Ours: the destructor closes it.
  [[nodiscard]] int native_handle() const { return fd_; }
  // connection_text() as the connection was opened. Errors of the reads and writes on it end
  // with it, and say so if the socket is no longer that connection (another part of the process
  // closed the descriptor, which then named another socket).
  [[nodiscard]] const std::string& endpoints() const { return endpoints_; }
  void set_stop_check(StopCheck stop) { stop_ = std::move(stop); }

  // ibv_rc_pingpong's exchange, byte for byte (rdma-core pp_client_exch_dest/pp_server_exch_dest):
  // the client sends its 52-byte info and reads the server's; then it writes "done" (5 bytes,
  // NUL included), which the server waits for — the server has moved its QP to RTR/RTS by then.
  // With `idle`, the waits for the peer's bytes call it (as recv_bytes does): the caller's
  // endpoint keeps answering ARP while the peer resolves our MAC before it connects its QP.
  [[nodiscard]] Status exchange_as_client(const ConnInfo& local, ConnInfo& peer, std::uint32_t timeout_ms,
                                          const std::function<void()>& idle = {});
  // Server side in two steps so the QP can be connected between them, as rc_pingpong does:
  // read the client's info, then (after connecting) answer and wait for "done".
  [[nodiscard]] Status server_read_peer(ConnInfo& peer, std::uint32_t timeout_ms,
                                        const std::function<void()>& idle = {});
  [[nodiscard]] Status server_answer(const ConnInfo& local, std::uint32_t timeout_ms,
                                     const std::function<void()>& idle = {});

  // A line of printable ASCII (at most kMaxLineBytes, no '\n'); the receiver gets it without
  // the '\n'. A peer's longer line, or one with other bytes, is an error naming that (never
  // buffered past kMaxLineBytes + 1); the connection is unusable after it.
  [[nodiscard]] Status send_line(const std::string& line, std::uint32_t timeout_ms);
  [[nodiscard]] Status recv_line(std::string& line, std::uint32_t timeout_ms);
  // Non-blocking: true and the line when a whole one has arrived; `closed` when no line can come
  // any more (the peer hung up, or sent what is not a line), and then `why`, when given, says which.
  [[nodiscard]] bool poll_line(std::string& line, bool& closed, Status* why = nullptr);

  // Raw bytes (perftest's binary exchange). send_bytes writes all n bytes in one send() where the
  // socket takes them (perftest reads each message with a single read()). recv_bytes reads exactly
  // n; while it waits it calls `idle` (the caller's poll loop: a READ responder must keep
  // answering while its owner waits for a barrier) or, without one, sleeps in poll(). `closed`,
  // when given, is set when the failure was the peer closing or resetting the connection (the
  // error is then kPeer).
  [[nodiscard]] Status send_bytes(const void* buf, std::size_t n, std::uint32_t timeout_ms, const char* what);
  [[nodiscard]] Status recv_bytes(void* buf, std::size_t n, std::uint32_t timeout_ms, const char* what,
                                  const std::function<void()>& idle = {}, bool* closed = nullptr);
  // Half-close: the peer reads end-of-file; we can still read what it sends.
  void shutdown_send();
  // Non-blocking and consumes nothing: true when the peer has closed or reset the connection and
  // nothing it sent is still unread (a binary exchange's probe; poll_line would take its bytes
  // for a line and refuse them as not text).
  [[nodiscard]] bool peer_hung_up();

 private:
  friend class RcPingpongServer;
  // Reads exactly n bytes: first what poll_line() already took off the socket, then the socket.
  [[nodiscard]] Status read_exact(std::uint8_t* buf, std::size_t n, std::chrono::steady_clock::time_point deadline,
                                  const char* what);
  // The same calling `idle` while it waits (recv_bytes), when there is one.
  [[nodiscard]] Status read_exact(std::uint8_t* buf, std::size_t n, std::chrono::steady_clock::time_point deadline,
                                  const char* what, const std::function<void()>& idle);
  // recv_line without naming the connection (recv_line does).
  [[nodiscard]] Status recv_line_until(std::string& line, std::uint32_t timeout_ms);
  // recv_bytes without naming the connection (its callers do).
  [[nodiscard]] Status recv_waiting(void* buf, std::size_t n, std::uint32_t timeout_ms, const char* what,
                                    const std::function<void()>& idle, bool* closed);
  // Waits until the peer has sent a byte (true) or closed without one (false, `s` ok); `s` is an
  // error on a timeout, a stop or a socket error.
  [[nodiscard]] bool wait_first_byte(std::chrono::steady_clock::time_point deadline, Status& s);
  [[nodiscard]] bool stopping() const;
  // A failed read or write of ours: `s` with the connection named (endpoints()), and what became
  // of the socket if it is no longer that connection. An ok `s` passes unchanged.
  [[nodiscard]] Status on_connection(Status s) const;
  int fd_ = -1;
  std::string endpoints_;
  std::string buffered_;  // at most kMaxLineBytes + 1 bytes
  Status line_error_;     // set once the peer sent what is not a line
  StopCheck stop_;
};

// Client side (what ibv_rc_pingpong does with a server name): connects to host:port — retrying
// until `timeout_ms` while nobody listens yet — sends our info first, then reads the peer's, then
// writes "done".
[[nodiscard]] Status rc_pingpong_client(const std::string& host, std::uint16_t port, const ConnInfo& local,
                                        ConnInfo& peer, std::uint32_t timeout_ms);
// Server side: listens on `port` (0 = any; `bound_port` tells which), accepts clients within
// a timeout; exchange() runs the whole rc_pingpong server side on one client and closes it.
// Connections are taken in arrival order; one that closes before sending a byte (a port probe)
// is passed over by exchange(); one that sends junk ends it with the parse error.
class RcPingpongServer {
 public:
  RcPingpongServer() = default;
  RcPingpongServer(const RcPingpongServer&) = delete;
  RcPingpongServer& operator=(const RcPingpongServer&) = delete;
  ~RcPingpongServer();

  [[nodiscard]] Status listen(std::uint16_t port, std::uint16_t& bound_port);
  // `out` gets the server's stop check.
  [[nodiscard]] Status accept(std::uint32_t timeout_ms, OobConnection& out);
  [[nodiscard]] Status exchange(const ConnInfo& local, ConnInfo& peer, std::uint32_t timeout_ms);
  void set_stop_check(StopCheck stop) { stop_ = std::move(stop); }
  // Stops listening once the peer is accepted: connections still queued, or arriving later, are
  // reset at once instead of waiting out their deadline on a server that will never answer.
  void close();

 private:
  int listen_fd_ = -1;
  StopCheck stop_;
};

}  // namespace droce::engine
