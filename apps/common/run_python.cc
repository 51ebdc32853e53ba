// run_python, find_script (see run_python.h).
#include "apps/common/run_python.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

extern char** environ;

namespace droce::apps {

namespace {

using engine::Status;
using engine::StatusCode;

// The last non-empty line of `text`, without its newline.
std::string last_line(const std::string& text) {
  std::size_t end = text.find_last_not_of("\r\n");
  if (end == std::string::npos) return "";
  const std::size_t begin = text.rfind('\n', end);
  return text.substr(begin == std::string::npos ? 0 : begin + 1,
                     end + 1 - (begin == std::string::npos ? 0 : begin + 1));
}

// Reads `fd` to its end, passing everything on to our stderr; keeps the last 4 KiB.
std::string drain_stderr(int fd) {
  std::string tail;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    std::fwrite(buf, 1, static_cast<std::size_t>(n), stderr);
    tail.append(buf, static_cast<std::size_t>(n));
    if (tail.size() > 4096) tail.erase(0, tail.size() - 4096);
  }
  std::fflush(stderr);
  return tail;
}

}  // namespace

Status run_python(const std::string& script, const std::vector<std::string>& args) {
  static const std::string python = "/usr/bin/python3";
  if (::access(python.c_str(), X_OK) != 0)
    return Status::error(StatusCode::kNotFound,
                         python + " is not installed (Debian: apt install python3 python3-matplotlib)");
  std::vector<std::string> words{python, script};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  // The child's stderr comes back through a pipe, so that a failure can be named by its last line.
  int err_pipe[2];
  if (::pipe2(err_pipe, O_CLOEXEC) != 0)
    return Status::error(StatusCode::kIo, std::string("cannot make a pipe for python3: ") + std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);  // dup2 clears O_CLOEXEC on fd 2
  pid_t pid = 0;
  const int e = ::posix_spawn(&pid, python.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(err_pipe[1]);
  if (e != 0) {
    ::close(err_pipe[0]);
    return Status::error(StatusCode::kIo, "cannot start " + python + ": " + std::strerror(e));
  }
  const std::string said = last_line(drain_stderr(err_pipe[0]));
  ::close(err_pipe[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      return Status::error(StatusCode::kIo, "cannot wait for " + script + ": " + std::strerror(errno));
  const std::string because = said.empty() ? "" : ": " + said;
  const std::string hint =
      said.find("matplotlib") != std::string::npos ? " (Debian: apt install python3-matplotlib)" : "";
  if (WIFSIGNALED(status))
    return Status::error(StatusCode::kError,
                         script + " was killed by signal " + std::to_string(WTERMSIG(status)) + because);
  if (WEXITSTATUS(status) != 0)
    return Status::error(StatusCode::kError,
                         script + " exited " + std::to_string(WEXITSTATUS(status)) + because + hint);
  return {};
}

Status find_script(const std::string& name, std::string& path) {
  namespace fs = std::filesystem;
  // DROCE_SCRIPTS_FROM_BINDIR: <datadir>/droce relative to <bindir> (absolute when either is).
  const fs::path rel = DROCE_SCRIPTS_FROM_BINDIR;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  const fs::path installed = rel.is_absolute() ? rel / name : exe.parent_path() / rel / name;
  const fs::path source = fs::path(DROCE_SOURCE_ROOT) / "scripts" / name;
  for (const fs::path& p : {installed, source})
    if (std::error_code e; fs::is_regular_file(p, e)) {
      path = p.lexically_normal().string();
      return {};
    }
  return Status::error(StatusCode::kNotFound, "cannot find " + name + " in " + installed.lexically_normal().string() +
                                                  " (installed) nor " + source.string() + " (source tree)");
}

Status run_script(const std::string& name, const std::vector<std::string>& args) {
  std::string path;
  if (Status s = find_script(name, path); !s.ok()) return s;
  return run_python(path, args);
}

}  // namespace droce::apps
