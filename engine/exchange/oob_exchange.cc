// rc_pingpong-compatible OOB exchange: strict parsing, and TCP with a deadline on every step.
#include "engine/exchange/oob_exchange.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include "engine/core/stop_signal.h"

namespace droce::engine {
namespace {

using Clock = std::chrono::steady_clock;

// A wait for the peer sleeps at most this long before it looks at the stop check again: a
// Ctrl-C delivered to another thread does not interrupt our poll().
constexpr int kStopSliceMs = 50;

int ms_left(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left < 0 ? 0 : static_cast<int>(std::min<long long>(left, 1 << 30));
}

bool stop_asked(const StopCheck& stop) { return stop ? stop() : stop_requested(); }

enum class Wait { kReady, kTimedOut, kStopped, kError };

// Waits for `events` on fd until the deadline, in slices so that a stop request ends it at once.
// Called only when the operation would block: what can complete without waiting always does.
// A deadline that passed while this thread was not running (a busy machine deschedules it for
// tens of ms) still gets one look at the socket: what arrived meanwhile is not a timeout. A
// connect whose handshake completed unseen was once closed here as timed out, and the server,
// which had accepted it, failed with "peer closed the connection".
Wait wait_fd(int fd, short events, Clock::time_point deadline, const StopCheck& stop) {
  for (;;) {
    if (stop_asked(stop)) return Wait::kStopped;
    const int left = ms_left(deadline);
    pollfd p{fd, events, 0};
    const int r = ::poll(&p, 1, std::min(left, kStopSliceMs));
    if (r > 0) return Wait::kReady;
    if (r < 0 && errno != EINTR) return Wait::kError;
    if (left == 0) return Wait::kTimedOut;
  }
}

// The exchange is a run of small messages, each waiting for the peer's answer (rc_pingpong's
// info, answer, "done", per QP). Under Nagle's algorithm a write that follows one the peer has
// not yet acknowledged waits for the peer's delayed ACK, ~40 ms on Linux: connecting 10,000 QPs
// took 449 s that way (45 ms per QP). Every control socket sends at once.
void send_at_once(int fd) {
  const int one = 1;
  (void)::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

// "a.b.c.d:port" or "[v6]:port"; an IPv4-mapped IPv6 address (a dual-stack listener's IPv4
// peer) as its IPv4 address, so that both ends write the same text.
std::string address_text(const sockaddr_storage& ss) {
  char ip[INET6_ADDRSTRLEN] = "?";
  if (ss.ss_family == AF_INET) {
    const auto& a = reinterpret_cast<const sockaddr_in&>(ss);
    (void)inet_ntop(AF_INET, &a.sin_addr, ip, sizeof(ip));
    return std::string(ip) + ":" + std::to_string(ntohs(a.sin_port));
  }
  const auto& a = reinterpret_cast<const sockaddr_in6&>(ss);
  if (IN6_IS_ADDR_V4MAPPED(&a.sin6_addr)) {
    (void)inet_ntop(AF_INET, &a.sin6_addr.s6_addr[12], ip, sizeof(ip));
    return std::string(ip) + ":" + std::to_string(ntohs(a.sin6_port));
  }
  (void)inet_ntop(AF_INET6, &a.sin6_addr, ip, sizeof(ip));
  return "[" + std::string(ip) + "]:" + std::to_string(ntohs(a.sin6_port));
}

// Both ends of a connected IP socket; false for anything else.
bool socket_ends(int fd, sockaddr_storage& local, sockaddr_storage& peer) {
  socklen_t ll = sizeof(local), pl = sizeof(peer);
  local = {};
  peer = {};
  if (fd < 0 || ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &ll) != 0 ||
      ::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &pl) != 0)
    return false;
  return (local.ss_family == AF_INET || local.ss_family == AF_INET6) && local.ss_family == peer.ss_family;
}

std::string progress(std::size_t done, std::size_t n) {
  return " (" + std::to_string(done) + " of " + std::to_string(n) + " bytes arrived)";
}

// Reads or writes exactly n bytes before the deadline. Errors name `what` and, for a read cut
// short, how much of it came.
Status io_exact(int fd, std::uint8_t* buf, std::size_t n, bool write, Clock::time_point deadline, const char* what,
                const StopCheck& stop) {
  std::size_t done = 0;
  while (done < n) {
    const ssize_t k = write ? ::send(fd, buf + done, n - done, MSG_NOSIGNAL | MSG_DONTWAIT)
                            : ::recv(fd, buf + done, n - done, MSG_DONTWAIT);
    if (k > 0) {
      done += static_cast<std::size_t>(k);
      continue;
    }
    const int e = k == 0 ? 0 : errno;
    if (k == 0 || e == ECONNRESET || e == EPIPE)  // a reset is the peer closing with our bytes unread
      return Status::error(StatusCode::kPeer,
                           std::string("peer closed the connection during ") + what + (write ? "" : progress(done, n)));
    if (e != EAGAIN && e != EWOULDBLOCK && e != EINTR)
      return Status::error(StatusCode::kIo, std::string(what) + ": " + std::strerror(e));
    switch (wait_fd(fd, static_cast<short>(write ? POLLOUT : POLLIN), deadline, stop)) {
      case Wait::kReady:
        break;
      case Wait::kTimedOut:
        return Status::error(StatusCode::kTimeout,
                             std::string("timed out waiting for ") + what + (write ? "" : progress(done, n)));
      case Wait::kStopped:
        return Status::error(StatusCode::kError, std::string("interrupted while waiting for ") + what);
      case Wait::kError:
        return Status::error(StatusCode::kIo, std::string(what) + ": " + std::strerror(errno));
    }
  }
  return {};
}

int hexval(std::uint8_t c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

bool parse_line_decimal(std::string_view s, std::uint64_t max, std::uint64_t& v) {
  v = 0;
  if (s.empty() || s.size() > 20) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    const auto d = static_cast<std::uint64_t>(c - '0');
    if (v > (max - d) / 10) return false;  // v * 10 + d > max, without overflowing
    v = v * 10 + d;
  }
  return true;
}

bool parse_line_hex(std::string_view s, std::uint64_t max, std::uint64_t& v) {
  v = 0;
  if (s.empty() || s.size() > 16) return false;
  for (char c : s) {
    const int h = hexval(static_cast<std::uint8_t>(c));
    if (h < 0 || v > (max >> 4)) return false;
    v = v << 4 | static_cast<std::uint64_t>(h);
    if (v > max) return false;
  }
  return true;
}

bool parse_hex_digits(const std::uint8_t* p, std::size_t n, std::uint64_t& v) {
  v = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const int h = hexval(p[i]);
    if (h < 0) return false;
    v = v << 4 | static_cast<std::uint64_t>(h);
  }
  return true;
}

