#!/usr/bin/env bash
# droce-switch end to end: the in-process lab (CNPs and rate cuts at a bottleneck; PFC lossless),
# then the switch as its own process between two droce-gen processes over memif, then bad input.
set -uo pipefail
sw=$(realpath "$1")  # absolute: one check runs from another folder
gen=$(realpath "$2")
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mktemp -d)
tag=$$
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$out" /tmp/droce-sw-$tag-*.sock; }
trap cleanup EXIT
fail=0
check() { if eval "$2"; then echo "ok: $1"; else echo "FAILED: $1"; sed -n 1,40p "${3:-/dev/null}"; fail=1; fi; }

"$sw" -- --lab-senders 2 --lab-duration-ms 150 --lab-start-ms 0,50 --kmax-bytes 40000 --pmax 0.1 \
  --json "$out/lab.json" > "$out/lab.txt" 2>&1
check "lab with DCQCN exits 0" "[ $? -eq 0 ]" "$out/lab.txt"
check "lab JSON: verified data, marks, CNPs and cuts at both senders, no drops" "/usr/bin/python3 - '$out/lab.json' <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d['data_ok'] and d['bottleneck']['ecn_marked'] > 0 and d['bottleneck']['tail_drops'] == 0
assert d['receiver']['np_cnp_sent'] > 0
assert all(s['rp_cnp_handled'] > 0 and s['rate_cuts'] > 0 for s in d['senders'])
# The series is sampled on the TSC and a slow iteration skips samples (a busy machine gives
# fewer than the 150 of an idle one): judge its shape, not its density.
t = d['series']['time_ms']
assert len(t) > 0 and all(a < b for a, b in zip(t, t[1:])) and t[-1] <= 150 + 1
assert all(len(r) == 2 for r in d['series']['rate_gbps'])
PY" "$out/lab.txt"
# --json -: the JSON alone on stdout (pfc.json), the report on stderr.
"$sw" -- --lab-senders 3 --lab-duration-ms 100 --cc none --pfc --pfc-xoff-bytes 30000 --pfc-xon-bytes 15000 \
  --json - > "$out/pfc.json" 2> "$out/pfc.txt"
check "lossless lab (PFC, no DCQCN) exits 0 with pauses and no drops or retransmissions" "[ $? -eq 0 ] && /usr/bin/python3 - '$out/pfc.json' <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d['data_ok'] and d['bottleneck']['tail_drops'] == 0
assert sum(i['pfc_pause_sent'] for i in d['ingress']) > 0
assert all(s['pfc_pause_frames'] > 0 and s['retransmitted_packets'] == 0 for s in d['senders'])
PY" "$out/pfc.txt"

# A slow receiver (issue 39 item 2): the receiver's NIC drains at a twentieth of the bottleneck's
# rate (0.1 Gb/s: below what the senders reach even under ASan, where a quarter never filled its
# buffer) and pauses the switch as its buffer fills; the switch's queue backs up and pauses the
# senders in turn. Lossless all the way: every message verified, nothing dropped or resent.
"$sw" -- --lab-senders 2 --lab-duration-ms 100 --cc none --pfc --pfc-xoff-bytes 30000 --pfc-xon-bytes 15000 \
  --slow-receiver 2:0.05 --slow-receiver-buffer-bytes 128K --json "$out/slow.json" > "$out/slow.txt" 2>&1
check "slow receiver: its pauses counted at the switch, the senders paused, nothing lost" "[ $? -eq 0 ] && /usr/bin/python3 - '$out/slow.json' <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
b = d['bottleneck']
assert d['data_ok'] and b['tail_drops'] == 0, b
assert b['slow_receiver_pauses'] > 0 and b['pfc_pause_received'] >= b['slow_receiver_pauses'], b
assert b['slow_receiver_resumes'] in (b['slow_receiver_pauses'], b['slow_receiver_pauses'] - 1), b
assert 0 < b['slow_receiver_max_bytes'] <= 128 * 1024, b
assert all(s['retransmitted_packets'] == 0 for s in d['senders'])
PY" "$out/slow.txt"

