// Memory regions: registered application memory with L_Key/R_Key and bounds/access checks (IBTA §10.6).
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <random>
#include <vector>

namespace droce::rc {

// Access flags, named as verbs' ibv_access_flags. Local read is always allowed.
enum Access : std::uint32_t {
  kAccessLocalWrite = 1u << 0,
  kAccessRemoteWrite = 1u << 1,
  kAccessRemoteRead = 1u << 2,
  kAccessRemoteAtomic = 1u << 3,
  // The region's R_Key may be invalidated by a peer's SEND with Invalidate (IBTA §9.3.7;
  // verbs allows it for fast-registered regions and memory windows). Without it the responder
  // refuses the invalidation. An invalidated R_Key stays invalid until the region is deregistered
  // (re-registering gives new keys); the L_Key and local use are unaffected.
  kAccessRemoteInvalidate = 1u << 4,
};

struct MemoryRegion {
  std::uint8_t* addr = nullptr;  // start of the registered range (also its virtual address on the wire)
  std::uint64_t length = 0;
  std::uint32_t lkey = 0;
  std::uint32_t rkey = 0;
  std::uint32_t access = 0;
  std::uint32_t index = 0;  // slot in the table; also the low bits of both keys
  std::uint32_t pd = 0;     // its protection domain: only QPs of the same domain reach it
};

// Why an access was refused; the responder maps these to NAK codes (§9.7.5.1.3: R_Key and bounds
// violations are "remote access error"). kWrongDomain: a live key of a region in another
// protection domain than the QP's (§10.2.3: a QP and the regions it reaches share one domain);
// the peer gets the same NAK as for a bad key, so it learns nothing of the other domain.
enum class MrCheck : std::uint8_t { kOk, kBadKey, kOutOfBounds, kAccessDenied, kWrongDomain };

// A fixed-size table indexed by the low bits of the key: lookups are an array index plus a key
// compare, never a hash. A key is [31:24] a random key part (verbs' key variant, as rxe draws
// its low byte at random), [23] 1 for an R_Key and 0 for an L_Key, [15:0] the slot. The index is
// predictable (slots are handed out in order); the key part is not: a peer guessing a live R_Key
// from its index is right at most once in 254 tries (docs/hardening.md), and a stale key of a
// deregistered region never matches the next region in its slot (the part differs from the
// slot's previous one).
//
// Protection domains (IBTA §10.2.3, verbs' ibv_pd): every region belongs to one, and every check
// names the domain of the QP asking; a key of another domain's region is refused as kWrongDomain.
// Domain kDefaultDomain always exists (an owner that never creates one has one domain, as before).
// A domain's id is its slot [11:0] and a generation [31:12], so the id of a destroyed domain never
// names the next domain in its slot: a QP left with a stale id reaches nothing.
class MrTable {
 public:
  static constexpr std::uint32_t kIndexBits = 16;
  static constexpr std::uint32_t kMaxRegions = 1u << kIndexBits;
  static constexpr std::uint32_t kRkeyBit = 1u << 23;
  // The key source's seed when nobody gives one: protocol tests and fuzzers get the same keys
  // run after run. The engine seeds each registry from rte_rand() (MemoryRegistry).
  static constexpr std::uint64_t kDefaultKeySeed = 0x6b657973;  // "keys"
  static constexpr std::uint32_t kDefaultDomain = 0;
  static constexpr std::uint32_t kDomainSlotBits = 12;
  static constexpr std::uint32_t kMaxDomains = 1u << kDomainSlotBits;  // the default one included

  explicit MrTable(std::uint32_t capacity = 1024, std::uint64_t key_seed = kDefaultKeySeed)
      : slots_(capacity > kMaxRegions ? kMaxRegions : capacity),
        capacity_(static_cast<std::uint32_t>(slots_.size())),
        keys_(key_seed),
        domains_(kMaxDomains) {
    domains_[0].live = true;
  }

  // A new protection domain (control path); nullopt when all kMaxDomains - 1 are in use.
  [[nodiscard]] std::optional<std::uint32_t> create_domain() {
    for (std::uint32_t i = 1; i < kMaxDomains; ++i) {
      Domain& d = domains_[i];
      if (d.live) continue;
      d.live = true;
      d.regions = 0;
      // Generation 0 is skipped after a wrap as well: an id is never 0 (the default domain).
      d.generation = (d.generation + 1) & ((1u << (32 - kDomainSlotBits)) - 1);
      if (d.generation == 0) d.generation = 1;
      return (d.generation << kDomainSlotBits) | i;
    }
    return std::nullopt;
  }
  // False for the default domain, an unknown or destroyed id, or a domain that still has regions
  // (as ibv_dealloc_pd answers EBUSY).
  bool destroy_domain(std::uint32_t pd) {
    Domain* d = domain(pd);
    if (pd == kDefaultDomain || d == nullptr || d->regions != 0) return false;
    d->live = false;
    return true;
  }
  [[nodiscard]] bool domain_exists(std::uint32_t pd) const {
    const std::uint32_t i = pd & (kMaxDomains - 1);
    return domains_[i].live && (pd >> kDomainSlotBits) == domains_[i].generation;
  }
  // Regions registered in `pd` now (0 for an unknown domain).
  [[nodiscard]] std::uint32_t domain_regions(std::uint32_t pd) const {
    return domain_exists(pd) ? domains_[pd & (kMaxDomains - 1)].regions : 0;
  }