void gid_from_ipv4(const std::uint8_t ip[4], std::uint8_t gid[16]) {
  std::memset(gid, 0, 10);
  gid[10] = gid[11] = 0xFF;
  std::memcpy(gid + 12, ip, 4);
}

Status ipv4_from_gid(const std::uint8_t gid[16], std::uint8_t ip[4]) {
  static constexpr std::uint8_t kPrefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF};
  if (std::memcmp(gid, kPrefix, 12) != 0)
    return Status::error(StatusCode::kInvalidArgument,
                         "GID is not an IPv4-mapped address (::ffff:a.b.c.d): wrong GID type or index "
                         "(use the RoCE v2 IPv4 GID, index 1 on Linux rxe)");
  std::memcpy(ip, gid + 12, 4);
  return {};
}

std::string format_rc_pingpong(const ConnInfo& c) {
  char gid[33];
  for (int i = 0; i < 16; ++i) std::snprintf(gid + 2 * i, 3, "%02x", c.gid[i]);
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%04x:%06x:%06x:%s", c.lid, c.qpn & 0xFFFFFF, c.psn & 0xFFFFFF, gid);
  return std::string(buf, kRcPingpongMsgBytes - 1) + '\0';
}

Status parse_rc_pingpong(const std::uint8_t* m, std::size_t len, ConnInfo& out) {
  if (len != kRcPingpongMsgBytes)
    return Status::error(StatusCode::kPeer, "exchange message has " + std::to_string(len) + " bytes, expected 52");
  if (m[51] != '\0') return Status::error(StatusCode::kPeer, "exchange message is not NUL-terminated");
  if (m[4] != ':' || m[11] != ':' || m[18] != ':')
    return Status::error(StatusCode::kPeer, "exchange message: ':' separators missing");
  std::uint64_t v;
  if (!parse_hex_digits(m, 4, v)) return Status::error(StatusCode::kPeer, "exchange message: LID is not hex");
  out.lid = static_cast<std::uint16_t>(v);
  if (!parse_hex_digits(m + 5, 6, v)) return Status::error(StatusCode::kPeer, "exchange message: QPN is not hex");
  if (v == 0) return Status::error(StatusCode::kPeer, "exchange message: QPN 0 is not an RC QP");
  out.qpn = static_cast<std::uint32_t>(v);
  if (!parse_hex_digits(m + 12, 6, v)) return Status::error(StatusCode::kPeer, "exchange message: PSN is not hex");
  out.psn = static_cast<std::uint32_t>(v);
  for (int i = 0; i < 16; ++i) {
    if (!parse_hex_digits(m + 19 + 2 * i, 2, v))
      return Status::error(StatusCode::kPeer, "exchange message: GID is not 32 hex digits");
    out.gid[i] = static_cast<std::uint8_t>(v);
  }
  return {};
}

