// The library's "droce" rte_log type: registered, and an embedder can route and silence it.
#include <catch2/catch.hpp>
#include <cstdio>
#include <string>

#include "engine/core/log.h"

using namespace droce::engine;

namespace {

// What DROCE_LOG wrote into a temporary stream while it was DPDK's log stream.
std::string logged_at(unsigned type_level) {
  std::FILE* f = std::tmpfile();
  REQUIRE(f != nullptr);
  FILE* before = rte_log_get_stream();
  REQUIRE(rte_openlog_stream(f) == 0);
  const int old_level = rte_log_get_level(log_type());
  REQUIRE(rte_log_set_level(log_type(), type_level) == 0);
  DROCE_LOG(WARNING, "test line %d", 42);
  (void)rte_log_set_level(log_type(), static_cast<std::uint32_t>(old_level));
  (void)rte_openlog_stream(before == stderr ? nullptr : before);
  std::fflush(f);
  std::rewind(f);
  char buf[256] = {};
  const std::size_t n = std::fread(buf, 1, sizeof(buf) - 1, f);
  std::fclose(f);
  return std::string(buf, n);
}

}  // namespace

TEST_CASE("log: droce's lines go through its own rte_log type, which an embedder can silence", "[log]") {
  REQUIRE(log_type() >= 0);
  CHECK(log_type() != RTE_LOGTYPE_EAL);  // registered, not the fallback
  CHECK(logged_at(RTE_LOG_INFO) == "droce: warning: test line 42\n");
  CHECK(logged_at(RTE_LOG_ERR).empty());
  CHECK(std::string(log_level_word(RTE_LOG_ERR)) == "error");
}
