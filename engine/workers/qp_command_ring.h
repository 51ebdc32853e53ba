// QpCommandRing: one worker's control ring (docs/cm.md, "One CM per port"). The port owner's CM
// moves a QP of another worker only by posting a command here, and that worker executes it in its
// poll; a worker tells the port owner's CM that a waiting QP saw its first packet the same way. So
// no QP, and no CM connection, is written by two threads. A DPDK rte_ring of fixed-size elements:
// any thread posts, only the ring's worker takes.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>

#include "engine/core/status.h"
#include "protocols/cm/cm_connection.h"
#include "protocols/rc/qp_attr.h"
#include "protocols/wire/build.h"

struct rte_ring;

namespace droce::engine {

// What CmQpControl asks (cm_qp_control.h), as data; kTrafficSeen goes the other way, to the port
// owner: QP `qpn` of the posting worker received its first packet while it waited for the RTU.
struct alignas(8) QpCommand {
  enum class Kind : std::uint8_t { kSetRecovery, kConnectAgreed, kSetError, kWaitForTraffic, kTrafficSeen };
  Kind kind = Kind::kSetError;
  bool waiting = false;     // kWaitForTraffic
  rc::Recovery recovery{};  // kSetRecovery
  std::uint32_t qpn = 0;    // every kind
  wire::L2L3Address peer;   // kConnectAgreed
  cm::CmQpParams agreed;    // kConnectAgreed
};
// rte_ring copies elements as 4-byte words.
static_assert(std::is_trivially_copyable_v<QpCommand> && sizeof(QpCommand) % 4 == 0);

class QpCommandRing {
 public:
  // `tag` names the ring (rte_ring names are global to the EAL instance); `size` commands.
  [[nodiscard]] static std::unique_ptr<QpCommandRing> create(const std::string& tag, std::uint32_t size, Status& err);
  ~QpCommandRing();
  QpCommandRing(const QpCommandRing&) = delete;
  QpCommandRing& operator=(const QpCommandRing&) = delete;

  // Any thread. False when the ring is full (the caller counts it and says so).
  [[nodiscard]] bool post(const QpCommand& c);
  // The ring's worker only: up to `max` commands, in the order they were posted.
  [[nodiscard]] unsigned take(QpCommand* out, unsigned max);

 private:
  QpCommandRing() = default;
  rte_ring* ring_ = nullptr;
};

}  // namespace droce::engine
