#!/usr/bin/env bash
# droce-gen end to end, two processes: client and server over net_memif (and vhost-user), the
# OOB exchange and --connect cm, static QPs, several workers, the peer's MAC by ARP, VLAN, IPv6,
# a peer that stalls, dies or never comes. One process's runs are in check_gen.sh; both share
# gen_check_lib.sh. Run beside check_gen.sh by meson (its own test): the two halves take about
# the same time.
# shellcheck source=tests/apps/gen_check_lib.sh
. "$(dirname "$0")/gen_check_lib.sh" "$@"

# ---- client and server: two processes over net_memif, each on its own CPU ----
# A TCP port nobody uses now (other runs of this script may be on the default 18515).
free_port() { /usr/bin/python3 -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])"; }
srv_eal() { echo "-l $last_cpu --no-pci --vdev net_memif0,role=server,socket=$out/$1.sock"; }
cli_eal() { echo "-l 0 --no-pci --vdev net_memif0,role=client,socket=$out/$1.sock"; }
# run_pair NAME SERVER_ARGS -- CLIENT_ARGS: both in the background with timeouts; sets srv_rc, cli_rc.
run_pair() {
  local name=$1; shift
  last_pair=$name
  local sargs=() cargs=() side=s
  for a in "$@"; do
    if [ "$a" = "--" ] && [ $side = s ]; then side=c; continue; fi
    if [ $side = s ]; then sargs+=("$a"); else cargs+=("$a"); fi
  done
  # A lossless pair gets a 268 ms ACK timeout (x 8 tries) instead of 67 ms: on a busy 2-core host
  # one of the two processes can be off the CPU for half a second, and a test that needs an idle
  # CPU is flaky, not strict. Lossy pairs keep the default (their tail losses wait on the timer).
  if [[ " ${sargs[*]} ${cargs[*]} " != *" --loss "* && " ${sargs[*]} ${cargs[*]} " != *" --qp-timeout "* ]]; then
    sargs+=(--qp-timeout 16); cargs+=(--qp-timeout 16)
  fi
  local port; port=$(free_port)  # given first: a pair's own --oob-port 0 (static) still wins
  # shellcheck disable=SC2046
  timeout 120 "$gen" $(srv_eal "$name") -- --mode server --oob-port "$port" --quiet --json "$out/$name.s.json" "${sargs[@]}" \
    > "$out/$name.s.txt" 2>&1 &
  local spid=$!
  sleep 0.5
  # shellcheck disable=SC2046
  timeout 120 "$gen" $(cli_eal "$name") -- --mode client --oob-port "$port" --quiet --json "$out/$name.c.json" "${cargs[@]}" \
    > "$out/$name.c.txt" 2>&1
  cli_rc=$?
  wait $spid
  srv_rc=$?
}
psns_agree() {  # CLIENT_JSON SERVER_JSON: each QP's first PSNs as the other end was told them
  /usr/bin/python3 - "$1" "$2" <<'PY'
import json, sys
c, s = (json.load(open(f))['first_psns'] for f in sys.argv[1:3])
assert len(c) == len(s) > 0, (c, s)
for qc, qs in zip(c, s):
    assert qc['send'] == qs['receive'] and qc['receive'] == qs['send'], (qc, qs)
PY
}
verified() {  # JSON file: every key, verified, no loss
  /usr/bin/python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d['messages'] > 0 and d['lost'] == 0 and d['duplicated'] == 0 and d['corrupted'] == 0, d
assert d['out_of_order'] == 0 and d['errors'] == 0 and d['problem'] == '', d
PY
}

# 1000 messages (about 10,000 frames captured, both ways, with retransmissions and ACKs): the
# capture's Scapy check below costs about 3 ms a frame, so this count sets most of the script's length.
run_pair sendloss --op send --size 64,1500,6000 --loss 0.05 --duplicate 0.01 --reorder 0.01 --seed 3 -- \
  --op send --size 64,1500,6000 --count 1000 --loss 0.05 --duplicate 0.01 --reorder 0.01 --pcap "$out/memif.pcapng"
check "memif SEND, 5 % loss + duplication + reordering both ways: both ends exit 0" "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ]"
check "memif SEND: client JSON verified by both ends, retransmissions seen" \
  "verified '$out/sendloss.c.json' && /usr/bin/python3 -c \"import json; d=json.load(open('$out/sendloss.c.json')); assert d['retransmitted_packets'] > 0 and d['peer_received'] >= 1000 and d['impairment']['dropped'] > 0\""
check "memif SEND: server JSON verified" "verified '$out/sendloss.s.json'"
check "pcapng of the lossy memif run decodes in tshark and its ICRCs verify in Scapy" \
  "bash '$root/scripts/verify_capture.sh' '$out/memif.pcapng' > '$out/pcap.txt' 2>&1"

run_pair write --op write --size 4096 --mtu 4096 --connect-timeout 5 -- --connect-timeout 5 --op write --size 4096 --mtu 4096 --qps 2 --count 4000 --loss 0.02
check "client and server with different workloads: both fail, the server says why" "[ $cli_rc -ne 0 ] && [ $srv_rc -ne 0 ] && grep -q 'same workload' '$out/write.s.txt'"
# Loss where the user means it (issue 34): the client's impairment on what it sends and receives
# (its WRITE data and the ACKs), the server's on what it receives; each report says where.
run_pair write2 --op write --size 4096 --mtu 4096 --qps 2 --loss 0.02 -- --op write --size 4096 --mtu 4096 --qps 2 --count 4000 \
  --loss 0.02 --impair-direction both
