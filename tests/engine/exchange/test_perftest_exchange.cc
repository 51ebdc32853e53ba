// perftest 6.06's TCP exchange: golden bytes and whole sequences replayed from real captures
// (tests/data/pcaps: ib_*_bw / ib_*_lat between two Linux rxe guests), strict parsing of hostile
// messages, and droce's client and server talking to each other with deadlines on every step.
#include <arpa/inet.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "engine/exchange/oob_exchange.h"
#include "engine/exchange/perftest_exchange.h"
#include "tests/common/pcap_frames.h"

using namespace droce::engine;

namespace {

constexpr std::uint16_t kPerftestPort = 18515;

// One TCP payload of the exchange, in capture order.
struct Message {
  bool from_client = false;
  std::string bytes;
};

// The exchange on port 18515 of a capture, one message per TCP segment with data (each perftest
// message is one write(), one segment in these captures).
std::vector<Message> exchange_of(const std::string& name) {
  std::vector<Message> out;
  droce::test::for_each_pcap_frame(name, [&](const u_char* d, std::uint32_t caplen, int) {
    if (caplen < 14 + 20 + 20 || d[12] != 0x08 || d[13] != 0x00) return;
    const u_char* ip = d + 14;
    const std::size_t ihl = (ip[0] & 0x0F) * 4u;
    if (ip[9] != 6) return;  // TCP
    const std::size_t ip_len = static_cast<std::size_t>(ip[2]) << 8 | ip[3];
    const u_char* tcp = ip + ihl;
    const std::size_t thl = (tcp[12] >> 4) * 4u;
    const std::uint16_t sport = static_cast<std::uint16_t>(tcp[0] << 8 | tcp[1]);
    const std::uint16_t dport = static_cast<std::uint16_t>(tcp[2] << 8 | tcp[3]);
    if (sport != kPerftestPort && dport != kPerftestPort) return;
    if (ip_len <= ihl + thl || 14 + ip_len > caplen) return;
    out.push_back({dport == kPerftestPort, std::string(reinterpret_cast<const char*>(tcp + thl), ip_len - ihl - thl)});
  });
  return out;
}

const std::uint8_t* bytes(const std::string& s) { return reinterpret_cast<const std::uint8_t*>(s.data()); }

// A connected pair of OobConnections over loopback TCP.
void connected_pair(OobConnection& client, OobConnection& server) {
  RcPingpongServer listener;
  std::uint16_t port = 0;
  REQUIRE(listener.listen(0, port).ok());
  Status cs;
  std::thread t([&] { cs = OobConnection::connect("127.0.0.1", port, 3000, client); });
  REQUIRE(listener.accept(3000, server).ok());
  t.join();
  REQUIRE(cs.ok());
}

// The first key message each side sent, and the client's BW report, as the capture has them.
struct CaptureValues {
  PerftestKeys client, server;
  PerftestBwReport client_report;
};

CaptureValues values_of(const std::vector<Message>& ms) {
  CaptureValues v;
  bool have_c = false, have_s = false;
  std::vector<std::uint64_t> report;
  for (const auto& m : ms) {
    if (m.bytes.size() == kPerftestKeyBytes) {
      if (m.from_client && !have_c) have_c = parse_perftest_keys(bytes(m.bytes), m.bytes.size(), v.client).ok();
      if (!m.from_client && !have_s) have_s = parse_perftest_keys(bytes(m.bytes), m.bytes.size(), v.server).ok();
    }
    if (m.bytes.size() == 8 && m.from_client) report.push_back(parse_be64(bytes(m.bytes)));
  }
  REQUIRE(have_c);
  REQUIRE(have_s);
  if (report.size() == 5)
    v.client_report = {report[0], report[1], bits_double(report[2]), bits_double(report[3]), bits_double(report[4])};
  return v;
}

// Runs one side of a whole test on `conn` the way droce-perf does (one size, iterations mode).
Status run_side(PerftestTest t, PerftestRole role, OobConnection& conn, const PerftestKeys& mine,
                const PerftestBwReport& report, PerftestKeys& peer_out, PerftestBwReport& peer_report,
                std::uint32_t timeout_ms = 3000) {
  PerftestSession s(conn, role, timeout_ms);
  PerftestPreamble pre;
  if (Status st = s.preamble(1024, pre); !st.ok()) return st;
  std::vector<PerftestKeys> peer;
  bool connected = false;
  if (Status st = s.connect(t, {mine}, peer,
                            [&] {
                              connected = true;
                              return Status();
                            });
      !st.ok())
    return st;
  if (!connected) return Status::error(StatusCode::kBadState, "connect_qps never called");
  peer_out = peer[0];
  if (Status st = s.before_size(t, mine); !st.ok()) return st;
  if (Status st = s.after_size(t, false, mine); !st.ok()) return st;
  return s.finish(t, mine, report, peer_report);
}

// atomic_bw / atomic_lat have no capture of their own: perftest's atomic_bw.c and atomic_lat.c
// run read_bw.c's and read_lat.c's exchange step for step (both advertise out_reads), so the read
// captures are theirs too.
const std::vector<std::pair<PerftestTest, std::string>> kCaptures = {
    {PerftestTest::kSendBw, "send_bw.pcap"},     {PerftestTest::kWriteBw, "write_bw.pcap"},
    {PerftestTest::kReadBw, "read_bw.pcap"},     {PerftestTest::kSendLat, "send_lat.pcap"},
    {PerftestTest::kWriteLat, "write_lat.pcap"}, {PerftestTest::kReadLat, "read_lat.pcap"},
    {PerftestTest::kAtomicBw, "read_bw.pcap"},   {PerftestTest::kAtomicLat, "read_lat.pcap"}};

// The tests whose server prints the client's figures from the BW-report exchange.
bool swaps_reports(PerftestTest t) {
  return t == PerftestTest::kWriteBw || t == PerftestTest::kReadBw || t == PerftestTest::kAtomicBw;
}

}  // namespace

