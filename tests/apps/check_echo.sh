#!/usr/bin/env bash
# droce-echo, the embedding example: both thread modes in one process, and server/client over
# net_memif; every reply checked by the client (exit 0 only if all came back intact).
set -uo pipefail
echo_bin=$1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail=0
check() { if eval "$2"; then echo "ok: $1"; else echo "FAILED: $1"; fail=1; fi; }

# --json -: the JSON alone on stdout (w.json, read below), the report on stderr.
timeout 120 "$echo_bin" -- --count 5000 --size 100 --json - > "$out/w.json" 2> "$out/w.txt"
check "loopback, client on the worker: every reply intact" "[ $? -eq 0 ]"
timeout 120 "$echo_bin" -- --count 5000 --size 9000 --thread app --json "$out/a.json" > "$out/a.txt" 2>&1
check "loopback, client on an application thread through QpChannel (multi-packet messages)" "[ $? -eq 0 ]"
check "JSON has RTT percentiles" "/usr/bin/python3 -c \"import json; d=json.load(open('$out/w.json')); assert d['round_trips'] == 5000 and all(k in d['rtt_ns'] for k in ['p50','p90','p99','p999','max'])\""

last_cpu=$(( $(nproc) - 1 ))
# A TCP port nobody uses now, for this run alone (another run of this script may be beside it).
free_port() { /usr/bin/python3 -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])"; }
port=$(free_port)
timeout 120 "$echo_bin" -l "$last_cpu" --no-pci --vdev "net_memif0,role=server,socket=$out/e.sock" -- \
  --mode server --oob-port "$port" --timeout 3 > "$out/s.txt" 2>&1 &
spid=$!
sleep 0.5
timeout 120 "$echo_bin" -l 0 --no-pci --vdev "net_memif0,role=client,socket=$out/e.sock" -- \
  --mode client --oob-port "$port" --count 5000 > "$out/c.txt" 2>&1
crc=$?
wait $spid
check "server and client over net_memif: both exit 0" "[ $crc -eq 0 ] && [ $? -eq 0 ]"

# The default pair (no EAL options: net_memif, one CPU each) with 64 KiB messages at PMTU 4096
# both ways: frames of 4 KiB and more in the same rings as one-buffer ACKs (memif chaining, see
# apps/common/default_port.cc).
port=$(free_port)
timeout 120 "$echo_bin" -- --mode server --oob-port "$port" --size 65536 --timeout 10 > "$out/s64.txt" 2>&1 &
spid=$!
sleep 0.5
timeout 120 "$echo_bin" -- --mode client --oob-port "$port" --size 65536 --count 400 --warmup 10 --timeout 10 > "$out/c64.txt" 2>&1
crc=$?
wait $spid
check "default memif pair, 64 KiB messages at PMTU 4096 both ways: every reply intact" "[ $crc -eq 0 ] && [ $? -eq 0 ]"

# The same over a --vdev the user wrote without bsize (bench/e2e's settings): droce's EAL
# arguments give it whole-frame buffers (engine/core/eal.cc); with memif's default 2048-byte
# buffers this pair ended in "transport retry counter exceeded" after ~25 messages.
port=$(free_port)
timeout 120 "$echo_bin" -l "$last_cpu" --no-pci --vdev "net_memif0,role=server,socket=$out/e64.sock" -- \
  --mode server --oob-port "$port" --size 65536 --timeout 10 > "$out/s64v.txt" 2>&1 &
spid=$!
sleep 0.5
timeout 120 "$echo_bin" -l 0 --no-pci --vdev "net_memif0,role=client,socket=$out/e64.sock" -- \
  --mode client --oob-port "$port" --size 65536 --count 400 --warmup 10 --timeout 10 > "$out/c64v.txt" 2>&1
crc=$?
wait $spid
check "memif --vdev without bsize, 64 KiB messages at PMTU 4096 both ways: every reply intact" "[ $crc -eq 0 ] && [ $? -eq 0 ]"

