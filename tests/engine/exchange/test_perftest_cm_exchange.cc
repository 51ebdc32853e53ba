// perftest's -R exchange (engine/exchange/perftest_cm_exchange.h) between two endpoints of the
// RC lab: the 56-byte key message's layout; a client and a server connect the comm QP and 1 or 4
// data QPs over rdma_cm, swap the preamble and keys, run perftest's barriers and report swap,
// move data over the CM-connected QPs, and disconnect; a refusing or absent server, and a
// client with more QPs than the server, end in errors that say so.
#include <atomic>
#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "engine/exchange/perftest_cm_exchange.h"
#include "tests/engine/rc_lab.h"

using namespace droce;
using namespace droce::test;

namespace {

constexpr std::uint32_t kRegion = 4096;

TEST_CASE("perftest -R: the key message is struct pingpong_dest, big-endian, 56 bytes",
          "[engine][exchange][perftest_cm]") {
  PerftestKeys k;
  k.lid = 0x1234;
  k.out_reads = 16;
  k.qpn = 0xABCDEF;
  k.psn = 0x123456;
  k.rkey = 0xDEADBEEF;
  k.vaddr = 0x0102030405060708ull;
  for (int i = 0; i < 16; ++i) k.gid[i] = static_cast<std::uint8_t>(0xF0 + i);
  std::uint8_t m[kPerftestDestBytes];
  format_perftest_dest(k, m);
  const std::uint8_t head[] = {0x00, 0x00, 0x12, 0x34, 0x00, 0x00, 0x00, 0x10, 0x00, 0xAB, 0xCD,
                               0xEF, 0x00, 0x12, 0x34, 0x56, 0xDE, 0xAD, 0xBE, 0xEF, 0x00, 0x00,
                               0x00, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08};
  CHECK(std::memcmp(m, head, sizeof(head)) == 0);
  CHECK(std::memcmp(m + 32, k.gid, 16) == 0);
  PerftestKeys back;
  REQUIRE(parse_perftest_dest(m, sizeof(m), back).ok());
  CHECK(back.lid == k.lid);
  CHECK(back.out_reads == k.out_reads);
  CHECK(back.qpn == k.qpn);
  CHECK(back.psn == k.psn);
  CHECK(back.rkey == k.rkey);
  CHECK(back.vaddr == k.vaddr);
  CHECK(std::memcmp(back.gid, k.gid, 16) == 0);
  // The barriers send all zeros: legal. The pad and the trailing fields are not read.
  std::uint8_t zero[kPerftestDestBytes] = {};
  zero[20] = 0x77;
  zero[55] = 0x99;
  CHECK(parse_perftest_dest(zero, sizeof(zero), back).ok());
  CHECK(back.qpn == 0);
  // Strict where it matters: the length, and fields wider than their verbs types.
  Status s = parse_perftest_dest(m, 55, back);
  CHECK(s.code() == StatusCode::kPeer);
  CHECK(s.message().find("55 bytes") != std::string::npos);
  m[8] = 1;  // QPN over 24 bits
  CHECK(parse_perftest_dest(m, sizeof(m), back).message().find("QPN") != std::string::npos);
}

// One side's data QPs and the region the peer writes to, as droce-perf lays them out.
struct Side {
  std::vector<std::uint8_t> buf;
  rc::MemoryRegion mr{};
  std::vector<PerftestKeys> keys;
  Side(RcEndpoint& ep, MemoryRegistry& mem, std::uint32_t qps, std::uint32_t psn_base)
      : buf(std::size_t{qps} * kRegion, 0) {
    REQUIRE(mem.register_memory(buf.data(), buf.size(), rc::kAccessLocalWrite | rc::kAccessRemoteWrite, mr).ok());
    for (std::uint32_t i = 0; i < qps; ++i) {
      rc::QpAttr a;
      a.sq_psn = (psn_base + i * 0x1000) & 0xFFFFFF;  // the client's wrap through 2^24
      a.access = rc::kAccessRemoteWrite;
      PerftestKeys k;
      const Status made = ep.create_qp(a, k.qpn);
      INFO(made.message());
      REQUIRE(made.ok());
      k.psn = a.sq_psn;
      k.rkey = mr.rkey;
      k.vaddr = reinterpret_cast<std::uint64_t>(buf.data() + std::size_t{i} * kRegion);
      keys.push_back(k);
    }
  }
};

struct Outcome {
  std::string error;
  PerftestPreamble pre;
  std::vector<PerftestKeys> theirs;
  std::vector<PerftestCmDataQp> data;
  PerftestBwReport report;
  bool callback_ran = false;
  std::vector<rc::QpState> states_before_disconnect;
};

// One role's whole run (its thread polls only its endpoint; the main thread relays).
void run_side(RcEndpoint& ep, PerftestRole role, PerftestTest test, Side& side, Outcome& out) {
  PerftestCmConfig cfg;
  cfg.server = addr(2);
  cfg.teardown_ms = 3000;
  PerftestCmSession s(ep, role, cfg, 10000);
  auto fail = [&](const Status& st) { out.error = st.message(); };
  if (Status st = s.open(); !st.ok()) return fail(st);
  if (Status st = s.preamble(1024, out.pre); !st.ok()) return fail(st);
  if (Status st = s.connect(test, side.keys, out.theirs,
                            [&] {
                              out.callback_ran = true;
                              return Status{};
                            });
      !st.ok())
    return fail(st);
  out.data = s.data_qps();
  if (Status st = s.before_size(test, side.keys[0]); !st.ok()) return fail(st);
  // The client WRITEs its QP index into the start of the peer's region i over data QP i.
  if (role == PerftestRole::kClient) {
    for (std::size_t i = 0; i < side.keys.size(); ++i) {
      side.buf[i * kRegion] = static_cast<std::uint8_t>(0xA0 + i);
      rc::SendWr w;
      w.wr_id = i;
      w.opcode = rc::WrOpcode::kWrite;
      w.sge = {reinterpret_cast<std::uint64_t>(side.buf.data() + i * kRegion), 64, side.mr.lkey};
      w.remote_addr = out.theirs[i].vaddr;
      w.rkey = out.theirs[i].rkey;
      if (Status st = ep.post_send(side.keys[i].qpn, w); !st.ok()) return fail(st);
    }
    std::size_t done = 0;
    for (int spin = 0; spin < 2'000'000 && done < side.keys.size(); ++spin) {
      ep.poll();
      rc::Completion c[8];
      for (const PerftestKeys& k : side.keys) {
        const unsigned n = ep.poll_cq(k.qpn, c, 8);
        for (unsigned j = 0; j < n; ++j) {
          if (c[j].status != rc::WcStatus::kSuccess)
            return fail(Status::error(StatusCode::kError, "a data WRITE failed"));
          ++done;
        }
      }
    }
    if (done < side.keys.size()) return fail(Status::error(StatusCode::kTimeout, "data WRITEs did not complete"));
  }
  if (Status st = s.after_size(test, false, side.keys[0]); !st.ok()) return fail(st);
  // Before the last barrier: after it the client may disconnect before the server looks.
  for (const PerftestKeys& k : side.keys) out.states_before_disconnect.push_back(ep.qp(k.qpn)->state());
  PerftestBwReport mine;
  mine.size = 65536;
  mine.iters = role == PerftestRole::kClient ? 5000 : 0;
  mine.bw_peak = 1234.5;
  mine.bw_avg = 1200.25;
  mine.msg_rate = 0.019;
  if (Status st = s.finish(test, side.keys[0], mine, out.report); !st.ok()) return fail(st);
  if (Status st = s.disconnect(); !st.ok()) return fail(st);
}

void run_pair(PerftestTest test, std::uint32_t qps, const std::string& lab_name) {
  Lab lab(lab_name, 0.0);
  Side client(*lab.a, lab.mem_a, qps, 0xFFFF00);
  Side server(*lab.b, lab.mem_b, qps, 0x000100);
  Outcome oc, os;
  std::atomic<int> finished{0};
  std::thread tc([&] {
    run_side(*lab.a, PerftestRole::kClient, test, client, oc);
    ++finished;
  });
  std::thread ts([&] {
    run_side(*lab.b, PerftestRole::kServer, test, server, os);
    ++finished;
  });
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (finished.load() < 2 && std::chrono::steady_clock::now() < end) lab.relay.poll();
  const bool in_time = finished.load() == 2;
  if (!in_time) {
    // The sessions' own deadlines end them; the relay keeps going until they do.
    while (finished.load() < 2) lab.relay.poll();
  }
  tc.join();
  ts.join();
  CHECK(in_time);
  INFO("client: " << oc.error);
  INFO("server: " << os.error);
  REQUIRE(oc.error.empty());
  REQUIRE(os.error.empty());
  CHECK(oc.pre.peer_version == "6.06");
  CHECK(os.pre.mtu == 1024);
  CHECK(oc.callback_ran);
  CHECK(os.callback_ran);
  // Keys by index, as perftest pairs them.
  REQUIRE(oc.theirs.size() == qps);
  REQUIRE(os.theirs.size() == qps);
  for (std::uint32_t i = 0; i < qps; ++i) {
    CHECK(oc.theirs[i].qpn == server.keys[i].qpn);
    CHECK(oc.theirs[i].rkey == server.keys[i].rkey);
    CHECK(oc.theirs[i].vaddr == server.keys[i].vaddr);
    CHECK(os.theirs[i].qpn == client.keys[i].qpn);
  }
  // The CM's pairs: each client QP with one server QP, their PSNs crossed; every QP was in RTS
  // through the run and every pair is disconnected at the end.
  REQUIRE(oc.data.size() == qps);
  REQUIRE(os.data.size() == qps);
  for (std::uint32_t i = 0; i < qps; ++i) {
    const PerftestCmDataQp& c = oc.data[i];
    CHECK(c.qpn == client.keys[i].qpn);
    CHECK(c.established);
    CHECK(c.expected_psn == client.keys[i].psn);  // a Starting PSN is what its sender expects (docs/cm.md)
    bool paired = false;
    for (std::uint32_t j = 0; j < qps; ++j) {
      const PerftestCmDataQp& s = os.data[j];
      if (s.qpn != c.remote_qpn) continue;
      paired = true;
      CHECK(s.remote_qpn == c.qpn);
      CHECK(c.expected_psn == s.send_psn);
      CHECK(s.expected_psn == c.send_psn);
      CHECK(lab.b->qp(s.qpn)->attr().rq_psn == c.send_psn);  // the CM set the server QP's expected PSN
    }
    CHECK(paired);
    CHECK(oc.states_before_disconnect[i] == rc::QpState::kRts);
    CHECK(os.states_before_disconnect[i] == rc::QpState::kRts);
    CHECK(lab.a->qp(client.keys[i].qpn)->state() == rc::QpState::kError);
    CHECK(lab.b->qp(server.keys[i].qpn)->state() == rc::QpState::kError);
    // The WRITE over data QP i reached the server's region i.
    CHECK(server.buf[std::size_t{i} * kRegion] == 0xA0 + i);
  }
  if (perftest_is_bw(test) && test != PerftestTest::kSendBw) {
    CHECK(os.report.iters == 5000);
    CHECK(os.report.bw_avg == 1200.25);
    CHECK(oc.report.size == 65536);
  }
  // 1 + N connections each way; nothing refused, nothing unknown.
  CHECK(lab.a->cm_counters().unknown_connection == 0);
  CHECK(lab.b->cm_counters().rejects_sent == 0);
}

TEST_CASE("perftest -R: write_bw, one data QP: comm connection, keys, barriers, report swap, disconnect",
          "[engine][exchange][perftest_cm]") {
  run_pair(PerftestTest::kWriteBw, 1, "pcm1");
}

TEST_CASE("perftest -R: send_bw, four data QPs connected at once, paired by arrival",
          "[engine][exchange][perftest_cm]") {
  run_pair(PerftestTest::kSendBw, 4, "pcm4");
}

TEST_CASE("perftest -R: write_bw, four data QPs", "[engine][exchange][perftest_cm]") {
  run_pair(PerftestTest::kWriteBw, 4, "pcm4w");
}

// A client alone on the lab's thread: the idle function runs the whole lab.
Status open_client(Lab& lab, const wire::L2L3Address& server, std::uint32_t timeout_ms) {
  PerftestCmConfig cfg;
  cfg.server = server;
  PerftestCmSession s(*lab.a, PerftestRole::kClient, cfg, timeout_ms);
  s.set_idle([&] { lab.poll(); });
  return s.open();
}

TEST_CASE("perftest -R: a server that refuses, or is absent, is a clear error", "[engine][exchange][perftest_cm]") {
  Lab lab("pcmno", 0.0);
  // Nobody listens on B's port: its CM answers REJ (invalid service ID).
  Status s = open_client(lab, addr(2), 5000);
  INFO(s.message());
  CHECK(s.code() == StatusCode::kPeer);
  CHECK(s.message().find("10.0.0.2 port 18515") != std::string::npos);
  CHECK(s.message().find("invalid service ID") != std::string::npos);
  // Nobody at all at 10.0.0.7: the REQ goes unanswered until the deadline.
  const auto t0 = std::chrono::steady_clock::now();
  s = open_client(lab, addr(7), 300);
  INFO(s.message());
  CHECK(s.code() == StatusCode::kTimeout);
  CHECK(s.message().find("no answer from 10.0.0.7 port 18515") != std::string::npos);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
}

TEST_CASE("perftest -R: abandon_wait ends the wait in progress, once, with its reason",
          "[engine][exchange][perftest_cm]") {
  Lab lab("pcmab", 0.0);
  PerftestCmConfig cfg;
  cfg.server = addr(7);  // nobody: the REQ would wait until the deadline
  PerftestCmSession s(*lab.a, PerftestRole::kClient, cfg, 20000);
  int idles = 0;
  s.set_idle([&] {
    lab.poll();
    if (++idles == 50) s.abandon_wait("the peer went silent");
  });
  const auto t0 = std::chrono::steady_clock::now();
  const Status st = s.open();
  INFO(st.message());
  CHECK(st.code() == StatusCode::kTimeout);
  CHECK(st.message().find("the peer went silent") != std::string::npos);
  CHECK(st.message().find("10.0.0.7 port 18515") != std::string::npos);  // what it waited for
  CHECK(idles == 50);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10));
}

