// CRC-32 (IEEE 802.3, reflected; zlib's crc32) with a seed: the one CRC the ICRC (IBTA A17.4.1) runs on.
#pragma once

#include <cstdint>

namespace droce::wire {

// The CRC of `len` bytes at `p` continuing `crc` (zlib's convention: crc32_continue(0, ...) is
// the CRC of the bytes alone, and crc32_continue(crc32_continue(0, a), b) the CRC of a then b).
// The one place that picks the implementation: ISA-L's crc32_gzip_refl where meson found
// libisal (the fastest at 64-200 B here: docs/benchmarks.md, bench_wire), else zlib's crc32. Both are
// seeded, pure and safe from any number of threads; DPDK's rte_net_crc is neither seeded nor,
// with its process-wide algorithm setting (and 25.x's new API), safe to switch per worker.
[[nodiscard]] std::uint32_t crc32_continue(std::uint32_t crc, const std::uint8_t* p, std::uint32_t len);

// "isa-l" or "zlib": which implementation crc32_continue runs (for reports and benchmarks).
[[nodiscard]] const char* crc32_implementation();

}  // namespace droce::wire
