// droce-echo's connection with --peer srq_pingpong: the shared receive queue, its QPs, and
// ibv_srq_pingpong's exchange over the control connection.
#pragma once

#include <droce/engine/core/psn_source.h>
#include <droce/engine/core/status.h>
#include <droce/engine/exchange/oob_exchange.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "apps/common/peer_mac.h"
#include "apps/droce-echo/options.h"
#include "apps/droce-echo/setup.h"

namespace droce::echo {

// ibv_srq_pingpong sends a fixed table of 256 destinations each way (its MAX_QP), whatever its
// -q: entry i is QP i's rc_pingpong message ("LID:QPN:PSN:GID" + NUL, 52 bytes), the entries past
// its QPs zero (QPN 000000). The client sends first and ends with "done"; the server connects its
// QPs between reading the client's table and answering with its own.
inline constexpr std::size_t kSrqPingpongEntries = 256;

// Our table: `local` first, zero entries after it.
[[nodiscard]] std::vector<std::uint8_t> format_srq_table(const std::vector<engine::ConnInfo>& local);
// The peer's table: its leading entries with a QPN, which must be all of them (an entry with a
// QPN after a zero one is refused); at least one, at most `max_qps`.
[[nodiscard]] engine::Status parse_srq_table(const std::vector<std::uint8_t>& table, std::uint32_t max_qps,
                                             std::vector<engine::ConnInfo>& peer);

// Server/client with --peer srq_pingpong, once the control connection is open (the server has
// accepted): one SRQ (--rx-depth receives) on worker 0's endpoint, the QPs attached to it (the
// client's --qps; the server as many as the client's table names) and connected to the peer's,
// in table order. On success st.own_qps holds them and st.srq_id the SRQ.
// Both tables, our SRQ and QPs, each QP connected to the peer's of the same index; the peer's MAC
// through `peer_mac` (given or ARP), `poll` run while we wait for the peer's bytes.
[[nodiscard]] engine::Status connect_srq_qps(const Options& o, Setup& st, engine::PsnSource& psns,
                                             apps::PeerMac& peer_mac, const std::function<void()>& poll);

}  // namespace droce::echo
