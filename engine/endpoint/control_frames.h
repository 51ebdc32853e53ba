// ControlFrames: the one way the endpoint's own frames that are not RC data leave — ARP, Neighbor
// Discovery, QP1's CM MADs and the notification point's CNPs: a fresh mbuf of the endpoint's pool,
// and the finished frame into the endpoint's TX batch, captured as sent, to leave with its next
// flush. The side protocols get this and nothing else of the endpoint's transmit path; each
// counts its own frames and failures.
#pragma once

#include <rte_mbuf.h>

#include <cstdint>

#include "engine/core/capture.h"
#include "engine/core/tx_batch.h"
#include "engine/endpoint/endpoint_config.h"

namespace droce::engine {

// The endpoint's TX backlog: every frame it sends waits here for the poll's flush.
using EndpointTxBatch = TxBatch<1024>;

class ControlFrames {
 public:
  // `cfg` and `tx` are the owning endpoint's and outlive this.
  ControlFrames(const EndpointConfig& cfg, EndpointTxBatch& tx) : cfg_(cfg), tx_(tx) {}

  // A fresh mbuf of the endpoint's pool; nullptr when the pool is empty.
  [[nodiscard]] rte_mbuf* alloc() const { return rte_pktmbuf_alloc(cfg_.queues.pool); }

  // Captures the whole frame `m` as sent (when the endpoint records) and queues it; false when the
  // TX backlog is full, and `m` is freed.
  [[nodiscard]] bool send(rte_mbuf* m, std::uint64_t now_tsc) {
    if (cfg_.recording.capture != nullptr)
      cfg_.recording.capture->capture(cfg_.queues.port_id, cfg_.queues.queue, &m, 1, CaptureDirection::kTx, now_tsc);
    if (tx_.push(m)) return true;
    rte_pktmbuf_free(m);
    return false;
  }

 private:
  const EndpointConfig& cfg_;
  EndpointTxBatch& tx_;
};

}  // namespace droce::engine
