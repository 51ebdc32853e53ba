// RcEndpoint: frames <-> RC QPs. Payloads leave from application memory as external buffers
// (header mbuf -> payload extbuf -> pad+ICRC trailer) when the port takes chained mbufs.
#include "engine/rc_endpoint.h"

#include <cstring>

#include <rte_cycles.h>
#include <rte_ethdev.h>

#include "protocols/rc/descriptor_fields.h"
#include "protocols/wire/icrc.h"
#include "protocols/wire/parse.h"

namespace droce::engine {

RcEndpoint::RcEndpoint(const EndpointConfig& cfg) : cfg_(cfg), qps_(cfg.max_qps), scratch_(16384) {
  // Zero-copy TX sends chained mbufs, so the port must take them. net_ring advertises no
  // offloads but only moves mbuf pointers, so a chain crosses it untouched.
  rte_eth_dev_info info{};
  if (rte_eth_dev_info_get(cfg.port_id, &info) == 0)
    multi_seg_ok_ = (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS) != 0 ||
                    (info.driver_name != nullptr && std::strcmp(info.driver_name, "net_ring") == 0);
  ns_per_tsc_ = 1e9 / static_cast<double>(rte_get_tsc_hz());
}

RcEndpoint::~RcEndpoint() { finish(); }

std::uint64_t RcEndpoint::now_ns(std::uint64_t tsc) const {
  return static_cast<std::uint64_t>(static_cast<double>(tsc) * ns_per_tsc_);
}

Status RcEndpoint::create_qp(rc::QpAttr attr, const wire::L2L3Address& remote, rc::RcQp*& out) {
  if (cfg_.memory == nullptr || cfg_.pool == nullptr) return Status::error("endpoint has no memory registry or pool");
  for (std::uint32_t i = 0; i < qps_.size(); ++i) {
    if (qps_[i].qp) continue;
    attr.qpn = cfg_.qpn_base + i;
    if (std::string e = attr.validate(); !e.empty()) return Status::error("QP attributes: " + e);
    auto qp = std::make_unique<rc::RcQp>(attr, cfg_.memory->table());
    for (auto st : {rc::QpState::kInit, rc::QpState::kRtr, rc::QpState::kRts})
      if (std::string e = qp->modify(st); !e.empty()) return Status::error("QP " + std::to_string(attr.qpn) + ": " + e);
    wire::TemplateConfig tc;
    tc.local = cfg_.local;
    tc.remote = remote;
    tc.dest_qpn = attr.dest_qpn;
    tc.pkey = attr.pkey;
    tc.udp_src_port = wire::roce_udp_src_port(attr.qpn, attr.dest_qpn);
    qps_[i].tmpl = wire::HeaderTemplate::make(tc);
    qps_[i].qp = std::move(qp);
    out = qps_[i].qp.get();
    return {};
  }
  return Status::error("endpoint has no free QP slot (max_qps " + std::to_string(qps_.size()) + ")");
}

rc::RcQp* RcEndpoint::qp(std::uint32_t qpn) {
  const std::uint32_t i = qpn - cfg_.qpn_base;  // wraps to a huge index below the base
  return i < qps_.size() ? qps_[i].qp.get() : nullptr;
}

void RcEndpoint::drop(wire::DropReason r) {
  ++c_.rx_drops[static_cast<std::size_t>(r)];
  if (cfg_.counters != nullptr) ++cfg_.counters->rx_drops[static_cast<std::size_t>(r)];
}

void RcEndpoint::receive(rte_mbuf* m, std::uint64_t now_ns) {
  ++c_.rx_frames;
  const std::uint8_t* data = rte_pktmbuf_mtod(m, const std::uint8_t*);
  std::uint32_t len = m->data_len;
  if (m->nb_segs > 1) {
    // PMTU 4096 over small mbufs arrives chained: parse a linear copy (counted).
    if (m->pkt_len > scratch_.size()) {
      drop(wire::DropReason::kPayloadOverPmtu);
      return;
    }
    data = static_cast<const std::uint8_t*>(rte_pktmbuf_read(m, 0, m->pkt_len, scratch_.data()));
    len = m->pkt_len;
    ++c_.rx_linearized;
  }
  wire::PacketInfo pi;
  const wire::DropReason r = wire::parse_frame(data, len, pi);
  if (r != wire::DropReason::kNone) {
    drop(r);
    return;
  }
  rc::RcQp* q = qp(pi.dest_qpn);
  if (q == nullptr) {
    drop(wire::DropReason::kUnknownQpn);
    return;
  }
  if (q->state() != rc::QpState::kRts && q->state() != rc::QpState::kRtr) {
    drop(wire::DropReason::kQpNotReady);
    return;
  }
  if (pi.payload_len > q->attr().pmtu) {
    drop(wire::DropReason::kPayloadOverPmtu);
    return;
  }
  q->on_packet(pi, data + pi.payload_offset, now_ns);
}

bool RcEndpoint::transmit(QpSlot& s, const rc::TxDescriptor& d, std::uint64_t now_tsc) {
  rte_mbuf* m = rte_pktmbuf_alloc(cfg_.pool);
  if (m == nullptr) return false;
  wire::PacketFields f = rc::packet_fields(d);
  f.ip_id = s.ip_id++;
  auto* hdr = reinterpret_cast<std::uint8_t*>(rte_pktmbuf_append(m, wire::kMaxHeaderBytes));
  const std::uint32_t hlen = wire::write_headers(s.tmpl, f, hdr);
  rte_pktmbuf_trim(m, static_cast<std::uint16_t>(wire::kMaxHeaderBytes - hlen));
  const std::uint32_t pad = wire::opcode_info(d.opcode).has_payload ? wire::pad_for(d.payload_len) : 0;
  const std::uint8_t* l3 = hdr + s.tmpl.l3_offset;
  const std::uint32_t l3_hdr_len = hlen - s.tmpl.l3_offset;
  bool zero_copy = cfg_.zero_copy_tx && multi_seg_ok_ && d.payload_len != 0;
  if (zero_copy) {
    rte_mbuf* pm = rte_pktmbuf_alloc(cfg_.pool);
    rte_mbuf* tm = pm != nullptr ? rte_pktmbuf_alloc(cfg_.pool) : nullptr;
    if (tm == nullptr || !cfg_.memory->attach_payload_ptr(pm, d.payload, d.payload_len)) {
      if (pm != nullptr) rte_pktmbuf_free(pm);
      if (tm != nullptr) rte_pktmbuf_free(tm);
      zero_copy = false;  // fall back to a copy (counted) rather than fail the packet
    } else {
      auto* trailer = reinterpret_cast<std::uint8_t*>(rte_pktmbuf_append(tm, static_cast<std::uint16_t>(pad + 4)));
      std::memset(trailer, 0, pad);
      wire::icrc_store(trailer + pad, wire::icrc_compute_split(l3, l3_hdr_len, s.tmpl.ipv6, d.payload, d.payload_len, pad));
      if (rte_pktmbuf_chain(m, pm) != 0 || rte_pktmbuf_chain(m, tm) != 0) {
        rte_pktmbuf_free(m);
        return false;
      }
      ++c_.tx_zero_copy_frames;
    }
  }
  if (!zero_copy) {
    const std::uint32_t extra = d.payload_len + pad + wire::kIcrcBytes;
    auto* p = reinterpret_cast<std::uint8_t*>(rte_pktmbuf_append(m, static_cast<std::uint16_t>(extra)));
    if (p == nullptr) {
      rte_pktmbuf_free(m);
      return false;
    }
    if (d.payload_len != 0) std::memcpy(p, d.payload, d.payload_len);
    std::memset(p + d.payload_len, 0, pad);
    c_.tx_payload_bytes_copied += d.payload_len;
    wire::icrc_store(p + d.payload_len + pad, wire::icrc_compute(l3, l3_hdr_len + d.payload_len + pad, s.tmpl.ipv6));
  }
  c_.tx_payload_bytes += d.payload_len;
  if (cfg_.capture != nullptr) cfg_.capture->capture(cfg_.port_id, cfg_.queue, &m, 1, CaptureDirection::kTx, now_tsc);
  if (!tx_.push(m)) {
    rte_pktmbuf_free(m);
    ++c_.tx_backlog_drops;  // the QP's go-back-N recovers it
  }
  ++c_.tx_frames;
  return true;
}

void RcEndpoint::poll(std::uint64_t now_tsc) {
  const std::uint64_t now = now_ns(now_tsc);
  rte_mbuf* rx[32];
  const std::uint16_t n = rte_eth_rx_burst(cfg_.port_id, cfg_.queue, rx, 32);
  if (cfg_.capture != nullptr && n != 0) cfg_.capture->capture(cfg_.port_id, cfg_.queue, rx, n, CaptureDirection::kRx, now_tsc);
  for (std::uint16_t i = 0; i < n; ++i) {
    if (i + 1 < n) rte_prefetch0(rte_pktmbuf_mtod(rx[i + 1], void*));
    receive(rx[i], now);
    rte_pktmbuf_free(rx[i]);  // RC placed (copied) what it needed: a NIC's DMA into the target
  }
  if (cfg_.counters != nullptr) cfg_.counters->rx_packets += n;
  for (auto& s : qps_) {
    if (!s.qp) continue;
    s.qp->on_timer(now);
    rc::TxDescriptor d;
    // Bounded per QP per iteration so one QP cannot starve the others or RX.
    for (int k = 0; k < 32 && tx_.room() > 0 && s.qp->next_packet(now, d); ++k) {
      if (!transmit(s, d, now_tsc)) {
        ++c_.tx_alloc_failures;  // the packet is lost locally; go-back-N resends it
        break;
      }
    }
  }
  std::uint64_t bytes = 0;
  const std::uint16_t sent = tx_.flush(cfg_.port_id, cfg_.queue, bytes);
  if (cfg_.counters != nullptr) {
    cfg_.counters->tx_packets += sent;
    cfg_.counters->tx_bytes += bytes;
  }
}

void RcEndpoint::finish() { c_.tx_backlog_drops += tx_.drop_all(); }

}  // namespace droce::engine
