#!/usr/bin/env bash
# droce-gen's workloads (issue 40): large messages verified end to end in loopback and over
# memif, a request that cannot fit refused with its figure before EAL, the thresholds'
# verdict (--expect-gbps / --expect-p99-us: exit 3 below, 0 above, the verdict in the JSON), and
# the peak and minimum interval bandwidth beside the average.
# Usage: check_gen_workloads.sh DROCE_GEN [SANITIZE]: SANITIZE (meson's b_sanitize) other than
# "none" scales the large messages down (64 MiB -> 4 MiB, 256 MiB -> 16 MiB): under ASan every
# payload word is checked by the sanitizer and 256 MiB messages would take minutes.
set -uo pipefail
gen=$1
sanitize=${2:-none}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail=0
check() {
  if eval "$2"; then echo "ok: $1"; return; fi
  echo "FAILED: $1"
  fail=1
}
MiB=$((1 << 20))
big=$((64 * MiB)) huge=$((256 * MiB))
if [ "$sanitize" != none ]; then big=$((4 * MiB)) huge=$((16 * MiB)); fi
# verified JSON MESSAGES BYTES_EACH: every message verified, nothing lost, the bytes add up.
verified() {
  /usr/bin/python3 - "$@" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); n, size = int(sys.argv[2]), int(sys.argv[3])
assert d['messages'] == n and d['bytes'] == n * size, (d['messages'], d['bytes'], n, size)
assert d['lost'] == d['duplicated'] == d['out_of_order'] == d['corrupted'] == d['errors'] == 0, d
assert d['problem'] == '' and d['config']['size'] == [size], d['config']
PY
}

# ---- large messages (item 1): the buffers on the heap, registered once, every byte checked ----
# Loopback holds both ends' buffers: 2 x 2 x 64 MiB and 2 x 1 x 256 MiB (512 MiB at most).
"$gen" -- --op write --size "$big" --inflight 2 --count 6 --quiet --json "$out/big.json" > "$out/big.txt" 2>&1
check "loopback WRITE of $((big / MiB)) MiB messages, 2 in flight: 6 verified" \
  "[ $? -eq 0 ] && verified '$out/big.json' 6 $big || { tail -n 4 '$out/big.txt'; false; }"
"$gen" -- --op send --size "$huge" --inflight 1 --count 2 --quiet --json "$out/huge.json" > "$out/huge.txt" 2>&1
check "loopback SEND of $((huge / MiB)) MiB messages: 2 verified, their lengths too" \
  "[ $? -eq 0 ] && verified '$out/huge.json' 2 $huge || { tail -n 4 '$out/huge.txt'; false; }"
mid=$((4 * MiB))  # READ and an odd length test their paths, not the size: 4 MiB keeps them short
"$gen" -- --op read --size "$mid" --inflight 1 --count 3 --quiet --json "$out/bigread.json" > "$out/bigread.txt" 2>&1
check "loopback READ of $((mid / MiB)) MiB messages: 3 verified" \
  "[ $? -eq 0 ] && verified '$out/bigread.json' 3 $mid || { tail -n 4 '$out/bigread.txt'; false; }"
# A size that is not a multiple of 8 (the pattern's last partial word) at 4 KiB MTU.
odd=$((mid + 5))
"$gen" -- --op write --size "$odd" --mtu 4096 --inflight 1 --count 3 --quiet --json "$out/odd.json" > "$out/odd.txt" 2>&1
check "loopback WRITE of $odd-byte messages (a partial last word), MTU 4096: 3 verified" \
  "[ $? -eq 0 ] && verified '$out/odd.json' 3 $odd || { tail -n 4 '$out/odd.txt'; false; }"

# Over net_memif between two processes: each holds one end's 2 x 64 MiB. Filling them took up to
# 12 s on a loaded host, so each side waits 120 s for the other (the 30 s default is not a bound
# this test means to check).
free_port() { /usr/bin/python3 -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])"; }
last_cpu=$(( $(nproc) - 1 ))
port=$(free_port)
timeout 400 "$gen" -l "$last_cpu" --no-pci --vdev "net_memif0,role=server,socket=$out/big.sock" -- --mode server \
  --oob-port "$port" --op write --size "$big" --inflight 2 --qp-timeout 16 --connect-timeout 120 --quiet --json "$out/mem.s.json" \
  > "$out/mem.s.txt" 2>&1 &
