// OOB exchange in ibv_rc_pingpong's exact format: golden bytes from a real capture, strict
// parsing of hostile input, and TCP client/server with deadlines on every step.
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

#include "engine/core/stop_signal.h"
#include "engine/exchange/oob_exchange.h"

using namespace droce::engine;

namespace {
// As sent by ibv_rc_pingpong (rdma-core 44) on Linux rxe, guest 10.0.77.2 (tests/data/pcaps).
const char kGolden[] = "0000:000011:984ebb:00000000000000000000ffff0a004d02";

using Clock = std::chrono::steady_clock;

// A raw TCP socket to 127.0.0.1:port: the hostile peer, which speaks no protocol. -1 if the
// connect fails (a flooded listener may refuse).
int raw_connect(std::uint16_t port, bool nonblocking = false) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | (nonblocking ? SOCK_NONBLOCK : 0), 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 && errno != EINPROGRESS) {
    ::close(fd);
    return -1;
  }
  return fd;
}

void raw_send(int fd, const std::string& bytes) { (void)!::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL); }

// A listening server and a connection to it from a raw socket: `ours` is droce's end.
struct RawPeer {
  RcPingpongServer server;
  OobConnection ours;
  int fd = -1;
  RawPeer() {
    std::uint16_t port = 0;
    REQUIRE(server.listen(0, port).ok());
    fd = raw_connect(port);
    REQUIRE(fd >= 0);
    REQUIRE(server.accept(3000, ours).ok());
  }
  ~RawPeer() {
    if (fd >= 0) ::close(fd);
  }
};

// An error of a read or write on `c`: the text, then the connection it happened on.
std::string on(const OobConnection& c, const std::string& text) { return text + " [" + c.endpoints() + "]"; }
// The other end's view of the connection whose one end `fd` is: "peer -> local".
std::string seen_from_peer(int fd) {
  const std::string t = connection_text(fd);
  const auto arrow = t.find(" -> ");
  return arrow == std::string::npos ? std::string() : t.substr(arrow + 4) + " -> " + t.substr(0, arrow);
}

// Clears the process-wide stop flag however the test ends: the other tests in this binary wait too.
struct StopGuard {
  StopGuard() { request_stop(); }
  ~StopGuard() { clear_stop(); }
};
}  // namespace

TEST_CASE("rc_pingpong message: golden bytes parse, and our format reproduces them", "[oob]") {
  ConnInfo c;
  REQUIRE(parse_rc_pingpong(reinterpret_cast<const std::uint8_t*>(kGolden), sizeof(kGolden), c).ok());
  CHECK(c.lid == 0);
  CHECK(c.qpn == 0x11);
  CHECK(c.psn == 0x984ebb);
  std::uint8_t ip[4];
  REQUIRE(ipv4_from_gid(c.gid, ip).ok());
  CHECK((ip[0] == 10 && ip[1] == 0 && ip[2] == 77 && ip[3] == 2));
  const std::string again = format_rc_pingpong(c);
  REQUIRE(again.size() == 52);
  CHECK(std::memcmp(again.data(), kGolden, 52) == 0);
}

TEST_CASE("malformed exchange messages are refused with the field named", "[oob]") {
  ConnInfo c;
  auto parse = [&](std::string s) {
    return parse_rc_pingpong(reinterpret_cast<const std::uint8_t*>(s.data()), s.size(), c);
  };
  const std::string good(kGolden, 52);
  CHECK(parse(good).ok());
  CHECK(parse(good.substr(0, 40)).message().find("52") != std::string::npos);
  std::string s = good;
  s[51] = 'x';
  CHECK(parse(s).message().find("NUL") != std::string::npos);
  s = good;
  s[4] = '-';
  CHECK(parse(s).message().find("separator") != std::string::npos);
  s = good;
  s[7] = 'g';
  CHECK(parse(s).message().find("QPN") != std::string::npos);
  s = good;
  s[14] = 'z';
  CHECK(parse(s).message().find("PSN") != std::string::npos);
  s = good;
  s[30] = '?';
  CHECK(parse(s).message().find("GID") != std::string::npos);
  s = good;
  std::memcpy(&s[5], "000000", 6);
  CHECK(parse(s).message().find("QPN 0") != std::string::npos);
}

