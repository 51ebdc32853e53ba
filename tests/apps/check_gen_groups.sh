#!/usr/bin/env bash
# droce-gen's flow groups (issue 40, item 3): --flow-group runs several workloads side by side in
# one loopback run, each on its own QPs with its own op, sizes, offered load, DSCP and window, each
# reported on its own (groups[] in the JSON). A bulk, a latency and a windowed group on 2 workers,
# every message verified; the groups' DSCPs on the wire (a capture read by tshark); bad specs and
# the run-wide options a group sets refused with exit 2, before EAL. Runs of 3 s and 1 s: bounded
# by --duration, under ASan too.
# Usage: check_gen_groups.sh DROCE_GEN
# shellcheck source=tests/apps/gen_check_lib.sh
. "$(dirname "$0")/gen_check_lib.sh" "$@"

# ---- three groups side by side on 2 workers: bulk WRITEs closed loop, latency-sensitive SENDs
# of weighted sizes at 2000 msg/s, and READs at 500 msg/s only from 1 s to 2 s of the 3 s run ----
timeout 300 "$gen" $two_lcores -- --workers 2 --duration 3 --interval 0.5 \
  --flow-group 'name=bulk;qps=2;op=write;size=16K;dscp=26' \
  --flow-group 'name=rpc;qps=2;op=send;size=64:90,4096:10;msg-rate=2000;dscp=46' \
  --flow-group 'name=window;qps=1;op=read;size=1024;inflight=2;msg-rate=500;start=1;stop=2' \
  --json "$out/groups.json" > "$out/groups.txt" 2>&1
check "loopback, 3 flow groups on 2 workers for 3 s: exits 0" \
  "[ $? -eq 0 ] || { tail -n 5 '$out/groups.txt'; false; }"
# The window group's schedule offers 500 msg/s from 1 s to 2 s: at most 500 messages (501 with
# the one due at its start), whatever the host's speed; the rpc group's, over the whole run, 6000.
check "each group's messages > 0 and verified, its figures in groups[] and its row in the report; the run's totals are the groups' sum" \
  "python3 - '$out/groups.json' '$out/groups.txt' <<'PY' || { cat '$out/groups.txt'; false; }
import json, sys
d = json.load(open(sys.argv[1])); text = open(sys.argv[2]).read()
g = {x['name']: x for x in d['groups']}
assert list(g) == ['bulk', 'rpc', 'window'], list(g)
assert g['bulk']['qps'] == [0, 1] and g['rpc']['qps'] == [2, 3] and g['window']['qps'] == [4, 4], d['groups']
assert (g['bulk']['dscp'], g['rpc']['dscp'], g['window']['dscp']) == (26, 46, 0), d['groups']
for x in d['groups']:
    assert x['messages'] > 0 and x['bytes'] > 0 and x['latency_ns']['p50'] > 0, x
    assert x['lost'] == x['duplicated'] == x['out_of_order'] == x['corrupted'] == x['errors'] == 0, x
    assert x['latency_ns']['p50'] <= x['latency_ns']['p99'] <= x['latency_ns']['max'], x
    assert x['goodput_gbps'] > 0 and x['msg_rate_mps'] > 0, x
    assert ' ' + x['name'] + ' ' in text and x['name'] + ' verification: lost 0  duplicated 0  out of order 0  corrupted 0  errors 0' in text, x['name']
assert g['bulk']['bytes'] == 16384 * g['bulk']['messages'], g['bulk']
assert g['window']['bytes'] == 1024 * g['window']['messages'], g['window']
assert g['rpc']['sizes'] == '64:90,4096:10' and g['rpc']['offered_msg_rate'] == 2000, g['rpc']
assert g['rpc']['messages'] <= 6001, g['rpc']
assert g['window']['messages'] <= 501, g['window']
# Its window is 1 s of the measured time; the others' the whole run.
assert abs(g['window']['duration_s'] - 1.0) < 0.01 and g['window']['start_s'] == 1 and g['window']['stop_s'] == 2, g['window']
assert g['bulk']['duration_s'] > 2.9 and g['bulk']['stop_s'] is None, g['bulk']
assert g['bulk']['interval_goodput_gbps']['intervals'] > 0, g['bulk']
assert sum(x['messages'] for x in d['groups']) == d['messages'], d['messages']
assert sum(x['bytes'] for x in d['groups']) == d['bytes'], d['bytes']
assert d['lost'] == d['duplicated'] == d['out_of_order'] == d['corrupted'] == d['errors'] == 0, d
assert d['problem'] == '' and d['config']['op'] == 'groups' and d['config']['qps'] == 5, d['config']
assert ' RC 3 flow groups, 5 QP(s) on 2 workers' in text, 'header'
PY"

