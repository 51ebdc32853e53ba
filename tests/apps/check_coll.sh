#!/usr/bin/env bash
# droce-coll end to end (one process each, --no-huge, no root): every pattern at N = 2, 3, 4 and 8,
# every byte verified, clean and at 1 % loss with 1 % reordering and duplication; every switch
# port's first-transmission payload equal to the schedule's; ring allreduce's traffic matrix the
# theory's; 64 ranks; two workers; a capture; a leaf-spine fabric with ECMP (collision and spread);
# a size that is not whole elements; a stalled rank.
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
# --json -: the JSON alone on stdout (ring.json), nccl-tests' table on stderr.
"$coll" "${eal[@]}" -- --ranks 4 --size 64K --iters 2 --warmup_iters 1 --placement out-of-place --quiet \
  --json - > "$out/ring.json" 2> "$out/ring.txt"
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

# Leaf-spine (--fabric leafspine:2,2, 4 ranks per leaf): exact; every leaf-spine link named and
# counted; what went up came down; the bytes between leaves crossed the uplinks; with the hash on
# the destination port alone (--ecmp-hash dst-port) each leaf's traffic collides on one uplink,
# while 4 QPs per peer over the 5-tuple use both. With the hash on the source port alone, the
# user's ports decide: --udp-sport 50000,0 puts every QP on one port (one uplink a leaf), and
# 50000,1 gives a pair's 4 QPs 4 ports that reach both spines. Each run's queue series is whole.
fabric_check() {
  /usr/bin/python3 - "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
mode = sys.argv[2]
f = d['fabric']
assert f['topology'] == 'leafspine' and f['leaves'] == 2 and f['spines'] == 2, f
links = f['links']
assert sorted(l['name'] for l in links) == ['leaf0-spine0', 'leaf0-spine1', 'leaf1-spine0', 'leaf1-spine1'], links
for l in links:
    assert l['name'] == 'leaf%d-spine%d' % (l['leaf'], l['spine'])
    assert l['up']['tail_drops'] == 0 and l['down']['tail_drops'] == 0 and l['up']['unrouted'] == 0, l
up = sum(l['up']['tx_frames'] for l in links)
assert up == sum(l['down']['tx_frames'] for l in links) and up > 0, links
per_leaf = f['ranks_per_leaf']
m = d['traffic_matrix']['measured']
across = sum(m[a][b] for a in range(len(m)) for b in range(len(m)) if a // per_leaf != b // per_leaf)
assert across > 0 and sum(l['up']['tx_bytes'] for l in links) >= across, (across, links)
for leaf in (0, 1):
    used = [l for l in links if l['leaf'] == leaf and l['up']['tx_frames'] > 0]
    if mode in ('collide', 'sport-one'):
        assert len(used) == 1, ('every flow of a leaf hashes alike: one uplink', mode, links)
    else:
        assert len(used) == 2, ('4 QPs per peer on distinct ports use both spines', mode, links)
want = {'sport-one': '50000,0', 'sport-spread': '50000,1'}.get(mode, 'derived')
assert d['config']['udp_sport'] == want, d['config']
# The queue series (--sample-ms, 1 by default): one value per sample for every rank port and both
# directions of every link, named as the links are, in time order; an uplink that carried nothing
# never held anything.
s = f['series']
n = s['samples']
assert s['sample_ms'] == 1 and n == len(s['time_ms']) > 0 and s['samples_dropped'] == 0, s['samples']
assert all(a < b for a, b in zip(s['time_ms'], s['time_ms'][1:]))
assert [p['rank'] for p in s['ports']] == list(range(len(m))) and all(len(p['queue_bytes']) == n for p in s['ports'])
assert sorted(l['name'] for l in s['links']) == sorted(l['name'] for l in links)
for l in s['links']:
    assert len(l['up_queue_bytes']) == n and len(l['down_queue_bytes']) == n, l['name']
    counted = next(c for c in links if c['name'] == l['name'])
    if counted['up']['tx_frames'] == 0:
        assert max(l['up_queue_bytes']) == 0, l
    assert max(l['up_queue_bytes']) <= counted['up']['queue_max_bytes'], (l['name'], counted['up'])
PY
}
for mode in collide spread sport-one sport-spread; do
  case $mode in
    collide) extra=(--ecmp-hash dst-port) ;;
    spread) extra=(--qps-per-peer 4) ;;
    sport-one) extra=(--qps-per-peer 4 --ecmp-hash src-port --udp-sport 50000,0) ;;
    sport-spread) extra=(--qps-per-peer 4 --ecmp-hash src-port --udp-sport 50000,1) ;;
  esac
  "$coll" "${eal[@]}" -- --fabric leafspine:2,2 --pattern alltoall --ranks 8 --size 64K --chunk 4K --iters 1 \
    --warmup_iters 0 --quiet --json "$out/ls-$mode.json" "${extra[@]}" > "$out/ls-$mode.txt" 2>&1
  check "leaf-spine 2x2, alltoall at 8 ranks ($mode): exact, links named and counted, up = down" \
    "[ $? -eq 0 ] && verify '$out/ls-$mode.json' && fabric_check '$out/ls-$mode.json' $mode" "$out/ls-$mode.txt"
