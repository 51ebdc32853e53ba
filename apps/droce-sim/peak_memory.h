// The process's peak resident memory (VmHWM of /proc/self/status, Linux): what a run cost in
// memory, for the leaf-spine report's bytes per rank.
#pragma once

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

}  // namespace droce::sim
