// FabricObserver: each frame parsed once (headers only: no ICRC, no IP checksum), RoCE request
// payload counted by port and destination, first transmissions told by PSN per destination QP.
#include "apps/droce-coll/fabric_observer.h"

#include <droce/protocols/wire/opcode.h>
#include <droce/protocols/wire/psn.h>
#include <rte_cycles.h>

#include <cstring>
#include <ctime>

namespace droce::coll {

FabricObserver::FabricObserver(std::uint32_t ranks, std::uint32_t qpn_base, std::uint32_t qps_per_rank)
    : ranks_(ranks), qpn_base_(qpn_base), qps_(qps_per_rank), ingress_(ranks), egress_(ranks) {
  for (std::uint32_t r = 0; r < ranks; ++r)
    for (Tap* t : {&ingress_[r], &egress_[r]}) {
      t->obs = this;
      t->rank = r;
      t->ingress = t == &ingress_[r];
      t->to.assign(ranks, 0);
      t->next_psn.assign(std::size_t{ranks} * qps_per_rank, 0);
      t->seen.assign(std::size_t{ranks} * qps_per_rank, 0);
    }
}

FabricObserver::~FabricObserver() { close_capture(); }

engine::Status FabricObserver::open_capture(const std::string& path, std::uint32_t snaplen) {
  pcap_ = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, static_cast<int>(snaplen), PCAP_TSTAMP_PRECISION_NANO);
  if (pcap_ == nullptr) return engine::Status::fail(engine::StatusCode::kIo, "--pcap: libpcap cannot open a capture");
  dumper_ = pcap_dump_open(pcap_, path.c_str());
  if (dumper_ == nullptr) {
    engine::Status e = engine::Status::error(engine::StatusCode::kIo, "--pcap: " + std::string(pcap_geterr(pcap_)));
    pcap_close(pcap_);
    pcap_ = nullptr;
    return e;
  }
  snaplen_ = snaplen;
  scratch_.resize(snaplen);
  return {};
}

void FabricObserver::close_capture() {
  if (dumper_ != nullptr) pcap_dump_close(dumper_);
  if (pcap_ != nullptr) pcap_close(pcap_);
  dumper_ = nullptr;
  pcap_ = nullptr;
}

int FabricObserver::rank_of_ip(const std::uint8_t* ip) const {
  // CollLab::address: 10.0.(r / 200).(r % 200 + 1).
  if (ip[0] != 10 || ip[1] != 0 || ip[3] == 0) return -1;
  const std::uint32_t r = ip[2] * 200u + ip[3] - 1u;
  return r < ranks_ ? static_cast<int>(r) : -1;
}

void FabricObserver::ingress_tap(void* ctx, rte_mbuf* const* pkts, std::uint16_t n) {
  auto* tap = static_cast<Tap*>(ctx);
  tap->obs->observe(*tap, pkts, n);
}

void FabricObserver::egress_tap(void* ctx, rte_mbuf* const* pkts, std::uint16_t n) {
  auto* tap = static_cast<Tap*>(ctx);
  tap->obs->observe(*tap, pkts, n);
}

void FabricObserver::observe(Tap& tap, rte_mbuf* const* pkts, std::uint16_t n) {
  std::uint8_t head[256];
  for (std::uint16_t i = 0; i < n; ++i) {
    rte_mbuf* m = pkts[i];
    ++tap.t.frames;
    tap.t.bytes += m->pkt_len;
    if (tap.ingress && dumper_ != nullptr) {
      // One writer: ingress taps all run on the switch's thread.
      const std::uint32_t caplen = m->pkt_len < snaplen_ ? m->pkt_len : snaplen_;
      const auto* bytes = static_cast<const std::uint8_t*>(rte_pktmbuf_read(m, 0, caplen, scratch_.data()));
      timespec ts{};
      clock_gettime(CLOCK_REALTIME, &ts);
      pcap_pkthdr h{};
      h.ts.tv_sec = ts.tv_sec;
      h.ts.tv_usec = ts.tv_nsec;  // nanoseconds: the file says so (PCAP_TSTAMP_PRECISION_NANO)
      h.caplen = caplen;
      h.len = m->pkt_len;
      pcap_dump(reinterpret_cast<u_char*>(dumper_), &h, bytes);
      ++captured_;
    }
    // The lab's frames are droce's own IPv4 RoCEv2 (or PFC, ARP): walk the headers of the first
    // segment, where they always are (a payload attached zero-copy follows in its own segment),
    // and take the payload length from the UDP length.
    const std::uint32_t hl = m->data_len < sizeof head ? m->data_len : static_cast<std::uint32_t>(sizeof head);
    const auto* f = static_cast<const std::uint8_t*>(rte_pktmbuf_read(m, 0, hl, head));
    std::uint32_t l3 = 14;
    if (hl >= 18 && f[12] == 0x81 && f[13] == 0x00) l3 = 18;
    if (hl < l3 + 20 || f[l3 - 2] != 0x08 || f[l3 - 1] != 0x00) continue;  // not IPv4
    const std::uint32_t udp = l3 + (f[l3] & 0x0Fu) * 4u;
    if (f[l3 + 9] != 17 || hl < udp + 8 + 12 || f[udp + 2] != 0x12 || f[udp + 3] != 0xB7) continue;  // UDP 4791
    const std::uint8_t* bth = f + udp + 8;
    const wire::OpcodeInfo& oi = wire::opcode_info(bth[0]);
    if (!oi.valid() || !oi.is_request) continue;
    const std::uint32_t udp_len = std::uint32_t{f[udp + 4]} << 8 | f[udp + 5];
    const std::uint32_t overhead = 8 + 12 + oi.ext_bytes + ((bth[1] >> 4) & 3u) + 4;  // UDP, BTH, ext, pad, ICRC
    const std::uint32_t payload = udp_len > overhead ? udp_len - overhead : 0;
    const std::uint32_t dest_qpn = std::uint32_t{bth[5]} << 16 | std::uint32_t{bth[6]} << 8 | bth[7];
    const std::uint32_t psn = (std::uint32_t{bth[9]} << 16 | std::uint32_t{bth[10]} << 8 | bth[11]) & wire::kPsnMask;
    ++tap.t.roce_frames;
    const int dst = rank_of_ip(f + l3 + 16);
    const std::uint32_t slot = dest_qpn - qpn_base_;
    if (dst < 0 || slot >= qps_) continue;
    const std::size_t k = static_cast<std::size_t>(dst) * qps_ + slot;
    // A PSN at or past the newest seen is a first transmission; behind it, one sent again.
    const bool first = tap.seen[k] == 0 || wire::psn_ge(psn, tap.next_psn[k]);
    if (first) {
      tap.seen[k] = 1;
      tap.next_psn[k] = wire::psn_next(psn);
      tap.t.payload_first += payload;
      tap.to[static_cast<std::size_t>(dst)] += payload;
    } else {
      tap.t.payload_retx += payload;
    }
  }
}

}  // namespace droce::coll