TEST_CASE("perftest messages: golden bytes from ib_send_bw parse, and our formats reproduce them", "[perftest]") {
  const auto ms = exchange_of("send_bw.pcap");
  REQUIRE(ms.size() >= 18);
  // Version, cycle buffer, cache line, MTU: the same both ways.
  CHECK(ms[0].bytes == format_perftest_version());
  CHECK(ms[0].bytes == std::string("6.06\0\0\0\0\0\0\0\0\0\0\0\0", 16));
  CHECK(ms[2].bytes == format_be32(kPerftestCycleBuffer));
  CHECK(ms[4].bytes == format_be32(kPerftestCacheLine));
  CHECK(ms[6].bytes == format_perftest_mtu(1024));
  CHECK(ms[6].bytes == std::string("3\0", 2));
  std::string v;
  REQUIRE(parse_perftest_version(bytes(ms[1].bytes), 16, v).ok());
  CHECK(v == "6.06");
  std::uint32_t mtu = 0;
  REQUIRE(parse_perftest_mtu(bytes(ms[7].bytes), 2, mtu).ok());
  CHECK(mtu == 1024);
  // The client's key message (tests/data/pcaps/send_bw.txt: QPN 0x0013 PSN 0x6e9084, 10.0.77.2).
  PerftestKeys k;
  REQUIRE(parse_perftest_keys(bytes(ms[8].bytes), ms[8].bytes.size(), k).ok());
  CHECK(k.lid == 0);
  CHECK(k.out_reads == 1);
  CHECK(k.qpn == 0x13);
  CHECK(k.psn == 0x6e9084);
  CHECK(k.rkey == 0);
  CHECK(k.vaddr == 0x0000564c8e11e000ull);
  std::uint8_t ip[4];
  REQUIRE(ipv4_from_gid(k.gid, ip).ok());
  CHECK((ip[0] == 10 && ip[1] == 0 && ip[2] == 77 && ip[3] == 2));
  CHECK(format_perftest_keys(k) == ms[8].bytes);
  // read_bw: out_reads 0x80 and a real rkey.
  const auto rd = exchange_of("read_bw.pcap");
  REQUIRE(parse_perftest_keys(bytes(rd[8].bytes), rd[8].bytes.size(), k).ok());
  CHECK(k.out_reads == kPerftestOutReadsRead);
  CHECK(k.rkey != 0);
  CHECK(format_perftest_keys(k) == rd[8].bytes);
  // write_bw's BW report: the client's 4096-byte, 8-iteration result.
  const CaptureValues wv = values_of(exchange_of("write_bw.pcap"));
  CHECK(wv.client_report.size == 4096);
  CHECK(wv.client_report.iters == 8);
  CHECK(wv.client_report.bw_avg > 0);
  CHECK(wv.client_report.msg_rate > 0);
}

