#!/usr/bin/env bash
# droce-rping, client against server over a net_memif pair: connected by RDMA-CM over QP1 (REQ,
# REP, RTU; DREQ, DREP at the end), the client's MAC learnt by the server from the REQ and the
# server's by the client through ARP; every ping checked on both sides (the server checks what it
# READs, the client what the server WRITEs back). Then a client for a port nobody listens on: a
# REJ, a one-line error naming it, exit non-zero, long before --timeout. Then loss recovery: an SR
# client against a default server runs go-back-N; and one server (--clients 2 --recovery sr)
# serving a selective-repeat and a go-back-N client at once through droce-switch with 1 % loss.
# Then several workers (issue 41): a server with --clients 4 on 2 and on 4 workers against a client
# making 4 connections one after another on as many queue pairs, 1 % loss at both ends.
set -uo pipefail
rping=$1
sw=${2:-}
out=$(mktemp -d)
tag=$$
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$out" /tmp/droce-rping-$tag-*.sock; }
trap cleanup EXIT
fail=0
check() { if eval "$2"; then echo "ok: $1"; else echo "FAILED: $1"; fail=1; fi; }
last_cpu=$(( $(nproc) - 1 ))
py=/usr/bin/python3

# pair NAME PORT SERVER_ARGS -- CLIENT_ARGS: sets srv_rc, cli_rc, cli_s (the client's seconds).
# SRV_L / CLI_L: the EAL lcore options of each side (default: the last CPU and CPU 0).
pair() {
  local name=$1 sock="$out/$1.sock" sargs=() cargs=() side=s t0; shift
  for a in "$@"; do
    if [ "$a" = -- ] && [ $side = s ]; then side=c; continue; fi
    if [ $side = s ]; then sargs+=("$a"); else cargs+=("$a"); fi
  done
  # shellcheck disable=SC2086  # SRV_L / CLI_L: EAL lcore options, word-split on purpose
  timeout 120 "$rping" ${SRV_L:--l $last_cpu} --no-pci --vdev "net_memif0,role=server,socket=$sock" -- \
    -s --json "$out/$name.s.json" "${sargs[@]}" > "$out/$name.s.txt" 2>&1 &
  local spid=$!
  sleep 0.5
  t0=$(date +%s)
  if [ -n "${CLI_JSON_STDOUT:-}" ]; then  # --json -: the JSON alone on stdout (NAME.c.json), the rest on stderr
    timeout 120 "$rping" -l 0 --no-pci --vdev "net_memif0,role=client,socket=$sock" -- \
      -c -a "${server_ip:-10.0.0.2}" --json - "${cargs[@]}" > "$out/$name.c.json" 2> "$out/$name.c.txt"
  else
    # shellcheck disable=SC2086
    timeout 120 "$rping" ${CLI_L:--l 0} --no-pci --vdev "net_memif0,role=client,socket=$sock" -- \
      -c -a "${server_ip:-10.0.0.2}" --json "$out/$name.c.json" "${cargs[@]}" > "$out/$name.c.txt" 2>&1
  fi
  cli_rc=$?
  cli_s=$(( $(date +%s) - t0 ))
  wait $spid
  srv_rc=$?
  for f in s c; do echo "--- $name ($f):"; sed 's/^/  /' "$out/$name.$f.txt"; done
}
# json NAME SIDE 'python assertion on d'
json() { $py -c "import json, sys; d = json.load(open(sys.argv[1])); assert $3, d" "$out/$1.$2.json"; }

# The client with --json -: the JSON read below came on its stdout alone.
CLI_JSON_STDOUT=1 pair small -p 7174 --timeout 20 -- -p 7174 -C 20 -V --timeout 20
check "20 pings of 64 bytes: both exit 0" "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ]"
check "client (--json - on stdout): 20 pings verified, the server's MAC by ARP" \
  "json small c \"d['ok'] and d['pings'] == 20 and d['verified'] == 20 and d['peer']['mac_from'] == 'arp'\""
check "server: 20 pings verified, the client's MAC from its REQ, the client disconnected" \
  "json small s \"d['ok'] and d['verified'] == 20 and d['peer']['mac_from'] == 'req' and d['connection']['disconnected_by_peer']\""
# QP1's counters (apps::cm_counters_json): MADs both ways, no refusal by any rule.
cm_ok="d['cm']['cm_mads_sent'] >= 2 and d['cm']['cm_mads_received'] >= 2 and \
sum(v for k, v in d['cm'].items() if k.startswith(('cm_mad_', 'cm_ud_')) and k != 'cm_mad_tx_failures') == 0"
check "both: QP1 MADs sent and received, none refused" "json small c \"$cm_ok\" && json small s \"$cm_ok\""