# ---- --workers: the server's QPs over 2 workers (each on its own lcore with its own queue pair),
# the client's 4 QPs over 2 queue pairs polled by its one lcore; 4 pollers on a 2-CPU machine are
# slow, so only results are judged.
if [ "$(nproc)" -ge 2 ]; then two_lcores="-l 0-1"; else two_lcores="--lcores=0@0,1@0"; fi
# workers_pair NAME SERVER_ARGS -- CLIENT_ARGS: sets srv_rc, cli_rc.
workers_pair() {
  local name=$1; shift
  local sargs=() cargs=() side=s port; port=$(free_port)
  for a in "$@"; do
    if [ "$a" = "--" ] && [ $side = s ]; then side=c; continue; fi
    if [ $side = s ]; then sargs+=("$a"); else cargs+=("$a"); fi
  done
  # shellcheck disable=SC2086  # $two_lcores: EAL options, split on purpose
  timeout 120 "$echo_bin" $two_lcores --no-pci --vdev "net_memif0,role=server,socket=$out/$name.sock" -- \
    --mode server --oob-port "$port" --timeout 20 --json "$out/$name.s.json" "${sargs[@]}" > "$out/$name.s.txt" 2>&1 &
  local spid=$!
  for _ in $(seq 150); do grep -q -F "@$out/$name.sock" /proc/net/unix && break; sleep 0.1; done  # memif: abstract socket
  timeout 120 "$echo_bin" -l 0 --no-pci --vdev "net_memif0,role=client,socket=$out/$name.sock" -- \
    --mode client --oob-port "$port" --timeout 20 --json "$out/$name.c.json" "${cargs[@]}" > "$out/$name.c.txt" 2>&1
  cli_rc=$?
  wait $spid
  srv_rc=$?
  if [ $cli_rc -ne 0 ] || [ $srv_rc -ne 0 ]; then echo "== $name: client exit $cli_rc, server exit $srv_rc"; tail -n 4 "$out/$name.c.txt" "$out/$name.s.txt"; fi
}
# shellcheck source=tests/apps/forever_wait.sh
. "$(dirname "$0")/forever_wait.sh"
workers_pair w2 --workers 2 -- --workers 2 --qps 4 --count 2000 --warmup 100 --size 300
check "server --workers 2, client --qps 4 over two-queue memif: every reply intact; each server worker echoed its 2 QPs' 4200" \
  "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && /usr/bin/python3 -c \"
import json
c = json.load(open('$out/w2.c.json')); s = json.load(open('$out/w2.s.json'))
assert c['qps'] == 4 and c['round_trips'] == 8000 and c['bad_replies'] == 0 and c['problem'] == '', c
assert c['remote']['mac_from'] == 'arp', c['remote']
assert s['echoed'] == 8400 and s['errors'] == 0 and s['problem'] == '', s
w = s['workers']; assert [x['worker'] for x in w] == [0, 1] and all(x['qps'] == 2 and x['echoed'] == 4200 for x in w), w
\""
# A lost request or reply with nothing behind it waits for the ACK timer: --qp-timeout 17 (537 ms,
# 4.3 s before the retry count runs out) rides out a busy machine's pauses, where the default 67 ms
# (0.5 s in all) ended a QP in "transport retry counter exceeded" with four pollers, a guest and
# builds on two CPUs (p99.9 RTT 6.4 s in that run). ~80 timeouts over 4 QPs: ~11 s.
# The server's loss acts on what it sends (--impair-direction tx: every worker's replies and ACKs),
# the client's on what it receives (the default): each report says where its drops happened, and
# each JSON counts them by side and under the drop reason injected_loss (issue 34 item 3).
workers_pair wl --workers 2 --loss 0.02 --seed 3 --qp-timeout 17 --impair-direction tx -- --workers 2 --qps 4 --count 500 --warmup 0 --loss 0.02 --seed 4 --qp-timeout 17
check "the same at 2 % lab loss, the server's on its sending, the client's on its receiving: every reply intact, drops counted where they happened" \
  "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && /usr/bin/python3 -c \"
