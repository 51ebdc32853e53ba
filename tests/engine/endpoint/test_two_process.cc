// Two processes: net_memif (shared memory) and net_vhost <-> virtio_user; frames echoed intact.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "engine/core/mempool.h"
#include "engine/core/port.h"
#include "tests/engine/frames.h"

extern char** environ;

using namespace droce::engine;

namespace {

// Deliberately never freed: static destructors run after main() has shut EAL down.
MbufPool& pool() {
  static MbufPool* p = new MbufPool();
  if (p->get() == nullptr) REQUIRE(MbufPool::create(PoolConfig{"test_2p_pool", 4095, 64, 2176, -1}, *p).ok());
  return *p;
}

// The peer binary's path comes from meson (see tests/engine/meson.build).
std::string peer_path() {
  const char* p = std::getenv("DROCE_TEST_PEER");
  return p != nullptr ? p : "";
}

pid_t spawn_peer(const std::string& devargs, int frames, int timeout_ms) {
  const std::string path = peer_path();
  REQUIRE_FALSE(path.empty());
  const std::string n = std::to_string(frames), t = std::to_string(timeout_ms);
  char* argv[] = {const_cast<char*>(path.c_str()), const_cast<char*>(devargs.c_str()), const_cast<char*>(n.c_str()),
                  const_cast<char*>(t.c_str()), nullptr};
  pid_t pid = -1;
  REQUIRE(posix_spawn(&pid, path.c_str(), nullptr, nullptr, argv, environ) == 0);
  return pid;
}

// Waits for the child, killing it if it overstays; returns its exit status (or -signal).
int reap(pid_t pid, int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  int status = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    if (waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return -SIGKILL;
}

// Sends `frames` patterned frames in bursts and expects each back, in order, byte for byte.
void echo_round_trip(Port& port, int frames, std::uint32_t len) {
  int sent = 0, received = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (received < frames && std::chrono::steady_clock::now() < deadline) {
    if (sent < frames && sent - received < 64) {
      rte_mbuf* burst[16];
      const int k = std::min(16, frames - sent);
      for (int i = 0; i < k; ++i) burst[i] = droce::test::make_frame(pool().get(), sent + i, len);
      const std::uint16_t took = port.tx_burst(0, burst, static_cast<std::uint16_t>(k));
      for (int i = took; i < k; ++i) rte_pktmbuf_free(burst[i]);
      sent += took;
    }
    rte_mbuf* rx[32];
    const std::uint16_t n = port.rx_burst(0, rx, 32);
    for (std::uint16_t i = 0; i < n; ++i) {
      std::uint32_t seq = 0;
      REQUIRE(droce::test::check_frame(rx[i], len, seq));
      REQUIRE(seq == static_cast<std::uint32_t>(received));
      ++received;
      rte_pktmbuf_free(rx[i]);
    }
    if (n == 0) std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  CHECK(received == frames);
}

}  // namespace

TEST_CASE("net_memif between two processes: 2000 frames echoed back intact and in order", "[engine][memif][2proc]") {
  const std::string sock = "/tmp/droce-test-memif-" + std::to_string(getpid()) + ".sock";
  Status err;
  PortConfig cfg;
  cfg.devargs = "net_memif0,role=server,socket=" + sock;
  cfg.rx_pool = pool().get();
  auto port = Port::open(cfg, err);
  REQUIRE(err.ok());
  const pid_t peer = spawn_peer("net_memif0,role=client,socket=" + sock, 2000, 15000);
  REQUIRE(port->wait_link_up(15000).ok());
  echo_round_trip(*port, 2000, 700);
  CHECK(reap(peer, 10000) == 0);
  port.reset();
  unlink(sock.c_str());
}

TEST_CASE("net_vhost <-> virtio_user between two processes: 1000 frames echoed back intact", "[engine][vhost][2proc]") {
  const std::string sock = "/tmp/droce-test-vhost-" + std::to_string(getpid()) + ".sock";
  Status err;
  PortConfig cfg;
  // The vhost side is the socket server and must exist before virtio_user connects.
  cfg.devargs = "net_vhost0,iface=" + sock + ",queues=1";
  cfg.rx_pool = pool().get();
  auto port = Port::open(cfg, err);
  REQUIRE(err.ok());
  const pid_t peer = spawn_peer("virtio_user0,path=" + sock + ",queues=1", 1000, 15000);
  REQUIRE(port->wait_link_up(15000).ok());
  echo_round_trip(*port, 1000, 512);
  CHECK(reap(peer, 10000) == 0);
  port.reset();
  unlink(sock.c_str());
}
