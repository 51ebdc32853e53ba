// PcapngCapture's limits (engine/core/capture.h CaptureLimits), as dumpcap's -a filesize: and
// -b filesize: -b files:: a cap where writing stops, every later frame counted; a ring whose files
// each stay under the size, only the last N kept. Frames are captured on a net_ring port.
#include <rte_cycles.h>
#include <rte_mbuf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstring>
#include <string>

#include "engine/core/capture.h"
#include "engine/core/mempool.h"
#include "tests/engine/ring_pair.h"

using namespace droce::engine;

namespace {

// Deliberately never freed: static destructors run after main() has shut EAL down.
MbufPool& pool() {
  static MbufPool* p = new MbufPool();
  if (p->get() == nullptr) REQUIRE(MbufPool::create(PoolConfig{"test_caplim_pool", 1023, 0, 2176, -1}, *p).ok());
  return *p;
}

// The size of `path`, or -1 when it does not exist.
long long file_size(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<long long>(st.st_size) : -1;
}

}  // namespace

TEST_CASE("pcapng capture under a size cap: it stops at the cap, or a ring keeps the last files", "[engine][capture]") {
  // One port for every section (Catch runs the case once per section); never freed, as the pool.
  static droce::test::RingPair* link = new droce::test::RingPair("caplim", pool().get());
  const std::uint16_t port = link->a->id();
  const std::string base = "/tmp/droce-test-caplim-" + std::to_string(getpid());
  rte_mbuf* m = rte_pktmbuf_alloc(pool().get());
  REQUIRE(m != nullptr);
  REQUIRE(rte_pktmbuf_append(m, 1000) != nullptr);
  std::memset(rte_pktmbuf_mtod(m, void*), 0, 1000);
  constexpr std::uint64_t kCap = 64 * 1024;
  constexpr int kFrames = 1000;  // about 400 bytes each once cut to 346: some 160 a file
  SECTION("no ring: writing stops at the cap, every later frame counted as not written") {
    const std::string path = base + ".pcapng";
    PcapngCapture cap;
    REQUIRE(cap.open(path, 346, 255, {kCap, 0}).ok());
    for (int i = 0; i < kFrames; ++i) cap.capture(port, 0, &m, 1, CaptureDirection::kTx, rte_rdtsc());
    cap.close();
    CHECK(file_size(path) > 0);
    CHECK(file_size(path) <= static_cast<long long>(kCap));
    CHECK(cap.captured() > 100);
    CHECK(cap.not_written() > 0);
    CHECK(cap.captured() + cap.not_written() == kFrames);  // nothing lost without a count
    CHECK(cap.dropped() == 0);
    CHECK(cap.cut() == cap.captured());  // every 1000-byte frame cut to 346
    CHECK(cap.files_rotated() == 0);
    CHECK(cap.first_file() == path);
    CHECK(cap.last_file() == path);
    std::remove(path.c_str());
  }
  SECTION("a ring of 3 files: each under the cap, only the last three kept, every frame written") {
    PcapngCapture cap;
    REQUIRE(cap.open(base + ".pcapng", 346, 255, {kCap, 3}).ok());
    for (int i = 0; i < kFrames; ++i) cap.capture(port, 0, &m, 1, CaptureDirection::kTx, rte_rdtsc());
    cap.close();
    CHECK(cap.captured() == kFrames);
    CHECK(cap.not_written() == 0);
    CHECK(cap.dropped() == 0);
    REQUIRE(cap.files_rotated() >= 4);
    const std::uint64_t files = cap.files_rotated() + 1;
    CHECK(cap.files_removed() == files - 3);
    CHECK(cap.first_file() == PcapngCapture::ring_file_name(base + ".pcapng", files - 2));
    CHECK(cap.last_file() == PcapngCapture::ring_file_name(base + ".pcapng", files));
    for (std::uint64_t n = 1; n <= files; ++n) {
      const std::string f = PcapngCapture::ring_file_name(base + ".pcapng", n);
      INFO(f);
      if (n + 3 <= files) {
        CHECK(file_size(f) == -1);  // fell out of the ring
      } else {
        CHECK(file_size(f) > 0);
        CHECK(file_size(f) <= static_cast<long long>(kCap));
        std::remove(f.c_str());
      }
    }
    CHECK(file_size(base + ".pcapng") == -1);  // a ring writes numbered files only
  }
  SECTION("a ring needs two files and a size; its files are numbered before the extension") {
    PcapngCapture cap;
    CHECK(cap.open(base + ".pcapng", 346, 255, {kCap, 1}).code() == StatusCode::kInvalidArgument);
    CHECK(cap.open(base + ".pcapng", 346, 255, {0, 3}).code() == StatusCode::kInvalidArgument);
    CHECK_FALSE(cap.is_open());
    CHECK(PcapngCapture::ring_file_name("/a.b/run", 7) == "/a.b/run_00007");
    CHECK(PcapngCapture::ring_file_name("x.pcapng", 12) == "x_00012.pcapng");
    CHECK(PcapngCapture::ring_file_name("/d/.hidden", 1) == "/d/.hidden_00001");
  }
  rte_pktmbuf_free(m);
}