TEST_CASE("perftest -R: a server with fewer QPs refuses the extra data connection; the client says which",
          "[engine][exchange][perftest_cm]") {
  Lab lab("pcmfew", 0.0);
  Side client(*lab.a, lab.mem_a, 2, 0x10);
  Side server(*lab.b, lab.mem_b, 1, 0x20);
  std::string ec, es;
  std::atomic<int> finished{0};
  auto side = [&](RcEndpoint& ep, PerftestRole role, Side& mine, std::string& err) {
    PerftestCmConfig cfg;
    cfg.server = addr(2);
    cfg.data_connect_tries = 2;
    PerftestCmSession s(ep, role, cfg, 3000);
    Status st = s.open();
    std::vector<PerftestKeys> theirs;
    if (st.ok()) st = s.connect(PerftestTest::kWriteBw, mine.keys, theirs, {});
    err = st.ok() ? "" : st.message();
    ++finished;
  };
  std::thread tc([&] { side(*lab.a, PerftestRole::kClient, client, ec); });
  std::thread ts([&] { side(*lab.b, PerftestRole::kServer, server, es); });
  while (finished.load() < 2) lab.relay.poll();
  tc.join();
  ts.join();
  INFO("client: " << ec);
  INFO("server: " << es);
  CHECK(ec.find("data QP 1") != std::string::npos);
  CHECK(ec.find("consumer reject") != std::string::npos);
  CHECK(ec.find("2 tries") != std::string::npos);
  // The server got its one QP connected and then waited for the barrier the client never sent.
  CHECK(es.find("barrier after the rdma_cm data connections") != std::string::npos);
}

}  // namespace
