// crc32_continue: ISA-L's seeded CRC-32 when the build found it, else zlib's (crc32.h).
#include "protocols/wire/crc32.h"

#if DROCE_HAVE_ISAL
#include <isa-l/crc.h>
#else
#include <zlib.h>
#endif

namespace droce::wire {

#if DROCE_HAVE_ISAL
// crc32_gzip_refl takes and returns the CRC in zlib's convention (it inverts on entry and exit),
// and picks its SIMD kernel (PCLMULQDQ / VPCLMULQDQ) once per process by itself.
std::uint32_t crc32_continue(std::uint32_t crc, const std::uint8_t* p, std::uint32_t len) {
  return crc32_gzip_refl(crc, p, len);
}
const char* crc32_implementation() { return "isa-l"; }
#else
std::uint32_t crc32_continue(std::uint32_t crc, const std::uint8_t* p, std::uint32_t len) {
  return static_cast<std::uint32_t>(crc32(crc, p, len));
}
const char* crc32_implementation() { return "zlib"; }
#endif

}  // namespace droce::wire
