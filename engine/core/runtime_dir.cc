// EAL's runtime directories and hugepage files: removed at exit, swept at start-up when their
// process is gone (DPDK 22.11 removes neither: rte_eal_cleanup keeps both).
#include "engine/core/runtime_dir.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <system_error>

namespace droce::engine {

namespace fs = std::filesystem;

namespace {

bool all_digits(const std::string& s, std::size_t from, std::size_t to) {
  if (from >= to) return false;
  for (std::size_t i = from; i < to; ++i)
    if (s[i] < '0' || s[i] > '9') return false;
  return true;
}

// kill(pid, 0) fails with ESRCH only when no process has that PID; EPERM means one exists.
bool process_exists(long pid) { return kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH; }

std::vector<std::string> hugetlbfs_mounts() {
  std::vector<std::string> dirs;
  std::ifstream mounts("/proc/mounts");
  std::string dev, dir, type, rest;
  while (mounts >> dev >> dir >> type && std::getline(mounts, rest))
    if (type == "hugetlbfs") dirs.push_back(dir);
  return dirs;
}

// EAL's hugepage file names (DPDK 22.11 eal_filesystem.h, HUGEFILE_FMT): "<prefix>map_<n>", one
// number per segment, or per segment list with --single-file-segments.
bool is_hugepage_file_of(const std::string& name, const std::string& prefix) {
  const std::string head = prefix + "map_";
  return name.compare(0, head.size(), head) == 0 && all_digits(name, head.size(), name.size());
}

}  // namespace

std::string runtime_parent_dir() {
  if (getuid() == 0) return "/var/run/dpdk";
  const char* xdg = std::getenv("XDG_RUNTIME_DIR");
  return std::string(xdg != nullptr && *xdg != '\0' ? xdg : "/tmp") + "/dpdk";
}

bool parse_own_prefix(const std::string& name, long& pid) {
  constexpr std::size_t kHead = 5;  // "droce"
  if (name.compare(0, kHead, "droce") != 0) return false;
  const std::size_t underscore = name.find('_', kHead);
  if (underscore == std::string::npos || underscore - kHead > 9) return false;
  if (!all_digits(name, kHead, underscore) || !all_digits(name, underscore + 1, name.size())) return false;
  pid = std::strtol(name.c_str() + kHead, nullptr, 10);
  return pid > 0;
}

unsigned sweep_stale_runtime_dirs(const std::string& parent) {
  unsigned removed = 0;
  std::error_code ec;
  fs::directory_iterator it(parent, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    long pid = 0;
    if (!parse_own_prefix(name, pid) || pid == static_cast<long>(getpid()) || process_exists(pid)) continue;
    std::error_code rm;
    if (fs::remove_all(it->path(), rm) > 0 && !rm) ++removed;
  }
  return removed;
}

void remove_runtime_dir(const std::string& dir) {
  if (dir.empty()) return;
  std::error_code ec;
  fs::remove_all(dir, ec);  // what cannot be removed stays; the next run's sweep tries again
}

unsigned unlink_hugepage_files(const std::string& prefix, const std::vector<std::string>& huge_dirs) {
  if (prefix.empty()) return 0;
  unsigned removed = 0;
  for (const std::string& dir : huge_dirs.empty() ? hugetlbfs_mounts() : huge_dirs) {
    std::error_code ec;
    fs::directory_iterator it(dir, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
      if (!is_hugepage_file_of(it->path().filename().string(), prefix)) continue;
      std::error_code rm;
      if (fs::remove(it->path(), rm) && !rm) ++removed;
    }
  }
  return removed;
}

}  // namespace droce::engine