check "memif WRITE over 2 QPs with 2 % loss both ways: verified, each end's first PSNs the other's" \
  "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && verified '$out/write2.c.json' && psns_agree '$out/write2.c.json' '$out/write2.s.json'"
check "--impair-direction: the client dropped data it sent and ACKs it received, the server only what it received" \
  "/usr/bin/python3 - '$out/write2.c.json' '$out/write2.s.json' <<'PY'
import json, sys
c, s = (json.load(open(f))['impairment'] for f in sys.argv[1:3])
assert c['direction'] == 'both' and c['dropped_tx'] > 0 and c['dropped_rx'] > 0, c
assert s['direction'] == 'rx' and s['dropped_rx'] > 0 and s['dropped_tx'] == 0, s
for f, i in zip(sys.argv[1:3], (c, s)):
    assert i['dropped'] == i['dropped_rx'] + i['dropped_tx'] == json.load(open(f))['drop_reasons']['injected_loss'], f
PY"
# Selective repeat is agreed in droce-gen's exchange: used only when both ends ask for it.
recovery_is() {  # RECOVERY JSON...: each file's "recovery"
  local want=$1; shift
  /usr/bin/python3 -c "import json, sys; r = [json.load(open(f))['recovery'] for f in sys.argv[2:]]; assert r == [sys.argv[1]] * len(r), r" \
    "$want" "$@"
}
run_pair srpair --recovery sr --op send --size 64,3000 --loss 0.01 -- --recovery sr --op send --size 64,3000 --count 3000 --loss 0.01
check "memif SEND, both --recovery sr, 1 % loss both ways: verified by both, both report recovery sr" \
  "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && verified '$out/srpair.c.json' && verified '$out/srpair.s.json' && recovery_is sr '$out/srpair.c.json' '$out/srpair.s.json'"
run_pair srclient --op write --size 2048 -- --recovery sr --op write --size 2048 --count 2000 --loss 0.01
check "memif WRITE, only the client asks --recovery sr: both fall back to gbn, verified" \
  "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && verified '$out/srclient.c.json' && recovery_is gbn '$out/srclient.c.json' '$out/srclient.s.json'"
run_pair read --op read --size 10000 --burst-start 0.002 --burst-frames 10 -- --op read --size 10000 --count 2000 --loss 0.01 --burst-start 0.002 --burst-frames 10
check "memif READ with 1 % loss and loss bursts of 10 frames: verified at the client" "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && verified '$out/read.c.json'"
run_pair cas --op cmp_swap --qps 2 --loss 0.02 --duplicate 0.01 -- --op cmp_swap --qps 2 --count 3000 --loss 0.02 --duplicate 0.01
check "memif CmpSwap over 2 QPs, 2 % loss both ways: both verified, the server's counters equal the client's 3000 completions" \
  "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && verified '$out/cas.c.json' && verified '$out/cas.s.json' && /usr/bin/python3 -c \"import json; d=json.load(open('$out/cas.s.json')); assert d['atomic_counter'] == d['atomic_completed'] == 3000, d\""
run_pair static --oob-port 0 --remote-qpn 0x11 --op send --size 512 --count 3000 -- \
  --oob-port 0 --remote-qpn 0x11 --op send --size 512 --count 3000
check "memif SEND with a static connection (no exchange): both exit 0" "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ]"

# ---- --connect cm: RDMA-CM over QP1 instead of the TCP exchange (run_pair's --oob-port is then
# the RDMA-CM port); the workload, run length, recovery and buffers travel in REQ/REP private
# data; the client disconnects (DREQ) every QP at the end ----
cm_ok() {  # JSON...: connected over the CM, every QP's REQ/REP/RTU and DREQ/DREP counted
  /usr/bin/python3 - "$@" <<'PY'
import json, sys
for f in sys.argv[1:]:
    d = json.load(open(f))
    assert d['connect'] == 'cm' and d['config']['connect'] == 'cm', f
    cm = d['cm']
    assert cm['cm_mads_received'] > 0 and cm['cm_mads_sent'] > 0 and cm['cm_rejects_sent'] == 0, (f, cm)
PY
}
run_pair cmwrite --connect cm --op write --size 4096 -- --connect cm --op write --size 4096 --count 3000
check "--connect cm, memif WRITE: both exit 0, verified, connect cm with CM counters" \
  "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && verified '$out/cmwrite.c.json' && cm_ok '$out/cmwrite.c.json' '$out/cmwrite.s.json'"
run_pair cmsend --connect cm --op send --size 64,1500 --qps 4 -- --connect cm --op send --size 64,1500 --qps 4 --count 4000
check "--connect cm, memif SEND over 4 QPs: both exit 0, verified by both ends" \
  "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && verified '$out/cmsend.c.json' && verified '$out/cmsend.s.json' && cm_ok '$out/cmsend.c.json' '$out/cmsend.s.json' && psns_agree '$out/cmsend.c.json' '$out/cmsend.s.json'"
