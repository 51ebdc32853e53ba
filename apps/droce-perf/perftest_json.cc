// perftest's JSON report, key for key.
#include "apps/droce-perf/perftest_json.h"

#include <cmath>
#include <nlohmann/json.hpp>

namespace droce::perf {

using engine::PerftestTest;

namespace {

// perftest prints its figures with %.2lf (%.6lf for the message rate and for a bandwidth below
// 0.1 Gb/s): the file holds those values.
double fixed(double v, int decimals) {
  const double scale = std::pow(10.0, decimals);
  return std::round(v * scale) / scale;
}

// testsStr[verb], then "_<atomic type>", "_Bidirectional", "_BW" or "_Latency", "_Test".
std::string test_name(const Options& o) {
  std::string verb;
  switch (o.test) {
    case PerftestTest::kSendBw:
    case PerftestTest::kSendLat:
      verb = "Send";
      break;
    case PerftestTest::kWriteBw:
    case PerftestTest::kWriteLat:
      verb = "RDMA_Write";
      break;
    case PerftestTest::kReadBw:
    case PerftestTest::kReadLat:
      verb = "RDMA_Read";
      break;
    case PerftestTest::kAtomicBw:
    case PerftestTest::kAtomicLat:
      verb = std::string("Atomic_") + atomic_type_name(o.atomic);
      break;
  }
  if (o.bw()) return verb + (o.duplex ? "_Bidirectional" : "") + "_BW_Test";
  return verb + "_Latency_Test";
}

}  // namespace

std::string perftest_json(const Options& o, const BannerFacts& f, const BwRow* bw, const LatRow* lat) {
  nlohmann::ordered_json info;
  info["test"] = test_name(o);
  info["Dual_port"] = "OFF";
  info["Device"] = "droce (" + f.device + ")";
  info["Number_of_qps"] = o.qps;
  info["Transport_type"] = "IB";
  info["Connection_type"] = "RC";
  info["Using_SRQ"] = "OFF";
  info["PCIe_relax_order"] = "Unsupported";
  info["ibv_wr_API"] = "ON";
  if (!o.server() || o.duplex) info["TX_depth"] = f.tx_depth;
  const bool send = o.test == PerftestTest::kSendBw || o.test == PerftestTest::kSendLat;
  if (send && (o.server() || o.duplex)) info["RX_depth"] = f.rx_depth;
  if (o.bw()) info["CQ_Moderation"] = f.cq_mod;
  info["Mtu"] = f.mtu;
  info["Link_type"] = "Ethernet";
  if (o.gid_index >= 0) info["GID_index"] = o.gid_index;  // perftest writes it when one was given
  if (engine::perftest_uses_out_reads(o.test))
    info["Outstand_reads"] = o.out_reads;
  else
    info["Max_inline_data"] = o.inline_size;
  info["rdma_cm_QPs"] = o.rdma_cm ? "ON" : "OFF";
  info["Use_ROCm_memory"] = "OFF";
  info["Use_MUSA_memory"] = "OFF";
  info["Data_ex_method"] = o.rdma_cm ? "rdma_cm" : "Ethernet";

  nlohmann::ordered_json results;
  if (bw != nullptr) {
    const int bw_decimals = o.report_gbits && bw->avg < 0.1 ? 6 : 2;  // perftest's inc_accuracy
    results["MsgSize"] = bw->size;
    results["n_iterations"] = bw->iters;
    results["BW_peak"] = fixed(bw->peak, bw_decimals);
    results["BW_average"] = fixed(bw->avg, bw_decimals);
    results["MsgRate"] = fixed(bw->msg_rate, 6);
  } else if (lat != nullptr && lat->duration) {
    results["MsgSize"] = lat->size;
    results["n_iterations"] = lat->iters;
    results["t_avg"] = fixed(lat->t_avg, 2);
    results["tps_average"] = fixed(lat->tps, 2);
  } else if (lat != nullptr) {
    results["MsgSize"] = lat->size;
    results["n_iterations"] = lat->iters;
    results["t_min"] = fixed(lat->t_min, 2);
    results["t_max"] = fixed(lat->t_max, 2);
    results["t_typical"] = fixed(lat->t_typical, 2);
    results["t_avg"] = fixed(lat->t_avg, 2);
    results["t_stdev"] = fixed(lat->t_stdev, 2);
    results["percentile_99"] = fixed(lat->p99, 2);
    results["percentile_99.9"] = fixed(lat->p999, 2);
  }
  nlohmann::ordered_json j;
  j["test_info"] = info;
  j["results"] = results;
  return j.dump(1) + "\n";
}

}  // namespace droce::perf
