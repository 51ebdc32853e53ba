// EndpointCounters: what one RcEndpoint counts beyond its QPs' own RC counters — frames and
// payload bytes each way (and how much zero copy avoided), drops by reason, DCQCN's and PFC's
// events named like the Linux RDMA hw counters, the work per poll, and its ARP and Neighbor
// Discovery. Written by the endpoint's thread only; telemetry reads each as one aligned load.
#pragma once

#include <cstdint>

#include "protocols/wire/drop_reason.h"

namespace droce::engine {

// Per-endpoint transport counters beyond the per-QP RC counters.
struct EndpointCounters {
  std::uint64_t tx_frames = 0;
  std::uint64_t tx_zero_copy_frames = 0;      // payload attached, not copied
  std::uint64_t tx_payload_bytes_copied = 0;  // copies that zero copy could not avoid (no multi-seg, foreign memory)
  std::uint64_t tx_inline_frames = 0;         // payload at most tx_inline_bytes, copied on purpose
  std::uint64_t tx_payload_bytes_inlined = 0;
  std::uint64_t tx_payload_bytes = 0;
  std::uint64_t tx_alloc_failures = 0;  // pool empty: the turn stops, the packet stays queued in the QP (retried)
  std::uint64_t tx_build_failures = 0;  // a frame the pool's mbufs cannot hold: lost here, resent by go-back-N
  std::uint64_t tx_backlog_drops = 0;
  std::uint64_t rx_frames = 0;
  std::uint64_t rx_view_messages = 0;      // messages handed out as views (no copy)
  std::uint64_t rx_view_bytes = 0;         // payload bytes handed out in views
  std::uint64_t rx_view_bytes_copied = 0;  // view payload copied because the frame was not one segment
  std::uint64_t rx_view_drops = 0;         // view could not be built (pool empty): the QP is reset to error
  std::uint64_t rx_linearized = 0;         // multi-segment frames copied to parse them
  std::uint64_t rx_drops[wire::kDropReasonCount] = {};
  // DCQCN, named like the Linux RDMA hw counters (mlx5 ethtool / rdma statistic).
  std::uint64_t np_ecn_marked_roce_packets = 0;  // CE-marked RoCE packets received
  std::uint64_t np_cnp_sent = 0;
  std::uint64_t rp_cnp_handled = 0;   // CNPs that cut a QP's rate
  std::uint64_t rp_cnp_ignored = 0;   // CNPs inside the cut-monitor period, or for a QP without DCQCN
  std::uint64_t cnp_unknown_qp = 0;   // CNPs for a QPN we do not have (also in rx_drops unknown_qpn)
  std::uint64_t cnp_tx_failures = 0;  // a CNP could not be sent (pool empty, backlog full)
  std::uint64_t pacer_waits = 0;      // a QP had data but its DCQCN rate said wait
  // PFC honoured on transmit.
  std::uint64_t pfc_pause_frames = 0;       // PFC frames that paused (or extended a pause of) our priority
  std::uint64_t pfc_resume_frames = 0;      // XON: zero quanta for our priority
  std::uint64_t pfc_other_frames = 0;       // MAC Control frames not for our priority (or not PFC)
  std::uint64_t pfc_paused_ns = 0;          // time transmit was held by PFC
  std::uint64_t pfc_watchdog_trips = 0;     // held longer than EndpointPfc::watchdog_ms: pauses ignored since
  std::uint64_t pfc_watchdog_restores = 0;  // no pause for watchdog_ms while tripped: honoured again
  std::uint64_t pfc_watchdog_ignored = 0;   // pause frames for our priority not obeyed while tripped
  // Work per poll follows activity, not the number of QPs: transmit visits only QPs on the
  // ready list, and timers are kept on wheels. An idle connected QP adds to neither.
  std::uint64_t tx_qp_turns = 0;  // transmit turns given to QPs (one per ready QP visited)
  std::uint64_t timer_fires = 0;  // QP timers (ACK timeout, RNR wait) and DCQCN rate timers that came due
  // ARP (IPv4 endpoints; engine/endpoint/endpoint_neighbours.h). ARP frames are not counted in rx_drops.
  std::uint64_t arp_requests_answered = 0;   // requests for our IP that got a reply
  std::uint64_t arp_requests_learned = 0;    // requests for our IP that taught (or refreshed) the sender's MAC
  std::uint64_t arp_replies_learned = 0;     // replies that resolved (or refreshed) a neighbour
  std::uint64_t arp_malformed = 0;           // ARP ether type, but a packet parse_arp refuses
  std::uint64_t arp_ignored = 0;             // well-formed but not for us (other IPs, bad senders, unasked replies)
  std::uint64_t arp_requests_sent = 0;       // requests of our resolutions
  std::uint64_t arp_announcements_sent = 0;  // gratuitous ARPs
  std::uint64_t arp_resolve_failures = 0;    // resolutions that got no reply
  std::uint64_t arp_tx_failures = 0;         // an ARP frame could not be sent (pool empty, backlog full)
  // IPv6 Neighbor Discovery (IPv6 endpoints; engine/endpoint/endpoint_neighbours.h). NS and NA frames are
  // not counted in rx_drops; other ICMPv6 still is (not_udp).
  std::uint64_t nd_solicitations_answered = 0;  // NS for our address that got an NA
  std::uint64_t nd_solicitations_learned = 0;   // NS for our address that taught (or refreshed) the sender's MAC
  std::uint64_t nd_advertisements_learned = 0;  // NA that resolved (or refreshed) a neighbour
  std::uint64_t nd_malformed = 0;               // NS or NA that parse_nd refuses (RFC 4861 §7.1)
  std::uint64_t nd_ignored = 0;                 // valid but not for us (other targets, unasked NA, conflicts)
  std::uint64_t nd_solicitations_sent = 0;      // NS of our resolutions
  std::uint64_t nd_announcements_sent = 0;      // unsolicited NA
  std::uint64_t nd_resolve_failures = 0;        // resolutions that got no NA
  std::uint64_t nd_tx_failures = 0;             // an ND frame could not be sent (pool empty, backlog full)
};

}  // namespace droce::engine