spid=$!
# The server listens: net_memif's socket is abstract (/proc/net/unix shows @PATH).
for _ in $(seq 300); do grep -q -F "@$out/big.sock" /proc/net/unix && break; sleep 0.1; done
timeout 400 "$gen" -l 0 --no-pci --vdev "net_memif0,role=client,socket=$out/big.sock" -- --mode client \
  --oob-port "$port" --op write --size "$big" --inflight 2 --qp-timeout 16 --connect-timeout 120 --count 6 --quiet --json "$out/mem.c.json" \
  > "$out/mem.c.txt" 2>&1
crc=$?
wait $spid
src=$?
check "memif WRITE of $((big / MiB)) MiB messages: both ends exit 0 (client $crc, server $src), the server verified all 6" \
  "[ $crc -eq 0 ] && [ $src -eq 0 ] && verified '$out/mem.c.json' 6 $big && verified '$out/mem.s.json' 6 $big \
   || { tail -n 4 '$out/mem.s.txt' '$out/mem.c.txt'; false; }"

# What cannot fit is refused before EAL with the figure: 2 ends x 64 QPs x 128 x 1 GiB = 16384 GiB.
"$gen" -- --size 1G --qps 64 --inflight 128 > "$out/e1.txt" 2>&1
check "--size 1G --qps 64 --inflight 128 refused (exit 2) naming 16384.0 GiB and what is available" \
  "[ $? -eq 2 ] && [ \$(wc -l < '$out/e1.txt') -eq 1 ] && grep -q 'needs 16384.0 GiB of message buffers' '$out/e1.txt' \
   && grep -q 'MemAvailable' '$out/e1.txt' || { cat '$out/e1.txt'; false; }"
"$gen" -- --size 1025M > "$out/e2.txt" 2>&1
check "--size above 1 GiB refused (exit 2) naming the option" \
  "[ $? -eq 2 ] && grep -q -- '--size' '$out/e2.txt' || { cat '$out/e2.txt'; false; }"

# ---- thresholds (item 5): the verdict in the JSON, its own exit status ----
"$gen" -- --op write --size 4096 --count 2000 --expect-gbps 100000 --quiet --json "$out/t1.json" > "$out/t1.txt" 2>&1
check "--expect-gbps 100000: a verified run below it exits 3, says BELOW THRESHOLD, JSON verdict fail" \
  "[ $? -eq 3 ] && grep -q 'BELOW THRESHOLD: goodput .* is below --expect-gbps 100000' '$out/t1.txt' && \
   /usr/bin/python3 -c \"import json; d=json.load(open('$out/t1.json')); e=d['expect']; assert e['verdict'] == 'fail' and 'expect-gbps' in e['reason'] and d['messages'] == 2000 and d['problem'] == '', d['expect']\" \
   || { tail -n 3 '$out/t1.txt'; false; }"
"$gen" -- --op write --size 4096 --count 2000 --expect-p99-us 0.001 --quiet --json "$out/t2.json" > "$out/t2.txt" 2>&1
check "--expect-p99-us 0.001: exits 3, the reason names the p99" \
  "[ $? -eq 3 ] && /usr/bin/python3 -c \"import json; d=json.load(open('$out/t2.json')); e=d['expect']; assert e['verdict'] == 'fail' and 'p99 latency' in e['reason'], e\" \
   || { tail -n 3 '$out/t2.txt'; false; }"
# Thresholds any working run meets (1 kb/s, 60 s p99): exit 0, verdict pass.
"$gen" -- --op write --size 4096 --count 2000 --expect-gbps 0.000001 --expect-p99-us 60000000 --quiet \
  --json "$out/t3.json" > "$out/t3.txt" 2>&1
check "thresholds met: exit 0, JSON verdict pass" \
  "[ $? -eq 0 ] && /usr/bin/python3 -c \"import json; d=json.load(open('$out/t3.json')); e=d['expect']; assert e['verdict'] == 'pass' and e['reason'] == '' and e['gbps'] == 1e-06, e\" \
   || { tail -n 3 '$out/t3.txt'; false; }"