# Three processes: client -> memif -> switch (2 Gb/s egress to the server) -> memif -> server.
# On a 2-CPU machine two of them share a CPU; the transport's timers ride that out.
s0=/tmp/droce-sw-$tag-0.sock
s1=/tmp/droce-sw-$tag-1.sock
oob=$((20000 + tag % 20000))
# No `timeout` wrapper: it would pass our SIGINT on twice (to the child and to its process group),
# and a second signal ends droce-switch at once, before its report; --duration bounds the run.
"$sw" --no-pci -l 1 --vdev "net_memif0,role=server,socket=$s0" --vdev "net_memif1,role=server,socket=$s1" -- \
  --route 10.0.0.1/32=0 --route 10.0.0.2/32=1 --egress-gbps 1=2 --duration 40 --quiet --json "$out/sw.json" \
  --pcap "$out/sw.pcapng" > "$out/sw.txt" 2>&1 &
swpid=$!
pids+=($swpid)
sleep 1
timeout 100 "$gen" --no-pci -l 1 --vdev "net_memif0,role=client,socket=$s1" -- --mode server --oob-port $oob --quiet \
  > "$out/srv.txt" 2>&1 &
pids+=($!)
sleep 1
timeout 100 "$gen" --no-pci -l 0 --vdev "net_memif0,role=client,socket=$s0" -- --mode client --oob-port $oob \
  --op write --size 4096 --count 3000 --cc dcqcn --line-gbps 10 --quiet --json "$out/cli.json" > "$out/cli.txt" 2>&1
check "droce-gen client -> droce-switch -> server: every message verified" "[ $? -eq 0 ]" "$out/cli.txt"
kill -INT $swpid 2>/dev/null
wait $swpid
check "switch JSON: every client frame forwarded to the server port and back" "/usr/bin/python3 - '$out/sw.json' <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))['ports']
# Frames still queued at the stop (the client had gone, its link was down) are counted as queued.
for a, b in ((0, 1), (1, 0)):
    assert p[a]['rx_frames'] == p[b]['tx_frames'] + p[b]['tail_drops'] + p[b]['queue_frames'], p
