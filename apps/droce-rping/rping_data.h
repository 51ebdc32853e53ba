// What rping puts in its messages and buffers: the 16-byte buffer advertisement each SEND carries
// ({buf be64, rkey be32, size be32}, its struct rping_rdma_info) and the text a client fills its
// start buffer with before ping N ("rdma-ping-N: " then letters A..z, cycling, starting one letter
// further each ping; a NUL in the last byte), which the server reads and writes back.
#pragma once

#include <droce/engine/core/status.h>

#include <cstdint>
#include <string>

namespace droce::rping {

inline constexpr std::uint32_t kAdvertBytes = 16;

struct BufferAdvert {
  std::uint64_t addr = 0;
  std::uint32_t rkey = 0;
  std::uint32_t size = 0;
};

void write_advert(const BufferAdvert& a, std::uint8_t out[kAdvertBytes]);
[[nodiscard]] BufferAdvert read_advert(const std::uint8_t in[kAdvertBytes]);

// The server's checks of a client's advertisements before it uses their values (ok: usable, else
// kPeer and why not, in the reader's words). The start buffer's size is the length of the server's
// RDMA READ into its own buffer of `buf_bytes` bytes and of its check of the text there, so it
// must leave room there: 2 (one letter and the NUL) to buf_bytes - 1. The sink must hold the ping
// the server WRITEs back (the start buffer's size). Addresses and rkeys are the peer's own: its
// responder checks them.
[[nodiscard]] engine::Status check_start_advert(const BufferAdvert& start, std::uint32_t buf_bytes);
[[nodiscard]] engine::Status check_sink_advert(const BufferAdvert& sink, const BufferAdvert& start);

// Fills `size` bytes (at least 2) with ping `ping`'s text.
void fill_ping(std::uint64_t ping, std::uint8_t* buf, std::uint32_t size);
// The index of the first byte of `buf` that differs from ping `ping`'s text of `size` bytes, or
// `size` when all match.
[[nodiscard]] std::uint32_t check_ping(std::uint64_t ping, const std::uint8_t* buf, std::uint32_t size);

}  // namespace droce::rping