  // The key parts of later registrations come from `seed`: the same seed and the same
  // registrations give the same keys (the simulator, replays); a seed nobody can guess gives
  // keys nobody can guess.
  void seed_keys(std::uint64_t seed) { keys_.seed(seed); }

  // Registers [addr, addr+length) in domain `pd`. Returns nullopt if the table is full, addr is
  // null, length is 0 or the domain does not exist.
  [[nodiscard]] std::optional<MemoryRegion> register_region(void* addr, std::uint64_t length, std::uint32_t access,
                                                            std::uint32_t pd = kDefaultDomain) {
    if (addr == nullptr || length == 0 || !domain_exists(pd)) return std::nullopt;
    for (std::uint32_t n = 0; n < capacity_; ++n) {
      const std::uint32_t i = (next_free_hint_ + n) % capacity_;
      if (slots_[i].in_use) continue;
      next_free_hint_ = i + 1;
      return fill(slots_[i], addr, length, access, (next_key_part(slots_[i].key_part) << 24) | kRkeyBit | i, pd);
    }
    return std::nullopt;
  }

  // Capture replays (docs/hardening.md, "Forcing identities"): registers the region with exactly
  // `rkey`, so that a recorded RETH or AtomicETH names it; its L_Key is `rkey` with bit 23
  // flipped. nullopt when addr is null, length 0, the domain does not exist, or the slot the
  // key's low 16 bits name is beyond the table or in use.
  [[nodiscard]] std::optional<MemoryRegion> register_region_with_rkey(void* addr, std::uint64_t length,
                                                                      std::uint32_t access, std::uint32_t rkey,
                                                                      std::uint32_t pd = kDefaultDomain) {
    const std::uint32_t i = rkey & (kMaxRegions - 1);
    if (addr == nullptr || length == 0 || !domain_exists(pd) || i >= capacity_ || slots_[i].in_use) return std::nullopt;
    return fill(slots_[i], addr, length, access, rkey, pd);
  }

  // Returns false for an unknown or stale key.
  bool deregister_region(std::uint32_t lkey) {
    Slot* s = slot_for(lkey);
    if (s == nullptr || s->mr.lkey != lkey) return false;
    s->in_use = false;
    if (Domain* d = domain(s->mr.pd)) --d->regions;
    return true;
  }

  // Remote access through an R_Key (RETH / AtomicETH), §9.7.5.1.3 / §10.6.3. An invalidated
  // R_Key is a bad key, as an unknown one is; a live key of another domain's region than `pd`
  // (the QP's) is kWrongDomain.
  [[nodiscard]] MrCheck check_remote(std::uint32_t rkey, std::uint64_t va, std::uint64_t len, std::uint32_t need,
                                     std::uint8_t** out, std::uint32_t pd = kDefaultDomain) const {
    const Slot* s = slot_for(rkey);
    if (s == nullptr || s->mr.rkey != rkey || s->rkey_invalidated.load(std::memory_order_relaxed))
      return MrCheck::kBadKey;
    if (s->mr.pd != pd) return MrCheck::kWrongDomain;
    return check(s->mr, va, len, need, out);
  }

  // A peer's SEND with Invalidate (§9.3.7): makes `rkey` unusable for remote access. kBadKey for
  // an unknown, stale or already invalidated key; kAccessDenied when the region was not
  // registered with kAccessRemoteInvalidate. The flag is atomic: QPs on other threads check keys
  // of the same table while one invalidates (their order against it is undefined, as for any two
  // QPs, but never torn).
  // kWrongDomain for a key of another domain's region than `pd` (the QP's).
  MrCheck invalidate_remote(std::uint32_t rkey, std::uint32_t pd = kDefaultDomain) {
    Slot* s = slot_for(rkey);
    if (s == nullptr || s->mr.rkey != rkey || s->rkey_invalidated.load(std::memory_order_relaxed))
      return MrCheck::kBadKey;
    if (s->mr.pd != pd) return MrCheck::kWrongDomain;
    if ((s->mr.access & kAccessRemoteInvalidate) == 0) return MrCheck::kAccessDenied;
    // Exchange, not store: of two QPs invalidating the same key at once, one succeeds.
    return s->rkey_invalidated.exchange(true, std::memory_order_relaxed) ? MrCheck::kBadKey : MrCheck::kOk;
  }

