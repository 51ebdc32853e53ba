// The responder fixture of the RC rules tests: a QP with a 64 KiB region and a posted receive,
// and helpers that craft the requests the tests feed it.
#pragma once

#include <catch2/catch.hpp>
#include <memory>
#include <vector>

#include "tests/rc/loopback.h"

namespace droce::test {

// A responder QP with a 64 KiB region and a posted receive, ready for crafted requests.
struct Responder {
  rc::MrTable mrs{8};
  std::vector<std::uint8_t> mem = std::vector<std::uint8_t>(65536);
  std::vector<std::uint8_t> rbuf = std::vector<std::uint8_t>(4096);
  rc::MemoryRegion mr, rmr;
  std::unique_ptr<rc::RcQp> qp;
  explicit Responder(std::uint32_t epsn = 100, bool post = true, std::uint32_t max_dest_rd_atomic = 16) {
    mr = *mrs.register_region(mem.data(), mem.size(), rc::kAccessRemoteWrite | rc::kAccessRemoteRead);
    rmr = *mrs.register_region(rbuf.data(), rbuf.size(), rc::kAccessLocalWrite);
    auto a = attr(0x12, 0x11, 1, epsn);
    a.max_dest_rd_atomic = max_dest_rd_atomic;
    qp = std::make_unique<rc::RcQp>(a, mrs);
    REQUIRE(qp->modify(rc::QpState::kInit).ok());
    REQUIRE(qp->modify(rc::QpState::kRtr).ok());
    REQUIRE(qp->modify(rc::QpState::kRts).ok());
    if (post) REQUIRE(qp->post_recv({7, {reinterpret_cast<std::uint64_t>(rbuf.data()), 4096, rmr.lkey}}).ok());
  }
  wire::PacketInfo req(wire::Opcode op, std::uint32_t psn, std::uint32_t len, bool ack_req = true) {
    wire::PacketInfo pi{};
    pi.opcode = static_cast<std::uint8_t>(op);
    pi.psn = psn;
    pi.payload_len = len;
    pi.ack_req = ack_req;
    pi.dest_qpn = 0x12;
    return pi;
  }
  std::vector<rc::TxDescriptor> out(std::size_t max = SIZE_MAX) {
    std::vector<rc::TxDescriptor> v;
    rc::TxDescriptor d;
    while (v.size() < max && qp->next_packet(0, d)) v.push_back(d);
    return v;
  }
  // A WRITE ONLY of `len` bytes at the start of the region.
  wire::PacketInfo write(std::uint32_t psn, std::uint32_t len) {
    auto pi = req(wire::Opcode::kWriteOnly, psn, len);
    pi.reth_va = reinterpret_cast<std::uint64_t>(mem.data());
    pi.reth_rkey = mr.rkey;
    pi.reth_dma_len = len;
    return pi;
  }
  // A READ request for `len` bytes of the region from `offset`.
  wire::PacketInfo read(std::uint32_t psn, std::uint32_t offset, std::uint32_t len) {
    auto pi = req(wire::Opcode::kReadRequest, psn, 0);
    pi.reth_va = reinterpret_cast<std::uint64_t>(mem.data() + offset);
    pi.reth_rkey = mr.rkey;
    pi.reth_dma_len = len;
    return pi;
  }
};

inline std::vector<std::uint8_t> payload(std::uint32_t n) { return std::vector<std::uint8_t>(n, 0x5A); }

}  // namespace droce::test
