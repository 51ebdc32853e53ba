#!/usr/bin/env bash
# droce-gen --split (issue 38, item 2): one message cut into K parts, posted at once on the K QPs
# of its stripe, verified whole. Loopback WRITE and READ runs whose every message, part and byte
# is counted (--count runs are exact), a 4-QP stripe on each of 2 workers at 1 % loss, an
# open-loop run that counts messages, the parts' UDP source ports on the wire as --udp-sport set
# them (all on one port, a collision made on purpose, and on four), a run without --split
# reported as before, and the refusals (exit 2, before EAL). Every run is bounded by --count or
# --duration, under ASan too.
# Usage: check_gen_split.sh DROCE_GEN
# shellcheck source=tests/apps/gen_check_lib.sh
. "$(dirname "$0")/gen_check_lib.sh" "$@"

# split_counts JSON TEXT MESSAGES SIZE PART_BYTES..: a --count run: every message verified, each
# QP completed one part of each message of its stripe, its bytes its slice's.
split_counts() {
  /usr/bin/python3 - "$@" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); text = open(sys.argv[2]).read()
n, size = int(sys.argv[3]), int(sys.argv[4]); cut = [int(x) for x in sys.argv[5:]]
k = len(cut); s = d['split']; qps = d['config']['qps']
assert sum(cut) == size, cut
assert d['messages'] == n and d['bytes'] == n * size, (d['messages'], d['bytes'])
assert d['lost'] == d['duplicated'] == d['out_of_order'] == d['corrupted'] == d['errors'] == 0 and d['problem'] == '', d
assert d['config']['split'] == k and s['parts_per_message'] == k and s['stripes'] == qps // k, s
assert s['stripe_qps'] == [list(range(f, f + k)) for f in range(0, qps, k)], s['stripe_qps']
# --count n: the stripes post what they can (closed loop); every QP of a stripe one part of each
# of its messages, and the stripes' messages add up to n.
total = 0
for first in range(0, qps, k):
    m = s['qp_parts'][first]
    for q in range(first, first + k):
        assert s['qp_parts'][q] == m and s['qp_bytes'][q] == m * cut[q - first], (q, s)
    total += m
assert total == n, (total, s['qp_parts'])
assert sum(s['qp_bytes']) == d['bytes'], s
assert 'each message split over %d' % k in text and 'every message in %d parts' % k in text, 'report lines'
PY
}

# ---- 4 QPs, each 10000-byte WRITE in 4 parts on MTU boundaries: 3072, 2048, 2048, 2832 bytes ----
timeout 300 "$gen" -- --qps 4 --split 4 --size 10000 --count 10000 --quiet \
  --json "$out/write.json" > "$out/write.txt" 2>&1
check "loopback WRITE --qps 4 --split 4 --count 10000: exits 0" "[ $? -eq 0 ] || { tail -n 5 '$out/write.txt'; false; }"
check "10000 messages verified whole, each QP one part of each, its bytes its slice's" \
  "split_counts '$out/write.json' '$out/write.txt' 10000 10000 3072 2048 2048 2832 || { cat '$out/write.txt'; false; }"

# ---- READ: 8 QPs in 4 stripes of 2, 3000 bytes: 1024 and 1976 ----
timeout 300 "$gen" -- --op read --qps 8 --split 2 --size 3000 --count 4001 --quiet \
  --json "$out/read.json" > "$out/read.txt" 2>&1
check "loopback READ --qps 8 --split 2 --count 4001: exits 0" "[ $? -eq 0 ] || { tail -n 5 '$out/read.txt'; false; }"
check "4001 READs verified whole at the requester over 4 stripes" \
  "split_counts '$out/read.json' '$out/read.txt' 4001 3000 1024 1976 || { cat '$out/read.txt'; false; }"

