#!/usr/bin/env bash
# droce-perf end to end: the eight perftest tests, client and server in two processes over
# net_memif, the numbers read back from perftest's table; -a, -D, lab loss; bad input.
set -uo pipefail
perf=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mktemp -d)
trap '[ -n "${KEEP_OUT:-}" ] || rm -rf "$out"' EXIT
fail=0
last_pair=""  # the last client/server pair: its outputs are shown when a check fails
check() {
  if eval "$2"; then echo "ok: $1"; return; fi
  echo "FAILED: $1"
  fail=1
  if [ -n "$last_pair" ]; then
    for f in "$out/$last_pair.c.txt" "$out/$last_pair.s.txt" "$out/$last_pair.c.json" "$out/$last_pair.s.json"; do
      [ -f "$f" ] && { echo "  --- $(basename "$f") (last lines)"; tail -n 12 "$f" | sed 's/^/  /'; }
    done
  fi
}
# shellcheck source=tests/apps/forever_wait.sh
. "$(dirname "$0")/forever_wait.sh"

last_cpu=$(( $(nproc) - 1 ))
# A TCP port nobody uses now (other runs of this script, or perftest, may be on 18515 and near it).
free_port() { /usr/bin/python3 -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])"; }
# The QPs' local ACK timeout: 4.096 us * 2^16 = 268 ms. perftest's 67 ms is met on an idle host; a
# CI host beside CPU hogs deschedules a poller for longer than that now and then (results, not timing).
qp_timeout=16
# Each exchange step's wait (--timeout): 60 s. A pair's steps take well under a second; the local
# CI's loaded pass (two CPU hogs, the interop guest's debootstrap unpacking beside it) once held two
# clients more than 20 s between two steps of perftest's exchange, and their servers gave up. The
# cases that judge a failure's timing give their own --timeout.
step_timeout=60
# run_pair NAME TEST SERVER_ARGS -- CLIENT_ARGS: server in the background, then the client; sets srv_rc, cli_rc.
# CLI_TEST: the client runs this test instead. CLI_JSON_STDOUT=1: the client takes --json -, its
# stdout becomes NAME.c.json and its stderr NAME.c.txt.
run_pair() {
  local name=$1 test=$2; shift 2
  last_pair=$name
  local sargs=() cargs=() side=s
  for a in "$@"; do
    if [ "$a" = "--" ] && [ $side = s ]; then side=c; continue; fi
    if [ $side = s ]; then sargs+=("$a"); else cargs+=("$a"); fi
  done
  local port; port=$(free_port)
  # shellcheck disable=SC2086  # SRV_L / CLI_L: EAL lcore options, word-split on purpose
  timeout 120 "$perf" ${SRV_L:--l $last_cpu} --no-pci --vdev "net_memif0,role=server,socket=$out/$name.sock" -- \
    "$test" -p $port --timeout $step_timeout -u $qp_timeout --json "$out/$name.s.json" "${sargs[@]}" > "$out/$name.s.txt" 2>&1 &
  local spid=$!
  # net_memif's socket is abstract by default (/proc/net/unix shows it as @PATH): until it listens,
  # up to 15 s (a loaded host starts slowly; the server gives its link --timeout).
  for _ in $(seq 150); do grep -q -F "@$out/$name.sock" /proc/net/unix && break; sleep 0.1; done
  # shellcheck disable=SC2086
  if [ -n "${CLI_JSON_STDOUT:-}" ]; then
    # shellcheck disable=SC2086
    timeout 120 "$perf" ${CLI_L:--l 0} --no-pci --vdev "net_memif0,role=client,socket=$out/$name.sock" -- \
      "${CLI_TEST:-$test}" -p $port --timeout $step_timeout -u $qp_timeout --json - "${cargs[@]}" "${PAIR_HOST:-127.0.0.1}" > "$out/$name.c.json" 2> "$out/$name.c.txt"
  else
    # shellcheck disable=SC2086
    timeout 120 "$perf" ${CLI_L:--l 0} --no-pci --vdev "net_memif0,role=client,socket=$out/$name.sock" -- \
      "${CLI_TEST:-$test}" -p $port --timeout $step_timeout -u $qp_timeout --json "$out/$name.c.json" "${cargs[@]}" "${PAIR_HOST:-127.0.0.1}" > "$out/$name.c.txt" 2>&1
  fi
  cli_rc=$?
  wait $spid
  srv_rc=$?
  if [ $cli_rc -ne 0 ] || [ $srv_rc -ne 0 ]; then  # say why in the test log
    echo "== $name: client exit $cli_rc, server exit $srv_rc"; tail -n 4 "$out/$name.c.txt" "$out/$name.s.txt"
  fi
}
# table FILE ROWS ITERS [bw|lat]: perftest's result table has ROWS rows, each with ITERS
# iterations (0: any positive number) and positive figures.
table() {
  /usr/bin/python3 - "$@" <<'PY'
import sys
path, rows, iters, kind = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
lines = open(path).read().splitlines()
head = [i for i, l in enumerate(lines) if l.startswith(' #bytes')]
assert len(head) == 1, 'no result header'
body = []
for l in lines[head[0] + 1:]:
    if l.startswith('---'):
        break
    if l.startswith('EAL: '):  # net_memif's own log line when the peer disconnects (stderr, interleaved)
        continue
    body.append(l.split())
assert len(body) == rows, (len(body), rows, body)
for r in body:
    size, n = int(r[0]), int(r[1])
    figures = [float(x) for x in r[2:]]
    assert n > 0 and (iters == 0 or n == iters), (n, iters)
    if kind == 'bw':  # peak (0 where perftest reports none), average, message rate
        # Printed with 2 and 6 decimals: at 2-byte messages on a slow or busy machine the average
        # rounds to 0.00 MB/s, so only "not negative" holds for it; the message rate shows traffic.
        assert len(figures) == 3 and min(figures) >= 0 and figures[2] > 0, r
    else:             # t_min t_max t_typical t_avg t_stdev p99 p99.9, or t_avg tps with -D
        assert all(f >= 0 for f in figures) and figures[0] > 0, r
print('rows', len(body))
PY
}
has_banner() { grep -q "$2" "$1" && grep -q ' local address: LID 0000 QPN 0x' "$1" && grep -q ' remote address: LID 0000 QPN 0x' "$1"; }