run_pair cmread --connect cm --op read --size 8192 --mtu 4096 -- --connect cm --op read --size 8192 --mtu 4096 --count 1000
check "--connect cm, memif READ (the server's buffer from the REP): both exit 0, verified at the client" \
  "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && verified '$out/cmread.c.json' && cm_ok '$out/cmread.c.json'"
run_pair cmsr --connect cm --recovery sr --op write --size 3000 --qps 4 --loss 0.01 -- \
  --connect cm --recovery sr --op write --size 3000 --qps 4 --count 3000 --loss 0.01
check "--connect cm, both --recovery sr over 4 QPs, 1 % loss both ways: agreed over the CM, verified by both" \
  "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && verified '$out/cmsr.c.json' && verified '$out/cmsr.s.json' && recovery_is sr '$out/cmsr.c.json' '$out/cmsr.s.json'"
run_pair cmgbn --connect cm --recovery sr --op send --size 512 -- --connect cm --op send --size 512 --count 2000
check "--connect cm, only the server asks --recovery sr: both use gbn, verified" \
  "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && verified '$out/cmgbn.c.json' && recovery_is gbn '$out/cmgbn.c.json' '$out/cmgbn.s.json'"
run_pair cmsrclient --connect cm --op write --size 2048 -- --connect cm --recovery sr --op write --size 2048 --count 2000 --loss 0.01
check "--connect cm, only the client asks --recovery sr: both fall back to gbn (the client's QPs take the REP's answer), verified" \
  "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && verified '$out/cmsrclient.c.json' && recovery_is gbn '$out/cmsrclient.c.json' '$out/cmsrclient.s.json'"
run_pair cmdiff --connect cm --op write --size 4096 --connect-timeout 5 -- --connect cm --op write --size 2048 --count 1000 --connect-timeout 5
check "--connect cm with different workloads: both fail, the server refuses the REQ and says why" \
  "[ $cli_rc -ne 0 ] && [ $srv_rc -ne 0 ] && grep -q 'same workload' '$out/cmdiff.s.txt' && grep -q 'rejected' '$out/cmdiff.c.txt'"
# A client to a port where no server listens: the peer's CM answers REJ (invalid service ID) at
# once; the client says nobody listens there, well before its --connect-timeout.
last_pair=cmnobody
srv_port=$(free_port)
timeout 60 "$gen" $(srv_eal cmnobody) -- --mode server --connect cm --oob-port "$srv_port" --connect-timeout 15 --quiet \
  > "$out/cmnobody.s.txt" 2>&1 &
srv_pid=$!
sleep 0.5
t0=$(date +%s)
timeout 60 "$gen" $(cli_eal cmnobody) -- --mode client --connect cm --oob-port "$((srv_port == 65535 ? 1024 : srv_port + 1))" \
  --connect-timeout 30 --quiet > "$out/cmnobody.c.txt" 2>&1
cli_rc=$?
took=$(( $(date +%s) - t0 ))
kill -INT "$srv_pid" 2>/dev/null
wait "$srv_pid"
check "--connect cm client to a port with no server: exit 1 saying nobody listens there, within 20 s (took ${took} s)" \
  "[ $cli_rc -eq 1 ] && [ $took -le 20 ] && grep -q 'nobody listens on RDMA-CM port' '$out/cmnobody.c.txt'"
# The server ends first (Ctrl-C mid-run): it disconnects every QP, and the client's run ends at
# once with a problem naming it.
last_pair=cmstop
port=$(free_port)
timeout 120 "$gen" $(srv_eal cmstop) -- --mode server --connect cm --oob-port "$port" --quiet --op send --size 256 \
  > "$out/cmstop.s.txt" 2>&1 &
srv_pid=$!
sleep 0.5
timeout 120 "$gen" $(cli_eal cmstop) -- --mode client --connect cm --oob-port "$port" --op send --size 256 \
  --duration 30 --json "$out/cmstop.c.json" > "$out/cmstop.c.txt" 2>&1 &
cli_pid=$!
# its live line says the run is under way (up to 60 s: a busy machine stretches EAL and the CM)
for _ in $(seq 600); do grep -q 'Gb/s' "$out/cmstop.c.txt" 2>/dev/null && break; sleep 0.1; done
t0=$(date +%s)
kill -INT "$srv_pid" 2>/dev/null
wait "$srv_pid"
srv_rc=$?
wait "$cli_pid"
cli_rc=$?
took=$(( $(date +%s) - t0 ))
check "--connect cm, server interrupted mid-run: both exit 1, the client's problem says the server ended the run, within 20 s (took ${took} s)" \
  "[ $srv_rc -eq 1 ] && [ $cli_rc -eq 1 ] && [ $took -le 20 ] && /usr/bin/python3 -c \"import json; d=json.load(open('$out/cmstop.c.json')); assert d['problem'].startswith('the server ended the run early'), d['problem']\""
"$gen" -- --mode client --connect udp > "$out/e10.txt" 2>&1
check "--connect udp refused in one line naming --connect" \
  "[ $? -eq 2 ] && [ \$(wc -l < '$out/e10.txt') -eq 1 ] && grep -q -- '--connect' '$out/e10.txt'"