TEST_CASE("every key message of every capture parses and formats back to the same bytes", "[perftest]") {
  for (const auto& [test, file] : kCaptures) {
    int keys = 0;
    for (const auto& m : exchange_of(file)) {
      if (m.bytes.size() != kPerftestKeyBytes) continue;
      PerftestKeys k;
      INFO(file);
      REQUIRE(parse_perftest_keys(bytes(m.bytes), m.bytes.size(), k).ok());
      CHECK(format_perftest_keys(k) == m.bytes);
      ++keys;
    }
    CHECK(keys >= 8);
  }
}

TEST_CASE("malformed perftest messages are refused with the field named", "[perftest]") {
  const auto ms = exchange_of("write_bw.pcap");
  const std::string good = ms[8].bytes;
  PerftestKeys k;
  auto parse = [&](const std::string& s) { return parse_perftest_keys(bytes(s), s.size(), k).message(); };
  CHECK(parse(good).empty());
  CHECK(parse(good.substr(0, 59)).find("108") != std::string::npos);  // perftest without -x: no GID
  std::string s = good;
  s[107] = 'x';
  CHECK(parse(s).find("NUL") != std::string::npos);
  const std::vector<std::pair<std::size_t, std::string>> fields = {
      {1, "LID"},    {6, "out_reads"},   {12, "QPN"},         {20, "PSN"},  {26, "rkey"},
      {40, "vaddr"}, {50, "GID byte 0"}, {95, "GID byte 15"}, {100, "SRQN"}};
  for (const auto& [at, name] : fields) {
    s = good;
    s[at] = 'g';
    INFO(name);
    CHECK(parse(s).find(name) != std::string::npos);
  }
  s = good;
  s[16] = '-';
  CHECK(parse(s).find("':' missing after QPN") != std::string::npos);
  s = good;
  std::memcpy(&s[10], "000000", 6);
  CHECK(parse(s).find("QPN 0") != std::string::npos);

  std::string v;
  auto version = [&](const std::string& m) { return parse_perftest_version(bytes(m), m.size(), v).message(); };
  CHECK(version(format_perftest_version("6.06")).empty());
  CHECK(version(format_perftest_version("5.70")).empty());
  CHECK(version(format_perftest_version("5.60")).find("older than 5.70") != std::string::npos);
  CHECK(version(format_perftest_version("abc")).find("not a version") != std::string::npos);
  CHECK(version(format_perftest_version("")).find("not a version") != std::string::npos);
  CHECK(version(std::string(16, '6')).find("NUL") != std::string::npos);
  CHECK(version("6.06").find("16") != std::string::npos);

  std::uint32_t mtu = 0;
  auto parse_mtu = [&](const std::string& m) { return parse_perftest_mtu(bytes(m), m.size(), mtu).message(); };
  for (std::uint32_t b : {256u, 512u, 1024u, 2048u, 4096u}) {
    CHECK(parse_mtu(format_perftest_mtu(b)).empty());
    CHECK(mtu == b);
  }
  CHECK(parse_mtu(std::string("6\0", 2)).find("enum") != std::string::npos);
  CHECK(parse_mtu(std::string("0\0", 2)).find("enum") != std::string::npos);
  CHECK(parse_mtu("3x").find("enum") != std::string::npos);
  CHECK(parse_mtu(std::string("3\0\0\0", 4)).find("2") != std::string::npos);
}

