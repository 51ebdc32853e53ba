#!/usr/bin/env bash
# droce-rping, client against server over a net_memif pair: connected by RDMA-CM over QP1 (REQ,
# REP, RTU; DREQ, DREP at the end), the client's MAC learnt by the server from the REQ and the
# server's by the client through ARP; every ping checked on both sides (the server checks what it
# READs, the client what the server WRITEs back). Then a client for a port nobody listens on: a
# REJ, a one-line error naming it, exit non-zero, long before --timeout.
set -uo pipefail
rping=$1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail=0
check() { if eval "$2"; then echo "ok: $1"; else echo "FAILED: $1"; fail=1; fi; }
last_cpu=$(( $(nproc) - 1 ))
py=/usr/bin/python3

# pair NAME PORT SERVER_ARGS -- CLIENT_ARGS: sets srv_rc, cli_rc, cli_s (the client's seconds).
pair() {
  local name=$1 sock="$out/$1.sock" sargs=() cargs=() side=s t0; shift
  for a in "$@"; do
    if [ "$a" = -- ] && [ $side = s ]; then side=c; continue; fi
    if [ $side = s ]; then sargs+=("$a"); else cargs+=("$a"); fi
  done
  timeout 120 "$rping" -l "$last_cpu" --no-pci --vdev "net_memif0,role=server,socket=$sock" -- \
    -s --json "$out/$name.s.json" "${sargs[@]}" > "$out/$name.s.txt" 2>&1 &
  local spid=$!
  sleep 0.5
  t0=$(date +%s)
  timeout 120 "$rping" -l 0 --no-pci --vdev "net_memif0,role=client,socket=$sock" -- \
    -c -a 10.0.0.2 --json "$out/$name.c.json" "${cargs[@]}" > "$out/$name.c.txt" 2>&1
  cli_rc=$?
  cli_s=$(( $(date +%s) - t0 ))
  wait $spid
  srv_rc=$?
  for f in s c; do echo "--- $name ($f):"; sed 's/^/  /' "$out/$name.$f.txt"; done
}
# json NAME SIDE 'python assertion on d'
json() { $py -c "import json, sys; d = json.load(open(sys.argv[1])); assert $3, d" "$out/$1.$2.json"; }

pair small -p 7174 --timeout 20 -- -p 7174 -C 20 -V --timeout 20
check "20 pings of 64 bytes: both exit 0" "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ]"
check "client: 20 pings verified, the server's MAC by ARP" \
  "json small c \"d['ok'] and d['pings'] == 20 and d['verified'] == 20 and d['peer']['mac_from'] == 'arp'\""
check "server: 20 pings verified, the client's MAC from its REQ, the client disconnected" \
  "json small s \"d['ok'] and d['verified'] == 20 and d['peer']['mac_from'] == 'req' and d['connection']['disconnected_by_peer']\""
# QP1's counters (apps::cm_counters_json): MADs both ways, no refusal by any rule.
cm_ok="d['cm']['cm_mads_sent'] >= 2 and d['cm']['cm_mads_received'] >= 2 and \
sum(v for k, v in d['cm'].items() if k.startswith(('cm_mad_', 'cm_ud_')) and k != 'cm_mad_tx_failures') == 0"
check "both: QP1 MADs sent and received, none refused" "json small c \"$cm_ok\" && json small s \"$cm_ok\""

# Pings of several packets each way (PMTU 1024): the READ's responses and the WRITE span 5 packets.
pair large -p 7300 -C 5 --timeout 20 -- -p 7300 -C 5 -S 5000 --timeout 20
check "5 pings of 5000 bytes, the server expecting -C 5: both exit 0" "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ]"
check "server: 5000-byte pings, 5 verified" "json large s \"d['size'] == 5000 and d['verified'] == 5\""

# Nobody listens on 7175: the server's CM answers the REQ with REJ (invalid service ID).
pair rejected -p 7174 --timeout 4 -- -p 7175 --timeout 30
check "client to a port nobody listens on: exit non-zero" "[ $cli_rc -ne 0 ]"
check "... with one line naming the REJ" "grep -q 'rejected the connection: REJ reason 8' '$out/rejected.c.txt'"
check "... quickly (well before --timeout 30)" "[ $cli_s -lt 15 ]"
check "server: one REJ sent, no connection" "json rejected s \"d['cm']['cm_rejects_sent'] >= 1 and not d['connection']['established']\""

# Usage errors: one line, exit 2.
"$rping" -- -s -c > "$out/u1.txt" 2>&1; u1=$?
"$rping" -- -c > "$out/u2.txt" 2>&1; u2=$?
"$rping" -- -c -a 10.0.0.2 -S 10 > "$out/u3.txt" 2>&1; u3=$?
check "usage errors exit 2 with one line" "[ $u1 -eq 2 ] && [ $u2 -eq 2 ] && [ $u3 -eq 2 ] && [ \$(cat '$out'/u?.txt | wc -l) -eq 3 ]"
exit $fail
