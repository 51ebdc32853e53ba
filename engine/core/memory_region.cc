// Memory registry: rc::MrTable keys plus DPDK external-memory registration and extbuf attach.
#include "engine/core/memory_region.h"

#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_memory.h>
#include <rte_random.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace droce::engine {
namespace {

// Called by DPDK when the last reference to a region's shared info goes away: that is the
// registry's own reference at deregistration, so there is nothing to free here — the
// application owns the memory.
void ext_free_noop(void* /*addr*/, void* /*opaque*/) {}

// IOVA of a payload byte. In VA mode it is the address itself. In PA mode, memory DPDK
// allocated has a memseg and rte_mem_virt2iova is a table lookup; for other application memory
// it would read /proc/self/pagemap on every call (a syscall per packet), and that memory cannot
// be DMA-mapped in PA mode anyway, so virtual devices get the virtual address, which they use.
rte_iova_t iova_of(const void* va, bool dpdk_memory) {
  if (rte_eal_iova_mode() == RTE_IOVA_VA || !dpdk_memory) return reinterpret_cast<rte_iova_t>(va);
  const rte_iova_t iova = rte_mem_virt2iova(va);
  return iova == RTE_BAD_IOVA ? reinterpret_cast<rte_iova_t>(va) : iova;
}

}  // namespace

// R_Keys nobody can predict: each registry's key parts come from EAL's PRNG (seeded at EAL init),
// unless the embedder seeds them itself (seed_keys, for deterministic runs).
MemoryRegistry::MemoryRegistry(std::uint32_t capacity) : table_(capacity, rte_rand()), entries_(capacity) {}

MemoryRegistry::~MemoryRegistry() {
  for (auto& e : entries_)
    if (e && e->in_use && e->extmem_base != nullptr) rte_extmem_unregister(e->extmem_base, e->extmem_len);
}

MemoryRegistry::Entry* MemoryRegistry::entry(std::uint32_t lkey) {
  const rc::MemoryRegion* mr = table_.find_by_lkey(lkey);
  if (mr == nullptr || mr->index >= entries_.size() || !entries_[mr->index]) return nullptr;
  return entries_[mr->index].get();
}
const MemoryRegistry::Entry* MemoryRegistry::entry(std::uint32_t lkey) const {
  const rc::MemoryRegion* mr = table_.find_by_lkey(lkey);
  if (mr == nullptr || mr->index >= entries_.size() || !entries_[mr->index]) return nullptr;
  return entries_[mr->index].get();
}

Status MemoryRegistry::create_domain(std::uint32_t& pd) {
  const auto id = table_.create_domain();
  if (!id)
    return Status::error(StatusCode::kNoMemory, "create_domain: all " + std::to_string(rc::MrTable::kMaxDomains - 1) +
                                                    " protection domains are in use");
  pd = *id;
  return {};
}

Status MemoryRegistry::destroy_domain(std::uint32_t pd) {
  if (pd == rc::MrTable::kDefaultDomain)
    return Status::error(StatusCode::kInvalidArgument, "destroy_domain: the default domain (0) is never destroyed");
  if (!table_.domain_exists(pd))
    return Status::error(StatusCode::kNotFound, "destroy_domain: no protection domain " + std::to_string(pd));
  if (!table_.destroy_domain(pd))
    return Status::error(StatusCode::kBadState, "destroy_domain: domain " + std::to_string(pd) + " still has " +
                                                    std::to_string(table_.domain_regions(pd)) + " regions");
  return {};
}

Status MemoryRegistry::register_memory(void* addr, std::uint64_t len, std::uint32_t access, rc::MemoryRegion& out) {
  return add(addr, len, access, rc::MrTable::kDefaultDomain, nullptr, out);
}

Status MemoryRegistry::register_memory(void* addr, std::uint64_t len, std::uint32_t access, std::uint32_t pd,
                                       rc::MemoryRegion& out) {
  return add(addr, len, access, pd, nullptr, out);
}

