// libFuzzer target: droce-gen's RDMA-CM private data (apps/droce-gen/cm_private.h) from a hostile
// peer: the input is one REQ's or REP's private data, of any length, given to both decoders (a
// heap copy of exactly that length, so that ASan sees a read past it). Properties: a record is
// accepted only when long enough and opening with droce-gen's magic and version, and a refusal
// says why; an accepted one encodes back to its bytes (less what the decoder ignores: the other
// flag bits, the REQ's byte 13, what follows the record) and decodes again to the same values;
// an accepted REP's slot count is at least 1 (the requester divides by it: job.cc).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "apps/droce-gen/cm_private.h"

using namespace droce::gen;

namespace {

bool opens_as_record(const std::vector<std::uint8_t>& m, std::size_t need) {
  return m.size() >= need && m[0] == 'D' && m[1] == 'R' && m[2] == 'G' && m[3] == 'N' && m[4] == kCmVersion;
}

bool same(const CmReq& a, const CmReq& b) {
  return a.propose_sr == b.propose_sr && a.qp_index == b.qp_index && a.qps == b.qps && a.active == b.active &&
         a.op == b.op && a.mtu == b.mtu && a.inflight == b.inflight && a.workload_digest == b.workload_digest &&
         a.run_limit_ms == b.run_limit_ms && a.warmup_ms == b.warmup_ms;
}

bool same(const CmRep& a, const CmRep& b) {
  return a.sr == b.sr && a.qp_index == b.qp_index && a.vaddr == b.vaddr && a.rkey == b.rkey && a.slots == b.slots;
}

void check_req(const std::vector<std::uint8_t>& m) {
  CmReq r;
  const bool ok = decode_cm_req(m.data(), m.size(), r).ok();
  if (ok != opens_as_record(m, kCmReqBytes)) __builtin_trap();
  if (!ok) return;
  std::uint8_t out[kCmReqBytes];
  encode_cm_req(r, out);
  std::uint8_t want[kCmReqBytes];
  std::memcpy(want, m.data(), kCmReqBytes);
  want[5] &= kCmFlagSelectiveRepeat;
  want[13] = 0;
  if (std::memcmp(out, want, kCmReqBytes) != 0) __builtin_trap();
  CmReq again;
  if (!decode_cm_req(out, kCmReqBytes, again).ok() || !same(again, r)) __builtin_trap();
}

void check_rep(const std::vector<std::uint8_t>& m) {
  CmRep r;
  const bool ok = decode_cm_rep(m.data(), m.size(), r).ok();
  if (!ok && opens_as_record(m, kCmRepBytes) && (m[20] | m[21] | m[22] | m[23]) != 0) __builtin_trap();
  if (!ok) return;
  if (!opens_as_record(m, kCmRepBytes) || r.slots == 0) __builtin_trap();
  std::uint8_t out[kCmRepBytes];
  encode_cm_rep(r, out);
  std::uint8_t want[kCmRepBytes];
  std::memcpy(want, m.data(), kCmRepBytes);
  want[5] &= kCmFlagSelectiveRepeat;
  if (std::memcmp(out, want, kCmRepBytes) != 0) __builtin_trap();
  CmRep again;
  if (!decode_cm_rep(out, kCmRepBytes, again).ok() || !same(again, r)) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 256) return 0;  // a REP's private data is 196 bytes, a REQ's 56 after rdma_cm's header
  const std::vector<std::uint8_t> m(data, data + size);
  check_req(m);
  check_rep(m);
  return 0;
}
