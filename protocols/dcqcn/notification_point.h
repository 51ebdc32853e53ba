// DCQCN notification point: the receiver's per-QP CNP generation on CE-marked packets (Annex A17.9).
#pragma once

#include <cstdint>

namespace droce::dcqcn {

struct NotificationPointCounters {
  std::uint64_t np_ecn_marked_roce_packets = 0;  // CE-marked RoCE packets received
  std::uint64_t np_cnp_sent = 0;
};

class DcqcnNotificationPoint {
 public:
  explicit DcqcnNotificationPoint(std::uint64_t min_time_between_cnps_ns = 50'000)
      : interval_ns_(min_time_between_cnps_ns) {}

  // Called for every RoCE packet of the QP; returns true when a CNP must be sent now: the
  // packet is CE-marked and no CNP went out for this QP in the last interval.
  [[nodiscard]] bool on_packet(bool ce_marked, std::uint64_t now_ns) {
    if (!ce_marked) return false;
    ++c_.np_ecn_marked_roce_packets;
    if (sent_once_ && now_ns - last_cnp_ns_ < interval_ns_) return false;
    sent_once_ = true;
    last_cnp_ns_ = now_ns;
    ++c_.np_cnp_sent;
    return true;
  }
  [[nodiscard]] const NotificationPointCounters& counters() const { return c_; }

 private:
  std::uint64_t interval_ns_;
  std::uint64_t last_cnp_ns_ = 0;
  bool sent_once_ = false;
  NotificationPointCounters c_;
};

}  // namespace droce::dcqcn
