#!/usr/bin/env bash
# droce-gen's mixes and weighted sizes (issue 40, item 3): --mix draws each message's op by weight
# and --size SIZE:WEIGHT,.. its size, both from --seed; every message is verified (SEND and WRITE
# data at the responder, READ data at the requester) and each op reported. Bad specs exit 2 with
# one line, before EAL. Three loopback runs of droce-gen, a --count each: seconds on an idle host.
# Usage: check_gen_mix.sh DROCE_GEN
# shellcheck source=tests/apps/gen_check_lib.sh
. "$(dirname "$0")/gen_check_lib.sh" "$@"

# mixed JSON TEXT COUNT OP:WEIGHT..: every op of the mix reported, in its order, each with messages
# (its share within 0.1 of its weight's) and latency; the ops' counts and bytes add up to the run's
# COUNT messages and bytes; nothing lost, duplicated, out of order or corrupted; the text report
# names the mix and has a line per op.
mixed() {
  /usr/bin/python3 - "$@" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1])); text = open(sys.argv[2]).read()
count, spec = int(sys.argv[3]), sys.argv[4:]
want = [(s.split(':')[0], int(s.split(':')[1])) for s in spec]
total_w = sum(w for _, w in want)
m = d['mix']
assert m['spec'] == ','.join(spec), m['spec']
ops = m['ops']
assert [(o['op'], o['weight']) for o in ops] == want, ops
for o, (_, w) in zip(ops, want):
    assert o['messages'] > 0 and o['bytes'] > 0 and o['latency_ns']['p50'] > 0, o
    assert abs(o['share'] - w / total_w) < 0.1, (o, w / total_w)
assert sum(o['messages'] for o in ops) == d['messages'] == count, (d['messages'], count)
assert sum(o['bytes'] for o in ops) == d['bytes'], d['bytes']
# The responders checked every SEND and WRITE (READs are checked where they complete).
assert m['received_at_responder'] == sum(o['messages'] for o in ops if o['op'] != 'read'), m
assert d['lost'] == d['duplicated'] == d['out_of_order'] == d['corrupted'] == d['errors'] == 0, d
assert d['problem'] == '', d['problem']
assert d['config']['op'] == 'mix' and d['config']['mix'] == ','.join(spec), d['config']
assert ' RC mix ' + ','.join(spec) + ',' in text, 'header'
for op, _ in want:
    assert re.search(r'^   ' + op + r' +\d+ messages', text, re.M), op
PY
}

# ---- write:60,read:30,send:10 on 2 QPs, 900 messages of 4 KiB at 1 % loss: each op's share
# near its weight, every one verified (retransmissions included) ----
timeout 300 "$gen" -- --mix write:60,read:30,send:10 --size 4096 --qps 2 --count 900 --loss 0.01 \
  --json "$out/mix.json" > "$out/mix.txt" 2>&1
check "loopback --mix write:60,read:30,send:10, 900 messages at 1 % loss: exits 0" \
  "[ $? -eq 0 ] || { tail -n 5 '$out/mix.txt'; false; }"
check "each op reported, its share near its weight, the counts add up to 900, every message verified" \
  "mixed '$out/mix.json' '$out/mix.txt' 900 write:60 read:30 send:10 || { cat '$out/mix.txt'; false; }"

# ---- weighted sizes, SEND (each message's length checked at the responder too), 2 workers:
# the sizes come up by weight (the mean size near the weighted mean, far from the list's) ----
timeout 300 "$gen" $two_lcores -- --workers 2 --op send --size 64:70,4096:25,64K:5 --qps 2 --count 1000 \
  --json "$out/sizes.json" > "$out/sizes.txt" 2>&1
check "loopback SEND --size 64:70,4096:25,64K:5, 1000 messages, 2 workers: exits 0" \
  "[ $? -eq 0 ] || { tail -n 5 '$out/sizes.txt'; false; }"
# Mean 4345.6 bytes, standard deviation of a 1000-message mean ~460: 5 of them either side. The
# list 64,4096,65536 cycled would average 23232.
check "1000 messages verified, mean size within 5 standard deviations of the weighted mean, sizes named" \
  "python3 - '$out/sizes.json' <<'PY' && grep -q '^ 64:70,4096:25,65536:5 ' '$out/sizes.txt' || { cat '$out/sizes.txt'; false; }
import json, sys
d = json.load(open(sys.argv[1]))
assert d['messages'] == 1000 and 2030 < d['bytes'] / d['messages'] < 6660, (d['messages'], d['bytes'])
assert d['lost'] == d['duplicated'] == d['out_of_order'] == d['corrupted'] == d['errors'] == 0, d
assert d['config']['size'] == [64, 4096, 65536] and d['config']['size_weights'] == [70, 25, 5], d['config']
assert 'mix' not in d and d['config']['op'] == 'send', d['config']
# Each size's messages, in the order given: all 1000, each share within 0.05 of its weight's (5
# standard deviations of the 25 % share's).
n = d['size_messages']
assert sum(n) == 1000 and all(abs(c / 1000 - w) < 0.05 for c, w in zip(n, (0.7, 0.25, 0.05))), n
assert n[2] > 0, n
PY"

# ---- a mix of weighted sizes, another seed: READs of every size checked at the requester ----
timeout 300 "$gen" -- --mix read:1,write:1 --size 100:1,3000:1 --seed 7 --qps 3 --inflight 4 --count 600 \
  --json "$out/both.json" > "$out/both.txt" 2>&1
check "loopback --mix read:1,write:1 with --size 100:1,3000:1 --seed 7: exits 0" \
  "[ $? -eq 0 ] || { tail -n 5 '$out/both.txt'; false; }"
check "both ops reported, 600 messages verified" "mixed '$out/both.json' '$out/both.txt' 600 read:1 write:1 || { cat '$out/both.txt'; false; }"

# ---- bad specs: one line naming the option, exit 2, before EAL (no EAL line; refused() in gen_check_lib.sh) ----
check "an unknown op refused" "refused \"unknown op 'bogus'\" --mix write:1,bogus:2"
check "an op given twice refused" "refused 'write given twice' --mix write:1,write:2"
check "an atomic in a mix refused" "refused 'cmp_swap cannot be mixed' --mix write:1,cmp_swap:1"
check "a weight of 0 refused" "refused '--mix weight' --mix write:0"
check "an entry without a weight refused" "refused \"'send' is not NAME:WEIGHT\" --mix write:1,send"
check "--mix with --op refused" "refused '--mix and --op both set' --mix write:1 --op send"
check "--mix in client mode refused" "refused 'loopback only' --mode client --mix write:1,read:1"
check "weighted sizes in server mode refused" "refused 'loopback only' --mode server --size 64:1,128:1"
check "--mix with a sweep refused" "refused '--mix and a sweep' --mix write:1 --minbytes 64 --maxbytes 128"
check "weighted sizes with a sweep refused" "refused '--size and a sweep' --size 64:1 --minbytes 64 --maxbytes 128"
check "a size given twice refused" "refused '64 given twice' --size 64:1,64:2"
check "a size beyond 1 GiB refused" "refused '--size' --size 64:1,2G:1"
check "weighted sizes other than 8 with an atomic refused" "refused 'works on 8 bytes' --op fetch_add --size 8:1,16:1"
exit $fail