TEST_CASE("a GID of the wrong type (link-local IPv6) is refused for IPv4 RoCEv2", "[oob]") {
  std::uint8_t gid[16] = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x50, 0x54, 0, 0xff, 0xfe, 0x77, 0, 1};
  std::uint8_t ip[4];
  const Status s = ipv4_from_gid(gid, ip);
  REQUIRE_FALSE(s.ok());
  CHECK(s.message().find("GID") != std::string::npos);
}

TEST_CASE("a connect whose deadline passed while the client was not running still sees its connection", "[oob]") {
  RcPingpongServer server;
  std::uint16_t port = 0;
  REQUIRE(server.listen(0, port).ok());
  // The stop check runs before each look at the socket; sleeping there stands for a thread that
  // the scheduler left off its CPU past the whole deadline.
  OobConnection c;
  const Status s = OobConnection::connect("127.0.0.1", port, 20, c, [] {
    std::this_thread::sleep_for(std::chrono::milliseconds(60));
    return false;
  });
  INFO(s.message());
  CHECK(s.ok());
  OobConnection accepted;
  CHECK(server.accept(1000, accepted).ok());
}

namespace {
// A free TCP port on 127.0.0.1 of the parity connect() prefers for its source ports (Linux picks
// them even, bind(0) odd): the one a client retrying against a port nobody listens on can reach
// from itself.
std::uint16_t free_even_port() {
  for (int i = 0; i < 64; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(a);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0);
    REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0);
    ::close(fd);
    const std::uint16_t even = static_cast<std::uint16_t>(ntohs(a.sin_port) & ~1u);
    const int probe = ::socket(AF_INET, SOCK_STREAM, 0);
    a.sin_port = htons(even);
    const bool free = ::bind(probe, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
    ::close(probe);
    if (free) return even;
  }
  FAIL("no free even port");
  return 0;
}
}  // namespace

// A client retrying connect() against a port nobody listens on yet can be given that very port
// as its source port: the SYN meets itself, a simultaneous open (RFC 793 §3.4) completes, and the
// client would read its own bytes as the server's (and the server could not listen on the port).
TEST_CASE("a connection that reached the client itself is refused and retried, never returned", "[oob]") {
  SECTION("connected_to_itself tells a self-connected socket from a real connection") {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(free_even_port());
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0);
    REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0);  // source port = destination port
    CHECK(connected_to_itself(fd));
    const std::string self = "127.0.0.1:" + std::to_string(ntohs(a.sin_port));
    CHECK(connection_text(fd) == self + " -> " + self);
    ::close(fd);
    RawPeer p;
    CHECK_FALSE(connected_to_itself(p.fd));
    CHECK_FALSE(connected_to_itself(p.ours.native_handle()));
    // Both ends name the one connection, each from its side.
    CHECK(p.ours.endpoints() == seen_from_peer(p.fd));
    CHECK(connected_to_itself(-1) == false);
    CHECK(connection_text(-1).empty());
  }
  SECTION("connect() against a port nobody listens on: every attempt fails, the self-connections named") {
    // Single attempts (no time to retry), until the kernel has handed one of them the port itself
    // (a few hundred to a few thousand attempts: it walks the even ports), within a bound.
    const std::uint16_t port = free_even_port();
    std::uint32_t attempts = 0, reached_self = 0;
    const auto t0 = Clock::now();
    while (reached_self == 0 && attempts < 200000 && Clock::now() - t0 < std::chrono::seconds(60)) {
      OobConnection c;
      const Status s = OobConnection::connect("127.0.0.1", port, 0, c);
      ++attempts;
      REQUIRE_FALSE(s.ok());  // without the check, the self-connected socket came back as the server
      REQUIRE_FALSE(c.is_open());
      if (s.message().find("reached this client itself") != std::string::npos) ++reached_self;
    }
    INFO(attempts << " attempts");
    CHECK(reached_self == 1);
  }
}