# RDMA-CM over IPv6: 16-byte addresses in the REQ's rdma_cm header, IPv6 GIDs in its path; the
# client finds the server's MAC by Neighbor Discovery, the server the client's from its REQ.
server_ip=fd00::2 pair v6 -p 7176 --local-ip fd00::2 --timeout 20 -- -p 7176 --local-ip fd00::1 -C 10 -S 3000 --timeout 20
check "IPv6: 10 pings of 3000 bytes, both exit 0" "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ]"
check "IPv6 client: every ping verified with fd00::2, its MAC by ND" \
  "json v6 c \"d['ok'] and d['verified'] == 10 and d['peer']['mac_from'] == 'nd' and d['peer']['ip'] == 'fd00::2' and d['local']['ip'] == 'fd00::1'\""
check "IPv6 server: every ping verified with fd00::1, its MAC from the REQ" \
  "json v6 s \"d['ok'] and d['verified'] == 10 and d['peer']['mac_from'] == 'req' and d['peer']['ip'] == 'fd00::1'\""
check "IPv6: the server's listening line names fd00::2" "grep -q 'listening on fd00::2 port 7176' '$out/v6.s.txt'"

# Pings of several packets each way (PMTU 1024): the READ's responses and the WRITE span 5 packets.
# 5 % lab loss at each end: the client's on what it sends (--impair-direction tx: its WRITEs, its
# SENDs, its ACKs of the READ), the server's on what it receives (the default); each counts its
# drops on its own side, under the drop reason injected_loss too (issue 34 item 3).
pair large -p 7300 -C 20 --loss 0.05 --seed 2 --timeout 20 -- -p 7300 -C 20 -S 5000 --loss 0.05 --seed 3 --impair-direction tx --timeout 20
check "20 pings of 5000 bytes at 5 % lab loss, the server expecting -C 20: both exit 0" "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ]"
check "server: 5000-byte pings, 20 verified" "json large s \"d['size'] == 5000 and d['verified'] == 20\""
check "the client's drops on its sending, the server's on its receiving, each under injected_loss; the client's line says where" \
  "json large c \"d['impairment']['direction'] == 'tx' and d['impairment']['dropped_tx'] > 0 and d['impairment']['dropped_rx'] == 0 and d['drop_reasons']['injected_loss'] == d['impairment']['dropped']\" &&
   json large s \"d['impairment']['direction'] == 'rx' and d['impairment']['dropped_rx'] > 0 and d['impairment']['dropped_tx'] == 0 and d['drop_reasons']['injected_loss'] == d['impairment']['dropped']\" &&
   grep -Eq 'droce-rping: client: impairment \(tx\): dropped [1-9][0-9]*: 0 of 0 received here, [1-9][0-9]* of [1-9][0-9]* sent from here' '$out/large.c.txt'"

# Nobody listens on 7175: the server's CM answers the REQ with REJ (invalid service ID).
pair rejected -p 7174 --timeout 4 -- -p 7175 --timeout 30
check "client to a port nobody listens on: exit non-zero" "[ $cli_rc -ne 0 ]"
check "... with one line naming the REJ" "grep -q 'rejected the connection: REJ reason 8' '$out/rejected.c.txt'"
check "... quickly (well before --timeout 30)" "[ $cli_s -lt 15 ]"
check "server: one REJ sent, no connection" "json rejected s \"d['cm']['cm_rejects_sent'] >= 1 and not d['connection']['established']\""

# An SR client against a server without --recovery sr: its REP carries no acceptance, so the
# client's QP leaves INIT as go-back-N (as with a Linux rping server); both ends say gbn.
pair srgbn -p 7176 -C 5 --timeout 20 -- -p 7176 -C 5 -S 3000 --recovery sr --timeout 20
check "SR client, default server: both exit 0" "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ]"
check "... both run go-back-N" "json srgbn c \"d['recovery'] == 'gbn' and d['connections'][0]['recovery'] == 'gbn'\" && \
  json srgbn s \"d['recovery'] == 'gbn' and d['connections'][0]['recovery'] == 'gbn' and d['connections'][0]['pings_verified'] == 5\""
# Both asking: selective repeat at both ends.
pair srsr -p 7177 -C 5 --recovery sr --timeout 20 -- -p 7177 -C 5 -S 3000 --recovery sr --timeout 20
check "SR client, SR server: both exit 0 and run selective repeat" "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && \
  json srsr c \"d['recovery'] == 'sr'\" && json srsr s \"d['recovery'] == 'sr' and d['connections'][0]['pings_verified'] == 5\""

