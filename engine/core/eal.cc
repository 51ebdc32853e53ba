// EAL bring-up with friendly defaults: hugepages when usable, else --no-huge; unique file prefix.
#include "engine/core/eal.h"

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_kvargs.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "engine/core/log.h"
#include "engine/core/port.h"
#include "engine/core/runtime_dir.h"

namespace droce::engine {
namespace {

std::atomic<bool> g_eal_initialised{false};
EalReport g_current_report;  // Eal::current()

// What this process's EAL left on the file system and droce removes when the process ends: by the
// Eal's destructor, or by exit() (an app that exits from a nested call) through an atexit handler.
// Both run the removal at most once. A SIGKILLed run's are swept by the next run (Eal::init).
struct Leftovers {
  std::string runtime_dir;             // EAL's runtime directory, when this process made it its own
  std::string huge_prefix;             // the --file-prefix whose hugepage files remain (no --huge-unlink)
  std::vector<std::string> huge_dirs;  // --huge-dir, or empty: every mounted hugetlbfs
};
Leftovers g_leftovers;

void remove_leftovers() {
  remove_runtime_dir(g_leftovers.runtime_dir);
  unlink_hugepage_files(g_leftovers.huge_prefix, g_leftovers.huge_dirs);
  g_leftovers = Leftovers{};
}

bool has_arg(const std::vector<std::string>& args, const std::string& name) {
  for (const auto& a : args)
    if (a == name || a.rfind(name + "=", 0) == 0) return true;
  return false;
}

// True when a --vdev (or -a/--allow) names a virtio_user device.
bool uses_virtio_user(const std::vector<std::string>& args) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    std::string v;
    if ((a == "--vdev" || a == "-a" || a == "--allow") && i + 1 < args.size())
      v = args[i + 1];
    else if (a.rfind("--vdev=", 0) == 0)
      v = a.substr(7);
    if (v.rfind("virtio_user", 0) == 0 || v.rfind("net_virtio_user", 0) == 0) return true;
  }
  return false;
}

// DPDK 22.11's net_memif (eth_memif_tx, copy mode) clears a descriptor's flags only for the
// second and later buffers of a frame: a frame that fits one buffer, sent from a ring slot that
// last held the head of a split frame, keeps that slot's stale "next" flag, and the receiver joins
// it to the frame after it (seen as bad_ip_total_length drops and one lost frame per join, which
// go-back-N retransmits into the same join: PMTU-4096 READs or 64 KiB echoes over the default
// 2048-byte buffers ended in "transport retry counter exceeded"). No droce frame is ever split
// when a buffer holds the largest one (a PMTU-4096 frame with every header is under 4200 bytes),
// so a net_memif vdev that names no bsize gets this one.
constexpr const char* kMemifBufferBytes = "8192";

bool names_memif(const std::string& vdev) { return vdev.rfind("net_memif", 0) == 0; }

// True when the devargs after the device name ("net_memif0,role=server,bsize=2048") give `key`;
// parsed by DPDK's rte_kvargs, as the PMD parses them.
bool has_devarg(const std::string& vdev, const std::string& key) {
  const std::size_t comma = vdev.find(',');
  if (comma == std::string::npos) return false;
  rte_kvargs* kv = rte_kvargs_parse(vdev.c_str() + comma + 1, nullptr);
  if (kv == nullptr) return false;  // malformed: the PMD will refuse it with its own message
  const bool found = rte_kvargs_count(kv, key.c_str()) != 0;
  rte_kvargs_free(kv);
  return found;
}

// Adds bsize=kMemifBufferBytes to every net_memif --vdev ("--vdev X" or "--vdev=X") that gives none.
void give_memif_whole_frame_buffers(std::vector<std::string>& args) {
  const std::string extra = std::string(",bsize=") + kMemifBufferBytes;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const bool separate = args[i] == "--vdev" && i + 1 < args.size();
    const bool joined = args[i].rfind("--vdev=", 0) == 0;
    if (!separate && !joined) continue;
    std::string& arg = separate ? args[++i] : args[i];
    const std::string vdev = joined ? arg.substr(7) : arg;
    if (names_memif(vdev) && !has_devarg(vdev, "bsize")) arg += extra;
  }
}

// Value of an option given as "--opt v", "--opt=v" or "-lv".
bool find_value(const std::vector<std::string>& args, const std::string& name, std::string& value) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == name && i + 1 < args.size()) {
      value = args[i + 1];
      return true;
    }
    if (a.rfind(name + "=", 0) == 0) {
      value = a.substr(name.size() + 1);
      return true;
    }
    if (name.size() == 2 && a.size() > 2 && a.rfind(name, 0) == 0 && a[2] != '-') {
      value = a.substr(2);
      return true;
    }
  }
  return false;
}

