#!/usr/bin/env bash
# Smoke check of pfc_storm (the fabric's own clock, so exact on any host): without a watchdog a
# stuck NIC's pauses hold two of the four innocent flows; with one at 5 ms every innocent flow is
# whole again in the last half, the storm's frames dropped at the stuck port only; bad options
# refused. A few seconds.
set -uo pipefail
storm=$1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail=0
check() { if eval "$2"; then echo "ok: $1"; else echo "FAILED: $1"; fail=1; fi; }
json() { /usr/bin/python3 -c "import json, sys; d = json.load(open('$1')); s = d['summary']; sys.exit(0 if ($2) else 1)"; }

timeout 120 "$storm" --duration-ms 30 --stuck-endpoint none --json "$out/h.json" > /dev/null
check "healthy: every flow delivers what it sends, nothing paused" \
  "[ $? -eq 0 ] && json '$out/h.json' \"all(f['delivered'] == f['sent'] or f['sent'] - f['delivered'] <= 3 for f in d['flows']) and s['hosts_paused'] == 0 and s['egress_ports_paused'] == 0\""
timeout 120 "$storm" --duration-ms 30 --stuck-endpoint 0 --json "$out/s.json" > /dev/null
check "stuck, no watchdog: pauses reach the spines' downlinks and other leaves' hosts, two innocent flows held" \
  "[ $? -eq 0 ] && json '$out/s.json' \"s['storm_gbps'] == 0 and sum(f['gbps_last_half'] == 0 for f in d['flows'] if f['kind'] == 'innocent') == 2 and s['hosts_paused'] >= 3 and any(p['name'].startswith('spine') and p['paused_fraction'] > 0.9 for p in d['egress_ports']) and s['tail_drops'] == 0\""
timeout 120 "$storm" --duration-ms 30 --stuck-endpoint 0 --pfc-watchdog-ms 5 --json "$out/w.json" > /dev/null
check "stuck, watchdog 5 ms: one trip at the stuck port, every innocent flow whole in the last half" \
  "[ $? -eq 0 ] && json '$out/w.json' \"s['watchdog_trips'] == 1 and [p['name'] for p in d['egress_ports'] if p['watchdog_trips']] == ['leaf0-ep0'] and abs(s['innocent_gbps_last_half'] - s['innocent_offered_gbps']) < 0.01 * s['innocent_offered_gbps'] and s['tail_drops'] == 0\""
"$storm" --stuck-endpoint 8 > "$out/bad.txt" 2>&1
rc=$?
check "a host that does not exist refused, exit 2, naming the option" "[ $rc -eq 2 ] && grep -q -- '--stuck-endpoint' '$out/bad.txt'"
"$storm" --pfc-xoff-bytes 2000 --pfc-xon-bytes 3000 > "$out/bad.txt" 2>&1
rc=$?
check "XON above XOFF refused, exit 2" "[ $rc -eq 2 ] && grep -q -- '--pfc-xon-bytes' '$out/bad.txt'"
exit $fail