TEST_CASE("droce's client reproduces each capture's client bytes against the replayed rxe server", "[perftest]") {
  for (const auto& [test, file] : kCaptures) {
    INFO(file);
    const auto ms = exchange_of(file);
    const CaptureValues cv = values_of(ms);
    OobConnection ours, theirs;
    connected_pair(ours, theirs);
    // The replayed server: sends what rxe's server sent, and checks every client message byte for byte.
    std::string mismatch;
    std::thread peer([&] {
      for (std::size_t i = 0; i < ms.size() && mismatch.empty(); ++i) {
        const Message& m = ms[i];
        if (!m.from_client) {
          if (!theirs.send_bytes(m.bytes.data(), m.bytes.size(), 3000, "replay").ok())
            mismatch = "send failed at " + std::to_string(i);
          continue;
        }
        std::string got(m.bytes.size(), '\0');
        if (Status s = theirs.recv_bytes(got.data(), got.size(), 3000, "client message"); !s.ok())
          mismatch = "message " + std::to_string(i) + ": " + s.message();
        else if (got != m.bytes)
          mismatch = "message " + std::to_string(i) + " differs from the capture";
      }
      theirs = OobConnection();  // perftest closes after its last message
    });
    PerftestKeys peer_keys;
    PerftestBwReport peer_report;
    const Status s = run_side(test, PerftestRole::kClient, ours, cv.client, cv.client_report, peer_keys, peer_report);
    peer.join();
    CHECK(s.message() == "");
    CHECK(mismatch == "");
    CHECK(peer_keys.qpn == cv.server.qpn);
    CHECK(peer_keys.psn == cv.server.psn);
  }
}

TEST_CASE("droce's server reproduces each capture's server bytes against the replayed rxe client", "[perftest]") {
  for (const auto& [test, file] : kCaptures) {
    INFO(file);
    const auto ms = exchange_of(file);
    const CaptureValues cv = values_of(ms);
    OobConnection ours, theirs;
    connected_pair(theirs, ours);
    std::string mismatch;
    std::thread peer([&] {
      for (std::size_t i = 0; i < ms.size() && mismatch.empty(); ++i) {
        const Message& m = ms[i];
        if (m.from_client) {
          if (!theirs.send_bytes(m.bytes.data(), m.bytes.size(), 3000, "replay").ok())
            mismatch = "send failed at " + std::to_string(i);
          continue;
        }
        std::string got(m.bytes.size(), '\0');
        if (Status s = theirs.recv_bytes(got.data(), got.size(), 3000, "server message"); !s.ok())
          mismatch = "message " + std::to_string(i) + ": " + s.message();
        else if (got != m.bytes && m.bytes.size() != 8)  // rxe's server sends uninitialised report fields
          mismatch = "message " + std::to_string(i) + " differs from the capture";
      }
      theirs = OobConnection();
    });
    PerftestKeys peer_keys;
    PerftestBwReport peer_report;
    const Status s = run_side(test, PerftestRole::kServer, ours, cv.server, {}, peer_keys, peer_report);
    peer.join();
    CHECK(s.message() == "");
    CHECK(mismatch == "");
    CHECK(peer_keys.qpn == cv.client.qpn);
    if (swaps_reports(test)) {
      CHECK(peer_report.size == cv.client_report.size);
      CHECK(peer_report.iters == cv.client_report.iters);
      CHECK(peer_report.bw_avg == cv.client_report.bw_avg);
    }
  }
}