// Parses "0-3,5" into CPU numbers; false on syntax errors.
bool parse_cpu_list(const std::string& s, std::set<unsigned>& out) {
  std::stringstream ss(s);
  std::string part;
  while (std::getline(ss, part, ',')) {
    if (part.empty()) return false;
    const auto dash = part.find('-');
    try {
      std::size_t used = 0;
      const unsigned long lo = std::stoul(part.substr(0, dash), &used);
      if (used != (dash == std::string::npos ? part.size() : dash)) return false;
      unsigned long hi = lo;
      if (dash != std::string::npos) {
        const std::string rest = part.substr(dash + 1);
        hi = std::stoul(rest, &used);
        if (used != rest.size() || hi < lo) return false;
      }
      if (hi > 4095) return false;
      for (unsigned long c = lo; c <= hi; ++c) out.insert(static_cast<unsigned>(c));
    } catch (...) {
      return false;
    }
  }
  return !out.empty();
}

bool parse_core_mask(const std::string& s, std::set<unsigned>& out) {
  std::string hex = s;
  if (hex.rfind("0x", 0) == 0 || hex.rfind("0X", 0) == 0) hex = hex.substr(2);
  if (hex.empty() || hex.size() > 64) return false;
  unsigned bit = 0;
  for (auto it = hex.rbegin(); it != hex.rend(); ++it) {
    int v;
    if (*it >= '0' && *it <= '9')
      v = *it - '0';
    else if (*it >= 'a' && *it <= 'f')
      v = *it - 'a' + 10;
    else if (*it >= 'A' && *it <= 'F')
      v = *it - 'A' + 10;
    else
      return false;
    for (int b = 0; b < 4; ++b, ++bit)
      if (v & (1 << b)) out.insert(bit);
  }
  return !out.empty();
}

// --lcores has a rich syntax ("1@(0-1),(2-3)@4"); the CPUs are the sets after '@', or the lcore
// numbers themselves when there is no '@'. Good enough to catch "lcore 7 on a 2-CPU machine".
bool parse_lcores_cpus(const std::string& s, std::set<unsigned>& out) {
  std::string cleaned;
  std::size_t i = 0;
  while (i < s.size()) {
    // Each group: [lcores][@cpus]; take cpus if present, else lcores.
    std::size_t end = i;
    int depth = 0;
    while (end < s.size() && (depth > 0 || s[end] != ',')) {
      if (s[end] == '(') ++depth;
      if (s[end] == ')') --depth;
      ++end;
    }
    std::string group = s.substr(i, end - i);
    const auto at = group.find('@');
    std::string cpus = at == std::string::npos ? group : group.substr(at + 1);
    cpus.erase(std::remove_if(cpus.begin(), cpus.end(), [](char c) { return c == '(' || c == ')'; }), cpus.end());
    if (!parse_cpu_list(cpus, out)) return false;
    i = end + 1;
  }
  return !out.empty();
}

std::string join(const std::vector<unsigned>& v) {
  // Appended piece by piece: GCC 12 at -O3 warns -Wrestrict (a libstdc++ false positive) on
  // `(s.empty() ? "" : ",") + std::to_string(c)`.
  std::string s;
  for (unsigned c : v) {
    if (!s.empty()) s += ',';
    s += std::to_string(c);
  }
  return s;
}

// Records what this run's EAL made that the process's end removes (runtime_dir.h).
void note_leftovers(const EalReport& report, const std::vector<std::string>& args, bool own_prefix) {
  // A secondary process (dpdk-dumpcap, dpdk-telemetry's peers) uses its primary's files: not ours.
  if (rte_eal_process_type() != RTE_PROC_PRIMARY) return;
  // With shared files this primary holds the prefix's lock, so no other process uses the directory;
  // without them (--no-shconf, --in-memory) only a prefix droce made is known to be this run's
  // (a shared default such as "rte" is not).
  const bool shared_files = !has_arg(args, "--no-shconf") && !has_arg(args, "--in-memory");
  if (own_prefix || (shared_files && !report.file_prefix.empty())) g_leftovers.runtime_dir = rte_eal_get_runtime_dir();
  // Hugepage files stay linked for the run so that dpdk-dumpcap and other secondaries can attach;
  // they are unlinked at exit (--huge-unlink, which droce gives its own prefixes, unlinks at once).
  if (report.hugepages && shared_files && !report.file_prefix.empty() && !has_arg(args, "--huge-unlink")) {
    g_leftovers.huge_prefix = report.file_prefix;
    std::string dir;
    if (find_value(args, "--huge-dir", dir)) g_leftovers.huge_dirs = {dir};
  }
  static std::atomic<bool> registered{false};
  if (!registered.exchange(true)) std::atexit(remove_leftovers);
}

}  // namespace

