// droce-gen's RDMA-CM private data (--connect cm, docs/droce-gen.md "Connecting over RDMA-CM"):
// what the TCP exchange's lines carry, as two small big-endian records. The client's REQ carries
// its workload (which the server must run too), its run length and its recovery proposal, in the
// 56 bytes a REQ leaves after the rdma_cm header; the server's REP carries its answer and the
// responder's buffer (address, rkey, slots) in the 196 bytes of REP private data. Both open with
// a magic and a version, so that a REQ from anything but a droce-gen client is refused.
#pragma once

#include <droce/engine/core/status.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace droce::gen {

inline constexpr std::uint32_t kCmMagic = 0x4452474E;  // "DRGN"
inline constexpr std::uint8_t kCmVersion = 1;
inline constexpr std::size_t kCmReqBytes = 44;                // of the REQ's 56 (rdma_cm leaves 56 after its header)
inline constexpr std::size_t kCmRepBytes = 24;                // of the REP's 196
inline constexpr std::uint8_t kCmFlagSelectiveRepeat = 0x01;  // REQ: proposed; REP: in use

// REQ, client to server: one per QP of the run.
struct CmReq {
  bool propose_sr = false;
  std::uint16_t qp_index = 0;  // this connection is the run's QP qp_index
  std::uint16_t qps = 0;
  std::uint16_t active = 0;
  std::uint8_t op = 0;  // gen::Op's value
  std::uint16_t mtu = 0;
  std::uint32_t inflight = 0;
  std::uint64_t workload_digest = 0;  // of the whole workload line (sizes included): workload_digest()
  std::uint64_t run_limit_ms = 0;     // how long the client may run, after its warm-up
  std::uint64_t warmup_ms = 0;
};

// REP, server to client: the answer for that QP.
struct CmRep {
  bool sr = false;  // the recovery both use: selective repeat, else go-back-N
  std::uint16_t qp_index = 0;
  std::uint64_t vaddr = 0;  // the responder's buffer: WRITE target, READ source, atomic counter
  std::uint32_t rkey = 0;
  std::uint32_t slots = 0;  // at least 1 (decode_cm_rep refuses 0)
};

void encode_cm_req(const CmReq& r, std::uint8_t out[kCmReqBytes]);
void encode_cm_rep(const CmRep& r, std::uint8_t out[kCmRepBytes]);
// Ok, or kPeer and why the bytes are no droce-gen record of this version (the reader's words).
[[nodiscard]] engine::Status decode_cm_req(const std::uint8_t* in, std::size_t len, CmReq& out);
[[nodiscard]] engine::Status decode_cm_rep(const std::uint8_t* in, std::size_t len, CmRep& out);
// 64-bit FNV-1a of a workload line: equal lines, equal digests (a mismatch is told, not located).
[[nodiscard]] std::uint64_t workload_digest(const std::string& line);

}  // namespace droce::gen
