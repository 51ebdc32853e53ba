#!/usr/bin/env bash
# droce-coll end to end (one process each, --no-huge, no root): every pattern at N = 2, 3, 4 and 8,
# every byte verified, clean and at 1 % loss with 1 % reordering and duplication; every switch
# port's first-transmission payload equal to the schedule's; ring allreduce's traffic matrix the
# theory's; 64 ranks; two workers; a capture; a size that is not whole elements; a stalled rank.
# Judged on results only (a busy machine makes every run slower, never wrong).
set -uo pipefail
coll=$1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail=0
check() { if eval "$2"; then echo "ok: $1"; else echo "FAILED: $1"; sed -n 1,60p "${3:-/dev/null}"; fail=1; fi; }
eal=(-l 0 --no-huge -m 512 --no-pci --no-shconf)
# A JSON report: nothing wrong, every port's first-transmission payload the schedule's, and when
# the links lost frames, retransmissions counted.
verify() {
  /usr/bin/python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d['ok'] and d['wrong'] == 0 and d['failure'] == '', (d['wrong'], d['failure'])
assert all(r['wrong'] == 0 for r in d['results'])
for p in d['ports']:
    assert p['ingress_payload_first_bytes'] == p['schedule_payload_bytes'], p
m = d['traffic_matrix']
assert m['measured'] == m['schedule']
dropped = sum(p['link_impairment']['dropped'] for p in d['ports'])
retx = sum(r[k]['retransmitted_packets'] for r in d['results'] for k in ('out_of_place', 'in_place') if k in r)
assert dropped == 0 or retx > 0, (dropped, retx)
PY
}

patterns="allreduce reduce_scatter allgather broadcast reduce alltoall sendrecv incast permutation bisection"
for lossy in 0 1; do
  imp=()
  [ "$lossy" = 1 ] && imp=(--loss 0.01 --reorder 0.01 --duplicate 0.01 --seed 7)
  for p in $patterns; do
    bad=""
    for n in 2 3 4 8; do
      f="$out/$p-$n-$lossy"
      "$coll" "${eal[@]}" -- --pattern "$p" --ranks "$n" --root $((n - 1)) --size 48K --chunk 4K --iters 2 \
        --warmup_iters 1 --quiet --json "$f.json" "${imp[@]}" > "$f.txt" 2>&1
      rc=$?
      if [ $rc -ne 0 ] || ! verify "$f.json" > "$f.check" 2>&1; then bad="$bad $n"; cat "$f.txt" "$f.check" | tail -15; fi
    done
    check "$p at N = 2, 3, 4, 8$([ "$lossy" = 1 ] && echo ' with 1 % loss, reordering, duplication'): exact, ports = schedule" "[ -z '$bad' ]"
  done
done

# halving-doubling, N not a power of two too, and selective repeat under loss.
for n in 3 4 8; do
  "$coll" "${eal[@]}" -- --algo halving-doubling --ranks $n --size 40K --chunk 4K --iters 2 --warmup_iters 1 \
    --quiet --json "$out/hd$n.json" --loss 0.01 --recovery sr > "$out/hd$n.txt" 2>&1
  check "allreduce halving-doubling N=$n, selective repeat at 1 % loss: exact" "[ $? -eq 0 ] && verify '$out/hd$n.json'" "$out/hd$n.txt"
done

# Ring allreduce: each rank sends 2(N-1)/N x size to its successor and nothing to anyone else.
"$coll" "${eal[@]}" -- --ranks 4 --size 64K --iters 2 --warmup_iters 1 --placement out-of-place --quiet \
  --json "$out/ring.json" > "$out/ring.txt" 2>&1
check "ring allreduce's traffic matrix is the theory's (2(N-1)/N x size to the successor only)" "[ $? -eq 0 ] && /usr/bin/python3 - '$out/ring.json' <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
n, size, iters = 4, 65536, 3
m = d['traffic_matrix']['measured']
for a in range(n):
    for b in range(n):
        assert m[a][b] == (2 * (n - 1) * size // n * iters if b == (a + 1) % n else 0), (a, b, m[a][b])
PY" "$out/ring.txt"

"$coll" -l 0 --no-huge -m 1024 --no-pci --no-shconf -- --ranks 64 --size 64K --chunk 4K --iters 1 --warmup_iters 0 \
  --placement out-of-place --quiet --json "$out/r64.json" > "$out/r64.txt" 2>&1
check "64 ranks in one process: allreduce verified" "[ $? -eq 0 ] && verify '$out/r64.json'" "$out/r64.txt"

# Two workers (two lcores polling disjoint ranks, the switch on the first). A busy two-core machine
# deschedules a poller for tens of ms: the QP timeout is long enough not to call that loss.
"$coll" -l 0-1 --no-huge -m 512 --no-pci --no-shconf -- --workers 2 --pattern alltoall --ranks 8 --size 64K \
  --chunk 4K --iters 2 --warmup_iters 1 --qp-timeout 18 --loss 0.01 --quiet --json "$out/w2.json" > "$out/w2.txt" 2>&1
check "two workers: alltoall at 1 % loss exact" "[ $? -eq 0 ] && verify '$out/w2.json'" "$out/w2.txt"

# A capture of what the ranks send, cut to the snap length, that tshark reads as RoCEv2.
"$coll" "${eal[@]}" -- --ranks 2 --size 16K --iters 1 --warmup_iters 0 --quiet --pcap "$out/c.pcap" \
  --pcap-snaplen 128 > "$out/c.txt" 2>&1
check "--pcap: a pcap tshark decodes as InfiniBand over UDP, frames cut to --pcap-snaplen" "[ $? -eq 0 ] &&
  [ \$(tshark -r '$out/c.pcap' -Y infiniband 2>/dev/null | wc -l) -gt 10 ] &&
  [ \$(tshark -r '$out/c.pcap' -T fields -e frame.cap_len 2>/dev/null | sort -n | tail -1) -le 128 ]" "$out/c.txt"

# Hostile runs: one line, exit 2, before EAL; a stalled rank named within --timeout, exit non-zero.
"$coll" -- --size 1001 --dtype int32 > "$out/b.txt" 2>&1
check "a size that is not whole elements: one line, exit 2" "[ $? -eq 2 ] && [ \$(wc -l < '$out/b.txt') -eq 1 ] &&
  grep -q 'not a whole number of int32 elements' '$out/b.txt'" "$out/b.txt"
"$coll" -- --chunk 6 --dtype float > "$out/b2.txt" 2>&1
check "a chunk that is not whole elements: one line, exit 2" "[ $? -eq 2 ] && [ \$(wc -l < '$out/b2.txt') -eq 1 ]" "$out/b2.txt"
start=$(date +%s)
timeout 120 "$coll" "${eal[@]}" -- --ranks 4 --size 64K --iters 2 --warmup_iters 1 --quiet --stall-rank 2 \
  --timeout 3 > "$out/s.txt" 2>&1
rc=$?
check "a stalled rank: named ('rank 2 stalled'), exit non-zero, within the timeout's bound" "[ $rc -ne 0 ] && [ $rc -ne 124 ] &&
  grep -q 'rank 2 stalled' '$out/s.txt' && [ \$((\$(date +%s) - start)) -lt 60 ]" "$out/s.txt"

[ $fail -eq 0 ] && echo "droce-coll: all checks passed"
exit $fail
