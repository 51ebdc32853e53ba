// EndpointCm: RDMA-CM over the GSI QP1 on an RcEndpoint's port queue (docs/cm.md). It takes the
// UD frames addressed to QP1, checks them (ICRC, P_Key, Q_Key, MAD header), hands each CM
// message to the connection it names (protocols/cm CmConnection), sends their MADs back as UD
// SENDs to the peer's QP1 (through the endpoint's ControlFrames), runs their timers from the poll,
// and moves the bound RC QPs through the endpoint's CmQpControl: to RTR and RTS with the
// parameters agreed in REQ/REP, to ERROR on a disconnect. The RcEndpoint owns it and calls it
// from its poll (single-threaded, like the endpoint).
#pragma once

#include <cstdint>
#include <memory>

#include "engine/core/status.h"
#include "engine/endpoint/cm_qp_control.h"
#include "engine/endpoint/control_frames.h"
#include "engine/endpoint/endpoint_config.h"
#include "protocols/cm/cm_connection.h"
#include "protocols/cm/cm_listener.h"
#include "protocols/cm/mad.h"
#include "protocols/rc/qp_attr.h"
#include "protocols/wire/build.h"
#include "protocols/wire/ud.h"

namespace droce::engine {

// What the consumer learns from the CM, in order (RcEndpoint::cm_next_event).
enum class CmEndpointEventKind : std::uint8_t {
  kConnectRequest,  // passive: a REQ for a listened port; answer with cm_accept or cm_reject
  kEstablished,     // both: the QP is connected (RTS) with the agreed parameters
  kRejected,        // the peer rejected us (by_peer), or we rejected its REQ
  kTimedOut,        // REQ or REP went unanswered through every retry
  kDisconnected,    // DREQ/DREP done either way (by_peer: the peer asked); the QP is in ERROR
  kClosed,          // TimeWait is over: the connection's slot is free again
};
[[nodiscard]] const char* cm_endpoint_event_name(CmEndpointEventKind k);

struct CmEndpointEvent {
  CmEndpointEventKind kind = CmEndpointEventKind::kClosed;
  std::uint32_t conn = 0;  // the connection (our communication ID)
  std::uint32_t qpn = 0;   // the RC QP bound to it (0 before cm_accept)
  std::uint16_t reject_reason = 0;
  bool by_peer = false;
  bool timed_out = false;
  wire::L2L3Address peer;       // the peer's MAC and IP (IPv4 in the first 4 bytes)
  std::uint16_t port = 0;       // the service port (RDMA_PS_TCP) asked for
  std::uint16_t peer_port = 0;  // the active side's own port (the rdma_cm header's source port)
  cm::CmQpParams params;        // kConnectRequest: what REQ offers; kEstablished: what the QP uses
  // kConnectRequest: the consumer's REQ private data after the rdma_cm header (56 bytes: a REQ
  // carries no length, so what the peer did not write reads as zeros); kEstablished on the
  // active side: the REP's private data (196 bytes, the passive consumer's cm_accept bytes).
  std::uint8_t private_data[cm::kRepPrivateBytes] = {};
  std::uint32_t private_len = 0;
};

// Where an active connection goes: the peer's addresses (its MAC resolved, e.g. by ARP) and the
// rdma_cm port, with up to 56 bytes of the consumer's private data after the rdma_cm header.
struct CmConnectTo {
  wire::L2L3Address peer;
  std::uint16_t port = 0;
  std::uint16_t src_port = 0;  // 0: one is picked (an ephemeral port, as rdma_cm binds one)
  const std::uint8_t* private_data = nullptr;
  std::uint32_t private_len = 0;
  // Called at the REP, while the QP is still in INIT (before RTR and RTS), with the REP's private
  // data: the recovery the QP then uses (set_recovery), so that the passive consumer's answer can
  // decide it (e.g. selective repeat only when the peer accepted it). nullptr: the QP keeps its own.
  rc::Recovery (*recovery_at_rep)(const std::uint8_t* rep_private, std::uint32_t len) = nullptr;
};

// Counters of QP1 (in the endpoint's JSON and telemetry beside its other counters).
struct CmCounters {
  std::uint64_t mads_received = 0;  // CM MADs taken (any attribute)
  std::uint64_t mads_sent = 0;
  std::uint64_t mad_tx_failures = 0;                     // pool empty or TX backlog full: the CM's timer resends
  std::uint64_t ud_refused[wire::kUdRefusalCount] = {};  // UD frames refused, by rule
  std::uint64_t mad_refused[cm::kMadRefusalCount] = {};  // MADs refused, by rule
  std::uint64_t unknown_connection = 0;                  // a message naming no connection of ours
  std::uint64_t wrong_peer = 0;                          // a message for a connection from another address
  std::uint64_t bad_rdma_cm_header = 0;                  // a REQ whose private data is no rdma_cm header (REJ)
  std::uint64_t table_full = 0;                          // a REQ that found no free connection slot (REJ no resources)
  std::uint64_t half_open_evicted = 0;                   // half-open passive connections dropped for a new REQ
  std::uint64_t rejects_sent = 0;                        // REJ for REQs nobody listens for, or refused
  std::uint64_t events_lost = 0;                         // events the consumer did not take before the queue filled
};

// The scalar counters by name, for reports and telemetry (the refusal arrays are named by
// wire::ud_refusal_name and cm::mad_refusal_name: "cm_ud_<name>", "cm_mad_<name>").
struct CmCounterField {
  const char* name;
  std::uint64_t CmCounters::*member;
};
inline constexpr CmCounterField kCmCounterFields[] = {
    {"cm_mads_received", &CmCounters::mads_received},     {"cm_mads_sent", &CmCounters::mads_sent},
    {"cm_mad_tx_failures", &CmCounters::mad_tx_failures}, {"cm_unknown_connection", &CmCounters::unknown_connection},
    {"cm_wrong_peer", &CmCounters::wrong_peer},           {"cm_bad_rdma_cm_header", &CmCounters::bad_rdma_cm_header},
    {"cm_table_full", &CmCounters::table_full},           {"cm_rejects_sent", &CmCounters::rejects_sent},
    {"cm_events_lost", &CmCounters::events_lost},         {"cm_half_open_evicted", &CmCounters::half_open_evicted},
};

class EndpointCm {
 public:
  static constexpr std::uint32_t kMaxConnections = 64;
  static constexpr std::uint32_t kEventQueue = 256;

