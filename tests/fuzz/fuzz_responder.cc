// libFuzzer target: arbitrary packet sequences (fields decoded from the input) into a connected
// RC QP with work outstanding on both sides — responder and completer must never crash, read or
// write outside registered memory, or loop.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "protocols/rc/rc_qp.h"
#include "protocols/wire/opcode.h"

using namespace droce;

namespace {

struct Reader {
  const std::uint8_t* p;
  std::size_t n;
  template <typename T>
  T get() {
    T v{};
    const std::size_t k = n < sizeof(T) ? n : sizeof(T);
    std::memcpy(&v, p, k);
    p += k;
    n -= k;
    return v;
  }
};

// The same input drives a go-back-N QP, then a selective-repeat one (docs/selective-repeat.md).
// For the SR QP, packets whose flags ask it (bit 6) turn their RC opcode (SEND, WRITE, READ
// request and response, ACK, ATOMIC ACKNOWLEDGE) into the SR counterpart; the rest reach it as RC
// opcodes, which it must drop (recovery mismatch). The atomic operands reuse the RETH's bytes.
void run(const std::uint8_t* data, std::size_t size, bool sr) {
  // Exact-size buffers so ASan flags any placement outside them.
  std::vector<std::uint8_t> mem(8192), local(8192), recv(3000);
  rc::MrTable mrs(8);
  const auto remote_mr = *mrs.register_region(mem.data(), mem.size(),
                                              rc::kAccessRemoteWrite | rc::kAccessRemoteRead | rc::kAccessRemoteAtomic);
  const auto local_mr = *mrs.register_region(local.data(), local.size(), rc::kAccessLocalWrite);
  const auto recv_mr = *mrs.register_region(recv.data(), recv.size(), rc::kAccessLocalWrite);
  rc::QpAttr a;
  a.qpn = 0x11;
  a.dest_qpn = 0x12;
  a.pmtu = 1024;
  a.sq_psn = 0xFFFFF0;
  a.rq_psn = 0xFFFFF8;
  a.timeout = 1;
  a.retry_cnt = 3;
  a.rnr_retry = 3;
  a.sq_depth = 16;
  a.rq_depth = 16;
  if (sr) a.recovery = rc::Recovery::kSelectiveRepeat;
  rc::RcQp qp(a, mrs);
  if (!qp.modify(rc::QpState::kInit).ok() || !qp.modify(rc::QpState::kRtr).ok() || !qp.modify(rc::QpState::kRts).ok())
    __builtin_trap();
  (void)qp.post_recv({1, {reinterpret_cast<std::uint64_t>(recv.data()), 3000, recv_mr.lkey}});
  const rc::WrOpcode ops[] = {rc::WrOpcode::kSend, rc::WrOpcode::kWrite, rc::WrOpcode::kRead,
                              rc::WrOpcode::kWriteWithImm, rc::WrOpcode::kRead};
  for (int i = 0; i < 5; ++i) {
    rc::SendWr w;
    w.wr_id = static_cast<std::uint64_t>(i);
    w.opcode = ops[i];
    w.sge = {reinterpret_cast<std::uint64_t>(local.data() + i * 1500), 1500u + static_cast<std::uint32_t>(i),
             local_mr.lkey};
    w.remote_addr = 0x1000;
    w.rkey = 0x99;
    (void)qp.post_send(w);
  }
  std::uint64_t now = 0;
  rc::TxDescriptor d;
  for (int i = 0; i < 16 && qp.next_packet(now, d); ++i) {
  }
  std::vector<std::uint8_t> payload(4200);
  Reader r{data, size};
  for (int pkt = 0; pkt < 64 && r.n > 0; ++pkt) {
    wire::PacketInfo pi{};
    pi.opcode = r.get<std::uint8_t>();
    if (!wire::opcode_info(pi.opcode).valid()) pi.opcode = static_cast<std::uint8_t>(pi.opcode % 0x13);
    const std::uint8_t flags = r.get<std::uint8_t>();
    if (sr && (flags & 64) && wire::opcode_info(wire::sr_opcode_of(pi.opcode)).valid())
      pi.opcode = wire::sr_opcode_of(pi.opcode);
    pi.ack_req = flags & 1;
    pi.dest_qpn = 0x11;
    // PSNs near the interesting places (sq/rq start, wrap) more often than anywhere.
    const std::uint32_t base = (flags & 2) ? 0xFFFFF0u : 0xFFFFF8u;
    pi.psn = (base + static_cast<std::uint32_t>(static_cast<std::int8_t>(r.get<std::uint8_t>()))) & 0xFFFFFF;
    if (flags & 4) pi.psn = r.get<std::uint32_t>() & 0xFFFFFF;
    pi.payload_len = r.get<std::uint16_t>() % 4200;
    pi.aeth_syndrome = r.get<std::uint8_t>();
    pi.aeth_msn = r.get<std::uint32_t>() & 0xFFFFFF;
    const std::uint16_t off = r.get<std::uint16_t>();
    pi.reth_va = (flags & 8) ? reinterpret_cast<std::uint64_t>(mem.data()) + (off % 9000) : r.get<std::uint64_t>();
    pi.reth_rkey = (flags & 16) ? remote_mr.rkey : r.get<std::uint32_t>();
    pi.reth_dma_len = (flags & 32) ? r.get<std::uint16_t>() : r.get<std::uint32_t>();
    pi.imm_data = r.get<std::uint32_t>();
    pi.atomic_va = pi.reth_va;
    pi.atomic_rkey = pi.reth_rkey;
    pi.atomic_swap_add = pi.imm_data;
    pi.atomic_compare = pi.reth_dma_len;
    pi.atomic_ack_orig = pi.reth_va;
    qp.on_packet(pi, payload.data(), now);
    now += static_cast<std::uint64_t>(r.get<std::uint8_t>()) * 10'000;
    qp.on_timer(now);
    for (int i = 0; i < 256 && qp.next_packet(now, d); ++i) {
      // Descriptors must point into registered memory (or nowhere).
      // A SACK's bitmap lives in the QP (its rotating SACK buffers): 16 bytes, nothing else.
      if (d.opcode == static_cast<std::uint8_t>(wire::Opcode::kSrAck)) {
        if (d.payload_len != wire::kSackBytes || !sr) __builtin_trap();
      } else if (d.payload_len != 0) {
        const auto* p = d.payload;
        const bool in_local = p >= local.data() && p + d.payload_len <= local.data() + local.size();
        const bool in_mem = p >= mem.data() && p + d.payload_len <= mem.data() + mem.size();
        if (!in_local && !in_mem) __builtin_trap();
      }
    }
    rc::Completion c;
    for (int i = 0; i < 64 && qp.poll_cq(c); ++i) {
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  run(data, size, false);
  run(data, size, true);
  return 0;
}
