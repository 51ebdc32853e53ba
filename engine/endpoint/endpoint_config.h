// EndpointConfig: what an RcEndpoint is built from, grouped the way an embedder decides it —
// where it runs (port, queue, pools, memory), who it is on the wire (addresses and the receive
// checks that go with them), transport limits, congestion control (DCQCN), flow control (PFC),
// and what it records (counters, capture). RcEndpoint::create checks it and names the first
// field that is out of range.
#pragma once

#include <rte_mempool.h>

#include <cstdint>

#include "engine/core/capture.h"
#include "engine/core/counters.h"
#include "engine/core/memory_region.h"
#include "engine/core/status.h"
#include "protocols/dcqcn/params.h"
#include "protocols/wire/build.h"

namespace droce::engine {

// Where the endpoint runs and the memory it uses.
struct EndpointQueues {
  std::uint16_t port_id = 0;
  std::uint16_t queue = 0;           // its RX and TX queue on the port
  rte_mempool* pool = nullptr;       // header and trailer mbufs (and copies when not zero-copy)
  MemoryRegistry* memory = nullptr;  // application memory: keys, bounds, extbuf attach
  // An in-process lab's link instead of an ethdev (engine/lab/ring_fabric.h): frames leave into
  // this ring (single producer: the endpoint's thread) and the owner hands received ones to
  // poll_received(). port_id is then only the endpoint's number in telemetry, not an ethdev.
  struct rte_ring* tx_ring = nullptr;
};

// Who the endpoint is on the wire, and the receive checks on every frame routed to a QP (each
// failure is its own counted drop reason): the BTH P_Key must match the QP's (IBTA §10.9.3,
// full-member rules), the source IP must be the connected peer's and the destination IP ours,
// and the destination MAC must be ours unless the port runs promiscuous.
struct EndpointAddresses {
  wire::L2L3Address local;
  bool ipv6 = false;          // RoCEv2 over IPv6 (addresses are 16 bytes) instead of IPv4
  std::uint16_t vlan_id = 0;  // 0: untagged; else an 802.1Q tag with vlan_pcp (1..4094)
  std::uint8_t vlan_pcp = 0;  // 0..7
  std::uint8_t dscp = 0;      // 0..63; data always leaves ECT(0)
  bool check_pkey = true;
  // Set when the port takes frames for any MAC on purpose (the apps: their peers may address us
  // by a MAC other than local.mac); a port the PMD reports promiscuous is treated the same.
  bool promiscuous = false;
};

// Transport limits and how frames are built.
inline constexpr std::uint32_t kMaxEndpointQps = 1u << 20;  // slot table and timer wheels scale with it
struct EndpointTransport {
  std::uint32_t qpn_base = 0x11;  // QPNs are base + index: the lookup is an array index
  std::uint32_t max_qps = 64;     // 1..kMaxEndpointQps; qpn_base + max_qps within 24 bits
  bool zero_copy_tx = true;       // attach payloads as external buffers (needs multi-seg TX)
  // Payloads up to this many bytes are copied into the header mbuf instead (what verbs calls
  // max_inline_data): for a small payload one copy and a one-pass ICRC cost less than the extbuf
  // attach, two more mbufs and the split ICRC's combine step (callgrind: the combine alone was the
  // largest single cost of a 64-byte SEND). 0: attach every payload. The header mbuf must hold
  // it beside the largest headers, pad and ICRC (create checks against the pool's data room).
  std::uint32_t tx_inline_bytes = 256;
  // The QPs' timers (ACK timeout, RNR wait) run on a clock that advances by at most this much
  // between two polls. A longer gap means this process was not running (descheduled on a busy
  // machine): the ACKs and responses that arrived meanwhile wait unread in the RX ring, and on a
  // plain clock every QP whose frames are not in the first burst would time out at once. 0: the
  // QPs see the poll's time unchanged.
  std::uint64_t max_poll_gap_ns = 1'000'000;
};

// Congestion control (DCQCN). The reaction point paces each QP's data at its DCQCN rate and cuts
// it on CNPs; the notification point answers CE-marked packets with CNPs.
struct EndpointDcqcn {
  bool reaction_point = false;                              // --cc dcqcn
  bool notification_point = true;                           // answer CE marks with CNPs (what RoCE NICs do by default)
  dcqcn::DcqcnParams params = dcqcn::DcqcnParams::paper();  // line_rate_bps is the pacer's ceiling
  // Idle credit a paced QP may bank, so a poll loop that runs late does not lose rate.
  std::uint64_t pacer_burst_ns = 2'000;
};

// PFC (IEEE 802.1Qbb): the priority this endpoint's traffic uses (the VLAN PCP when tagged) and
// the link rate that converts pause quanta to time (0: the port's reported speed, else 10 Gb/s).
struct EndpointPfc {
  bool honour = true;
  std::uint8_t priority = 3;  // 0..7
  double link_bps = 0;
  // The PFC watchdog, as NICs have one against a pause storm (a peer that pauses for ever): held
  // by pauses longer than this, transmit stops honouring them until none has come for as long
  // (0: off). Counted as pfc_watchdog_trips, _restores and _ignored (pause frames not obeyed).
  double watchdog_ms = 0;
};

// What the endpoint records besides its own counters (both optional).
struct EndpointRecording {
  QueueCounters* counters = nullptr;  // RX drops by reason, TX packets/bytes
  PcapngCapture* capture = nullptr;   // every frame sent and received, as on the wire
};

struct EndpointConfig {
  EndpointQueues queues;
  EndpointAddresses addresses;
  EndpointTransport transport;
  EndpointDcqcn dcqcn;
  EndpointPfc pfc;
  EndpointRecording recording;
};

// Ok, or kInvalidArgument naming the first field out of range (control path: checks the port
// and queue exist).
[[nodiscard]] Status validate(const EndpointConfig& cfg);

}  // namespace droce::engine