SplitArgs split_args(int argc, char** argv) {
  SplitArgs r;
  for (int i = 1; i < argc; ++i) {
    if (!r.had_separator && std::string(argv[i]) == "--") {
      r.had_separator = true;
      continue;
    }
    (r.had_separator ? r.app : r.eal).emplace_back(argv[i]);
  }
  // No separator: everything belongs to the application.
  if (!r.had_separator) std::swap(r.eal, r.app);
  return r;
}

bool Eal::hugetlbfs_mounted() {
  std::ifstream mounts("/proc/mounts");
  std::string dev, dir, type;
  std::string rest;
  while (mounts >> dev >> dir >> type && std::getline(mounts, rest))
    if (type == "hugetlbfs") return true;
  return false;
}

std::uint64_t Eal::free_hugepage_bytes() {
  std::uint64_t bytes = 0;
  for (const auto& [dir, page_bytes] : {std::pair{"hugepages-2048kB", std::uint64_t{2} << 20},
                                        std::pair{"hugepages-1048576kB", std::uint64_t{1} << 30}}) {
    std::ifstream f(std::string("/sys/kernel/mm/hugepages/") + dir + "/free_hugepages");
    std::uint64_t n = 0;
    if (f >> n) bytes += n * page_bytes;
  }
  return bytes;
}

// A process that starts on the last few free pages gets through EAL (DPDK maps memory on demand)
// and then fails to create its mbuf pool, a failure that depends on what the other DPDK processes
// of the machine hold at that moment. Below the floor, --no-huge is the dependable choice.
bool Eal::hugepages_available() { return hugetlbfs_mounted() && free_hugepage_bytes() >= kMinFreeHugepageBytes; }

