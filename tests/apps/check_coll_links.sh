#!/usr/bin/env bash
# droce-coll --link (docs/fabric-lab.md, "Per-link settings"): an allreduce over leafspine:2,2 with
# three links given their own rate, buffer, delay, RED/ECN and PFC completes with every element
# verified, and the JSON's fabric.links[].settings show each direction's effective values (the
# link's own, else the switch's). Judged on results only. Refusals: tests/apps/check_options.sh.
set -uo pipefail
coll=$1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail=0
check() { if eval "$2"; then echo "ok: $1"; else echo "FAILED: $1"; sed -n 1,80p "${3:-/dev/null}"; fail=1; fi; }
eal=(-l 0 --no-huge -m 512 --no-pci --no-shconf)

"$coll" "${eal[@]}" -- --fabric leafspine:2,2 --ranks 4 --pattern allreduce --size 256K --iters 1 --warmup_iters 0 \
  --quiet --egress-gbps 10 --uplink-gbps 10 --pfc \
  --link leaf0-spine1:gbps=40,buffer=256K,delay-us=5,ecn=20K:200K:0.05,pfc=off \
  --link leaf1-spine0:dir=up,delay-us=2 --link leaf1-spine1:pfc=64K:32K --json "$out/l.json" > "$out/l.txt" 2>&1
rc=$?
check "allreduce with three links of their own: exact, settings in the JSON" "[ $rc -eq 0 ] &&
  /usr/bin/python3 - '$out/l.json' <<'PY' 2>&1 | tee -a '$out/l.txt' && [ \${PIPESTATUS[0]} -eq 0 ]
import json, sys
d = json.load(open(sys.argv[1]))
assert d['ok'] and d['wrong'] == 0, d['failure']
f = d['fabric']
assert f['link_specs'] == ['leaf0-spine1:gbps=40,buffer=256K,delay-us=5,ecn=20K:200K:0.05,pfc=off',
                           'leaf1-spine0:dir=up,delay-us=2', 'leaf1-spine1:pfc=64K:32K'], f['link_specs']
links = {l['name']: l['settings'] for l in f['links']}
own = {'gbps': 40.0, 'buffer_bytes': 262144, 'delay_us': 5.0, 'kmin_bytes': 20480, 'kmax_bytes': 204800,
       'pmax': 0.05, 'pfc': False, 'pfc_xoff_bytes': None, 'pfc_xon_bytes': None}
tier = {'gbps': 10.0, 'buffer_bytes': 1000000, 'delay_us': 0.0, 'kmin_bytes': 5000, 'kmax_bytes': 200000,
        'pmax': 0.01, 'pfc': True, 'pfc_xoff_bytes': 100000, 'pfc_xon_bytes': 50000}
assert links['leaf0-spine1']['up'] == own and links['leaf0-spine1']['down'] == own, links['leaf0-spine1']
assert links['leaf1-spine0']['up'] == dict(tier, delay_us=2.0), links['leaf1-spine0']
assert links['leaf1-spine0']['down'] == tier, links['leaf1-spine0']
assert links['leaf0-spine0'] == {'up': tier, 'down': tier}, links['leaf0-spine0']
pfc = dict(tier, pfc_xoff_bytes=65536, pfc_xon_bytes=32768)
assert links['leaf1-spine1'] == {'up': pfc, 'down': pfc}, links['leaf1-spine1']
PY" "$out/l.txt"

[ $fail -eq 0 ] && echo "droce-coll --link: all checks passed"
exit $fail