# Two workers on each side over a two-queue memif pair: queue w of the client meets queue w of the
# server, QP i runs on worker i % 2 on both sides. 1 % loss both ways; each end verifies every
# message per worker and in total, and reports its steering counts.
srv_eal() { echo "--lcores 0@0,1@$last_cpu --no-pci --vdev net_memif0,role=server,socket=$out/$1.sock"; }
cli_eal() { echo "--lcores 0@0,1@$last_cpu --no-pci --vdev net_memif0,role=client,socket=$out/$1.sock"; }
run_pair workers --workers 2 --qps 4 --op send --size 64,1500,6000 --loss 0.01 -- \
  --workers 2 --qps 4 --op send --size 64,1500,6000 --count 4000 --loss 0.01
check "memif, 2 workers each side over 2 queues, SEND at 1 % loss both ways: both ends exit 0" "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ]"
check "memif, 2 workers: both ends verified, per worker and in total, steering counted" \
  "verified '$out/workers.c.json' && verified '$out/workers.s.json' && every_worker '$out/workers.c.json' 2 4 4 &&
   every_worker '$out/workers.s.json' 2 4 4 && /usr/bin/python3 -c \"
import json
for f in ['$out/workers.c.json', '$out/workers.s.json']:
    d = json.load(open(f))
    assert all('rx_steered_in_software' in w and 'rx_steered_in' in w for w in d['workers']), d['workers']
c = json.load(open('$out/workers.c.json'))
assert c['messages'] == 4000 and c['peer_received'] >= 4000, c
\""
# Selective repeat with two workers on each side (issue 19): WRITE at 1 % loss, SR negotiated in
# the exchange for every QP, every message verified per worker and in total.
run_pair srworkers --workers 2 --qps 4 --op write --size 4096 --loss 0.01 --recovery sr -- \
  --workers 2 --qps 4 --op write --size 4096 --count 4000 --loss 0.01 --recovery sr
check "memif, 2 workers each side, WRITE over selective repeat at 1 % loss: both ends sr, verified per worker and in total" \
  "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && verified '$out/srworkers.c.json' && verified '$out/srworkers.s.json' &&
   every_worker '$out/srworkers.c.json' 2 4 4 && /usr/bin/python3 -c \"
import json
for f in ['$out/srworkers.c.json', '$out/srworkers.s.json']:
    d = json.load(open(f))
    assert d['recovery'] == 'sr', d['recovery']
c = json.load(open('$out/srworkers.c.json'))
assert c['messages'] == 4000 and c['retransmitted_packets'] > 0, c
\""

# The path VMs use: net_vhost (the vhost-user socket server) and virtio_user in two processes,
# with the PMD's hugepage memory shared by file descriptor. The client's payloads live in heap
# memory the vhost side cannot map, so the engine copies them for this port (and says so).
srv_eal() { echo "-l $last_cpu --no-pci --vdev net_vhost0,iface=$out/$1.vsock,queues=1"; }
cli_eal() { echo "-l 0 --no-pci --vdev virtio_user0,path=$out/$1.vsock,queues=1"; }
run_pair vhost --op write --size 4096 --loss 0.01 -- --op write --size 4096 --count 3000 --loss 0.01
check "vhost-user <-> virtio_user WRITE with 1 % loss both ways: verified" \
  "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && verified '$out/vhost.c.json' && verified '$out/vhost.s.json'"
srv_eal() { echo "-l $last_cpu --no-pci --vdev net_memif0,role=server,socket=$out/$1.sock"; }
cli_eal() { echo "-l 0 --no-pci --vdev net_memif0,role=client,socket=$out/$1.sock"; }

# Start order does not matter: a memif client started before its server connects once the server
# is there (the port restarts the client until the link comes up).
port=$(free_port)
timeout 60 "$gen" $(cli_eal order) -- --mode client --oob-port "$port" --quiet --op send --size 512 --count 3000 > "$out/order.c.txt" 2>&1 &
cpid=$!
sleep 2
timeout 60 "$gen" $(srv_eal order) -- --mode server --oob-port "$port" --quiet --op send --size 512 > "$out/order.s.txt" 2>&1
srv_rc=$?
wait $cpid
cli_rc=$?
last_pair=order
check "memif client started 2 s before its server: both exit 0" "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ]"

# A client that vanishes mid-run: the server says so and fails, without hanging. The client is
# killed once it is running (its first live line), not after a fixed time: on a busy host its
# set-up alone may take longer than any fixed guess, and the server would see no client at all.
port=$(free_port)
timeout 90 "$gen" $(srv_eal gone) -- --mode server --oob-port "$port" --quiet --op send --size 256 > "$out/gone.s.txt" 2>&1 &
spid=$!
# No timeout(1) around the client: its pid must be droce-gen's own for the KILL (the wait below is
# bounded and the KILL unconditional).
"$gen" $(cli_eal gone) -- --mode client --oob-port "$port" --interval 0.2 --op send --size 256 --duration 60 \
  > "$out/gone.c.txt" 2>&1 &
