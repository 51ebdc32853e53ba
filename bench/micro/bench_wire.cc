// Google Benchmark: per-packet costs of the wire layer and the RC/DCQCN state machines.
#include <benchmark/benchmark.h>
#include <rte_eal.h>

#include <cstdlib>
#include <iterator>
#include <vector>

#include "protocols/dcqcn/reaction_point.h"
#include "protocols/wire/build.h"
#include "protocols/wire/icrc.h"
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
  // EAL (no hugepages, no devices) only so that DPDK's CRC may pick its SIMD path: without it
  // rte_net_crc stays on its table (ENVIRONMENT trap). EAL_SCALAR=1 measures the table path.
  const char* scalar = std::getenv("EAL_SCALAR");
  const char* bits = scalar != nullptr ? "--force-max-simd-bitwidth=64" : "--force-max-simd-bitwidth=512";
  const char* eal_argv[] = {
      "bench_wire",          "-l", "0", "--no-huge", "-m", "64", "--no-pci", "--no-telemetry", "--no-shconf",
      "--log-level=*:error", bits};
  if (rte_eal_init(static_cast<int>(std::size(eal_argv)), const_cast<char**>(eal_argv)) < 0) return 1;
  wire::icrc_init();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
