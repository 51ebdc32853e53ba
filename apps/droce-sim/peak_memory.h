// What a run cost the process: its peak resident memory (VmHWM of /proc/self/status, Linux), for
// the leaf-spine report's bytes per rank, and its CPU time (on a shared machine the wall time
// measures the neighbours too; events per CPU second measure the simulator).
#pragma once

#include <sys/resource.h>

#include <cstdint>
#include <cstdio>
#include <cstring>

namespace droce::sim {

// Peak RSS in bytes; 0 when /proc/self/status cannot be read.
[[nodiscard]] inline std::uint64_t peak_rss_bytes() {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return 0;
  char line[256];
  unsigned long long kb = 0;
  while (std::fgets(line, sizeof line, f) != nullptr)
    if (std::strncmp(line, "VmHWM:", 6) == 0 && std::sscanf(line + 6, "%llu", &kb) == 1) break;
  std::fclose(f);
  return kb * 1024;
}

// User and system CPU seconds the process has used.
[[nodiscard]] inline double cpu_seconds() {
  rusage u{};
  if (getrusage(RUSAGE_SELF, &u) != 0) return 0;
  auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
  return s(u.ru_utime) + s(u.ru_stime);
}

}  // namespace droce::sim