# ---- 8 QPs on 2 workers at 1 % loss: a stripe of 4 QPs on each worker (QP i on worker i % 2) ----
timeout 300 "$gen" $two_lcores -- --workers 2 --qps 8 --split 4 --size 16K --loss 0.01 --duration 1 --quiet \
  --json "$out/loss.json" > "$out/loss.txt" 2>&1
check "loopback WRITE --workers 2 --qps 8 --split 4 at 1 % loss: exits 0" \
  "[ $? -eq 0 ] || { tail -n 5 '$out/loss.txt'; false; }"
check "every message verified; each QP's parts within --inflight of its stripe's others, 1/4 of its bytes" \
  "python3 - '$out/loss.json' <<'PY' || { cat '$out/loss.txt'; false; }
import json, sys
d = json.load(open(sys.argv[1])); s = d['split']
assert d['messages'] > 0 and d['lost'] == d['duplicated'] == d['out_of_order'] == d['corrupted'] == d['errors'] == 0, d
assert d['impairment']['dropped'] == 0 or d['retransmitted_packets'] > 0, 'a loss not recovered'
assert s['stripe_qps'] == [[0, 2, 4, 6], [1, 3, 5, 7]], s['stripe_qps']
# Each part is 4 KiB: a QP's parts are its stripe's messages, give or take those in flight.
parts = 0
for stripe in s['stripe_qps']:
    p = [s['qp_parts'][q] for q in stripe]
    assert min(p) > 0 and max(p) - min(p) <= 16, p
    for q in stripe:
        assert s['qp_bytes'][q] == 4096 * s['qp_parts'][q], (q, s)
        assert abs(s['qp_byte_share'][q] - 0.25) <= 16 / sum(p), (q, s)
    parts += min(p)
# Messages completed whole: every part of each; at most --inflight more per stripe had some part done.
assert parts <= d['messages'] <= parts + 16 * 2 and d['bytes'] == 16384 * d['messages'], (parts, d['messages'])
PY"

# ---- an offered load counts messages, not parts ----
timeout 300 "$gen" -- --qps 4 --split 2 --msg-rate 2000 --count 1000 --inflight 2 --quiet \
  --json "$out/open.json" > "$out/open.txt" 2>&1
check "loopback --split 2 --msg-rate 2000 --count 1000: exits 0" "[ $? -eq 0 ] || { tail -n 5 '$out/open.txt'; false; }"
check "1000 messages due, posted and verified; 2000 parts" \
  "python3 - '$out/open.json' <<'PY' || { cat '$out/open.txt'; false; }
import json, sys
d = json.load(open(sys.argv[1])); l = d['load']
assert d['messages'] == 1000 and l['scheduled'] == 1000 and l['posted'] == 1000 and l['open_loop'], (d['messages'], l)
assert sum(d['split']['qp_parts']) == 2000 and d['corrupted'] == d['lost'] == d['errors'] == 0, d['split']
PY"

# ---- the parts' UDP source ports: --udp-sport 50000,0 puts the stripe's 4 QPs on one port (one
# 5-tuple for a hashing switch: a collision made on purpose), 50000,1 on four ----
# udp_ports PCAP FIELDS WANT: every RoCEv2 frame's source port is in WANT (a Python set); the
# WRITE parts (opcode 11, RDMA WRITE Only with Immediate: 4096 / 4 bytes is one packet) number
# at least 2000 on each of the 4 QPs, and each port carries the parts of the QPs it should.
udp_ports() {
  tshark -r "$1" -Y 'udp.dstport == 4791' -T fields -e udp.srcport -e infiniband.bth.opcode \
    -e infiniband.bth.destqp > "$2" 2> "$out/tshark.err" || { cat "$out/tshark.err"; return 1; }
  /usr/bin/python3 - "$2" "$3" <<'PY'
import collections, sys
want = eval(sys.argv[2])
parts = collections.Counter(); ports_of_qp = collections.defaultdict(set)
for line in open(sys.argv[1]):
    port, opcode, qp = line.split()
    assert int(port) in want, line
    if int(opcode) == 11:
        parts[qp] += 1
        ports_of_qp[qp].add(int(port))
assert len(parts) == 4 and all(n >= 2000 for n in parts.values()), parts
# Each QP's parts leave from one port; with one port for all, 4 QPs share it.
assert all(len(p) == 1 for p in ports_of_qp.values()), ports_of_qp
assert {min(p) for p in ports_of_qp.values()} == want, ports_of_qp
PY
}
timeout 300 "$gen" -- --qps 4 --split 4 --size 4096 --count 2000 --udp-sport 50000,0 --pcap "$out/one.pcapng" \
  --quiet --json "$out/one.json" > "$out/one.txt" 2>&1
