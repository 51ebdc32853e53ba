// Output files: a parse-time writability check that leaves no trace, and a checked final write.
#include "apps/common/output_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "apps/common/cli_number.h"

namespace droce::apps {

namespace {

Status cannot_write(std::string_view option, const std::string& path, int err) {
  return Status::error(StatusCode::kIo,
                       std::string(option) + ": cannot write " + quoted(path) + ": " + std::strerror(err));
}

}  // namespace

Status check_output_path(std::string_view option, const std::string& path) {
  if (path.empty()) return Status::error(StatusCode::kInvalidArgument, std::string(option) + ": needs a file name");
  // Several processes may check one path at once (every rank of an mpirun job parses the same
  // --json): another's probe can appear or vanish between the two steps below, so a step that
  // loses such a race is tried again, a bounded number of times.
  int err = 0;
  for (int attempt = 0; attempt < 16; ++attempt) {
    // No O_TRUNC: the check must not destroy an existing file. O_NONBLOCK: a FIFO without a
    // reader fails with ENXIO instead of blocking the parser forever.
    int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd >= 0) {
      ::close(fd);
      return {};
    }
    if (errno != ENOENT) return cannot_write(option, path, errno);
    // Not there yet: create it to prove the directory takes it, then take it away again.
    fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOCTTY | O_CLOEXEC, 0666);
    if (fd >= 0) {
      ::close(fd);
      (void)::unlink(path.c_str());
      return {};
    }
    err = errno;
    if (err != EEXIST) break;  // EEXIST: another process's probe came in between; look again
  }
  return cannot_write(option, path, err);
}

namespace {

std::FILE* g_claimed_stdout = nullptr;  // set once, before the app's threads start
std::string g_claimed_by;               // the option that claimed it, for the second one's message

}  // namespace

Status claim_stdout(std::string_view option) {
  if (g_claimed_stdout != nullptr)
    return Status::error(StatusCode::kInvalidArgument,
                         std::string(option) + " -: stdout already carries " + g_claimed_by + " -");
  std::fflush(stdout);
  const int fd = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  if (fd < 0 || ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
    const int err = errno;
    if (fd >= 0) ::close(fd);
    return Status::error(StatusCode::kIo, std::string(option) + " -: cannot set stdout aside: " + std::strerror(err));
  }
  g_claimed_stdout = ::fdopen(fd, "w");
  if (g_claimed_stdout == nullptr) {
    const int err = errno;
    ::close(fd);
    return Status::error(StatusCode::kIo, std::string(option) + " -: cannot set stdout aside: " + std::strerror(err));
  }
  g_claimed_by = std::string(option);
  return {};
}

std::FILE* claimed_stdout() { return g_claimed_stdout; }

Status write_text_file(const std::string& path, const std::string& text) {
  if (path == "-") {
    std::FILE* out = g_claimed_stdout != nullptr ? g_claimed_stdout : stdout;
    if (std::fwrite(text.data(), 1, text.size(), out) != text.size() || std::fflush(out) != 0)
      return Status::error(StatusCode::kIo, std::string("cannot write the standard output: ") + std::strerror(errno));
    return {};
  }
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return Status::error(StatusCode::kIo, "cannot write " + quoted(path) + ": " + std::strerror(errno));
  const bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size() && std::fflush(f) == 0;
  const int write_errno = errno;
  const bool closed = std::fclose(f) == 0;
  if (!written || !closed)
    return Status::error(StatusCode::kIo,
                         "cannot write " + quoted(path) + ": " + std::strerror(!written ? write_errno : errno));
  return {};
}

}  // namespace droce::apps