std::vector<unsigned> Eal::allowed_cpus() {
  std::vector<unsigned> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    for (unsigned c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  if (cpus.empty()) {
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    for (long c = 0; c < n; ++c) cpus.push_back(static_cast<unsigned>(c));
  }
  return cpus;
}

Status build_eal_args(const std::vector<std::string>& eal, std::vector<std::string>& out, EalReport& report,
                      bool quiet) {
  out = eal;
  // lcores must exist on this machine: EAL's own message for this is a cryptic probe failure.
  std::set<unsigned> wanted;
  std::string v;
  const char* which = nullptr;
  bool parsed = true;
  if (find_value(eal, "-l", v)) {
    which = "-l";
    parsed = parse_cpu_list(v, wanted);
  } else if (find_value(eal, "--lcores", v)) {
    which = "--lcores";
    parsed = parse_lcores_cpus(v, wanted);
  } else if (find_value(eal, "-c", v)) {
    which = "-c";
    parsed = parse_core_mask(v, wanted);
  }
  if (which != nullptr) {
    if (!parsed)
      return Status::error(StatusCode::kInvalidArgument, std::string("invalid lcore list '") + v + "' for " + which);
    const auto cpus = Eal::allowed_cpus();
    for (unsigned c : wanted)
      if (std::find(cpus.begin(), cpus.end(), c) == cpus.end())
        return Status::error(StatusCode::kInvalidArgument, "lcore " + std::to_string(c) + " requested with " + which +
                                                               " but this process may only run on CPUs " + join(cpus));
  } else {
    out.insert(out.begin(), {"-l", "0"});  // one lcore unless told otherwise
  }

  const bool user_memory_mode = has_arg(eal, "--no-huge") || has_arg(eal, "--in-memory") || has_arg(eal, "--huge-dir");
  report.hugepages = !has_arg(eal, "--no-huge");
  if (!user_memory_mode && !Eal::hugepages_available()) {
    report.hugepages = false;
    if (!quiet) {
      if (!Eal::hugetlbfs_mounted())
        DROCE_LOG(WARNING, "no usable hugepages (no hugetlbfs mounted; see scripts/setup.sh): running with --no-huge");
      else
        DROCE_LOG(
            WARNING,
            "only %llu MiB of hugepages free (droce wants %llu MiB; see scripts/setup.sh): running with --no-huge",
            static_cast<unsigned long long>(Eal::free_hugepage_bytes() >> 20),
            static_cast<unsigned long long>(Eal::kMinFreeHugepageBytes >> 20));
    }
    out.emplace_back("--no-huge");
    if (!has_arg(eal, "-m") && !has_arg(eal, "--socket-mem")) {
      out.emplace_back("-m");
      out.emplace_back("1024");
    }
  }
  // virtio_user shares our memory with its vhost-user peer one region per hugepage file, and
  // vhost-user carries at most 8 regions (VHOST_MEMORY_BASELINE_NREGIONS): with one file per 2 MiB
  // page the peer refuses the table ("Too many memory regions") and no frame ever moves. One
  // segment per memseg list keeps it to a handful. That option excludes --huge-unlink, so memory
  // comes from memfds instead (--in-memory): still nothing left behind after a crash.
  if (report.hugepages && !user_memory_mode && uses_virtio_user(eal) && !has_arg(eal, "--legacy-mem")) {
    if (!has_arg(eal, "--single-file-segments")) out.emplace_back("--single-file-segments");
    if (!has_arg(eal, "--file-prefix")) out.emplace_back("--in-memory");
  }
  // --no-huge cannot be combined with --in-memory; --no-shconf keeps no runtime files either.
  if (!report.hugepages && !has_arg(eal, "--no-shconf") && !has_arg(eal, "--in-memory") &&
      !has_arg(eal, "--file-prefix"))
    out.emplace_back("--no-shconf");
  // A unique prefix per process lets several droce processes and other DPDK apps coexist.
  if (!has_arg(eal, "--file-prefix") && !has_arg(eal, "--in-memory") && !has_arg(out, "--in-memory")) {
    static std::atomic<unsigned> serial{0};
    report.file_prefix = "droce" + std::to_string(getpid()) + "_" + std::to_string(serial.fetch_add(1));
    out.emplace_back("--file-prefix=" + report.file_prefix);
    // Unlink hugepage files once mapped so a crashed process leaves nothing behind.
    if (report.hugepages && !has_arg(eal, "--huge-unlink")) out.emplace_back("--huge-unlink");
  } else if (find_value(eal, "--file-prefix", v)) {
    report.file_prefix = v;
  }
  give_memif_whole_frame_buffers(out);
  if (!has_arg(eal, "--force-max-simd-bitwidth")) out.emplace_back("--force-max-simd-bitwidth=512");
  if (!has_arg(eal, "--log-level")) out.emplace_back("--log-level=*:error");
  report.final_args = out;
  return {};
}

std::unique_ptr<Eal> Eal::init(const std::string& app_name, const std::vector<std::string>& eal_args, Status& err,
                               bool quiet) {
  if (g_eal_initialised.exchange(true)) {
    err = Status::error(StatusCode::kBadState, "EAL is already initialised in this process (DPDK allows it once)");
    return nullptr;
  }
  std::unique_ptr<Eal> eal(new Eal());
  std::vector<std::string> args;
  if (Status s = build_eal_args(eal_args, args, eal->report_, quiet); !s.ok()) {
    err = s;
    return nullptr;
  }
  std::vector<std::string> storage;
  storage.push_back(app_name);
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& s : storage) argv.push_back(s.data());
  argv.push_back(nullptr);
  // Runtime directories of droce runs that ended without an exit path (SIGKILL, OOM) stay on a RAM
  // tmpfs until reboot: swept before this run adds its own.
  sweep_stale_runtime_dirs(runtime_parent_dir());
  // A prefix droce made names this process: its runtime directory is this run's alone.
  long prefix_pid = 0;
  const bool own_prefix = parse_own_prefix(eal->report_.file_prefix, prefix_pid) && prefix_pid == getpid();
  // rte_eal_init may reorder argv; it keeps pointers into `storage`, which outlives the call.
  const int rc = rte_eal_init(static_cast<int>(storage.size()), argv.data());
  if (rc < 0) {
    const int eal_errno = rte_errno;
    // What a failed init made under a prefix of this process goes too; a user's prefix may be
    // another live process's ("Cannot create lock"), so it stays.
    if (own_prefix) remove_runtime_dir(runtime_parent_dir() + "/" + eal->report_.file_prefix);
    std::string all;
    for (const auto& a : args) all += " " + a;
    err = Status::error(StatusCode::kError, std::string("EAL initialisation failed: ") + rte_strerror(eal_errno) +
                                                " (EAL args:" + all + ")");
    return nullptr;
  }
  eal->initialised_ = true;
  note_leftovers(eal->report_, args, own_prefix);
  g_current_report = eal->report_;
  err = Status();
  return eal;
}

const EalReport& Eal::current() { return g_current_report; }

Eal::~Eal() {
  if (!initialised_) return;
  // EAL's interrupt thread outlives rte_eal_cleanup and may still rebuild its wait list from
  // handles in the memory the cleanup unmaps (InterruptThreadHold::park_until_exit): parked first.
  // Not parked within 10 s: the process's exit releases what the cleanup would have.
  if (!InterruptThreadHold::park_until_exit(10000)) {
    DROCE_LOG(WARNING, "EAL's interrupt thread did not park within 10 s; exiting without rte_eal_cleanup");
    remove_leftovers();
    return;
  }
  rte_eal_cleanup();
  remove_leftovers();  // rte_eal_cleanup (22.11) keeps the runtime directory and hugepage files
}

}  // namespace droce::engine
