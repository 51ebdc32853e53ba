#!/usr/bin/env bash
# droce-gen end to end: a lossy run completes with every message verified and the JSON keys
# scripts rely on; bad input gives one clear error and a non-zero exit.
set -uo pipefail
gen=$1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail=0
check() { if eval "$2"; then echo "ok: $1"; else echo "FAILED: $1"; fail=1; fi; }

"$gen" -- --op write --size 3000 --loss 0.02 --count 3000 --quiet --json "$out/w.json" > "$out/w.txt" 2>&1
check "lossy WRITE run exits 0" "[ $? -eq 0 ]"
"$gen" -- --op read --size 8192 --mtu 4096 --loss 0.02 --count 800 --quiet --json "$out/r.json" > "$out/r.txt" 2>&1
check "lossy READ run exits 0" "[ $? -eq 0 ]"
"$gen" -- --op send --size 100 --qps 3 --loss 0.05 --count 3000 --quiet --json "$out/s.json" > "$out/s.txt" 2>&1
check "lossy SEND run over 3 QPs exits 0" "[ $? -eq 0 ]"
for j in w r s; do
  check "JSON $j has every key, no loss, no duplicates, retransmissions seen" "/usr/bin/python3 - '$out/$j.json' <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
keys = ['messages', 'bytes', 'duration_s', 'goodput_gbps', 'msg_rate_mps', 'latency_ns', 'retransmitted_packets',
        'naks_sent', 'naks_received', 'rnr_naks', 'cnps_sent', 'cnps_received', 'lost', 'duplicated',
        'out_of_order', 'corrupted', 'errors', 'config']
assert all(k in d for k in keys), [k for k in keys if k not in d]
assert all(k in d['latency_ns'] for k in ['p50', 'p90', 'p99', 'p999', 'max'])
assert d['messages'] > 0 and d['lost'] == 0 and d['duplicated'] == 0 and d['corrupted'] == 0 and d['errors'] == 0
assert d['retransmitted_packets'] > 0
PY"
done
"$gen" -- --bogus > "$out/e1.txt" 2>&1
check "unknown option exits 2 with a message" "[ $? -eq 2 ] && grep -q 'unknown option' '$out/e1.txt'"
"$gen" -- --mtu 1000 > "$out/e2.txt" 2>&1
check "--mtu 1000 refused" "[ $? -eq 2 ] && grep -q 'not an IB MTU' '$out/e2.txt'"
"$gen" -- --size 0 > "$out/e3.txt" 2>&1
check "--size 0 refused" "[ $? -eq 2 ] && grep -q -- '--size' '$out/e3.txt'"
"$gen" -- --mode client > "$out/e4.txt" 2>&1
check "--mode client says it is not implemented" "[ $? -eq 2 ] && grep -q 'only' '$out/e4.txt'"
[ $fail -eq 0 ] && echo "droce-gen checks passed"
exit $fail
