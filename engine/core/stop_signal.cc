// Signal handling for clean shutdown: only async-signal-safe work inside the handler.
#include "engine/core/stop_signal.h"

#include <signal.h>
#include <unistd.h>

namespace droce::engine {
namespace {
std::atomic<bool> g_stop{false};
std::atomic<int> g_signals{0};

void on_signal(int) {
  g_stop.store(true, std::memory_order_relaxed);
  if (g_signals.fetch_add(1, std::memory_order_relaxed) >= 1) _exit(130);  // second Ctrl-C: give up waiting
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
}

}  // namespace droce::engine
