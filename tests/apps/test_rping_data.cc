// droce-rping's view of rping's messages and data (apps/droce-rping/rping_data.h), against what
// rping itself prints and sends.
#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <vector>

#include "apps/droce-rping/rping_data.h"

using namespace droce::rping;

TEST_CASE("ping text: what rping -v prints for -S 64", "[apps][rping]") {
  std::vector<std::uint8_t> b(64, 0xEE);
  fill_ping(0, b.data(), 64);
  CHECK(std::string(reinterpret_cast<const char*>(b.data())) ==
        "rdma-ping-0: ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqr");
  CHECK(b[63] == 0);
  CHECK(check_ping(0, b.data(), 64) == 64);
  fill_ping(1, b.data(), 64);
  CHECK(std::string(reinterpret_cast<const char*>(b.data())) ==
        "rdma-ping-1: BCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrs");
  // The first letter cycles through the 58 of A..z: ping 58 starts at 'A' again.
  fill_ping(58, b.data(), 64);
  CHECK(std::string(reinterpret_cast<const char*>(b.data()), 16) == "rdma-ping-58: AB");
  fill_ping(57, b.data(), 64);
  CHECK(std::string(reinterpret_cast<const char*>(b.data()), 16) == "rdma-ping-57: zA");
}

TEST_CASE("ping text: a check names the first byte that differs", "[apps][rping]") {
  std::vector<std::uint8_t> b(5000);
  fill_ping(7, b.data(), 5000);
  CHECK(check_ping(7, b.data(), 5000) == 5000);
  CHECK(check_ping(8, b.data(), 5000) == 10);  // "rdma-ping-7" vs "rdma-ping-8"
  b[4000] ^= 1;
  CHECK(check_ping(7, b.data(), 5000) == 4000);
  b[4000] ^= 1;
  b[4999] = 'x';  // the NUL rping ends its text with
  CHECK(check_ping(7, b.data(), 5000) == 4999);
}

TEST_CASE("buffer advertisement: rping_rdma_info, big-endian", "[apps][rping]") {
  BufferAdvert a;
  a.addr = 0x0102030405060708ull;
  a.rkey = 0x11223344;
  a.size = 64;
  std::uint8_t w[kAdvertBytes];
  write_advert(a, w);
  const std::uint8_t want[kAdvertBytes] = {1, 2, 3, 4, 5, 6, 7, 8, 0x11, 0x22, 0x33, 0x44, 0, 0, 0, 64};
  CHECK(std::memcmp(w, want, kAdvertBytes) == 0);
  const BufferAdvert r = read_advert(w);
  CHECK(r.addr == a.addr);
  CHECK(r.rkey == a.rkey);
  CHECK(r.size == a.size);
}

TEST_CASE("advertisements: the server uses only sizes its buffer holds", "[apps][rping]") {
  constexpr std::uint32_t kBuf = 65536;
  CHECK(check_start_advert({0x1000, 7, 64}, kBuf).ok());
  CHECK(check_start_advert({0x1000, 7, 2}, kBuf).ok());
  CHECK(check_start_advert({0x1000, 7, kBuf - 1}, kBuf).ok());
  CHECK(check_start_advert({0x1000, 7, 1}, kBuf).message() ==
        "the client advertised 1 bytes (rping's buffers hold 2..65535)");
  CHECK(check_start_advert({0x1000, 7, 0}, kBuf).code() == droce::StatusCode::kPeer);
  CHECK(!check_start_advert({0x1000, 7, kBuf}, kBuf).ok());
  CHECK(!check_start_advert({0x1000, 7, 0xFFFFFFFF}, kBuf).ok());
  CHECK(check_sink_advert({0x2000, 8, 64}, {0x1000, 7, 64}).ok());
  CHECK(check_sink_advert({0x2000, 8, 63}, {0x1000, 7, 64}).message() ==
        "the client's sink holds 63 bytes, its ping 64");
}