TEST_CASE("client and server exchange connection info over loopback TCP", "[oob]") {
  RcPingpongServer server;
  std::uint16_t port = 0;
  REQUIRE(server.listen(0, port).ok());
  ConnInfo srv_local, cli_local, srv_seen, cli_seen;
  srv_local.qpn = 0x22;
  srv_local.psn = 0xABCDEF;
  const std::uint8_t sip[4] = {127, 0, 0, 1};
  gid_from_ipv4(sip, srv_local.gid);
  cli_local.qpn = 0x33;
  cli_local.psn = 0x000001;
  gid_from_ipv4(sip, cli_local.gid);
  Status srv_status;
  std::thread t([&] { srv_status = server.exchange(srv_local, srv_seen, 3000); });
  const Status cli_status = rc_pingpong_client("127.0.0.1", port, cli_local, cli_seen, 3000);
  t.join();
  REQUIRE(cli_status.ok());
  REQUIRE(srv_status.ok());
  CHECK(cli_seen.qpn == 0x22);
  CHECK(cli_seen.psn == 0xABCDEF);
  CHECK(srv_seen.qpn == 0x33);
  CHECK(srv_seen.psn == 1);
}

namespace {
bool nodelay(int fd) {
  int v = 0;
  socklen_t len = sizeof(v);
  return ::getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &v, &len) == 0 && v != 0;
}
}  // namespace

// The exchange is small messages each waiting for the peer's answer: under Nagle's algorithm
// "done" followed by the next QP's info waited ~40 ms for the peer's delayed ACK, 45 ms per QP
// (10,000 QPs took 449 s to connect in droce-gen). Both ends' sockets send at once, and a run of
// exchanges on one connection works in order, as droce-gen's per-QP exchange uses it.
TEST_CASE("both ends of a control connection send at once (TCP_NODELAY), and per-QP exchanges run in order", "[oob]") {
  RcPingpongServer server;
  std::uint16_t port = 0;
  REQUIRE(server.listen(0, port).ok());
  constexpr std::uint32_t kQps = 64;
  const std::uint8_t ip[4] = {127, 0, 0, 1};
  Status srv_status;
  bool srv_nodelay = false;
  std::vector<std::uint32_t> srv_seen;
  std::thread t([&] {
    OobConnection c;
    srv_status = server.accept(5000, c);
    if (!srv_status.ok()) return;
    srv_nodelay = nodelay(c.native_handle());
    for (std::uint32_t i = 0; i < kQps && srv_status.ok(); ++i) {
      ConnInfo local, peer;
      local.qpn = 0x1000 + i;
      gid_from_ipv4(ip, local.gid);
      srv_status = c.server_read_peer(peer, 5000);
      if (srv_status.ok()) srv_status = c.server_answer(local, 5000);
      srv_seen.push_back(peer.qpn);
    }
  });
  OobConnection c;
  Status s = OobConnection::connect("127.0.0.1", port, 5000, c);
  REQUIRE(s.ok());
  CHECK(nodelay(c.native_handle()));
  for (std::uint32_t i = 0; i < kQps && s.ok(); ++i) {
    ConnInfo local, peer;
    local.qpn = 0x2000 + i;
    gid_from_ipv4(ip, local.gid);
    s = c.exchange_as_client(local, peer, 5000);
    CHECK(peer.qpn == 0x1000 + i);
  }
  t.join();
  REQUIRE(s.ok());
  REQUIRE(srv_status.ok());
  CHECK(srv_nodelay);
  REQUIRE(srv_seen.size() == kQps);
  for (std::uint32_t i = 0; i < kQps; ++i) CHECK(srv_seen[i] == 0x2000 + i);
}

