// droce-echo's client side: the request/reply state machine shared by both thread modes.
#pragma once

#include <droce/engine/endpoint/rc_endpoint.h>
#include <rte_cycles.h>

#include <atomic>
#include <cstdint>

#include "apps/common/latency_histogram.h"
#include "apps/droce-echo/options.h"

namespace droce::echo {

inline std::uint8_t pat(std::uint64_t seq, std::uint32_t i) { return static_cast<std::uint8_t>(seq * 31 + i); }

// The client's state machine, the same in both thread modes: the transport calls differ only in
// whether they go to the endpoint directly or through the channel.
struct ClientState {
  std::uint64_t seq = 0, done = 0, bad = 0;
  bool waiting = false;
  std::uint64_t t0 = 0;
  engine::LatencyHistogram* hist = nullptr;  // shared by every QP of the client
  std::atomic<std::uint64_t> progress{0};    // `done`, published for the worker's stall watch
};

template <typename Send, typename Receive, typename Release>
void client_step(ClientState& s, const Options& o, std::uint8_t* buf, double ns_per_tsc, Send send, Receive receive,
                 Release release) {
  if (!s.waiting && s.done < o.warmup + o.count) {
    for (std::uint32_t i = 0; i < o.size; ++i) buf[i] = pat(s.seq, i);
    s.t0 = rte_rdtsc();
    if (send(static_cast<std::uint32_t>(s.seq))) s.waiting = true;
  }
  engine::MessageView v;
  if (s.waiting && receive(v)) {
    const std::uint64_t rtt = static_cast<std::uint64_t>(static_cast<double>(rte_rdtsc() - s.t0) * ns_per_tsc);
    // ibv_rc_pingpong echoes plain SENDs; droce-echo returns the sequence in immediate data.
    bool ok =
        (o.rc_pingpong() ? !v.has_imm : v.has_imm && v.imm == static_cast<std::uint32_t>(s.seq)) && v.length == o.size;
    std::uint32_t off = 0;
    v.for_each_fragment([&](const std::uint8_t* p, std::uint32_t n) {
      for (std::uint32_t i = 0; ok && i < n; ++i) ok = p[i] == pat(s.seq, off + i);
      off += n;
    });
    s.bad += !ok;
    release(v);
    if (s.done >= o.warmup) s.hist->record(rtt);
    ++s.done;
    s.progress.store(s.done, std::memory_order_relaxed);
    ++s.seq;
    s.waiting = false;
  }
}

}  // namespace droce::echo