TEST_CASE("droce client and server run every test's exchange against each other", "[perftest]") {
  for (const auto& [test, file] : kCaptures) {
    INFO(perftest_test_name(test));
    OobConnection c, s;
    connected_pair(c, s);
    PerftestKeys ck, sk;
    ck.qpn = 0x11;
    ck.psn = 0x123456;
    sk.qpn = 0x22;
    sk.psn = 0xabcdef;
    sk.rkey = 0x800001;
    sk.vaddr = 0x7f0000001000ull;
    const PerftestBwReport report{65536, 5000, 1200.5, 1100.25, 0.0176};
    PerftestKeys got_c, got_s;
    PerftestBwReport rep_c, rep_s;
    Status ss;
    const PerftestTest t = test;  // a lambda cannot capture a structured binding before C++20's P1091 in clang
    std::thread server([&] { ss = run_side(t, PerftestRole::kServer, s, sk, {}, got_s, rep_s); });
    const Status cs = run_side(test, PerftestRole::kClient, c, ck, report, got_c, rep_c);
    server.join();
    CHECK(cs.message() == "");
    CHECK(ss.message() == "");
    CHECK(got_c.qpn == 0x22);
    CHECK(got_c.rkey == 0x800001);
    CHECK(got_c.vaddr == 0x7f0000001000ull);
    CHECK(got_s.qpn == 0x11);
    CHECK(got_s.psn == 0x123456);
    if (swaps_reports(test)) {
      CHECK(rep_s.iters == 5000);
      CHECK(rep_s.bw_avg == 1100.25);
      CHECK(rep_s.msg_rate == 0.0176);
    }
  }
}

TEST_CASE("perftest tests: names, bw or latency, and which advertise out_reads (READ and ATOMIC verbs)", "[perftest]") {
  CHECK(std::string(perftest_test_name(PerftestTest::kAtomicBw)) == "atomic_bw");
  CHECK(std::string(perftest_test_name(PerftestTest::kAtomicLat)) == "atomic_lat");
  CHECK(perftest_is_bw(PerftestTest::kAtomicBw));
  CHECK_FALSE(perftest_is_bw(PerftestTest::kAtomicLat));
  using T = PerftestTest;
  for (T t : {T::kReadBw, T::kReadLat, T::kAtomicBw, T::kAtomicLat}) CHECK(perftest_uses_out_reads(t));
  for (T t : {T::kSendBw, T::kWriteBw, T::kSendLat, T::kWriteLat}) {
    CHECK_FALSE(perftest_uses_out_reads(t));
    CHECK_FALSE(perftest_is_atomic(t));
  }
  CHECK(perftest_is_atomic(PerftestTest::kAtomicBw));
  CHECK(perftest_is_atomic(PerftestTest::kAtomicLat));
}