bool connected_to_itself(int fd) {
  sockaddr_storage l, p;
  if (!socket_ends(fd, l, p)) return false;
  if (l.ss_family == AF_INET) {
    const auto &a = reinterpret_cast<const sockaddr_in&>(l), &b = reinterpret_cast<const sockaddr_in&>(p);
    return a.sin_port == b.sin_port && a.sin_addr.s_addr == b.sin_addr.s_addr;
  }
  const auto &a = reinterpret_cast<const sockaddr_in6&>(l), &b = reinterpret_cast<const sockaddr_in6&>(p);
  return a.sin6_port == b.sin6_port && std::memcmp(&a.sin6_addr, &b.sin6_addr, sizeof(a.sin6_addr)) == 0;
}

std::string connection_text(int fd) {
  sockaddr_storage l, p;
  if (!socket_ends(fd, l, p)) return {};
  return address_text(l) + " -> " + address_text(p);
}

Status OobConnection::on_connection(Status s) const {
  if (s.ok() || endpoints_.empty()) return s;
  std::string text = s.message() + " [" + endpoints_ + "]";
  // A descriptor closed by another part of the process (or closed and reused for another
  // socket) reads as silence or as another peer: say so rather than blame the peer. A reset
  // connection has no peer name any more either, so only a descriptor that is gone or names
  // another connection counts.
  const std::string now = connection_text(fd_);
  if (fd_ >= 0 && ::fcntl(fd_, F_GETFD) < 0 && errno == EBADF)
    text += " (our descriptor " + std::to_string(fd_) + " was closed under us: not the peer's doing)";
  else if (!now.empty() && now != endpoints_)
    text += " (our descriptor " + std::to_string(fd_) + " now names " + now + ": it was closed under us and reused)";
  return Status::error(s.code(), std::move(text));
}

OobConnection& OobConnection::operator=(OobConnection&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    o.fd_ = -1;
    endpoints_ = std::move(o.endpoints_);
    buffered_ = std::move(o.buffered_);
    line_error_ = std::move(o.line_error_);
    stop_ = std::move(o.stop_);
  }
  return *this;
}

OobConnection::~OobConnection() {
  if (fd_ >= 0) ::close(fd_);
}

bool OobConnection::stopping() const { return stop_asked(stop_); }

