// libFuzzer target: arbitrary bytes as a CM MAD and as a RoCEv2 UD frame. Neither parser may
// crash or read past the input; an accepted MAD re-encodes to a fixed point, and drives an active
// and a passive CM state machine (through their timers) without breaking their invariants.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "protocols/cm/cm_connection.h"
#include "protocols/cm/cm_listener.h"
#include "protocols/cm/cm_messages.h"
#include "protocols/cm/rdma_cm_header.h"
#include "protocols/wire/ud.h"

using namespace droce::cm;

namespace {

void check_output(const CmOutput& o) {
  if (o.mad_count > CmOutput::kMaxMads || o.event_count > CmOutput::kMaxEvents) std::abort();
  for (std::uint32_t i = 0; i < o.mad_count; ++i) {  // what a connection sends parses back
    CmMessage m;
    if (decode_cm(o.mads[i], kMadBytes, m) != MadRefusal::kNone) std::abort();
  }
}

// Every timer of `c` runs out; each step must send or say something, and the timers end.
void drain(CmConnection& c, std::uint64_t now) {
  for (int i = 0; i < 64 && c.deadline() != 0; ++i) {
    now = c.deadline();
    check_output(c.on_timer(now));
  }
  if (c.deadline() != 0) std::abort();  // 15 retries at most, then TimeWait, then closed
}

void exercise(const CmMessage& m) {
  // The fixed point: decode(encode(m)) encodes to the same bytes.
  std::uint8_t a[kMadBytes], b[kMadBytes];
  encode_cm(m.body, m.header.tid, a);
  CmMessage again;
  if (decode_cm(a, kMadBytes, again) != MadRefusal::kNone) std::abort();
  encode_cm(again.body, again.header.tid, b);
  if (std::memcmp(a, b, kMadBytes) != 0) std::abort();

  if (const auto* req = std::get_if<CmReq>(&m.body)) {
    RdmaCmHeader h;
    (void)parse_rdma_cm_header(req->private_data, kReqPrivateBytes, h);
    CmListener l;
    (void)l.listen(req->service_id ^ (req->local_comm_id & 1));
    std::uint8_t rej[kMadBytes];
    if (!l.take(m, 2, rej)) {
      CmMessage r;
      if (decode_cm(rej, kMadBytes, r) != MadRefusal::kNone) std::abort();
    }
  }

  CmLocalConfig cfg;
  cfg.qpn = 0x22;
  cfg.max_cm_retries = 3;
  // A passive side that takes the message (a REQ makes it a connection), accepts, then hears it again.
  CmConnection p(CmRole::kPassive, cfg, 2);
  check_output(p.on_message(m, 1));
  check_output(p.accept(nullptr, 0, 2));
  check_output(p.on_message(m, 3));
  drain(p, 3);
  // An active side mid-connect, and one established, hear it.
  CmConnection act(CmRole::kActive, cfg, cm_receiver_comm_id(m.body));
  CmConnectParams cp;
  cp.service_id = 1;
  check_output(act.connect(cp, 1));
  check_output(act.on_message(m, 2));
  if (act.state() == CmState::kEstablished) check_output(act.disconnect(3));
  check_output(act.on_message(m, 4));
  drain(act, 4);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 4096) return 0;
  // An exact-size heap copy so ASan sees any read past the end.
  const std::vector<std::uint8_t> in(data, data + size);
  const auto len = static_cast<std::uint32_t>(in.size());

  CmMessage m;
  const MadRefusal r = decode_cm(in.data(), len, m);
  if (mad_refusal_text(r) == nullptr) std::abort();
  if (r == MadRefusal::kNone) exercise(m);

  // The same bytes as a frame: UD parse with and without the ICRC, then its payload as a MAD.
  for (const bool icrc : {true, false}) {
    droce::wire::UdPacket p;
    droce::wire::DropReason why;
    if (droce::wire::parse_ud_frame(in.data(), len, p, why, icrc) != droce::wire::UdRefusal::kNone) continue;
    if (p.payload_offset + p.payload_len > len) std::abort();
    (void)droce::wire::ud_accept(p, droce::wire::UdQpRules{});
    if (decode_cm(in.data() + p.payload_offset, p.payload_len, m) == MadRefusal::kNone) exercise(m);
  }
  return 0;
}
