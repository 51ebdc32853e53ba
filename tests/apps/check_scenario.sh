#!/usr/bin/env bash
# One scenario file, three readers (docs/scenario.md): a flows scenario run by droce-sim and by
# droce-switch's live lab, a leaf-spine flows scenario by the lab, a pattern scenario by droce-sim
# and droce-coll; each JSON names the scenario and shows the values it gave; the command line beats
# the scenario; refusals are one line and exit 2, before any EAL. Judged on results, never timing.
# Usage: check_scenario.sh SIM SWITCH COLL SCENARIO_DIR
set -uo pipefail
sim=$1 sw=$2 coll=$3 dir=$4
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail=0
check() { if eval "$2"; then echo "ok: $1"; else echo "FAILED: $1"; sed -n 1,40p "${3:-/dev/null}"; fail=1; fi; }
eal=(-l 0 --no-huge -m 512 --no-pci --no-shconf)

# json FILE PYTHON: asserts over the JSON report d.
json() {
  /usr/bin/python3 - "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
exec(sys.argv[2])
PY
}

star=$dir/flows_star.json ls=$dir/flows_leafspine.json ring=$dir/pattern_ring.json

# flows_star: 3 flows on one switch at 0.5 Gb/s, flow 1 stops at 80 ms, flow 2 starts at 40 ms.
timeout 120 "$sim" --scenario "$star" --json "$out/sim.json" > "$out/sim.txt" 2>&1
check "droce-sim runs flows_star" "[ $? -eq 0 ]" "$out/sim.txt"
check "droce-sim's JSON names flows_star and shows its values" "json '$out/sim.json' \"
assert d['scenario'] == {'name': 'flows_star', 'file': '$star'}, d['scenario']
c = d['config']
assert c['flows'] == 3 and c['link_gbps'] == 0.5 and c['duration_ms'] == 150 and c['seed'] == 7, c
assert c['buffer_bytes'] == 256 * 1024 and c['kmin_bytes'] == 5 * 1024 and c['pmax'] == 0.1 and c['loss'] == 0, c
assert c['flow_start_ms'] == [0, 0, 40] and c['flow_stop_ms'] == [150, 80], c
assert c['recovery'] == 'gbn' and c['transport'] == 'rcqp', c
f = d['flows']
assert all(x['delivered_bytes'] > 0 for x in f), f
# The flow stopped at 80 ms of 150 sent less than the one that ran throughout.
assert f[1]['packets_sent'] < f[0]['packets_sent'], [x['packets_sent'] for x in f]
\"" "$out/sim.txt"

timeout 300 "$sw" -- --scenario "$star" --json "$out/sw.json" > "$out/sw.txt" 2>&1
check "droce-switch's lab runs flows_star" "[ $? -eq 0 ]" "$out/sw.txt"
check "droce-switch's JSON names flows_star and shows its values" "json '$out/sw.json' \"
assert d['scenario'] == {'name': 'flows_star', 'file': '$star'}, d['scenario']
c = d['config']
assert c['senders'] == 3 and c['bottleneck_gbps'] == 0.5 and c['duration_ms'] == 150 and c['fabric'] == 'star', c
assert c['buffer_bytes'] == 256 * 1024 and c['kmin_bytes'] == 5 * 1024 and c['pmax'] == 0.1, c
assert c['start_ms'] == [0, 0, 40] and c['stop_ms'] == [150, 80] and c['recovery'] == 'gbn', c
assert d['data_ok'] and all(s['messages'] > 0 for s in d['senders']), d['senders']
\"" "$out/sw.txt"

# flows_leafspine: 4 senders on leafspine:2,2, lossless, selective repeat, sender 3 from 20 to 120 ms.
timeout 300 "$sw" -- --scenario "$ls" --lab-duration-ms 150 --json "$out/swls.json" > "$out/swls.txt" 2>&1
check "droce-switch's lab runs flows_leafspine" "[ $? -eq 0 ]" "$out/swls.txt"
check "droce-switch's JSON names flows_leafspine and shows its values" "json '$out/swls.json' \"
assert d['scenario'] == {'name': 'flows_leafspine', 'file': '$ls'}, d['scenario']
c = d['config']
assert c['senders'] == 4 and c['bottleneck_gbps'] == 0.5 and c['pfc'] and c['recovery'] == 'sr', c
assert c['fabric'] == 'leafspine:2,2' and c['start_ms'] == [0, 0, 20, 20] and c['stop_ms'] == [150, 150, 150, 120], c
assert d['data_ok'] and all(s['messages'] > 0 for s in d['senders']), d['senders']
\"" "$out/swls.txt"

