// The recorded-traffic tests' capture reader: every frame of a file in tests/data/pcaps, in
// order, through libpcap. The including test is built with DROCE_TEST_DATA (the data folder).
#pragma once

#include <pcap/pcap.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <memory>
#include <string>

namespace droce::test {

// Calls `frame(data, caplen, n)` for each frame of tests/data/pcaps/`name`, n counting from 1, and
// returns how many there were. A capture is finite, so the loop ends; the file is closed even when
// a check inside `frame` stops the test.
template <typename Frame>
int for_each_pcap_frame(const std::string& name, Frame frame) {
  char err[PCAP_ERRBUF_SIZE] = {};
  const std::string path = std::string(DROCE_TEST_DATA) + "/pcaps/" + name;
  const std::unique_ptr<pcap_t, void (*)(pcap_t*)> p(pcap_open_offline(path.c_str(), err), pcap_close);
  INFO(path << ": " << err);
  REQUIRE(p != nullptr);
  pcap_pkthdr* h = nullptr;
  const u_char* data = nullptr;
  int n = 0;
  while (pcap_next_ex(p.get(), &h, &data) == 1) frame(data, static_cast<std::uint32_t>(h->caplen), ++n);
  return n;
}

}  // namespace droce::test
