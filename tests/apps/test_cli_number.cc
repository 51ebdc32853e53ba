// The apps' command-line number parser and output-path check: what is refused, what still parses.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "apps/common/cli_number.h"
#include "apps/common/output_file.h"
#include "apps/common/udp_sport_plan.h"
#include "protocols/dcqcn/param_options.h"

using namespace droce::apps;

TEST_CASE("real options: NaN, infinities, overflow and garbage are refused by name", "[cli]") {
  double v = 7;
  for (const char* text :
       {"nan", "-nan", "NAN", "inf", "-inf", "infinity", "1e400", "", " 1", "1 ", "1x", "0.5.5", "--1"}) {
    const std::string e = parse_real("--timeout", text, 0.1, 3600, v).message();
    CHECK(e.rfind("--timeout: ", 0) == 0);
    CHECK(v == 7);  // a refused value never lands in the field
  }
  CHECK(parse_real("--loss", "0.5", 0, 0.5, v).ok());
  CHECK(v == 0.5);
  CHECK_FALSE(parse_real("--loss", "0.5000001", 0, 0.5, v).ok());
  CHECK(parse_real("--rate", "1e3", 0, 1e9, v).ok());
  CHECK(v == 1000);
}

TEST_CASE("integer options: fractions, signs and wrap are refused; hex and exact reals parse", "[cli]") {
  std::uint64_t v = 7;
  for (const char* text : {"2.7", "1024.5", "-1", "+1", "-0", "nan", "inf", "1e30", "0x", "0xg", "", " 5", "5 ",
                           "18446744073709551616", "1e-3"})
    CHECK_FALSE(parse_uint("--qps", text, 0, UINT64_MAX, v).ok());
  CHECK(v == 7);
  CHECK(parse_uint("--seed", "18446744073709551615", 0, UINT64_MAX, v).ok());
  CHECK(v == UINT64_MAX);
  CHECK(parse_uint("--qpn", "0x11", 0, 0xFFFFFF, v).ok());
  CHECK(v == 0x11);
  CHECK(parse_uint("--count", "1e6", 0, UINT64_MAX, v).ok());
  CHECK(v == 1'000'000);
  CHECK(parse_uint("--mtu", "2048.0", 256, 4096, v).ok());
  CHECK(v == 2048);
  CHECK_FALSE(parse_uint("--qps", "65", 1, 64, v).ok());
  CHECK(parse_uint("--qps", "65", 1, 64, v).code() == droce::StatusCode::kInvalidArgument);
  CHECK_FALSE(parse_uint("--qps", "0", 1, 64, v).ok());
}

TEST_CASE("narrow fields: the field's own maximum bounds the value", "[cli]") {
  std::uint8_t b = 3;
  CHECK_FALSE(parse_uint("--qp-timeout", "256", 0, 1000, b).ok());
  CHECK(b == 3);
  CHECK(parse_uint("--qp-timeout", "255", 0, 1000, b).ok());
  CHECK(b == 255);
}

TEST_CASE("size suffixes: K and M multiply without overflow", "[cli]") {
  std::uint64_t v = 0;
  CHECK(parse_uint("-s", "64K", 1, 1u << 23, v, Suffixes::kKiloMega).ok());
  CHECK(v == 65536);
  CHECK(parse_uint("-s", "8M", 1, 1u << 23, v, Suffixes::kKiloMega).ok());
  CHECK(v == 1u << 23);
  CHECK_FALSE(parse_uint("-s", "9M", 1, 1u << 23, v, Suffixes::kKiloMega).ok());
  CHECK_FALSE(parse_uint("-s", "17592186044416M", 1, UINT64_MAX, v, Suffixes::kKiloMega).ok());
  CHECK_FALSE(parse_uint("-s", "1.5K", 1, UINT64_MAX, v, Suffixes::kKiloMega).ok());
  CHECK_FALSE(parse_uint("-s", "64K", 1, UINT64_MAX, v).ok());  // no suffixes unless allowed
}