# The command line beats the scenario: flows_star at 2 % loss; the lab's recovery gbn over sr.
timeout 120 "$sim" --scenario "$star" --loss 0.02 --json "$out/sim2.json" > "$out/sim2.txt" 2>&1
check "droce-sim: --loss 0.02 beats the scenario (which gives none)" "[ $? -eq 0 ] && json '$out/sim2.json' \"
assert d['config']['loss'] == 0.02 and d['config']['seed'] == 7 and d['scenario']['name'] == 'flows_star', d['config']
\"" "$out/sim2.txt"
timeout 300 "$sw" -- --scenario "$ls" --lab-duration-ms 100 --recovery gbn --json "$out/swls2.json" > "$out/swls2.txt" 2>&1
check "droce-switch: --recovery gbn beats the scenario's sr" "[ $? -eq 0 ] && json '$out/swls2.json' \"
assert d['config']['recovery'] == 'gbn' and d['config']['senders'] == 4 and d['data_ok'], d['config']
\"" "$out/swls2.txt"

# pattern_ring: a 4-rank ring allreduce of 64 KiB on one switch at 1 Gb/s.
timeout 120 "$sim" --scenario "$ring" --json "$out/simring.json" > "$out/simring.txt" 2>&1
check "droce-sim runs pattern_ring (leaf-spine model, 1 leaf x 1 spine)" "[ $? -eq 0 ] && json '$out/simring.json' \"
assert d['complete'] and d['size'] == 65536, d['size']
\"" "$out/simring.txt"
timeout 300 "$coll" "${eal[@]}" -- --scenario "$ring" --iters 2 --warmup_iters 1 --json "$out/coll.json" \
  > "$out/coll.txt" 2>&1
check "droce-coll runs pattern_ring" "[ $? -eq 0 ]" "$out/coll.txt"
check "droce-coll's JSON names pattern_ring and shows its values" "json '$out/coll.json' \"
assert d['scenario'] == {'name': 'pattern_ring', 'file': '$ring'}, d['scenario']
c = d['config']
assert c['pattern'] == 'allreduce' and c['algo'] == 'ring' and c['ranks'] == 4, c
assert d['ok'] and [r['size'] for r in d['results']] == [65536], d['results']
\"" "$out/coll.txt"

# Refusals: one line naming the file and the JSON path, exit 2, nothing run.
printf '{"name": "x", "fabric": {"ecn": {"kmin": 1}}}' > "$out/unknown.json"
printf '{"name": "x", "fabric": {"host_gbps": "fast"}}' > "$out/type.json"
printf '{"name": "x", "fabric": {"loss": 0.01}, "traffic": {"flows": [{}]}}' > "$out/loss.json"
refused() {  # NAME WANT BINARY ARGS...
  local name=$1 want=$2 bin=$3; shift 3
  timeout 60 "$bin" "$@" > "$out/r.out" 2> "$out/r.err"
  local rc=$?
  check "$name" "[ $rc -eq 2 ] && [ \$(wc -l < '$out/r.err') -eq 1 ] && grep -qF -- \"$want\" '$out/r.err' && [ ! -s '$out/r.out' ] && ! grep -q '^EAL' '$out/r.err'" "$out/r.err"
}
refused "unknown key refused (droce-sim)" "$out/unknown.json: fabric.ecn.kmin: unknown key (known: kmin_bytes, kmax_bytes, pmax)" \
  "$sim" --scenario "$out/unknown.json" --json "$out/x.json"
refused "wrong type refused (droce-coll)" "$out/type.json: fabric.host_gbps: must be a number" \
  "$coll" "${eal[@]}" -- --scenario "$out/type.json"
refused "a pattern refused by droce-switch" "traffic.pattern: droce-switch runs flows, not a pattern" \
  "$sw" -- --scenario "$ring"
refused "flows refused by droce-coll" "traffic.flows: droce-coll runs a pattern, not flows" \
  "$coll" "${eal[@]}" -- --scenario "$star"
refused "leaf-spine flows refused by droce-sim" "fabric.topology: runs flows on the star only" \
  "$sim" --scenario "$ls" --json "$out/x.json"
refused "random loss refused by droce-switch's lab" "loss.json: fabric.loss: the live lab has no random loss" \
  "$sw" -- --scenario "$out/loss.json"
# The options the scenarios map onto, refused on their own as any bad option is.
refused "droce-sim: a stop before the start" "--flow-stop-ms: flow 0 must stop after it starts" \
  "$sim" --flows 2 --flow-stop-ms 0 --json "$out/x.json"
refused "droce-sim: more times than flows" "--flow-start-ms, --flow-stop-ms: more times than --flows" \
  "$sim" --flows 2 --flow-start-ms 1,2,3 --json "$out/x.json"
refused "droce-sim: per-flow starts with --incast" "--flow-start-ms: not with --incast" \
  "$sim" --flows 2 --incast --flow-start-ms 1 --json "$out/x.json"
refused "droce-switch: --loss in the lab" "--loss, --duplicate, --reorder: impair real ports, not the lab" \
  "$sw" -- --lab-senders 2 --loss 0.01
refused "droce-switch: --recovery between real ports" "--recovery: the lab senders'" "$sw" -- --recovery sr
refused "a missing file refused" "scenario $out/none.json: cannot be read" "$sim" --scenario "$out/none.json" --json "$out/x.json"

[ $fail -eq 0 ] && echo "check_scenario: all checks passed"
exit $fail