# One server, two clients at once through droce-switch (1 % loss on every ingress port): the SR
# client (10.0.0.1) gets selective repeat, the default one (10.0.0.3) go-back-N, on their own QPs.
if [ -n "$sw" ]; then
  s0=/tmp/droce-rping-$tag-0.sock s1=/tmp/droce-rping-$tag-1.sock s2=/tmp/droce-rping-$tag-2.sock
  # No `timeout` wrapper on the switch: a second SIGINT would end it before its report; --duration bounds it.
  "$sw" --no-pci -l "$last_cpu" --vdev "net_memif0,role=server,socket=$s0" --vdev "net_memif1,role=server,socket=$s1" \
    --vdev "net_memif2,role=server,socket=$s2" -- --route 10.0.0.1/32=0 --route 10.0.0.3/32=1 --route 10.0.0.2/32=2 \
    --loss 0.01 --seed 1 --duration 150 --quiet > "$out/sw.txt" 2>&1 &
  swpid=$!
  pids+=($swpid)
  sleep 1
  timeout 150 "$rping" -l "$last_cpu" --no-pci --vdev "net_memif0,role=client,socket=$s2" -- -s --clients 2 \
    --recovery sr -C 20 --timeout 30 --json "$out/multi.s.json" > "$out/multi.s.txt" 2>&1 &
  spid=$!
  pids+=($spid)
  for k in $(seq 1 100); do grep -q 'server listening' "$out/multi.s.txt" && break; sleep 0.1; done
  timeout 150 "$rping" -l 0 --no-pci --vdev "net_memif0,role=client,socket=$s0" -- -c -a 10.0.0.2 --local-ip 10.0.0.1 \
    --recovery sr -C 20 -S 4000 --timeout 30 --json "$out/multi.sr.json" > "$out/multi.sr.txt" 2>&1 &
  c1=$!
  pids+=($c1)
  timeout 150 "$rping" -l 0 --no-pci --vdev "net_memif0,role=client,socket=$s1" -- -c -a 10.0.0.2 --local-ip 10.0.0.3 \
    -C 20 -S 4000 --timeout 30 --json "$out/multi.gbn.json" > "$out/multi.gbn.txt" 2>&1
  c2_rc=$?
  wait $c1
  c1_rc=$?
  wait $spid
  srv_rc=$?
  kill -INT $swpid 2>/dev/null
  wait $swpid 2>/dev/null
  for f in s sr gbn; do echo "--- multi ($f):"; sed 's/^/  /' "$out/multi.$f.txt"; done
  # The switch's own lines (its start, a port's trouble) only when the run failed: what the
  # clients and the server printed does not say whether the switch forwarded.
  check "two clients at once through the lossy switch: both clients and the server exit 0" \
    "[ $c1_rc -eq 0 ] && [ $c2_rc -eq 0 ] && [ $srv_rc -eq 0 ] || { echo '--- multi (droce-switch):'; sed 's/^/  /' '$out/sw.txt'; false; }"
  check "clients: the SR one ran selective repeat, the default one go-back-N" \
    "json multi sr \"d['recovery'] == 'sr' and d['verified'] == 20\" && json multi gbn \"d['recovery'] == 'gbn' and d['verified'] == 20\""
  check "server: 2 connections, sr with 10.0.0.1 and gbn with 10.0.0.3, every ping verified" \
    "json multi s \"len(d['connections']) == 2 and sorted((c['peer_ip'], c['recovery'], c['pings_verified']) for c in d['connections']) == [('10.0.0.1', 'sr', 20), ('10.0.0.3', 'gbn', 20)] and d['verified'] == 40 and d['recovery'] == 'mixed'\""
else
  echo "skipped: the two-client run through droce-switch (no droce-switch given)"
fi

# Several workers (issue 41): client i's QP on the server's worker i % N, accepted by the port
# owner's CM (worker 0, the main lcore) and served by its worker's lcore; the CM's RTR/RTS at the
# REP and ERROR at the DREQ reach worker 1..N-1's QPs through their control rings. The client makes
# its 4 connections one after another (connection i on its worker i % N, all polled by its one
# lcore), each 10 pings of 3000 bytes (3 packets at PMTU 1024); 1 % lab loss at both ends, the CM's
# MADs included. Every ping checked on both sides; every connection reported on its own.
# json_workers NAME SIDE N: N connections, each 10 pings verified, connection i on worker i % W,
# each worker's commands run and none failed or refused, workers 1.. ran some.
json_workers() {
  json "$1" "$2" "d['ok'] and d['verified'] == 10 * $3 and len(d['connections']) == $3 and \
all(c['pings_verified'] == 10 and c['worker'] == i % len(d['workers']) for i, c in enumerate(d['connections'])) and \
all(w['qp_commands_failed'] == 0 and w['qp_commands_refused'] == 0 for w in d['workers']) and \
all(w['connections'] == $3 // len(d['workers']) for w in d['workers'])"
}
if [ "$(nproc)" -ge 2 ]; then two_lcores="-l 0-1"; else two_lcores="--lcores=0@0,1@0"; fi
SRV_L=$two_lcores pair w2 -p 7180 --clients 4 --workers 2 -C 10 --loss 0.01 --seed 5 --timeout 30 -- \
  -p 7180 --connections 4 --workers 2 -C 10 -S 3000 -V --loss 0.01 --seed 6 --timeout 30
