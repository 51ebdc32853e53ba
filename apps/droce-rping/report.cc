// droce-rping's report (see report.h).
#include "apps/droce-rping/report.h"

#include <droce/protocols/cm/cm_messages.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "apps/common/counters_json.h"
#include "apps/common/output_file.h"

namespace droce::rping {

namespace {

std::string mac_text(const std::uint8_t* m) {
  char b[20];
  std::snprintf(b, sizeof b, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
  return b;
}

}  // namespace

namespace {

// The run's recovery: the client's connection's; the server's, when all its connections agree
// (else "mixed"), "none" before any.
std::string recovery_of(const std::vector<Results>& conns) {
  if (conns.empty()) return "none";
  for (const Results& c : conns)
    if (c.recovery != conns.front().recovery) return "mixed";
  return recovery_name(conns.front().recovery);
}

}  // namespace

int report(const Options& o, const Setup& st, const std::vector<Results>& conns, std::uint64_t rejected,
           const engine::Status& failure) {
  Results r;  // the top-level fields: the first connection's (the only one, but for --clients N)
  if (!conns.empty()) r = conns.front();
  std::uint64_t pings = 0, verified = 0;
  bool each_ok = conns.size() == (o.server ? o.clients : o.connections);
  for (const Results& c : conns) {
    pings += c.pings;
    verified += c.verified;
    each_ok = each_ok && c.pings > 0 && c.verified == c.pings;
  }
  r.pings = pings;
  r.verified = verified;
  const bool ok = failure.ok() && each_ok;
  // The recovery's line only when it was asked for or there are several clients: a plain run
  // prints what rping's scripts expect, and nothing more.
  const bool several = (o.server ? o.clients : o.connections) > 1;
  const bool tell_each = o.recovery == rc::Recovery::kSelectiveRepeat || several;
  if (ok && !several)
    std::printf("droce-rping: %s: %llu pings of %u bytes verified with %s (%s, MAC from %s), QP %#x <-> %#x\n",
                o.role(), static_cast<unsigned long long>(r.verified), r.ping_size, engine::ip_text(r.peer_ip).c_str(),
                mac_text(r.peer_mac).c_str(), r.mac_from, r.qpn, r.established.params.remote_qpn);
  else if (ok && o.server)
    std::printf("droce-rping: server: %llu pings verified with %zu clients\n",
                static_cast<unsigned long long>(verified), conns.size());
  else if (ok)
    std::printf("droce-rping: client: %llu pings verified over %zu connections\n",
                static_cast<unsigned long long>(verified), conns.size());
  else
    std::fprintf(stderr, "droce-rping: %s\n", failure.ok() ? "no ping was verified" : failure.message().c_str());
  if (!st.impairments.empty()) std::printf("droce-rping: %s: %s\n", o.role(), st.impairments.line().c_str());
  if (tell_each)
    for (std::size_t i = 0; i < conns.size(); ++i) {
      const Results& c = conns[i];
      std::printf("droce-rping: %s: connection %zu: %s, %s, %llu pings verified, retransmitted packets: %llu\n",
                  o.role(), i + 1, engine::ip_text(c.peer_ip).c_str(), recovery_text(c.recovery),
                  static_cast<unsigned long long>(c.verified),
                  static_cast<unsigned long long>(c.retransmitted_packets));
    }
  if (!o.json.empty()) {
    const auto& p = r.established.params;
    nlohmann::json j;
    j["role"] = o.role();
    j["ok"] = ok;
    j["error"] = failure.ok() ? "" : failure.message();
    j["port"] = o.port;
    j["size"] = r.ping_size;
    j["count"] = o.count;
    j["pings"] = r.pings;
    j["verified"] = r.verified;
    j["local"] = {{"ip", engine::ip_text(st.ip)}, {"mac", mac_text(st.mac)}, {"qpn", r.qpn}};
    j["peer"] = {{"ip", engine::ip_text(r.peer_ip)},
                 {"mac", mac_text(r.peer_mac)},
                 {"mac_from", r.mac_from},
                 {"qpn", p.remote_qpn}};
    j["connection"] = {{"comm_id", r.conn},
                       {"established", r.connected},
                       {"disconnected", r.disconnected},
                       {"disconnected_by_peer", r.disconnected_by_peer},
                       {"reject_reason", r.reject_reason},
                       {"path_mtu", cm::mtu_bytes(p.path_mtu)},
                       {"send_psn", p.send_psn},
                       {"expected_psn", p.expected_psn},
                       {"max_rd_atomic", p.max_rd_atomic},
                       {"max_dest_rd_atomic", p.max_dest_rd_atomic},
                       {"retry_count", p.retry_count},
                       {"rnr_retry", p.rnr_retry}};
    j["cm"] = st.group ? apps::cm_counters_json(st.cm()) : nlohmann::json::object();
    j["recovery"] = recovery_of(conns);
    j["recovery_asked"] = recovery_name(o.recovery);
    j["sr_bdp_packets"] = o.sr_bdp_pkts;
    j["clients"] = o.server ? o.clients : 1u;
    j["connections_asked"] = o.server ? o.clients : o.connections;
    j["rejected_requests"] = rejected;
    nlohmann::json list = nlohmann::json::array();
    for (const Results& c : conns)
      list.push_back({{"peer_ip", engine::ip_text(c.peer_ip)},
                      {"peer_qpn", c.established.params.remote_qpn},
                      {"qpn", c.qpn},
                      {"worker", c.worker},
                      {"recovery", recovery_name(c.recovery)},
                      {"peer_offer", c.offer},
                      {"peer_sr_bdp_packets", c.peer_sr_bdp_pkts},
                      {"pings", c.pings},
                      {"pings_verified", c.verified},
                      {"disconnected", c.disconnected},
                      {"retransmitted_packets", c.retransmitted_packets},
                      {"sr_resent_on_sack", c.sr_resent_on_sack}});
    j["connections"] = list;
    // The endpoint's drops by reason, the lab loss's under injected_loss, and where it dropped.
    // Per worker: the steering stage's hand-overs and the CM's commands for its QPs (docs/workers.md).
    std::vector<const engine::RcEndpoint*> eps;
    nlohmann::json workers = nlohmann::json::array();
    for (std::uint16_t w = 0; st.group && w < st.group->size(); ++w) {
      const engine::Worker& wk = st.group->worker(w);
      eps.push_back(&wk.endpoint());
      const engine::SteeringCounters& sc = wk.steering();
      std::uint32_t qps = 0;
      for (const Results& c : conns) qps += c.worker == w ? 1 : 0;
      workers.push_back({{"worker", w},
                         {"connections", qps},
                         {"rx_steered_in_software", sc.rx_steered_in_software},
                         {"rx_steered_in", sc.rx_steered_in},
                         {"qp_commands_run", sc.qp_commands_run},
                         {"qp_commands_failed", sc.qp_commands_failed},
                         {"qp_commands_refused", sc.qp_commands_refused}});
    }
    j["workers"] = workers;
    j["drop_reasons"] = apps::drop_reasons_json(apps::counter_sums(eps), st.impairments.tally().dropped());
    if (!st.impairments.empty()) j["impairment"] = st.impairments.json();
    apps::stamp_report(j);
    if (Status s = apps::write_text_file(o.json, j.dump(2) + "\n"); !s.ok()) {
      std::fprintf(stderr, "droce-rping: %s\n", s.message().c_str());
      return 1;
    }
  }
  return ok ? 0 : 1;
}

}  // namespace droce::rping
