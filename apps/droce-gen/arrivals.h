// droce-gen's open-loop schedule: when each message of an offered load is due, independent of
// when the generator manages to post it. Latency is measured from the due time, so a generator
// that falls behind shows its backlog in the latency instead of hiding it (coordinated omission).
#pragma once

#include <cstdint>
#include <random>

namespace droce::gen {

// How the due times are spaced: kConstant, one group every `gap`; kPoisson, exponential gaps of
// that mean (a Poisson process of groups); kOnOff, periodic bursts: in each period the groups come
// evenly spaced during its first `on` ticks and none in the rest, at the peak rate that keeps the
// mean (gap x on / period apart). A group is `burst` messages due at the same instant.
enum class Arrivals { kConstant, kPoisson, kOnOff };

// kOnOff's period: `on` ticks sending, then `off` ticks silent (both > 0).
struct OnOffPeriod {
  double on = 0, off = 0;
};
[[nodiscard]] const char* arrivals_name(Arrivals a);

// The open-loop policy, in nanoseconds of TSC time:
// a message posted more than kLateAfterNs after it was due counts as late;
inline constexpr std::uint64_t kLateAfterNs = 100'000;  // 100 us
// the backlog (due, not yet posted) is bounded by age: a message still unposted kShedAfterNs after
// it was due is shed, never posted, and counted. Up to then it waits its turn, oldest first.
inline constexpr std::uint64_t kShedAfterNs = 1'000'000'000;  // 1 s

// The due times of one stream of messages, in ticks (any unit: the job uses TSC ticks). Holds no
// list: the next due time is computed when the previous message is taken, so a backlog of any
// size costs nothing and nothing is allocated per message. The default-constructed schedule is
// closed loop (enabled() is false).
class ArrivalSchedule {
 public:
  ArrivalSchedule() = default;
  // `mean_gap` ticks between messages on average (> 0); groups of `burst` (>= 1) due together,
  // spaced burst * mean_gap apart on average; `seed` and `stream` pick the Poisson gaps (streams
  // of one seed differ); the first group is due at `start` (kConstant) or one gap after (kPoisson).
  // `onoff` is kOnOff's period (ignored by the others).
  ArrivalSchedule(Arrivals kind, double mean_gap, std::uint32_t burst, std::uint64_t seed, std::uint64_t stream,
                  std::uint64_t start, OnOffPeriod onoff = {});

  [[nodiscard]] bool enabled() const { return group_gap_ > 0; }
  // When the next message is due.
  [[nodiscard]] std::uint64_t due() const { return start_ + static_cast<std::uint64_t>(at_); }
  // The next message was taken (posted): the one after it becomes next.
  void advance();
  // Takes every message due before `t` at once (they are shed) and returns how many. A constant
  // schedule counts them exactly; a Poisson one counts the groups it jumps over by their
  // expectation and draws the next group after `t` afresh (the process is memoryless).
  std::uint64_t skip_before(std::uint64_t t);
  // How many messages are due at or before `t` and not yet taken (Poisson: the groups after the
  // current one by their expectation).
  [[nodiscard]] std::uint64_t due_by(std::uint64_t t) const;

 private:
  // Groups due in the next `span` ticks after the current one (exact when constant).
  [[nodiscard]] std::uint64_t groups_within(double span) const;
  [[nodiscard]] double exponential();  // a unit-mean exponential draw
  // kOnOff: group n's time (ticks after start_), and how many groups come before `t`.
  [[nodiscard]] double onoff_time(std::uint64_t n) const;
  [[nodiscard]] std::uint64_t onoff_groups_before(double t) const;

  Arrivals kind_ = Arrivals::kConstant;
  double group_gap_ = 0;  // mean ticks between groups (0: closed loop)
  std::uint32_t burst_ = 1;
  std::uint32_t left_ = 0;   // messages of the current group not yet taken
  std::uint64_t group_ = 0;  // the current group's number (kConstant: its time is group_ * gap)
  std::uint64_t start_ = 0;
  double at_ = 0;        // the current group's time, ticks after start_
  OnOffPeriod onoff_;    // kOnOff
  double on_gap_ = 0;    // kOnOff: ticks between groups while on
  std::mt19937_64 rng_;  // the Poisson gaps (its sequence is the standard's: a seed repeats a run)
};

}  // namespace droce::gen