cpid=$!
for _ in $(seq 600); do grep -q '^droce-gen: last ' "$out/gone.c.txt" 2>/dev/null && break; kill -0 $cpid 2>/dev/null || break; sleep 0.1; done
kill -KILL $cpid 2>/dev/null
wait $cpid 2>/dev/null
wait $spid
srv_rc=$?
last_pair=gone
check "a client killed mid-run: the server exits non-zero and says the client disappeared" \
  "[ $srv_rc -eq 1 ] && grep -q 'disappeared' '$out/gone.s.txt'"
# The server learns how long its client runs: a client run longer than the server's own
# --duration + --connect-timeout + 10 s (2 + 3 + 10 here) is waited for, not abandoned.
run_pair runlength --connect-timeout 3 --op write --size 1024 -- --connect-timeout 3 --op write --size 1024 --duration 18
check "a client running 18 s against a server with --connect-timeout 3: both verified" \
  "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && verified '$out/runlength.c.json' && verified '$out/runlength.s.json'"

# A failed completion is named: a statically connected client whose server has finished and gone
# exhausts its retries; its problem says which QP, which status and after how many retries.
timeout 60 "$gen" $(srv_eal retry) -- --mode server --quiet --oob-port 0 --remote-qpn 0x11 --op send --size 512 --count 2000 \
  > "$out/retry.s.txt" 2>&1 &
spid=$!
sleep 0.5
timeout 60 "$gen" $(cli_eal retry) -- --mode client --quiet --oob-port 0 --remote-qpn 0x11 --op send --size 512 --duration 30 \
  --json "$out/retry.c.json" > "$out/retry.c.txt" 2>&1
cli_rc=$?
wait $spid
last_pair=retry
check "a client whose server is gone: exit 1, the problem names the QP, the verbs status and the retries" \
  "[ $cli_rc -eq 1 ] && /usr/bin/python3 -c \"
import json; p = json.load(open('$out/retry.c.json'))['problem']
assert 'QP 0 (QPN 0x000011)' in p and 'IBV_WC_RETRY_EXC_ERR' in p and 'retry counter exceeded' in p and 'after 7 retries' in p, p
\" && grep -q 'retry counter exceeded' '$out/retry.c.txt'"

# Ctrl-C while an exchange waits: the app ends at once, saying "interrupted", not after the
# 30 s --connect-timeout. (net_null: a port whose link is up with no peer; the peer here is a TCP
# socket that connects, or accepts, and then says nothing.)
null_eal="-l $last_cpu --no-pci --no-huge -m 512 --vdev net_null0"  # no hugepages: other runs may hold them
stall_port=$(/usr/bin/python3 -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
# Signalled directly, not through timeout(1), which would pass a second SIGINT on to its process
# group (and a second Ctrl-C exits at once); a watchdog bounds it instead.
# It kills only that process (a pid may be reused: the TCP port in its command line is this test's).
watchdog() { ( timeout 60 tail --pid="$1" -f /dev/null || { grep -q -F "$stall_port" "/proc/$1/cmdline" && kill -KILL "$1"; } ) > /dev/null 2>&1 & }
# shellcheck disable=SC2086
"$gen" $null_eal -- --mode server --oob-port "$stall_port" --connect-timeout 30 > "$out/int.s.txt" 2>&1 &
spid=$!
watchdog $spid
for _ in $(seq 100); do grep -q 'waiting for a client' "$out/int.s.txt" && break; sleep 0.1; done
/usr/bin/python3 -c "
import socket, time
s = socket.create_connection(('127.0.0.1', $stall_port)); time.sleep(30)" &
tcp_pid=$!
sleep 1
t0=$SECONDS
kill -INT $spid
wait $spid
srv_rc=$?
took=$(( SECONDS - t0 ))
kill $tcp_pid 2>/dev/null; wait $tcp_pid 2>/dev/null
last_pair=""
check "Ctrl-C to a server waiting in the exchange: exits 1 within 12 s saying interrupted (took ${took} s)" \
  "[ $srv_rc -eq 1 ] && [ $took -le 12 ] && grep -q 'droce-gen: interrupted' '$out/int.s.txt' || { tail -n 3 '$out/int.s.txt'; false; }"
/usr/bin/python3 -c "
import socket, time
l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); l.bind(('127.0.0.1', $stall_port)); l.listen(1)
c, _ = l.accept(); time.sleep(30)" &
tcp_pid=$!
sleep 0.5
# shellcheck disable=SC2086
"$gen" $null_eal -- --mode client --oob-port "$stall_port" --connect-timeout 30 > "$out/int.c.txt" 2>&1 &
cpid=$!
watchdog $cpid
for _ in $(seq 100); do ss -tn 2>/dev/null | grep -q "ESTAB.*:$stall_port " && break; sleep 0.1; done
sleep 1
t0=$SECONDS
kill -INT $cpid
wait $cpid
cli_rc=$?
took=$(( SECONDS - t0 ))
kill $tcp_pid 2>/dev/null; wait $tcp_pid 2>/dev/null
check "Ctrl-C to a client whose server never answers the exchange: exits 1 within 12 s saying interrupted (took ${took} s)" \
  "[ $cli_rc -eq 1 ] && [ $took -le 12 ] && grep -q 'droce-gen: interrupted' '$out/int.c.txt' || { tail -n 3 '$out/int.c.txt'; false; }"