# ---- the eight tests ----
# The client with --json -: its table on stderr (sbw.c.txt), its JSON alone on stdout (sbw.c.json, read below).
CLI_JSON_STDOUT=1 run_pair sbw send_bw -s 4096 -n 300 -- -s 4096 -n 300
check "send_bw: both exit 0, banner, one row of 300 iterations on each side" \
  "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && has_banner '$out/sbw.c.txt' 'Send BW Test' && table '$out/sbw.c.txt' 1 300 bw && table '$out/sbw.s.txt' 1 300 bw"
run_pair wbw write_bw -s 8192 -n 300 -- -s 8192 -n 300
check "write_bw: both exit 0; the server prints the client's figures (BW report exchange)" \
  "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && has_banner '$out/wbw.c.txt' 'RDMA_Write BW Test' && table '$out/wbw.c.txt' 1 300 bw && table '$out/wbw.s.txt' 1 300 bw && grep -q 'RKey 0x' '$out/wbw.c.txt'"
run_pair rbw read_bw -s 8192 -n 200 -q 2 -- -s 8192 -n 200 -q 2
check "read_bw over 2 QPs: both exit 0, 400 iterations (perftest counts all QPs), OUT 0x80 advertised" \
  "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && table '$out/rbw.c.txt' 1 400 bw && table '$out/rbw.s.txt' 1 400 bw && grep -q 'OUT 0x80' '$out/rbw.c.txt'"
# -o: each side advertises its own out_reads (its responder resources) and issues at most the
# peer's; a client deeper than the server's 4 would be NAKed (invalid request) and fail.
run_pair rbo read_bw -s 4096 -n 200 -t 64 -o 4 -- -s 4096 -n 200 -t 64 -o 16
check "read_bw -o 4 (server) / -o 16 (client): both exit 0, each advertises its own, the client keeps to 4" \
  "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && table '$out/rbo.c.txt' 1 200 bw && grep -q 'local address.*OUT 0x10' '$out/rbo.c.txt' && grep -q 'remote address.*OUT 0x04' '$out/rbo.c.txt' && grep -q 'local address.*OUT 0x04' '$out/rbo.s.txt'"
# The client captures (--pcap, the shared capture options): a file tshark decodes with every ICRC
# right, and the report's capture line and JSON say what it holds.
run_pair slat send_lat -n 200 -- -n 200 --pcap "$out/slat.pcapng"
check "send_lat: both exit 0, latency row of 200 iterations with positive times" \
  "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && has_banner '$out/slat.c.txt' 'Send Latency Test' && table '$out/slat.c.txt' 1 200 lat && table '$out/slat.s.txt' 1 200 lat"
check "send_lat --pcap: the capture verifies (tshark, every ICRC), the capture line and JSON count its frames" \
  "bash '$root/scripts/verify_capture.sh' '$out/slat.pcapng' > '$out/slat.verify.txt' 2>&1 &&
   grep -Eq 'capture: [1-9][0-9]* frames in .*slat.pcapng' '$out/slat.c.txt' &&
   /usr/bin/python3 -c \"import json; c = json.load(open('$out/slat.c.json'))['capture']; assert c['frames'] >= 400 and c['snaplen'] == 346, c\" ||
   { tail -n 5 '$out/slat.verify.txt'; false; }"
run_pair wlat write_lat -s 64 -n 200 -- -s 64 -n 200
check "write_lat: both exit 0 (ping-pong by polling the last byte)" \
  "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && table '$out/wlat.c.txt' 1 200 lat && table '$out/wlat.s.txt' 1 200 lat"
run_pair rlat read_lat -s 64 -n 200 -- -s 64 -n 200
check "read_lat: both exit 0, the client's row has 200 iterations" \
  "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && has_banner '$out/rlat.c.txt' 'RDMA_Read Latency Test' && table '$out/rlat.c.txt' 1 200 lat"