  // `cfg`, `out` and `qps` are the owning endpoint's and outlive this.
  EndpointCm(const EndpointConfig& cfg, ControlFrames& out, CmQpControl& qps);
  ~EndpointCm();
  EndpointCm(const EndpointCm&) = delete;
  EndpointCm& operator=(const EndpointCm&) = delete;

  // A UD frame (BTH opcode 0x64/0x65) the RC parser refused: checks and dispatches it.
  void on_frame(const std::uint8_t* frame, std::uint32_t len, std::uint64_t now_ns, std::uint64_t now_tsc);
  // Every poll: timers that came due (one compare when none did).
  void poll(std::uint64_t now_ns, std::uint64_t now_tsc) {
    now_ns_ = now_ns;
    if (now_ns >= next_deadline_) run_timers(now_ns, now_tsc);
  }
  // The passive side's first packet on a QP still waiting for the RTU (§12.9.7: it stands for it).
  void on_qp_traffic(std::uint32_t qpn, std::uint64_t now_tsc);
  // Several workers: the port owner's CM moves QPs through `qps` (which hands each move to the QP's
  // worker) instead of its own endpoint's; another worker's CM tells `notice` of the first packet
  // of a QP none of its connections holds. Set before the workers run.
  void route_qps(CmQpControl& qps) { qps_ = &qps; }
  void forward_traffic(CmTrafficNotice* notice) { forward_ = notice; }

  [[nodiscard]] Status listen(std::uint16_t port);
  [[nodiscard]] Status connect(std::uint32_t qpn, const CmConnectTo& to, std::uint32_t& conn);
  [[nodiscard]] Status accept(std::uint32_t conn, std::uint32_t qpn, const std::uint8_t* priv, std::uint32_t len);
  [[nodiscard]] Status reject(std::uint32_t conn);
  [[nodiscard]] Status disconnect(std::uint32_t conn);
  [[nodiscard]] bool next_event(CmEndpointEvent& out);
  // The state of a connection ("closed" for one we do not have).
  [[nodiscard]] cm::CmState state(std::uint32_t conn) const;
  [[nodiscard]] const CmCounters& counters() const { return c_; }
  // Connections in use (not closed).
  [[nodiscard]] std::uint32_t active() const;

 private:
  struct Conn;
  // Connection `conn`'s slot in conns_ (kMaxConnections: none).
  [[nodiscard]] std::uint32_t index_of(std::uint32_t conn) const;
  Conn* find(std::uint32_t conn);
  [[nodiscard]] const Conn* find(std::uint32_t conn) const;
  Conn* find_by_qpn(std::uint32_t qpn);
  Conn* free_slot();
  // With the table full, a REQ takes the slot of the oldest half-open passive connection (REQ
  // received, REP sent: what a forged REQ leaves), as a SYN cache drops its oldest entry; nullptr
  // when every connection is established or active.
  Conn* evict_half_open(std::uint64_t now_ns, std::uint64_t now_tsc);
  std::uint32_t new_comm_id() const;
  [[nodiscard]] cm::CmLocalConfig local_config(std::uint32_t qpn, Status& err) const;
  void on_req(const wire::UdPacket& p, const cm::CmMessage& m, std::uint64_t now_tsc);
  // Sends the step's MADs and turns its events into the consumer's (moving the QP as they say).
  void apply(Conn& c, const cm::CmOutput& o, std::uint64_t now_tsc);
  bool send_mad(const wire::L2L3Address& peer, std::uint16_t pkey, const std::uint8_t* mad, std::uint64_t now_tsc);
  void push_event(const CmEndpointEvent& e);
  void run_timers(std::uint64_t now_ns, std::uint64_t now_tsc);
  void recompute_deadline();
  // The CM's time for a consumer's call: the last poll's (the clock the endpoint runs on, which
  // a lab may drive), or the TSC's before the first poll.
  [[nodiscard]] std::uint64_t api_now_ns() const;

  const EndpointConfig& cfg_;
  ControlFrames& out_;
  CmQpControl* qps_;
  CmTrafficNotice* forward_ = nullptr;
  std::unique_ptr<Conn[]> conns_;
  cm::CmListener listener_;
  std::unique_ptr<CmEndpointEvent[]> events_;
  std::uint32_t ev_head_ = 0, ev_len_ = 0;
  std::uint64_t next_deadline_ = UINT64_MAX;
  std::uint64_t now_ns_ = 0;
  std::uint16_t ip_id_ = 0;
  std::uint16_t next_src_port_ = 0;
  CmCounters c_;
};

}  // namespace droce::engine
