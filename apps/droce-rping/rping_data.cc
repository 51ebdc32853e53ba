// rping's advertisement and ping text (see rping_data.h).
#include "apps/droce-rping/rping_data.h"

#include <cstdio>

namespace droce::rping {

namespace {

constexpr std::uint8_t kFirstLetter = 'A';  // 65
constexpr std::uint8_t kLastLetter = 'z';   // 122: the cycle is A..z, punctuation between Z and a included
constexpr std::uint32_t kLetters = kLastLetter - kFirstLetter + 1;

// Byte i of ping `ping`'s text, given the length of its "rdma-ping-N: " prefix.
std::uint8_t letter(std::uint64_t ping, std::uint32_t prefix, std::uint32_t i) {
  // Ping 0 starts at 'A', each later ping one letter further (wrapping after 'z').
  const std::uint64_t start = ping % kLetters;
  return static_cast<std::uint8_t>(kFirstLetter + (start + (i - prefix)) % kLetters);
}

// rping formats the number as a C int.
std::uint32_t prefix_of(std::uint64_t ping, char* text, std::uint32_t room) {
  const int n = std::snprintf(text, room, "rdma-ping-%d: ", static_cast<int>(ping));
  return n < 0 ? 0 : static_cast<std::uint32_t>(n);
}

}  // namespace

void write_advert(const BufferAdvert& a, std::uint8_t out[kAdvertBytes]) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<std::uint8_t>(a.addr >> (56 - 8 * i));
  for (int i = 0; i < 4; ++i) out[8 + i] = static_cast<std::uint8_t>(a.rkey >> (24 - 8 * i));
  for (int i = 0; i < 4; ++i) out[12 + i] = static_cast<std::uint8_t>(a.size >> (24 - 8 * i));
}

BufferAdvert read_advert(const std::uint8_t in[kAdvertBytes]) {
  BufferAdvert a;
  for (int i = 0; i < 8; ++i) a.addr = a.addr << 8 | in[i];
  for (int i = 0; i < 4; ++i) a.rkey = a.rkey << 8 | in[8 + i];
  for (int i = 0; i < 4; ++i) a.size = a.size << 8 | in[12 + i];
  return a;
}

engine::Status check_start_advert(const BufferAdvert& start, std::uint32_t buf_bytes) {
  if (start.size < 2 || start.size >= buf_bytes)
    return engine::Status::error(engine::StatusCode::kPeer, "the client advertised " + std::to_string(start.size) +
                                                                " bytes (rping's buffers hold 2.." +
                                                                std::to_string(buf_bytes - 1) + ")");
  return {};
}

engine::Status check_sink_advert(const BufferAdvert& sink, const BufferAdvert& start) {
  if (sink.size < start.size)
    return engine::Status::error(engine::StatusCode::kPeer, "the client's sink holds " + std::to_string(sink.size) +
                                                                " bytes, its ping " + std::to_string(start.size));
  return {};
}

void fill_ping(std::uint64_t ping, std::uint8_t* buf, std::uint32_t size) {
  char text[40];
  std::uint32_t prefix = prefix_of(ping, text, sizeof text);
  if (prefix > size - 1) prefix = size - 1;  // rping's snprintf truncates at the buffer
  for (std::uint32_t i = 0; i < prefix; ++i) buf[i] = static_cast<std::uint8_t>(text[i]);
  for (std::uint32_t i = prefix; i < size - 1; ++i) buf[i] = letter(ping, prefix, i);
  buf[size - 1] = 0;
}

std::uint32_t check_ping(std::uint64_t ping, const std::uint8_t* buf, std::uint32_t size) {
  char text[40];
  std::uint32_t prefix = prefix_of(ping, text, sizeof text);
  if (prefix > size - 1) prefix = size - 1;
  for (std::uint32_t i = 0; i < size; ++i) {
    const std::uint8_t want = i == size - 1 ? 0
                              : i < prefix  ? static_cast<std::uint8_t>(text[i])
                                            : letter(ping, prefix, i);
    if (buf[i] != want) return i;
  }
  return size;
}

}  // namespace droce::rping
