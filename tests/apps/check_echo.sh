#!/usr/bin/env bash
# droce-echo, the embedding example: both thread modes in one process, and server/client over
# net_memif; every reply checked by the client (exit 0 only if all came back intact).
set -uo pipefail
echo_bin=$1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail=0
check() { if eval "$2"; then echo "ok: $1"; else echo "FAILED: $1"; fail=1; fi; }

timeout 120 "$echo_bin" -- --count 5000 --size 100 --json "$out/w.json" > "$out/w.txt" 2>&1
check "loopback, client on the worker: every reply intact" "[ $? -eq 0 ]"
timeout 120 "$echo_bin" -- --count 5000 --size 9000 --thread app --json "$out/a.json" > "$out/a.txt" 2>&1
check "loopback, client on an application thread through QpChannel (multi-packet messages)" "[ $? -eq 0 ]"
check "JSON has RTT percentiles" "/usr/bin/python3 -c \"import json; d=json.load(open('$out/w.json')); assert d['round_trips'] == 5000 and all(k in d['rtt_ns'] for k in ['p50','p90','p99','p999','max'])\""

last_cpu=$(( $(nproc) - 1 ))
timeout 120 "$echo_bin" -l "$last_cpu" --no-pci --vdev "net_memif0,role=server,socket=$out/e.sock" -- \
  --mode server --oob-port 18631 --timeout 3 > "$out/s.txt" 2>&1 &
spid=$!
sleep 0.5
timeout 120 "$echo_bin" -l 0 --no-pci --vdev "net_memif0,role=client,socket=$out/e.sock" -- \
  --mode client --oob-port 18631 --count 5000 > "$out/c.txt" 2>&1
crc=$?
wait $spid
check "server and client over net_memif: both exit 0" "[ $crc -eq 0 ] && [ $? -eq 0 ]"

# The default pair (no EAL options: net_memif, one CPU each) with 64 KiB messages at PMTU 4096
# both ways: frames of 4 KiB and more in the same rings as one-buffer ACKs (memif chaining, see
# apps/common/default_port.cc).
timeout 120 "$echo_bin" -- --mode server --oob-port 18633 --size 65536 --timeout 10 > "$out/s64.txt" 2>&1 &
spid=$!
sleep 0.5
timeout 120 "$echo_bin" -- --mode client --oob-port 18633 --size 65536 --count 400 --warmup 10 --timeout 10 > "$out/c64.txt" 2>&1
crc=$?
wait $spid
check "default memif pair, 64 KiB messages at PMTU 4096 both ways: every reply intact" "[ $crc -eq 0 ] && [ $? -eq 0 ]"

"$echo_bin" -- --size 0 > "$out/e1.txt" 2>&1
check "--size 0 refused with a message" "[ $? -eq 2 ] && grep -q -- '--size' '$out/e1.txt'"
"$echo_bin" -- --mode client --timeout 1 --oob-port 18632 > "$out/e2.txt" 2>&1
check "no server: the client gives up with a message" "[ $? -eq 1 ] && [ -s '$out/e2.txt' ]"
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
check "Ctrl-C to a server waiting in the exchange: exits 1 within 5 s saying interrupted (took ${took} s)" \
  "[ $rc -eq 1 ] && [ $took -le 5 ] && grep -q 'droce-echo: interrupted' '$out/int.txt' || { tail -n 3 '$out/int.txt'; false; }"
[ $fail -eq 0 ] && echo "droce-echo checks passed"
exit $fail
