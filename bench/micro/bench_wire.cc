// Google Benchmark: per-packet costs of the wire layer and the RC/DCQCN state machines.
#include <benchmark/benchmark.h>
#include <rte_eal.h>
#include <rte_net_crc.h>
#include <zlib.h>
#if DROCE_HAVE_ISAL
#include <isa-l/crc.h>
#endif

#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <vector>

#include "protocols/dcqcn/reaction_point.h"
#include "protocols/wire/build.h"
#include "protocols/wire/crc32.h"
#include "protocols/wire/icrc.h"
#include "protocols/wire/icrc_template.h"
#include "protocols/wire/parse.h"

using namespace droce;

namespace {

std::vector<std::uint8_t> frame(std::uint32_t payload_len) {
  wire::TemplateConfig c;
  c.dest_qpn = 0x11;
  const auto t = wire::HeaderTemplate::make(c);
  wire::PacketFields f;
  f.opcode = static_cast<std::uint8_t>(wire::Opcode::kSendOnly);
  f.payload_len = payload_len;
  std::vector<std::uint8_t> payload(payload_len, 0xAB), out(payload_len + wire::kMaxHeaderBytes + 8);
  out.resize(wire::build_frame(t, f, payload.data(), out.data(), static_cast<std::uint32_t>(out.size())));
  return out;
}

void BM_ParseFrame(benchmark::State& st) {
  const auto f = frame(static_cast<std::uint32_t>(st.range(0)));
  wire::ParseOptions opt;
  opt.verify_icrc = st.range(1) != 0;
  wire::PacketInfo pi;
  for (auto _ : st) {
    benchmark::DoNotOptimize(wire::parse_frame(f.data(), static_cast<std::uint32_t>(f.size()), pi, opt));
  }
  st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations() * f.size()));
}
BENCHMARK(BM_ParseFrame)->ArgsProduct({{64, 1024, 4096}, {0, 1}});

void BM_IcrcContiguous(benchmark::State& st) {
  const auto f = frame(static_cast<std::uint32_t>(st.range(0)));
  for (auto _ : st)
    benchmark::DoNotOptimize(wire::icrc_compute(f.data() + 14, static_cast<std::uint32_t>(f.size() - 18), false));
  st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations() * f.size()));
}
BENCHMARK(BM_IcrcContiguous)->Arg(64)->Arg(1024)->Arg(4096);

void BM_IcrcSplit(benchmark::State& st) {
  const auto len = static_cast<std::uint32_t>(st.range(0));
  const auto f = frame(len);
  std::vector<std::uint8_t> payload(len, 0xAB);
  for (auto _ : st)
    benchmark::DoNotOptimize(
        wire::icrc_compute_split(f.data() + 14, 40, false, payload.data(), len, wire::pad_for(len)));
  st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations() * len));
}
BENCHMARK(BM_IcrcSplit)->Arg(64)->Arg(1024)->Arg(4096);

// The CRC-32 candidates for the ICRC at the sizes a small message's ICRC covers (64-200 B): DPDK's
// rte_net_crc (unseeded; its SIMD path picked by rte_net_crc_set_alg, process-wide), zlib's and
// ISA-L's seeded crc32; and crc32_continue, the one the ICRC uses (crc32.h).
std::vector<std::uint8_t> crc_input(std::int64_t n) {
  std::vector<std::uint8_t> b(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<std::uint8_t>(i * 131 + 7);
  return b;
}
void BM_Crc32Dpdk(benchmark::State& st) {
  const auto b = crc_input(st.range(0));
  for (auto _ : st)
    benchmark::DoNotOptimize(rte_net_crc_calc(b.data(), static_cast<std::uint32_t>(b.size()), RTE_NET_CRC32_ETH));
  st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations()) * st.range(0));
}
void BM_Crc32Zlib(benchmark::State& st) {
  const auto b = crc_input(st.range(0));
  for (auto _ : st) benchmark::DoNotOptimize(crc32(0, b.data(), static_cast<uInt>(b.size())));
  st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations()) * st.range(0));
}
#if DROCE_HAVE_ISAL
void BM_Crc32Isal(benchmark::State& st) {
  const auto b = crc_input(st.range(0));
  for (auto _ : st) benchmark::DoNotOptimize(crc32_gzip_refl(0, b.data(), b.size()));
  st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations()) * st.range(0));
}
BENCHMARK(BM_Crc32Isal)->Arg(64)->Arg(100)->Arg(112)->Arg(128)->Arg(160)->Arg(200);
#endif
void BM_Crc32Continue(benchmark::State& st) {
  const auto b = crc_input(st.range(0));
  for (auto _ : st) benchmark::DoNotOptimize(wire::crc32_continue(0, b.data(), static_cast<std::uint32_t>(b.size())));
  st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations()) * st.range(0));
}
BENCHMARK(BM_Crc32Dpdk)->Arg(64)->Arg(100)->Arg(112)->Arg(128)->Arg(160)->Arg(200);
BENCHMARK(BM_Crc32Zlib)->Arg(64)->Arg(100)->Arg(112)->Arg(128)->Arg(160)->Arg(200);
BENCHMARK(BM_Crc32Continue)->Arg(64)->Arg(100)->Arg(112)->Arg(128)->Arg(160)->Arg(200);

