// The schedules (COLLECTIVES.md): ring reduce-scatter + allgather, Rabenseifner's halving-doubling
// with its fold for N not a power of two, chains for broadcast and reduce, the n-1 step shift
// for alltoall, and the fabric stress patterns.
#include "apps/droce-coll/schedule.h"

#include <random>

namespace droce::coll {

namespace {

class Builder {
 public:
  explicit Builder(Schedule& s) : s_(s) {}
  // Appends t when it carries anything; returns its index (-1 when empty).
  std::int32_t add(const Transfer& t) {
    if (t.count == 0) return -1;
    s_.transfers.push_back(t);
    return static_cast<std::int32_t>(s_.transfers.size() - 1);
  }
  void input(std::uint32_t rank, std::uint64_t off, std::uint64_t count, std::uint32_t key_dst) {
    if (count != 0) s_.inputs.push_back(KeyedRun{rank, off, count, rank_bit(rank), key_dst, off});
  }
  void expect(std::uint32_t rank, std::uint64_t off, std::uint64_t count, std::uint64_t contributors,
              std::uint32_t key_dst, std::uint64_t key_off) {
    if (count != 0) s_.expected.push_back(KeyedRun{rank, off, count, contributors, key_dst, key_off});
  }
  void copy(std::uint32_t rank, std::uint64_t src_off, std::uint64_t dst_off, std::uint64_t count) {
    if (count != 0) s_.copies.push_back(LocalCopy{rank, Buf::kInput, src_off, dst_off, count});
  }

