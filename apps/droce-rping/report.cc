// droce-rping's report (see report.h).
#include "apps/droce-rping/report.h"

#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "apps/common/counters_json.h"
#include "apps/common/output_file.h"
#include <droce/protocols/cm/cm_messages.h>

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
    j["cm"] = st.ep ? apps::cm_counters_json(*st.ep) : nlohmann::json::object();
    apps::stamp_report(j);
    if (const std::string e = apps::write_text_file(o.json, j.dump(2) + "\n"); !e.empty()) {
      std::fprintf(stderr, "droce-rping: %s\n", e.c_str());
      return 1;
    }
  }
  return ok ? 0 : 1;
}

}  // namespace droce::rping