check "--clients 4 --workers 2 against --connections 4 --workers 2, 1 % loss: both exit 0" "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ]"
check "... server: 4 connections on workers 0, 1, 0, 1, 10 pings verified each; worker 1 ran the CM's commands for its QPs" \
  "json_workers w2 s 4 && json w2 s \"d['workers'][1]['qp_commands_run'] >= 2\""
check "... client: 4 connections one after another, 10 pings verified each, its line says so" \
  "json_workers w2 c 4 && grep -q 'client: 40 pings verified over 4 connections' '$out/w2.c.txt'"
check "... the server's line, and one line per connection" \
  "grep -q 'server: 40 pings verified with 4 clients' '$out/w2.s.txt' && [ \$(grep -c 'server: connection [1-4]: 10.0.0.1, go-back-N, 10 pings verified' '$out/w2.s.txt') -eq 4 ]"
# Four workers a side (four lcores over the CPUs there are: slow under load, judged on results).
SRV_L="--lcores 0@0,1@$last_cpu,2@0,3@$last_cpu" pair w4 -p 7181 --clients 4 --workers 4 -C 10 --loss 0.01 --seed 7 --timeout 30 -- \
  -p 7181 --connections 4 --workers 4 -C 10 -S 3000 --loss 0.01 --seed 8 --timeout 30
check "--clients 4 --workers 4, 1 % loss: both exit 0, each worker one connection, 10 pings verified each" \
  "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && json_workers w4 s 4 && json_workers w4 c 4 && \
   json w4 s \"all(w['qp_commands_run'] >= 2 for w in d['workers'][1:])\""

# Usage errors: one line, exit 2.
"$rping" -- -s -c > "$out/u1.txt" 2>&1; u1=$?
"$rping" -- -c > "$out/u2.txt" 2>&1; u2=$?
"$rping" -- -c -a 10.0.0.2 -S 10 > "$out/u3.txt" 2>&1; u3=$?
"$rping" -- -c -a 10.0.0.2 --clients 2 > "$out/u4.txt" 2>&1; u4=$?
"$rping" -- -s --clients 65 > "$out/u5.txt" 2>&1; u5=$?
"$rping" -- -s --recovery xyz > "$out/u6.txt" 2>&1; u6=$?
"$rping" -- -c -a fd00::2 > "$out/u7.txt" 2>&1; u7=$?                    # IPv6 without --local-ip
"$rping" -- -c -a fd00::2 --local-ip 10.0.0.1 > "$out/u8.txt" 2>&1; u8=$?  # two families
"$rping" -- -c -a ff02::1 --local-ip fd00::1 > "$out/u9.txt" 2>&1; u9=$?   # multicast: no host owns it
"$rping" -- -s --connections 2 > "$out/u10.txt" 2>&1; u10=$?               # the client's option
check "usage errors exit 2 with one line" "[ $u1 -eq 2 ] && [ $u2 -eq 2 ] && [ $u3 -eq 2 ] && [ $u4 -eq 2 ] && [ $u5 -eq 2 ] && \
  [ $u6 -eq 2 ] && [ $u7 -eq 2 ] && [ $u8 -eq 2 ] && [ $u9 -eq 2 ] && [ $u10 -eq 2 ] && [ \$(cat '$out'/u*.txt | wc -l) -eq 10 ] &&
  grep -q 'is IPv6: give --local-ip' '$out/u7.txt' && grep -q 'give both of one family' '$out/u8.txt'"
# Two server workers on one lcore: a usage error naming the limit (EAL's own lines may precede it).
"$rping" -l 0 --no-pci --no-huge -m 256 --vdev "net_memif0,role=server,socket=$out/u11.sock" -- -s --workers 2 \
  > "$out/w11.txt" 2>&1; u11=$?
check "--workers 2 on one lcore: exit 2, the limit named" "[ $u11 -eq 2 ] && grep -q 'droce-rping: .*lcore' '$out/w11.txt'"
exit $fail
