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

namespace droce::engine {
namespace {

using Clock = std::chrono::steady_clock;

int ms_left(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left < 0 ? 0 : static_cast<int>(left);
}

// Reads or writes exactly n bytes before the deadline.
Status io_exact(int fd, std::uint8_t* buf, std::size_t n, bool write, Clock::time_point deadline, const char* what) {
  std::size_t done = 0;
  while (done < n) {
    pollfd p{fd, static_cast<short>(write ? POLLOUT : POLLIN), 0};
    const int r = ::poll(&p, 1, ms_left(deadline));
    if (r == 0) return Status::error(std::string("timed out waiting for ") + what);
    if (r < 0) {
      if (errno == EINTR) continue;
      return Status::error(std::string(what) + ": " + std::strerror(errno));
    }
    const ssize_t k = write ? ::send(fd, buf + done, n - done, MSG_NOSIGNAL) : ::recv(fd, buf + done, n - done, 0);
    if (k == 0) return Status::error(std::string("peer closed the connection during ") + what);
    if (k < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return Status::error(std::string(what) + ": " + std::strerror(errno));
    }
    done += static_cast<std::size_t>(k);
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
    return Status::error("GID is not an IPv4-mapped address (::ffff:a.b.c.d): wrong GID type or index "
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
  if (len != kRcPingpongMsgBytes) return Status::error("exchange message has " + std::to_string(len) + " bytes, expected 52");
  if (m[51] != '\0') return Status::error("exchange message is not NUL-terminated");
  if (m[4] != ':' || m[11] != ':' || m[18] != ':') return Status::error("exchange message: ':' separators missing");
  std::uint64_t v;
  if (!parse_hex_digits(m, 4, v)) return Status::error("exchange message: LID is not hex");
  out.lid = static_cast<std::uint16_t>(v);
  if (!parse_hex_digits(m + 5, 6, v)) return Status::error("exchange message: QPN is not hex");
  if (v == 0) return Status::error("exchange message: QPN 0 is not an RC QP");
  out.qpn = static_cast<std::uint32_t>(v);
  if (!parse_hex_digits(m + 12, 6, v)) return Status::error("exchange message: PSN is not hex");
  out.psn = static_cast<std::uint32_t>(v);
  for (int i = 0; i < 16; ++i) {
    if (!parse_hex_digits(m + 19 + 2 * i, 2, v)) return Status::error("exchange message: GID is not 32 hex digits");
    out.gid[i] = static_cast<std::uint8_t>(v);
  }
  return {};
}

OobConnection& OobConnection::operator=(OobConnection&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    o.fd_ = -1;
    buffered_ = std::move(o.buffered_);
  }
  return *this;
}

OobConnection::~OobConnection() {
  if (fd_ >= 0) ::close(fd_);
}

Status OobConnection::connect(const std::string& host, std::uint16_t port, std::uint32_t timeout_ms,
                              OobConnection& out) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  const std::string service = std::to_string(port);
  if (int e = getaddrinfo(host.c_str(), service.c_str(), &hints, &res); e != 0)
    return Status::error("cannot resolve " + host + ": " + gai_strerror(e));
  int fd = -1;
  std::string last = "no address";
  // The peer may not be listening yet: retry every 50 ms until the deadline.
  while (fd < 0) {
    for (addrinfo* a = res; a != nullptr && fd < 0; a = a->ai_next) {
      const int s = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
      if (s < 0) continue;
      if (::connect(s, a->ai_addr, a->ai_addrlen) == 0) {
        fd = s;
      } else {
        last = std::strerror(errno);
        ::close(s);
      }
    }
    if (fd >= 0 || ms_left(deadline) == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  freeaddrinfo(res);
  if (fd < 0)
    return Status::error("cannot connect to " + host + ":" + service + " within " + std::to_string(timeout_ms) +
                         " ms (" + last + ")");
  out = OobConnection(fd);
  return {};
}

Status OobConnection::read_exact(std::uint8_t* buf, std::size_t n, Clock::time_point deadline, const char* what) {
  const std::size_t have = std::min(n, buffered_.size());
  std::memcpy(buf, buffered_.data(), have);
  buffered_.erase(0, have);
  return have == n ? Status() : io_exact(fd_, buf + have, n - have, false, deadline, what);
}

namespace {
constexpr char kDone[] = "done";  // sizeof == 5: rc_pingpong sends the NUL too
}

Status OobConnection::exchange_as_client(const ConnInfo& local, ConnInfo& peer, std::uint32_t timeout_ms) {
  if (fd_ < 0) return Status::error("exchange on a closed connection");
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  const std::string msg = format_rc_pingpong(local);
  std::uint8_t in[kRcPingpongMsgBytes];
  Status s = io_exact(fd_, reinterpret_cast<std::uint8_t*>(const_cast<char*>(msg.data())), msg.size(), true, deadline,
                      "sending our connection info");
  if (s.ok()) s = read_exact(in, sizeof(in), deadline, "the peer's connection info");
  if (s.ok()) s = parse_rc_pingpong(in, sizeof(in), peer);
  if (s.ok())
    s = io_exact(fd_, reinterpret_cast<std::uint8_t*>(const_cast<char*>(kDone)), sizeof(kDone), true, deadline,
                 "sending \"done\"");
  return s;
}

Status OobConnection::server_read_peer(ConnInfo& peer, std::uint32_t timeout_ms) {
  if (fd_ < 0) return Status::error("exchange on a closed connection");
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  std::uint8_t in[kRcPingpongMsgBytes];
  Status s = read_exact(in, sizeof(in), deadline, "the client's connection info");
  if (s.ok()) s = parse_rc_pingpong(in, sizeof(in), peer);
  return s;
}

Status OobConnection::server_answer(const ConnInfo& local, std::uint32_t timeout_ms) {
  if (fd_ < 0) return Status::error("exchange on a closed connection");
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  const std::string msg = format_rc_pingpong(local);
  Status s = io_exact(fd_, reinterpret_cast<std::uint8_t*>(const_cast<char*>(msg.data())), msg.size(), true, deadline,
                      "sending our connection info");
  std::uint8_t done[sizeof(kDone)];
  if (s.ok()) s = read_exact(done, sizeof(done), deadline, "the client's \"done\"");
  if (s.ok() && std::memcmp(done, kDone, sizeof(kDone)) != 0)
    return Status::error("the client sent something other than \"done\" after the exchange");
  return s;
}

Status OobConnection::send_line(const std::string& line, std::uint32_t timeout_ms) {
  if (fd_ < 0) return Status::error("send on a closed connection");
  if (line.size() > 255 || line.find('\n') != std::string::npos) return Status::error("OOB line too long or multi-line");
  std::string l = line + "\n";
  return io_exact(fd_, reinterpret_cast<std::uint8_t*>(l.data()), l.size(), true,
                  Clock::now() + std::chrono::milliseconds(timeout_ms), "sending a control line");
}

bool OobConnection::poll_line(std::string& line, bool& closed) {
  closed = false;
  for (int rounds = 0; rounds < 64 && fd_ >= 0; ++rounds) {
    if (const auto nl = buffered_.find('\n'); nl != std::string::npos) {
      line = buffered_.substr(0, nl);
      buffered_.erase(0, nl + 1);
      return true;
    }
    if (buffered_.size() > 256) {  // a line longer than any we send: the peer is not droce
      closed = true;
      return false;
    }
    char buf[256];
    const ssize_t k = ::recv(fd_, buf, sizeof(buf), MSG_DONTWAIT);
    if (k == 0) {
      closed = true;
      return false;
    }
    if (k < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return false;
      closed = true;
      return false;
    }
    buffered_.append(buf, static_cast<std::size_t>(k));
  }
  return false;
}

Status OobConnection::send_bytes(const void* buf, std::size_t n, std::uint32_t timeout_ms, const char* what) {
  if (fd_ < 0) return Status::error("send on a closed connection");
  auto* p = static_cast<std::uint8_t*>(const_cast<void*>(buf));  // io_exact only reads it when writing
  return io_exact(fd_, p, n, true, Clock::now() + std::chrono::milliseconds(timeout_ms), what);
}

Status OobConnection::recv_bytes(void* buf, std::size_t n, std::uint32_t timeout_ms, const char* what,
                                 const std::function<void()>& idle, bool* closed) {
  if (closed != nullptr) *closed = false;
  if (fd_ < 0) return Status::error("receive on a closed connection");
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  auto* out = static_cast<std::uint8_t*>(buf);
  if (!idle) {
    Status s = read_exact(out, n, deadline, what);
    if (!s.ok() && closed != nullptr)
      *closed = s.message().find("peer closed") != std::string::npos || s.message().find("reset") != std::string::npos;
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
      return Status::error(k == 0 || errno == ECONNRESET ? std::string("peer closed the connection during ") + what
                                                         : std::string(what) + ": " + std::strerror(errno));
    }
    if (Clock::now() >= deadline) return Status::error(std::string("timed out waiting for ") + what);
    // The caller's loop runs a few rounds per recv() so that a transport served while waiting
    // (a READ responder during the peer's whole run) is not paced by a syscall per iteration.
    for (int i = 0; i < 64; ++i) idle();
  }
  return {};
}

void OobConnection::shutdown_send() {
  if (fd_ >= 0) (void)::shutdown(fd_, SHUT_WR);
}

Status OobConnection::recv_line(std::string& line, std::uint32_t timeout_ms) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    bool closed = false;
    if (poll_line(line, closed)) return {};
    if (closed) return Status::error("the peer closed the control connection");
    const int left = ms_left(deadline);
    if (left == 0) return Status::error("timed out waiting for a control line from the peer");
    pollfd p{fd_, POLLIN, 0};
    (void)::poll(&p, 1, left < 50 ? left : 50);
  }
}

Status rc_pingpong_client(const std::string& host, std::uint16_t port, const ConnInfo& local, ConnInfo& peer,
                          std::uint32_t timeout_ms) {
  OobConnection c;
  if (Status s = OobConnection::connect(host, port, timeout_ms, c); !s.ok()) return s;
  return c.exchange_as_client(local, peer, timeout_ms);
}

Status RcPingpongServer::listen(std::uint16_t port, std::uint16_t& bound_port) {
  listen_fd_ = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  bool v6 = listen_fd_ >= 0;
  if (!v6) listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) return Status::error(std::string("socket: ") + std::strerror(errno));
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
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&ss), sl) != 0 || ::listen(listen_fd_, 1) != 0)
    return Status::error("cannot listen on TCP port " + std::to_string(port) + ": " + std::strerror(errno));
  sl = sizeof(ss);
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&ss), &sl);
  bound_port = ntohs(v6 ? reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port : reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
  return {};
}

Status RcPingpongServer::accept(std::uint32_t timeout_ms, OobConnection& out) {
  if (listen_fd_ < 0) return Status::error("accept before listen");
  pollfd p{listen_fd_, POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(timeout_ms)) <= 0)
    return Status::error("no client connected within " + std::to_string(timeout_ms) + " ms");
  const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0) return Status::error(std::string("accept: ") + std::strerror(errno));
  out = OobConnection(fd);
  return {};
}

Status RcPingpongServer::exchange(const ConnInfo& local, ConnInfo& peer, std::uint32_t timeout_ms) {
  OobConnection c;
  if (Status s = accept(timeout_ms, c); !s.ok()) return s;
  if (Status s = c.server_read_peer(peer, timeout_ms); !s.ok()) return s;
  return c.server_answer(local, timeout_ms);
}

RcPingpongServer::~RcPingpongServer() {
  if (listen_fd_ >= 0) ::close(listen_fd_);
}

}  // namespace droce::engine
