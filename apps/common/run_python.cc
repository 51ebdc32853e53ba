// run_python (see run_python.h).
#include "apps/common/run_python.h"

#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

extern char** environ;

namespace droce::apps {

engine::Status run_python(const std::string& script, const std::vector<std::string>& args) {
  static const std::string python = "/usr/bin/python3";
  std::vector<std::string> words{python, script};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = 0;
  if (int e = ::posix_spawn(&pid, python.c_str(), nullptr, nullptr, argv.data(), environ); e != 0)
    return engine::Status::error(engine::StatusCode::kIo, "cannot start " + python + ": " + std::strerror(e));
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      return engine::Status::error(engine::StatusCode::kIo, "cannot wait for " + script + ": " + std::strerror(errno));
  if (WIFSIGNALED(status))
    return engine::Status::error(engine::StatusCode::kError,
                                 script + " was killed by signal " + std::to_string(WTERMSIG(status)));
  if (WEXITSTATUS(status) != 0)
    return engine::Status::error(engine::StatusCode::kError, script + " exited " + std::to_string(WEXITSTATUS(status)));
  return {};
}

}  // namespace droce::apps