check "loopback --split 4 --udp-sport 50000,0 with a capture: exits 0" \
  "[ $? -eq 0 ] || { tail -n 5 '$out/one.txt'; false; }"
check "all 4 QPs' parts (and their ACKs) from UDP port 50000" \
  "udp_ports '$out/one.pcapng' '$out/one.fields' '{50000}' || { head -n 5 '$out/one.fields'; false; }"
timeout 300 "$gen" -- --qps 4 --split 4 --size 4096 --count 2000 --udp-sport 50000,1 --pcap "$out/four.pcapng" \
  --quiet --json "$out/four.json" > "$out/four.txt" 2>&1
check "loopback --split 4 --udp-sport 50000,1 with a capture: exits 0" \
  "[ $? -eq 0 ] || { tail -n 5 '$out/four.txt'; false; }"
check "QP i's parts from UDP port 50000 + i, four ports" \
  "udp_ports '$out/four.pcapng' '$out/four.fields' '{50000, 50001, 50002, 50003}' || { head -n 5 '$out/four.fields'; false; }"

# ---- a run without --split reports as before: no split in the report or the JSON ----
timeout 300 "$gen" -- --qps 4 --count 1000 --quiet --json "$out/plain.json" > "$out/plain.txt" 2>&1
check "loopback --qps 4 without --split: exits 0" "[ $? -eq 0 ] || { tail -n 5 '$out/plain.txt'; false; }"
check "no split in its report or JSON" \
  "! grep -q 'split' '$out/plain.txt' && python3 -c \"import json; d = json.load(open('$out/plain.json')); assert 'split' not in d and 'split' not in d['config'] and d['messages'] == 1000\""

# ---- refusals: one line, exit 2, before EAL (refused() in gen_check_lib.sh) ----
check "--split 0 refused" "refused '--split' --split 0"
check "--split over 64 refused" "refused '--split' --qps 128 --split 65"
check "--split over --qps refused" "refused 'is more than --qps 2' --qps 2 --split 4"
check "--qps not a multiple of --split refused" "refused 'is not a multiple of --split 4' --qps 6 --split 4"
check "--qps not a multiple of --split x --workers refused" \
  "refused 'not a multiple of --split 4 x --workers 3' --qps 8 --split 4 --workers 3"
check "a size under K bytes refused" "refused 'is less than --split 4 bytes' --qps 4 --split 4 --size 64,3"
check "--op send refused" "refused 'cuts a WRITE or a READ' --qps 2 --split 2 --op send"
check "an atomic refused" "refused 'is one 8-byte operation' --qps 2 --split 2 --op cmp_swap"
check "--mix refused" "refused '--split 2 and --mix' --qps 2 --split 2 --mix write:1,read:1"
check "flow groups refused" "refused '--split 2 and --flow-group' --split 2 --flow-group 'name=a;qps=2'"
check "--active-qps refused" "refused '--split 2 and --active-qps' --qps 4 --split 2 --active-qps 2"
check "a sweep refused" "refused '--split 2 and a sweep' --qps 2 --split 2 --minbytes 64 --maxbytes 1K"
check "client mode refused" "refused 'loopback only' --mode client --qps 2 --split 2"
check "server mode refused" "refused 'loopback only' --mode server --qps 2 --split 2"
exit $fail
