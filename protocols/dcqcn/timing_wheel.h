// TimingWheel: O(1) scheduling of QP ids by send time, fixed capacity, no allocation after creation.
#pragma once

#include <cstdint>
#include <vector>

namespace droce::dcqcn {

// A single-level hashed wheel of `slots` buckets, each `tick` units wide (ns in the simulator,
// TSC cycles in the engine). Entries are ids in [0, max_ids) linked through a preallocated
// array. An id due beyond the wheel's horizon lands in the bucket of its time modulo the
// wheel and is left there until its turn (the time is kept per id). An id is scheduled at
// most once; rescheduling moves it.
class TimingWheel {
 public:
  TimingWheel(std::uint32_t max_ids, std::uint32_t slots, std::uint64_t tick)
      : tick_(tick == 0 ? 1 : tick),
        mask_(round_pow2(slots) - 1),
        heads_(mask_ + 1, kNone),
        next_(max_ids, kNone),
        prev_(max_ids, kNone),
        when_(max_ids, 0),
        queued_(max_ids, 0) {}

  // Schedules `id` at `when` (not before the current time: past times fire on the next poll).
  void schedule(std::uint32_t id, std::uint64_t when) {
    if (id >= next_.size()) return;
    if (queued_[id]) unlink(id);
    if (when < now_) when = now_;
    when_[id] = when;
    const std::uint32_t b = static_cast<std::uint32_t>((when / tick_) & mask_);
    next_[id] = heads_[b];
    prev_[id] = kNone;
    if (heads_[b] != kNone) prev_[heads_[b]] = id;
    heads_[b] = id;
    queued_[id] = 1;
    ++size_;
  }
  void cancel(std::uint32_t id) {
    if (id < next_.size() && queued_[id]) unlink(id);
  }
  [[nodiscard]] bool scheduled(std::uint32_t id) const { return id < queued_.size() && queued_[id]; }
  [[nodiscard]] std::uint32_t size() const { return size_; }

  // Moves time to `now` and writes up to `max` due ids (time <= now) to `out`; returns how
  // many. Buckets are visited tick by tick, at most one full turn per call.
  std::uint32_t poll(std::uint64_t now, std::uint32_t* out, std::uint32_t max) {
    std::uint32_t n = 0;
    if (now < now_) now = now_;
    const std::uint64_t first = now_ / tick_, last = now / tick_;
    const std::uint64_t turns = last - first > mask_ ? mask_ : last - first;
    for (std::uint64_t t = 0; t <= turns && n < max; ++t) {
      const std::uint32_t b = static_cast<std::uint32_t>((first + t) & mask_);
      std::uint32_t id = heads_[b];
      while (id != kNone && n < max) {
        const std::uint32_t nx = next_[id];
        if (when_[id] <= now) {
          unlink(id);
          out[n++] = id;
        }
        id = nx;
      }
      // Stop advancing past a bucket we could not drain completely.
      if (n == max) {
        now_ = (first + t) * tick_;
        return n;
      }
    }
    now_ = now;
    return n;
  }

 private:
  static constexpr std::uint32_t kNone = 0xFFFFFFFFu;
  static std::uint32_t round_pow2(std::uint32_t v) {
    std::uint32_t p = 1;
    while (p < v && p < (1u << 30)) p <<= 1;
    return p;
  }
  void unlink(std::uint32_t id) {
    const std::uint32_t b = static_cast<std::uint32_t>((when_[id] / tick_) & mask_);
    if (prev_[id] != kNone)
      next_[prev_[id]] = next_[id];
    else
      heads_[b] = next_[id];
    if (next_[id] != kNone) prev_[next_[id]] = prev_[id];
    next_[id] = prev_[id] = kNone;
    queued_[id] = 0;
    --size_;
  }

  std::uint64_t tick_;
  std::uint32_t mask_;
  std::uint64_t now_ = 0;
  std::uint32_t size_ = 0;
  std::vector<std::uint32_t> heads_, next_, prev_;
  std::vector<std::uint64_t> when_;
  std::vector<std::uint8_t> queued_;
};

}  // namespace droce::dcqcn
