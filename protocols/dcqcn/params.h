// DCQCN parameters (Zhu et al., SIGCOMM 2015; mlx5 firmware's roce_rp/roce_np knobs), units in every name.
#pragma once

#include <cstdint>
#include <string>

#include "protocols/common/status.h"

namespace droce::dcqcn {

struct DcqcnParams {
  // Reaction point (sender, per QP)
  double line_rate_bps = 40e9;                     // rate a QP starts at and never exceeds
  double min_rate_bps = 10e6;                      // Rmin: floor of any cut
  double g = 1.0 / 256;                            // α gain, (0, 1]
  double initial_alpha = 1.0;                      // α after reset, [0, 1]
  std::uint64_t alpha_update_period_ns = 55'000;   // α decays by (1-g) each period without a CNP
  std::uint64_t rate_increase_period_ns = 55'000;  // T: timer-driven increase events
  std::uint64_t byte_counter_bytes = 10'000'000;   // B: byte-counter-driven increase events
  std::uint32_t fast_recovery_steps = 5;           // F
  double ai_rate_bps = 40e6;                       // R_AI: additive increase step
  double hai_rate_bps = 200e6;                     // R_HAI: hyper increase step (times the stage index)
  // Cuts closer together than this are ignored (rp_cnp_ignored): mlx5's
  // rate_reduce_monitor_period. Never 0: a CNP carries no secret, so anyone who can send from the
  // peer's address could otherwise cut the rate once per CNP (docs/hardening.md, "CNP floods").
  std::uint64_t min_time_between_cuts_ns = 50'000;
  // Notification point (receiver, per QP)
  std::uint64_t np_min_time_between_cnps_ns = 50'000;  // at most one CNP per QP per interval
  // CNPs' DSCP on the wire (mlx5 default 48; priority 6 by the usual DSCP map)
  std::uint8_t cnp_dscp = 48;

  // The DCQCN paper's parameters for a 40 Gb/s fabric (§5, Table 1): g = 1/256, T = 55 µs,
  // B = 10 MB, F = 5, R_AI = 40 Mb/s, CNP interval 50 µs. R_HAI is not fixed by the paper's
  // table; 200 Mb/s (5 x R_AI) is our choice and is settable. Rates scale with the line rate.
  // The paper has no cut-monitor period; ours equals the CNP interval, as mlx5's defaults pair
  // them (4 µs and 4 µs): a flood of spoofed CNPs cuts no more often than an honest notification
  // point may ask.
  [[nodiscard]] static DcqcnParams paper(double line_rate_bps = 40e9);
  // ConnectX-5 firmware defaults as exposed in /sys/class/net/*/ecn/roce_rp and roce_np:
  // rpg_time_reset 300 µs, rpg_byte_reset 32767 B, rpg_threshold 1, rpg_ai_rate 5 Mb/s,
  // rpg_hai_rate 50 Mb/s, rpg_min_rate 1 Mb/s, dce_tcp_g 1019 (g = 5/1024),
  // dce_tcp_rtt 1 µs (α period), initial_alpha_value 1023 (α = 1), rate_reduce_monitor_period
  // 4 µs, min_time_between_cnps 4 µs, cnp_dscp 48.
  [[nodiscard]] static DcqcnParams mlx5(double line_rate_bps = 40e9);

  // Ok when valid; otherwise kInvalidArgument and one message naming the first bad parameter.
  [[nodiscard]] Status validate() const;
};

}  // namespace droce::dcqcn