namespace {

// One connection attempt, non-blocking so that an unanswered SYN costs at most until the
// deadline (a blocking connect() waits out the kernel's SYN retries, minutes). -1 and `err` on
// failure; `stopped` when the stop check ended it, `self` when the connection was to ourselves
// (connected_to_itself: closed, and the caller retries).
int connect_one(const addrinfo* a, Clock::time_point deadline, const StopCheck& stop, std::string& err, bool& stopped,
                bool& self) {
  const int s = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
  if (s < 0) {
    err = std::strerror(errno);
    return -1;
  }
  int e = ::connect(s, a->ai_addr, a->ai_addrlen) == 0 ? 0 : errno;
  if (e == EINPROGRESS || e == EINTR) {
    switch (wait_fd(s, POLLOUT, deadline, stop)) {
      case Wait::kReady: {
        socklen_t len = sizeof(e);
        if (::getsockopt(s, SOL_SOCKET, SO_ERROR, &e, &len) != 0) e = errno;
        break;
      }
      case Wait::kTimedOut:
        e = ETIMEDOUT;
        break;
      case Wait::kStopped:
        stopped = true;
        e = EINTR;
        break;
      case Wait::kError:
        e = errno;
        break;
    }
  }
  if (e != 0) {
    err = std::strerror(e);
    ::close(s);
    return -1;
  }
  if (connected_to_itself(s)) {
    // Nobody listens on the port yet and our source port is that port: we reached ourselves.
    // Reset rather than close, so that the port is not left in TIME_WAIT for the server to meet.
    const linger abort_on_close{1, 0};
    (void)::setsockopt(s, SOL_SOCKET, SO_LINGER, &abort_on_close, sizeof(abort_on_close));
    ::close(s);
    err = "the attempt reached this client itself (source port = destination port, nobody listening yet)";
    self = true;
    return -1;
  }
  // Back to blocking, as an accepted socket is: every read and write here says MSG_DONTWAIT.
  (void)::fcntl(s, F_SETFL, ::fcntl(s, F_GETFL) & ~O_NONBLOCK);
  send_at_once(s);
  return s;
}

}  // namespace

Status OobConnection::connect(const std::string& host, std::uint16_t port, std::uint32_t timeout_ms, OobConnection& out,
                              StopCheck stop) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  const std::string service = std::to_string(port);
  if (int e = getaddrinfo(host.c_str(), service.c_str(), &hints, &res); e != 0)
    return Status::error(StatusCode::kIo, "cannot resolve " + host + ": " + gai_strerror(e));
  int fd = -1;
  bool stopped = false;
  std::uint32_t self_connects = 0;
  std::string last = "no address";
  // The peer may not be listening yet: retry every 50 ms until the deadline (at once after an
  // attempt that reached ourselves: the kernel's next source port differs).
  while (fd < 0 && !stopped) {
    bool reached_self = false;
    for (addrinfo* a = res; a != nullptr && fd < 0 && !stopped; a = a->ai_next) {
      bool self = false;
      fd = connect_one(a, deadline, stop, last, stopped, self);
      self_connects += self ? 1 : 0;
      reached_self = reached_self || self;
    }
    if (fd >= 0 || stopped || ms_left(deadline) == 0) break;
    stopped = stop_asked(stop);
    if (!stopped && !reached_self)
      std::this_thread::sleep_for(std::chrono::milliseconds(std::min(50, ms_left(deadline))));
  }
  freeaddrinfo(res);
  if (stopped) return Status::error(StatusCode::kError, "interrupted while connecting to " + host + ":" + service);
  if (fd < 0)
    return Status::error(
        StatusCode::kTimeout,
        "cannot connect to " + host + ":" + service + " within " + std::to_string(timeout_ms) + " ms (" + last +
            (self_connects == 0
                 ? std::string()
                 : "; " + std::to_string(self_connects) + " attempt(s) reached this client itself and were closed") +
            ")");
  out = OobConnection(fd);
  out.stop_ = std::move(stop);
  return {};
}