TEST_CASE("perftest exchange: a silent or vanishing peer ends every step within its deadline", "[perftest]") {
  using Clock = std::chrono::steady_clock;
  {
    OobConnection c, s;
    connected_pair(c, s);
    PerftestSession session(c, PerftestRole::kClient, 300);
    PerftestPreamble pre;
    const auto t0 = Clock::now();
    const Status st = session.preamble(1024, pre);
    CHECK(st.message().find("timed out") != std::string::npos);
    CHECK(Clock::now() - t0 < std::chrono::seconds(2));
  }
  {
    OobConnection c, s;
    connected_pair(c, s);
    s = OobConnection();  // the peer goes away
    PerftestSession session(c, PerftestRole::kServer, 3000);
    PerftestPreamble pre;
    CHECK(session.preamble(1024, pre).message().find("closed") != std::string::npos);
  }
  {
    // A peer that is not perftest: garbage where the version belongs.
    OobConnection c, s;
    connected_pair(c, s);
    std::thread peer([&] {
      std::uint8_t in[16];
      (void)s.recv_bytes(in, sizeof(in), 3000, "version");
      (void)s.send_bytes("HELLO WORLD 1234", 16, 3000, "garbage");
    });
    PerftestSession session(c, PerftestRole::kClient, 3000);
    PerftestPreamble pre;
    CHECK(session.preamble(1024, pre).message().find("NUL") != std::string::npos);
    peer.join();
  }
  {
    // The idle function runs while a step waits (droce-perf keeps its transport going there).
    OobConnection c, s;
    connected_pair(c, s);
    int idles = 0;
    PerftestSession session(c, PerftestRole::kServer, 200);
    session.set_idle([&] { ++idles; });
    PerftestKeys mine, theirs;
    mine.qpn = 1;
    CHECK(session.handshake(mine, theirs).message().find("timed out") != std::string::npos);
    CHECK(idles > 0);
  }
  {
    // The smaller MTU wins; the larger cycle buffer and cache line do.
    OobConnection c, s;
    connected_pair(c, s);
    std::thread peer([&] {
      std::uint8_t in[16];
      (void)s.send_bytes(format_perftest_version().data(), 16, 3000, "v");
      (void)s.recv_bytes(in, 16, 3000, "v");
      (void)s.send_bytes(format_be32(65536).data(), 4, 3000, "cb");
      (void)s.recv_bytes(in, 4, 3000, "cb");
      (void)s.send_bytes(format_be32(128).data(), 4, 3000, "cl");
      (void)s.recv_bytes(in, 4, 3000, "cl");
      (void)s.send_bytes(format_perftest_mtu(512).data(), 2, 3000, "mtu");
      (void)s.recv_bytes(in, 2, 3000, "mtu");
    });
    PerftestSession session(c, PerftestRole::kClient, 3000);
    PerftestPreamble pre;
    REQUIRE(session.preamble(4096, pre).ok());
    peer.join();
    CHECK(pre.mtu == 512);
    CHECK(pre.cycle_buffer == 65536);
    CHECK(pre.cache_line == 128);
  }
}

TEST_CASE("a BW report the server would print must be figures: NaN, negative, infinite or absurd ones are refused",
          "[perftest][hostile]") {
  PerftestBwReport good{4096, 8, 0.58, 0.58, 0.000149};
  CHECK(validate_perftest_bw_report(good).ok());
  CHECK(validate_perftest_bw_report(PerftestBwReport{}).ok());  // a run without a peak: zeros
  auto with = [&](auto change) {
    PerftestBwReport r = good;
    change(r);
    return validate_perftest_bw_report(r).message();
  };
  CHECK(with([](auto& r) { r.bw_avg = std::nan(""); }).find("BW average nan") != std::string::npos);
  CHECK(with([](auto& r) { r.bw_peak = -1; }).find("BW peak -1") != std::string::npos);
  CHECK(with([](auto& r) { r.msg_rate = HUGE_VAL; }).find("message rate inf") != std::string::npos);
  CHECK(with([](auto& r) { r.bw_avg = 1e300; }).find("BW average") != std::string::npos);
  CHECK(with([](auto& r) { r.size = std::uint64_t{1} << 40; }).find("message size") != std::string::npos);

  // Over TCP: the server refuses the client's NaN (droce-perf then exits non-zero, printing no row);
  // the client ignores the server's report, which real perftest fills with stack bytes.
  const auto ms = exchange_of("write_bw.pcap");
  std::vector<std::string> server_report;
  for (const auto& m : ms)
    if (!m.from_client && m.bytes.size() == 8) server_report.push_back(m.bytes);
  REQUIRE(server_report.size() == 5);
  {
    OobConnection c, s;
    connected_pair(c, s);
    std::thread peer([&] {
      std::uint8_t in[8];
      const std::uint64_t fields[5] = {4096, 8, double_bits(0.5), double_bits(std::nan("")), double_bits(0.1)};
      for (auto f : fields) {
        (void)c.send_bytes(format_be64(f).data(), 8, 3000, "report");
        (void)c.recv_bytes(in, 8, 3000, "report");
      }
    });
    PerftestSession server(s, PerftestRole::kServer, 3000);
    PerftestBwReport theirs;
    const Status st = server.exchange_bw_report(PerftestBwReport{}, theirs);
    peer.join();
    CHECK(st.message() == "the peer's BW report: BW average nan is not a figure from 0 to 1e+09");
  }
  {
    OobConnection c, s;
    connected_pair(c, s);
    std::thread peer([&] {
      std::uint8_t in[8];
      for (const auto& f : server_report) {
        (void)s.recv_bytes(in, 8, 3000, "report");
        (void)s.send_bytes(f.data(), 8, 3000, "report");
      }
    });
    PerftestSession client(c, PerftestRole::kClient, 3000);
    PerftestBwReport theirs;
    const Status st = client.exchange_bw_report(good, theirs);
    peer.join();
    CHECK(st.ok());
  }
}

