#!/usr/bin/env bash
# droce-gen --mode server --clients N (issue 40 item 4): one server, three client processes, each
# on its own memif port of droce-switch, which routes them to the server's port (N-to-1 incast from
# real processes). Every message verified, per client and in total; one client killed (SIGKILL)
# mid-run while the other two finish clean and the server reports them; a client that connects and
# never speaks fails alone, within the server's bound. Arguments: droce-gen, droce-switch.
# shellcheck source=tests/apps/gen_check_lib.sh
. "$(dirname "$0")/gen_check_lib.sh" "$@"
sw=$2

# A TCP port nobody uses now (the test's own, passed to both ends).
free_port() { /usr/bin/python3 -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])"; }
pids=()
# Every process we started, by its pid (never by name: other runs use the same binaries).
stop_all() { for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done; rm -rf "$out"; }
trap stop_all EXIT
# Without hugepages: other runs on a shared machine may hold them (memif's rings are memfds).
eal_of() {  # LCORE SOCKET
  echo "-l $1 --no-pci --no-huge -m 512 --vdev net_memif0,role=client,socket=$2"
}
# The switch: port 0 to the server (10.0.0.2), ports 1..3 to the clients (10.0.0.1, .3, .4).
start_switch() {  # NAME
  local name=$1
  "$sw" -l "$last_cpu" --no-pci --no-huge -m 1024 \
    --vdev "net_memif0,role=server,socket=$out/$name-0.sock" --vdev "net_memif1,role=server,socket=$out/$name-1.sock" \
    --vdev "net_memif2,role=server,socket=$out/$name-2.sock" --vdev "net_memif3,role=server,socket=$out/$name-3.sock" -- \
    --route 10.0.0.2/32=0 --route 10.0.0.1/32=1 --route 10.0.0.3/32=2 --route 10.0.0.4/32=3 --duration 60 --quiet \
    > "$out/$name.sw.txt" 2>&1 &
  swpid=$!
  pids+=("$swpid")
}
ips=(10.0.0.1 10.0.0.3 10.0.0.4)
# A lossless path, but a busy 2-core host runs five pollers here: a 268 ms ACK timeout (x 8 tries)
# rides out a process off the CPU (as check_gen_pairs.sh's lossless pairs).
common=(--op write --size 4096 --qps 2 --qp-timeout 16)

# clients_json FILE N_PASS N_FAIL [MESSAGES]: the server's clients[] has N_PASS clean clients (each
# MESSAGES messages when given) and N_FAIL failed ones, and the clients' figures add up to the totals.
clients_json() {
  /usr/bin/python3 - "$@" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); n_pass, n_fail = int(sys.argv[2]), int(sys.argv[3])
want = int(sys.argv[4]) if len(sys.argv) > 4 else None
c = d['clients']
assert len(c) == n_pass + n_fail == d['config']['clients'], c
assert d['config']['qps'] == 2 * len(c) and d['config']['qps_per_client'] == 2, d['config']
assert sorted(x['first_qp'] for x in c) == [2 * k for k in range(len(c))], c
# One QPN space for every client's QPs: none shared.
qpns = [x['qpn'] for x in d['first_psns']]
assert len(qpns) == len(set(qpns)) == d['config']['qps'], qpns
good = [x for x in c if x['verdict'] == 'pass']
bad = [x for x in c if x['verdict'] == 'fail']
assert len(good) == n_pass and len(bad) == n_fail, c
for x in good:
    assert x['problem'] == '' and x['messages'] > 0 and x['goodput_gbps'] > 0, x
    assert x['lost'] == x['duplicated'] == x['out_of_order'] == x['corrupted'] == x['errors'] == 0, x
    assert want is None or x['messages'] == want, (want, x)
for x in bad:
    assert x['problem'] != '', x
assert sum(x['messages'] for x in c) == d['messages'] and sum(x['bytes'] for x in c) == d['bytes'], d
assert d['lost'] == 0 and d['corrupted'] == 0 and d['errors'] == 0, d
PY
}

