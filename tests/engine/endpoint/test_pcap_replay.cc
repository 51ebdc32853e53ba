// Real Linux rxe traffic (tests/data/pcaps) replayed into a droce endpoint through net_pcap
// (rx_pcap=), and droce's answers (tx_pcap=) held against the ones rxe gave on the same wire.
// droce takes the server's place: its QP is forced into the state the capture's responder had
// (the capture's MACs, IPs, QPN and expected PSN), and the requests that name the responder's
// memory are rewritten to droce's region (RETH virtual address and R_Key, ICRC recomputed,
// IBTA §9.4.1 / RoCEv2 Annex A17.3.3). Every frame of the file goes in as it was captured: the
// server's own frames, ARP and the TCP exchange too, which droce must not take for its peer's.
// Answered as by a live peer means: every NAK rxe sent, droce sends (syndrome and PSN); every
// request that asked for an ACK (and the last of every message) is covered by a later ACK; every
// READ response rxe sent, droce sends (opcode, PSN, length), its data the region's; every SEND
// and WRITE lands intact, exactly once. The answer files stay for tshark and Scapy when
// DROCE_REPLAY_OUT names a folder (tests/engine/check_pcap_replay.sh).
#include <pcap/pcap.h>
#include <rte_ethdev.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "engine/core/port.h"
#include "engine/endpoint/rc_endpoint.h"
#include "protocols/wire/icrc.h"
#include "protocols/wire/parse.h"
#include "protocols/wire/psn.h"
#include "tests/engine/rc_lab.h"

