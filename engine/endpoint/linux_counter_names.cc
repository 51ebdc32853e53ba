// The Linux names of droce's counters (see linux_counter_names.h). Meanings follow the drivers'
// descriptions of their hw_counters (mlx5: NVIDIA's "Understanding mlx5 Linux Counters"; rxe:
// the soft-RoCE driver's counter list), restated for droce.
#include "engine/endpoint/linux_counter_names.h"

#include "engine/endpoint/rc_endpoint.h"

namespace droce::engine {
namespace {

std::uint64_t load(const std::uint64_t& v) { return __atomic_load_n(&v, __ATOMIC_RELAXED); }

std::uint64_t rx_dropped(const CounterSums& s) {
  std::uint64_t n = 0;
  for (std::size_t r = 1; r < wire::kDropReasonCount; ++r) n += s.rx_drops[r];
  return n;
}

constexpr LinuxCounter kCounters[] = {
    // ---- the responder's (receive side) ----
    {"out_of_sequence", "mlx5", "out_of_sequence",
     "requests whose PSN was ahead of the expected PSN (a packet before them was lost); each gap is NAKed once", true,
     [](const CounterSums& s) { return s.qps.out_of_sequence; }},
    {"out_of_seq_request", "rxe", "out_of_sequence", "the same count under rxe's name", true,
     [](const CounterSums& s) { return s.qps.out_of_sequence; }},
    {"duplicate_request", "mlx5, rxe", "duplicate_request",
     "requests whose PSN was behind the expected PSN (already executed): re-acknowledged, READs and atomics replayed",
     true, [](const CounterSums& s) { return s.qps.duplicate_request; }},
    {"out_of_buffer", "mlx5", "rnr_naks_sent",
     "SENDs that found no receive WQE posted; droce answers each with an RNR NAK", true,
     [](const CounterSums& s) { return s.qps.rnr_naks_sent; }},
    {"send_rnr_err", "rxe", "rnr_naks_sent", "RNR NAKs sent (no receive WQE for a SEND)", true,
     [](const CounterSums& s) { return s.qps.rnr_naks_sent; }},
    {"resp_remote_access_errors", "mlx5", "resp_remote_access_errors",
     "requests refused with a remote access error NAK (R_Key, bounds or access rights)", true,
     [](const CounterSums& s) { return s.qps.resp_remote_access_errors; }},
    {"rx_atomic_requests", "mlx5", "atomics_executed + atomic_replays",
     "atomic requests received and answered (executed once, or replayed from the saved result); refused ones are "
     "in resp_remote_access_errors",
     true, [](const CounterSums& s) { return s.qps.atomics_executed + s.qps.atomic_replays; }},
    // ---- the requester's (send side) ----
    {"packet_seq_err", "mlx5", "packet_seq_err",
     "PSN sequence error NAKs received (the requester goes back and resends)", true,
     [](const CounterSums& s) { return s.qps.packet_seq_err; }},
    {"rcvd_seq_err", "rxe", "packet_seq_err", "the same count under rxe's name", true,
     [](const CounterSums& s) { return s.qps.packet_seq_err; }},
    {"local_ack_timeout_err", "mlx5", "local_ack_timeout_err",
     "expirations of the requester's ACK timer, the adaptive retransmission timeout's included (the IBTA Local ACK "
     "Timeout, 9.7.6.1.3, is the longest it waits): the requester resends",
     true, [](const CounterSums& s) { return s.qps.local_ack_timeout_err; }},
    {"roce_adp_retrans", "mlx5", "adaptive_timeouts + tail_probes",
     "adaptive retransmissions: expiries of the round-trip based timeout before the IBTA timeout, and tail-loss "
     "probes (neither spends retry_cnt)",
     true, [](const CounterSums& s) { return s.qps.adaptive_timeouts + s.qps.tail_probes; }},
    {"roce_adp_retrans_to", "mlx5", "adaptive_timeouts",
     "expiries of the adaptive retransmission timeout (each resends what is unacknowledged)", true,
     [](const CounterSums& s) { return s.qps.adaptive_timeouts; }},
    {"rnr_nak_retry_err", "mlx5", "rnr_naks_received",
     "RNR NAKs received (mlx5 counts each one, while RNR retries are left; droce's own rnr_nak_retry_err counts "
     "the exhausted ones, see retry_rnr_exceeded_err)",
     true, [](const CounterSums& s) { return s.qps.rnr_naks_received; }},
    {"rcvd_rnr_err", "rxe", "rnr_naks_received", "RNR NAKs received", true,
     [](const CounterSums& s) { return s.qps.rnr_naks_received; }},
    {"retry_rnr_exceeded_err", "rxe", "rnr_nak_retry_err",
     "RNR retries exhausted: the work request completes with an RNR retry error and the QP goes to Error", true,
     [](const CounterSums& s) { return s.qps.rnr_nak_retry_err; }},
    {"implied_nak_seq_err", "mlx5", "implied_nak_seq_err",
     "READ responses or acknowledgements whose PSN skipped ahead (an implied NAK, IBTA 9.7.5.2.4): the READ is "
     "asked again",
     true, [](const CounterSums& s) { return s.qps.implied_nak_seq_err; }},
    {"req_remote_access_errors", "mlx5", "req_remote_access_errors", "remote access error NAKs received", true,
     [](const CounterSums& s) { return s.qps.req_remote_access_errors; }},
    {"req_remote_invalid_request", "mlx5", "req_remote_invalid_request", "invalid request NAKs received", true,
     [](const CounterSums& s) { return s.qps.req_remote_invalid_request; }},
    {"sent_pkts", "rxe", "packets_sent", "request packets transmitted (retransmissions included)", true,
     [](const CounterSums& s) { return s.qps.packets_sent; }},
    // ---- the endpoint's (all its QPs) ----
    {"rcvd_pkts", "rxe", "rx_frames - rx_drops",
     "frames the endpoint received and accepted (the dropped ones are in the drop reasons)", false,
     [](const CounterSums& s) { return s.rx_frames >= rx_dropped(s) ? s.rx_frames - rx_dropped(s) : 0; }},
    {"np_ecn_marked_roce_packets", "mlx5", "np_ecn_marked_roce_packets",
     "RoCE packets received with ECN Congestion Experienced (DCQCN notification point)", false,
     [](const CounterSums& s) { return s.np_ecn_marked_roce_packets; }},
    {"np_cnp_sent", "mlx5", "np_cnp_sent", "CNPs sent for them (at most one per QP per interval)", false,
     [](const CounterSums& s) { return s.np_cnp_sent; }},
    {"rp_cnp_handled", "mlx5", "rp_cnp_handled", "CNPs received that cut a QP's rate (DCQCN reaction point)", false,
     [](const CounterSums& s) { return s.rp_cnp_handled; }},
    {"rp_cnp_ignored", "mlx5", "rp_cnp_ignored",
     "CNPs received and ignored (inside the rate-cut monitor period, or for a QP without DCQCN)", false,
     [](const CounterSums& s) { return s.rp_cnp_ignored; }},
};

constexpr UnmappedLinuxCounter kUnmapped[] = {
    {"rx_write_requests", "mlx5", "droce does not count received requests by operation"},
    {"rx_read_requests", "mlx5", "droce does not count received requests by operation"},
    {"rx_dct_connect", "mlx5", "no DC transport: droce is RC only"},
    {"resp_local_length_error", "mlx5",
     "length errors are NAKed as invalid requests, counted with the others (resp_invalid_request)"},
    {"req_cqe_error", "mlx5",
     "the engine does not count completions by status: each completion carries it to the application"},
    {"resp_cqe_error", "mlx5", "as req_cqe_error"},
    {"req_cqe_flush_error", "mlx5", "as req_cqe_error"},
    {"resp_cqe_flush_error", "mlx5", "as req_cqe_error"},
    {"roce_slow_restart", "mlx5", "no slow restart: DCQCN alone sets the rate"},
    {"roce_slow_restart_cnps", "mlx5", "as roce_slow_restart"},
    {"roce_slow_restart_trans", "mlx5", "as roce_slow_restart"},
    {"rx_icrc_encapsulated", "mlx5", "ICRC failures are a drop reason (drop_bad_icrc), not split by encapsulation"},
    {"retry_exceeded_err", "rxe",
     "transport retries exhausted show as completions with status 'transport retry counter exceeded', not counted"},
    {"completer_retry_err", "rxe", "droce counts retransmitted packets (retransmitted_packets), not retry rounds"},
    {"ack_deferred", "rxe", "an rxe scheduling detail; droce's poll loop has no deferred completer"},
    {"send_err", "rxe",
     "frames the TX path could not send are tx_build_failures and tx_backlog_drops (tx_alloc_failures: transmit turns "
     "an empty mbuf pool stopped, nothing lost)"},
    {"link_downed", "rxe", "the link is the DPDK port's: rte_eth_link_get"},
    {"rdma_sends", "rxe", "not counted by operation"},
    {"rdma_recvs", "rxe", "not counted by operation"},
};

constexpr RcCounterField kRcFields[] = {
    {"out_of_sequence", &rc::RcCounters::out_of_sequence},
    {"duplicate_request", &rc::RcCounters::duplicate_request},
    {"packet_seq_err", &rc::RcCounters::packet_seq_err},
    {"local_ack_timeout_err", &rc::RcCounters::local_ack_timeout_err},
    {"rnr_nak_retry_err", &rc::RcCounters::rnr_nak_retry_err},
    {"implied_nak_seq_err", &rc::RcCounters::implied_nak_seq_err},
    {"req_remote_access_errors", &rc::RcCounters::req_remote_access_errors},
    {"req_remote_invalid_request", &rc::RcCounters::req_remote_invalid_request},
    {"resp_remote_access_errors", &rc::RcCounters::resp_remote_access_errors},
    {"resp_wrong_domain", &rc::RcCounters::resp_wrong_domain},
    {"resp_invalid_request", &rc::RcCounters::resp_invalid_request},
    {"resp_invalidate_errors", &rc::RcCounters::resp_invalidate_errors},
    {"resp_remote_operational_errors", &rc::RcCounters::resp_remote_operational_errors},
    {"atomics_executed", &rc::RcCounters::atomics_executed},
    {"atomic_replays", &rc::RcCounters::atomic_replays},
    {"rnr_naks_sent", &rc::RcCounters::rnr_naks_sent},
    {"rnr_naks_received", &rc::RcCounters::rnr_naks_received},
    {"naks_sent", &rc::RcCounters::naks_sent},
    {"naks_received", &rc::RcCounters::naks_received},
    {"acks_sent", &rc::RcCounters::acks_sent},
    {"acks_coalesced", &rc::RcCounters::acks_coalesced},
    {"acks_received", &rc::RcCounters::acks_received},
    {"ghost_acks", &rc::RcCounters::ghost_acks},
    {"duplicate_responses", &rc::RcCounters::duplicate_responses},
    {"retransmitted_packets", &rc::RcCounters::retransmitted_packets},
    {"packets_sent", &rc::RcCounters::packets_sent},
    {"bytes_copied", &rc::RcCounters::bytes_copied},
    {"bytes_delivered", &rc::RcCounters::bytes_delivered},
    {"send_requests", &rc::RcCounters::send_requests},
    {"write_requests", &rc::RcCounters::write_requests},
    {"read_requests", &rc::RcCounters::read_requests},
    {"atomic_requests", &rc::RcCounters::atomic_requests},
    {"recovery_mismatch", &rc::RcCounters::recovery_mismatch},
    {"sr_beyond_window", &rc::RcCounters::sr_beyond_window},
    {"sr_resent_on_sack", &rc::RcCounters::sr_resent_on_sack},
    {"sr_reasked_responses", &rc::RcCounters::sr_reasked_responses},
    {"adaptive_timeouts", &rc::RcCounters::adaptive_timeouts},
    {"tail_probes", &rc::RcCounters::tail_probes},
    {"spurious_retransmits", &rc::RcCounters::spurious_retransmits},
    {"gb0_messages_discarded", &rc::RcCounters::gb0_messages_discarded},
};
// RcCounters is only 64-bit counters: a field added there must be added here too.
static_assert(sizeof(rc::RcCounters) == std::size(kRcFields) * sizeof(std::uint64_t),
              "every RcCounters field needs its entry in kRcFields");

}  // namespace

std::span<const LinuxCounter> linux_counters() { return kCounters; }
std::span<const UnmappedLinuxCounter> linux_counters_without_equivalent() { return kUnmapped; }
std::span<const RcCounterField> rc_counter_fields() { return kRcFields; }

void add_rc_counters(rc::RcCounters& sum, const rc::RcCounters& c) {
  for (const RcCounterField& f : kRcFields) sum.*f.member += load(c.*f.member);
}

void add_endpoint_counters(CounterSums& sum, const EndpointCounters& c) {
  sum.rx_frames += load(c.rx_frames);
  for (std::size_t r = 0; r < wire::kDropReasonCount; ++r) sum.rx_drops[r] += load(c.rx_drops[r]);
  sum.np_ecn_marked_roce_packets += load(c.np_ecn_marked_roce_packets);
  sum.np_cnp_sent += load(c.np_cnp_sent);
  sum.rp_cnp_handled += load(c.rp_cnp_handled);
  sum.rp_cnp_ignored += load(c.rp_cnp_ignored);
}

void add_endpoint_and_qps(CounterSums& sum, const RcEndpoint& ep) {
  add_endpoint_counters(sum, ep.counters());
  for (std::uint32_t i = 0; i < ep.config().transport.max_qps; ++i) {
    const rc::RcQp* q = ep.qp_at(i);
    if (q == nullptr) break;
    add_rc_counters(sum.qps, q->counters());
  }
}

}  // namespace droce::engine
