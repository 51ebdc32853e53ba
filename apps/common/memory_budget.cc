// Reading MemAvailable and printing byte counts for the apps' memory checks.
#include "apps/common/memory_budget.h"

#include <unistd.h>

#include <cinttypes>
#include <cstdio>

namespace droce::apps {

std::uint64_t available_memory_bytes() {
  std::uint64_t kib = 0;
  if (std::FILE* f = std::fopen("/proc/meminfo", "r"); f != nullptr) {
    char line[256];
    while (std::fgets(line, sizeof line, f) != nullptr)
      if (std::sscanf(line, "MemAvailable: %" SCNu64 " kB", &kib) == 1) break;
    std::fclose(f);
  }
  if (kib != 0) return kib * 1024;
  // No MemAvailable (kernels before 3.14, no /proc): the physical memory, an upper bound.
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page) : 0;
}

std::string bytes_text(std::uint64_t bytes) {
  char text[32];
  if (bytes >= (1ull << 30))
    std::snprintf(text, sizeof text, "%.1f GiB", static_cast<double>(bytes) / (1ull << 30));
  else if (bytes >= (1ull << 20))
    std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / (1ull << 20));
  else
    std::snprintf(text, sizeof text, "%.1f KiB", static_cast<double>(bytes) / 1024);
  return text;
}

}  // namespace droce::apps
