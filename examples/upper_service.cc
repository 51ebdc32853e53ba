// upper-service: answers every request with its text in upper case, until the client says BYE
// (or --seconds pass without it: exit 1).
//
//   upper-service [EAL options] -- [--socket PATH] [--seconds N]
#include <droce/engine/core/version.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "upper_link.h"

namespace {

// Replies wait in registered memory until the client acknowledges them: a ring of slots, each
// reused only after its reply's completion.
class Replies {
 public:
  explicit Replies(upper::Link& link) : link_(link), buf_(kSlots * upper::kMaxMessage) {}
  [[nodiscard]] droce::engine::Status register_memory() {
    return link_.memory.register_memory(buf_.data(), buf_.size(), droce::rc::kAccessLocalWrite, mr_);
  }
  [[nodiscard]] bool slot_free() const { return outstanding_ < kSlots; }
  // Sends `text` upper-cased: ok, or why not.
  [[nodiscard]] droce::engine::Status send_upper(const std::uint8_t* text, std::uint32_t len) {
    std::uint8_t* slot = buf_.data() + (next_ % kSlots) * upper::kMaxMessage;
    for (std::uint32_t i = 0; i < len; ++i) slot[i] = static_cast<std::uint8_t>(std::toupper(text[i]));
    droce::engine::Status s = link_.endpoint->send_message(link_.qpn, slot, len, next_++);
    if (!s.ok()) return s;
    ++outstanding_;
    return {};
  }
  // Collects completions from the endpoint's CQ (every QP's; this service has one); ok unless a
  // reply failed (the client is gone or broken).
  [[nodiscard]] droce::engine::Status reap() {
    droce::rc::Completion c[16];
    for (unsigned n = link_.endpoint->poll_cq(c, 16), i = 0; i < n; ++i) {
      --outstanding_;
      if (c[i].status != droce::rc::WcStatus::kSuccess)
        return droce::engine::Status::error(
            droce::engine::StatusCode::kPeer,
            "reply " + std::to_string(c[i].wr_id) + ": " + droce::rc::wc_status_name(c[i].status));
    }
    return {};
  }
  [[nodiscard]] bool all_acknowledged() const { return outstanding_ == 0; }

 private:
  static constexpr std::uint32_t kSlots = 16;
  upper::Link& link_;
  std::vector<std::uint8_t> buf_;
  droce::rc::MemoryRegion mr_;
  std::uint64_t next_ = 0;
  std::uint32_t outstanding_ = 0;
};

// The service proper, run as the endpoint's application stage: every poll calls it between the
// received burst and transmit, so a reply leaves in the same burst as its request's ACK.
struct Service {
  Service(upper::Link& l, Replies& r) : link(l), replies(r) {}
  upper::Link& link;
  Replies& replies;
  std::uint64_t served = 0;
  bool bye = false;
  droce::engine::Status error;  // the first failure; the main loop gives up on it

  void serve() {
    if (!error.ok()) return;
    if (error = replies.reap(); !error.ok()) return;
    droce::engine::MessageView request;
    while (replies.slot_free() && link.endpoint->receive_message(link.qpn, request)) {
      std::uint8_t text[upper::kMaxMessage];
      const std::uint32_t len = request.copy_to(text, sizeof text);
      link.endpoint->release(request);  // the frames go back; the client may send again
      bye = len == std::strlen(upper::kBye) && std::memcmp(text, upper::kBye, len) == 0;
      if (error = replies.send_upper(text, len); !error.ok()) return;
      ++served;
    }
  }
};

int fail(const std::string& why) {
  std::fprintf(stderr, "upper-service: %s\n", why.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  droce::engine::SplitArgs args = droce::engine::split_args(argc, argv);
  std::string socket = "/tmp/upper.sock";
  int seconds = 30;
  for (std::size_t i = 0; i + 1 < args.app.size(); i += 2) {
    if (args.app[i] == "--socket")
      socket = args.app[i + 1];
    else if (args.app[i] == "--seconds")
      seconds = std::atoi(args.app[i + 1].c_str());
    else
      return fail("unknown option " + args.app[i]);
  }
  if (seconds < 1 || seconds > 3600) return fail("--seconds: give 1..3600");
  std::printf("upper-service on droce %s, socket %s\n", DROCE_VERSION_STRING, socket.c_str());

  upper::Link link;
  if (droce::engine::Status s = upper::open_link(true, args.eal, socket, seconds * 1000u, link); !s.ok())
    return fail(s.message());
  Replies replies(link);
  if (droce::engine::Status s = replies.register_memory(); !s.ok()) return fail(s.message());

  Service service(link, replies);
  link.endpoint->set_app_stage([](void* s) { static_cast<Service*>(s)->serve(); }, &service);

  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  // Serve until BYE has been answered and every reply acknowledged.
  while (!(service.bye && replies.all_acknowledged())) {
    if (std::chrono::steady_clock::now() > deadline) return fail("no BYE within " + std::to_string(seconds) + " s");
    link.poll();  // RX, the service, timers, TX
    if (!service.error.ok()) return fail(service.error.message());
  }
  link.endpoint->set_app_stage(nullptr, nullptr);
  const std::uint64_t served = service.served;
  upper::linger(link, 200);
  link.close();
  std::printf("upper-service: served %llu requests\n", static_cast<unsigned long long>(served));
  return 0;
}