Status MemoryRegistry::register_memory_with_rkey(void* addr, std::uint64_t len, std::uint32_t access,
                                                 std::uint32_t rkey, rc::MemoryRegion& out) {
  return add(addr, len, access, rc::MrTable::kDefaultDomain, &rkey, out);
}

Status MemoryRegistry::register_memory_with_rkey(void* addr, std::uint64_t len, std::uint32_t access,
                                                 std::uint32_t rkey, std::uint32_t pd, rc::MemoryRegion& out) {
  return add(addr, len, access, pd, &rkey, out);
}

Status MemoryRegistry::add(void* addr, std::uint64_t len, std::uint32_t access, std::uint32_t pd,
                           const std::uint32_t* forced_rkey, rc::MemoryRegion& out) {
  auto mr = forced_rkey == nullptr ? table_.register_region(addr, len, access, pd)
                                   : table_.register_region_with_rkey(addr, len, access, *forced_rkey, pd);
  if (!mr) {
    if (addr == nullptr || len == 0)
      return Status::error(StatusCode::kInvalidArgument, "cannot register an empty memory region");
    if (!table_.domain_exists(pd))
      return Status::error(StatusCode::kNotFound, "register_memory: no protection domain " + std::to_string(pd));
    if (forced_rkey != nullptr)
      return Status::error(StatusCode::kBadState, "R_Key " + std::to_string(*forced_rkey) +
                                                      ": its slot (low 16 bits) is in use or beyond the table");
    return Status::error(StatusCode::kNoMemory, "memory region table is full");
  }
  auto& slot = entries_[mr->index];
  if (!slot) slot = std::make_unique<Entry>();
  Entry& e = *slot;
  e = Entry{};
  e.mr = *mr;
  e.in_use = true;
  // Refcount 1 is the registry's own reference; each attached mbuf adds one.
  e.shinfo.free_cb = ext_free_noop;
  e.shinfo.fcb_opaque = nullptr;
  rte_mbuf_ext_refcnt_set(&e.shinfo, 1);

  // Memory DPDK does not know yet is registered as external memory (page-aligned); memory from
  // hugepages or rte_malloc already has a memseg and must not be registered twice.
  // Memory DPDK allocated has a non-external memseg list; application memory may already sit in
  // an external one (a neighbouring region registered pages that overlap it).
  const rte_memseg_list* msl = rte_mem_virt2memseg_list(addr);
  e.dpdk_memory = msl != nullptr && !msl->external;
  if (msl == nullptr) {
    const auto page = static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
    const auto start = reinterpret_cast<std::uint64_t>(addr) & ~(page - 1);
    const auto end = (reinterpret_cast<std::uint64_t>(addr) + len + page - 1) & ~(page - 1);
    void* base = reinterpret_cast<void*>(start);
    if (rte_extmem_register(base, end - start, nullptr, 0, page) == 0) {
      e.extmem_base = base;
      e.extmem_len = end - start;
    }
    // EEXIST (overlaps an earlier registration) and other failures leave the region usable by
    // virtual devices, which need no IOVA; dma_map() reports problems for real NICs.
  }
  out = *mr;
  return {};
}

Status MemoryRegistry::deregister(std::uint32_t lkey) {
  Entry* e = entry(lkey);
  if (e == nullptr) return Status::error(StatusCode::kNotFound, "no memory region with lkey " + std::to_string(lkey));
  const std::uint32_t refs = rte_mbuf_ext_refcnt_read(&e->shinfo);
  if (refs > 1)
    return Status::error(StatusCode::kBadState, "memory region " + std::to_string(lkey) + " is still referenced by " +
                                                    std::to_string(refs - 1) + " frames");
  if (e->extmem_base != nullptr) rte_extmem_unregister(e->extmem_base, e->extmem_len);
  e->in_use = false;
  e->extmem_base = nullptr;
  if (!table_.deregister_region(lkey))
    return Status::error(StatusCode::kError, "memory region vanished during deregistration");
  return {};
}

