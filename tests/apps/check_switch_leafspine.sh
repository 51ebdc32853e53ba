#!/usr/bin/env bash
# droce-switch's live lab on a leaf-spine (--fabric leafspine:L,S, issue 38 item 1): three droce
# senders and one receiver on two leaves and two spines. Every WRITE verified; every link in the
# JSON by name; the bytes on the uplinks are exactly what crossed leaves; a forced ECMP collision
# on one uplink, the other idle; a link failing under its flows, which move to the other spine.
# Lossless (PFC) so that nothing is dropped and the byte sums are exact; judged on counters only.
set -uo pipefail
sw=$(realpath "$1")
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail=0
check() { if eval "$2"; then echo "ok: $1"; else echo "FAILED: $1"; sed -n 1,40p "${3:-/dev/null}"; fail=1; fi; }
lab=(--lab-senders 3 --fabric leafspine:2,2 --lab-duration-ms 200 --cc none --pfc --pfc-xoff-bytes 30000
  --pfc-xon-bytes 15000)

# Placement: the receiver on leaf 1 (the last), senders 0 and 2 on leaf 0, sender 1 beside the
# receiver on leaf 1: only senders 0 and 2 cross the spines.
"$sw" -- "${lab[@]}" --json "$out/ls.json" > "$out/ls.txt" 2>&1
check "leaf-spine lab exits 0, data verified" "[ $? -eq 0 ] && grep -q 'data verified: yes' '$out/ls.txt'" "$out/ls.txt"
check "leaf-spine JSON: placement, every link by name, the uplinks carry exactly what crossed leaves" \
  "/usr/bin/python3 - '$out/ls.json' <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
f = d['fabric']
assert d['data_ok'] and all(s['messages'] > 0 and s['errors'] == 0 for s in d['senders']), d['senders']
assert [s['leaf'] for s in f['placement']['senders']] == [0, 1, 0] and f['placement']['receiver']['leaf'] == 1, f
links = {l['name']: l for l in f['links']}
assert sorted(links) == ['leaf0-spine0', 'leaf0-spine1', 'leaf1-spine0', 'leaf1-spine1'], sorted(links)
assert all(l[d_]['tail_drops'] == 0 for l in links.values() for d_ in ('up', 'down'))
assert d['bottleneck']['tail_drops'] == 0 and all(i['tail_drops'] == 0 for i in d['ingress'])
# Everything senders 0 and 2 sent went up leaf 0's uplinks and down the spines to leaf 1, and
# nothing else did: sender 1's traffic stayed on leaf 1.
crossed = d['ingress'][0]['rx_bytes'] + d['ingress'][2]['rx_bytes']
up0 = links['leaf0-spine0']['up']['tx_bytes'] + links['leaf0-spine1']['up']['tx_bytes']
down1 = links['leaf1-spine0']['down']['tx_bytes'] + links['leaf1-spine1']['down']['tx_bytes']
assert crossed > 0 and up0 == crossed and down1 == crossed, (crossed, up0, down1)
# The receiver's ACKs to senders 0 and 2 go the other way, up leaf 1 and down to leaf 0.
up1 = links['leaf1-spine0']['up']['tx_bytes'] + links['leaf1-spine1']['up']['tx_bytes']
assert 0 < up1 <= d['bottleneck']['rx_bytes'], (up1, d['bottleneck']['rx_bytes'])
# One series entry per link and direction, as long as the time axis.
s = d['series']
n = len(s['time_ms'])
assert n > 0 and [l['name'] for l in s['links']] == [l['name'] for l in f['links']]
assert all(len(l[x][k]) == n for l in s['links'] for x in ('up', 'down')
           for k in ('queue_bytes', 'tx_gbps', 'ecn_marked', 'pfc_pauses', 'drops'))
PY" "$out/ls.txt"

# A forced collision: hashing the destination port alone (4791 for every RoCEv2 frame) puts
# both of leaf 0's flows on one spine; its other uplink carries nothing.
"$sw" -- "${lab[@]}" --ecmp-hash dst-port --json "$out/col.json" > "$out/col.txt" 2>&1
check "collision lab exits 0" "[ $? -eq 0 ]" "$out/col.txt"
check "collision: one of leaf 0's uplinks carries every crossing byte, the other none" \
  "/usr/bin/python3 - '$out/col.json' > '$out/busy' <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
links = {l['name']: l for l in d['fabric']['links']}
up = [links['leaf0-spine%d' % s]['up'] for s in (0, 1)]
crossed = d['ingress'][0]['rx_bytes'] + d['ingress'][2]['rx_bytes']
busy = [s for s in (0, 1) if up[s]['tx_frames'] > 0]
assert d['data_ok'] and len(busy) == 1, [u['tx_frames'] for u in up]
assert up[busy[0]]['tx_bytes'] == crossed and up[1 - busy[0]]['tx_bytes'] == 0
print(busy[0])
PY" "$out/col.txt"

# The busy uplink fails 30 ms in and never returns: leaf 0's flows move to the other spine
# (resilient re-hash), what the failed link held is resent, every WRITE still verified.
busy=$(cat "$out/busy" 2>/dev/null || echo 0)
"$sw" -- "${lab[@]}" --lab-duration-ms 300 --ecmp-hash dst-port --link-down "0:$busy@30" \
  --json "$out/ld.json" > "$out/ld.txt" 2>&1
check "link-down lab exits 0, data verified" "[ $? -eq 0 ] && grep -q 'data verified: yes' '$out/ld.txt'" "$out/ld.txt"
check "link down: counted on leaf0-spine$busy, leaf 0's flows re-hashed onto the other spine" \
  "/usr/bin/python3 - '$out/ld.json' $busy <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
busy = int(sys.argv[2])
links = {l['name']: l for l in d['fabric']['links']}
failed, other = links['leaf0-spine%d' % busy], links['leaf0-spine%d' % (1 - busy)]
assert d['data_ok'] and not failed['link_up'] and failed['downs'] == 1 and failed['last_down_ms'] >= 30, failed
assert failed['up']['rehashed_frames'] > 0 and failed['up']['rehashed_flows'] >= 1, failed['up']
assert other['up']['tx_frames'] > 0, other['up']
assert d['fabric']['link_failures'] == [{'link': 'leaf0-spine%d' % busy, 'down_ms': 30.0, 'up_ms': None}]
PY" "$out/ld.txt"

# The one-switch lab has no fabric in its JSON (its report is unchanged).
"$sw" -- --lab-senders 2 --lab-duration-ms 50 --json "$out/star.json" > "$out/star.txt" 2>&1
check "one-switch lab: no fabric, no link series" "[ $? -eq 0 ] && /usr/bin/python3 - '$out/star.json' <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert 'fabric' not in d and 'links' not in d['series'], list(d)
PY" "$out/star.txt"
exit $fail
