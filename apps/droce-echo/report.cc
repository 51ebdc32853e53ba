// droce-echo's client report (see report.h).
#include "apps/droce-echo/report.h"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "apps/common/capture_report.h"
#include "apps/common/counters_json.h"
#include "apps/common/output_file.h"

namespace droce::echo {

void report_capture(const Options& o, Setup& st) {
  if (o.pcap.empty()) return;
  st.capture.close();  // the workers' later frames, if any, are not captured
  std::printf("  %s\n", apps::capture_line(capture_options(o), st.capture).c_str());
}

int report(const Options& o, Setup& st, const Client& c) {
  const auto& h = c.hist;
  const std::uint64_t bad = c.bad();
  std::printf("droce-echo %s (%s thread): %llu round trips of %u bytes after %llu warm-up\n", o.mode.c_str(),
              o.thread.c_str(), static_cast<unsigned long long>(h.count()), o.size,
              static_cast<unsigned long long>(o.warmup));
  std::printf("  RTT ns: min %llu  p50 %llu  p90 %llu  p99 %llu  p99.9 %llu  max %llu\n",
              static_cast<unsigned long long>(h.min()), static_cast<unsigned long long>(h.percentile(0.5)),
              static_cast<unsigned long long>(h.percentile(0.9)), static_cast<unsigned long long>(h.percentile(0.99)),
              static_cast<unsigned long long>(h.percentile(0.999)), static_cast<unsigned long long>(h.max()));
  std::printf("  bad replies %llu, send errors %llu%s%s\n", static_cast<unsigned long long>(bad),
              static_cast<unsigned long long>(c.send_errors),
              c.first_send_error.empty() ? "" : (" (first: " + c.first_send_error + ")").c_str(),
              c.stalled ? ", STALLED (no reply within --timeout)" : "");
  if (!st.impairments.empty()) std::printf("  %s\n", st.impairments.line().c_str());
  // The endpoint's own view of the run: what it dropped and why, so a stall can be read.
  const engine::EndpointCounters ec = st.lab ? st.client_ep->counters() : st.group->endpoint_totals();
  nlohmann::json drops = nlohmann::json::object();
  for (std::size_t r = 0; r < wire::kDropReasonCount; ++r)
    if (ec.rx_drops[r] != 0)
      drops[std::string(wire::drop_reason_name(static_cast<wire::DropReason>(r)))] = ec.rx_drops[r];
  if (c.stalled || c.send_errors != 0)
    std::printf("  endpoint: rx frames %llu, linearised %llu, view drops %llu, tx alloc failures %llu, rx drops %s\n",
                static_cast<unsigned long long>(ec.rx_frames), static_cast<unsigned long long>(ec.rx_linearized),
                static_cast<unsigned long long>(ec.rx_view_drops),
                static_cast<unsigned long long>(ec.tx_alloc_failures), drops.dump().c_str());
  if (!o.json.empty()) {
    nlohmann::json j;
    j["endpoint"] = {{"rx_frames", ec.rx_frames},
                     {"rx_linearized", ec.rx_linearized},
                     {"rx_view_drops", ec.rx_view_drops},
                     {"tx_alloc_failures", ec.tx_alloc_failures},
                     {"rx_drops", drops},
                     {"arp_requests_answered", ec.arp_requests_answered},
                     // IPv6: solicitations answered (resolutions of our address) and ND frames
                     // ignored (others' targets, others' DAD probes, conflicts): the rxe lab's
                     // check that a guest's DAD probes are seen and not answered.
                     {"nd_solicitations_answered", ec.nd_solicitations_answered},
                     {"nd_ignored", ec.nd_ignored}};
    j["mode"] = o.mode;
    j["thread"] = o.thread;
    j["size"] = o.size;
    j["round_trips"] = h.count();
    j["rtt_ns"] = {{"min", h.min()},
                   {"p50", h.percentile(0.5)},
                   {"p90", h.percentile(0.9)},
                   {"p99", h.percentile(0.99)},
                   {"p999", h.percentile(0.999)},
                   {"max", h.max()}};
    j["qps"] = c.qps.size();
    j["bad_replies"] = bad;
    j["send_errors"] = c.send_errors;
    j["stalled"] = c.stalled;
    j["problem"] = c.problem;
    if (!o.pcap.empty()) {
      st.capture.close();
      j["capture"] = apps::capture_json(capture_options(o), st.capture);
    }
    if (!st.lab) {
      char mac[18];
      std::snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", st.peer_mac[0], st.peer_mac[1], st.peer_mac[2],
                    st.peer_mac[3], st.peer_mac[4], st.peer_mac[5]);
      j["remote"] = {{"mac", mac}, {"mac_from", !st.mac_by_arp ? "--peer-mac" : st.ip.ipv6 ? "nd" : "arp"}};
      j["addresses"] = {{"family", engine::family_name(st.ip)},
                        {"local_ip", engine::ip_text(st.ip)},
                        {"peer_ip", engine::ip_text(st.peer_ip)},
                        {"vlan", o.vlan_id},
                        {"pcp", o.vlan_pcp},
                        {"dscp", o.dscp}};
    }
    // Counters by their Linux names and the drop reasons of every endpoint here (loopback: both ends).
    std::vector<const engine::RcEndpoint*> eps;
    if (st.lab) {
      eps = {st.client_ep, st.server_ep};
    } else {
      for (std::uint16_t w = 0; w < st.group->size(); ++w) eps.push_back(&st.group->worker(w).endpoint());
    }
    const engine::CounterSums sums = apps::counter_sums(eps);
    j["hw_counters"] = apps::hw_counters_json(sums);
    j["drop_reasons"] = apps::drop_reasons_json(sums, st.impairments.tally().dropped());
    if (!st.impairments.empty()) j["impairment"] = st.impairments.json();
    apps::stamp_report(j);
    if (Status s = droce::apps::write_text_file(o.json, j.dump(2) + "\n"); !s.ok()) {
      std::fprintf(stderr, "droce-echo: %s\n", s.message().c_str());
      return 1;
    }
  }
  if (!c.problem.empty()) std::fprintf(stderr, "droce-echo: %s\n", c.problem.c_str());
  return bad == 0 && c.send_errors == 0 && !c.stalled && h.count() == o.count * c.qps.size() && c.problem.empty() ? 0
                                                                                                                  : 1;
}

}  // namespace droce::echo
