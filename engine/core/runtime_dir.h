// What EAL leaves on the file system, removed: its runtime directory (/var/run/dpdk/<prefix>, ~1.8 MB
// of config and fbarray files on a RAM tmpfs) and the hugepage files of a user-given --file-prefix.
#pragma once

#include <string>
#include <vector>

namespace droce::engine {

// The folder EAL makes runtime directories in, as DPDK 22.11's eal_create_runtime_dir chooses it:
// /var/run/dpdk for root, else $XDG_RUNTIME_DIR/dpdk, else /tmp/dpdk.
[[nodiscard]] std::string runtime_parent_dir();

// True for the prefixes droce makes itself ("droce<PID>_<n>"), setting `pid`.
[[nodiscard]] bool parse_own_prefix(const std::string& name, long& pid);

// Removes, under `parent`, the runtime directory of every droce-made prefix whose process is gone
// (a SIGKILL or the OOM killer runs no exit path). A process that still exists keeps its directory,
// whatever it is now. Returns how many were removed; never fails (what cannot be removed stays).
unsigned sweep_stale_runtime_dirs(const std::string& parent);

// Removes `dir` and what is in it (EAL's runtime directory of this process, at exit). Idempotent.
void remove_runtime_dir(const std::string& dir);

// Unlinks the hugepage files EAL made for `prefix` ("<prefix>map_<n>")
// in `huge_dirs`, or in every mounted hugetlbfs when `huge_dirs` is empty. Returns how many.
unsigned unlink_hugepage_files(const std::string& prefix, const std::vector<std::string>& huge_dirs);

}  // namespace droce::engine