done
"$coll" -- --fabric leafspine:3,2 --ranks 8 > "$out/lsb.txt" 2>&1
check "--fabric leafspine:3,2 with 8 ranks: one line, exit 2" "[ $? -eq 2 ] && [ \$(wc -l < '$out/lsb.txt') -eq 1 ] &&
  grep -q 'do not divide' '$out/lsb.txt'" "$out/lsb.txt"
"$coll" -- --fabric leafspine:2,2 --ecmp-hash src-ip,sport > "$out/lsh.txt" 2>&1
check "--ecmp-hash with an unknown field: one line naming it, exit 2" "[ $? -eq 2 ] && [ \$(wc -l < '$out/lsh.txt') -eq 1 ] &&
  grep -q sport '$out/lsh.txt'" "$out/lsh.txt"
"$coll" -- --qps-per-peer 4 --udp-sport 65534,1 > "$out/usp.txt" 2>&1
check "--udp-sport whose 4 QPs pass 65535: one line naming it, exit 2" "[ $? -eq 2 ] &&
  [ \$(wc -l < '$out/usp.txt') -eq 1 ] && grep -q -- '--udp-sport' '$out/usp.txt'" "$out/usp.txt"
"$coll" -- --udp-sport 0 > "$out/usz.txt" 2>&1
check "--udp-sport 0: one line naming it, exit 2" "[ $? -eq 2 ] && [ \$(wc -l < '$out/usz.txt') -eq 1 ] &&
  grep -q -- '--udp-sport' '$out/usz.txt'" "$out/usz.txt"

# The lab's failure switches (issue 39), PFC on, on the leaf-spine: rank 3 a slow receiver (its NIC
# drains at 0.2 of its 2 Gb/s port, and pauses the port above 18 KB of its 36 KB buffer) and a drop
# rule taking every 300th frame of each flow at every ingress. Exact; the slow rank's pauses counted
# at its port and no other; the rule's drops counted and resent by the transport. (A 64 KiB
# chunk's frames leave rank 3's port at its 2 Gb/s, five times the drain, however slow the host
# that polls it: each chunk fills the NIC's buffer past XOFF.)
"$coll" "${eal[@]}" -- --fabric leafspine:2,2 --pattern allreduce --ranks 4 --size 1M --egress-gbps 2 --pfc \
  --slow-receiver 3:0.2 --slow-receiver-buffer-bytes 36000 --drop-rule every:300 --iters 2 --warmup_iters 1 --quiet \
  --json "$out/fs.json" > "$out/fs.txt" 2>&1
check "leaf-spine with a slow receiver and a drop rule: exact, pauses and drops counted where they happen" \
  "[ $? -eq 0 ] && verify '$out/fs.json' && /usr/bin/python3 - '$out/fs.json' <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
sw = [p['switch'] for p in d['ports']]
assert sw[3]['slow_receiver_pauses'] > 0 and sw[3]['pfc_pause_received'] >= sw[3]['slow_receiver_pauses'], sw[3]
assert 0 < sw[3]['slow_receiver_max_bytes'] <= 36000, sw[3]
assert all(s['slow_receiver_pauses'] == 0 for s in sw[:3]), sw
assert all(s['tail_drops'] == 0 for s in sw), sw
rule = sum(s['rule_drops'] for s in sw)
retx = sum(r[k]['retransmitted_packets'] for r in d['results'] for k in ('out_of_place', 'in_place') if k in r)
assert rule > 0 and retx > 0, (rule, retx)
PY" "$out/fs.txt"
for bad in "--slow-receiver 1:0.5" "--stuck-rank 1" "--pfc --slow-receiver 4:0.5" "--pfc --stuck-rank 4" \
    "--pfc --stuck-rank 1 --slow-receiver 1:0.5" "--pfc --slow-receiver 1:1.5" "--drop-rule every:1"; do
  # shellcheck disable=SC2086  # options and values are words
  "$coll" -- --ranks 4 $bad > "$out/fb.txt" 2>&1
  check "$bad with 4 ranks refused in one line naming its option" "[ $? -eq 2 ] && [ \$(wc -l < '$out/fb.txt') -eq 1 ] &&
    grep -Eq -- '--(slow-receiver|stuck-rank|drop-rule)' '$out/fb.txt'" "$out/fb.txt"
done

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
