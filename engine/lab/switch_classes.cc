// Class option parsing: strict numbers, every list entry checked, one message naming the option.
#include "engine/lab/switch_classes.h"

#include <charconv>
#include <vector>

namespace droce::engine {

namespace {

// The comma-separated unsigned numbers of `text`, each at most `hi`; at most `max_entries`.
Status numbers(const std::string& opt, const std::string& text, unsigned hi, std::size_t max_entries,
               std::vector<unsigned>& out) {
  out.clear();
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = text.find(',', start);
    const std::size_t end = comma == std::string::npos ? text.size() : comma;
    unsigned v = 0;
    const char* first = text.data() + start;
    const char* last = text.data() + end;
    const auto r = std::from_chars(first, last, v);
    if (first == last || r.ec != std::errc() || r.ptr != last || v > hi)
      return Status::error(StatusCode::kInvalidArgument, opt + ": '" + text.substr(start, end - start) +
                                                             "' is not a number in 0.." + std::to_string(hi));
    if (out.size() == max_entries)
      return Status::error(StatusCode::kInvalidArgument,
                           opt + ": more than " + std::to_string(max_entries) + " entries");
    out.push_back(v);
    if (comma == std::string::npos) return {};
    start = comma + 1;
  }
}

}  // namespace

Status parse_dscp_map(const std::string& text, LabSwitchConfig& c) {
  std::size_t start = 0;
  for (std::size_t entries = 0; entries < 64; ++entries) {
    const std::size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const std::size_t eq = item.find('=');
    std::vector<unsigned> d, p;
    if (eq == std::string::npos)
      return Status::error(StatusCode::kInvalidArgument, "--dscp-map: '" + item + "' is not DSCP=PRIORITY");
    if (Status s = numbers("--dscp-map DSCP", item.substr(0, eq), 63, 1, d); !s.ok()) return s;
    if (Status s = numbers("--dscp-map priority", item.substr(eq + 1), 7, 1, p); !s.ok()) return s;
    c.dscp_priority[d[0]] = static_cast<std::uint8_t>(p[0]);
    if (comma == std::string::npos) return {};
    start = comma + 1;
  }
  return Status::error(StatusCode::kInvalidArgument, "--dscp-map: more than 64 entries");
}

Status parse_priority_queues(const std::string& text, LabSwitchConfig& c) {
  std::vector<unsigned> q;
  if (Status s = numbers("--priority-queues", text, 7, kSwitchClasses, q); !s.ok()) return s;
  if (q.size() != kSwitchClasses)
    return Status::error(StatusCode::kInvalidArgument, "--priority-queues: give eight queues, one per priority");
  for (std::size_t p = 0; p < kSwitchClasses; ++p) c.priority_queue[p] = static_cast<std::uint8_t>(q[p]);
  return {};
}

Status parse_lossless_priorities(const std::string& text, LabSwitchConfig& c) {
  std::vector<unsigned> p;
  if (Status s = numbers("--lossless-priorities", text, 7, kSwitchClasses, p); !s.ok()) return s;
  std::uint8_t mask = 0;
  for (unsigned v : p) mask = static_cast<std::uint8_t>(mask | 1u << v);
  c.lossless_priorities = mask;
  return {};
}

Status parse_scheduler(const std::string& text, LabSwitchConfig& c) {
  if (text == "strict") {
    c.scheduler = SwitchScheduler::kStrict;
    return {};
  }
  if (text == "weighted") {
    c.scheduler = SwitchScheduler::kWeighted;
    c.queue_weights.fill(1);
    return {};
  }
  const std::string prefix = "weighted:";
  if (text.rfind(prefix, 0) != 0)
    return Status::error(StatusCode::kInvalidArgument,
                         "--scheduler: '" + text + "' is not strict, weighted or weighted:W0,..,W7");
  std::vector<unsigned> w;
  if (Status s = numbers("--scheduler weight", text.substr(prefix.size()), 1000, kSwitchClasses, w); !s.ok()) return s;
  if (w.size() != kSwitchClasses)
    return Status::error(StatusCode::kInvalidArgument, "--scheduler: give eight weights, one per queue");
  for (std::size_t q = 0; q < kSwitchClasses; ++q) {
    if (w[q] == 0) return Status::error(StatusCode::kInvalidArgument, "--scheduler: a weight must be 1..1000");
    c.queue_weights[q] = w[q];
  }
  c.scheduler = SwitchScheduler::kWeighted;
  return {};
}

}  // namespace droce::engine
