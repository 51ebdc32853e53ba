// libFuzzer target: rping's 16-byte buffer advertisements (apps/droce-rping/rping_data.h) from a
// hostile client, and the server's checks of them. The input is the two advertisements of one
// ping (start, then sink: 32 bytes; a shorter input is zero-padded, as a zeroed receive slot
// would be). Properties: an advertisement writes back to its bytes; a start advertisement the
// server accepts has a size its own buffer holds (2..buffer-1), so its RDMA READ and the check of
// the ping text stay inside it (the check runs here on a buffer of exactly that size: ASan sees a
// read past it); a sink it accepts holds the ping.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "apps/droce-rping/rping_data.h"

using namespace droce::rping;

namespace {

// droce-rping's own buffer (Session::kBufBytes), and a small one so that the edges are reached.
constexpr std::uint32_t kServerBuf = 65536;
constexpr std::uint32_t kSmallBuf = 64;

void check_round_trip(const std::uint8_t* raw) {
  const BufferAdvert a = read_advert(raw);
  std::uint8_t again[kAdvertBytes];
  write_advert(a, again);
  if (std::memcmp(again, raw, kAdvertBytes) != 0) __builtin_trap();
}

void serve(const BufferAdvert& start, const BufferAdvert& sink, std::uint32_t buf_bytes, std::uint64_t ping) {
  const bool fits = start.size >= 2 && start.size <= buf_bytes - 1;
  if (check_start_advert(start, buf_bytes).ok() != fits) __builtin_trap();
  if (!fits) return;
  // What the server does with the size: READs that many bytes into its buffer and checks them.
  std::vector<std::uint8_t> sink_buf(start.size);
  fill_ping(ping, sink_buf.data(), start.size);
  if (check_ping(ping, sink_buf.data(), start.size) != start.size) __builtin_trap();
  if (check_sink_advert(sink, start).ok() && sink.size < start.size) __builtin_trap();
  if (!check_sink_advert(sink, start).ok() && sink.size >= start.size) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 64) return 0;
  std::uint8_t raw[2 * kAdvertBytes] = {};
  std::memcpy(raw, data, size < sizeof raw ? size : sizeof raw);
  check_round_trip(raw);
  check_round_trip(raw + kAdvertBytes);
  const BufferAdvert start = read_advert(raw), sink = read_advert(raw + kAdvertBytes);
  // The ping number from the rest of the input (any: rping's client counts up from 0).
  std::uint64_t ping = 0;
  for (std::size_t i = sizeof raw; i < size && i < sizeof raw + 8; ++i) ping = ping << 8 | data[i];
  serve(start, sink, kServerBuf, ping);
  serve(start, sink, kSmallBuf, ping);
  return 0;
}
