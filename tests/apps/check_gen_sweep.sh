#!/usr/bin/env bash
# droce-gen's size sweeps (issue 40, item 2): --minbytes/--maxbytes/--stepfactor (or --stepbytes)
# run each size in turn on the same QPs, one row and one results[] entry per size, every message
# of every size verified; --expect-gbps judges the largest size; bad combinations exit 2 with
# one line, before EAL. Two runs of droce-gen: a few seconds each on an idle host.
# Usage: check_gen_sweep.sh DROCE_GEN
# shellcheck source=tests/apps/gen_check_lib.sh
. "$(dirname "$0")/gen_check_lib.sh" "$@"
# swept JSON TEXT COUNT SIZE..: one results[] entry and one text row per size, in order; with
# COUNT > 0, each size's exactly COUNT messages of its bytes; every one verified; the top level
# the sum of the sizes'.
swept() {
  /usr/bin/python3 - "$@" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1])); text = open(sys.argv[2]).read()
count, sizes = int(sys.argv[3]), [int(s) for s in sys.argv[4:]]
res = d['results']
assert [r['size'] for r in res] == sizes, [r['size'] for r in res]
assert d['config']['size'] == sizes and d['config']['sweep']['minbytes'] == sizes[0], d['config']
for r in res:
    assert r['lost'] == r['duplicated'] == r['out_of_order'] == r['corrupted'] == r['errors'] == 0, r
    assert r['messages'] > 0 and r['bytes'] == r['messages'] * r['size'], r
    if count:
        assert r['messages'] == count, (r['size'], r['messages'], count)
    assert r['latency_ns']['p99'] > 0, r
assert d['messages'] == sum(r['messages'] for r in res) and d['bytes'] == sum(r['bytes'] for r in res), d['messages']
assert d['lost'] == d['duplicated'] == d['out_of_order'] == d['corrupted'] == d['errors'] == 0, d
assert d['problem'] == '', d['problem']
rows = [int(m.group(1)) for m in re.finditer(r'^ (\d+) +\d+ +[\d.]+ +[\d.]+ ', text, re.M)]
assert rows == sizes, (rows, sizes)
PY
}

# ---- five sizes by --stepfactor, a --count each, at 1 % loss: each size's messages all complete
# before the next size starts (retransmissions included), and every one is verified. Its
# --expect-gbps is out of reach: a verified sweep exits 3, the verdict naming its largest size ----
timeout 300 "$gen" -- --op write --minbytes 64 --maxbytes 16K --stepfactor 4 --qps 2 --count 60 --loss 0.01 \
  --expect-gbps 100000 --json "$out/count.json" > "$out/count.txt" 2>&1
rc=$?
check "loopback WRITE sweep 64..16384 by 4, --count 60 at 1 % loss, --expect-gbps 100000: exits 3, naming size 16384" \
  "[ $rc -eq 3 ] && grep -q 'BELOW THRESHOLD: size 16384: goodput' '$out/count.txt' || { tail -n 5 '$out/count.txt'; false; }"
check "five rows and five results[], 60 messages of each size verified, verdict fail" \
  "swept '$out/count.json' '$out/count.txt' 60 64 256 1024 4096 16384 &&
   python3 -c \"import json; assert json.load(open('$out/count.json'))['expect']['verdict'] == 'fail'\" ||
   { cat '$out/count.txt'; false; }"

# ---- by --stepbytes, by --duration with its own --warmup per size, two workers, SEND (each
# message's length checked too); a reachable --expect-gbps passes (exit 0) ----
timeout 300 "$gen" --lcores "0@0,1@$last_cpu" --no-pci -- --workers 2 --op send --qps 4 --minbytes 1000 \
  --maxbytes 3000 --stepbytes 1000 --duration 0.5 --warmup 0.1 --expect-gbps 0.000001 --json "$out/dur.json" \
  > "$out/dur.txt" 2>&1
check "loopback SEND sweep 1000..3000 by 1000 bytes, 0.5 s each after a 0.1 s warm-up, 2 workers: exits 0" \
  "[ $? -eq 0 ] || { tail -n 5 '$out/dur.txt'; false; }"
check "three rows and three results[], every message verified, the workers' totals the run's, verdict pass" \
  "swept '$out/dur.json' '$out/dur.txt' 0 1000 2000 3000 &&
   python3 -c \"import json; d = json.load(open('$out/dur.json')); assert sum(w['messages'] for w in d['workers']) == d['messages'] and d['expect']['verdict'] == 'pass'\""

# ---- bad combinations: one line naming the options, exit 2, before EAL (no EAL line; refused() in gen_check_lib.sh) ----
check "--size with --minbytes refused" "refused '--size and a sweep' --size 64 --minbytes 64 --maxbytes 128"
check "--minbytes above --maxbytes refused" "refused '--minbytes 128 is more than --maxbytes 64' --minbytes 128 --maxbytes 64"
check "--stepfactor 1 refused" "refused '--stepfactor' --minbytes 64 --maxbytes 128 --stepfactor 1"
check "--maxbytes beyond 1 GiB refused" "refused '--maxbytes' --minbytes 64 --maxbytes 2G"
check "--minbytes alone refused" "refused 'both --minbytes and --maxbytes' --minbytes 64"
check "--stepfactor with --stepbytes refused" "refused 'give one' --minbytes 64 --maxbytes 128 --stepfactor 2 --stepbytes 8"
check "more than 64 sizes refused" "refused 'more than 64 sizes' --minbytes 1 --maxbytes 100 --stepbytes 1"
check "an atomic sweep refused" "refused 'no size to sweep' --op cmp_swap --minbytes 8 --maxbytes 64"
check "a client's sweep refused (its server would not follow)" \
  "refused 'loopback only' --mode client --minbytes 64 --maxbytes 128"
exit $fail
