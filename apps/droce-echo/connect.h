// droce-echo's connection (server/client): the rc_pingpong exchange once per QP over the control
// connection, and between droce-echo peers the count of QPs that follow the first; with --peer
// srq_pingpong that tool's exchange (srq_exchange.h).
#pragma once

#include <droce/engine/core/status.h>

#include <cstdint>

#include "apps/droce-echo/options.h"
#include "apps/droce-echo/setup.h"

namespace droce::echo {

// Opens the control connection (the server listens on --oob-port, the client connects) and
// connects our QPs to the peer's, QP i on worker i % N; on success st.own_qps holds them and
// worker 0's endpoint, memory and first QP are the server's or the client's. The caller decides
// whether a stop ends the exchange's TCP waits. The server waits for its client `for_client_ms`
// (engine::kWaitForever: without end), every other step --timeout.
[[nodiscard]] engine::Status connect_qps(const Options& o, Setup& st, std::uint32_t for_client_ms);

}  // namespace droce::echo