assert p[0]['rx_frames'] > 3000
PY" "$out/sw.txt"
# --pcap (issue 34 item 1): every frame each port received, in one file with an interface per
# port, cut to the default snap length with every header kept; tshark decodes it, Scapy checks
# the headers of the cut frames and the ICRC of the whole ones (the ACKs).
check "switch --pcap: one file, both ports' interfaces, every received frame, verified" \
  "bash '$root/scripts/verify_capture.sh' '$out/sw.pcapng' > '$out/swcap.txt' 2>&1 &&
   grep -Eq ' [1-9][0-9]* icrc ok, 0 bad, [1-9][0-9]* cut by the snap length' '$out/swcap.txt' &&
   [ \"\$(tshark -r '$out/sw.pcapng' -T fields -e frame.interface_id 2>/dev/null | sort -u | paste -sd,)\" = 0,1 ] &&
   grep -Eq 'droce-switch: capture: [1-9][0-9]* frames in .*sw.pcapng; [1-9][0-9]* cut to 346 bytes' '$out/sw.txt' &&
   /usr/bin/python3 - '$out/sw.json' <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
c, p = d['capture'], d['ports']
assert c['frames'] == sum(x['rx_frames'] for x in p) and c['cut'] > 0 and c['not_captured'] == 0, (c, p)
PY" "$out/swcap.txt"

"$sw" -- --kmin-bytes 10 --kmax-bytes 5 > "$out/e1.txt" 2>&1
check "Kmin > Kmax refused by name" "[ $? -eq 2 ] && grep -q -- '--kmin-bytes' '$out/e1.txt'"
"$sw" -- --route 10.0.0.0/40=1 > "$out/e2.txt" 2>&1
check "a bad prefix length is refused" "[ $? -eq 2 ] && grep -q -- '--route' '$out/e2.txt'"
"$sw" -- --lab-senders 2 --dcqcn-g 0 > "$out/e3.txt" 2>&1
check "g = 0 refused by name" "[ $? -eq 2 ] && grep -q -- '--dcqcn-g:' '$out/e3.txt'"
"$sw" --no-pci --vdev net_null0 -- --duration 1 > "$out/e4.txt" 2>&1
check "one port is refused with a clear message" "[ $? -ne 0 ] && grep -q 'at least two' '$out/e4.txt'"
# Traffic classes and failure switches: each bad value refused in one line naming its option.
i=0
for bad in "--scheduler fifo" "--scheduler weighted:1,2,3" "--scheduler weighted:0,1,1,1,1,1,1,1" \
    "--dscp-map 64=1" "--dscp-map 26" "--priority-queues 0,1,2,3,4,5,6,8" "--lossless-priorities 9" \
    "--cnp-priority 8" "--drop-rule every:1" "--drop-rule ip-id:256" "--pfc-watchdog-ms -1" "--stuck-port 1" \
    "--slow-receiver 1:1" "--slow-receiver 1" "--slow-receiver-buffer-bytes 1000" "--slow-receiver 1:0.5"; do
  i=$((i + 1))
  # shellcheck disable=SC2086  # the option and its value are two words
  "$sw" -- $bad > "$out/c$i.txt" 2>&1
  check "$bad refused by name" "[ $? -eq 2 ] && grep -q -- '${bad%% *}' '$out/c$i.txt' && [ \$(wc -l < '$out/c$i.txt') -le 2 ]"
done
# --pcap captures the switch between ports: the in-process lab refuses it before EAL, in one line.
"$sw" -- --lab-senders 2 --pcap "$out/lab.pcapng" > "$out/e7.txt" 2>&1
check "--pcap with --lab-senders refused by name" \
  "[ $? -eq 2 ] && [ \$(wc -l < '$out/e7.txt') -eq 1 ] && grep -q -- '--pcap' '$out/e7.txt' && [ ! -e '$out/lab.pcapng' ]"
"$sw" -- --bogus > "$out/e5.txt" 2>&1
check "unknown option exits 2" "[ $? -eq 2 ] && grep -q 'unknown option' '$out/e5.txt'"

# --plot without --json: refused by name before EAL, the experiment never run (issue 34 item 6).
"$sw" -- --lab-senders 2 --lab-duration-ms 150 --plot "$out/noj.png" > "$out/e6.txt" 2>&1
check "--plot without --json: one line naming both, exit 2, before EAL" \
  "[ $? -eq 2 ] && [ \$(wc -l < '$out/e6.txt') -eq 1 ] && grep -q -- '--plot needs --json' '$out/e6.txt' && [ ! -e '$out/noj.png' ]"
# File names with shell characters are names: the plot script runs from an argument vector, and
# a $(...) in a name is never executed. The PNG is drawn under its odd name.
# (A name holds no '/': each touch would make its file in the working directory, $out.)
odd_json="$out/lab \$(touch pwned-json) 'q\".json"
odd_png="$out/plot \$(touch pwned-png);\`touch pwned-tick\`.png"
(cd "$out" && "$sw" -- --lab-senders 2 --lab-duration-ms 100 --json "$odd_json" --plot "$odd_png") > "$out/odd.txt" 2>&1
check "--json and --plot names with \$(...), backquotes and quotes: written under those names, nothing executed" \
  "[ $? -eq 0 ] && [ -s \"\$odd_json\" ] && [ -s \"\$odd_png\" ] &&
   [ ! -e '$out/pwned-json' ] && [ ! -e '$out/pwned-png' ] && [ ! -e '$out/pwned-tick' ]" "$out/odd.txt"

[ $fail -eq 0 ] && echo "droce-switch: all checks passed"
exit $fail