# ---- refused before EAL, one line naming --clients, exit 2 ----
refused() {  # NAME ARGS...
  local name=$1; shift
  "$gen" -- "$@" > "$out/refused.txt" 2>&1
  local rc=$?
  check "refused: $name (exit $rc)" "[ $rc -eq 2 ] && [ \$(wc -l < '$out/refused.txt') -eq 1 ] && grep -q -- '--clients' '$out/refused.txt'"
}
refused "--clients in client mode" --mode client --clients 2
refused "--clients with --connect cm" --mode server --clients 2 --connect cm
refused "--clients with a static connection" --mode server --clients 2 --oob-port 0 --remote-qpn 0x11 --op send
refused "--clients with --active-qps" --mode server --clients 2 --qps 4 --active-qps 2
refused "--clients 65" --mode server --clients 65
refused "--clients 64 x --qps 257: past 16384 QPs" --mode server --clients 64 --qps 257

# ---- three clients, every message verified by both ends of each ----
start_switch clean
sleep 1
port=$(free_port)
timeout 120 "$gen" $(eal_of "$last_cpu" "$out/clean-0.sock") -- --mode server --clients 3 --oob-port "$port" \
  --local-ip 10.0.0.2 "${common[@]}" --connect-timeout 30 --quiet --json "$out/clean.s.json" > "$out/clean.s.txt" 2>&1 &
srv=$!
pids+=("$srv")
sleep 0.5
cli=()
for k in 0 1 2; do
  timeout 120 "$gen" $(eal_of 0 "$out/clean-$((k + 1)).sock") -- --mode client --oob-port "$port" --local-ip "${ips[$k]}" \
    "${common[@]}" --count 3000 --quiet --json "$out/clean.c$k.json" > "$out/clean.c$k.txt" 2>&1 &
  cli+=($!)
  pids+=($!)
done
cli_rc=()
for p in "${cli[@]}"; do wait "$p"; cli_rc+=($?); done
wait "$srv"
srv_rc=$?
kill -INT "$swpid" 2>/dev/null
wait "$swpid"
last_pair=clean
check "--clients 3 through droce-switch: the server and its three clients exit 0 (clients: ${cli_rc[*]}, server: $srv_rc)" \
  "[ '${cli_rc[*]}' = '0 0 0' ] && [ $srv_rc -eq 0 ]"
check "--clients 3: each client's 3000 messages verified by the server, reported per client (clients[]) and in total" \
  "clients_json '$out/clean.s.json' 3 0 3000"
check "--clients 3: each client saw the server verify its 3000 messages (peer_received), nothing lost" \
  "/usr/bin/python3 - '$out'/clean.c{0,1,2}.json <<'PY'
import json, sys
for f in sys.argv[1:]:
    d = json.load(open(f))
    assert d['messages'] == 3000 and d['peer_received'] == 3000 and d['problem'] == '', (f, d['problem'])
    assert d['lost'] == d['duplicated'] == d['out_of_order'] == d['corrupted'] == d['errors'] == 0, f
PY"
check "--clients 3: the server's report has a line per client, each ok" \
  "[ \$(grep -c '^ client [0-2] (10\.0\.0\.[134], QPs [0-5]-[0-5]): 3000 messages.*: ok$' '$out/clean.s.txt') -eq 3 ]"

# ---- one client killed mid-run: the other two finish clean, the server names the dead one ----
start_switch kill
sleep 1
port=$(free_port)
timeout 120 "$gen" $(eal_of "$last_cpu" "$out/kill-0.sock") -- --mode server --clients 3 --oob-port "$port" \
  --local-ip 10.0.0.2 "${common[@]}" --connect-timeout 30 --quiet --json "$out/kill.s.json" > "$out/kill.s.txt" 2>&1 &
srv=$!
pids+=("$srv")
sleep 0.5
cli=()
for k in 0 1 2; do
  # The one to kill (10.0.0.4) prints its live line: it shows when the run is under way.
  quiet=--quiet
  [ $k -eq 2 ] && quiet="--interval 0.2"
  # No `timeout` wrapper: the SIGKILL must reach droce-gen itself. A watchdog bounds it instead,
  # and kills only its own process (the pid may be reused by then: the socket is this run's own).
  # shellcheck disable=SC2086
  "$gen" $(eal_of 0 "$out/kill-$((k + 1)).sock") -- --mode client --oob-port "$port" --local-ip "${ips[$k]}" \
    "${common[@]}" --duration 6 $quiet --json "$out/kill.c$k.json" > "$out/kill.c$k.txt" 2>&1 &
  p=$!
  cli+=("$p")
  pids+=("$p")
  ( timeout 120 tail --pid="$p" -f /dev/null || { grep -q -F "kill-$((k + 1)).sock" "/proc/$p/cmdline" && kill -KILL "$p"; } ) \
    > /dev/null 2>&1 &
