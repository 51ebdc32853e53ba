// Signal handling for clean shutdown: only async-signal-safe work inside the handler.
#include "engine/core/stop_signal.h"

#include <signal.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>

namespace droce::engine {
namespace {
std::atomic<bool> g_stop{false};
std::atomic<int> g_signals{0};
std::atomic<bool> g_end_tcp_waits{false};
std::atomic<int64_t> g_first_signal_ns{0};

// One Ctrl-C often arrives twice: timeout(1) passes a signal on to its child and then to its whole
// process group, and a terminal signals that group too. A repeat this soon after the first is taken
// as the same request; a person's second Ctrl-C comes later and gives up at once.
constexpr int64_t kSameRequestNs = 1'000'000'000;

// clock_gettime is async-signal-safe (POSIX.1-2008 2.4.3).
int64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// getsockopt and shutdown are async-signal-safe (POSIX.1-2008 2.4.3). The fd table is scanned up to
// a bound far above what these apps open (a few dozen).
void shut_down_tcp_sockets() {
  constexpr int kMaxFd = 4096;
  for (int fd = 3; fd < kMaxFd; ++fd) {
    int type = 0, domain = 0;
    socklen_t len = sizeof(type);
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_STREAM) continue;
    len = sizeof(domain);
    if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0 || (domain != AF_INET && domain != AF_INET6))
      continue;
    (void)shutdown(fd, SHUT_RDWR);
  }
}

void on_signal(int) {
  g_stop.store(true, std::memory_order_relaxed);
  const int64_t now = monotonic_ns();
  if (g_signals.fetch_add(1, std::memory_order_relaxed) == 0) {
    g_first_signal_ns.store(now, std::memory_order_relaxed);
  } else if (now - g_first_signal_ns.load(std::memory_order_relaxed) >= kSameRequestNs) {
    _exit(130);  // a second Ctrl-C: give up waiting
  }
  if (g_end_tcp_waits.load(std::memory_order_relaxed)) shut_down_tcp_sockets();
}
}  // namespace

void install_stop_signals() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

bool stop_requested() { return g_stop.load(std::memory_order_relaxed); }
void request_stop() { g_stop.store(true, std::memory_order_relaxed); }
void clear_stop() {
  g_stop.store(false, std::memory_order_relaxed);
  g_signals.store(0, std::memory_order_relaxed);
  g_first_signal_ns.store(0, std::memory_order_relaxed);
}

void set_stop_ends_tcp_waits(bool on) {
  g_end_tcp_waits.store(on, std::memory_order_relaxed);
  if (on && stop_requested()) shut_down_tcp_sockets();
}

void end_tcp_waits_now() { shut_down_tcp_sockets(); }

}  // namespace droce::engine
