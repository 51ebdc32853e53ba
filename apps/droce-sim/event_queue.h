// EventQueue: the simulator's virtual-time agenda — a binary heap with a FIFO tie-break, so equal
// timestamps always pop in insertion order and a run is identical for the same seed.
#pragma once

#include <cstdint>
#include <queue>
#include <vector>

namespace droce::sim {

enum class EventType : std::uint8_t {
  kSenderSend,
  kSwitchArrive,
  kPortTxDone,
  kReceiverArrive,
  kCnpArrive,
  kSample,
  kHostPause,  // PFC XOFF (b=1) / XON (b=0) reaching a sender's NIC
  kPortPause,  // ... reaching a switch egress port
  kAckArrive,  // an ACK, NAK or SACK reaching its sender (b: kind, c: PSN, d: the PSN that arrived)
  kAckTimer,   // a sender's ACK timer may have expired
};

struct Event {
  std::uint64_t time_ns;
  std::uint64_t seq;  // insertion order: the tie-break that makes runs deterministic
  EventType type;
  std::uint32_t a;  // flow or port index
  std::uint32_t b;  // packet bytes or flags
  std::uint64_t c;  // a data packet's PSN, or an acknowledgement's
  std::uint64_t d;
};

class EventQueue {
 public:
  void push(std::uint64_t t, EventType type, std::uint32_t a = 0, std::uint32_t b = 0, std::uint64_t c = 0,
            std::uint64_t d = 0) {
    heap_.push(Event{t, seq_++, type, a, b, c, d});
  }
  [[nodiscard]] bool empty() const { return heap_.empty(); }
  Event pop() {
    Event e = heap_.top();
    heap_.pop();
    return e;
  }
  [[nodiscard]] std::uint64_t processed() const { return seq_; }

 private:
  struct Later {
    bool operator()(const Event& x, const Event& y) const {
      return x.time_ns != y.time_ns ? x.time_ns > y.time_ns : x.seq > y.seq;
    }
  };
  std::priority_queue<Event, std::vector<Event>, Later> heap_;
  std::uint64_t seq_ = 0;
};

}  // namespace droce::sim