// A received frame's ICRC: the full CRC in place (the receive path before the template) against
// the QP template's (icrc_template.h), at payloads of 64..4096 B.
void BM_IcrcInPlace(benchmark::State& st) {
  auto f = frame(static_cast<std::uint32_t>(st.range(0)));
  const auto n = static_cast<std::uint32_t>(f.size() - 18);
  for (auto _ : st) benchmark::DoNotOptimize(wire::icrc_compute_in_place(f.data() + 14, n, false));
  st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations() * f.size()));
}
BENCHMARK(BM_IcrcInPlace)->Arg(64)->Arg(160)->Arg(1024)->Arg(4096);
void BM_IcrcTemplate(benchmark::State& st) {
  const auto f = frame(static_cast<std::uint32_t>(st.range(0)));
  const auto n = static_cast<std::uint32_t>(f.size() - 18);
  wire::IcrcTemplate t;
  t.learn(f.data() + 14, false);
  for (auto _ : st) benchmark::DoNotOptimize(wire::icrc_by_template(t, f.data() + 14, n, false));
  st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations() * f.size()));
}
BENCHMARK(BM_IcrcTemplate)->Arg(64)->Arg(160)->Arg(1024)->Arg(4096);

void BM_WriteHeaders(benchmark::State& st) {
  wire::TemplateConfig c;
  const auto t = wire::HeaderTemplate::make(c);
  wire::PacketFields f;
  f.opcode = static_cast<std::uint8_t>(wire::Opcode::kWriteFirst);
  f.payload_len = 1024;
  std::uint8_t out[wire::kMaxHeaderBytes];
  for (auto _ : st) {
    ++f.psn;
    benchmark::DoNotOptimize(wire::write_headers(t, f, out));
  }
}
BENCHMARK(BM_WriteHeaders);

void BM_DcqcnPerPacket(benchmark::State& st) {
  dcqcn::DcqcnReactionPoint rp(dcqcn::DcqcnParams::paper(), 0);
  std::uint64_t now = 0;
  for (auto _ : st) {
    now += 250;  // 1 KB at 32 Gb/s
    rp.on_bytes_sent(1024, now);
    benchmark::DoNotOptimize(rp.rate_bps());
  }
}
BENCHMARK(BM_DcqcnPerPacket);

}  // namespace

int main(int argc, char** argv) {
  // EAL (no hugepages, no devices) only so that DPDK's CRC (BM_Crc32Dpdk, the comparison) may
  // pick its SIMD path: without it rte_net_crc stays on its table (ENVIRONMENT trap).
  // EAL_SCALAR=1 measures the table path.
  const char* scalar = std::getenv("EAL_SCALAR");
  const char* bits = scalar != nullptr ? "--force-max-simd-bitwidth=64" : "--force-max-simd-bitwidth=512";
  const char* eal_argv[] = {
      "bench_wire",          "-l", "0", "--no-huge", "-m", "64", "--no-pci", "--no-telemetry", "--no-shconf",
      "--log-level=*:error", bits};
  if (rte_eal_init(static_cast<int>(std::size(eal_argv)), const_cast<char**>(eal_argv)) < 0) return 1;
  rte_net_crc_set_alg(RTE_NET_CRC_AVX512);  // falls back to SSE4.2 / scalar as EAL allows
  std::printf("# crc32_continue runs %s\n", wire::crc32_implementation());
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
