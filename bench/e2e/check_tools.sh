#!/usr/bin/env bash
# Smoke check of the end-to-end baselines: the kernel UDP tools over 127.0.0.1 and the bare-PMD
# ping-pong over a net_ring pair, with exact counts; bad options refused. A few seconds in all.
set -uo pipefail
pingpong=$1 blaster=$2 udp_pingpong=$3
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail=0
check() { if eval "$2"; then echo "ok: $1"; else echo "FAILED: $1"; fail=1; fi; }
json() { /usr/bin/python3 -c "import json, sys; d = json.load(open('$1')); sys.exit(0 if ($2) else 1)"; }
port=$(( 20000 + $$ % 20000 ))

timeout 30 "$udp_pingpong" --role server --port "$port" --timeout 5 > "$out/ps.txt" 2>&1 &
spid=$!
sleep 0.2
timeout 30 "$udp_pingpong" --role client --port "$port" --count 300 --warmup 10 --json "$out/p.json" > "$out/p.txt" 2>&1
crc=$?
wait $spid
src=$?
check "udp_pingpong blocking: 300 round trips, server echoed all 310" \
  "[ $crc -eq 0 ] && [ $src -eq 0 ] && json '$out/p.json' \"d['round_trips'] == 300 and d['lost_rounds'] == 0 and d['rtt_ns']['p50'] > 0\" && grep -q 'echoed 310 ' '$out/ps.txt'"

timeout 30 "$udp_pingpong" --role server --port "$port" --timeout 5 --busy-poll > /dev/null 2>&1 &
spid=$!
sleep 0.2
timeout 30 "$udp_pingpong" --role client --port "$port" --count 300 --busy-poll --size 4000 --json "$out/b.json" > /dev/null 2>&1
crc=$?
wait $spid
check "udp_pingpong busy-poll, 4000-byte datagrams: 300 round trips" \
  "[ $crc -eq 0 ] && json '$out/b.json' \"d['round_trips'] == 300 and d['mode'] == 'busy-poll'\""

# 100 small datagrams fit the receive buffer: loopback delivers every one.
timeout 30 "$blaster" --role recv --port "$port" --count 100 --timeout 5 --json "$out/r.json" > /dev/null 2>&1 &
rpid=$!
sleep 0.2
timeout 30 "$blaster" --role send --port "$port" --count 100 --batch 10 > "$out/s.txt" 2>&1
wait $rpid
check "udp_blaster: 100 sent, 100 received" \
  "grep -q 'send: 100 datagrams' '$out/s.txt' && json '$out/r.json' \"d['datagrams'] == 100 and d['bytes'] == 6400\""

timeout 5 "$udp_pingpong" --role client --port "$port" --count 5 --timeout 0.2 > "$out/n.txt" 2>&1
check "udp_pingpong with no server: gives up, non-zero exit" "[ $? -eq 1 ] && grep -q 'lost rounds' '$out/n.txt'"
"$blaster" --role send --size 70000 > "$out/e.txt" 2>&1
check "udp_blaster --size over the UDP limit refused" "[ $? -eq 2 ] && grep -q -- '--size' '$out/e.txt'"

eal=(-l 0 --no-huge -m 256 --no-pci --no-telemetry --no-shconf)
timeout 60 "$pingpong" "${eal[@]}" -- --mode ring --count 2000 --json "$out/r1.json" > "$out/r1.txt" 2>&1
check "pmd_pingpong ring, 64 B: 2000 round trips, no stray frames" \
  "[ $? -eq 0 ] && json '$out/r1.json' \"d['round_trips'] == 2000 and d['stray_frames'] == 0 and d['frames_per_message'] == 1\""
timeout 60 "$pingpong" "${eal[@]}" -- --mode ring --size 65536 --count 200 --json "$out/r2.json" > /dev/null 2>&1
check "pmd_pingpong ring, 64 KiB: 16 frames a message, 200 round trips" \
  "[ $? -eq 0 ] && json '$out/r2.json' \"d['round_trips'] == 200 and d['frames_per_message'] == 16\""
"$pingpong" -- --frame-payload 10 > "$out/e2.txt" 2>&1
check "pmd_pingpong --frame-payload 10 refused" "[ $? -eq 2 ] && grep -q -- '--frame-payload' '$out/e2.txt'"
[ $fail -eq 0 ] && echo "e2e tool checks passed"
exit $fail