# --connect-timeout 0: a server waits for its client forever (perftest's server), where one given a
# bound gives up; Ctrl-C still ends the wait at once. Both start together: once the bounded one has
# ended (1 s after it listened) and the other has listened for 3 s, the other must still wait.
bound_port=$(free_port)
forever_port=$(free_port)
# shellcheck disable=SC2086
"$gen" $null_eal -- --mode server --oob-port "$bound_port" --connect-timeout 1 > "$out/bound.s.txt" 2>&1 &
bpid=$!
# shellcheck disable=SC2086
"$gen" $null_eal -- --mode server --oob-port "$forever_port" --connect-timeout 0 > "$out/forever.s.txt" 2>&1 &
fpid=$!
forever_wait_check droce-gen "$bpid" "$out/bound.s.txt" "$fpid" "$out/forever.s.txt" "grep -q 'waiting for a client' '$out/forever.s.txt'"

# A client's Ctrl-C mid-run (the TCP exchange): the client says interrupted, the server that the
# client ended the run early; both exit 1, and neither counts the client's in-flight window as lost
# (each end's verification covers what arrived and was acknowledged).
last_pair=cint
port=$(free_port)
# shellcheck disable=SC2046
timeout 120 "$gen" $(srv_eal cint) -- --mode server --oob-port "$port" --quiet --op write --size 4096 --qp-timeout 16 \
  --json "$out/cint.s.json" > "$out/cint.s.txt" 2>&1 &
srv_pid=$!
for _ in $(seq 300); do grep -q -F "@$out/cint.sock" /proc/net/unix && break; sleep 0.1; done  # memif: abstract socket
# shellcheck disable=SC2046
"$gen" $(cli_eal cint) -- --mode client --oob-port "$port" --op write --size 4096 --qp-timeout 16 --duration 60 \
  --json "$out/cint.c.json" > "$out/cint.c.txt" 2>&1 &
cli_pid=$!
( timeout 120 tail --pid=$cli_pid -f /dev/null || { grep -q -F "$port" "/proc/$cli_pid/cmdline" && kill -KILL $cli_pid; } ) > /dev/null 2>&1 &
for _ in $(seq 600); do grep -q 'Gb/s' "$out/cint.c.txt" 2>/dev/null && break; sleep 0.1; done
kill -INT $cli_pid
wait $cli_pid
cli_rc=$?
wait $srv_pid
srv_rc=$?
check "a client's Ctrl-C mid-run: both exit 1, the client says interrupted, the server that the client ended the run early, nothing lost" \
  "[ $cli_rc -eq 1 ] && [ $srv_rc -eq 1 ] && grep -q 'droce-gen: interrupted' '$out/cint.c.txt' &&
   grep -q 'droce-gen: the client ended the run early (interrupted)' '$out/cint.s.txt' && /usr/bin/python3 -c \"
import json
c, s = json.load(open('$out/cint.c.json')), json.load(open('$out/cint.s.json'))
assert c['problem'] == 'interrupted' and s['problem'] == 'the client ended the run early (interrupted)', (c['problem'], s['problem'])
for d in (c, s):
    assert d['messages'] > 0 and d['lost'] == 0 and d['duplicated'] == 0 and d['corrupted'] == 0 and d['errors'] == 0, d
\""

# ---- the peer's MAC: by ARP when --peer-mac is not given (every pair above), else as given ----
# arp_frames PCAP: the ARP frames of a capture, one line each (tshark's summary).
arp_frames() { tshark -r "$1" -Y arp 2>/dev/null; }
run_pair arp --op send --size 512 -- --op send --size 512 --count 2000 --pcap "$out/arp.pcapng"
check "memif pair without --peer-mac: both announce themselves, one resolves the other by ARP, both verified" \
  "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && verified '$out/arp.c.json' && verified '$out/arp.s.json' &&
   arp_frames '$out/arp.pcapng' > '$out/arp.frames' && grep -q 'Announcement for 10.0.0.1' '$out/arp.frames' &&
   grep -q 'Announcement for 10.0.0.2' '$out/arp.frames' && grep -q 'Who has 10.0.0.[12]' '$out/arp.frames' &&
   grep -q '10.0.0.[12] is at' '$out/arp.frames' || { cat '$out/arp.frames'; false; }"
run_pair given --op send --size 512 --peer-mac 02:00:0a:00:00:01 -- --op send --size 512 --count 2000 \
  --peer-mac 02:00:0a:00:00:02 --pcap "$out/given.pcapng"
