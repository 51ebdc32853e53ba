// The stop signals: one Ctrl-C delivered twice at once (timeout(1) passes it to its child and then
// to the child's process group) is one request; a second Ctrl-C a second later gives up at once.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "engine/core/stop_signal.h"

using namespace droce::engine;

namespace {

// Runs `body` in a child process (the handlers are process-wide) and returns its wait status.
template <class Body>
int in_child(Body body) {
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) _exit(body());
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  return status;
}

}  // namespace

TEST_CASE("stop signals: a repeat within a second is the same request, a later one exits 130", "[stop]") {
  SECTION("two SIGINTs back to back: the stop is requested and the process goes on") {
    const int status = in_child([] {
      install_stop_signals();
      raise(SIGINT);
      raise(SIGINT);
      return stop_requested() ? 7 : 1;
    });
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 7);
  }
  SECTION("a second SIGINT more than a second after the first: exit 130 at once") {
    const int status = in_child([] {
      install_stop_signals();
      raise(SIGINT);
      usleep(1'200'000);
      raise(SIGTERM);
      return 3;  // not reached
    });
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 130);
  }
  SECTION("clear_stop forgets the first signal") {
    const int status = in_child([] {
      install_stop_signals();
      raise(SIGINT);
      usleep(1'200'000);
      clear_stop();
      raise(SIGINT);
      return stop_requested() ? 9 : 1;
    });
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 9);
  }
}
