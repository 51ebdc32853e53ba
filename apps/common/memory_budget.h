// A run's memory, named before anything is allocated: what the host can give (MemAvailable) and
// the figure a refusal prints, so a request that cannot fit fails at parse time, not mid-setup.
#pragma once

#include <cstdint>
#include <string>

namespace droce::apps {

// MemAvailable of /proc/meminfo in bytes (the kernel's estimate of what can be allocated without
// swapping, proc(5)); without it the physical memory (sysconf); 0 when neither can be read.
[[nodiscard]] std::uint64_t available_memory_bytes();
// Bytes as a user reads them: "0.5 KiB", "64.0 MiB", "16384.0 GiB" (KiB, MiB or GiB, one decimal).
[[nodiscard]] std::string bytes_text(std::uint64_t bytes);

}  // namespace droce::apps
