// droce-rping's report (see report.h).
#include "apps/droce-rping/report.h"

#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "apps/common/counters_json.h"
#include "apps/common/output_file.h"
#include <droce/protocols/cm/mad.h>
#include <droce/protocols/wire/ud.h>

namespace droce::rping {

namespace {

std::string ip_text(const std::uint8_t* ip) {
  char b[20];
  std::snprintf(b, sizeof b, "%u.%u.%u.%u", ip[0], ip[1], ip[2], ip[3]);
  return b;
}

std::string mac_text(const std::uint8_t* m) {
  char b[20];
  std::snprintf(b, sizeof b, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
  return b;
}

nlohmann::json cm_json(const engine::CmCounters& c) {
  nlohmann::json ud = nlohmann::json::object(), mad = nlohmann::json::object();
  for (std::size_t i = 0; i < wire::kUdRefusalCount; ++i)
    ud[std::string(wire::ud_refusal_name(static_cast<wire::UdRefusal>(i)))] = c.ud_refused[i];
  for (std::size_t i = 0; i < cm::kMadRefusalCount; ++i)
    mad[std::string(cm::mad_refusal_name(static_cast<cm::MadRefusal>(i)))] = c.mad_refused[i];
  return {{"mads_received", c.mads_received},
          {"mads_sent", c.mads_sent},
          {"mad_tx_failures", c.mad_tx_failures},
          {"unknown_connection", c.unknown_connection},
          {"wrong_peer", c.wrong_peer},
          {"bad_rdma_cm_header", c.bad_rdma_cm_header},
          {"table_full", c.table_full},
          {"rejects_sent", c.rejects_sent},
          {"events_lost", c.events_lost},
          {"ud_refused", ud},
          {"mad_refused", mad}};
}

}  // namespace

int report(const Options& o, const Setup& st, const Results& r, const engine::Status& failure) {
  const bool ok = failure.ok() && r.verified == r.pings && r.pings > 0;
  if (ok)
    std::printf("droce-rping: %s: %llu pings of %u bytes verified with %s (%s, MAC from %s), QP %#x <-> %#x\n", o.role(),
                static_cast<unsigned long long>(r.verified), r.ping_size, ip_text(r.peer_ip).c_str(),
                mac_text(r.peer_mac).c_str(), r.mac_from, r.qpn, r.established.params.remote_qpn);
  else
    std::fprintf(stderr, "droce-rping: %s\n", failure.ok() ? "no ping was verified" : failure.message().c_str());
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
    j["local"] = {{"ip", ip_text(st.ip)}, {"mac", mac_text(st.mac)}, {"qpn", r.qpn}};
    j["peer"] = {{"ip", ip_text(r.peer_ip)}, {"mac", mac_text(r.peer_mac)}, {"mac_from", r.mac_from}, {"qpn", p.remote_qpn}};
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
    j["cm"] = st.ep ? cm_json(st.ep->cm_counters()) : nlohmann::json::object();
    apps::stamp_report(j);
    if (const std::string e = apps::write_text_file(o.json, j.dump(2) + "\n"); !e.empty()) {
      std::fprintf(stderr, "droce-rping: %s\n", e.c_str());
      return 1;
    }
  }
  return ok ? 0 : 1;
}

}  // namespace droce::rping