Status MemoryRegistry::dma_map(rte_device* dev) {
  for (auto& e : entries_) {
    if (!e || !e->in_use) continue;
    const int rc = rte_dev_dma_map(dev, e->mr.addr, iova_of(e->mr.addr, e->dpdk_memory), e->mr.length);
    if (rc != 0 && rte_errno != ENOTSUP && rte_errno != EEXIST)
      return Status::error(StatusCode::kIo, std::string("cannot DMA-map a memory region for device ") +
                                                rte_dev_name(dev) + ": " + rte_strerror(rte_errno));
  }
  return {};
}

bool MemoryRegistry::attach_payload(rte_mbuf* m, std::uint32_t lkey, std::uint64_t offset, std::uint32_t len) {
  const Entry* e = entry(lkey);
  if (e == nullptr || offset >= e->mr.length) return false;
  return attach_payload_va(m, lkey, e->mr.addr + offset, len);
}

bool MemoryRegistry::attach_payload_va(rte_mbuf* m, std::uint32_t lkey, const std::uint8_t* va, std::uint32_t len) {
  Entry* e = entry(lkey);
  if (e == nullptr || len == 0 || len > UINT16_MAX || !RTE_MBUF_DIRECT(m) || rte_mbuf_refcnt_read(m) != 1) return false;
  std::uint8_t* p = nullptr;
  // The region's own domain: the QP that posted the work request had its L_Key checked against
  // its domain already (RcQp::post_send).
  if (table_.check_local(lkey, reinterpret_cast<std::uint64_t>(va), len, 0, &p, e->mr.pd) != rc::MrCheck::kOk)
    return false;
  rte_mbuf_ext_refcnt_update(&e->shinfo, 1);
  rte_pktmbuf_attach_extbuf(m, p, iova_of(p, e->dpdk_memory), static_cast<std::uint16_t>(len), &e->shinfo);
  m->data_len = static_cast<std::uint16_t>(len);
  m->pkt_len = len;
  return true;
}

bool MemoryRegistry::find_lkey(const void* ptr, std::uint64_t len, std::uint32_t& lkey, LookupHint* hint) const {
  const auto* va = static_cast<const std::uint8_t*>(ptr);
  auto contains = [&](const Entry& e) {
    return e.in_use && va >= e.mr.addr && len <= e.mr.length &&
           static_cast<std::uint64_t>(va - e.mr.addr) <= e.mr.length - len;
  };
  if (hint != nullptr && hint->index < entries_.size() && entries_[hint->index] && contains(*entries_[hint->index])) {
    lkey = entries_[hint->index]->mr.lkey;
    return true;
  }
  for (std::uint32_t i = 0; i < entries_.size(); ++i) {
    if (entries_[i] && contains(*entries_[i])) {
      if (hint != nullptr) hint->index = i;
      lkey = entries_[i]->mr.lkey;
      return true;
    }
  }
  return false;
}

bool MemoryRegistry::attach_payload_ptr(rte_mbuf* m, const std::uint8_t* va, std::uint32_t len, bool dpdk_memory_only,
                                        LookupHint* hint) {
  std::uint32_t lkey = 0;
  if (!find_lkey(va, len, lkey, hint)) return false;
  if (dpdk_memory_only) {
    const Entry* e = entry(lkey);
    if (e == nullptr || !e->dpdk_memory) return false;
  }
  return attach_payload_va(m, lkey, va, len);
}

std::uint32_t MemoryRegistry::outstanding(std::uint32_t lkey) const {
  const Entry* e = entry(lkey);
  return e == nullptr ? 0 : rte_mbuf_ext_refcnt_read(&e->shinfo) - 1;
}

}  // namespace droce::engine