TEST_CASE("sizes take binary K/M/G, rates and counts decimal ones", "[cli]") {
  std::uint64_t v = 0;
  CHECK(parse_uint("--size", "1G", 1, UINT64_MAX, v, Suffixes::kBinary).ok());
  CHECK(v == 1ull << 30);
  CHECK(parse_uint("--size", "2K", 1, UINT64_MAX, v, Suffixes::kBinary).ok());
  CHECK(v == 2048);
  CHECK(parse_uint("--count", "3M", 1, UINT64_MAX, v, Suffixes::kDecimal).ok());
  CHECK(v == 3'000'000);
  CHECK_FALSE(parse_uint("-s", "1G", 1, UINT64_MAX, v, Suffixes::kKiloMega).ok());    // perftest's: K and M only
  CHECK_FALSE(parse_uint("--size", "1k", 1, UINT64_MAX, v, Suffixes::kBinary).ok());  // upper case only
  CHECK_FALSE(parse_uint("--size", "K", 1, UINT64_MAX, v, Suffixes::kBinary).ok());
  CHECK_FALSE(parse_uint("--size", "20000000000G", 1, UINT64_MAX, v, Suffixes::kBinary).ok());  // no wrap
  double r = 0;
  CHECK(parse_real("--msg-rate", "2.5M", 1, 1e9, r, Suffixes::kDecimal).ok());
  CHECK(r == 2.5e6);
  CHECK(parse_real("--msg-rate", "1G", 1, 1e9, r, Suffixes::kDecimal).ok());
  CHECK(r == 1e9);
  CHECK_FALSE(parse_real("--msg-rate", "1.5G", 1, 1e9, r, Suffixes::kDecimal).ok());  // range after the factor
  CHECK_FALSE(parse_real("--msg-rate", "nanK", 1, 1e9, r, Suffixes::kDecimal).ok());
  CHECK_FALSE(parse_real("--msg-rate", "1M", 1, 1e9, r).ok());  // no suffixes unless allowed
}

TEST_CASE("messages stay one line: control bytes in a value are shown as '?', long values are cut", "[cli]") {
  std::uint64_t v = 0;
  const std::string e = parse_uint("--size", "64\nEAL: injected", 1, 100, v).message();
  CHECK(e.find('\n') == std::string::npos);
  CHECK(e.find("'64?EAL: injected'") != std::string::npos);
  CHECK(quoted(std::string(1000, 'x')).size() < 50);
}