import json; c = json.load(open('$out/wl.c.json')); s = json.load(open('$out/wl.s.json'))
assert c['round_trips'] == 2000 and c['bad_replies'] == 0 and s['echoed'] == 2000, (c, s)
ci, si = c['impairment'], s['impairment']
assert si['direction'] == 'tx' and si['dropped_tx'] > 0 and si['dropped_rx'] == 0 and si['frames_rx'] == 0, si
assert ci['direction'] == 'rx' and ci['dropped_rx'] > 0 and ci['dropped_tx'] == 0 and ci['frames_tx'] == 0, ci
assert s['drop_reasons']['injected_loss'] == si['dropped'] and c['drop_reasons']['injected_loss'] == ci['dropped'], (c, s)
\" && grep -Eq 'impairment \(tx\): dropped [1-9][0-9]*: 0 of 0 received here, [1-9][0-9]* of [1-9][0-9]* sent from here' '$out/wl.s.txt' &&
  grep -Eq 'impairment \(rx\): dropped [1-9][0-9]*: [1-9][0-9]* of [1-9][0-9]* received here, 0 of 0 sent from here' '$out/wl.c.txt'"
# --peer-mac given both ways: no ARP, the client uses the server's MAC as given.
workers_pair wmac --local-mac 02:00:00:00:00:22 --peer-mac 02:00:00:00:00:11 -- \
  --local-mac 02:00:00:00:00:11 --peer-mac 02:00:00:00:00:22 --count 500
check "--peer-mac both ways: the client's JSON names the given MAC, every reply intact" \
  "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && /usr/bin/python3 -c \"
import json; c = json.load(open('$out/wmac.c.json'))
assert c['round_trips'] == 500 and c['bad_replies'] == 0, c
assert c['remote'] == {'mac': '02:00:00:00:00:22', 'mac_from': '--peer-mac'}, c['remote']\""
# RoCEv2 over IPv6 (ULA addresses) with a VLAN tag and DSCP on both sides: the GIDs of the
# exchange are the IPv6 addresses, each side resolves the other by Neighbor Discovery on the VLAN,
# and every RoCEv2 frame of the client's capture is IPv6 between the two, tagged VLAN 300
# priority 6, with DSCP 34.
E6=(--dscp 34 --vlan 300 --pcp 6)
workers_pair ip6 --local-ip fd00:e::2 "${E6[@]}" -- --local-ip fd00:e::1 "${E6[@]}" --count 500 --pcap "$out/ip6.pcapng"
e6_frames() { tshark -r "$out/ip6.pcapng" -Y "$1" 2>/dev/null; }
check "IPv6 fd00:e::1/::2 with --dscp 34 --vlan 300 --pcp 6: every reply intact, MAC by ND, the JSON names both addresses and the marks; every RoCEv2 frame IPv6, tagged, DSCP 34" \
  "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && /usr/bin/python3 -c \"