# ---- each group's DSCP on the wire: data and ACKs of its QPs (UDP source ports 50000 + QP)
# carry it, ECN ECT(0) on data; a group without dscp= leaves with 0 ----
timeout 300 "$gen" -- --duration 1 --udp-sport 50000,1 \
  --flow-group 'name=bulk;qps=2;op=write;size=4096;rate-gbps=0.2;dscp=26' \
  --flow-group 'name=rpc;qps=1;op=send;size=64;msg-rate=2000;dscp=46' \
  --flow-group 'name=plain;qps=1;op=write;size=256;msg-rate=1000' \
  --pcap "$out/dscp.pcapng" --pcap-max-mb 64 --json "$out/dscp.json" > "$out/dscp.txt" 2>&1
check "loopback, 3 groups with their DSCPs and a capture: exits 0" \
  "[ $? -eq 0 ] || { tail -n 5 '$out/dscp.txt'; false; }"
check "every RoCEv2 frame of each group's QPs carries its group's DSCP (26, 46, 0), each group seen" \
  "tshark -r '$out/dscp.pcapng' -Y 'udp.dstport == 4791' -T fields -e udp.srcport -e ip.dsfield.dscp \
     > '$out/dscp.fields' 2> '$out/tshark.err' && python3 - '$out/dscp.fields' <<'PY' || { head -n 5 '$out/dscp.fields' '$out/tshark.err'; false; }
import collections, sys
want = {50000: 26, 50001: 26, 50002: 46, 50003: 0}
seen = collections.Counter()
for line in open(sys.argv[1]):
    port, dscp = line.split()
    assert int(port) in want and int(dscp) == want[int(port)], line
    seen[int(port)] += 1
assert set(seen) == set(want) and all(n > 10 for n in seen.values()), seen
PY"

# ---- bad specs and clashes: one line naming what is wrong, exit 2, before EAL ----
check "an unknown key is refused" "refused 'unknown key' --flow-group 'name=a;colour=red'"
check "an item without '=' is refused" "refused 'KEY=VALUE' --flow-group 'name=a;;qps=2'"
check "a key given twice is refused" "refused 'qps given twice' --flow-group 'name=a;qps=1;qps=2'"
check "a group without a name is refused" "refused 'name=NAME' --flow-group 'qps=2'"
check "two groups of one name are refused" "refused 'given to two groups' --flow-group name=a --flow-group name=a"
check "stop at or before start is refused" "refused 'is not after start' --flow-group 'name=a;start=1;stop=1'"
check "a start at or after the run's end is refused" \
  "refused 'not before the run' --duration 2 --flow-group 'name=a;start=2'"
check "a stop after the run's end is refused" "refused 'after the run' --duration 2 --flow-group 'name=a;stop=3'"
check "a group's qps over the limit is refused" "refused 'qps' --flow-group 'name=a;qps=16385'"
check "groups whose QPs add up over the limit are refused" \
  "refused 'add up to more than 16384' --flow-group 'name=a;qps=10000' --flow-group 'name=b;qps=10000'"
check "a DSCP over 63 is refused" "refused 'dscp' --flow-group 'name=a;dscp=64'"
check "op and mix in one group are refused" "refused 'op and mix both set' --flow-group 'name=a;op=send;mix=write:1,read:1'"
check "an atomic op in a group is refused" "refused 'atomics run without groups' --flow-group 'name=a;op=fetch_add'"
check "arrivals without an offered load is refused" "refused 'give rate-gbps or msg-rate' --flow-group 'name=a;arrivals=poisson'"
check "a bad size is refused" "refused 'size' --flow-group 'name=a;size=0'"
check "a run-wide --op beside groups is refused" "refused 'op and --flow-group both set' --op send --flow-group name=a"
check "a run-wide --dscp beside groups is refused" "refused 'dscp and --flow-group both set' --dscp 10 --flow-group name=a"
check "a run-wide --count beside groups is refused" "refused 'count and --flow-group both set' --count 10 --flow-group name=a"
check "a sweep beside groups is refused" "refused 'minbytes and --flow-group both set' --minbytes 64 --maxbytes 4096 --flow-group name=a"
check "groups outside loopback are refused" "refused 'loopback only' --mode client --flow-group name=a"

exit $fail
