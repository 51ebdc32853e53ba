// perftest's flags droce-perf leaves out, and why each is ignored or refused.
#include "apps/droce-perf/perftest_flags.h"

#include <array>
#include <map>
#include <string>

namespace droce::perf {

namespace {

using F = FlagFate;
constexpr F kIgn = F::kIgnored;
constexpr F kRef = F::kRefused;

constexpr std::string_view kRaw = "raw_ethernet tests only: no effect on RC tests";
constexpr std::string_view kHostMemory = "droce's buffers are host memory; the traffic is the same";
constexpr std::string_view kGpu = "droce's buffers are host memory: a GPUDirect run measures something else";
constexpr std::string_view kNoCrypto = "droce does not encrypt: a crypto offload run measures something else";

constexpr std::array kFlags{
    // ---- perftest's letters (and their long names) ----
    PerftestFlag{"ib-port", 'i', true, kIgn, "droce's port comes from the EAL options"},
    PerftestFlag{"sl", 'S', true, kIgn, "RoCE carries no SL: droce marks priority with --vlan/--pcp and --dscp"},
    PerftestFlag{"events", 'e', false, kIgn, "droce polls (a poll-mode engine has no completion events)"},
    PerftestFlag{"vector", 'X', true, kIgn, "no completion events, so no event vector"},
    PerftestFlag{"post_list", 'l', true, kIgn, "droce posts one request at a time; the traffic is the same"},
    PerftestFlag{"report-histogrm", 'H', false, kIgn, "the samples are not listed; the summary row is printed"},
    PerftestFlag{"report-unsorted", 'U', false, kIgn, "the samples are not listed; the summary row is printed"},
    PerftestFlag{"report-counters", 'W', true, kIgn,
                 "a device's counters: droce's are on its droce: line and in --json"},
    PerftestFlag{"source_mac", 'B', true, kIgn, kRaw},
    PerftestFlag{"dest_mac", 'E', true, kIgn, kRaw},
    PerftestFlag{"dest_ip", 'J', true, kIgn, kRaw},
    PerftestFlag{"source_ip", 'j', true, kIgn, kRaw},
    PerftestFlag{"dest_port", 'K', true, kIgn, kRaw},
    PerftestFlag{"source_port", 'k', true, kIgn, kRaw},
    PerftestFlag{"ethertype", 'Y', true, kIgn, kRaw},
    PerftestFlag{"server", 'Z', false, kIgn, kRaw},
    PerftestFlag{"client", 'P', false, kIgn, kRaw},
    PerftestFlag{"mac_fwd", 'v', false, kIgn, kRaw},
    PerftestFlag{"use_rss", 'G', false, kIgn, kRaw},
    PerftestFlag{"mcg", 'g', false, kRef, "multicast runs on UD: droce speaks RC"},
    PerftestFlag{"MGID", 'M', true, kRef, "multicast runs on UD: droce speaks RC"},
    PerftestFlag{"comm_rdma_cm", 'z', false, kRef,
                 "droce-perf runs the exchange and the QPs over rdma_cm together (-R), not the exchange alone"},
    PerftestFlag{"hop_limit", 'L', true, kRef, "raw_ethernet tests only (perftest refuses it on RC tests)"},
    PerftestFlag{"report-cycles", 'C', false, kRef, "droce reports usec: a reader expecting cycles would be misled"},
    PerftestFlag{"dualport", 'O', false, kRef, "two ports: droce runs one"},
    PerftestFlag{"limit_bw", 'w', true, kRef,
                 "a pass/fail limit droce-perf does not check: its exit status would mislead"},
    PerftestFlag{"limit_msgrate", 'y', true, kRef,
                 "a pass/fail limit droce-perf does not check: its exit status would mislead"},
    // ---- long names only ----
    PerftestFlag{"force-link", 0, true, kIgn, "droce's link is Ethernet"},
    PerftestFlag{"remote_mac", 0, true, kIgn, kRaw},
    PerftestFlag{"local_mac", 0, true, kIgn, kRaw},
    PerftestFlag{"remote_ip", 0, true, kIgn, kRaw},
    PerftestFlag{"local_ip", 0, true, kIgn, kRaw},
    PerftestFlag{"remote_port", 0, true, kIgn, kRaw},
    PerftestFlag{"local_port", 0, true, kIgn, kRaw},
    PerftestFlag{"run_infinitely", 0, false, kRef, "droce-perf runs -n iterations or -D seconds, then reports"},
    PerftestFlag{"use-srq", 0, false, kIgn, "receives come from each QP's own queue; the wire is the same"},
    PerftestFlag{"no_lock", 0, false, kIgn, "verbs' thread domains: droce's QPs belong to one lcore each"},
    PerftestFlag{"use-null-mr", 0, false, kIgn, kHostMemory},
    PerftestFlag{"reversed", 0, false, kRef, "the server would send: droce-perf runs perftest's usual direction"},
    PerftestFlag{"pkey_index", 0, true, kIgn, "RoCE carries the default P_Key"},
    PerftestFlag{"tcp", 0, false, kIgn, kRaw},
    PerftestFlag{"typical_pkt_size", 0, true, kRef,
                 "the PP rate limiter's, which is raw_ethernet's (perftest refuses it otherwise)"},
    PerftestFlag{"output", 0, true, kRef, "it prints one number where droce-perf prints perftest's table"},
    PerftestFlag{"cpu_util", 0, false, kIgn, "no CPU utilisation column (droce's lcores poll: 100 %)"},
    PerftestFlag{"latency_gap", 0, true, kRef, "a gap between latency iterations changes what is measured"},
    PerftestFlag{"flow_label", 0, true, kIgn, "an IPv6 flow label: droce's RoCEv2 runs over IPv4"},
    PerftestFlag{"retry_count", 0, true, kIgn, "rdma_cm's; droce's QPs retry 7 times, as perftest's"},
    PerftestFlag{"dont_xchg_versions", 0, false, kRef, "it changes the exchange: a peer without it would not connect"},
    PerftestFlag{"payload_file_path", 0, true, kIgn, "the payload's bytes do not change what is measured"},
    PerftestFlag{"use_cuda", 0, true, kRef, kGpu},
    PerftestFlag{"use_cuda_bus_id", 0, true, kRef, kGpu},
    PerftestFlag{"use_cuda_dmabuf", 0, false, kRef, kGpu},
    PerftestFlag{"use_cuda_pcie_mapping", 0, false, kRef, kGpu},
    PerftestFlag{"use_data_direct", 0, false, kRef, kGpu},
    PerftestFlag{"cuda_mem_type", 0, true, kRef, kGpu},
    PerftestFlag{"use_musa", 0, true, kRef, kGpu},
    PerftestFlag{"use_musa_bus_id", 0, true, kRef, kGpu},
    PerftestFlag{"use_musa_dmabuf", 0, false, kRef, kGpu},
    PerftestFlag{"use_musa_pcie_mapping", 0, false, kRef, kGpu},
    PerftestFlag{"use_rocm", 0, true, kRef, kGpu},
    PerftestFlag{"use_rocm_dmabuf", 0, false, kRef, kGpu},
    PerftestFlag{"use_neuron", 0, true, kRef, kGpu},
    PerftestFlag{"use_neuron_dmabuf", 0, false, kRef, kGpu},
    PerftestFlag{"use_hl", 0, true, kRef, kGpu},
    PerftestFlag{"use_mlu", 0, true, kRef, kGpu},
    PerftestFlag{"use_mlu_dmabuf", 0, false, kRef, kGpu},
    PerftestFlag{"use_opencl", 0, true, kRef, kGpu},
    PerftestFlag{"opencl_platform_id", 0, true, kRef, kGpu},
    PerftestFlag{"use_ib_dm_dmabuf", 0, true, kRef, kGpu},
    PerftestFlag{"gpu_touch", 0, true, kRef, kGpu},
    PerftestFlag{"mmap", 0, true, kIgn, kHostMemory},
    PerftestFlag{"mmap-offset", 0, true, kIgn, kHostMemory},
    PerftestFlag{"use_hugepages", 0, false, kIgn, kHostMemory},
    PerftestFlag{"odp", 0, false, kIgn, kHostMemory},
    PerftestFlag{"ipv6", 0, false, kRef, "droce's GID follows --local-ip: give it an IPv6 address"},
    PerftestFlag{"ipv6-addr", 0, false, kRef,
                 "droce's exchange runs over IPv4 TCP; an IPv6 GID comes from an IPv6 --local-ip"},
    PerftestFlag{"raw_ipv6", 0, false, kIgn, kRaw},
    PerftestFlag{"report-per-port", 0, false, kIgn, "dual-port runs only"},
    PerftestFlag{"use_old_post_send", 0, false, kIgn, "verbs' posting API: droce has one"},
    PerftestFlag{"promiscuous", 0, false, kIgn, kRaw},
    PerftestFlag{"sniffer", 0, false, kIgn, kRaw},
    PerftestFlag{"raw_mcast", 0, false, kIgn, kRaw},
    PerftestFlag{"mr_per_qp", 0, false, kIgn, "droce registers one region per worker; the traffic is the same"},
    PerftestFlag{"dlid", 0, true, kIgn, "an InfiniBand LID: RoCE routes by GID"},
    PerftestFlag{"wait_destroy", 0, true, kIgn, "resources go when the run ends"},
    PerftestFlag{"flows", 0, true, kIgn, kRaw},
    PerftestFlag{"flows_burst", 0, true, kIgn, kRaw},
    PerftestFlag{"reply_every", 0, true, kIgn, "latency under load only"},
    PerftestFlag{"perform_warm_up", 0, false, kIgn, "no warm-up round: the measured iterations are the same"},
    PerftestFlag{"vlan_en", 0, false, kIgn, "raw_ethernet tests only (droce: --vlan)"},
    PerftestFlag{"vlan_pcp", 0, true, kIgn, "raw_ethernet tests only (droce: --pcp)"},
    PerftestFlag{"recv_post_list", 0, true, kIgn, "droce posts one receive at a time; the traffic is the same"},
    PerftestFlag{"aes_xts", 0, false, kRef, kNoCrypto},
    PerftestFlag{"encrypt_on_tx", 0, false, kRef, kNoCrypto},
    PerftestFlag{"sig_before", 0, false, kRef, kNoCrypto},
    PerftestFlag{"aes_block_size", 0, true, kRef, kNoCrypto},
    PerftestFlag{"kek_path", 0, true, kRef, kNoCrypto},
    PerftestFlag{"credentials_path", 0, true, kRef, kNoCrypto},
    PerftestFlag{"data_enc_keys_number", 0, true, kRef, kNoCrypto},
    PerftestFlag{"data_enc_key_app_path", 0, true, kRef, kNoCrypto},
    PerftestFlag{"log_dci_streams", 0, true, kRef, "DC transport: droce speaks RC"},
    PerftestFlag{"log_active_dci_streams", 0, true, kRef, "DC transport: droce speaks RC"},
    PerftestFlag{"disable_pcie_relaxed", 0, false, kIgn, "no PCIe device"},
    PerftestFlag{"use_ooo", 0, false, kIgn, "droce places data in order; the traffic is the same"},
    PerftestFlag{"congest_type", 0, true, kIgn, "hns devices' congestion control: droce's DCQCN is off here"},
    PerftestFlag{"bind_source_ip", 0, true, kIgn, "the TCP exchange's source address is the system's choice"},
    PerftestFlag{"write_with_imm", 0, false, kRef, "it changes the opcodes on the wire and the peer's completions"},
    PerftestFlag{"send_with_imm", 0, false, kRef, "it changes the opcodes on the wire and the peer's completions"},
    PerftestFlag{"no_enhanced_reorder", 0, false, kIgn, "SRD only"},
    PerftestFlag{"unsolicited_write", 0, false, kRef, "SRD only: droce speaks RC"},
    PerftestFlag{"connectionless", 0, false, kRef, "SRD only: droce speaks RC"},
    PerftestFlag{"cqe_poll", 0, true, kIgn, "droce polls every completion queue each round"},
    PerftestFlag{"tph_mem", 0, true, kIgn, "PCIe TPH hints: no PCIe device"},
    PerftestFlag{"cpu_id", 0, true, kIgn, "PCIe TPH hints: no PCIe device"},
    PerftestFlag{"ph", 0, true, kIgn, "PCIe TPH hints: no PCIe device"},
    PerftestFlag{"disable_dynamic_polling", 0, false, kIgn, "droce polls every completion queue each round"},
    PerftestFlag{"sig_offload", 0, false, kRef, "signature offload changes what is measured"},
    PerftestFlag{"data_validation", 0, false, kRef,
                 "droce-perf does not validate data perftest's way: an unchecked run would read as checked"},
    PerftestFlag{"data_validation_debug", 0, false, kRef,
                 "droce-perf does not validate data perftest's way: an unchecked run would read as checked"},
    PerftestFlag{"pin_cores", 0, true, kIgn, "droce pins its lcores with EAL's -l"},
    PerftestFlag{"numa_node", 0, true, kIgn, "memory comes from DPDK on the lcores' socket"},
    PerftestFlag{"disable_numa", 0, false, kIgn, "memory comes from DPDK on the lcores' socket"},
};

// "-e,--events": CLI11's names for an entry.
std::string names_of(const PerftestFlag& f) {
  std::string names;
  if (f.letter != 0) names = std::string("-") + f.letter;
  if (!f.long_name.empty()) names += (names.empty() ? "--" : ",--") + std::string(f.long_name);
  return names;
}

// Its first name ("-e"), by which messages find how it was typed.
std::string first_name(const PerftestFlag& f) {
  const std::string names = names_of(f);
  return names.substr(0, names.find(','));
}

// The entry an option was declared for (nullptr: one of droce-perf's own).
const PerftestFlag* entry_of(const CLI::Option& o) {
  if (!o.get_group().empty()) return nullptr;  // the entries alone are hidden
  for (const auto& f : kFlags)
    if (o.check_name(first_name(f))) return &f;
  return nullptr;
}

}  // namespace

void add_perftest_flags(CLI::App& app, const TypedNames& typed) {
  for (const auto& f : kFlags) {
    const PerftestFlag* entry = &f;
    // A refused flag fails when CLI11 runs its callback; an ignored one waits for the warnings,
    // printed once the whole command line has parsed.
    auto refuse = [entry, &typed]() {
      if (entry->fate == FlagFate::kRefused)
        throw CLI::ValidationError(typed(first_name(*entry)) +
                                   ": perftest's, not implemented by droce-perf: " + std::string(entry->why));
    };
    CLI::Option* o = nullptr;
    if (f.has_arg)
      o = app.add_option(
                 names_of(f), [refuse](const CLI::results_t&) { return refuse(), true; }, std::string(f.why))
              ->type_name("VALUE")
              ->expected(1)
              ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    else
      o = app.add_flag_callback(names_of(f), refuse, std::string(f.why));
    o->group("");  // hidden from --help, whose text names them all in one paragraph
  }
}

std::vector<std::string> perftest_flag_warnings(const CLI::App& app, const TypedNames& typed) {
  std::vector<std::string> lines;
  std::map<const CLI::Option*, std::size_t> seen;  // occurrences so far, to name each as typed
  for (const CLI::Option* o : app.parse_order())
    if (const PerftestFlag* f = entry_of(*o); f != nullptr && f->fate == FlagFate::kIgnored)
      lines.push_back(typed.nth(first_name(*f), seen[o]++) + " ignored: " + std::string(f->why));
  // Then those --config gave (counted, but not in the command line's order), by their long names.
  for (const CLI::Option* o : app.get_options([&seen](const CLI::Option* opt) { return seen.count(opt) == 0; }))
    if (const PerftestFlag* f = entry_of(*o); f != nullptr && f->fate == FlagFate::kIgnored && o->count() > 0)
      lines.push_back((f->long_name.empty() ? first_name(*f) : "--" + std::string(f->long_name)) +
                      " ignored: " + std::string(f->why));
  return lines;
}

}  // namespace droce::perf