TEST_CASE("perftest exchange: a peer that stalls mid-message is named with what arrived; Ctrl-C ends a wait",
          "[perftest][hostile]") {
  {
    OobConnection c, s;
    connected_pair(c, s);
    REQUIRE(s.send_bytes("6.06\0\0\0\0", 8, 3000, "half a version").ok());
    PerftestSession session(c, PerftestRole::kServer, 300);
    session.set_idle([] {});
    PerftestPreamble pre;
    // A read's error names the connection, so that both ends' logs can be matched.
    CHECK(session.preamble(1024, pre).message() ==
          "timed out waiting for the peer's perftest version (8 of 16 bytes arrived) [" + c.endpoints() + "]");
  }
  {
    OobConnection c, s;
    connected_pair(c, s);
    REQUIRE(s.send_bytes(std::string(50, '0').data(), 50, 3000, "half a key message").ok());
    s = OobConnection();
    PerftestSession session(c, PerftestRole::kServer, 3000);
    PerftestKeys mine, theirs;
    mine.qpn = 1;
    CHECK(session.handshake(mine, theirs).message() ==
          "peer closed the connection during the peer's key message (50 of 108 bytes arrived) [" + c.endpoints() + "]");
  }
  {
    // The passive server waits for the client's whole run here: a stop must not wait that out.
    OobConnection c, s;
    connected_pair(c, s);
    std::atomic<int> idles{0};
    c.set_stop_check([&] { return idles.load() > 1000; });
    PerftestSession session(c, PerftestRole::kServer, 600000);
    session.set_idle([&] { ++idles; });
    PerftestKeys mine, theirs;
    mine.qpn = 1;
    const auto t0 = std::chrono::steady_clock::now();
    CHECK(session.handshake(mine, theirs).message() ==
          "interrupted while waiting for the peer's key message [" + c.endpoints() + "]");
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(300));
  }
}

TEST_CASE("perftest exchange: a step that fails after a long gap on this side says how long this side took",
          "[perftest][hostile]") {
  OobConnection c, s;
  connected_pair(c, s);
  PerftestSession client(c, PerftestRole::kClient, 3000);
  PerftestKeys mine, theirs;
  mine.qpn = 1;
  const std::string peer_keys = format_perftest_keys(mine);
  REQUIRE(s.send_bytes(peer_keys.data(), peer_keys.size(), 3000, "the peer's keys").ok());
  REQUIRE(client.handshake(mine, theirs).ok());
  std::uint8_t ours[kPerftestKeyBytes];
  REQUIRE(s.recv_bytes(ours, sizeof(ours), 3000, "our keys").ok());
  s = OobConnection();  // the peer gave up while this side worked (its timeout ran out)
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  const std::string m = client.handshake(mine, theirs).message();
  CHECK_THAT(m, Catch::Matchers::StartsWith("peer closed the connection during the peer's key message (0 of 108 "
                                            "bytes arrived) [" +
                                            c.endpoints() + "] (this side came to the step "));
  CHECK_THAT(m, Catch::Matchers::EndsWith(" ms after the one before it ended)"));
}