 private:
  Schedule& s_;
};

Transfer make(std::uint32_t src, std::uint32_t dst, std::uint32_t step, Buf src_buf, std::uint64_t src_off,
              std::uint64_t dst_off, std::uint64_t count, Apply apply, std::uint64_t contributors,
              std::uint32_t key_dst, std::uint64_t key_off, std::int32_t after) {
  Transfer t;
  t.src = src;
  t.dst = dst;
  t.step = step;
  t.src_buf = src_buf;
  t.src_off = src_off;
  t.dst_buf = Buf::kOutput;
  t.dst_off = dst_off;
  t.add_off = dst_off;
  t.count = count;
  t.apply = apply;
  t.contributors = contributors;
  t.key_dst = key_dst;
  t.key_off = key_off;
  t.after = after;
  return t;
}

// Contributors {first, first+1, ..., first+len-1} (mod n).
std::uint64_t run_of(std::int64_t first, std::uint32_t len, std::uint32_t n) {
  std::uint64_t m = 0;
  for (std::uint32_t i = 0; i < len; ++i) m |= rank_bit(ring_mod(first + i, n));
  return m;
}

// Ring allreduce: reduce-scatter (n-1 steps, rank r sends block r-s with the sum of ranks r-s..r,
// the receiver adds its own input), then allgather (n-1 steps forwarding final blocks).
void ring_allreduce(const ScheduleParams& p, Schedule& s, Builder& b) {
  const std::uint32_t n = p.ranks;
  const std::uint64_t count = p.plan.count;
  // delivered[r][blk]: the transfer that last delivered block blk to rank r.
  std::vector<std::vector<std::int32_t>> delivered(n, std::vector<std::int32_t>(n, -1));
  for (std::uint32_t st = 0; st + 1 < n; ++st)
    for (std::uint32_t r = 0; r < n; ++r) {
      const std::uint32_t blk = ring_mod(static_cast<std::int64_t>(r) - st, n), to = (r + 1) % n;
      const std::uint64_t lo = block_lo(count, n, blk), len = block_lo(count, n, blk + 1) - lo;
      const std::int32_t i = b.add(make(r, to, st, st == 0 ? Buf::kInput : Buf::kOutput, lo, lo, len, Apply::kAddInput,
                                        run_of(static_cast<std::int64_t>(r) - st, st + 1, n), kAnyDst, lo,
                                        st == 0 ? -1 : delivered[r][blk]));
      delivered[to][blk] = i;
    }
  for (std::uint32_t st = 0; st + 1 < n; ++st)
    for (std::uint32_t r = 0; r < n; ++r) {
      const std::uint32_t blk = ring_mod(static_cast<std::int64_t>(r) + 1 - st, n), to = (r + 1) % n;
      const std::uint64_t lo = block_lo(count, n, blk), len = block_lo(count, n, blk + 1) - lo;
      const std::int32_t i = b.add(make(r, to, n - 1 + st, Buf::kOutput, lo, lo, len, Apply::kCopy, all_ranks(n),
                                        kAnyDst, lo, delivered[r][blk]));
      delivered[to][blk] = i;
    }
  (void)s;
}

// Rabenseifner: the first 2*extra ranks fold pairwise (2i sends its vector to 2i+1), the p = 2^k
// participants reduce-scatter by recursive halving and allgather by recursive doubling, and the
// folded ranks get the result back.
void halving_doubling(const ScheduleParams& p, Schedule& s, Builder& b) {
  const std::uint32_t n = p.ranks;
  const std::uint64_t count = p.plan.count;
  std::uint32_t pw = 1;
  while (pw * 2 <= n) pw *= 2;
  const std::uint32_t extra = n - pw;
  auto real = [extra](std::uint32_t v) { return v < extra ? 2 * v + 1 : v + extra; };
  auto folded = [extra](std::uint32_t v) { return v < extra; };
  std::vector<std::uint64_t> contrib(pw);
  std::vector<std::int32_t> last(pw, -1);  // the transfer that delivered v's current range
  std::uint32_t step = 0;
  for (std::uint32_t i = 0; i < extra; ++i)
    last[i] = b.add(
        make(2 * i, 2 * i + 1, step, Buf::kInput, 0, 0, count, Apply::kAddInput, rank_bit(2 * i), kAnyDst, 0, -1));
  for (std::uint32_t v = 0; v < pw; ++v)
    contrib[v] = folded(v) ? rank_bit(2 * v) | rank_bit(2 * v + 1) : rank_bit(real(v));
  if (extra != 0) ++step;
  std::vector<std::uint64_t> lo(pw, 0), hi(pw, count);
  bool first = true;
  for (std::uint32_t m = pw / 2; m >= 1; m /= 2, ++step, first = false) {
    std::vector<std::int32_t> got(pw, -1);
    std::vector<std::uint64_t> nlo(pw), nhi(pw), ncontrib(pw);
    for (std::uint32_t v = 0; v < pw; ++v) {
      const std::uint32_t pv = v ^ m;
      const std::uint64_t mid = lo[v] + (hi[v] - lo[v]) / 2;
      const bool keep_low = (v & m) == 0;
      const std::uint64_t slo = keep_low ? mid : lo[v], shi = keep_low ? hi[v] : mid;
      const bool from_input = first && !folded(v);
      const Apply apply = first && !folded(pv) ? Apply::kAddInput : Apply::kAddOutput;
      got[pv] = b.add(make(real(v), real(pv), step, from_input ? Buf::kInput : Buf::kOutput, slo, slo, shi - slo, apply,
                           contrib[v], kAnyDst, slo, from_input ? -1 : last[v]));
      nlo[v] = keep_low ? lo[v] : mid;
      nhi[v] = keep_low ? mid : hi[v];
      ncontrib[v] = contrib[v] | contrib[pv];
    }
    lo = nlo;
    hi = nhi;
    contrib = ncontrib;
    for (std::uint32_t v = 0; v < pw; ++v) last[v] = got[v];
  }
  // Recursive doubling: each rank owns pieces (a range and the transfer that delivered it) and
  // sends all of them to its partner, one transfer per piece.
  struct Piece {
    std::uint64_t lo, hi;
    std::int32_t dep;
  };
  std::vector<std::vector<Piece>> owned(pw);
  for (std::uint32_t v = 0; v < pw; ++v) owned[v].push_back(Piece{lo[v], hi[v], last[v]});
  const std::uint64_t all = all_ranks(n);
  for (std::uint32_t m = 1; m < pw; m *= 2, ++step) {
    std::vector<std::vector<Piece>> next = owned;
    for (std::uint32_t v = 0; v < pw; ++v) {
      const std::uint32_t pv = v ^ m;
      for (const Piece& pc : owned[v]) {
        const std::int32_t i = b.add(make(real(v), real(pv), step, Buf::kOutput, pc.lo, pc.lo, pc.hi - pc.lo,
                                          Apply::kCopy, all, kAnyDst, pc.lo, pc.dep));
        if (i >= 0) next[pv].push_back(Piece{pc.lo, pc.hi, i});
      }
    }
    owned = next;
  }
  for (std::uint32_t i = 0; i < extra; ++i)
    for (const Piece& pc : owned[i])
      b.add(make(2 * i + 1, 2 * i, step, Buf::kOutput, pc.lo, pc.lo, pc.hi - pc.lo, Apply::kCopy, all, kAnyDst, pc.lo,
                 pc.dep));
  (void)s;
}

// Ring reduce-scatter: rank r ends with block r, partial sums of other blocks in its scratch.
void ring_reduce_scatter(const ScheduleParams& p, Schedule& s, Builder& b) {
  const std::uint32_t n = p.ranks;
  const std::uint64_t c = p.plan.count;
  std::vector<std::vector<std::int32_t>> delivered(n, std::vector<std::int32_t>(n, -1));
  for (std::uint32_t st = 0; st + 1 < n; ++st)
    for (std::uint32_t r = 0; r < n; ++r) {
      const std::uint32_t blk = ring_mod(static_cast<std::int64_t>(r) - st - 1, n), to = (r + 1) % n;
      const bool last = st + 2 == n;  // the receiver's own block: into its output
      Transfer t = make(r, to, st, st == 0 ? Buf::kInput : Buf::kScratch, blk * c, last ? 0 : blk * c, c,
                        Apply::kAddInput, run_of(static_cast<std::int64_t>(r) - st, st + 1, n), kAnyDst, blk * c,
                        st == 0 ? -1 : delivered[r][blk]);
      t.dst_buf = last ? Buf::kOutput : Buf::kScratch;
      t.add_off = blk * c;
      delivered[to][blk] = b.add(t);
    }
  (void)s;
}

void ring_allgather(const ScheduleParams& p, Schedule& s, Builder& b) {
  const std::uint32_t n = p.ranks;
  const std::uint64_t c = p.plan.count;
  std::vector<std::vector<std::int32_t>> delivered(n, std::vector<std::int32_t>(n, -1));
  for (std::uint32_t r = 0; r < n; ++r) b.copy(r, 0, r * c, c);
  for (std::uint32_t st = 0; st + 1 < n; ++st)
    for (std::uint32_t r = 0; r < n; ++r) {
      const std::uint32_t blk = ring_mod(static_cast<std::int64_t>(r) - st, n), to = (r + 1) % n;
      delivered[to][blk] = b.add(make(r, to, st, st == 0 ? Buf::kInput : Buf::kOutput, st == 0 ? 0 : blk * c, blk * c,
                                      c, Apply::kCopy, rank_bit(blk), kAnyDst, 0, st == 0 ? -1 : delivered[r][blk]));
    }
  (void)s;
}

// A chain root, root+1, ..., root+n-1: each forwards what it received (pipelined by chunks).
void chain_broadcast(const ScheduleParams& p, Schedule& s, Builder& b) {
  const std::uint32_t n = p.ranks;
  const std::uint64_t c = p.plan.count;
  b.copy(p.root, 0, 0, c);
  std::int32_t prev = -1;
  for (std::uint32_t k = 0; k + 1 < n; ++k) {
    const std::uint32_t from = (p.root + k) % n, to = (p.root + k + 1) % n;
    prev = b.add(make(from, to, k, k == 0 ? Buf::kInput : Buf::kOutput, 0, 0, c, Apply::kCopy, rank_bit(p.root),
                      kAnyDst, 0, prev));
  }
  (void)s;
}

// A chain root+1, ..., root-1, root: each adds its input to what it received and forwards it.
void chain_reduce(const ScheduleParams& p, Schedule& s, Builder& b) {
  const std::uint32_t n = p.ranks;
  const std::uint64_t c = p.plan.count;
  std::int32_t prev = -1;
  std::uint64_t contrib = 0;
  for (std::uint32_t k = 1; k < n; ++k) {
    const std::uint32_t from = (p.root + k) % n, to = (p.root + k + 1) % n;
    contrib |= rank_bit(from);
    prev = b.add(make(from, to, k - 1, k == 1 ? Buf::kInput : Buf::kOutput, 0, 0, c, Apply::kAddInput, contrib, kAnyDst,
                      0, prev));
  }
  (void)s;
}

}  // namespace

std::vector<std::uint32_t> derangement(std::uint32_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::uint32_t> p(n);
  for (;;) {
    for (std::uint32_t i = 0; i < n; ++i) p[i] = i;
    // Fisher-Yates with the engine's own draws (std::shuffle's use of them is the library's choice).
    for (std::uint32_t i = n - 1; i > 0; --i) std::swap(p[i], p[rng() % (i + 1)]);
    bool fixed = false;
    for (std::uint32_t i = 0; i < n; ++i) fixed = fixed || p[i] == i;
    if (!fixed) return p;  // about e tries on average
  }
}

engine::Status check_params(const ScheduleParams& p) {
  using engine::StatusCode;
  if (p.ranks < 2 || p.ranks > kMaxRanks)
    return engine::Status::error(StatusCode::kInvalidArgument,
                                 "--ranks: " + std::to_string(p.ranks) + " is not 2.." + std::to_string(kMaxRanks));
  if (p.root >= p.ranks)
    return engine::Status::error(
        StatusCode::kInvalidArgument,
        "--root: " + std::to_string(p.root) + " is not a rank (0.." + std::to_string(p.ranks - 1) + ")");
  if (p.algo == Algo::kHalvingDoubling && p.pattern != Pattern::kAllReduce)
    return engine::Status::fail(StatusCode::kInvalidArgument, "--algo halving-doubling: only allreduce has it");
  return {};
}

Schedule build_schedule(const ScheduleParams& p) {
  Schedule s;
  s.ranks = p.ranks;
  Builder b(s);
  const std::uint32_t n = p.ranks;
  const SizePlan& pl = p.plan;
  const std::uint64_t c = pl.count;
  s.buffers.assign(n, RankBuffers{pl.in_elems, pl.out_elems, 0});
  switch (p.pattern) {
    case Pattern::kAllReduce:
      if (p.algo == Algo::kRing)
        ring_allreduce(p, s, b);
      else
        halving_doubling(p, s, b);
      for (std::uint32_t r = 0; r < n; ++r) {
        b.input(r, 0, c, kAnyDst);
        b.expect(r, 0, c, all_ranks(n), kAnyDst, 0);
      }
      break;
    case Pattern::kReduceScatter:
      ring_reduce_scatter(p, s, b);
      for (std::uint32_t r = 0; r < n; ++r) {
        s.buffers[r].scratch = pl.in_elems;
        b.input(r, 0, pl.in_elems, kAnyDst);
        b.expect(r, 0, c, all_ranks(n), kAnyDst, r * c);
      }
      break;
    case Pattern::kAllGather:
      ring_allgather(p, s, b);
      for (std::uint32_t r = 0; r < n; ++r) {
        b.input(r, 0, c, kAnyDst);
        for (std::uint32_t o = 0; o < n; ++o) b.expect(r, o * c, c, rank_bit(o), kAnyDst, 0);
      }
      break;
    case Pattern::kBroadcast:
      chain_broadcast(p, s, b);
      for (std::uint32_t r = 0; r < n; ++r) {
        b.input(r, 0, c, kAnyDst);
        b.expect(r, 0, c, rank_bit(p.root), kAnyDst, 0);
      }
      break;
    case Pattern::kReduce:
      chain_reduce(p, s, b);
      for (std::uint32_t r = 0; r < n; ++r) b.input(r, 0, c, kAnyDst);
      b.expect(p.root, 0, c, all_ranks(n), kAnyDst, 0);
      break;
    case Pattern::kAllToAll:
      for (std::uint32_t r = 0; r < n; ++r) {
        b.copy(r, r * c, r * c, c);
        for (std::uint32_t d = 0; d < n; ++d) {
          b.input(r, d * c, c, d);
          b.expect(r, d * c, c, rank_bit(d), r, r * c);
        }
      }
      for (std::uint32_t k = 1; k < n; ++k)
        for (std::uint32_t r = 0; r < n; ++r) {
          const std::uint32_t d = (r + k) % n;
          b.add(make(r, d, k - 1, Buf::kInput, d * c, r * c, c, Apply::kCopy, rank_bit(r), d, d * c, -1));
        }
      break;
    case Pattern::kSendRecv:
      for (std::uint32_t r = 0; r < n; ++r) {
        const std::uint32_t to = (r + 1) % n, from = (r + n - 1) % n;
        b.input(r, 0, c, to);
        b.expect(r, 0, c, rank_bit(from), r, 0);
        b.add(make(r, to, 0, Buf::kInput, 0, 0, c, Apply::kCopy, rank_bit(r), to, 0, -1));
      }
      break;
    case Pattern::kIncast:
      for (std::uint32_t r = 0; r < n; ++r) {
        s.buffers[r].out = r == p.root ? pl.out_elems : 0;
        b.input(r, 0, c, r == p.root ? kAnyDst : p.root);
        if (r == p.root) continue;
        b.expect(p.root, r * c, c, rank_bit(r), p.root, 0);
        b.add(make(r, p.root, 0, Buf::kInput, 0, r * c, c, Apply::kCopy, rank_bit(r), p.root, 0, -1));
      }
      break;
    case Pattern::kPermutation:
      s.permutation = derangement(n, p.seed);
      for (std::uint32_t r = 0; r < n; ++r) {
        const std::uint32_t to = s.permutation[r];
        b.input(r, 0, c, to);
        b.expect(to, 0, c, rank_bit(r), to, 0);
        b.add(make(r, to, 0, Buf::kInput, 0, 0, c, Apply::kCopy, rank_bit(r), to, 0, -1));
      }
      break;
    case Pattern::kBisection: {
      const std::uint32_t h = n / 2;
      for (std::uint32_t r = 0; r < n; ++r) {
        if (r >= 2 * h) {  // odd N: the last rank has no partner
          s.buffers[r] = RankBuffers{};
          continue;
        }
        const std::uint32_t peer = r < h ? r + h : r - h;
        b.input(r, 0, c, peer);
        b.expect(peer, 0, c, rank_bit(r), peer, 0);
        b.add(make(r, peer, 0, Buf::kInput, 0, 0, c, Apply::kCopy, rank_bit(r), peer, 0, -1));
      }
      break;
    }
  }
  return s;
}

bool in_place_supported(Pattern p) {
  return p == Pattern::kAllReduce || p == Pattern::kReduceScatter || p == Pattern::kAllGather ||
         p == Pattern::kBroadcast || p == Pattern::kReduce;
}

Layout layout(const ScheduleParams& p, const RankBuffers& b, std::uint32_t rank, bool in_place) {
  Layout l;
  if (!in_place || !in_place_supported(p.pattern)) {
    l.in_base = 0;
    l.out_base = b.in;
    l.scratch_base = b.in + b.out;
    l.total = b.in + b.out + b.scratch;
    return l;
  }
  const std::uint64_t c = p.plan.count;
  if (p.pattern == Pattern::kReduceScatter) {
    l.out_base = rank * c;  // inside the input
    l.scratch_base = b.in;
    l.total = b.in + b.scratch;
  } else if (p.pattern == Pattern::kAllGather) {
    l.in_base = rank * c;  // inside the output
    l.scratch_base = b.out;
    l.total = b.out + b.scratch;
  } else {
    l.scratch_base = b.in > b.out ? b.in : b.out;
    l.total = l.scratch_base + b.scratch;
  }
  return l;
}

std::vector<std::vector<std::int32_t>> hazards(const Schedule& s, const std::vector<Layout>& layouts) {
  std::vector<std::vector<std::int32_t>> h(s.transfers.size());
  auto base = [&layouts](std::uint32_t rank, Buf b) {
    const Layout& l = layouts[rank];
    return b == Buf::kInput ? l.in_base : b == Buf::kOutput ? l.out_base : l.scratch_base;
  };
  // Sends and receives by rank, to look up each receive's earlier ones.
  std::vector<std::vector<std::int32_t>> sends(s.ranks), recvs(s.ranks);
  for (std::size_t i = 0; i < s.transfers.size(); ++i) {
    sends[s.transfers[i].src].push_back(static_cast<std::int32_t>(i));
    recvs[s.transfers[i].dst].push_back(static_cast<std::int32_t>(i));
  }
  for (std::size_t i = 0; i < s.transfers.size(); ++i) {
    const Transfer& t = s.transfers[i];
    const std::uint64_t lo = base(t.dst, t.dst_buf) + t.dst_off, hi = lo + t.count;
    for (std::int32_t j : sends[t.dst]) {
      const Transfer& u = s.transfers[static_cast<std::size_t>(j)];
      if (u.step >= t.step) continue;
      const std::uint64_t ulo = base(u.src, u.src_buf) + u.src_off, uhi = ulo + u.count;
      if (ulo < hi && lo < uhi) h[i].push_back(j);
    }
    for (std::int32_t j : recvs[t.dst]) {
      const Transfer& u = s.transfers[static_cast<std::size_t>(j)];
      if (u.step >= t.step) continue;
      const std::uint64_t ulo = base(u.dst, u.dst_buf) + u.dst_off, uhi = ulo + u.count;
      if (ulo < hi && lo < uhi) h[i].push_back(~j);
    }
  }
  return h;
}

std::vector<std::uint64_t> traffic_matrix(const Schedule& s, std::uint32_t elem_bytes) {
  std::vector<std::uint64_t> m(std::size_t{s.ranks} * s.ranks, 0);
  for (const Transfer& t : s.transfers) m[std::size_t{t.src} * s.ranks + t.dst] += t.count * elem_bytes;
  return m;
}

}  // namespace droce::coll
