// Memory registry: application memory registered once (keys + bounds via rc::MrTable) and usable as
// external mbuf buffers for zero-copy TX.
#pragma once

#include <rte_dev.h>
#include <rte_mbuf.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/core/status.h"
#include "protocols/rc/mr_table.h"

namespace droce::engine {

// Owns the MrTable (lkey/rkey/bounds/access; pure, shared with the transport) and, per region,
// the rte_mbuf_ext_shared_info that lets payload slices ride in mbufs without a copy. The
// shared info's refcount is 1 (the registry's own reference) plus one per attached mbuf, so
// outstanding() says how many frames still point into the region and deregistration is refused
// while any does.
// Threads: lookups and attaches (find_lkey, attach_payload*, table() checks, outstanding) write
// nothing in the registry but the regions' atomic refcounts, so any number of threads may run
// them at once. Registration and deregistration are the control path: not concurrently with them.
class MemoryRegistry {
 public:
  // The region the caller's last pointer lookup hit: a QP's packets nearly always come from the
  // region of the previous one. Each caller keeps its own (an endpoint, a worker), so the
  // lookup itself stays read-only and needs no lock.
  struct LookupHint {
    std::uint32_t index = 0;
  };

  explicit MemoryRegistry(std::uint32_t capacity = 1024);
  ~MemoryRegistry();
  MemoryRegistry(const MemoryRegistry&) = delete;
  MemoryRegistry& operator=(const MemoryRegistry&) = delete;

  // Registers [addr, addr+len) once. Also registers the enclosing pages with DPDK as external
  // memory (rte_extmem_register) so IOVA lookups and device DMA mapping work; memory that DPDK
  // already knows (hugepages, rte_malloc) is used as is.
  // ... in the default protection domain (rc::MrTable::kDefaultDomain), which QPs created
  // without a domain (rc::QpAttr::pd 0) reach.
  [[nodiscard]] Status register_memory(void* addr, std::uint64_t len, std::uint32_t access, rc::MemoryRegion& out);
  // ... in protection domain `pd` (create_domain): only QPs of `pd` reach it, by R_Key or L_Key
  // (docs/hardening.md, "Protection domains"). kNotFound for a domain that does not exist.
  [[nodiscard]] Status register_memory(void* addr, std::uint64_t len, std::uint32_t access, std::uint32_t pd,
                                       rc::MemoryRegion& out);

  // Protection domains (verbs' ibv_alloc_pd / ibv_dealloc_pd), control path. A new domain's id
  // is never 0 and never an earlier domain's; kNoMemory past rc::MrTable::kMaxDomains - 1 live.
  [[nodiscard]] Status create_domain(std::uint32_t& pd);
  // kBadState while regions are registered in it (deregister them first), kNotFound for an
  // unknown id, kInvalidArgument for the default domain. A QP left in a destroyed domain
  // reaches no region (its id is never reused).
  [[nodiscard]] Status destroy_domain(std::uint32_t pd);
  [[nodiscard]] bool domain_exists(std::uint32_t pd) const { return table_.domain_exists(pd); }
  // Capture replays (docs/hardening.md, "Forcing identities"): the same, with exactly `rkey` as
  // the region's R_Key (its L_Key is `rkey` with bit 23 flipped), so a recorded RETH names it.
  // kBadState when the slot the key's low 16 bits name is in use or beyond the table.
  [[nodiscard]] Status register_memory_with_rkey(void* addr, std::uint64_t len, std::uint32_t access,
                                                 std::uint32_t rkey, rc::MemoryRegion& out);
  // ... in protection domain `pd` (a replay of a peer whose QPs have their own domain).
  [[nodiscard]] Status register_memory_with_rkey(void* addr, std::uint64_t len, std::uint32_t access,
                                                 std::uint32_t rkey, std::uint32_t pd, rc::MemoryRegion& out);
  // Deterministic keys (a simulator, a replay): later registrations' random key parts come from
  // `seed` instead of EAL's PRNG.
  void seed_keys(std::uint64_t seed) { table_.seed_keys(seed); }
  // Refused while frames still reference the region.
  [[nodiscard]] Status deregister(std::uint32_t lkey);

  // Maps every registered region for DMA by `dev` (needed by PCI NICs with an IOMMU; virtual
  // devices answer ENOTSUP, which is fine).
  [[nodiscard]] Status dma_map(rte_device* dev);

  // Attaches [offset, offset+len) of the region with `lkey` to a freshly allocated direct mbuf
  // as an external buffer (data_len = pkt_len = len). The bytes stay where the application put
  // them. Returns false on a bad key, bounds, len > 65535 or a non-direct mbuf.
  [[nodiscard]] bool attach_payload(rte_mbuf* m, std::uint32_t lkey, std::uint64_t offset, std::uint32_t len);
  // Same, addressed by virtual address inside the region (work requests carry addresses).
  [[nodiscard]] bool attach_payload_va(rte_mbuf* m, std::uint32_t lkey, const std::uint8_t* va, std::uint32_t len);

  // Same, for a pointer the transport holds (a work request's or READ response's payload):
  // finds the region containing [va, va+len) — the caller's hint first, else a scan over the
  // registered regions (which updates the hint).
  // With `dpdk_memory_only`, regions outside DPDK's own memory are refused (the caller copies):
  // a virtio_user port's vhost-user peer can read only memory shared with it by file descriptor,
  // which is DPDK's hugepage or memfd segments, never heap pages registered as external memory.
  [[nodiscard]] bool attach_payload_ptr(rte_mbuf* m, const std::uint8_t* va, std::uint32_t len,
                                        bool dpdk_memory_only = false, LookupHint* hint = nullptr);

  // The lkey of the region holding [va, va+len), for APIs that take plain pointers; false when no
  // registered region holds all of it. Without a hint every lookup scans.
  [[nodiscard]] bool find_lkey(const void* va, std::uint64_t len, std::uint32_t& lkey,
                               LookupHint* hint = nullptr) const;

  // Frames still attached to the region with `lkey` (0 for unknown keys).
  [[nodiscard]] std::uint32_t outstanding(std::uint32_t lkey) const;

  [[nodiscard]] rc::MrTable& table() { return table_; }
  [[nodiscard]] const rc::MrTable& table() const { return table_; }

 private:
  struct Entry {
    rc::MemoryRegion mr;
    rte_mbuf_ext_shared_info shinfo;
    void* extmem_base = nullptr;  // page-aligned range we registered with DPDK, if any
    std::uint64_t extmem_len = 0;
    bool in_use = false;
    bool dpdk_memory = false;  // allocated by DPDK (hugepages, rte_malloc): has a memseg
  };
  [[nodiscard]] Status add(void* addr, std::uint64_t len, std::uint32_t access, std::uint32_t pd,
                           const std::uint32_t* forced_rkey, rc::MemoryRegion& out);
  Entry* entry(std::uint32_t lkey);
  const Entry* entry(std::uint32_t lkey) const;

  rc::MrTable table_;
  std::vector<std::unique_ptr<Entry>> entries_;  // by MrTable slot index; stable addresses for shinfo
};

}  // namespace droce::engine