import json; c = json.load(open('$out/ip6.c.json'))
assert c['round_trips'] == 500 and c['bad_replies'] == 0 and c['problem'] == '', c
assert c['remote']['mac_from'] == 'nd', c['remote']
assert c['addresses'] == {'family': 'IPv6', 'local_ip': 'fd00:e::1', 'peer_ip': 'fd00:e::2', 'vlan': 300, 'pcp': 6, 'dscp': 34}, c['addresses']
\" && [ \"\$(e6_frames 'udp.port == 4791' | wc -l)\" -gt 1000 ] &&
   [ -z \"\$(e6_frames 'udp.port == 4791 && !(ipv6 && !ip && vlan.id == 300 && vlan.priority == 6 && ipv6.tclass.dscp == 34 && ((ipv6.src == fd00:e::1 && ipv6.dst == fd00:e::2) || (ipv6.src == fd00:e::2 && ipv6.dst == fd00:e::1)))')\" ] &&
   [ -n \"\$(e6_frames 'icmpv6.type == 135 && vlan.id == 300')\" ] && [ -n \"\$(e6_frames 'icmpv6.type == 136 && vlan.id == 300')\" ] &&
   [ -z \"\$(e6_frames 'arp')\" ]"
workers_pair ip6mix --local-ip fd00:e::2 -- --count 100
check "an IPv6 server and an IPv4 client: both fail, the server naming the two families" \
  "[ $cli_rc -ne 0 ] && [ $srv_rc -eq 1 ] && grep -q \"the peer's GID 10.0.0.1 is an IPv4 address and ours, fd00:e::2, is IPv6\" '$out/ip6mix.s.txt'"
# Captures that fit (issue 34): the client stops writing at 1 MiB (--pcap-max-mb), the server
# keeps a ring of two 1 MiB files (--pcap-files); 1 KiB messages are cut to the default 346-byte
# snap length. Each file stays under its cap and still verifies (cut frames' headers, whole
# frames' ICRC); each report says what was cut and what was not written or rotated away.
root=$(cd "$(dirname "$0")/../.." && pwd)
workers_pair capcap --pcap "$out/capsrv.pcapng" --pcap-max-mb 1 --pcap-files 2 -- \
  --count 6000 --size 1024 --pcap "$out/capcli.pcapng" --pcap-max-mb 1
srv_files=$(ls "$out"/capsrv_*.pcapng 2>/dev/null | wc -l)
srv_last=$(ls "$out"/capsrv_*.pcapng 2>/dev/null | tail -n 1)
check "--pcap-max-mb 1 (client) and a ring of 2 (server): caps held, files verified, reports and JSON say what was cut" \
  "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && [ \$(stat -c %s '$out/capcli.pcapng') -le 1048576 ] &&
   bash '$root/scripts/verify_capture.sh' '$out/capcli.pcapng' > '$out/capcli.verify.txt' 2>&1 &&
   grep -Eq 'capture: [1-9][0-9]* frames in .*; [1-9][0-9]* cut to 346 bytes.*; [1-9][0-9]* not written' '$out/capcap.c.txt' &&
   /usr/bin/python3 -c \"
import json; c = json.load(open('$out/capcap.c.json'))['capture']
assert c['not_written'] > 0 and c['cut'] > 0 and c['max_mb'] == 1, c\" &&
   [ '$srv_files' -eq 2 ] && [ ! -e '$out/capsrv_00001.pcapng' ] && [ \$(stat -c %s '$srv_last') -le 1048576 ] &&
   bash '$root/scripts/verify_capture.sh' '$srv_last' > '$out/capsrv.verify.txt' 2>&1 &&
   grep -Eq 'ring of 2 files of 1 MiB: [1-9][0-9]* rotated' '$out/capcap.s.txt'"
workers_pair wm --workers 2 -- --qps 2 --count 100
check "a client with 1 queue pair against a server with 2: both fail, the server naming both counts" \
  "[ $cli_rc -ne 0 ] && [ $srv_rc -eq 1 ] && grep -q 'the client has 1 queue pair(s) and this server 2: give both the same --workers' '$out/wm.s.txt'"

# ---- --peer srq_pingpong between two droce-echo processes: each side's QPs take their receives
# from one shared receive queue; --count exchanges over all QPs; the client checks every reply,
# the server every request (both against the first), and each QP carries its share. Each side
# lingers until the other's FIN (apps/droce-echo/end_linger.h), so no last ACK is lost for good:
# every send of both acknowledged, none left to the last-ACK race.
srq_ok() {  # NAME QPS COUNT: prints the check that both exited 0, every exchange intact, on every QP
  echo "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && /usr/bin/python3 -c \"
import json; c = json.load(open('$out/$1.c.json')); s = json.load(open('$out/$1.s.json'))
assert c['qps'] == $2 and c['replies'] == $3 and c['sends_completed'] == $3 and c['bad'] == 0 and c['errors'] == 0, c
assert s['qps'] == $2 and s['requests'] == $3 and s['sends_completed'] == $3 and s['bad'] == 0 and s['errors'] == 0, s
assert c['unacked_tail'] == 0 and s['unacked_tail'] == 0 and c['peer_end'] == 'fin' and s['peer_end'] == 'fin', (c, s)
assert all(n > 0 for n in c['per_qp_received'] + s['per_qp_received']) and sum(s['per_qp_received']) == $3, (c, s)
\" || { tail -n 4 '$out/$1.c.txt' '$out/$1.s.txt'; false; }"
}
SRQ=(--peer srq_pingpong)
workers_pair sq4 "${SRQ[@]}" --count 2000 --size 300 -- "${SRQ[@]}" --qps 4 --count 2000 --size 300
check "srq_pingpong, 4 QPs on one SRQ a side: 2000 exchanges, every reply and request intact" "$(srq_ok sq4 4 2000)"
workers_pair sq16 "${SRQ[@]}" --count 3000 --size 1000 -- "${SRQ[@]}" --count 3000 --size 1000
check "srq_pingpong, its default 16 QPs: 3000 exchanges of 1000 bytes intact" "$(srq_ok sq16 16 3000)"
# The client's loss both ways (1 % of what it receives, 1 % of what it sends), the server's on its receiving.
workers_pair sql "${SRQ[@]}" --count 1000 --loss 0.02 --seed 3 --qp-timeout 17 -- "${SRQ[@]}" --qps 16 --count 1000 --loss 0.01 --impair-direction both --seed 4 --qp-timeout 17  # as wl above
check "srq_pingpong, 16 QPs at 2 % lab loss, the client's both ways: 1000 exchanges intact, the client's drops on both sides" \
  "$(srq_ok sql 16 1000) && /usr/bin/python3 -c \"
import json; c = json.load(open('$out/sql.c.json'))['impairment']; s = json.load(open('$out/sql.s.json'))['impairment']
assert c['direction'] == 'both' and c['dropped_rx'] > 0 and c['dropped_tx'] > 0, c
assert s['direction'] == 'rx' and s['dropped_rx'] > 0 and s['dropped_tx'] == 0, s\""
workers_pair sqr "${SRQ[@]}" --count 1000 --rx-depth 4 -- "${SRQ[@]}" --qps 4 --count 1000 --rx-depth 4
check "srq_pingpong, 4 QPs on an SRQ of 4 receives (RNR when it runs dry, the limit event fires): 1000 exchanges intact" \
  "$(srq_ok sqr 4 1000) && grep -q '\"limit_events\": [1-9]' '$out/sqr.s.json'"
workers_pair sqd "${SRQ[@]}" --count 100 --rx-depth 2 -- "${SRQ[@]}" --qps 4 --count 100
check "srq_pingpong, a server SRQ smaller than the client's QP count: both fail, the server naming both" \
  "[ $cli_rc -ne 0 ] && [ $srv_rc -eq 1 ] && grep -q 'the client has 4 QPs and --rx-depth is 2' '$out/sqd.s.txt'"
# Ctrl-C to a two-worker server mid-run: it stops its workers and ends the run with the client.
wport=$(free_port)
# shellcheck disable=SC2086
"$echo_bin" $two_lcores --no-pci --vdev "net_memif0,role=server,socket=$out/wi.sock" -- \
  --mode server --workers 2 --oob-port "$wport" --timeout 20 > "$out/wi.s.txt" 2>&1 &
spid=$!
( timeout 120 tail --pid=$spid -f /dev/null || { grep -q -F "wi.sock" /proc/$spid/cmdline && kill -KILL $spid; } ) > /dev/null 2>&1 &
for _ in $(seq 150); do grep -q -F "@$out/wi.sock" /proc/net/unix && break; sleep 0.1; done  # memif: abstract socket
timeout 120 "$echo_bin" -l 0 --no-pci --vdev "net_memif0,role=client,socket=$out/wi.sock" -- \
  --mode client --workers 2 --qps 2 --oob-port "$wport" --count 100000000 --timeout 20 > "$out/wi.c.txt" 2>&1 &
cpid=$!
for _ in $(seq 300); do grep -q 'echoing' "$out/wi.s.txt" && grep -q 'round trips to go' "$out/wi.c.txt" && break; sleep 0.1; done
sleep 1
t0=$SECONDS
kill -INT $spid
wait $spid; srv_rc=$?
took=$(( SECONDS - t0 ))
wait $cpid; cli_rc=$?
check "Ctrl-C to a server with --workers 2 mid-run: exits 1 within 15 s saying interrupted (took ${took} s); the client ends, saying why" \
  "[ $srv_rc -eq 1 ] && [ $took -le 15 ] && grep -q 'droce-echo: interrupted' '$out/wi.s.txt' && [ $cli_rc -eq 1 ] && grep -q 'the server ended the run early (interrupted)' '$out/wi.c.txt' || { tail -n 3 '$out/wi.s.txt' '$out/wi.c.txt'; false; }"
# More workers than EAL lcores or the port's queue pairs: one line naming the limit, exit 2.
limit() {  # NAME EXPECTED_TEXT EAL_AND_APP_ARGS...
  local name=$1 text=$2; shift 2
  timeout 60 "$echo_bin" "$@" > "$out/limit.txt" 2>&1
  local rc=$?
  check "$name: exit 2, one line naming the limit" \
    "[ $rc -eq 2 ] && [ \$(grep -c '^droce-echo: ' '$out/limit.txt') -eq 1 ] && grep -q -F -- '$text' '$out/limit.txt' || { cat '$out/limit.txt'; false; }"
}
limit "server --workers 2 on one lcore" "--workers 2: EAL gives 1 lcore" -l 0 --no-pci --vdev net_null0 -- --mode server --workers 2
# shellcheck disable=SC2086
limit "--workers 2 on a one-queue port (net_pcap)" "--workers 2: port net_pcap0 has at most 1 RX/TX queue pair" \
  $two_lcores --no-pci --vdev "net_pcap0,tx_pcap=$out/limit.pcap" -- --mode server --workers 2

"$echo_bin" -- --size 0 > "$out/e1.txt" 2>&1
check "--size 0 refused with a message" "[ $? -eq 2 ] && grep -q -- '--size' '$out/e1.txt'"
"$echo_bin" -- --mode client --timeout 1 --oob-port "$(free_port)" > "$out/e2.txt" 2>&1
check "no server: the client gives up with one line naming the memif socket (no PMD error per retry)" \
  "[ $? -eq 1 ] && [ \$(grep -cv '^EAL: ' '$out/e2.txt') -eq 1 ] && grep -q 'no memif server at /tmp/droce-echo.sock' '$out/e2.txt'"
# Ctrl-C while the server waits in the exchange for a client that connected and says nothing:
# it exits at once saying so, not after its 30 s --timeout. (net_null: a port whose link is up.)
stall_port=$(/usr/bin/python3 -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
# Signalled directly, not through timeout(1), which would pass a second SIGINT on to its process
# group (and a second Ctrl-C exits at once); a watchdog bounds it instead.
"$echo_bin" -l "$last_cpu" --no-pci --no-huge -m 256 --vdev net_null0 -- --mode server --oob-port "$stall_port" --timeout 30 \
  > "$out/int.txt" 2>&1 &
spid=$!
( timeout 60 tail --pid=$spid -f /dev/null || { grep -q -F "$stall_port" /proc/$spid/cmdline && kill -KILL $spid; } ) > /dev/null 2>&1 &
for _ in $(seq 300); do ss -ltn 2>/dev/null | grep -q ":$stall_port " && break; sleep 0.1; done
/usr/bin/python3 -c "
import socket, time
s = socket.create_connection(('127.0.0.1', $stall_port)); time.sleep(30)" &
tcp_pid=$!
for _ in $(seq 100); do ss -tn 2>/dev/null | grep -q "ESTAB.*:$stall_port " && break; sleep 0.1; done
sleep 1
t0=$SECONDS
kill -INT $spid
wait $spid
rc=$?
took=$(( SECONDS - t0 ))
kill $tcp_pid 2>/dev/null; wait $tcp_pid 2>/dev/null
check "Ctrl-C to a server waiting in the exchange: exits 1 within 12 s saying interrupted (took ${took} s)" \
  "[ $rc -eq 1 ] && [ $took -le 12 ] && grep -q 'droce-echo: interrupted' '$out/int.txt' || { tail -n 3 '$out/int.txt'; false; }"
# --timeout 0: the server waits for its client forever (ibv_rc_pingpong's server), where one given
# a bound gives up; Ctrl-C still ends the wait at once. Both start together: once the bounded one has
# ended (1 s after it listened) and the other has listened for 3 s, the other must still wait.
bound_port=$(free_port)
forever_port=$(free_port)
"$echo_bin" -l "$last_cpu" --no-pci --no-huge -m 256 --vdev net_null0 -- --mode server --oob-port "$bound_port" --timeout 1 \
  > "$out/bound.txt" 2>&1 &
bpid=$!
"$echo_bin" -l "$last_cpu" --no-pci --no-huge -m 256 --vdev net_null0 -- --mode server --oob-port "$forever_port" --timeout 0 \
  > "$out/forever.txt" 2>&1 &
fpid=$!
forever_wait_check droce-echo "$bpid" "$out/bound.txt" "$fpid" "$out/forever.txt" "ss -ltn 2>/dev/null | grep -q ':$forever_port '"
# A client's Ctrl-C mid-run: the client says interrupted, the server that the client ended the run
# early; both exit 1.
cport=$(free_port)
"$echo_bin" -l "$last_cpu" --no-pci --vdev "net_memif0,role=server,socket=$out/ci.sock" -- \
  --mode server --oob-port "$cport" --timeout 20 > "$out/ci.s.txt" 2>&1 &
spid=$!
( timeout 120 tail --pid=$spid -f /dev/null || { grep -q -F "ci.sock" /proc/$spid/cmdline && kill -KILL $spid; } ) > /dev/null 2>&1 &
for _ in $(seq 150); do grep -q -F "@$out/ci.sock" /proc/net/unix && break; sleep 0.1; done  # memif: abstract socket
"$echo_bin" -l 0 --no-pci --vdev "net_memif0,role=client,socket=$out/ci.sock" -- \
  --mode client --oob-port "$cport" --count 100000000 --timeout 20 > "$out/ci.c.txt" 2>&1 &
cpid=$!
( timeout 120 tail --pid=$cpid -f /dev/null || { grep -q -F "ci.sock" /proc/$cpid/cmdline && kill -KILL $cpid; } ) > /dev/null 2>&1 &
for _ in $(seq 300); do grep -q 'echoing' "$out/ci.s.txt" && grep -q 'round trips to go' "$out/ci.c.txt" && break; sleep 0.1; done
t0=$SECONDS
kill -INT $cpid
wait $cpid; cli_rc=$?
wait $spid; srv_rc=$?
took=$(( SECONDS - t0 ))
check "a client's Ctrl-C mid-run: both exit 1 within 15 s (took ${took} s), the client saying interrupted, the server that the client ended the run early" \
  "[ $cli_rc -eq 1 ] && [ $srv_rc -eq 1 ] && [ $took -le 15 ] && grep -q 'droce-echo: interrupted' '$out/ci.c.txt' &&
   grep -q 'the client ended the run early (interrupted)' '$out/ci.s.txt' || { tail -n 3 '$out/ci.s.txt' '$out/ci.c.txt'; false; }"
[ $fail -eq 0 ] && echo "droce-echo checks passed"
exit $fail