check "memif pair with --peer-mac on both sides: verified, and not one ARP frame on the wire" \
  "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && verified '$out/given.c.json' && verified '$out/given.s.json' &&
   [ -s '$out/given.pcapng' ] && [ -z \"\$(arp_frames '$out/given.pcapng')\" ]"
# DSCP and an 802.1Q tag on both sides: every RoCEv2 frame of the run carries them, and so does
# ARP (the resolution happens on the VLAN).
run_pair vlan --op write --size 1024 --dscp 26 --vlan 100 --pcp 3 -- --op write --size 1024 --count 2000 \
  --dscp 26 --vlan 100 --pcp 3 --pcap "$out/vlan.pcapng"
check "memif pair with --dscp 26 --vlan 100 --pcp 3: verified; every RoCEv2 and ARP frame tagged VLAN 100 priority 3, RoCEv2 with DSCP 26" \
  "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && verified '$out/vlan.c.json' && verified '$out/vlan.s.json' &&
   [ \"\$(tshark -r '$out/vlan.pcapng' -Y 'udp.port == 4791' 2>/dev/null | wc -l)\" -gt 0 ] &&
   [ -z \"\$(tshark -r '$out/vlan.pcapng' -Y '(udp.port == 4791 && !(vlan.id == 100 && vlan.priority == 3 && ip.dsfield.dscp == 26)) || (arp && !(vlan.id == 100))' 2>/dev/null)\" ] &&
   [ -n \"\$(arp_frames '$out/vlan.pcapng')\" ]"
# RoCEv2 over IPv6 (ULA addresses, not IPv4-mapped) with a VLAN tag and DSCP on both sides: the
# exchange carries each side's IPv6 address as its GID, each resolves the other by Neighbor
# Discovery on the VLAN, and every RoCEv2 frame is IPv6 between the two addresses, tagged VLAN 200
# priority 5, with DSCP 46. The JSON names the peer by the GID's address.
# v6_frames PCAP FILTER: the frames of a capture that match FILTER, one line each.
v6_frames() { tshark -r "$1" -Y "$2" 2>/dev/null; }
V6MARKS=(--dscp 46 --vlan 200 --pcp 5)
run_pair ip6 --op write --size 2048 --local-ip fd00:17::2 "${V6MARKS[@]}" -- --op write --size 2048 --count 2000 \
  --local-ip fd00:17::1 "${V6MARKS[@]}" --pcap "$out/ip6.pcapng"
check "memif pair over IPv6 fd00:17::1/::2 with --dscp 46 --vlan 200 --pcp 5: verified; every RoCEv2 frame IPv6 between the two, tagged VLAN 200 priority 5, DSCP 46; resolved by ND on the VLAN" \
  "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && verified '$out/ip6.c.json' && verified '$out/ip6.s.json' &&
   /usr/bin/python3 -c \"import json; c = json.load(open('$out/ip6.c.json')); s = json.load(open('$out/ip6.s.json')); assert (c['config']['local_ip'], c['config']['peer_ip'], s['config']['local_ip'], s['config']['peer_ip']) == ('fd00:17::1', 'fd00:17::2', 'fd00:17::2', 'fd00:17::1'), (c['config'], s['config'])\" &&
   [ \"\$(v6_frames '$out/ip6.pcapng' 'udp.port == 4791' | wc -l)\" -gt 0 ] &&
   [ -z \"\$(v6_frames '$out/ip6.pcapng' 'udp.port == 4791 && !(ipv6 && !ip && vlan.id == 200 && vlan.priority == 5 && ipv6.tclass.dscp == 46 && ((ipv6.src == fd00:17::1 && ipv6.dst == fd00:17::2) || (ipv6.src == fd00:17::2 && ipv6.dst == fd00:17::1)))')\" ] &&
   [ -n \"\$(v6_frames '$out/ip6.pcapng' 'icmpv6.type == 135 && vlan.id == 200')\" ] &&
   [ -n \"\$(v6_frames '$out/ip6.pcapng' 'icmpv6.type == 136 && vlan.id == 200')\" ] &&
   [ -z \"\$(v6_frames '$out/ip6.pcapng' 'arp || (icmpv6 && !(vlan.id == 200))')\" ]"
# The same statically (--oob-port 0): --peer-ip is IPv6 and ND finds its MAC.
run_pair v6static --oob-port 0 --remote-qpn 0x11 --op send --size 512 --count 2000 --local-ip fd00:17::2 \
  --peer-ip fd00:17::1 -- --oob-port 0 --remote-qpn 0x11 --op send --size 512 --count 2000 --local-ip fd00:17::1 \
  --peer-ip fd00:17::2 --pcap "$out/v6static.pcapng"
check "static memif pair over IPv6 (--peer-ip fd00:17::1/::2): both exit 0, the RoCEv2 frames IPv6, the MAC by ND" \
  "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && [ \"\$(v6_frames '$out/v6static.pcapng' 'udp.port == 4791 && ipv6' | wc -l)\" -gt 0 ] &&
   [ -z \"\$(v6_frames '$out/v6static.pcapng' 'udp.port == 4791 && !ipv6')\" ] &&
   [ -n \"\$(v6_frames '$out/v6static.pcapng' 'icmpv6.type == 136')\" ]"
# One side IPv6, the other IPv4: the server refuses the client's GID, naming both families.
run_pair v6mix --op send --size 512 --local-ip fd00:17::2 --connect-timeout 5 -- --op send --size 512 --count 100 \
  --connect-timeout 5
check "an IPv6 server and an IPv4 client: both fail, the server saying the families differ" \
  "[ $cli_rc -ne 0 ] && [ $srv_rc -eq 1 ] && grep -q \"the peer's GID 10.0.0.1 is an IPv4 address and ours, fd00:17::2, is IPv6\" '$out/v6mix.s.txt'"
# Two workers a side: worker 0 resolves (its queue 0 meets the peer's queue 0, where the peer's
# ARP frames arrive) and both workers' QPs use the MAC.
srv_eal() { echo "--lcores 0@0,1@$last_cpu --no-pci --vdev net_memif0,role=server,socket=$out/$1.sock"; }
cli_eal() { echo "--lcores 0@0,1@$last_cpu --no-pci --vdev net_memif0,role=client,socket=$out/$1.sock"; }
run_pair arpw --workers 2 --qps 4 --op write --size 2048 -- --workers 2 --qps 4 --op write --size 2048 --count 4000 \
  --pcap "$out/arpw.pcapng"
check "memif, 2 workers each side, no --peer-mac: resolved by ARP, every worker's QPs verified" \
  "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && every_worker '$out/arpw.c.json' 2 4 4 && every_worker '$out/arpw.s.json' 2 4 4 &&
   arp_frames '$out/arpw.pcapng' | grep -c '10.0.0.[12] is at' > /dev/null"
srv_eal() { echo "-l $last_cpu --no-pci --vdev net_memif0,role=server,socket=$out/$1.sock"; }
cli_eal() { echo "-l 0 --no-pci --vdev net_memif0,role=client,socket=$out/$1.sock"; }
# Nobody answers ARP (net_null: a link that is up and takes every frame away). Static connection:
# one resolution of 3 requests (--connect-timeout 1 asks for no second one), then the engine's words.
last_pair=""
t0=$SECONDS
# shellcheck disable=SC2086
timeout 60 "$gen" $null_eal -- --mode client --oob-port 0 --remote-qpn 0x11 --op send --peer-ip 10.0.0.99 \
  --connect-timeout 1 > "$out/noarp.txt" 2>&1
rc=$?
took=$(( SECONDS - t0 ))
check "static client whose --peer-ip nobody answers: exit 1 with the ARP failure, within 30 s (took ${took} s)" \
  "[ $rc -eq 1 ] && [ $took -le 30 ] && grep -q 'no ARP reply from 10.0.0.99 after 3 requests in' '$out/noarp.txt' &&
   grep -q -- '--peer-mac' '$out/noarp.txt' || { tail -n 3 '$out/noarp.txt'; false; }"
# The same after an exchange: both sides on net_null, the TCP exchange between them works, ARP does not.
port=$(free_port)
t0=$SECONDS
# shellcheck disable=SC2086
timeout 60 "$gen" $null_eal -- --mode server --oob-port "$port" --connect-timeout 3 --quiet > "$out/noarp.s.txt" 2>&1 &
spid=$!
sleep 0.5
# shellcheck disable=SC2086
timeout 60 "$gen" -l 0 --no-pci --no-huge -m 512 --vdev net_null0 -- --mode client --oob-port "$port" \
  --connect-timeout 3 --quiet --count 100 > "$out/noarp.c.txt" 2>&1
cli_rc=$?
wait $spid
srv_rc=$?
took=$(( SECONDS - t0 ))
check "client and server whose ARP nobody carries: both exit non-zero, the ARP failure named, within 30 s (took ${took} s)" \
  "[ $cli_rc -ne 0 ] && [ $srv_rc -ne 0 ] && [ $took -le 30 ] && grep -q -h 'no ARP reply from 10.0.0.[12] after 3 requests' '$out/noarp.s.txt' '$out/noarp.c.txt' ||
   { tail -n 2 '$out/noarp.s.txt' '$out/noarp.c.txt'; false; }"
# An IPv6 peer (its GID not IPv4-mapped) of an IPv4 endpoint: one endpoint speaks one IP version,
# so the server says the families differ instead of failing obscurely. The peer here is a socket
# speaking rc_pingpong's format.
port=$(free_port)
# shellcheck disable=SC2086
timeout 60 "$gen" $null_eal -- --mode server --oob-port "$port" --connect-timeout 5 --quiet > "$out/v6.s.txt" 2>&1 &
spid=$!
/usr/bin/python3 -c "
import socket, time
for _ in range(100):
    try:
        s = socket.create_connection(('127.0.0.1', $port)); break
    except OSError: time.sleep(0.1)
s.sendall(b'0000:000011:000100:fe800000000000000000000000000002\0'); time.sleep(2)" > /dev/null 2>&1
wait $spid
srv_rc=$?
check "a peer whose GID is IPv6 to an IPv4 endpoint: exit 1 saying the families differ" \
  "[ $srv_rc -eq 1 ] && grep -q 'fe80::2 is an IPv6 address and ours, 10.0.0.2, is IPv4' '$out/v6.s.txt' &&
   grep -q 'same family' '$out/v6.s.txt' ||
   { tail -n 2 '$out/v6.s.txt'; false; }"

# Nobody to talk to: a clear error within the connect timeout.
timeout 30 "$gen" $(cli_eal nobody) -- --mode client --oob-port "$(free_port)" --connect-timeout 1 > "$out/nobody.txt" 2>&1
check "no server: the client gives up within --connect-timeout with a message" \
  "[ \$? -eq 1 ] && grep -q -i 'link\|connect' '$out/nobody.txt'"
[ $fail -eq 0 ] && echo "droce-gen pair checks passed"
exit $fail