"$gen" -- --op write --size 4096 --count 200 --quiet --json "$out/t4.json" > /dev/null 2>&1
check "no threshold: verdict none" \
  "/usr/bin/python3 -c \"import json; assert json.load(open('$out/t4.json'))['expect']['verdict'] == 'none'\""
# A run that fails (every frame lost: retries exhausted) exits 1, the runtime failure, not 3.
# Half the frames lost, no retry allowed: the first NAK or timeout fails the QP (800 packets sent).
"$gen" -- --op write --size 4096 --count 200 --loss 0.5 --retry-cnt 0 --adaptive-rto off --expect-gbps 100000 \
  --quiet > "$out/t5.txt" 2>&1
check "a failed run with a threshold exits 1, not 3" "[ $? -eq 1 ] || { tail -n 3 '$out/t5.txt'; false; }"
"$gen" -- --mode server --expect-p99-us 10 > "$out/e3.txt" 2>&1
check "--expect-p99-us on a server refused (exit 2): the client measures latency" \
  "[ $? -eq 2 ] && grep -q -- '--expect-p99-us' '$out/e3.txt'"

# peaks_match JSON FEED: the report's peak and minimum interval goodput are the feed's counted
# lines' extremes; the first line (begun in the warm-up) and the partial last one are not counted.
peaks_match() {
  /usr/bin/python3 - "$@" <<'PY'
import json, math, sys
d = json.load(open(sys.argv[1]))
lines = [json.loads(l) for l in open(sys.argv[2])]
bw = d['interval_goodput_gbps']
ivs = [l for l in lines if not l['final']]
counted = [l['interval']['goodput_gbps'] for l in ivs if l['counted']]
assert d['problem'] == '' and d['lost'] == 0 and d['messages'] > 0, d['problem']
assert bw['interval_s'] == 0.25 and bw['intervals'] == len(counted) >= 1, (bw, len(counted))
assert math.isclose(bw['peak'], max(counted), rel_tol=1e-12) and math.isclose(bw['min'], min(counted), rel_tol=1e-12), (bw, counted)
assert bw['min'] <= bw['peak'], bw
assert ivs[-1]['partial'] and not ivs[-1]['counted'] and not ivs[0]['counted'], (ivs[0], ivs[-1])
assert all(not l['partial'] for l in ivs if l['counted'])
assert lines[-1]['final'] and lines[-1]['interval_goodput_gbps'] == bw, lines[-1].get('interval_goodput_gbps')
PY
}

# ---- peak and minimum interval bandwidth (item 5): full intervals after the warm-up ----
# The report's peak and minimum are exactly the feed's lines marked counted: none is the partial
# last one or one that began in the warm-up (the first line began at 0 s, inside the 0.5 s).
"$gen" -- --op write --size 4096 --duration 2 --warmup 0.5 --interval 0.25 --quiet --json "$out/pk.json" \
  --stats-json "$out/pk.jsonl" > "$out/pk.txt" 2>&1
check "peak/min interval goodput: the report's figures are the feed's counted intervals, warm-up and partial excluded" \
  "[ $? -eq 0 ] && grep -q 'BW per interval \[Gb/sec\]: peak [0-9.]*  min [0-9.]*  ([0-9]* full intervals of 0.25 s after the warm-up)' '$out/pk.txt' && \
   peaks_match '$out/pk.json' '$out/pk.jsonl' || { tail -n 4 '$out/pk.txt'; false; }"
# A run shorter than one interval has no full interval: null figures, said so in the text.
"$gen" -- --op write --size 4096 --count 50 --interval 30 --quiet --json "$out/pk0.json" > "$out/pk0.txt" 2>&1
check "a run shorter than --interval: no peak or minimum (null), the text says so" \
  "[ $? -eq 0 ] && grep -q 'BW per interval \[Gb/sec\]: no full 30.00 s interval after the warm-up' '$out/pk0.txt' && \
   /usr/bin/python3 -c \"import json; b=json.load(open('$out/pk0.json'))['interval_goodput_gbps']; assert b == {'interval_s': 30.0, 'intervals': 0, 'peak': None, 'min': None}, b\" \
   || { tail -n 4 '$out/pk0.txt'; false; }"

exit $fail