TEST_CASE("no listener, a silent server and a client that vanishes all end in errors, never hang", "[oob]") {
  ConnInfo local, peer;
  local.qpn = 1;
  const auto t0 = std::chrono::steady_clock::now();
  {
    RcPingpongServer quiet;  // listens but never answers: the client's read times out
    std::uint16_t qport = 0;
    REQUIRE(quiet.listen(0, qport).ok());
    const Status s = rc_pingpong_client("127.0.0.1", qport, local, peer, 300);
    REQUIRE_FALSE(s.ok());
    CHECK(s.message().find("timed out") != std::string::npos);
  }
  const Status none = rc_pingpong_client("127.0.0.1", 1, local, peer, 200);  // port 1: nothing there
  REQUIRE_FALSE(none.ok());
  CHECK(none.message().find("cannot connect") != std::string::npos);
  {
    RcPingpongServer srv;
    std::uint16_t sport = 0;
    REQUIRE(srv.listen(0, sport).ok());
    std::thread t([&] {
      const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_port = htons(sport);
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0) ::send(fd, "0000:00", 7, 0);
      ::close(fd);  // vanishes mid-message
    });
    const Status s = srv.exchange(local, peer, 2000);
    t.join();
    REQUIRE_FALSE(s.ok());
    CHECK(s.message().find("closed") != std::string::npos);
    const Status nobody = srv.exchange(local, peer, 100);
    CHECK(nobody.message().find("no client") != std::string::npos);
  }
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10));
}