  // Local access through an L_Key (scatter/gather entries of work requests) of a QP or SRQ in
  // domain `pd`: a region of another domain is kWrongDomain (verbs' local protection error).
  [[nodiscard]] MrCheck check_local(std::uint32_t lkey, std::uint64_t va, std::uint64_t len, std::uint32_t need,
                                    std::uint8_t** out, std::uint32_t pd = kDefaultDomain) const {
    const Slot* s = slot_for(lkey);
    if (s == nullptr || s->mr.lkey != lkey) return MrCheck::kBadKey;
    if (s->mr.pd != pd) return MrCheck::kWrongDomain;
    return check(s->mr, va, len, need, out);
  }

  [[nodiscard]] const MemoryRegion* find_by_lkey(std::uint32_t lkey) const {
    const Slot* s = slot_for(lkey);
    return (s != nullptr && s->mr.lkey == lkey) ? &s->mr : nullptr;
  }

 private:
  struct Slot {
    MemoryRegion mr;
    bool in_use = false;
    std::uint8_t key_part = 0;                  // of the slot's last region: the next one differs
    std::atomic<bool> rkey_invalidated{false};  // by a SEND with Invalidate (invalidate_remote)
  };
  struct Domain {
    bool live = false;
    std::uint32_t generation = 0;  // [31:12] of the id; bumped at each create in the slot
    std::uint32_t regions = 0;     // registered in it now: destroy_domain waits for 0
  };

  [[nodiscard]] Domain* domain(std::uint32_t pd) {
    return domain_exists(pd) ? &domains_[pd & (kMaxDomains - 1)] : nullptr;
  }

  // 1..255, never `previous`: uniform over the 254 (255 when previous is 0) values left.
  std::uint32_t next_key_part(std::uint8_t previous) {
    const std::uint32_t choices = previous == 0 ? 255 : 254;
    std::uint32_t k = 1 + static_cast<std::uint32_t>(keys_() % choices);
    if (previous != 0 && k >= previous) ++k;
    return k;
  }

  MemoryRegion fill(Slot& s, void* addr, std::uint64_t length, std::uint32_t access, std::uint32_t rkey,
                    std::uint32_t pd) {
    const std::uint32_t i = rkey & (kMaxRegions - 1);
    ++domain(pd)->regions;
    s.in_use = true;
    s.rkey_invalidated.store(false, std::memory_order_relaxed);
    s.key_part = static_cast<std::uint8_t>(rkey >> 24);
    // lkey and rkey differ in bit 23 so that one can never be passed for the other.
    s.mr = MemoryRegion{static_cast<std::uint8_t*>(addr), length, rkey ^ kRkeyBit, rkey, access, i, pd};
    return s.mr;
  }

  // Every work request and every WRITE/READ looks a key up: the bound is a stored count, not
  // the vector's size (a division by sizeof(Slot)).
  [[nodiscard]] Slot* slot_for(std::uint32_t key) {
    const std::uint32_t i = key & (kMaxRegions - 1);
    return (i < capacity_ && slots_[i].in_use) ? &slots_[i] : nullptr;
  }
  [[nodiscard]] const Slot* slot_for(std::uint32_t key) const {
    const std::uint32_t i = key & (kMaxRegions - 1);
    return (i < capacity_ && slots_[i].in_use) ? &slots_[i] : nullptr;
  }

  static MrCheck check(const MemoryRegion& mr, std::uint64_t va, std::uint64_t len, std::uint32_t need,
                       std::uint8_t** out) {
    if ((mr.access & need) != need) return MrCheck::kAccessDenied;
    const auto base = reinterpret_cast<std::uint64_t>(mr.addr);
    // Written so that no sum can overflow: va >= base, then offset and len against the length.
    if (va < base) return MrCheck::kOutOfBounds;
    const std::uint64_t off = va - base;
    if (off > mr.length || len > mr.length - off) return MrCheck::kOutOfBounds;
    if (out != nullptr) *out = mr.addr + off;
    return MrCheck::kOk;
  }

  std::vector<Slot> slots_;
  std::uint32_t capacity_ = 0;  // slots_.size()
  std::uint32_t next_free_hint_ = 0;
  std::mt19937_64 keys_;         // the key parts (control path only: registration)
  std::vector<Domain> domains_;  // by the id's slot bits; [0] the default domain, always live
};

}  // namespace droce::rc