Status OobConnection::read_exact(std::uint8_t* buf, std::size_t n, Clock::time_point deadline, const char* what) {
  const std::size_t have = std::min(n, buffered_.size());
  std::memcpy(buf, buffered_.data(), have);
  buffered_.erase(0, have);
  return have == n ? Status() : io_exact(fd_, buf + have, n - have, false, deadline, what, stop_);
}

Status OobConnection::read_exact(std::uint8_t* buf, std::size_t n, Clock::time_point deadline, const char* what,
                                 const std::function<void()>& idle) {
  if (!idle) return read_exact(buf, n, deadline, what);
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return recv_waiting(buf, n, left <= 0 ? 0u : static_cast<std::uint32_t>(left), what, idle, nullptr);
}

bool OobConnection::wait_first_byte(Clock::time_point deadline, Status& s) {
  s = {};
  if (!buffered_.empty()) return true;
  for (;;) {
    std::uint8_t b;
    const ssize_t k = ::recv(fd_, &b, 1, MSG_PEEK | MSG_DONTWAIT);
    if (k > 0) return true;
    if (k == 0 || errno == ECONNRESET) return false;
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      s = Status::error(StatusCode::kIo, std::string("the client's connection info: ") + std::strerror(errno));
      return false;
    }
    switch (wait_fd(fd_, POLLIN, deadline, stop_)) {
      case Wait::kReady:
        break;
      case Wait::kTimedOut:
        s = Status::error(StatusCode::kTimeout,
                          "timed out waiting for the client's connection info" + progress(0, kRcPingpongMsgBytes));
        return false;
      case Wait::kStopped:
        s = Status::error(StatusCode::kError, "interrupted while waiting for the client's connection info");
        return false;
      case Wait::kError:
        s = Status::error(StatusCode::kIo, std::string("the client's connection info: ") + std::strerror(errno));
        return false;
    }
  }
}

namespace {
constexpr char kDone[] = "done";  // sizeof == 5: rc_pingpong sends the NUL too
}

Status OobConnection::exchange_as_client(const ConnInfo& local, ConnInfo& peer, std::uint32_t timeout_ms,
                                         const std::function<void()>& idle) {
  if (fd_ < 0) return Status::error(StatusCode::kBadState, "exchange on a closed connection");
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  const std::string msg = format_rc_pingpong(local);
  std::uint8_t in[kRcPingpongMsgBytes];
  Status s = io_exact(fd_, reinterpret_cast<std::uint8_t*>(const_cast<char*>(msg.data())), msg.size(), true, deadline,
                      "sending our connection info", stop_);
  if (s.ok()) s = read_exact(in, sizeof(in), deadline, "the peer's connection info", idle);
  if (s.ok()) s = parse_rc_pingpong(in, sizeof(in), peer);
  if (s.ok())
    s = io_exact(fd_, reinterpret_cast<std::uint8_t*>(const_cast<char*>(kDone)), sizeof(kDone), true, deadline,
                 "sending \"done\"", stop_);
  return on_connection(s);
}

Status OobConnection::server_read_peer(ConnInfo& peer, std::uint32_t timeout_ms, const std::function<void()>& idle) {
  if (fd_ < 0) return Status::error(StatusCode::kBadState, "exchange on a closed connection");
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  std::uint8_t in[kRcPingpongMsgBytes];
  Status s = on_connection(read_exact(in, sizeof(in), deadline, "the client's connection info", idle));
  if (s.ok()) s = parse_rc_pingpong(in, sizeof(in), peer);
  return s;
}

Status OobConnection::server_answer(const ConnInfo& local, std::uint32_t timeout_ms,
                                    const std::function<void()>& idle) {
  if (fd_ < 0) return Status::error(StatusCode::kBadState, "exchange on a closed connection");
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  const std::string msg = format_rc_pingpong(local);
  Status s = io_exact(fd_, reinterpret_cast<std::uint8_t*>(const_cast<char*>(msg.data())), msg.size(), true, deadline,
                      "sending our connection info", stop_);
  std::uint8_t done[sizeof(kDone)];
  if (s.ok()) s = read_exact(done, sizeof(done), deadline, "the client's \"done\"", idle);
  if (s.ok() && std::memcmp(done, kDone, sizeof(kDone)) != 0)
    return Status::error(StatusCode::kPeer, "the client sent something other than \"done\" after the exchange");
  return on_connection(s);
}

