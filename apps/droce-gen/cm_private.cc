// droce-gen's RDMA-CM private data (see cm_private.h). Byte layout, big-endian:
//   REQ  0 magic "DRGN" | 4 version | 5 flags | 6 qp_index u16 | 8 qps u16 | 10 active u16 |
//        12 op u8 | 13 zero | 14 mtu u16 | 16 inflight u32 | 20 workload digest u64 |
//        28 run limit ms u64 | 36 warm-up ms u64 | 44 (the rest of the 56 bytes: zeros)
//   REP  0 magic "DRGN" | 4 version | 5 flags | 6 qp_index u16 | 8 vaddr u64 | 16 rkey u32 |
//        20 slots u32 | 24 (the rest of the 196 bytes: zeros)
#include "apps/droce-gen/cm_private.h"

#include <cstdio>

namespace droce::gen {

namespace {

template <typename T>
void put(std::uint8_t* p, T v) {
  for (std::size_t i = 0; i < sizeof(T); ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * (sizeof(T) - 1 - i)));
}
template <typename T>
T get(const std::uint8_t* p) {
  T v = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) v = static_cast<T>((v << 8) | p[i]);
  return v;
}

void put_head(std::uint8_t* p, bool flag, std::uint16_t qp_index) {
  put<std::uint32_t>(p, kCmMagic);
  p[4] = kCmVersion;
  p[5] = flag ? kCmFlagSelectiveRepeat : 0;
  put<std::uint16_t>(p + 6, qp_index);
}

// The magic, then the version: a REQ of another application (or of no consumer: zeros) has no
// magic; a droce-gen of another record version says which.
Status check_head(const std::uint8_t* in, std::size_t len, std::size_t need, const char* what) {
  if (len < need)
    return Status::error(StatusCode::kPeer,
                         std::string(what) + " private data too short (" + std::to_string(len) + " bytes)");
  const auto magic = get<std::uint32_t>(in);
  if (magic != kCmMagic) {
    char b[120];
    std::snprintf(b, sizeof(b), "%s private data opens with 0x%08x, not droce-gen's 0x%08x (\"DRGN\")", what,
                  static_cast<unsigned>(magic), static_cast<unsigned>(kCmMagic));
    return Status::error(StatusCode::kPeer, b);
  }
  if (in[4] != kCmVersion)
    return Status::error(StatusCode::kPeer, std::string(what) + " private data of version " + std::to_string(in[4]) +
                                                ", this droce-gen speaks " + std::to_string(kCmVersion));
  return {};
}

}  // namespace

void encode_cm_req(const CmReq& r, std::uint8_t out[kCmReqBytes]) {
  put_head(out, r.propose_sr, r.qp_index);
  put<std::uint16_t>(out + 8, r.qps);
  put<std::uint16_t>(out + 10, r.active);
  out[12] = r.op;
  out[13] = 0;
  put<std::uint16_t>(out + 14, r.mtu);
  put<std::uint32_t>(out + 16, r.inflight);
  put<std::uint64_t>(out + 20, r.workload_digest);
  put<std::uint64_t>(out + 28, r.run_limit_ms);
  put<std::uint64_t>(out + 36, r.warmup_ms);
}

void encode_cm_rep(const CmRep& r, std::uint8_t out[kCmRepBytes]) {
  put_head(out, r.sr, r.qp_index);
  put<std::uint64_t>(out + 8, r.vaddr);
  put<std::uint32_t>(out + 16, r.rkey);
  put<std::uint32_t>(out + 20, r.slots);
}

Status decode_cm_req(const std::uint8_t* in, std::size_t len, CmReq& out) {
  if (Status s = check_head(in, len, kCmReqBytes, "REQ"); !s.ok()) return s;
  out.propose_sr = (in[5] & kCmFlagSelectiveRepeat) != 0;
  out.qp_index = get<std::uint16_t>(in + 6);
  out.qps = get<std::uint16_t>(in + 8);
  out.active = get<std::uint16_t>(in + 10);
  out.op = in[12];
  out.mtu = get<std::uint16_t>(in + 14);
  out.inflight = get<std::uint32_t>(in + 16);
  out.workload_digest = get<std::uint64_t>(in + 20);
  out.run_limit_ms = get<std::uint64_t>(in + 28);
  out.warmup_ms = get<std::uint64_t>(in + 36);
  return {};
}

Status decode_cm_rep(const std::uint8_t* in, std::size_t len, CmRep& out) {
  if (Status s = check_head(in, len, kCmRepBytes, "REP"); !s.ok()) return s;
  // The requester takes its remote slot as a count modulo this (job.cc): none is no buffer at all,
  // refused as the TCP exchange's MR line refuses it.
  const auto slots = get<std::uint32_t>(in + 20);
  if (slots == 0) return Status::fail(StatusCode::kPeer, "REP private data announces a responder buffer of 0 slots");
  out.sr = (in[5] & kCmFlagSelectiveRepeat) != 0;
  out.qp_index = get<std::uint16_t>(in + 6);
  out.vaddr = get<std::uint64_t>(in + 8);
  out.rkey = get<std::uint32_t>(in + 16);
  out.slots = slots;
  return {};
}

std::uint64_t workload_digest(const std::string& line) {
  std::uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a 64 offset basis and prime
  for (unsigned char ch : line) {
    h ^= ch;
    h *= 0x100000001b3ull;
  }
  return h;
}

}  // namespace droce::gen
