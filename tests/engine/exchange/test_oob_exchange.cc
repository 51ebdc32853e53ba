// OOB exchange in ibv_rc_pingpong's exact format: golden bytes from a real capture, strict
// parsing of hostile input, and TCP client/server with deadlines on every step.
#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <unistd.h>
#include <netinet/in.h>

#include <cstring>
#include <thread>

#include "engine/exchange/oob_exchange.h"

using namespace droce::engine;

namespace {
// As sent by ibv_rc_pingpong (rdma-core 44) on Linux rxe, guest 10.0.77.2 (tests/data/pcaps).
const char kGolden[] = "0000:000011:984ebb:00000000000000000000ffff0a004d02";
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
  auto parse = [&](std::string s) { return parse_rc_pingpong(reinterpret_cast<const std::uint8_t*>(s.data()), s.size(), c); };
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
    if (srv_status.ok() && line != "END 42") srv_status = Status::error("line was " + line);
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