TEST_CASE("the client's bytes are rc_pingpong's: 52-byte info, then \"done\" with its NUL", "[oob]") {
  RcPingpongServer server;
  std::uint16_t port = 0;
  REQUIRE(server.listen(0, port).ok());
  ConnInfo local, peer, srv;
  local.qpn = 0x123456;
  local.psn = 0x0000ff;
  srv.qpn = 0x11;
  std::string got;
  Status srv_status;
  std::thread t([&] {
    OobConnection c;
    srv_status = server.accept(3000, c);
    if (!srv_status.ok()) return;
    ConnInfo seen;
    srv_status = c.server_read_peer(seen, 3000);
    if (srv_status.ok()) got = format_rc_pingpong(seen);
    if (srv_status.ok()) srv_status = c.server_answer(srv, 3000);  // reads exactly "done\0"
    std::string line;
    if (srv_status.ok()) srv_status = c.recv_line(line, 3000);
    if (srv_status.ok() && line != "END 42") srv_status = Status::error(StatusCode::kPeer, "line was " + line);
  });
  OobConnection c;
  REQUIRE(OobConnection::connect("127.0.0.1", port, 3000, c).ok());
  REQUIRE(c.exchange_as_client(local, peer, 3000).ok());
  REQUIRE(c.send_line("END 42", 3000).ok());
  t.join();
  REQUIRE(srv_status.ok());
  CHECK(got == std::string("0000:123456:0000ff:00000000000000000000000000000000") + '\0');
  CHECK(peer.qpn == 0x11);
  std::string line;
  bool closed = false;
  for (int i = 0; i < 100 && !closed; ++i) {
    CHECK_FALSE(c.poll_line(line, closed));
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK(closed);  // the server's connection went away with its thread
}

TEST_CASE("rc_pingpong's exchange with an idle function calls it while it waits for the peer", "[oob]") {
  // The apps poll their endpoint there, so that a peer resolving our MAC by ARP is answered.
  RcPingpongServer server;
  std::uint16_t port = 0;
  REQUIRE(server.listen(0, port).ok());
  ConnInfo local, peer, srv;
  local.qpn = 0x22;
  srv.qpn = 0x33;
  std::uint64_t srv_idle = 0;
  Status srv_status;
  ConnInfo seen;
  std::thread t([&] {
    OobConnection c;
    srv_status = server.accept(3000, c);
    if (!srv_status.ok()) return;
    const std::function<void()> idle = [&] { ++srv_idle; };
    srv_status = c.server_read_peer(seen, 3000, idle);
    // The client is slow to send "done": the answer's wait runs the idle function too.
    if (srv_status.ok()) srv_status = c.server_answer(srv, 3000, idle);
  });
  OobConnection c;
  REQUIRE(OobConnection::connect("127.0.0.1", port, 3000, c).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the server waits for our info meanwhile
  std::uint64_t cli_idle = 0;
  REQUIRE(c.exchange_as_client(local, peer, 3000, [&] {
             if (++cli_idle == 1) std::this_thread::sleep_for(std::chrono::milliseconds(1));
           }).ok());
  t.join();
  REQUIRE(srv_status.ok());
  CHECK(seen.qpn == 0x22);
  CHECK(peer.qpn == 0x33);
  CHECK(srv_idle > 0);
  // A server that never answers: the client's wait ends at its deadline, idle called all along.
  RcPingpongServer mute;
  REQUIRE(mute.listen(0, port).ok());
  OobConnection m;
  REQUIRE(OobConnection::connect("127.0.0.1", port, 3000, m).ok());
  std::uint64_t mute_idle = 0;
  const Status s = m.exchange_as_client(local, peer, 200, [&] { ++mute_idle; });
  CHECK(s.message().find("timed out waiting for the peer's connection info") != std::string::npos);
  CHECK(mute_idle > 0);
}

TEST_CASE("a server given an info message without its NUL refuses it", "[oob]") {
  RcPingpongServer server;
  std::uint16_t port = 0;
  REQUIRE(server.listen(0, port).ok());
  Status srv_status;
  std::thread t([&] {
    ConnInfo local, peer;
    local.qpn = 2;
    srv_status = server.exchange(local, peer, 400);
  });
  OobConnection c;
  REQUIRE(OobConnection::connect("127.0.0.1", port, 3000, c).ok());
  ConnInfo me;
  me.qpn = 3;
  const std::string msg = format_rc_pingpong(me);
  REQUIRE(c.send_line(std::string(msg.data(), 51), 1000).ok());  // 51 chars + '\n' in place of the NUL
  t.join();
  CHECK_FALSE(srv_status.ok());
}

TEST_CASE("garbage where the 52-byte info belongs: the error names the first bad field", "[oob][hostile]") {
  RcPingpongServer server;
  std::uint16_t port = 0;
  REQUIRE(server.listen(0, port).ok());
  const int fd = raw_connect(port);
  REQUIRE(fd >= 0);
  raw_send(fd, std::string(52, '\xff'));
  ConnInfo local, peer;
  local.qpn = 1;
  const Status s = server.exchange(local, peer, 3000);
  ::close(fd);
  CHECK(s.message() == "exchange message is not NUL-terminated");
  // A NUL at the end and junk before it: the first field is named.
  std::string junk(51, 'Z');
  junk += '\0';
  junk[4] = junk[11] = junk[18] = ':';
  CHECK(parse_rc_pingpong(reinterpret_cast<const std::uint8_t*>(junk.data()), 52, peer).message().find("LID") !=
        std::string::npos);
}

TEST_CASE("a peer that stalls in the middle of the 52-byte info: error at the deadline with what arrived",
          "[oob][hostile]") {
  ConnInfo local, peer;
  local.qpn = 1;
  SECTION("a client stalls: the server names the client's info and how much of it came") {
    RcPingpongServer server;
    std::uint16_t port = 0;
    REQUIRE(server.listen(0, port).ok());
    const int fd = raw_connect(port);
    REQUIRE(fd >= 0);
    raw_send(fd, std::string(kGolden, 20));
    const std::string server_view = seen_from_peer(fd);
    const Status s = server.exchange(local, peer, 300);
    ::close(fd);
    CHECK(s.message() ==
          "timed out waiting for the client's connection info (20 of 52 bytes arrived) [" + server_view + "]");
  }
  SECTION("a server stalls: the client names the server's info and how much of it came") {
    RcPingpongServer server;
    std::uint16_t port = 0;
    REQUIRE(server.listen(0, port).ok());
    std::thread t([&] {
      OobConnection c;
      if (!server.accept(3000, c).ok()) return;
      (void)c.send_bytes(kGolden, 30, 3000, "half");
      std::uint8_t in[52];
      (void)c.recv_bytes(in, sizeof(in), 3000, "client info");
      (void)c.recv_bytes(in, 1, 1000, "never");  // stays open past the client's deadline
    });
    OobConnection c;
    REQUIRE(OobConnection::connect("127.0.0.1", port, 3000, c).ok());
    const Status s = c.exchange_as_client(local, peer, 300);
    t.join();
    CHECK(s.message() == on(c, "timed out waiting for the peer's connection info (30 of 52 bytes arrived)"));
  }
  SECTION("half a control line, then silence") {
    RawPeer p;
    raw_send(p.fd, "END 4");
    std::string line;
    CHECK(p.ours.recv_line(line, 300).message() ==
          on(p.ours, "timed out waiting for a control line from the peer (5 bytes arrived without a newline)"));
  }
}

TEST_CASE("a peer that closes in the middle of a message: the error says so and how far it got", "[oob][hostile]") {
  SECTION("the info message") {
    RcPingpongServer server;
    std::uint16_t port = 0;
    REQUIRE(server.listen(0, port).ok());
    std::thread t([&] {
      OobConnection c;
      if (!server.accept(3000, c).ok()) return;
      std::uint8_t in[52];
      (void)c.recv_bytes(in, sizeof(in), 3000, "client info");
      (void)c.send_bytes(kGolden, 30, 3000, "half");
    });  // the server's connection closes with the thread
    ConnInfo local, peer;
    local.qpn = 1;
    OobConnection c;
    REQUIRE(OobConnection::connect("127.0.0.1", port, 3000, c).ok());
    const Status s = c.exchange_as_client(local, peer, 3000);
    t.join();
    CHECK(s.message() ==
          on(c, "peer closed the connection during the peer's connection info (30 of 52 bytes arrived)"));
  }
  SECTION("a control line") {
    RawPeer p;
    raw_send(p.fd, "RESULT 1 2");
    ::shutdown(p.fd, SHUT_WR);
    std::string line;
    CHECK(p.ours.recv_line(line, 3000).message() ==
          on(p.ours, "the peer closed the control connection in the middle of a line"));
  }
}

TEST_CASE("a read the peer cuts short is kPeer and says the connection closed; a silent peer is kTimeout, not closed",
          "[oob][hostile]") {
  // recv_bytes(..., closed) tells "the peer went away" by the error's code, not its words.
  SECTION("the peer closes after 3 of 8 bytes") {
    RawPeer p;
    raw_send(p.fd, "abc");
    ::shutdown(p.fd, SHUT_WR);
    std::uint8_t in[8];
    bool closed = false;
    const Status s = p.ours.recv_bytes(in, sizeof(in), 3000, "eight bytes", {}, &closed);
    CHECK(s.code() == StatusCode::kPeer);
    CHECK(closed);
    CHECK(s.message() == on(p.ours, "peer closed the connection during eight bytes (3 of 8 bytes arrived)"));
  }
  SECTION("the peer sends nothing") {
    RawPeer p;
    std::uint8_t in[8];
    bool closed = true;
    const Status s = p.ours.recv_bytes(in, sizeof(in), 200, "eight bytes", {}, &closed);
    CHECK(s.code() == StatusCode::kTimeout);
    CHECK_FALSE(closed);
  }
}

TEST_CASE("control lines: 255 bytes pass, a longer one is refused as too long, a binary one as not text",
          "[oob][hostile]") {
  SECTION("the limit itself") {
    RawPeer p;
    raw_send(p.fd, std::string(255, 'a') + "\n" + std::string(256, 'b') + "\n");
    std::string line;
    REQUIRE(p.ours.recv_line(line, 3000).ok());
    CHECK(line == std::string(255, 'a'));
    CHECK(p.ours.recv_line(line, 3000).message() ==
          on(p.ours, "the peer's control line is longer than 255 bytes (is the peer droce?)"));
    // The connection stays failed: no half line is ever returned as a line.
    bool closed = false;
    Status why;
    CHECK_FALSE(p.ours.poll_line(line, closed, &why));
    CHECK(closed);
    CHECK(why.message().find("longer than 255") != std::string::npos);
  }
  SECTION("a 1 MB line: refused at the limit, not read to its end") {
    RawPeer p;
    // The peer writes until its socket buffers fill (we stop reading at 256 bytes), then stops.
    (void)::fcntl(p.fd, F_SETFL, O_NONBLOCK);
    const std::string chunk(4096, 'x');
    std::size_t sent = 0;
    for (int i = 0; i < 256; ++i) {
      const ssize_t k = ::send(p.fd, chunk.data(), chunk.size(), MSG_NOSIGNAL);
      if (k <= 0) break;
      sent += static_cast<std::size_t>(k);
    }
    REQUIRE(sent > 256);
    std::string line;
    CHECK(p.ours.recv_line(line, 3000).message() ==
          on(p.ours, "the peer's control line is longer than 255 bytes (is the peer droce?)"));
  }
  SECTION("bytes that are not text") {
    RawPeer p;
    raw_send(p.fd, std::string("END 1\x1b[2J\n", 11));
    std::string line;
    CHECK(p.ours.recv_line(line, 3000).message() ==
          on(p.ours, "the peer's control line has a non-text byte 0x1b at offset 5 (is the peer droce?)"));
  }
}

TEST_CASE("a listener flooded with probes and junk: each gets an outcome, the real exchange works or fails clearly",
          "[oob][hostile]") {
  ConnInfo srv_local, cli_local, srv_seen, cli_seen;
  srv_local.qpn = 0x22;
  cli_local.qpn = 0x33;
  cli_local.psn = 0x44;
  SECTION("port probes (connect, close) before the client are passed over") {
    RcPingpongServer server;
    std::uint16_t port = 0;
    REQUIRE(server.listen(0, port).ok());
    Status srv_status;
    std::thread t([&] { srv_status = server.exchange(srv_local, srv_seen, 10000); });
    for (int i = 0; i < 20; ++i) {
      const int fd = raw_connect(port);
      if (fd >= 0) ::close(fd);
    }
    const Status cli_status = rc_pingpong_client("127.0.0.1", port, cli_local, cli_seen, 10000);
    t.join();
    REQUIRE(srv_status.ok());
    REQUIRE(cli_status.ok());
    CHECK((srv_seen.qpn == 0x33 && srv_seen.psn == 0x44));
    CHECK(cli_seen.qpn == 0x22);
  }
  SECTION("silent and garbage connections beside the client: never a junk peer taken, every socket answered") {
    RcPingpongServer server;
    std::uint16_t port = 0;
    REQUIRE(server.listen(0, port).ok());
    std::vector<int> junk;
    for (int i = 0; i < 40; ++i) {
      const int fd = raw_connect(port, true);
      if (fd < 0) continue;
      if (i % 2 == 1) raw_send(fd, std::string(52, static_cast<char>('0' + i % 10)));  // lands once connected, or not
      junk.push_back(fd);
    }
    Status srv_status, cli_status;
    std::thread cli([&] { cli_status = rc_pingpong_client("127.0.0.1", port, cli_local, cli_seen, 1000); });
    srv_status = server.exchange(srv_local, srv_seen, 1000);
    server.close();
    cli.join();
    INFO(srv_status.message());
    INFO(cli_status.message());
    if (srv_status.ok()) {
      CHECK((srv_seen.qpn == 0x33 && srv_seen.psn == 0x44));  // the real client, no junk
    } else {
      const std::string& m = srv_status.message();
      CHECK((m.find("timed out waiting for the client's connection info") != std::string::npos ||
             m.find("exchange message") != std::string::npos || m.find("no client connected") != std::string::npos));
    }
    if (!cli_status.ok()) {
      const std::string& m = cli_status.message();
      CHECK((m.find("timed out") != std::string::npos || m.find("peer closed") != std::string::npos ||
             m.find("cannot connect") != std::string::npos));
    }
    // The listener is gone: every junk connection learns it (end of file or reset), none hangs.
    std::size_t answered = 0;
    const auto until = Clock::now() + std::chrono::seconds(20);
    std::vector<bool> done(junk.size(), false);
    while (answered < junk.size() && Clock::now() < until) {
      for (std::size_t i = 0; i < junk.size(); ++i) {
        if (done[i]) continue;
        char b[64];
        const ssize_t k = ::recv(junk[i], b, sizeof(b), MSG_DONTWAIT);
        if (k == 0 || (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
          done[i] = true;
          ++answered;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    for (int fd : junk) ::close(fd);
    CHECK(answered == junk.size());
  }
}

TEST_CASE("a stop request (Ctrl-C) ends every OOB wait at once with \"interrupted\"", "[oob][stop]") {
  const auto t0 = Clock::now();
  constexpr std::uint32_t kLong = 60000;  // the deadline a wait would otherwise run to
  SECTION("a control line from a silent peer, with droce's stop flag already set") {
    RawPeer p;
    StopGuard stop;
    std::string line;
    CHECK(p.ours.recv_line(line, kLong).message() ==
          on(p.ours, "interrupted while waiting for a control line from the peer"));
  }
  SECTION("bytes from a silent peer, with and without an idle function") {
    RawPeer p;
    StopGuard stop;
    std::uint8_t b[8];
    CHECK(p.ours.recv_bytes(b, sizeof(b), kLong, "the peer's BW report").message() ==
          on(p.ours, "interrupted while waiting for the peer's BW report"));
    int idles = 0;
    CHECK(p.ours.recv_bytes(b, sizeof(b), kLong, "the peer's BW report", [&] { ++idles; }).message() ==
          on(p.ours, "interrupted while waiting for the peer's BW report"));
  }
  SECTION("an accept nobody answers, and a connect nobody accepts") {
    RcPingpongServer server;
    std::uint16_t port = 0;
    REQUIRE(server.listen(0, port).ok());
    StopGuard stop;
    OobConnection c;
    CHECK(server.accept(kLong, c).message() == "interrupted while waiting for a client to connect");
    // Port 1: nothing listens, so the connect is refused and would be retried until the deadline.
    CHECK(OobConnection::connect("127.0.0.1", 1, kLong, c).message() == "interrupted while connecting to 127.0.0.1:1");
  }
  SECTION("a stop that comes while the wait is under way, through a connection's own stop check") {
    RawPeer p;
    std::atomic<bool> stop{false};
    p.ours.set_stop_check([&] { return stop.load(); });
    std::thread t([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      stop = true;
    });
    ConnInfo peer;
    const Status s = p.ours.server_read_peer(peer, kLong);
    t.join();
    CHECK(s.message() == on(p.ours, "interrupted while waiting for the client's connection info"));
  }
  SECTION("what needs no wait still happens: the end-of-run line after Ctrl-C goes out, an arrived line is read") {
    RawPeer p;
    raw_send(p.fd, "RESULT 1 0 0 0 0 0\n");
    StopGuard stop;
    REQUIRE(p.ours.send_line("END 5", kLong).ok());
    std::string line;
    REQUIRE(p.ours.recv_line(line, kLong).ok());
    CHECK(line == "RESULT 1 0 0 0 0 0");
    char b[16] = {};
    REQUIRE(::recv(p.fd, b, sizeof(b), 0) == 6);
    CHECK(std::string(b) == "END 5\n");
  }
  // Far below the 60 s deadline at any speed: the waits ended on the stop, not on their deadline.
  CHECK(Clock::now() - t0 < std::chrono::seconds(30));
}