Status OobConnection::send_line(const std::string& line, std::uint32_t timeout_ms) {
  if (fd_ < 0) return Status::error(StatusCode::kBadState, "send on a closed connection");
  if (line.size() > kMaxLineBytes || line.find('\n') != std::string::npos)
    return Status::error(StatusCode::kInvalidArgument, "OOB line too long or multi-line");
  std::string l = line + "\n";
  return on_connection(io_exact(fd_, reinterpret_cast<std::uint8_t*>(l.data()), l.size(), true,
                                Clock::now() + std::chrono::milliseconds(timeout_ms), "sending a control line", stop_));
}

bool OobConnection::poll_line(std::string& line, bool& closed, Status* why) {
  closed = false;
  auto fail = [&](Status s) {
    if (line_error_.ok()) line_error_ = std::move(s);
    closed = true;
    if (why != nullptr) *why = line_error_;
    return false;
  };
  if (!line_error_.ok()) return fail(line_error_);
  if (fd_ < 0) return fail(Status::error(StatusCode::kBadState, "the control connection is closed"));
  // buffered_ never holds more than one line's worth: each round takes what completes one.
  for (int rounds = 0; rounds < 64; ++rounds) {
    const auto nl = buffered_.find('\n');
    const std::size_t end = nl == std::string::npos ? buffered_.size() : nl;
    // droce's lines are printable ASCII: anything else is not droce (and must not reach a terminal).
    for (std::size_t i = 0; i < end; ++i) {
      const auto c = static_cast<std::uint8_t>(buffered_[i]);
      if (c < 0x20 || c > 0x7e) {
        char b[128];
        std::snprintf(b, sizeof(b),
                      "the peer's control line has a non-text byte 0x%02x at offset %zu (is the peer droce?)", c, i);
        return fail(Status::error(StatusCode::kPeer, b));
      }
    }
    if (nl != std::string::npos) {
      line = buffered_.substr(0, nl);
      buffered_.erase(0, nl + 1);
      return true;
    }
    if (buffered_.size() > kMaxLineBytes)
      return fail(Status::error(StatusCode::kPeer, "the peer's control line is longer than " +
                                                       std::to_string(kMaxLineBytes) + " bytes (is the peer droce?)"));
    char buf[kMaxLineBytes + 1];
    const ssize_t k = ::recv(fd_, buf, kMaxLineBytes + 1 - buffered_.size(), MSG_DONTWAIT);
    if (k == 0)
      return fail(Status::error(StatusCode::kPeer,
                                buffered_.empty() ? "the peer closed the control connection"
                                                  : "the peer closed the control connection in the middle of a line"));
    if (k < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return false;
      if (errno == ECONNRESET)
        return fail(Status::error(StatusCode::kPeer, "the peer closed the control connection (reset)"));
      return fail(Status::error(StatusCode::kIo, std::string("control connection: ") + std::strerror(errno)));
    }
    buffered_.append(buf, static_cast<std::size_t>(k));
  }
  return false;
}

Status OobConnection::send_bytes(const void* buf, std::size_t n, std::uint32_t timeout_ms, const char* what) {
  if (fd_ < 0) return Status::error(StatusCode::kBadState, "send on a closed connection");
  auto* p = static_cast<std::uint8_t*>(const_cast<void*>(buf));  // io_exact only reads it when writing
  return on_connection(io_exact(fd_, p, n, true, Clock::now() + std::chrono::milliseconds(timeout_ms), what, stop_));
}

Status OobConnection::recv_bytes(void* buf, std::size_t n, std::uint32_t timeout_ms, const char* what,
                                 const std::function<void()>& idle, bool* closed) {
  return on_connection(recv_waiting(buf, n, timeout_ms, what, idle, closed));
}