done
for _ in $(seq 600); do grep -q 'Gb/s' "$out/kill.c2.txt" 2>/dev/null && break; sleep 0.1; done
kill -KILL "${cli[2]}" 2>/dev/null
cli_rc=()
for p in "${cli[@]}"; do wait "$p"; cli_rc+=($?); done
wait "$srv"
srv_rc=$?
kill -INT "$swpid" 2>/dev/null
wait "$swpid"
last_pair=kill
check "a client SIGKILLed mid-run: the other two exit 0, the server exits 1 (clients: ${cli_rc[*]}, server: $srv_rc)" \
  "[ ${cli_rc[0]} -eq 0 ] && [ ${cli_rc[1]} -eq 0 ] && [ ${cli_rc[2]} -eq 137 ] && [ $srv_rc -eq 1 ]"
check "a client SIGKILLed mid-run: its verdict fails (it disappeared), the other two pass with every message verified" \
  "clients_json '$out/kill.s.json' 2 1 && /usr/bin/python3 - '$out/kill.s.json' '$out/kill.c0.json' '$out/kill.c1.json' <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
dead = [x for x in d['clients'] if x['verdict'] == 'fail']
assert dead[0]['peer_ip'] == '10.0.0.4' and 'disappeared' in dead[0]['problem'], dead
assert 'client' in d['problem'] and '10.0.0.4' in d['problem'], d['problem']
by_ip = {x['peer_ip']: x for x in d['clients']}
for f in sys.argv[2:]:
    c = json.load(open(f))
    s = by_ip[c['config']['local_ip']]
    assert c['problem'] == '' and c['lost'] == 0 and c['peer_received'] == s['messages'] > 0, (f, c['problem'], s)
PY"
check "a client SIGKILLed mid-run: the server's stderr names it" \
  "grep -q 'client [0-2] (10.0.0.4) failed: the client disappeared' '$out/kill.s.txt'"

# ---- a client that connects and never speaks: it alone fails, within --connect-timeout ----
start_switch mute
sleep 1
port=$(free_port)
timeout 120 "$gen" $(eal_of "$last_cpu" "$out/mute-0.sock") -- --mode server --clients 2 --oob-port "$port" \
  --local-ip 10.0.0.2 "${common[@]}" --connect-timeout 5 --json "$out/mute.s.json" > "$out/mute.s.txt" 2>&1 &
srv=$!
pids+=("$srv")
for _ in $(seq 600); do grep -q 'server waiting for 2 clients' "$out/mute.s.txt" 2>/dev/null && break; sleep 0.1; done
# The mute one is the server's first; it holds its TCP connection open for 30 s, saying nothing.
/usr/bin/python3 -c "import socket, time; s = socket.create_connection(('127.0.0.1', $port)); time.sleep(30)" &
mute=$!
pids+=("$mute")
sleep 0.5
timeout 120 "$gen" $(eal_of 0 "$out/mute-1.sock") -- --mode client --oob-port "$port" --local-ip 10.0.0.1 \
  "${common[@]}" --count 2000 --connect-timeout 20 --quiet --json "$out/mute.c.json" > "$out/mute.c.txt" 2>&1
cli_rc=$?
wait "$srv"
srv_rc=$?
kill "$mute" 2>/dev/null
kill -INT "$swpid" 2>/dev/null
wait "$swpid"
last_pair=mute
check "a client that never sends its exchange: the other runs clean (exit $cli_rc), the server exits 1 (exit $srv_rc)" \
  "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 1 ] && clients_json '$out/mute.s.json' 1 1 2000"
check "a client that never sends its exchange: its problem says it ran nothing" \
  "/usr/bin/python3 -c \"import json; c = json.load(open('$out/mute.s.json'))['clients'][0]; assert c['problem'].startswith('no run: ') and c['messages'] == 0, c\""

[ $fail -eq 0 ] && echo "droce-gen --clients: all checks passed"
exit $fail
