#!/usr/bin/env bash
# droce-coll --link-down (docs/fabric-lab.md, "A link down and up"): an allreduce over
# leafspine:2,2 whose leaf 0 uplink fails 50 ms into the timed run and returns at 150 ms completes
# with every element verified; the failed link's drops and the re-hashed flows are counted, the
# times reported; bad values refused in one line, exit 2. The hash is on the destination port
# alone, so every cross-leaf flow takes one spine (a first run says which) and the link that fails
# is the busy one: the uplinks run at a tenth of the ranks' rate and 4 QPs a peer keep hundreds of
# KB queued on it; a shaped port catches up at most 2 ms after the OS deschedules the process
# (--shaper-burst-us 2000), so no late poll drains that queue at once (with the default 50 ms one
# did, on a loaded machine, just before the failure). An iteration takes at least 0.3 s at that
# rate however fast the machine, so the failure falls inside the timed run. Judged on results only.
set -uo pipefail
coll=$1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail=0
check() { if eval "$2"; then echo "ok: $1"; else echo "FAILED: $1"; sed -n 1,80p "${3:-/dev/null}"; fail=1; fi; }
eal=(-l 0 --no-huge -m 512 --no-pci --no-shconf)
fabric=(--fabric leafspine:2,2 --ranks 8 --egress-gbps 1 --uplink-gbps 0.1 --ecmp-hash dst-port --qps-per-peer 4
  --shaper-burst-us 2000)

# Which spine leaf 0's cross-leaf traffic takes under this hash.
"$coll" "${eal[@]}" -- "${fabric[@]}" --pattern allreduce --size 64K --iters 1 --warmup_iters 0 --quiet \
  --json "$out/probe.json" > "$out/probe.txt" 2>&1
check "probe run: exact" "[ $? -eq 0 ]" "$out/probe.txt"
spine=$(/usr/bin/python3 -c "
import json, sys
links = json.load(open('$out/probe.json'))['fabric']['links']
used = [l['spine'] for l in links if l['leaf'] == 0 and l['up']['tx_frames'] > 0]
assert len(used) == 1, links
print(used[0])") || { echo "FAILED: probe: leaf 0 did not use exactly one uplink"; exit 1; }

"$coll" "${eal[@]}" -- "${fabric[@]}" --pattern allreduce --size 2M --iters 2 --warmup_iters 1 --quiet \
  --qp-timeout 16 --link-down "0:$spine@50:150" --json "$out/ld.json" > "$out/ld.txt" 2>&1
rc=$?
check "allreduce with leaf0-spine$spine down from 50 to 150 ms: exact, drops and re-hash counted" "[ $rc -eq 0 ] &&
  /usr/bin/python3 - '$out/ld.json' $spine <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s = int(sys.argv[2])
assert d['ok'] and d['wrong'] == 0 and d['failure'] == '', (d['wrong'], d['failure'])
assert all(r['wrong'] == 0 for r in d['results'])
f = d['fabric']
assert f['ecmp_rehash'] == 'resilient'
assert f['link_failures'] == [{'link': 'leaf0-spine%d' % s, 'down_ms': 50.0, 'up_ms': 150.0}], f['link_failures']
links = {l['name']: l for l in f['links']}
failed = links['leaf0-spine%d' % s]
other = links['leaf0-spine%d' % (1 - s)]
assert failed['downs'] == 1 and failed['link_up'], failed
assert 50 <= failed['last_down_ms'] < failed['last_up_ms'] and failed['last_up_ms'] >= 150, failed
assert failed['up']['link_down_drops'] + failed['down']['link_down_lost'] > 0, ('frames queued on the busy link', failed)
assert failed['up']['rehashed_flows'] >= 1 and failed['up']['rehashed_frames'] > 0, failed
assert failed['up']['rehash_untracked'] == 0, failed
# The other spine carried leaf 0's traffic while the link was down, and no other link failed.
assert other['up']['tx_frames'] > 0 and other['up']['rehashed_frames'] == 0, other
for name, l in links.items():
    if name != failed['name']:
        assert l['downs'] == 0 and l['up']['link_down_drops'] == 0 and l['down']['link_down_drops'] == 0, l
retx = sum(r[k]['retransmitted_packets'] for r in d['results'] for k in ('out_of_place', 'in_place') if k in r)
assert retx > 0, ('the dropped frames were sent again', retx)
PY" "$out/ld.txt"
check "the text report has the link failures table" "grep -q 'link failures' '$out/ld.txt' || grep -q 'leaf0-spine$spine' '$out/ld.txt'" "$out/ld.txt"

# Bad values: one line naming --link-down, exit 2.
n=0
for bad in "--fabric leafspine:2,2 --link-down 2:0@10" "--fabric leafspine:2,2 --link-down 0:0@10:5" \
  "--fabric leafspine:2,2 --link-down 0:0@x" "--link-down 0:0@10" \
  "--fabric leafspine:2,2 --link-down 0:1@10:100 --link-down 0:1@50"; do
  n=$((n + 1))
  # shellcheck disable=SC2086
  "$coll" -- $bad > "$out/bad$n.txt" 2>&1
  check "$bad: one line naming --link-down, exit 2" "[ $? -eq 2 ] && [ \$(wc -l < '$out/bad$n.txt') -eq 1 ] &&
    grep -q -- '--link-down' '$out/bad$n.txt'" "$out/bad$n.txt"
done

[ $fail -eq 0 ] && echo "droce-coll --link-down: all checks passed"
exit $fail