namespace {

std::string temp_dir() {
  char dir[] = "/tmp/droce-cli-XXXXXX";
  REQUIRE(mkdtemp(dir) != nullptr);
  return dir;
}

std::string read_all(const std::string& path) {
  std::ifstream f(path);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

}  // namespace

TEST_CASE("output paths: checked without truncating an old file or leaving a new one", "[cli]") {
  const std::string dir = temp_dir();
  const std::string old_file = dir + "/old.json", new_file = dir + "/new.json";
  std::ofstream(old_file) << "previous run";
  CHECK(check_output_path("--json", old_file).ok());
  CHECK(read_all(old_file) == "previous run");
  CHECK(check_output_path("--json", new_file).ok());
  CHECK(access(new_file.c_str(), F_OK) != 0);
  CHECK(check_output_path("--json", dir).code() == droce::StatusCode::kIo);  // a directory
  CHECK(check_output_path("--json", dir).message().rfind("--json: cannot write", 0) == 0);
  CHECK(check_output_path("--json", dir + "/no/such/dir.json").message().rfind("--json: cannot write", 0) == 0);
  CHECK(check_output_path("--json", "").code() == droce::StatusCode::kInvalidArgument);
  CHECK(check_output_path("--json", "").message() == "--json: needs a file name");
  // A FIFO nobody reads: refused at once rather than blocking the parser.
  const std::string fifo = dir + "/fifo";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_FALSE(check_output_path("--json", fifo).ok());
  unlink(fifo.c_str());
  unlink(old_file.c_str());
  rmdir(dir.c_str());
}

TEST_CASE("output paths: processes checking one new path at once all pass (every rank parses --json)", "[cli]") {
  const std::string dir = temp_dir();
  const std::string path = dir + "/shared.json";
  std::atomic<int> refused{0};
  std::vector<std::thread> checkers;
  for (int t = 0; t < 8; ++t)
    checkers.emplace_back([&] {
      for (int round = 0; round < 300; ++round)
        if (!check_output_path("--json", path).ok()) refused.fetch_add(1);
    });
  for (auto& c : checkers) c.join();
  CHECK(refused.load() == 0);
  CHECK(access(path.c_str(), F_OK) != 0);
  rmdir(dir.c_str());
}

TEST_CASE("the final write reports a full disk instead of leaving a truncated file silently", "[cli]") {
  if (access("/dev/full", W_OK) != 0) {
    WARN("no /dev/full here: not checked");
    return;
  }
  const droce::Status s = write_text_file("/dev/full", std::string(100, 'x'));
  CHECK(s.code() == droce::StatusCode::kIo);
  CHECK(s.message().find("No space left on device") != std::string::npos);
}

TEST_CASE("DCQCN overrides: counts refuse fractions, every value refuses NaN and overflow", "[cli][dcqcn]") {
  using droce::dcqcn::DcqcnParams;
  DcqcnParams p = DcqcnParams::paper();
  const DcqcnParams before = p;
  CHECK_FALSE(droce::dcqcn::set_param(p, "fast-recovery-steps", "2.5").ok());
  CHECK_FALSE(droce::dcqcn::set_param(p, "byte-counter-bytes", "1e30").ok());
  CHECK_FALSE(droce::dcqcn::set_param(p, "rate-increase-us", "1e30").ok());
  CHECK_FALSE(droce::dcqcn::set_param(p, "g", "nan").ok());
  CHECK_FALSE(droce::dcqcn::set_param(p, "ai-mbps", "-1").ok());
  CHECK_FALSE(droce::dcqcn::set_param(p, "cnp-dscp", "64").ok());
  CHECK(droce::dcqcn::set_param(p, "nope", "1").code() == droce::StatusCode::kInvalidArgument);
  CHECK(p.byte_counter_bytes == before.byte_counter_bytes);
  CHECK(p.fast_recovery_steps == before.fast_recovery_steps);
  CHECK(droce::dcqcn::set_param(p, "fast-recovery-steps", "3").ok());
  CHECK(p.fast_recovery_steps == 3);
}

TEST_CASE("DCQCN validation names the options, not the struct fields", "[cli][dcqcn]") {
  auto p = droce::dcqcn::DcqcnParams::paper(10e9);
  REQUIRE(droce::dcqcn::set_param(p, "min-rate-mbps", "20000").ok());
  const auto option = [](std::string_view name) { return "--dcqcn-" + std::string(name); };
  CHECK(droce::dcqcn::validate_options(p, option, "--line-gbps").code() == droce::StatusCode::kInvalidArgument);
  CHECK(droce::dcqcn::validate_options(p, option, "--line-gbps").message() ==
        "--dcqcn-min-rate-mbps: must not exceed --line-gbps");
  REQUIRE(droce::dcqcn::set_param(p, "min-rate-mbps", "10").ok());
  REQUIRE(droce::dcqcn::set_param(p, "alpha-period-us", "0").ok());
  CHECK(droce::dcqcn::validate_options(p, option, "--line-gbps").message() == "--dcqcn-alpha-period-us: must be > 0");
}

TEST_CASE("--udp-sport: derived, BASE and BASE,STRIDE; 0, garbage and ports past 65535 refused by name", "[cli]") {
  UdpSportPlan p;
  REQUIRE(UdpSportPlan::parse("--udp-sport", "50000,2", p).ok());
  CHECK(p.port(0) == 50000);
  CHECK(p.port(3) == 50006);
  CHECK(p.describe() == "50000,2");
  CHECK(p.check("--udp-sport", 4).ok());
  REQUIRE(UdpSportPlan::parse("--udp-sport", "40000", p).ok());  // stride 1
  CHECK(p.port(1) == 40001);
  REQUIRE(UdpSportPlan::parse("--udp-sport", "40000,0", p).ok());  // one flow
  CHECK(p.port(7) == 40000);
  REQUIRE(UdpSportPlan::parse("--udp-sport", "derived", p).ok());
  CHECK(p.derived());
  CHECK(p.port(5) == 0);
  CHECK(p.check("--udp-sport", 1000000).ok());
  const Status zero = UdpSportPlan::parse("--udp-sport", "0", p);
  CHECK(zero.message().find("--udp-sport") != std::string::npos);
  CHECK_FALSE(UdpSportPlan::parse("--udp-sport", "65536", p).ok());
  CHECK_FALSE(UdpSportPlan::parse("--udp-sport", "4000,x", p).ok());
  CHECK_FALSE(UdpSportPlan::parse("--udp-sport", "", p).ok());
  REQUIRE(UdpSportPlan::parse("--udp-sport", "65534,1", p).ok());
  CHECK(p.check("--udp-sport", 2).ok());
  const Status past = p.check("--udp-sport", 3);
  CHECK(past.code() == droce::StatusCode::kInvalidArgument);
  CHECK(past.message().find("65536") != std::string::npos);
}

TEST_CASE("--mtu: an IB path MTU, and an Ethernet MTU refused with what to give instead", "[cli]") {
  std::uint32_t m = 0;
  REQUIRE(droce::apps::parse_ib_mtu("--mtu", "4096", m).ok());
  CHECK(m == 4096);
  for (const char* bad : {"9000", "1500", "1000", "0"}) {
    const droce::Status s = droce::apps::parse_ib_mtu("--mtu", bad, m);
    CHECK(s.code() == droce::StatusCode::kInvalidArgument);
    CHECK(s.message().rfind(std::string("--mtu: ") + bad + " is not an IB MTU", 0) == 0);
    CHECK(s.message().find("not the Ethernet MTU; an Ethernet MTU of 1500 carries 1024") != std::string::npos);
  }
  CHECK(m == 4096);  // untouched by the refusals
  CHECK(droce::apps::parse_ib_mtu("-m", "x", m).message().rfind("-m: ", 0) == 0);
}