# Atomics (8 bytes, -A FETCH_AND_ADD by default): the server only answers; atomic_bw's prints the
# client's figures. The address lines carry no OUT/RKey (perftest prints neither for ATOMIC).
# atomic_json FILE TYPE CHECKED: the client's JSON names the atomic type, and atomic_lat's returned
# values (CHECKED of them) follow the sequence the first implies (+1 each for FETCH_AND_ADD, the
# same for CMP_AND_SWAP's 0-for-0).
atomic_json() { /usr/bin/python3 -c "
import json; d = json.load(open('$1'))
assert d['test'].startswith('atomic_') and d['atomic_type'] == '$2' and d['problem'] == '', d
assert d['atomic_checked'] == $3 and d['atomic_mismatches'] == 0, d
assert all(r['bytes'] == 8 for r in d['results']), d['results']"; }
run_pair abwf atomic_bw -n 300 -- -n 300
check "atomic_bw (FETCH_AND_ADD): both exit 0, banner, one 8-byte row of 300 on each side, out_reads advertised" \
  "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && has_banner '$out/abwf.c.txt' 'Atomic FETCH_AND_ADD BW Test' && table '$out/abwf.c.txt' 1 300 bw && table '$out/abwf.s.txt' 1 300 bw && grep -q ' Outstand reads  : 128' '$out/abwf.c.txt' && ! grep -q 'RKey' '$out/abwf.c.txt' && atomic_json '$out/abwf.c.json' FETCH_AND_ADD 0"
run_pair abwc atomic_bw -A CMP_AND_SWAP -s 8 -n 200 -q 2 -t 16 -o 4 -- -A CMP_AND_SWAP -s 8 -n 200 -q 2 -t 16 -o 16
check "atomic_bw -A CMP_AND_SWAP over 2 QPs, the server answering 4 at once (-o 4), the client 16 deep: both exit 0, 400 iterations" \
  "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && has_banner '$out/abwc.c.txt' 'Atomic CMP_AND_SWAP BW Test' && table '$out/abwc.c.txt' 1 400 bw && table '$out/abwc.s.txt' 1 400 bw && atomic_json '$out/abwc.c.json' CMP_AND_SWAP 0"
run_pair alatf atomic_lat -n 200 -- -n 200
check "atomic_lat (FETCH_AND_ADD): both exit 0, 200 iterations, each fetch returned one more than the last" \
  "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && has_banner '$out/alatf.c.txt' 'Atomic FETCH_AND_ADD Latency Test' && table '$out/alatf.c.txt' 1 200 lat && atomic_json '$out/alatf.c.json' FETCH_AND_ADD 200"
run_pair alatc atomic_lat -A CMP_AND_SWAP -n 200 -- -A CMP_AND_SWAP -n 200
check "atomic_lat -A CMP_AND_SWAP: both exit 0, 200 iterations, every swap returned the same original" \
  "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && has_banner '$out/alatc.c.txt' 'Atomic CMP_AND_SWAP Latency Test' && table '$out/alatc.c.txt' 1 200 lat && atomic_json '$out/alatc.c.json' CMP_AND_SWAP 200"
check "JSON (the client's, from --json - on its stdout): its figures match its table" "/usr/bin/python3 -c \"
import json; d = json.load(open('$out/sbw.c.json'))
assert d['test'] == 'send_bw' and d['role'] == 'client' and d['peer_version'] == '6.06' and d['problem'] == ''
r = d['results'][0]; assert r['bytes'] == 4096 and r['iterations'] == 300 and r['bw_average'] > 0 and d['unit'] == 'MB/sec'
d = json.load(open('$out/slat.c.json')); r = d['results'][0]; assert r['iterations'] == 200 and r['t_typical_us'] > 0
\""

# ---- a client running another test: perftest 6.06's exchange carries no test, so the server
# names the client's from its first request of a kind its own test never receives, and ends at
# once; the client then finds the exchange closed. Both exit non-zero, neither at --timeout. ----
# mismatch NAME: both failed, the server's line names both tests (its stderr and its JSON's
# problem), and no side ended by a timeout.
mismatch() {
  [ "$cli_rc" -ne 0 ] && [ "$srv_rc" -ne 0 ] && grep -qF "$2" "$out/$1.s.txt" &&
    /usr/bin/python3 -c "import json, sys; p = json.load(open(sys.argv[1]))['problem']; assert sys.argv[2] in p, p" "$out/$1.s.json" "$2" &&
    ! grep -q 'no progress for\|no frame from the client' "$out/$1.s.txt" "$out/$1.c.txt"
}
CLI_TEST=send_bw run_pair mmsw write_bw -s 4096 -n 300 -- -s 4096 -n 300
check "write_bw server, send_bw client: the server names both tests at the first SEND; both fail at once" \
  "mismatch mmsw 'the client runs send_bw or send_lat (its requests are SENDs), this server write_bw'"
CLI_TEST=read_bw run_pair mmws send_bw -s 4096 -n 300 -- -s 4096 -n 300
check "send_bw server, read_bw client: the server names both tests at the first READ request; both fail at once" \
  "mismatch mmws 'the client runs read_bw or read_lat (its requests are RDMA READs), this server send_bw'"

# ---- -a (sizes 2..16384), -D, --report_gbits, --loss ----
run_pair all send_bw -a --max-size 16384 -n 20 -- -a --max-size 16384 -n 20
check "send_bw -a: 14 sizes (2..16384), with perftest's barriers around each" \
  "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && table '$out/all.c.txt' 14 20 bw && table '$out/all.s.txt' 14 20 bw"
run_pair walla write_lat -a --max-size 4096 -n 20 -- -a --max-size 4096 -n 20
check "write_lat -a: 12 sizes (2..4096)" "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && table '$out/walla.c.txt' 12 20 lat"
run_pair dur write_bw -D 2 -s 4096 --report_gbits -- -D 2 -s 4096 --report_gbits
check "write_bw -D 2 --report_gbits: iterations counted in the measured window, Gb/sec" \
  "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && table '$out/dur.c.txt' 1 0 bw && grep -q 'BW average\[Gb/sec\]' '$out/dur.c.txt'"
run_pair durl send_lat -D 2 -- -D 2
check "send_lat -D 2: t_avg and tps" \
  "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && table '$out/durl.c.txt' 1 0 lat && grep -q 'tps average' '$out/durl.c.txt'"
# The client's loss on what it sends (--impair-direction tx: the WRITEs' data), the server's on
# what it receives (the default): each counts its drops on its own side (issue 34 item 3).
run_pair loss write_bw -s 4096 -n 400 --loss 0.03 --seed 5 -- -s 4096 -n 400 --loss 0.03 --seed 6 --impair-direction tx
check "write_bw with 3 % lab loss, the client's on its sending, the server's on its receiving: completes, retransmissions and drops counted where they happened" \
  "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && table '$out/loss.c.txt' 1 400 bw && /usr/bin/python3 -c \"
import json; d = json.load(open('$out/loss.c.json')); s = json.load(open('$out/loss.s.json'))
assert d['retransmitted_packets'] > 0 and d['impairment_dropped'] > 0, d
c, si = d['impairment'], s['impairment']
assert c['direction'] == 'tx' and c['dropped_tx'] == d['impairment_dropped'] and c['dropped_rx'] == 0 and c['frames_rx'] == 0, c
assert si['direction'] == 'rx' and si['dropped_rx'] > 0 and si['dropped_tx'] == 0, si
assert d['drop_reasons']['injected_loss'] == c['dropped'] and s['drop_reasons']['injected_loss'] == si['dropped'], (d, s)
\" && grep -Eq 'droce: impairment \(tx\): dropped [1-9][0-9]*: 0 of 0 received here, [1-9][0-9]* of [1-9][0-9]* sent from here' '$out/loss.c.txt'"
run_pair vlan write_bw -s 4096 -n 200 --dscp 26 --vlan 100 --pcp 3 -- -s 4096 -n 200 --dscp 26 --vlan 100 --pcp 3
check "write_bw with --dscp 26 --vlan 100 --pcp 3 on both sides (tagged frames, ARP on the VLAN): both exit 0" \
  "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && table '$out/vlan.c.txt' 1 200 bw"

# ---- perftest's habits: -b, --report-both, -Q, -I, -N, --rate_limit, --out_json, flags droce leaves out ----
# duplex_json FILE ITERS: a -b side's JSON: no RNR NAK either way (each side posted receives for
# the peer's SENDs), each direction's row of ITERS iterations, and the printed row their sum.
duplex_json() { /usr/bin/python3 -c "
import json; d = json.load(open('$1'))
assert d['bidirectional'] and d['problem'] == '', d
assert d['rnr_naks_sent'] == 0 and d['rnr_naks_received'] == 0, (d['rnr_naks_sent'], d['rnr_naks_received'])
l, r, s = d['results_local'][-1], d['results_remote'][-1], d['results'][-1]
assert l['iterations'] == r['iterations'] == s['iterations'] == $2, (l, r, s)
assert abs(s['bw_average'] - l['bw_average'] - r['bw_average']) <= 1e-6 * max(1, s['bw_average']), (l, r, s)
assert l['msg_rate_mpps'] > 0 and r['msg_rate_mpps'] > 0, (l, r)"; }
run_pair sbb send_bw -b -s 4096 -n 300 -- -b -s 4096 -n 300
check "send_bw -b: both exit 0, both send and receive (no RNR NAK), each prints both directions' sum" \
  "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && has_banner '$out/sbb.c.txt' 'Send Bidirectional BW Test' && grep -q 'RX depth' '$out/sbb.c.txt' && table '$out/sbb.c.txt' 1 300 bw && table '$out/sbb.s.txt' 1 300 bw && duplex_json '$out/sbb.c.json' 300 && duplex_json '$out/sbb.s.json' 300"
# --report-both: after the sums, each side's "Local results" and "Remote results" tables; one
# side's local row is the other's remote row (the swapped BW reports).
both_tables() { /usr/bin/python3 - "$@" <<'PY'
import sys
def tables(path):
    lines = open(path).read().splitlines()
    out = {}
    for title in ('Local results', 'Remote results'):
        i = [k for k, l in enumerate(lines) if l.strip() == title + ':']
        assert len(i) == 1, (title, path)
        row = lines[i[0] + 3].split()
        assert lines[i[0] + 2].startswith(' #bytes'), lines[i[0] + 2]
        out[title] = (int(row[0]), int(row[1]), float(row[3]))
    return out
c, s = tables(sys.argv[1]), tables(sys.argv[2])
assert c['Local results'] == s['Remote results'] and c['Remote results'] == s['Local results'], (c, s)
assert c['Local results'][1] == int(sys.argv[3]) and c['Local results'][2] > 0, c
print('both tables', c)
PY
}
run_pair wbb write_bw -b -s 8192 -n 300 --report-both -- -b -s 8192 -n 300 --report-both
check "write_bw -b --report-both: both exit 0, the sums, then each direction's table (one side's local is the other's remote)" \
  "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && has_banner '$out/wbb.s.txt' 'RDMA_Write Bidirectional BW Test' && both_tables '$out/wbb.c.txt' '$out/wbb.s.txt' 300 && duplex_json '$out/wbb.c.json' 300 && duplex_json '$out/wbb.s.json' 300"
run_pair rbba read_bw -b -a --max-size 1024 -n 20 -- -b -a --max-size 1024 -n 20
check "read_bw -b -a (2..1024): both exit 0, 10 summed rows on each side (a barrier and a report swap per size)" \
  "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && table '$out/rbba.c.txt' 10 20 bw && table '$out/rbba.s.txt' 10 20 bw && duplex_json '$out/rbba.c.json' 20"
# --out_json: perftest's own JSON (test_info and results, perftest's keys); -Q, -I and -N shown as
# perftest shows them; flags droce leaves out but may ignore: one warning line each, and the run goes on.
perftest_json() { /usr/bin/python3 -c "
import json; d = json.load(open('$1'))
assert list(d) == ['test_info', 'results'], list(d)
i, r = d['test_info'], d['results']
for k in ['test', 'Dual_port', 'Device', 'Number_of_qps', 'Transport_type', 'Connection_type', 'Using_SRQ', 'ibv_wr_API',
          'CQ_Moderation', 'Mtu', 'Link_type', 'Max_inline_data', 'rdma_cm_QPs', 'Data_ex_method']:
    assert k in i, (k, i)
assert i['test'] == 'Send_BW_Test' and i['CQ_Moderation'] == 10 and i['Max_inline_data'] == 64 and i['Connection_type'] == 'RC', i
assert $2 == 0 or (i['TX_depth'] == 128 and 'RX_depth' not in i), i
assert $2 == 1 or (i['RX_depth'] == 512 and 'TX_depth' not in i), i
assert set(r) == {'MsgSize', 'n_iterations', 'BW_peak', 'BW_average', 'MsgRate'}, r
assert r['MsgSize'] == 4096 and r['n_iterations'] == 1000 and r['BW_peak'] == 0 and r['BW_average'] > 0 and r['MsgRate'] > 0, r"; }
run_pair pj send_bw -s 4096 -Q 10 -I 64 -N --out_json --out_json_file="$out/pj.s.perftest.json" -- \
  -s 4096 -Q 10 -I 64 -N --out_json --out_json_file "$out/pj.c.perftest.json" -e --use-srq -S 3 --cpu_util
check "--out_json: perftest's JSON keys on both sides; -Q 10, -I 64 and -N (peak 0) shown" \
  "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && grep -q 'CQ Moderation   : 10' '$out/pj.c.txt' && grep -q 'Max inline data : 64\[B\]' '$out/pj.c.txt' && perftest_json '$out/pj.c.perftest.json' 1 && perftest_json '$out/pj.s.perftest.json' 0"
check "perftest flags droce ignores (-e, --use-srq, -S, --cpu_util): one warning line each, and the run goes on" \
  "[ \$(grep -c '^droce-perf: warning: .* ignored: ' '$out/pj.c.txt') -eq 4 ] && grep -q '^droce-perf: warning: -e ignored: droce polls' '$out/pj.c.txt' && grep -q '^droce-perf: warning: --use-srq ignored' '$out/pj.c.txt'"
# --rate_limit 0.2 Gb/s (23.84 MiB/s) for 4 KiB WRITEs in bursts of 16: unpaced the pair runs at
# hundreds of MiB/s; paced, the average stays near the rate (loosely: a loaded host's poller
# catches up on at most a quarter second of bursts, and the first-post-to-last-completion clock
# adds one gap in 125).
rate_avg() { /usr/bin/python3 -c "
import json; d = json.load(open('$1')); avg = d['results'][0]['bw_average']
assert $2 * 0.5 <= avg <= $2 * 1.25, (avg, $2)
print('paced average', avg, 'MiB/s for', $2)"; }
run_pair rl write_bw -s 4096 -n 2000 -- -s 4096 -n 2000 --rate_limit=0.2 --rate_limit_type=SW --burst_size 16
check "write_bw --rate_limit 0.2 (Gb/s, SW, bursts of 16): both exit 0, the average near 23.84 MiB/s" \
  "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && rate_avg '$out/rl.c.json' 23.84"
run_pair rlm send_bw -s 4096 -n 1000 -- -s 4096 -n 1000 --rate_limit 20 --rate_units M
check "send_bw --rate_limit 20 --rate_units M (HW: paced in software, one warning line): the average near 20 MiB/s" \
  "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && grep -q 'warning: --rate_limit_type HW: droce paces in software' '$out/rlm.c.txt' && rate_avg '$out/rlm.c.json' 20"

# ---- --workers: QP i on worker i % N, each worker on its own lcore with its own queue pair ----
# Two lcores per process (4 pollers on a 2-CPU machine: slow, judged on results only); the
# memif ports get two queue pairs each.
if [ "$(nproc)" -ge 2 ]; then two_lcores="-l 0-1"; else two_lcores="--lcores=0@0,1@0"; fi
# workers_json FILE N MSGS: the JSON's "workers" array has N workers, each with MSGS messages.
workers_json() { /usr/bin/python3 -c "
import json, sys; d = json.load(open('$1')); w = d['workers']
assert len(w) == $2 and [x['worker'] for x in w] == list(range($2)), w
assert all(x['qps'] == d['qps'] // $2 and x['messages'] == $3 for x in w), w
assert d['problem'] == '', d['problem']"; }
SRV_L=$two_lcores CLI_L=$two_lcores run_pair w2 write_bw -q 4 --workers 2 -s 4096 -n 200 -- -q 4 --workers 2 -s 4096 -n 200
check "write_bw -q 4 --workers 2: both exit 0, perftest's table counts all QPs (800), each worker completed its 2 QPs' 400" \
  "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && table '$out/w2.c.txt' 1 800 bw && table '$out/w2.s.txt' 1 800 bw && workers_json '$out/w2.c.json' 2 400 && [ \$(grep -c '^ droce: worker [01] (lcore ' '$out/w2.c.txt') -eq 2 ]"
SRV_L=$two_lcores CLI_L=$two_lcores run_pair s2 send_bw -q 4 --workers 2 -s 8192 -n 100 -- -q 4 --workers 2 -s 8192 -n 100
check "send_bw -q 4 --workers 2: each server worker posted and received its QPs' share (receives posted on its own lcore)" \
  "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && table '$out/s2.c.txt' 1 400 bw && table '$out/s2.s.txt' 1 400 bw && workers_json '$out/s2.s.json' 2 200 && workers_json '$out/s2.c.json' 2 200"
SRV_L=$two_lcores CLI_L=$two_lcores run_pair l2 read_bw -q 4 --workers 2 -s 4096 -n 200 --loss 0.02 --seed 3 -- -q 4 --workers 2 -s 4096 -n 200 --loss 0.02 --seed 4
check "read_bw -q 4 --workers 2 with 2 % lab loss on every queue: completes, retransmissions counted" \
  "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && table '$out/l2.c.txt' 1 800 bw && workers_json '$out/l2.c.json' 2 400 && /usr/bin/python3 -c \"
import json; d = json.load(open('$out/l2.c.json')); assert d['impairment_dropped'] > 0 and d['retransmitted_packets'] > 0, d\""

# ---- the peer's MAC: every pair above gave no --peer-mac, so each side found the other's by ARP
# (2 workers: through worker 0, whose queue 0 meets the peer's queue 0; every worker used it) ----
# mac_from FILE FROM [MAC]: the JSON's peer MAC came from FROM (and is MAC when given).
mac_from() { /usr/bin/python3 -c "
import json, re; r = json.load(open('$1'))['remote']
assert r['mac_from'] == '$2' and re.fullmatch('([0-9a-f]{2}:){5}[0-9a-f]{2}', r['mac']) and r['mac'] != '00:00:00:00:00:00', r
assert '${3:-}' in ('', r['mac']), r"; }
check "without --peer-mac the peer's MAC came from ARP, one worker and two (write_bw, write_bw --workers 2, both sides)" \
  "mac_from '$out/wbw.c.json' arp && mac_from '$out/wbw.s.json' arp && mac_from '$out/w2.c.json' arp && mac_from '$out/w2.s.json' arp"
run_pair given write_bw -s 4096 -n 200 --peer-mac 02:00:0a:00:00:01 -- -s 4096 -n 200 --peer-mac 02:00:0a:00:00:02
check "with --peer-mac on both sides: completes with the given MACs (no ARP needed)" \
  "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && table '$out/given.c.txt' 1 200 bw && mac_from '$out/given.c.json' --peer-mac 02:00:0a:00:00:02 &&
   mac_from '$out/given.s.json' --peer-mac 02:00:0a:00:00:01"
# Nobody answers ARP: both on net_null (a link that is up and takes every frame away), the TCP
# exchange between them works. Each side fails within its --timeout (3 s) with the engine's words.
last_pair=noarp
port=$(free_port)
t0=$SECONDS
timeout 60 "$perf" -l "$last_cpu" --no-pci --no-huge -m 512 --vdev net_null0 -- write_bw -p "$port" --timeout 3 \
  > "$out/noarp.s.txt" 2>&1 &
spid=$!
sleep 0.5
timeout 60 "$perf" -l 0 --no-pci --no-huge -m 512 --vdev net_null0 -- write_bw -p "$port" --timeout 3 127.0.0.1 \
  > "$out/noarp.c.txt" 2>&1
cli_rc=$?
wait $spid
srv_rc=$?
took=$(( SECONDS - t0 ))
check "a pair whose ARP nobody carries: both exit 1, the ARP failure named, within 30 s (took ${took} s)" \
  "[ $cli_rc -eq 1 ] && [ $srv_rc -eq 1 ] && [ $took -le 30 ] &&
   grep -q -h 'droce-perf: no ARP reply from 10.0.0.[12] after 3 requests in' '$out/noarp.s.txt' '$out/noarp.c.txt' ||
   { echo 'client exit $cli_rc, server exit $srv_rc'; tail -n 2 '$out/noarp.s.txt' '$out/noarp.c.txt'; false; }"
# More workers than EAL lcores or than the port's queue pairs: one line naming the limit, exit 2.
limit() {  # NAME EXPECTED_TEXT EAL_AND_APP_ARGS...
  local name=$1 text=$2; shift 2
  timeout 60 "$perf" "$@" > "$out/limit.txt" 2>&1
  local rc=$?
  check "$name: exit 2, one line naming the limit" \
    "[ $rc -eq 2 ] && [ \$(grep -c '^droce-perf: ' '$out/limit.txt') -eq 1 ] && grep -q -F -- '$text' '$out/limit.txt' || { cat '$out/limit.txt'; false; }"
}
limit "--workers 2 on one lcore" "--workers 2: EAL gives 1 lcore" -l 0 --no-pci --vdev net_null0 -- send_bw -q 2 --workers 2
limit "--workers 2 on a one-queue port (net_pcap)" "--workers 2: port net_pcap0 has at most 1 RX/TX queue pair" \
  $two_lcores --no-pci --vdev "net_pcap0,tx_pcap=$out/limit.pcap" -- send_bw -q 2 --workers 2

# ---- bad input: one line, exit 2, before any port is touched ----
bad() {  # NAME EXPECTED_TEXT ARGS...
  local name=$1 text=$2; shift 2
  "$perf" -- "$@" > "$out/bad.txt" 2>&1
  local rc=$? ok=1
  [ $rc -eq 2 ] && [ "$(wc -l < "$out/bad.txt")" -eq 1 ] && grep -q -F -- "$text" "$out/bad.txt" && ok=0
  check "$name: exit 2, one line naming it" "[ $ok -eq 0 ] || { cat '$out/bad.txt'; false; }"
}
bad "unknown flag" "unknown option '--bogus'" send_bw --bogus
bad "-m 1000" "not an IB MTU" write_bw -m 1000
bad "read_bw -s 0" "-s: '0'" read_bw -s 0
bad "-n 3" "at least 5 iterations" send_bw -n 3
bad "-q 0" "-q: '0'" write_bw -q 0
bad "-o 0" "-o: '0'" read_bw -o 0
bad "-o 256" "-o: '256'" read_bw -o 256
bad "--pcp without --vlan" "give --vlan too" write_bw --pcp 3
bad "--vlan 4095" "--vlan: '4095'" write_bw --vlan 4095
bad "--dscp 64" "--dscp: '64'" write_bw --dscp 64
bad "-u 0" "-u: '0'" write_bw -u 0
bad "-u 32" "-u: '32'" write_bw -u 32
bad "a missing value" "-s needs a value" send_bw -s
bad "an unknown test" "is not a test" send_rate
bad "no test" "no test given"
bad "-q on a latency test" "only available in bw tests" send_lat -q 2
bad "-c UD" "RC only" send_bw -c UD
bad "-D with -a" "does not run all sizes" send_bw -D 2 -a
bad "--workers 3 for 2 QPs" "--workers 3: more workers than QPs (-q 2)" write_bw -q 2 --workers 3
bad "--workers 2 on a latency test" "latency tests run one QP" send_lat --workers 2
bad "--workers 0" "--workers: '0'" write_bw --workers 0
bad "atomic_bw -s 16" "-s: atomic tests use 8-byte messages only, not 16" atomic_bw -s 16
bad "atomic_lat -a" "-a: atomic tests run one size" atomic_lat -a
bad "-A BOGUS" "-A: 'BOGUS' is not an atomic type (FETCH_AND_ADD or CMP_AND_SWAP)" atomic_bw -A BOGUS
bad "-A on a non-atomic test" "-A: only atomic_bw and atomic_lat" read_bw -A FETCH_AND_ADD
bad "-b on a latency test" "-b: bidirectional is only available in bw tests" send_lat -b
bad "-b on atomic_bw" "not atomic_bw" atomic_bw -b
bad "-I on a READ test" "-I: inline data is not available on READ/atomic tests" read_bw -I 64
bad "-Q 0" "-Q: '0'" send_bw -Q 0
bad "--rate_limit_type PP" "packet pacing is raw_ethernet's" write_bw --rate_limit=1 --rate_limit_type=PP
bad "--rate_units p with the HW limit" "pps is not supported with the HW rate limit" write_bw --rate_limit 5 --rate_units p
bad "--rate_limit on send_bw -b" "not with a bidirectional send_bw" send_bw -b --rate_limit 1
bad "--burst_size alone" "need --rate_limit" write_bw --burst_size 4
bad "perftest's -z (rdma_cm for the exchange alone)" "-z: perftest's, not implemented by droce-perf" send_bw -z
bad "perftest's --use_cuda=0" "--use_cuda: perftest's, not implemented by droce-perf: droce's buffers are host memory" write_bw --use_cuda=0
bad "perftest's --output" "--output: perftest's, not implemented" write_bw --output bandwidth
bad "a value for a flag without one" "--report-both takes no value" write_bw --report-both=yes
"$perf" -- send_bw --help > "$out/help.txt" 2>&1
check "--help exits 0 and lists every flag" "[ \$? -eq 0 ] && grep -q -- '--report_gbits' '$out/help.txt' && grep -q -- '--peer-mac' '$out/help.txt' && grep -q -- '-x,--gid-index' '$out/help.txt' && grep -q -- '--workers N' '$out/help.txt' && grep -q -- '-A,--atomic_type' '$out/help.txt' && grep -q 'atomic_bw atomic_lat' '$out/help.txt' && grep -q -- '-b,--bidirectional' '$out/help.txt' && grep -q -- '--out_json' '$out/help.txt' && grep -q -- '--rate_limit R' '$out/help.txt' && grep -q -- '-V,--version' '$out/help.txt' && grep -q -- '--config FILE' '$out/help.txt'"

# ---- -R: perftest's rdma_cm mode. No TCP: the client finds the server (10.0.0.2, the default
# server IP) by ARP, connects the comm QP and then every data QP by RDMA-CM over QP1. ----
rcm_banner() { grep -q -P '^ rdma_cm QPs\t : ON$' "$1" && grep -q '^ Data ex. method : rdma_cm$' "$1"; }
rcm_arp() { /usr/bin/python3 -c "
import json; d = json.load(open('$1'))
assert d['problem'] == '' and d['remote']['mac_from'] == 'arp', d"; }
PAIR_HOST=10.0.0.2
run_pair rwbw write_bw -R -s 8192 -n 300 -- -R -s 8192 -n 300
check "write_bw -R: both exit 0, rdma_cm banner, the server prints the client's figures, the MAC by ARP" \
  "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && rcm_banner '$out/rwbw.c.txt' && rcm_banner '$out/rwbw.s.txt' && has_banner '$out/rwbw.c.txt' 'RDMA_Write BW Test' && table '$out/rwbw.c.txt' 1 300 bw && table '$out/rwbw.s.txt' 1 300 bw && rcm_arp '$out/rwbw.c.json'"
# -R on several workers (issue 41): the port owner's CM (worker 0's) connects the comm QP and the
# four data QPs, QP i on worker i % 2 on both sides, moving the other worker's through its control
# ring; 1 % lab loss on every queue (CM MADs lost too: the CM's retries), each worker its share.
SRV_L=$two_lcores CLI_L=$two_lcores run_pair rwbq write_bw -R -q 4 --workers 2 -s 8192 -n 200 --loss 0.01 --seed 7 -- \
  -R -q 4 --workers 2 -s 8192 -n 200 --loss 0.01 --seed 8
check "write_bw -R -q 4 --workers 2, 1 % loss: four rdma_cm data connections over 2 workers, 800 iterations on each side, each client worker its 400" \
  "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && [ \$(grep -c ' remote address' '$out/rwbq.c.txt') -eq 4 ] && table '$out/rwbq.c.txt' 1 800 bw && table '$out/rwbq.s.txt' 1 800 bw && workers_json '$out/rwbq.c.json' 2 400 && rcm_banner '$out/rwbq.c.txt'"
# Four workers a side (four lcores over two CPUs: slow under load, judged on results): send_bw's
# receives posted by each worker on its own lcore for the QP the port owner's CM connected there.
SRV_L="--lcores 0@0,1@$last_cpu,2@0,3@$last_cpu" CLI_L="--lcores 0@0,1@$last_cpu,2@0,3@$last_cpu" \
  run_pair rsw4 send_bw -R -q 4 --workers 4 -s 4096 -n 100 --loss 0.01 --seed 3 -- -R -q 4 --workers 4 -s 4096 -n 100 --loss 0.01 --seed 4
check "send_bw -R -q 4 --workers 4, 1 % loss: 400 iterations on each side, each worker of each side its QP's 100" \
  "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && table '$out/rsw4.c.txt' 1 400 bw && table '$out/rsw4.s.txt' 1 400 bw && workers_json '$out/rsw4.c.json' 4 100 && workers_json '$out/rsw4.s.json' 4 100"
run_pair rsbw send_bw -R -s 4096 -n 300 -- -R -s 4096 -n 300
check "send_bw -R: both exit 0, one row of 300 iterations on each side" \
  "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && rcm_banner '$out/rsbw.c.txt' && table '$out/rsbw.c.txt' 1 300 bw && table '$out/rsbw.s.txt' 1 300 bw"
run_pair rrbw read_bw -R -s 8192 -n 200 -- -R -s 8192 -n 200
check "read_bw -R: both exit 0 (the read depth settled by the CM), 200 iterations" \
  "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && table '$out/rrbw.c.txt' 1 200 bw && table '$out/rrbw.s.txt' 1 200 bw && grep -q 'OUT 0x80' '$out/rrbw.c.txt'"
run_pair rwlat write_lat -R -s 64 -n 200 -- -R -s 64 -n 200
check "write_lat -R: both exit 0 (its end sends nothing: the DREQs end it)" \
  "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && table '$out/rwlat.c.txt' 1 200 lat && table '$out/rwlat.s.txt' 1 200 lat"
PAIR_HOST=

# ---- RoCEv2 over IPv6 (issue 17 item 4): ULA addresses, their GIDs the addresses themselves,
# each side's MAC by Neighbor Discovery; with a VLAN tag and a DSCP. The TCP exchange, then -R. ----
v6_peer() { /usr/bin/python3 -c "
import json; d = json.load(open('$1'))
assert d['local']['ip'] == '$2' and d['remote']['ip'] == '$3' and d['remote']['mac_from'] == 'nd', d"; }
run_pair v6 write_bw -s 4096 -n 200 --local-ip fd00:5::2 --vlan 7 --pcp 3 --dscp 26 -- -s 4096 -n 200 --local-ip fd00:5::1 --vlan 7 --pcp 3 --dscp 26
check "write_bw over IPv6 fd00:5::1/::2 with VLAN 7, DSCP 26: both exit 0, GIDs are the IPv6 addresses, MACs by ND" \
  "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && table '$out/v6.c.txt' 1 200 bw && grep -q 'GID: 253:00:00:05' '$out/v6.c.txt' &&
   v6_peer '$out/v6.c.json' fd00:5::1 fd00:5::2 && v6_peer '$out/v6.s.json' fd00:5::2 fd00:5::1"
PAIR_HOST=fd00:5::2
run_pair v6r send_bw -R -s 4096 -n 200 --local-ip fd00:5::2 -- -R -s 4096 -n 200 --local-ip fd00:5::1
check "send_bw -R over IPv6: the rdma_cm connections by IPv6 addresses, the server's MAC by ND" \
  "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && rcm_banner '$out/v6r.c.txt' && table '$out/v6r.c.txt' 1 200 bw && table '$out/v6r.s.txt' 1 200 bw &&
   /usr/bin/python3 -c \"import json; d = json.load(open('$out/v6r.c.json')); assert d['remote']['mac_from'] == 'nd', d\""
PAIR_HOST=
run_pair v6mix write_bw -s 4096 -n 50 --local-ip fd00:5::2 -- -s 4096 -n 50
check "an IPv6 server and an IPv4 client: both fail, saying the families differ" \
  "[ $cli_rc -ne 0 ] && [ $srv_rc -ne 0 ] && grep -q 'IPv6' '$out/v6mix.c.txt' '$out/v6mix.s.txt'"

# ---- nobody there: a clear error within --timeout ----
start=$(date +%s)
nport=$(free_port)
timeout 60 "$perf" -l 0 --no-pci --vdev net_null0 -- send_bw -p "$nport" --timeout 2 127.0.0.1 > "$out/nobody.txt" 2>&1
rc=$?
check "a client with no server gives up within its timeout, saying why" \
  "[ $rc -eq 1 ] && grep -q 'cannot connect to 127.0.0.1:$nport' '$out/nobody.txt' && [ \$(( \$(date +%s) - start )) -lt 20 ]"
# -R: nobody answers the ARP; with --peer-mac, nobody answers the REQ.
start=$(date +%s)
timeout 60 "$perf" -l 0 --no-pci --vdev net_null0 -- send_bw -R --timeout 2 10.0.0.2 > "$out/nobody_r.txt" 2>&1
rc=$?
check "a -R client with no server gives up within its timeout, saying why (no ARP reply)" \
  "[ $rc -eq 1 ] && [ \$(wc -l < '$out/nobody_r.txt') -eq 1 ] && grep -q 'droce-perf: no ARP reply from 10.0.0.2' '$out/nobody_r.txt' && [ \$(( \$(date +%s) - start )) -lt 20 ] || { cat '$out/nobody_r.txt'; false; }"
start=$(date +%s)
timeout 60 "$perf" -l 0 --no-pci --vdev net_null0 -- send_bw -R --timeout 2 --peer-mac 02:00:00:00:00:02 10.0.0.2 > "$out/nobody_rm.txt" 2>&1
rc=$?
check "a -R client whose REQ nobody answers gives up within its timeout, saying why" \
  "[ $rc -eq 1 ] && [ \$(wc -l < '$out/nobody_rm.txt') -eq 1 ] && grep -q 'droce-perf: perftest -R: .*10.0.0.2' '$out/nobody_rm.txt' && [ \$(( \$(date +%s) - start )) -lt 20 ] || { cat '$out/nobody_rm.txt'; false; }"
# A server whose client connects and then vanishes mid-exchange.
vport=$(free_port)
timeout 60 "$perf" -l "$last_cpu" --no-pci --vdev net_null0 -- write_bw -p "$vport" --timeout 3 > "$out/vanish.txt" 2>&1 &
spid=$!
# The client connects once the server listens (retrying a refused connect for up to 50 s, never
# judging by a fixed sleep on a busy machine), and never to itself: a connect to a port nobody
# listens on yet can pick that same port as its own source and succeed (TCP simultaneous open).
/usr/bin/python3 -c "
import socket, sys, time
deadline = time.monotonic() + 50
while True:
    s = socket.socket()
    try:
        s.connect(('127.0.0.1', $vport))
        if s.getsockname() != s.getpeername():
            break
    except OSError:
        pass
    s.close()
    if time.monotonic() > deadline:
        sys.exit('no server listening on port $vport after 50 s')
    time.sleep(0.05)
s.sendall(b'6.06'.ljust(16, b'\0')); time.sleep(0.2); s.close()"
wait $spid
rc=$?
check "a client that vanishes during the exchange: the server fails with one clear line" \
  "[ $rc -eq 1 ] && grep -q 'droce-perf: peer closed the connection during the peer' '$out/vanish.txt'"

# ---- a passive server (write_bw: it waits in one exchange step for the client's whole run) ----
# Ctrl-C ends it at once; the client learns it from the closed connection.
start_passive() {  # NAME SERVER_TIMEOUT: a write_bw -D 30 pair, running; sets spid, cpid
  # The client first (it retries the memif link and the TCP connect for 20 s), so that the
  # server's short --timeout only has to cover the link coming up once it starts.
  local name=$1 port; port=$(free_port)
  "$perf" -l 0 --no-pci --vdev "net_memif0,role=client,socket=$out/$name.sock" -- \
    write_bw -D 30 -s 4096 -p "$port" --timeout 20 127.0.0.1 > "$out/$name.c.txt" 2>&1 &
  cpid=$!
  sleep 1
  "$perf" -l "$last_cpu" --no-pci --vdev "net_memif0,role=server,socket=$out/$name.sock" -- \
    write_bw -D 30 -s 4096 -p "$port" --timeout "$2" > "$out/$name.s.txt" 2>&1 &
  spid=$!
  # Watchdogs that kill only these processes (a pid may be reused: the socket path is this pair's).
  ( timeout 120 tail --pid=$spid -f /dev/null || { grep -q -F "$name.sock" /proc/$spid/cmdline && kill -KILL $spid; } ) > /dev/null 2>&1 &
  ( timeout 120 tail --pid=$cpid -f /dev/null || { grep -q -F "$name.sock" /proc/$cpid/cmdline && kill -KILL $cpid; } ) > /dev/null 2>&1 &
  for _ in $(seq 300); do grep -q '#bytes' "$out/$name.s.txt" && grep -q '#bytes' "$out/$name.c.txt" && break; sleep 0.1; done
  sleep 1
}
start_passive pint 20
t0=$SECONDS
kill -INT $spid
wait $spid; srv_rc=$?
took=$(( SECONDS - t0 ))
wait $cpid; cli_rc=$?
check "Ctrl-C to a passive write_bw server mid-run: it exits 1 within 12 s saying interrupted (took ${took} s), the client ends with a line" \
  "[ $srv_rc -eq 1 ] && [ $took -le 12 ] && grep -q 'droce-perf: interrupted' '$out/pint.s.txt' && [ $cli_rc -eq 1 ] && grep -q 'droce-perf: .*closed' '$out/pint.c.txt' || { tail -n 3 '$out/pint.s.txt' '$out/pint.c.txt'; false; }"
# A client that stops sending (SIGSTOP): the passive server gives up after --timeout (5 s) without
# a frame, not after the client's 30 s run and a minute more.
start_passive pstall 5
kill -STOP $cpid
t0=$SECONDS
wait $spid; srv_rc=$?
took=$(( SECONDS - t0 ))
kill -KILL $cpid; kill -CONT $cpid 2>/dev/null; wait $cpid 2>/dev/null
check "a passive server whose client stops: exits 1 after --timeout 5 s without a frame (took ${took} s), saying so" \
  "[ $srv_rc -eq 1 ] && [ $took -le 20 ] && grep -q 'no frame from the client for 5 s' '$out/pstall.s.txt' || { tail -n 3 '$out/pstall.s.txt'; false; }"
# A client's Ctrl-C mid-run: it exits 1 saying interrupted; its server, whose client closed the
# connection (perftest's exchange has no stop message), exits 1 saying the client ended the run early.
start_passive pcint 20
t0=$SECONDS
kill -INT $cpid
wait $cpid; cli_rc=$?
wait $spid; srv_rc=$?
took=$(( SECONDS - t0 ))
check "Ctrl-C to a write_bw client mid-run: both exit 1 within 15 s (took ${took} s), the client saying interrupted, the server that the client ended the run early" \
  "[ $cli_rc -eq 1 ] && [ $srv_rc -eq 1 ] && [ $took -le 15 ] && grep -q 'droce-perf: interrupted' '$out/pcint.c.txt' &&
   grep -q 'droce-perf: the client ended the run early' '$out/pcint.s.txt' || { tail -n 3 '$out/pcint.s.txt' '$out/pcint.c.txt'; false; }"
# --timeout 0: the server waits for its client forever (perftest's server), where one given a bound
# gives up; Ctrl-C still ends the wait at once. Both start together: once the bounded one has ended
# (1 s after it listened) and the other has listened for 3 s, the other must still wait.
bound_port=$(free_port)
forever_port=$(free_port)
"$perf" -l "$last_cpu" --no-pci --no-huge -m 512 --vdev net_null0 -- write_bw -p "$bound_port" --timeout 1 > "$out/bound.txt" 2>&1 &
bpid=$!
"$perf" -l "$last_cpu" --no-pci --no-huge -m 512 --vdev net_null0 -- write_bw -p "$forever_port" --timeout 0 > "$out/forever.txt" 2>&1 &
fpid=$!
forever_wait_check droce-perf "$bpid" "$out/bound.txt" "$fpid" "$out/forever.txt" "ss -ltn 2>/dev/null | grep -q ':$forever_port '"

[ $fail -eq 0 ] && echo "droce-perf checks passed"
exit $fail