Status OobConnection::recv_waiting(void* buf, std::size_t n, std::uint32_t timeout_ms, const char* what,
                                   const std::function<void()>& idle, bool* closed) {
  if (closed != nullptr) *closed = false;
  if (fd_ < 0) return Status::error(StatusCode::kBadState, "receive on a closed connection");
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  auto* out = static_cast<std::uint8_t*>(buf);
  if (!idle) {
    Status s = read_exact(out, n, deadline, what);
    if (!s.ok() && closed != nullptr)
      *closed = s.code() == StatusCode::kPeer;  // io_exact: the peer closed or reset the connection
    return s;
  }
  std::size_t done = std::min(n, buffered_.size());
  std::memcpy(out, buffered_.data(), done);
  buffered_.erase(0, done);
  // Bounded by the deadline; each round either reads, or lets the caller's loop run once.
  while (done < n) {
    const ssize_t k = ::recv(fd_, out + done, n - done, MSG_DONTWAIT);
    if (k > 0) {
      done += static_cast<std::size_t>(k);
      continue;
    }
    if (k == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
      if (closed != nullptr) *closed = true;
      // A reset is the peer closing with our bytes unread: for the caller, the same thing.
      const bool by_peer = k == 0 || errno == ECONNRESET;
      return Status::error(by_peer ? StatusCode::kPeer : StatusCode::kIo,
                           by_peer ? std::string("peer closed the connection during ") + what + progress(done, n)
                                   : std::string(what) + ": " + std::strerror(errno));
    }
    if (Clock::now() >= deadline)
      return Status::error(StatusCode::kTimeout, std::string("timed out waiting for ") + what + progress(done, n));
    if (stopping()) return Status::error(StatusCode::kError, std::string("interrupted while waiting for ") + what);
    // The caller's loop runs a few rounds per recv() so that a transport served while waiting
    // (a READ responder during the peer's whole run) is not paced by a syscall per iteration.
    for (int i = 0; i < 64; ++i) idle();
  }
  return {};
}

void OobConnection::shutdown_send() {
  if (fd_ >= 0) (void)::shutdown(fd_, SHUT_WR);
}

bool OobConnection::peer_hung_up() {
  if (fd_ < 0) return true;
  if (!buffered_.empty()) return false;
  std::uint8_t b;
  const ssize_t k = ::recv(fd_, &b, 1, MSG_PEEK | MSG_DONTWAIT);
  if (k > 0) return false;  // the peer's next message is waiting: it has not gone
  if (k == 0) return true;
  return errno == ECONNRESET || errno == EPIPE || errno == ENOTCONN;
}

Status OobConnection::recv_line(std::string& line, std::uint32_t timeout_ms) {
  return on_connection(recv_line_until(line, timeout_ms));
}

Status OobConnection::recv_line_until(std::string& line, std::uint32_t timeout_ms) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    bool closed = false;
    Status why;
    if (poll_line(line, closed, &why)) return {};
    if (closed) return why;
    switch (wait_fd(fd_, POLLIN, deadline, stop_)) {
      case Wait::kReady:
        break;
      case Wait::kTimedOut:
        return Status::error(StatusCode::kTimeout, "timed out waiting for a control line from the peer" +
                                                       (buffered_.empty() ? std::string()
                                                                          : " (" + std::to_string(buffered_.size()) +
                                                                                " bytes arrived without a newline)"));
      case Wait::kStopped:
        return Status::error(StatusCode::kError, "interrupted while waiting for a control line from the peer");
      case Wait::kError:
        return Status::error(StatusCode::kIo, std::string("control connection: ") + std::strerror(errno));
    }
  }
}

Status rc_pingpong_client(const std::string& host, std::uint16_t port, const ConnInfo& local, ConnInfo& peer,
                          std::uint32_t timeout_ms) {
  OobConnection c;
  if (Status s = OobConnection::connect(host, port, timeout_ms, c); !s.ok()) return s;
  return c.exchange_as_client(local, peer, timeout_ms);
}