namespace droce::test {
namespace {

using Bytes = std::vector<std::uint8_t>;

std::vector<Bytes> read_pcap(const std::string& path) {
  char err[PCAP_ERRBUF_SIZE] = {};
  const std::unique_ptr<pcap_t, void (*)(pcap_t*)> p(pcap_open_offline(path.c_str(), err), pcap_close);
  INFO(path << ": " << err);
  REQUIRE(p != nullptr);
  std::vector<Bytes> frames;
  pcap_pkthdr* h = nullptr;
  const u_char* data = nullptr;
  while (pcap_next_ex(p.get(), &h, &data) == 1) frames.emplace_back(data, data + h->caplen);
  return frames;
}

void write_pcap(const std::string& path, const std::vector<Bytes>& frames) {
  const std::unique_ptr<pcap_t, void (*)(pcap_t*)> dead(pcap_open_dead(DLT_EN10MB, 65535), pcap_close);
  REQUIRE(dead != nullptr);
  pcap_dumper_t* d = pcap_dump_open(dead.get(), path.c_str());
  INFO(path << ": " << pcap_geterr(dead.get()));
  REQUIRE(d != nullptr);
  for (std::size_t i = 0; i < frames.size(); ++i) {
    pcap_pkthdr h{};
    h.ts.tv_sec = static_cast<time_t>(i / 1000000);
    h.ts.tv_usec = static_cast<suseconds_t>(i % 1000000);
    h.caplen = h.len = static_cast<bpf_u_int32>(frames[i].size());
    pcap_dump(reinterpret_cast<u_char*>(d), &h, frames[i].data());
  }
  pcap_dump_close(d);
}

bool parse(const Bytes& f, wire::PacketInfo& pi) {
  return wire::parse_frame(f.data(), static_cast<std::uint32_t>(f.size()), pi) == wire::DropReason::kNone;
}

bool is_request(std::uint8_t op) {
  return op <= static_cast<std::uint8_t>(wire::Opcode::kReadRequest) ||
         op == static_cast<std::uint8_t>(wire::Opcode::kSendLastInv) ||
         op == static_cast<std::uint8_t>(wire::Opcode::kSendOnlyInv);
}
bool is_read_response(std::uint8_t op) {
  return op >= static_cast<std::uint8_t>(wire::Opcode::kReadRespFirst) &&
         op <= static_cast<std::uint8_t>(wire::Opcode::kReadRespOnly);
}
bool ends_message(std::uint8_t op) {
  using wire::Opcode;
  for (Opcode o : {Opcode::kSendLast, Opcode::kSendLastImm, Opcode::kSendOnly, Opcode::kSendOnlyImm, Opcode::kWriteLast,
                   Opcode::kWriteLastImm, Opcode::kWriteOnly, Opcode::kWriteOnlyImm, Opcode::kReadRequest})
    if (op == static_cast<std::uint8_t>(o)) return true;
  return false;
}
bool is_send(std::uint8_t op) { return op <= static_cast<std::uint8_t>(wire::Opcode::kSendOnlyImm); }
bool is_write(std::uint8_t op) {
  return op >= static_cast<std::uint8_t>(wire::Opcode::kWriteFirst) &&
         op <= static_cast<std::uint8_t>(wire::Opcode::kWriteOnlyImm);
}
void put_be32(std::uint8_t* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<std::uint8_t>(v >> (24 - 8 * i));
}
void put_be64(std::uint8_t* p, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<std::uint8_t>(v >> (56 - 8 * i));
}

// Who is who in a capture, from its frames: the requester is the source of the first request,
// the responder its destination; the requester's QPN is the one the responder's frames name.
struct Roles {
  wire::L2L3Address requester, responder;
  std::uint32_t requester_qpn = 0, responder_qpn = 0, first_psn = 0;
  std::uint32_t pmtu = 256;
  std::uint64_t va_lo = ~std::uint64_t{0}, va_hi = 0;  // the responder's memory the RETHs name
  std::uint32_t rkey = 0;
};

bool from(const wire::PacketInfo& pi, const wire::L2L3Address& a) { return std::memcmp(pi.src_ip, a.ip, 4) == 0; }

Roles find_roles(const std::vector<Bytes>& frames) {
  Roles r;
  bool found = false;
  for (const Bytes& f : frames) {
    wire::PacketInfo pi{};
    if (!parse(f, pi)) continue;
    if (!found && is_request(pi.opcode)) {
      std::memcpy(r.requester.mac, pi.src_mac, 6);
      std::memcpy(r.requester.ip, pi.src_ip, 4);
      std::memcpy(r.responder.mac, pi.dst_mac, 6);
      std::memcpy(r.responder.ip, pi.dst_ip, 4);
      r.responder_qpn = pi.dest_qpn;
      r.first_psn = pi.psn;
      found = true;
    }
    if (!found) continue;
    if (from(pi, r.responder) && r.requester_qpn == 0) r.requester_qpn = pi.dest_qpn;
    // The path MTU: the largest payload either side put in one packet (requests, READ responses).
    if ((from(pi, r.requester) && is_request(pi.opcode)) || (from(pi, r.responder) && is_read_response(pi.opcode)))
      while (r.pmtu < pi.payload_len) r.pmtu *= 2;
    if (from(pi, r.requester) && is_request(pi.opcode)) {
      if ((pi.op().headers & wire::kHdrReth) != 0) {
        r.va_lo = std::min(r.va_lo, pi.reth_va);
        r.va_hi = std::max(r.va_hi, pi.reth_va + pi.reth_dma_len);
        r.rkey = pi.reth_rkey;
      }
    }
  }
  REQUIRE(found);
  REQUIRE(r.requester_qpn != 0);
  if (r.va_lo > r.va_hi) r.va_lo = r.va_hi = 0;
  return r;
}

// The capture with every request's RETH pointed at droce's region: the same offset from its
// start as from the lowest address the capture's requests named. The ICRC covers the RETH, so
// it is recomputed; rxe sends UDP checksum 0, which the rewrite keeps.
std::vector<Bytes> point_at(const std::vector<Bytes>& frames, const Roles& r, const rc::MemoryRegion& mr) {
  std::vector<Bytes> out = frames;
  for (Bytes& f : out) {
    wire::PacketInfo pi{};
    if (!parse(f, pi) || !from(pi, r.requester) || (pi.op().headers & wire::kHdrReth) == 0) continue;
    std::uint8_t* reth = f.data() + pi.bth_offset + 12;
    put_be64(reth, reinterpret_cast<std::uint64_t>(mr.addr) + (pi.reth_va - r.va_lo));
    put_be32(reth + 8, mr.rkey);
    const std::uint32_t covered = pi.frame_len - pi.l3_offset - wire::kIcrcBytes;
    wire::icrc_store(f.data() + pi.frame_len - wire::kIcrcBytes,
                     wire::icrc_compute(f.data() + pi.l3_offset, covered, pi.ipv6));
    wire::PacketInfo check{};
    REQUIRE(parse(f, check));  // the new ICRC verifies
  }
  return out;
}

// One answer on the wire, as compared: opcode, PSN, the AETH syndrome where there is one, length.
struct Answer {
  std::uint8_t opcode = 0;
  std::uint32_t psn = 0;
  std::uint8_t syndrome = 0;
  std::uint32_t len = 0;
  bool operator<(const Answer& o) const {
    return std::tie(opcode, psn, syndrome, len) < std::tie(o.opcode, o.psn, o.syndrome, o.len);
  }
  bool operator==(const Answer& o) const {
    return opcode == o.opcode && psn == o.psn && syndrome == o.syndrome && len == o.len;
  }
};
bool is_ack(const Answer& a) { return a.opcode == static_cast<std::uint8_t>(wire::Opcode::kAck) && a.syndrome < 0x20; }
bool is_nak(const Answer& a) { return a.opcode == static_cast<std::uint8_t>(wire::Opcode::kAck) && a.syndrome >= 0x20; }

std::vector<Answer> answers(const std::vector<Bytes>& frames, const Roles& r, std::vector<Bytes>* payloads = nullptr) {
  std::vector<Answer> out;
  for (const Bytes& f : frames) {
    wire::PacketInfo pi{};
    if (!parse(f, pi) || !from(pi, r.responder) || pi.dest_qpn != r.requester_qpn) continue;
    const bool aeth = (pi.op().headers & wire::kHdrAeth) != 0;
    if (!aeth && !is_read_response(pi.opcode)) continue;  // the responder's own requests: not answers
    out.push_back(Answer{pi.opcode, pi.psn, aeth ? pi.aeth_syndrome : std::uint8_t{0}, pi.payload_len});
    if (payloads != nullptr)
      payloads->emplace_back(f.begin() + pi.payload_offset, f.begin() + pi.payload_offset + pi.payload_len);
  }
  return out;
}

struct Replayed {
  std::vector<Bytes> sent;  // droce's frames (tx_pcap)
  std::vector<rc::Completion> completions;
  Bytes region;  // droce's memory after the run
  std::uint64_t region_va = 0;
  std::vector<Bytes> received;  // the SEND messages droce delivered, in completion order
  std::uint64_t frames_in = 0;
  rc::RcCounters qp;  // the QP's counters at the end
};

std::string scratch_dir() {
  if (const char* d = std::getenv("DROCE_REPLAY_OUT"); d != nullptr && *d != 0) return d;
  char tmpl[] = "/tmp/droce_replay_XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  return tmpl;
}

// Replays `name` (its `frames`, whose roles are `r`) into a droce endpoint standing where the capture's responder
// stood.
Replayed replay(const std::string& name, const std::vector<Bytes>& frames, const Roles& r, std::uint64_t region_bytes) {
  static int run = 0;
  const std::string dir = scratch_dir();
  const std::string stem = name.substr(0, name.rfind('.'));
  const std::string in = dir + "/" + stem + ".in.pcap", out = dir + "/" + stem + ".droce.pcap";

  Replayed result;
  MemoryRegistry mem;
  void* buf = std::aligned_alloc(4096, region_bytes);
  REQUIRE(buf != nullptr);
  const std::unique_ptr<void, void (*)(void*)> own(buf, std::free);
  for (std::uint64_t i = 0; i < region_bytes; ++i)
    static_cast<std::uint8_t*>(buf)[i] = static_cast<std::uint8_t>(i * 7 + 3);
  rc::MemoryRegion mr;
  REQUIRE(
      mem.register_memory(buf, region_bytes, rc::kAccessLocalWrite | rc::kAccessRemoteWrite | rc::kAccessRemoteRead, mr)
          .ok());
  REQUIRE(r.va_hi - r.va_lo <= region_bytes);
  write_pcap(in, point_at(frames, r, mr));

  {
    PortConfig pc;
    pc.devargs = "net_pcap_replay" + std::to_string(run++) + ",rx_pcap=" + in + ",tx_pcap=" + out;
    pc.rx_pool = pool().get();
    Status err;
    auto port = Port::open(pc, err);
    INFO(err.message());
    REQUIRE(port);
    EndpointConfig cfg;
    cfg.queues.port_id = port->id();
    cfg.queues.pool = pool().get();
    cfg.queues.memory = &mem;
    cfg.addresses.local = r.responder;
    cfg.transport.qpn_base = r.responder_qpn;
    auto ep = RcEndpoint::create(cfg, err);
    INFO(err.message());
    REQUIRE(ep);
    rc::QpAttr attr;
    attr.pmtu = r.pmtu;
    attr.sq_psn = 0x123456;  // the responder's own requests' PSNs: it sends none here
    attr.access = rc::kAccessRemoteWrite | rc::kAccessRemoteRead;
    std::uint32_t qpn = 0;
    REQUIRE(ep->create_qp(attr, qpn).ok());
    REQUIRE(qpn == r.responder_qpn);
    REQUIRE(ep->connect(qpn, RemoteQp{r.requester, r.requester_qpn, r.first_psn}).ok());
    // Receives for every SEND, each as large as the region, in the region's second half.
    std::uint32_t sends = 0;
    for (const Bytes& f : frames) {
      wire::PacketInfo pi{};
      if (parse(f, pi) && from(pi, r.requester) && is_send(pi.opcode) && ends_message(pi.opcode)) ++sends;
    }
    const std::uint64_t slot = region_bytes / 2 / std::max<std::uint32_t>(sends, 1);
    for (std::uint32_t i = 0; i < sends; ++i) {
      rc::RecvWr wr;
      wr.wr_id = i;
      wr.sge = rc::Sge{reinterpret_cast<std::uint64_t>(mr.addr) + region_bytes / 2 + i * slot,
                       static_cast<std::uint32_t>(slot), mr.lkey};
      const Status posted = ep->post_recv(qpn, wr);
      INFO("receive " << i << " of " << sends << ": " << posted.message());
      REQUIRE(posted.ok());
    }
    // Poll until net_pcap has handed over the whole file, then a quiet tenth of a second for the
    // last answers (bounded: 30 s whatever happens).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    auto quiet_until = deadline;
    while (std::chrono::steady_clock::now() < std::min(deadline, quiet_until)) {
      ep->poll();
      rc::Completion c[16];
      for (unsigned n = ep->poll_cq(qpn, c, 16), i = 0; i < n; ++i) result.completions.push_back(c[i]);
      rte_eth_stats st{};
      if (rte_eth_stats_get(port->id(), &st) == 0 && st.ipackets >= frames.size() && quiet_until == deadline)
        quiet_until = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
      result.frames_in = st.ipackets;
    }
    CHECK(result.frames_in == frames.size());
    for (const rc::Completion& c : result.completions) {
      if (!c.is_recv || c.status != rc::WcStatus::kSuccess) continue;
      const std::uint8_t* p = static_cast<std::uint8_t*>(buf) + region_bytes / 2 + c.wr_id * slot;
      result.received.emplace_back(p, p + c.byte_len);
    }
    result.qp = ep->qp(qpn)->counters();
    ep.reset();
  }  // the port closes here: net_pcap writes its tx file out
  result.sent = read_pcap(out);
  result.region.assign(static_cast<std::uint8_t*>(buf), static_cast<std::uint8_t*>(buf) + region_bytes);
  result.region_va = reinterpret_cast<std::uint64_t>(buf);
  REQUIRE(mem.deregister(mr.lkey).ok());
  if (std::getenv("DROCE_REPLAY_OUT") == nullptr) {
    std::remove(in.c_str());
    std::remove(out.c_str());
    rmdir(dir.c_str());
  }
  return result;
}

// The messages the requester's frames carry, each once, in PSN order of first arrival: what a
// responder must deliver. A retransmitted packet (go-back-N after a NAK) is the same bytes again.
struct Expected {
  std::vector<Bytes> sends;                           // SEND payloads, whole messages
  std::map<std::uint64_t, Bytes> writes;              // offset in the region -> the last bytes written there
  std::vector<std::uint32_t> need_ack;                // PSNs that asked for an ACK or end a message
  std::uint32_t requests = 0;                         // request packets, resends included
  std::uint32_t duplicates = 0, out_of_sequence = 0;  // behind the expected PSN, past it
};

Expected expected(const std::vector<Bytes>& frames, const Roles& r) {
  Expected e;
  Bytes message;
  std::uint64_t write_off = 0;
  std::uint32_t epsn = r.first_psn;
  for (const Bytes& f : frames) {
    wire::PacketInfo pi{};
    if (!parse(f, pi) || !from(pi, r.requester) || !is_request(pi.opcode)) continue;
    ++e.requests;
    // READs are answered by their responses, every other request by an ACK (§9.7.5.1).
    if (pi.opcode != static_cast<std::uint8_t>(wire::Opcode::kReadRequest) && (pi.ack_req || ends_message(pi.opcode)))
      e.need_ack.push_back(pi.psn);
    // Go-back-N (§9.7.5.1.1): a packet counts only at its turn; one past a gap is dropped and
    // comes again after the NAK, one behind is a duplicate. A READ takes as many PSNs as it has
    // response packets.
    if (pi.psn != epsn) {
      ++(wire::psn_lt(pi.psn, epsn) ? e.duplicates : e.out_of_sequence);
      continue;
    }
    epsn = (epsn + (pi.opcode == static_cast<std::uint8_t>(wire::Opcode::kReadRequest)
                        ? std::max<std::uint32_t>(1, (pi.reth_dma_len + r.pmtu - 1) / r.pmtu)
                        : 1)) &
           0xFFFFFF;
    const Bytes payload(f.begin() + pi.payload_offset, f.begin() + pi.payload_offset + pi.payload_len);
    if (is_send(pi.opcode)) {
      message.insert(message.end(), payload.begin(), payload.end());
      if (ends_message(pi.opcode)) e.sends.push_back(std::move(message)), message.clear();
    } else if (is_write(pi.opcode)) {
      if ((pi.op().headers & wire::kHdrReth) != 0) write_off = pi.reth_va - r.va_lo;
      e.writes[write_off] = payload;  // a later WRITE to the same place (write_lat's) replaces it
      write_off += payload.size();
    }
  }
  return e;
}

// Every PSN in `need` is covered by a later ACK: one whose PSN is at or after it (PSNs compare
// modulo 2^24, §9.7.5.1: an ACK acknowledges every request up to its PSN).
bool all_acknowledged(const std::vector<std::uint32_t>& need, const std::vector<Answer>& sent) {
  std::uint32_t best = 0;
  bool any = false;
  for (const Answer& a : sent)
    if (is_ack(a) && (!any || wire::psn_diff(a.psn, best) > 0)) best = a.psn, any = true;
  for (std::uint32_t p : need)
    if (!any || wire::psn_diff(best, p) < 0) return false;
  return true;
}

void check_replay(const std::string& name, std::uint64_t region_bytes) {
  const std::vector<Bytes> frames = read_pcap(std::string(DROCE_TEST_DATA) + "/pcaps/" + name);
  const Roles r = find_roles(frames);
  const Replayed run = replay(name, frames, r, region_bytes);
  INFO(name);
  std::vector<Bytes> rxe_payloads;
  const std::vector<Answer> rxe = answers(frames, r, &rxe_payloads);
  std::vector<Bytes> droce_payloads;
  const std::vector<Answer> droce = answers(run.sent, r, &droce_payloads);
  const Expected e = expected(frames, r);

  // Every frame droce sent is well formed, ICRC included, and goes to the requester only.
  for (const Bytes& f : run.sent) {
    wire::PacketInfo pi{};
    const wire::DropReason why = wire::parse_frame(f.data(), static_cast<std::uint32_t>(f.size()), pi);
    if (why == wire::DropReason::kNotIp || why == wire::DropReason::kNotUdp || why == wire::DropReason::kNotRocePort)
      continue;  // ARP answers to the requester's queries
    INFO("droce sent a frame its own parser refuses: " << wire::drop_reason_name(why));
    REQUIRE(why == wire::DropReason::kNone);
    CHECK(std::memcmp(pi.dst_ip, r.requester.ip, 4) == 0);
    CHECK(pi.dest_qpn == r.requester_qpn);
  }
  // NAKs: one per gap, as rxe sent them (syndrome and PSN). droce may send fewer frames: a NAK
  // still queued when the gap closes and a later PSN is acknowledged in the same receive burst
  // gives way to that ACK (a frame fewer, the same news), so the wire shows a subsequence of
  // rxe's NAKs and the counter shows them all.
  std::vector<Answer> rxe_naks, droce_naks;
  std::copy_if(rxe.begin(), rxe.end(), std::back_inserter(rxe_naks), is_nak);
  std::copy_if(droce.begin(), droce.end(), std::back_inserter(droce_naks), is_nak);
  CHECK(run.qp.naks_sent == rxe_naks.size());
  CHECK(run.qp.duplicate_request == e.duplicates);
  CHECK(run.qp.out_of_sequence == e.out_of_sequence);
  std::size_t k = 0;
  for (const Answer& a : droce_naks) {
    while (k < rxe_naks.size() && !(rxe_naks[k] == a)) ++k;
    INFO("droce's NAK syndrome " << int(a.syndrome) << " PSN " << a.psn << " is not one of rxe's, in order");
    CHECK(k < rxe_naks.size());
  }
  // ACKs: every request rxe's requester waited on is acknowledged.
  CHECK(all_acknowledged(e.need_ack, droce));
  // READ responses: each one rxe sent, droce sent (a responder whose answers were lost on the
  // way, read_loss, answers the re-issued requests again: droce's may be more), with the data
  // of the region at the offset asked.
  std::multiset<Answer> droce_reads;
  for (std::size_t i = 0; i < droce.size(); ++i) {
    if (!is_read_response(droce[i].opcode)) continue;
    droce_reads.insert(droce[i]);
  }
  for (const Answer& a : rxe) {
    if (!is_read_response(a.opcode)) continue;
    INFO("rxe's READ response opcode " << int(a.opcode) << " PSN " << a.psn << " len " << a.len);
    CHECK(droce_reads.count(a) > 0);
  }
  for (std::size_t i = 0; i < droce.size(); ++i) {
    if (!is_read_response(droce[i].opcode)) continue;
    const Bytes& p = droce_payloads[i];
    // The region is the pattern the test wrote (READs leave it unchanged): the response's bytes
    // appear in it at a packet-aligned offset of the requests' range.
    bool found = false;
    for (std::uint64_t off = 0; off + p.size() <= run.region.size() / 2 && !found; off += 64)
      found = std::equal(p.begin(), p.end(), run.region.begin() + static_cast<std::ptrdiff_t>(off));
    CHECK(found);
  }
  // SENDs: every message delivered once, intact, in order; WRITEs: every byte in place.
  CHECK(run.received == e.sends);
  for (const auto& [off, bytes] : e.writes) {
    INFO("WRITE at offset " << off << ", " << bytes.size() << " bytes");
    CHECK(std::equal(bytes.begin(), bytes.end(), run.region.begin() + static_cast<std::ptrdiff_t>(off)));
  }
  for (const rc::Completion& c : run.completions) CHECK(c.status == rc::WcStatus::kSuccess);
  // The capture really had something to answer, and droce answered.
  CHECK(e.requests > 0);
  CHECK(!droce.empty());
}

}  // namespace

TEST_CASE("rxe captures replayed through net_pcap: droce answers SENDs as rxe did", "[replay]") {
  check_replay("send_bw.pcap", 1 << 20);
  check_replay("send_bw_64.pcap", 1 << 20);
}

TEST_CASE("rxe captures replayed through net_pcap: WRITEs land, ACKed as by rxe", "[replay]") {
  check_replay("write_bw.pcap", 1 << 20);
  check_replay("write_lat.pcap", 1 << 20);
}

TEST_CASE("rxe captures replayed through net_pcap: READ responses as rxe's", "[replay]") {
  check_replay("read_bw.pcap", 1 << 20);
  check_replay("read_lat.pcap", 1 << 20);
}

TEST_CASE("rxe captures replayed through net_pcap: loss, NAKs and resends as rxe answered them", "[replay]") {
  check_replay("send_nak.pcap", 1 << 20);  // two gaps: NAK sequence error at the same PSNs
  check_replay("write_nak.pcap", 1 << 20);
  check_replay("write_ackloss.pcap", 1 << 20);  // a WRITE resent after lost ACKs: a duplicate, ACKed
  check_replay("read_loss.pcap", 1 << 20);      // re-issued READs answered again
}

}  // namespace droce::test
