// Writes one frame per RC opcode (IPv4, IPv6, VLAN; several payload sizes) built by droce's
// builders into a pcap, so an independent implementation (Scapy) can check our ICRCs.
#include <pcap/pcap.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "protocols/wire/build.h"

using namespace droce::wire;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT.pcap\n", argv[0]);
    return 2;
  }
  pcap_t* dead = pcap_open_dead(DLT_EN10MB, 65535);
  pcap_dumper_t* d = pcap_dump_open(dead, argv[1]);
  if (d == nullptr) {
    std::fprintf(stderr, "cannot write %s: %s\n", argv[1], pcap_geterr(dead));
    return 1;
  }
  int n = 0;
  std::vector<std::uint8_t> payload(4096);
  for (std::size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<std::uint8_t>(i * 13 + 7);
  std::vector<std::uint8_t> out(9000);
  for (bool ipv6 : {false, true}) {
    for (bool vlan : {false, true}) {
      TemplateConfig c;
      c.ipv6 = ipv6;
      c.vlan = vlan;
      c.vlan_id = 42;
      c.local.mac[0] = 0x02;
      c.remote.mac[0] = 0x52;
      c.local.ip[0] = 10;
      c.local.ip[3] = 3;
      c.remote.ip[0] = 10;
      c.remote.ip[3] = 1;
      if (ipv6) c.local.ip[15] = c.remote.ip[15] = 9;
      c.dest_qpn = 0x11;
      c.udp_src_port = roce_udp_src_port(0x11, 0x22);
      const auto t = HeaderTemplate::make(c);
      for (int opc = 0; opc < 256; ++opc) {
        const auto& op = opcode_info(static_cast<std::uint8_t>(opc));
        if (!op.valid()) continue;
        for (std::uint32_t len : {0u, 5u, 64u, 1024u, 4096u}) {
          if (!op.has_payload && len != 0) continue;
          PacketFields f;
          f.opcode = static_cast<std::uint8_t>(opc);
          f.psn = 0xFFFFF0u + static_cast<std::uint32_t>(n % 32);
          f.ack_req = (n & 1) != 0;
          f.payload_len = len;
          f.reth_va = 0x7f0000001000ull;
          f.reth_rkey = 0x1234;
          f.reth_len = len;
          f.aeth_syndrome = 0x1F;
          f.aeth_msn = static_cast<std::uint32_t>(n);
          f.imm = 0xA5A5A5A5;
          f.becn = opc == 0x81;
          const auto sz = build_frame(t, f, payload.data(), out.data(), static_cast<std::uint32_t>(out.size()));
          if (sz == 0) return std::fprintf(stderr, "build failed for opcode %d len %u\n", opc, len), 1;
          pcap_pkthdr h{};
          h.caplen = h.len = sz;
          pcap_dump(reinterpret_cast<u_char*>(d), &h, out.data());
          ++n;
        }
      }
    }
  }
  pcap_dump_close(d);
  pcap_close(dead);
  std::printf("wrote %d frames to %s\n", n, argv[1]);
  return 0;
}