Status RcPingpongServer::listen(std::uint16_t port, std::uint16_t& bound_port) {
  close();
  // Non-blocking: accept() waits in poll() with its deadline, and a connection reset between
  // poll() and accept4() must not block it.
  listen_fd_ = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  bool v6 = listen_fd_ >= 0;
  if (!v6) listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (listen_fd_ < 0) return Status::error(StatusCode::kIo, std::string("socket: ") + std::strerror(errno));
  const int one = 1, zero = 0;
  setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_storage ss{};
  socklen_t sl;
  if (v6) {
    setsockopt(listen_fd_, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));  // IPv4 clients too
    auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
    a->sin6_family = AF_INET6;
    a->sin6_port = htons(port);
    a->sin6_addr = in6addr_any;
    sl = sizeof(sockaddr_in6);
  } else {
    auto* a = reinterpret_cast<sockaddr_in*>(&ss);
    a->sin_family = AF_INET;
    a->sin_port = htons(port);
    a->sin_addr.s_addr = htonl(INADDR_ANY);
    sl = sizeof(sockaddr_in);
  }
  // A small backlog: a flood of connects queues a few (taken in order, each with its deadline)
  // and the kernel refuses the rest, rather than the real peer waiting behind thousands.
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&ss), sl) != 0 || ::listen(listen_fd_, 8) != 0)
    return Status::error(StatusCode::kIo,
                         "cannot listen on TCP port " + std::to_string(port) + ": " + std::strerror(errno));
  sl = sizeof(ss);
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&ss), &sl);
  bound_port =
      ntohs(v6 ? reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port : reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
  return {};
}

Status RcPingpongServer::accept(std::uint32_t timeout_ms, OobConnection& out) {
  if (listen_fd_ < 0) return Status::error(StatusCode::kBadState, "accept before listen");
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd >= 0) {
      // Blocking again, as a connected client socket is: every read and write says MSG_DONTWAIT.
      (void)::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
      send_at_once(fd);
      out = OobConnection(fd);
      out.set_stop_check(stop_);
      return {};
    }
    // A connection reset while queued (ECONNABORTED) or a passing shortage: wait for the next.
    const int e = errno;
    if (e != EAGAIN && e != EWOULDBLOCK && e != EINTR && e != ECONNABORTED && e != EPROTO && e != EMFILE &&
        e != ENFILE && e != ENOBUFS && e != ENOMEM)
      return Status::error(StatusCode::kIo, std::string("accept: ") + std::strerror(e));
    switch (wait_fd(listen_fd_, POLLIN, deadline, stop_)) {
      case Wait::kReady:
        break;
      case Wait::kTimedOut:
        return Status::error(StatusCode::kTimeout, "no client connected within " + std::to_string(timeout_ms) + " ms");
      case Wait::kStopped:
        return Status::error(StatusCode::kError, "interrupted while waiting for a client to connect");
      case Wait::kError:
        return Status::error(StatusCode::kIo, std::string("accept: ") + std::strerror(errno));
    }
    // Out of descriptors the listener stays readable: do not spin on it.
    if (e == EMFILE || e == ENFILE) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

Status RcPingpongServer::exchange(const ConnInfo& local, ConnInfo& peer, std::uint32_t timeout_ms) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  // Each round takes the next connection; bounded by the deadline (accept fails at it).
  for (;;) {
    OobConnection c;
    if (Status s = accept(static_cast<std::uint32_t>(ms_left(deadline)), c); !s.ok()) return s;
    Status s;
    if (!c.wait_first_byte(deadline, s)) {
      if (!s.ok()) return s;
      continue;  // closed without a byte: a port probe, not a client
    }
    if (s = c.server_read_peer(peer, static_cast<std::uint32_t>(ms_left(deadline))); !s.ok()) return s;
    return c.server_answer(local, static_cast<std::uint32_t>(ms_left(deadline)));
  }
}

void RcPingpongServer::close() {
  if (listen_fd_ >= 0) ::close(listen_fd_);
  listen_fd_ = -1;
}

RcPingpongServer::~RcPingpongServer() { close(); }

}  // namespace droce::engine
