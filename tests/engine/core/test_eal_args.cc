// EAL argument defaults and validation: what droce adds, and what it refuses before EAL sees it.
#include <algorithm>
#include <catch2/catch.hpp>

#include "engine/core/eal.h"

using droce::engine::build_eal_args;
using droce::engine::EalReport;

namespace {
bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}
bool has_prefix(const std::vector<std::string>& v, const std::string& p) {
  return std::any_of(v.begin(), v.end(), [&](const std::string& a) { return a.rfind(p, 0) == 0; });
}
}  // namespace

TEST_CASE("lcore beyond the machine -> one clear error naming the lcore", "[eal]") {
  std::vector<std::string> out;
  EalReport rep;
  auto s = build_eal_args({"-l", "0-4095"}, out, rep, true);
  REQUIRE_FALSE(s.ok());
  CHECK(s.message().find("lcore") != std::string::npos);
  CHECK(s.message().find("-l") != std::string::npos);
}

TEST_CASE("malformed lcore list and core mask are rejected", "[eal]") {
  std::vector<std::string> out;
  EalReport rep;
  CHECK_FALSE(build_eal_args({"-l", "0-x"}, out, rep, true).ok());
  CHECK_FALSE(build_eal_args({"-l", "3-1"}, out, rep, true).ok());
  CHECK_FALSE(build_eal_args({"-c", "0xZZ"}, out, rep, true).ok());
  CHECK_FALSE(build_eal_args({"--lcores", "1@(0-9999)"}, out, rep, true).ok());
}

TEST_CASE("no EAL options -> one lcore, unique file prefix, AVX-512 CRC allowed", "[eal]") {
  std::vector<std::string> a, b;
  EalReport ra, rb;
  REQUIRE(build_eal_args({}, a, ra, true).ok());
  REQUIRE(build_eal_args({}, b, rb, true).ok());
  CHECK(contains(a, "-l"));
  CHECK(contains(a, "--force-max-simd-bitwidth=512"));
  CHECK(has_prefix(a, "--file-prefix=droce"));
  CHECK(ra.file_prefix != rb.file_prefix);  // two instances never collide
}

TEST_CASE("--no-huge given -> no file prefix conflict, --no-shconf added, user values kept", "[eal]") {
  std::vector<std::string> out;
  EalReport rep;
  REQUIRE(build_eal_args({"-l", "0", "--no-huge", "-m", "128"}, out, rep, true).ok());
  CHECK_FALSE(rep.hugepages);
  CHECK(contains(out, "--no-shconf"));
  CHECK(std::count(out.begin(), out.end(), "-m") == 1);
  CHECK_FALSE(contains(out, "--in-memory"));
}

TEST_CASE("user's own --file-prefix and --in-memory are respected", "[eal]") {
  std::vector<std::string> out;
  EalReport rep;
  REQUIRE(build_eal_args({"-l", "0", "--in-memory"}, out, rep, true).ok());
  CHECK_FALSE(has_prefix(out, "--file-prefix"));
  REQUIRE(build_eal_args({"-l", "0", "--file-prefix=mine"}, out, rep, true).ok());
  CHECK(rep.file_prefix == "mine");
  CHECK(std::count_if(out.begin(), out.end(), [](const std::string& s) { return s.rfind("--file-prefix", 0) == 0; }) ==
        1);
}

TEST_CASE("virtio_user with hugepages gets one file per memseg list (vhost-user's 8 regions)", "[eal]") {
  std::vector<std::string> out;
  EalReport rep;
  REQUIRE(build_eal_args({"-l", "0", "--vdev", "virtio_user0,path=/tmp/v.sock"}, out, rep, true).ok());
  if (rep.hugepages) {  // this machine has hugepages: one segment per list, memfd-backed, never unlinked files
    CHECK(contains(out, "--single-file-segments"));
    CHECK(contains(out, "--in-memory"));
    CHECK_FALSE(contains(out, "--huge-unlink"));  // EAL refuses it together with --single-file-segments
    CHECK_FALSE(has_prefix(out, "--file-prefix"));
  } else {
    CHECK_FALSE(contains(out, "--single-file-segments"));  // no hugepage files to share
  }
  REQUIRE(build_eal_args({"-l", "0", "--vdev=net_virtio_user1,path=/tmp/v.sock", "--legacy-mem"}, out, rep, true).ok());
  CHECK_FALSE(contains(out, "--single-file-segments"));  // the user chose another memory mode
  REQUIRE(build_eal_args({"-l", "0", "--no-huge", "--vdev", "virtio_user0,path=/tmp/v.sock"}, out, rep, true).ok());
  CHECK_FALSE(contains(out, "--single-file-segments"));
  REQUIRE(build_eal_args({"-l", "0", "--vdev", "net_vhost0,iface=/tmp/v.sock"}, out, rep, true).ok());
  CHECK_FALSE(contains(out, "--single-file-segments"));  // the vhost side maps the peer's memory
}

TEST_CASE("split_args separates EAL and application options at --", "[eal]") {
  const char* argv1[] = {"app", "-l", "0", "--", "--size", "64"};
  auto s = droce::engine::split_args(6, const_cast<char**>(argv1));
  CHECK(s.had_separator);
  CHECK(s.eal == std::vector<std::string>{"-l", "0"});
  CHECK(s.app == std::vector<std::string>{"--size", "64"});
  const char* argv2[] = {"app", "--size", "64"};
  auto t = droce::engine::split_args(3, const_cast<char**>(argv2));
  CHECK_FALSE(t.had_separator);
  CHECK(t.eal.empty());
  CHECK(t.app == std::vector<std::string>{"--size", "64"});
}

TEST_CASE("a second EAL initialisation is refused, not a crash", "[eal]") {
  droce::engine::Status err;
  auto again = droce::engine::Eal::init("again", {"-l", "0", "--no-huge"}, err, true);
  CHECK(again == nullptr);
  CHECK(err.message().find("already") != std::string::npos);
}

TEST_CASE("a net_memif vdev without bsize gets whole-frame buffers; one that names bsize keeps it", "[engine][eal]") {
  std::vector<std::string> out;
  EalReport rep;
  REQUIRE(build_eal_args({"--no-huge", "--vdev", "net_memif0,role=server,socket=/tmp/x.sock",
                          "--vdev=net_memif1,role=client", "--vdev", "net_memif2,bsize=2048", "--vdev", "net_ring0"},
                         out, rep, true)
              .ok());
  auto has = [&](const std::string& v) { return std::find(out.begin(), out.end(), v) != out.end(); };
  CHECK(has("net_memif0,role=server,socket=/tmp/x.sock,bsize=8192"));
  CHECK(has("--vdev=net_memif1,role=client,bsize=8192"));
  CHECK(has("net_memif2,bsize=2048"));
  CHECK(has("net_ring0"));
}
