#!/usr/bin/env bash
# droce-switch's live lab on a leaf-spine (--fabric leafspine:L,S, issue 38 item 1): three droce
# senders and one receiver on two leaves and two spines. Every WRITE verified; every link in the
# JSON by name; the bytes on the uplinks are exactly what crossed leaves; a forced ECMP collision
# on one uplink, the other idle; a link failing under its flows, which move to the other spine.
# Lossless (PFC) so that nothing is dropped and the byte sums are exact; judged on counters only.
# Then (item 2) the switch between real ports on a leaf-spine: two droce-gen processes over memif,
# one port on each leaf, every message verified and every frame across the spines.
set -uo pipefail
sw=$(realpath "$1")
gen=$(realpath "$2")
out=$(mktemp -d)
tag=$$
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$out" /tmp/droce-swls-$tag-*.sock; }
trap cleanup EXIT
fail=0
check() { if eval "$2"; then echo "ok: $1"; else echo "FAILED: $1"; sed -n 1,40p "${3:-/dev/null}"; fail=1; fi; }
lab=(--lab-senders 3 --fabric leafspine:2,2 --lab-duration-ms 200 --cc none --pfc --pfc-xoff-bytes 30000
  --pfc-xon-bytes 15000)

# Placement: the receiver on leaf 1 (the last), senders 0 and 2 on leaf 0, sender 1 beside the
# receiver on leaf 1: only senders 0 and 2 cross the spines.
# One link with its own ECN thresholds and delay (--link): in the JSON's settings, the others the switch's.
"$sw" -- "${lab[@]}" --link leaf0-spine1:ecn=20K:200K:0.05,delay-us=3 --json "$out/ls.json" > "$out/ls.txt" 2>&1
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
assert f['link_specs'] == ['leaf0-spine1:ecn=20K:200K:0.05,delay-us=3'], f['link_specs']
own = links['leaf0-spine1']['settings']
assert all(own[x]['kmin_bytes'] == 20480 and own[x]['pmax'] == 0.05 and own[x]['delay_us'] == 3 for x in ('up', 'down')), own
assert all(own[x]['pfc'] and own[x]['pfc_xoff_bytes'] == 30000 for x in ('up', 'down')), own
tier = links['leaf0-spine0']['settings']['up']
assert tier['kmin_bytes'] != 20480 and tier['delay_us'] == 0 and tier['pfc'], tier
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

# Between real ports: client -> memif port 0 (leaf 0) -> a spine -> leaf 1 -> memif port 1 -> server.
# Nothing floods on a leaf-spine (an ARP request would go nowhere): each gen is given its peer's MAC.
s0=/tmp/droce-swls-$tag-0.sock
s1=/tmp/droce-swls-$tag-1.sock
oob=$((20000 + (tag + 7919) % 20000))
"$sw" --no-pci -l 1 --vdev "net_memif0,role=server,socket=$s0" --vdev "net_memif1,role=server,socket=$s1" -- \
  --fabric leafspine:2,2 --route 10.0.0.1/32=0 --route 10.0.0.2/32=1 --duration 60 --quiet \
  --json "$out/sw.json" > "$out/sw.txt" 2>&1 &
swpid=$!
pids+=($swpid)
sleep 1
timeout 100 "$gen" --no-pci -l 1 --vdev "net_memif0,role=client,socket=$s1,mac=02:00:00:00:00:02" -- \
  --mode server --oob-port $oob --peer-mac 02:00:00:00:00:01 --quiet > "$out/srv.txt" 2>&1 &
pids+=($!)
sleep 1
timeout 100 "$gen" --no-pci -l 0 --vdev "net_memif0,role=client,socket=$s0,mac=02:00:00:00:00:01" -- \
  --mode client --oob-port $oob --peer-mac 02:00:00:00:00:02 --op write --size 4096 --count 2000 --quiet \
  > "$out/cli.txt" 2>&1
check "real ports on a leaf-spine: droce-gen client -> server, every message verified" "[ $? -eq 0 ]" "$out/cli.txt"
kill -INT $swpid 2>/dev/null
wait $swpid
check "real ports on a leaf-spine: every frame of port 0 up leaf 0's uplinks and down to port 1, and back" \
  "/usr/bin/python3 - '$out/sw.json' <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
p, links = d['ports'], {l['name']: l for l in d['fabric']['links']}
assert d['fabric']['ports_per_leaf'] == 1 and sorted(links) == ['leaf0-spine0', 'leaf0-spine1', 'leaf1-spine0', 'leaf1-spine1']
for a, b in ((0, 1), (1, 0)):
    up = sum(links['leaf%d-spine%d' % (a, s)]['up']['tx_frames'] for s in (0, 1))
    down = sum(links['leaf%d-spine%d' % (b, s)]['down']['tx_frames'] for s in (0, 1))
    # Frames still queued at the stop (the peer had gone) are counted as queued.
    assert p[a]['rx_frames'] == up + p[a]['unrouted'] + sum(links['leaf%d-spine%d' % (a, s)]['up']['queue_frames'] for s in (0, 1)), (a, p, up)
    assert up == down + sum(links['leaf%d-spine%d' % (b, s)]['down']['queue_frames'] for s in (0, 1)), (a, up, down)
    assert p[b]['tx_frames'] + p[b]['queue_frames'] + p[b]['tail_drops'] == down, (b, p, down)
assert p[0]['rx_frames'] >= 8000
PY" "$out/sw.txt"
# Ports that do not divide into the leaves, and a port without a host, refused once EAL has them.
"$sw" --no-pci --vdev net_null0 --vdev net_null1 -- --fabric leafspine:3,1 --route 10.0.0.1/32=0 \
  --route 10.0.0.2/32=1 --duration 1 > "$out/e1.txt" 2>&1
check "2 ports over 3 leaves refused" "[ $? -eq 1 ] && grep -q '2 ports do not divide into 3 leaves' '$out/e1.txt'" "$out/e1.txt"
"$sw" --no-pci --vdev net_null0 --vdev net_null1 -- --fabric leafspine:2,1 --route 10.0.0.1/32=0 --duration 1 \
  > "$out/e2.txt" 2>&1
check "a port without a host refused" "[ $? -eq 1 ] && grep -q 'port 1 has no host' '$out/e2.txt'" "$out/e2.txt"
exit $fail
