// perftest's banner, line for line.
#include "apps/droce-perf/banner.h"

#include <cstdio>
#include <string>

#include "apps/droce-perf/report.h"

namespace droce::perf {

using engine::PerftestKeys;
using engine::PerftestTest;

namespace {

// perftest's banner titles (the "test" line of ctx_print_test_info: the verb, for atomics the
// atomic type, then "BW" or "Latency").
std::string title(const Options& o) {
  const std::string bw = o.duplex ? "Bidirectional BW Test" : "BW Test";
  switch (o.test) {
    case PerftestTest::kSendBw:
      return "Send " + bw;
    case PerftestTest::kWriteBw:
      return "RDMA_Write " + bw;
    case PerftestTest::kReadBw:
      return "RDMA_Read " + bw;
    case PerftestTest::kSendLat:
      return "Send Latency Test";
    case PerftestTest::kWriteLat:
      return "RDMA_Write Latency Test";
    case PerftestTest::kReadLat:
      return "RDMA_Read Latency Test";
    case PerftestTest::kAtomicBw:
      return std::string("Atomic ") + atomic_type_name(o.atomic) + " BW Test";
    case PerftestTest::kAtomicLat:
      return std::string("Atomic ") + atomic_type_name(o.atomic) + " Latency Test";
  }
  return "?";
}

// " local address: LID 0000 QPN 0x0011 PSN 0x6e9084[ OUT 0x80][ RKey 0x0009be VAddr 0x...]" and the
// GID in decimal, as perftest's ctx_print_pingpong_data prints them: OUT for READ, RKey and VAddr
// for WRITE and READ; SEND and ATOMIC print neither (its switch on the verb has no case for them).
void print_address(const char* side, const PerftestKeys& k, PerftestTest t) {
  std::printf(" %s address: LID %#04x QPN %#06x PSN %#06x", side, k.lid, k.qpn, k.psn);
  if (t == PerftestTest::kReadBw || t == PerftestTest::kReadLat) std::printf(" OUT %#04x", k.out_reads);
  if (t != PerftestTest::kSendBw && t != PerftestTest::kSendLat && !engine::perftest_is_atomic(t))
    std::printf(" RKey %#08x VAddr %#016llx", k.rkey, static_cast<unsigned long long>(k.vaddr));
  std::printf("\n GID: ");
  for (int i = 0; i < 16; ++i) std::printf("%02d%s", k.gid[i], i == 15 ? "\n" : ":");
}

}  // namespace

void print_banner(const Options& o, const BannerFacts& f, const std::vector<PerftestKeys>& mine,
                  const std::vector<PerftestKeys>& peer) {
  const bool server = o.server();
  std::printf("%s", kLine);
  std::printf("                    %s\n", title(o).c_str());
  std::printf(" Dual-port       : OFF\t\tDevice         : droce (%s)\n", f.device.c_str());
  std::printf(" Number of qps   : %u\t\tTransport type : IB\n", o.qps);
  std::printf(" Connection type : RC\t\tUsing SRQ      : OFF\n");
  if (!server || !o.bw() || o.duplex) std::printf(" TX depth        : %u\n", f.tx_depth);
  if ((server || o.duplex) && o.test == PerftestTest::kSendBw) std::printf(" RX depth        : %u\n", f.rx_depth);
  if (o.bw()) std::printf(" CQ Moderation   : %u\n", f.cq_mod);
  std::printf(" Mtu             : %u[B]\n", f.mtu);
  std::printf(" Link type       : Ethernet\n");
  std::printf(" GID index       : %d\n", o.gid_index < 0 ? 0 : o.gid_index);
  // READ and ATOMIC: the outstanding reads (ours, as advertised) in place of the inline size.
  if (engine::perftest_uses_out_reads(o.test))
    std::printf(" Outstand reads  : %u\n", o.out_reads);
  else
    std::printf(" Max inline data : %u[B]\n", o.inline_size);  // -I, shown only: droce has no inline distinction
  // -R: perftest's lines for its work_rdma_cm and use_rdma_cm (both set by -R).
  std::printf(" rdma_cm QPs\t : %s\n", o.rdma_cm ? "ON" : "OFF");
  std::printf(" Data ex. method : %s\n", o.rdma_cm ? "rdma_cm" : "Ethernet");
  std::printf("%s", kLine);
  for (const auto& k : mine) print_address("local", k, o.test);
  for (const auto& k : peer) print_address("remote", k, o.test);
  std::printf("%s", kLine);
  const bool lat_duration = !o.bw() && o.duration_s != 0;
  std::printf("%s\n", o.bw() ? bw_header(o.report_gbits).c_str() : lat_header(lat_duration).c_str());
  std::fflush(stdout);
}

}  // namespace droce::perf
