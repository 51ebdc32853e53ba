#!/usr/bin/env bash
# Interop with Linux Soft-RoCE: boots the rxe lab guest once (scripts/rxe-lab) and runs droce
# against the kernel's rdma_rxe and the rdma-core tools in it, in both roles, with and without
# loss. Every case checks the data (droce checks every reply or request; the tools check their
# completions) and both sides' exit status. No QEMU, no image, a guest that does not boot: the
# suite FAILS and says why — it never passes without having run.
# usage: run_interop.sh DROCE_ECHO DROCE_PERF DROCE_RPING DROCE_SWITCH
# INTEROP_ONLY=REGEX runs only the cases whose names match it (grep -E), e.g.
# INTEROP_ONLY='bidir' for the perftest -b cases; the guest boots all the same.
# INTEROP_CAPTURES=DIR keeps the frames the guest captured in the rping and -R cases (NAME.pcap) there.
# INTEROP_TRACE=1 prints a timestamped line per step of every case (placeholder up, guest job
# queued and done, the tool listening, droce started and exited, ...): where a case's seconds go.
set -uo pipefail
ECHO=$1 PERF=$2 RPING=${3:-} SWITCH=${4:-}
HERE=$(cd "$(dirname "$0")" && pwd)
LAB=$HERE/../../scripts/rxe-lab
export LAB_RUN
LAB_RUN=$(mktemp -d /tmp/droce-interop.XXXXXX)
# Ports of our own, so a lab someone keeps running on the defaults is left alone.
export LAB_OOB_HOSTFWD=$(( 29000 + $$ % 400 )) LAB_OOB_HOST=$(( 19000 + $$ % 400 ))
export DROCE_ECHO=$ECHO DROCE_SWITCH=$SWITCH
# INTEROP_TRACE=1: a timestamped line per step of every case (lib.sh's lab_trace), on this
# script's stderr even where a step's output goes to a log.
export LAB_TRACE=${INTEROP_TRACE:-0}
exec {LAB_TRACE_FD}>&2
source "$LAB/lib.sh"

fail_loud() {
  echo "=================================================================="
  echo "INTEROP SUITE FAILED: $*"
  echo "=================================================================="
  exit 1
}
cleanup() {
  [ -n "${LAB_DROCE_PID:-}" ] && lab_stop_pid "$LAB_DROCE_PID" 3
  [ -n "${LAB_DROCE2_PID:-}" ] && lab_stop_pid "$LAB_DROCE2_PID" 3
  lab_release_link
  lab_switch_stop
  "$LAB/down.sh"
  rm -rf "$LAB_RUN"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

command -v qemu-system-x86_64 > /dev/null || fail_loud "qemu-system-x86_64 is not installed (scripts/setup.sh installs qemu-system-x86)"
command -v socat > /dev/null || fail_loud "socat is not installed (scripts/setup.sh installs it)"
[ -x "$ECHO" ] && [ -x "$PERF" ] && [ -x "$RPING" ] && [ -x "$SWITCH" ] ||
  fail_loud "$ECHO, $PERF, '$RPING' or '$SWITCH' is not built (usage: run_interop.sh DROCE_ECHO DROCE_PERF DROCE_RPING DROCE_SWITCH)"
T0=$(date +%s)
timeout 1200 "$LAB/build-image.sh" || fail_loud "the guest image could not be built (needs root and the Debian archive once; cached in .cache/rxe-lab)"
timeout 400 "$LAB/boot.sh" || fail_loud "the rxe guest did not boot (see the log above)"
echo "guest booted in $(( $(date +%s) - T0 )) s (image included)"
# The guest's RoCE v2 GID indexes for its IPv4 address and its ULA: the table holds the
# link-local, the IPv4-mapped and the ULA GIDs in the order the kernel added them (lib.sh).
GID4=$(lab_gid_index "$GUEST_IP") || fail_loud "the guest's rxe0 has no RoCE v2 GID for $GUEST_IP"
GID6=$(lab_gid_index "$GUEST_IP6") || fail_loud "the guest's rxe0 has no RoCE v2 GID for $GUEST_IP6"
echo "guest rxe0 RoCE v2 GIDs: [$GID4] ::ffff:$GUEST_IP, [$GID6] $GUEST_IP6"

# Addressing of every droce run on the lab link. No MAC is given either way (issue 17: ARP replaces
# static MACs): droce finds the guest's by ARP, and the guest, booted without a neighbour entry
# for droce, learns droce's from droce's request or asks, and droce answers while it polls.
DROCE_ADDR=(--local-ip "$DROCE_IP" --local-mac "$DROCE_MAC")
passed=() failed=()
# wanted NAME: the case runs (INTEROP_ONLY unset, or its name matches).
wanted() { [ -z "${INTEROP_ONLY:-}" ] || grep -q -E -- "$INTEROP_ONLY" <<< "$1"; }
result() {  # result NAME RC SECONDS
  lab_trace "result $2"
  if [ "$2" -eq 0 ]; then passed+=("$1"); echo "PASS $1 (${3} s)"; else failed+=("$1"); echo "FAIL $1 (${3} s)"; fi
}

# The second half of every case where a guest tool serves and droce connects: droce runs (its
# log in droce.log), a droce that failed ends the guest tool (it may wait for ever for a peer),
# the guest tool's exit is awaited, the guest's capture CAP (empty: none) is stopped, and both
# logs and the result are printed. droce_against_guest NAME T0 GUEST_ID CAP droce-command...
droce_against_guest() {
  local name=$1 t0=$2 id=$3 cap=$4 rc=0 grc=0; shift 4
  lab_droce_start "$LAB_RUN/droce.log" timeout 180 "$@"
  lab_handover_link
  wait "$LAB_DROCE_PID" || rc=$?
  lab_trace "droce exited ($rc)"
  LAB_DROCE_PID=
  [ "$rc" -ne 0 ] && lab_gkill "$id"
  lab_gwait "$id" 120 > "$LAB_RUN/guest.log" 2>&1 || grc=$?
  [ -n "$cap" ] && gcapture_stop "$cap" "$name"
  echo "droce (exit $rc):"; sed 's/^/  /' "$LAB_RUN/droce.log"
  echo "guest (exit $grc):"; sed 's/^/  /' "$LAB_RUN/guest.log"
  result "$name" $(( rc != 0 || grc != 0 )) $(( $(date +%s) - t0 ))
}
# gserve NAME LISTENS 'guest command' CAPTURE [POLL_MS]: the guest tool started and listening,
# the link released for droce (lib.sh's lab_gserve_start/lab_gserve_wait: one guest job that waits
# for the link, starts the tool and says when it listens, while a placeholder holds the link).
# With CAPTURE 1 the guest's frames are captured (gcapture_queue): tcpdump and the tool start
# together (a listening tool sends nothing), and droce only once both are up. Sets GS_ID (the
# tool's job) and GS_CAP (the capture's job, or empty); 1 with the reason said and everything
# ended when the tool did not come up.
gserve() {
  local name=$1 listens=$2 gcmd=$3
  GS_ID= GS_CAP=
  if [ "$4" = 1 ]; then
    GS_CAP=$(gcapture_queue "$name") || { echo "tcpdump did not start in the guest"; return 1; }
  fi
  if ! lab_gserve_start "$listens" "$gcmd" "${5:-}"; then
    echo "the placeholder that holds the link did not start"
    [ -n "$GS_CAP" ] && gcapture_stop "$GS_CAP" "$name"
    return 1
  fi
  GS_ID=$LAB_GSERVE_ID
  if [ -n "$GS_CAP" ] && ! gcapture_wait "$GS_CAP"; then
    echo "tcpdump did not start in the guest"; lab_release_link; lab_gkill "$GS_ID"; lab_gwait "$GS_ID" 15
    gcapture_stop "$GS_CAP" "$name"; return 1
  fi
  if ! lab_gserve_wait 150; then
    echo "the guest tool did not listen (its job's output above)"
    [ -n "$GS_CAP" ] && gcapture_stop "$GS_CAP" "$name"
    return 1
  fi
}
# Guest tool as the server (listening on its 18515, reached through the hostfwd), droce the client.
# With GS_CAPTURE=1 the guest's frames are captured as in the RDMA-CM cases.
# guest_serves NAME 'guest command' droce-app-args...
guest_serves() {
  local name=$1 gcmd=$2 t0; shift 2
  wanted "$name" || return 0
  t0=$(date +%s)
  lab_trace_start "$name"
  echo "--- $name: guest: $gcmd | droce: $*"
  gserve "$name" "$(lab_gtcp_listens 18515)" "$gcmd" "${GS_CAPTURE:-0}" || { result "$name" 1 $(( $(date +%s) - t0 )); return; }
  droce_against_guest "$name" "$t0" "$GS_ID" "$GS_CAP" "$@"
}
# droce the server (OOB on the host's $LAB_OOB_HOST, the guest's 10.0.2.100:18515), guest tool the
# client. droce_serves NAME 'guest command' droce-app-args...
# The guest's job is queued as droce starts (lib.sh's lab_gclient_script): its bash starts while
# droce's EAL comes up, and it waits for the host's go (droce listens) and for the link.
droce_serves() {
  local name=$1 gcmd=$2 t0 rc=0 grc=0 go id; shift 2
  wanted "$name" || return 0
  t0=$(date +%s)
  lab_trace_start "$name"
  echo "--- $name: droce: $* | guest: $gcmd"
  go=$(lab_gname)
  lab_droce_start "$LAB_RUN/droce.log" timeout 180 "$@"
  id=$(lab_gstart "$(lab_gclient_script "$go" "$gcmd")")
  if [ -z "$id" ] || ! lab_wait_for 30 eval "ss -ltn | grep -q ':$LAB_OOB_HOST '"; then
    echo "droce did not listen"; [ -n "$id" ] && { lab_gkill "$id"; lab_gwait "$id" 15; }
    lab_stop_pid "$LAB_DROCE_PID" 3; cat "$LAB_RUN/droce.log"; LAB_DROCE_PID=; result "$name" 1 $(( $(date +%s) - t0 )); return
  fi
  lab_trace "droce listens"
  lab_ggo "$go"
  lab_gwait "$id" 180 > "$LAB_RUN/guest.log" 2>&1 || grc=$?
  # The job's own steps failed (90: no link, 92: no go): droce waits for a client in vain.
  [ "$grc" -eq 90 ] || [ "$grc" -eq 92 ] && lab_stop_pid "$LAB_DROCE_PID" 3
  wait "$LAB_DROCE_PID" || rc=$?
  lab_trace "droce exited ($rc)"
  LAB_DROCE_PID=
  echo "droce (exit $rc):"; sed 's/^/  /' "$LAB_RUN/droce.log"
  echo "guest (exit $grc):"; sed 's/^/  /' "$LAB_RUN/guest.log"
  result "$name" $(( rc != 0 || grc != 0 )) $(( $(date +%s) - t0 ))
}

EC=("$ECHO" $(lab_droce_eal) --)
PP="ibv_rc_pingpong -d rxe0 -g $GID4"
echo_client() { echo "${EC[@]} --mode client --peer rc_pingpong --oob-port $LAB_OOB_HOSTFWD ${DROCE_ADDR[*]} --timeout 60"; }
echo_server() { echo "${EC[@]} --mode server --peer rc_pingpong --oob-port $LAB_OOB_HOST ${DROCE_ADDR[*]} --timeout 60"; }

# ---- ibv_rc_pingpong, both roles, 64 B and 4 KiB (PMTU 1024: 4 KiB = 4 packets) ----
guest_serves rc_pingpong_guest_server_64B "$PP -s 64 -n 20" $(echo_client) --size 64 --count 20
guest_serves rc_pingpong_guest_server_4KiB "$PP -s 4096 -n 20" $(echo_client) --size 4096 --count 20
droce_serves rc_pingpong_droce_server_64B "$PP -s 64 -n 20 $GUEST_OOB_ADDR" $(echo_server) --size 64 --count 20
droce_serves rc_pingpong_droce_server_4KiB "$PP -s 4096 -n 20 $GUEST_OOB_ADDR" $(echo_server) --size 4096 --count 20

# ---- ibv_srq_pingpong, both roles: -q QPs a side, each side's receives from one SRQ; -n counts
# exchanges over all QPs (4 QPs at 64 B; its default 16 at 4 KiB; a small SRQ, -r 8, at 4 QPs;
# loss both ways) ----
SP="ibv_srq_pingpong -d rxe0 -g $GID4"
srq_client() { echo "${EC[@]} --mode client --peer srq_pingpong --oob-port $LAB_OOB_HOSTFWD ${DROCE_ADDR[*]} --timeout 60"; }
srq_server() { echo "${EC[@]} --mode server --peer srq_pingpong --oob-port $LAB_OOB_HOST ${DROCE_ADDR[*]} --timeout 60"; }
guest_serves srq_pingpong_guest_server_q4_64B "$SP -q 4 -s 64 -n 20" $(srq_client) --qps 4 --size 64 --count 20
guest_serves srq_pingpong_guest_server_q16_4KiB "$SP -s 4096 -n 64" $(srq_client) --size 4096 --count 64
droce_serves srq_pingpong_droce_server_q4_64B "$SP -q 4 -s 64 -n 20 $GUEST_OOB_ADDR" $(srq_server) --size 64 --count 20
droce_serves srq_pingpong_droce_server_q16_4KiB "$SP -s 4096 -n 64 $GUEST_OOB_ADDR" $(srq_server) --size 4096 --count 64
droce_serves srq_pingpong_droce_server_q4_rx8 "$SP -q 4 -r 8 -s 1024 -n 40 $GUEST_OOB_ADDR" $(srq_server) --rx-depth 8 --size 1024 --count 40
# Loss both ways (the guest drops every 7th RoCEv2 packet it sends, droce 5 % of what it receives).
if "$LAB/loss.sh" 7 > /dev/null; then
  guest_serves srq_pingpong_guest_server_lossy "$SP -q 4 -s 4096 -n 30" $(srq_client) --qps 4 --size 4096 --count 30 --loss 0.05 --seed 3
  droce_serves srq_pingpong_droce_server_lossy "$SP -q 4 -s 4096 -n 30 $GUEST_OOB_ADDR" $(srq_server) --size 4096 --count 30 --loss 0.05 --seed 4
  echo "guest tc counters:"; "$LAB/loss.sh" off | sed 's/^/  /'
else
  result srq_loss_setup 1 0
fi

# ---- loss both ways: the guest drops every 7th RoCEv2 packet it sends, droce 5 % of what it receives ----
if "$LAB/loss.sh" 7 > /dev/null; then
  guest_serves rc_pingpong_guest_server_lossy "$PP -s 4096 -n 30" $(echo_client) --size 4096 --count 30 --loss 0.05 --seed 3
  droce_serves rc_pingpong_droce_server_lossy "$PP -s 4096 -n 30 $GUEST_OOB_ADDR" $(echo_server) --size 4096 --count 30 --loss 0.05 --seed 4
  echo "guest tc counters:"; "$LAB/loss.sh" off | sed 's/^/  /'
else
  result loss_setup 1 0
fi

# ---- perftest 6.06 against droce-perf: SEND, WRITE and READ bandwidth (each role once), the
# latency tests, the atomics (both tests in both roles, each -A once per test), and loss both ways
# (-t 2: short go-back-N rounds; TCG makes each round slow) ----
DP=("$PERF" $(lab_droce_eal) --)
perf_client() { echo "${DP[@]} $1 -p $LAB_OOB_HOSTFWD ${DROCE_ADDR[*]} --timeout 60 ${*:2} 127.0.0.1"; }
perf_server() { echo "${DP[@]} $1 -p $LAB_OOB_HOST ${DROCE_ADDR[*]} --timeout 60 ${*:2}"; }
X="-d rxe0 -x $GID4 -F"
guest_serves send_bw_guest_server "ib_send_bw $X -s 4096 -n 20" $(perf_client send_bw -s 4096 -n 20)
droce_serves send_bw_droce_server "ib_send_bw $X -s 4096 -n 20 $GUEST_OOB_ADDR" $(perf_server send_bw -s 4096 -n 20)
guest_serves write_bw_guest_server "ib_write_bw $X -s 4096 -n 20" $(perf_client write_bw -s 4096 -n 20)
droce_serves read_bw_droce_server "ib_read_bw $X -s 4096 -n 20 $GUEST_OOB_ADDR" $(perf_server read_bw -s 4096 -n 20)
guest_serves read_lat_guest_server "ib_read_lat $X -s 64 -n 20" $(perf_client read_lat -s 64 -n 20)
droce_serves send_lat_droce_server "ib_send_lat $X -s 64 -n 20 $GUEST_OOB_ADDR" $(perf_server send_lat -s 64 -n 20)
# Atomics (8 bytes): droce as requester against rxe's responder, and rxe's requester against droce's.
guest_serves atomic_bw_guest_server "ib_atomic_bw $X -A FETCH_AND_ADD -n 20" $(perf_client atomic_bw -A FETCH_AND_ADD -n 20)
droce_serves atomic_bw_droce_server "ib_atomic_bw $X -A CMP_AND_SWAP -n 20 $GUEST_OOB_ADDR" $(perf_server atomic_bw -A CMP_AND_SWAP -n 20)
guest_serves atomic_lat_guest_server "ib_atomic_lat $X -A CMP_AND_SWAP -n 20" $(perf_client atomic_lat -A CMP_AND_SWAP -n 20)
droce_serves atomic_lat_droce_server "ib_atomic_lat $X -A FETCH_AND_ADD -n 20 $GUEST_OOB_ADDR" $(perf_server atomic_lat -A FETCH_AND_ADD -n 20)
# Loss here: every 11th guest packet, 2 % at droce. A drop period that divides the packets of a
# go-back-N round drops the same PSN every round for ever (tc's "determ" is a counter).
if "$LAB/loss.sh" 11 > /dev/null; then
  guest_serves send_bw_guest_server_lossy "ib_send_bw $X -s 4096 -n 20" $(perf_client send_bw -s 4096 -n 20 -t 2 --loss 0.02 --seed 5)
  droce_serves write_bw_droce_server_lossy "ib_write_bw $X -s 4096 -n 20 -t 2 $GUEST_OOB_ADDR" $(perf_server write_bw -s 4096 -n 20 --loss 0.02 --seed 6)
  droce_serves read_bw_droce_server_lossy "ib_read_bw $X -s 4096 -n 20 -t 2 $GUEST_OOB_ADDR" $(perf_server read_bw -s 4096 -n 20 --loss 0.02 --seed 7)
  # droce as READ requester: rxe answers a re-issued READ as the continuation of its first answer.
  guest_serves read_bw_guest_server_lossy "ib_read_bw $X -s 4096 -n 20 -t 2" $(perf_client read_bw -s 4096 -n 20 -t 2 --loss 0.02 --seed 8)
  # READ credits live: rxe's responder resources at 16 and at 4 (its -o), which droce's initiator
  # depth honours; beyond them rxe would discard READs. A go-back-N round asks each READ only from
  # its first missing response: rxe drops a re-issued READ that starts before its last replay.
  # -u 17 (537 ms): a realistic ACK timeout for a guest on an emulated CPU beside a busy host.
  guest_serves read_bw_guest_server_o16_lossy "ib_read_bw $X -s 4096 -n 40 -o 16" $(perf_client read_bw -s 4096 -n 40 -u 17 --loss 0.01 --seed 9)
  guest_serves read_bw_guest_server_o4_lossy "ib_read_bw $X -s 4096 -n 40 -o 4" $(perf_client read_bw -s 4096 -n 40 -u 17 --loss 0.01 --seed 10)
  # ... and droce's: it answers 4 READs at once (-o 4), which rxe's initiator depth honours (a fifth
  # outstanding READ would be NAKed invalid request and fail the run).
  droce_serves read_bw_droce_server_o4_lossy "ib_read_bw $X -s 4096 -n 40 $GUEST_OOB_ADDR" $(perf_server read_bw -s 4096 -n 40 -o 4 --loss 0.01 --seed 11)
  echo "guest tc counters:"; "$LAB/loss.sh" off | sed 's/^/  /'
else
  result perf_loss_setup 1 0
fi
# ---- 1 MiB READs, droce the requester, one guest packet in 100 lost at random: each loss costs a
# re-issue from the first missing response, and rxe replays the rest of the READ. Random, not every
# 100th: rxe's replays have lengths that are multiples of 100, and a counter would drop the same
# PSN in each of them for ever. ----
if "$LAB/loss.sh" 100 random > /dev/null; then
  guest_serves read_bw_guest_server_1MiB_lossy "ib_read_bw $X -s 1048576 -n 10" $(perf_client read_bw -s 1048576 -n 10 -u 17)
  echo "guest tc counters:"; "$LAB/loss.sh" off | sed 's/^/  /'
else
  result read_1MiB_loss_setup 1 0
fi
# ---- path MTU 4096: the guest's eth0 at 4200 (rxe active_mtu 4096), 8 KiB = 2 packets ----
if "$LAB/mtu.sh" 4200 | grep -c 'active_mtu:.*4096' > /dev/null; then
  guest_serves rc_pingpong_guest_server_pmtu4096 "$PP -m 4096 -s 8192 -n 10" $(echo_client) --mtu 4096 --size 8192 --count 10
  droce_serves rc_pingpong_droce_server_pmtu4096 "$PP -m 4096 -s 8192 -n 10 $GUEST_OOB_ADDR" $(echo_server) --mtu 4096 --size 8192 --count 10
  "$LAB/mtu.sh" 1500 > /dev/null
else
  result pmtu4096_setup 1 0
fi

# ---- perftest's -b (bidirectional): both sides send at once; each side posts receives for the
# other's SENDs before the barrier, so nobody meets an RNR NAK (droce counts those it sends and
# receives in its JSON), and both swap BW reports and print the sum of both directions ----
# no_rnr NAME FILE: droce's JSON says the run completed without an RNR NAK either way.
no_rnr() {
  wanted "$1" || return 0
  if /usr/bin/python3 -c "import json, sys; d = json.load(open(sys.argv[1])); assert d['problem'] == '' and d['bidirectional'], d; \
assert d['rnr_naks_sent'] == 0 and d['rnr_naks_received'] == 0, (d['rnr_naks_sent'], d['rnr_naks_received'])" "$2"; then
    result "$1" 0 0
  else
    result "$1" 1 0
  fi
}
droce_serves send_bw_bidir_droce_server "ib_send_bw $X -b -s 4096 -n 20 $GUEST_OOB_ADDR" \
  $(perf_server send_bw -b -s 4096 -n 20 --json "$LAB_RUN/sbb_droce_server.json")
no_rnr send_bw_bidir_droce_server_no_rnr "$LAB_RUN/sbb_droce_server.json"
guest_serves send_bw_bidir_guest_server "ib_send_bw $X -b -s 4096 -n 20" \
  $(perf_client send_bw -b -s 4096 -n 20 --json "$LAB_RUN/sbb_guest_server.json")
no_rnr send_bw_bidir_guest_server_no_rnr "$LAB_RUN/sbb_guest_server.json"
guest_serves write_bw_bidir_guest_server "ib_write_bw $X -b -s 4096 -n 20" $(perf_client write_bw -b -s 4096 -n 20)

# ---- perftest's -R (rdma_cm): no TCP at all. The comm QP and the data QPs connect by RDMA-CM
# over RoCE (QP1 MADs on the lab link), so each side reaches the other's lab IP directly, on
# perftest's port 18515 (no hostfwd); droce-perf has no --peer-mac (the guest's MAC by ARP).
# The helpers wait for the rdma_cm listener (the guest's, seen by `rdma res show cm_id`) or for
# droce-perf's "Waiting for client" line instead of a TCP port. ----
# The capture: tcpdump in the guest, ARP, Neighbor Discovery (ICMPv6 types 135 and 136 right after
# the IPv6 header) and RoCEv2 on eth0, into $LAB_SHARE/NAME.pcap (INTEROP_CAPTURES=DIR keeps a
# copy). tcpdump writes to the guest's tmpfs, not over 9p: a write per frame over 9p fell seconds
# behind on a busy TCG guest, and the host had to wait for the file to stop growing. The job waits
# for the host's stop (NAME.stop in the job directory), gives tcpdump until its file stops growing
# (at most 10 s) so that the last frames (DREQ, DREP) are in, ends it (SIGINT: it flushes) and
# copies the file to the share at once.
# gcapture_queue NAME queues the capture and prints its job id at once, gcapture_wait ID waits
# until it captures (1, the job ended, when not within 30 s): the guest starts tcpdump while the
# host does the case's other steps. gcapture_stop ID NAME ends it.
gcapture_queue() {
  rm -f "$LAB_JOBS/$1.stop"
  lab_gstart "$LAB_GFUNCS
tcpdump -i eth0 -n -U -s 0 -w /tmp/$1.pcap 'arp or udp port 4791 or (icmp6 and (ip6[40] == 135 or ip6[40] == 136))' &
p=\$!
g_until 900 100 eval '[ -e /host/jobs/$1.stop ] || ! kill -0 \$p 2>/dev/null'
size=-1
for i in \$(seq 50); do
  now=\$(stat -c %s /tmp/$1.pcap 2>/dev/null || echo 0)
  [ \"\$now\" = \"\$size\" ] && break
  size=\$now; g_sleep_ms 200
done
kill -INT \$p 2>/dev/null; wait \$p; rc=\$?
cp /tmp/$1.pcap /host/$1.pcap; rm -f /tmp/$1.pcap
exit \$rc"
}
gcapture_wait() {
  lab_wait_for 30 grep -qs 'listening on' "$LAB_JOBS/$1.out" && lab_trace "tcpdump listens" && return 0
  lab_gkill "$1"; lab_gwait "$1" 15 > /dev/null 2>&1; return 1
}
gcapture_stop() {
  : > "$LAB_JOBS/$2.stop"
  lab_gwait "$1" 30 > /dev/null 2>&1
  lab_trace "capture stopped"
  echo "guest capture: $2.pcap, $(stat -c %s "$LAB_SHARE/$2.pcap" 2>/dev/null || echo 0) bytes"
  [ -n "${INTEROP_CAPTURES:-}" ] && mkdir -p "$INTEROP_CAPTURES" && cp "$LAB_SHARE/$2.pcap" "$INTEROP_CAPTURES/"
  return 0
}
# A guest tool that listens by rdma_cm, droce the client (RDMA-CM over RoCE on the lab link, no
# hostfwd), the guest's frames captured (tcpdump on eth0). The tool listens once its cm_id is
# bound: `rdma res show cm_id` lists it LISTENing on PORT.
# rdmacm_guest_serves NAME PORT 'guest command' droce-command...
# The test starts processes (rdma, grep): polled every 200 ms, not 50.
rdmacm_guest_serves() {
  local name=$1 port=$2 gcmd=$3 t0; shift 3
  wanted "$name" || return 0
  t0=$(date +%s)
  lab_trace_start "$name"
  echo "--- $name: guest: $gcmd | droce: $*"
  gserve "$name" "rdma res show cm_id 2>/dev/null | grep LISTEN | grep -q ':$port'" "$gcmd" 1 200 ||
    { result "$name" 1 $(( $(date +%s) - t0 )); return; }
  droce_against_guest "$name" "$t0" "$GS_ID" "$GS_CAP" "$@"
}
# droce listening by rdma_cm (READY: the line it prints then), the guest tool the client, the
# guest's frames captured; NEED_CAPTURE 1 fails the case when tcpdump did not run.
# rdmacm_droce_serves NAME READY NEED_CAPTURE 'guest command' droce-command...
# The capture and the guest's job are queued as droce starts; the job goes once droce listens and
# tcpdump captures (or failed to start).
rdmacm_droce_serves() {
  local name=$1 ready=$2 need_cap=$3 gcmd=$4 t0 cap rc=0 grc=0 go id; shift 4
  wanted "$name" || return 0
  t0=$(date +%s)
  lab_trace_start "$name"
  echo "--- $name: droce: $* | guest: $gcmd"
  go=$(lab_gname)
  lab_droce_start "$LAB_RUN/droce.log" timeout 180 "$@"
  cap=$(gcapture_queue "$name")
  id=$(lab_gstart "$(lab_gclient_script "$go" "$gcmd")")
  if [ -z "$id" ] || ! lab_wait_for 30 grep -q "$ready" "$LAB_RUN/droce.log"; then
    echo "droce did not listen"; [ -n "$id" ] && { lab_gkill "$id"; lab_gwait "$id" 15; }
    [ -n "$cap" ] && gcapture_stop "$cap" "$name"
    lab_stop_pid "$LAB_DROCE_PID" 3; cat "$LAB_RUN/droce.log"; LAB_DROCE_PID=; result "$name" 1 $(( $(date +%s) - t0 )); return
  fi
  lab_trace "droce listens"
  if [ -z "$cap" ] || ! gcapture_wait "$cap"; then echo "tcpdump did not start in the guest"; cap=; fi
  lab_ggo "$go"
  lab_gwait "$id" 180 > "$LAB_RUN/guest.log" 2>&1 || grc=$?
  [ "$grc" -ne 0 ] && lab_stop_pid "$LAB_DROCE_PID" 3
  wait "$LAB_DROCE_PID" || rc=$?
  lab_trace "droce exited ($rc)"
  LAB_DROCE_PID=
  [ -n "$cap" ] && gcapture_stop "$cap" "$name"
  echo "droce (exit $rc):"; sed 's/^/  /' "$LAB_RUN/droce.log"
  echo "guest (exit $grc):"; sed 's/^/  /' "$LAB_RUN/guest.log"
  result "$name" $(( rc != 0 || grc != 0 || (need_cap && ${#cap} == 0) )) $(( $(date +%s) - t0 ))
}
CM_ADDR=(--local-ip "$DROCE_IP" --local-mac "$DROCE_MAC" --timeout 60)
rdmacm_guest_serves write_bw-R_guest_server 18515 "ib_write_bw -R $X -s 4096 -n 20" "${DP[@]}" write_bw -R "${CM_ADDR[@]}" -s 4096 -n 20 "$GUEST_IP"
rdmacm_droce_serves write_bw-R_droce_server "Waiting for client" 0 "ib_write_bw -R $X -s 4096 -n 20 $DROCE_IP" "${DP[@]}" write_bw -R "${CM_ADDR[@]}" -s 4096 -n 20
rdmacm_guest_serves send_bw-R_guest_server 18515 "ib_send_bw -R $X -s 4096 -n 20" "${DP[@]}" send_bw -R "${CM_ADDR[@]}" -s 4096 -n 20 "$GUEST_IP"
rdmacm_droce_serves send_bw-R_droce_server "Waiting for client" 0 "ib_send_bw -R $X -s 4096 -n 20 $DROCE_IP" "${DP[@]}" send_bw -R "${CM_ADDR[@]}" -s 4096 -n 20

# ---- ARP: droce-perf finds the guest's MAC by ARP (the guest kernel answers for its eth0
# address): its JSON says so ----
guest_serves write_bw_guest_server_arp "ib_write_bw $X -s 4096 -n 20" "${DP[@]}" write_bw -p "$LAB_OOB_HOSTFWD" \
  --local-ip "$DROCE_IP" --local-mac "$DROCE_MAC" --timeout 60 -s 4096 -n 20 --json "$LAB_RUN/arp.json" 127.0.0.1
if ! wanted write_bw_arp_resolved_guest_mac; then
  :
elif /usr/bin/python3 -c "import json, sys; r = json.load(open(sys.argv[1]))['remote']; assert r['mac_from'] == 'arp' and r['mac'] == sys.argv[2], r" \
     "$LAB_RUN/arp.json" "$GUEST_MAC"; then
  result write_bw_arp_resolved_guest_mac 0 0
else
  result write_bw_arp_resolved_guest_mac 1 0
fi

# ---- ARP both ways, checked: the guest has no entry for droce (a learnt one is flushed) and
# droce-echo has no --peer-mac. droce resolves the guest by ARP; the guest, which must know droce's MAC to
# move its QP to RTR, learns it from droce's ARP traffic (Linux enters the sender of a request for
# its address) or asks, and droce answers (it polls while it waits in the exchange). The entry is
# not checked after the run: the guest's carrier drops when droce ends, and Linux then flushes
# every non-permanent entry. ----
# No permanent entry for droce in the guest (the lab boots without one); a learnt one is dropped.
if ! wanted rc_pingpong_arp_both_ways; then
  :  # INTEROP_ONLY leaves it out: neither its neighbour change nor its MAC check runs
elif lab_gexec "ip neigh flush to $DROCE_IP dev eth0; ip neigh show $DROCE_IP dev eth0 | grep -q PERMANENT && exit 1; exit 0" 30 > /dev/null; then
  guest_serves rc_pingpong_arp_both_ways "$PP -s 4096 -n 20" "${EC[@]}" --mode client --peer rc_pingpong \
    --oob-port "$LAB_OOB_HOSTFWD" --local-ip "$DROCE_IP" --local-mac "$DROCE_MAC" --timeout 60 --size 4096 --count 20 \
    --json "$LAB_RUN/echo_arp.json"
  if ! wanted rc_pingpong_arp_resolved_guest_mac; then
    :
  elif /usr/bin/python3 -c "
import json, sys
j = json.load(open(sys.argv[1])); r = j['remote']
assert r['mac_from'] == 'arp' and r['mac'] == sys.argv[2], r
print('droce answered', j['endpoint']['arp_requests_answered'], 'ARP request(s) from the guest')" "$LAB_RUN/echo_arp.json" "$GUEST_MAC"; then
    result rc_pingpong_arp_resolved_guest_mac 0 0
  else
    result rc_pingpong_arp_resolved_guest_mac 1 0
  fi
else
  result rc_pingpong_arp_guest_entry_removed 1 0
fi

# ---- rping over RDMA-CM, both roles: the connection is REQ/REP/RTU on QP1 (no TCP exchange),
# neither side is told the other's MAC (no --peer-mac; no permanent neighbour entry for droce in
# the guest): rping's rdma_resolve_addr ARPs for droce, the guest's CM resolves the REQ's
# sender, droce-rping's client ARPs for the guest and its server takes the client's MAC from the
# REQ's frame. Each run's frames are captured in the guest (tcpdump on eth0, into the share). ----
RP=("$RPING" $(lab_droce_eal) --)
RP_ADDR=(--local-ip "$DROCE_IP" --local-mac "$DROCE_MAC" --timeout 60)
# rping_json_check NAME FILE MAC_FROM: droce-rping's JSON says every ping was verified and where
# the peer's MAC came from.
rping_json_check() {
  wanted "$1" || return 0
  if /usr/bin/python3 -c "import json, sys; d = json.load(open(sys.argv[1])); p = d['peer']
assert d['ok'] and d['pings'] == d['verified'] > 0 and p['mac_from'] == sys.argv[2] and p['mac'] == sys.argv[3], (d['pings'], d['verified'], p)
print('droce-rping:', d['verified'], 'pings verified; QP1 MADs sent', d['cm']['cm_mads_sent'], 'received', d['cm']['cm_mads_received'])" "$2" "$3" "$GUEST_MAC"; then
    result "$1" 0 0
  else
    result "$1" 1 0
  fi
}
# rping -s in the guest, droce-rping the client. rping_guest_serves NAME 'rping args' droce-args...
rping_guest_serves() {
  local name=$1 gargs=$2; shift 2
  rdmacm_guest_serves "$name" 7174 "exec rping -s -a $GUEST_IP $gargs" "${RP[@]}" -c -a "$GUEST_IP" "${RP_ADDR[@]}" "$@"
}
# droce-rping the server, rping -c in the guest. rping_droce_serves NAME 'rping args' droce-args...
rping_droce_serves() {
  local name=$1 gargs=$2; shift 2
  rdmacm_droce_serves "$name" 'listening on' 1 "rping -c -a $DROCE_IP $gargs" "${RP[@]}" -s "${RP_ADDR[@]}" "$@"
}
if wanted rping_guest_server || wanted rping_droce_server || wanted rping_droce_rejects_other_port; then
  if lab_gexec "ip neigh del $DROCE_IP dev eth0; ip neigh show $DROCE_IP dev eth0 | grep -q PERMANENT && exit 1; exit 0" 30 > /dev/null; then
    rping_guest_serves rping_guest_server "-v" -C 10 -S 64 -v --json "$LAB_RUN/rping_client.json"
    rping_json_check rping_guest_server_arp "$LAB_RUN/rping_client.json" arp
    rping_droce_serves rping_droce_server "-C 10 -S 64 -v -V" -C 10 -v --json "$LAB_RUN/rping_server.json"
    rping_json_check rping_droce_server_mac_from_req "$LAB_RUN/rping_server.json" req
    # A Linux client for a port nobody listens on: droce's CM answers REJ, rping fails at once.
    rping_droce_serves_reject() {
      local name=rping_droce_rejects_other_port t0 rc=0 grc=0 go id
      wanted "$name" || return 0
      t0=$(date +%s)
      lab_trace_start "$name"
      go=$(lab_gname)
      lab_droce_start "$LAB_RUN/droce.log" timeout 180 "${RP[@]}" -s "${RP_ADDR[@]}" -p 7174 --timeout 20
      id=$(lab_gstart "$(lab_gclient_script "$go" "rping -c -a $DROCE_IP -p 7175 -C 1")")
      : > "$LAB_RUN/guest.log"
      if [ -n "$id" ] && lab_wait_for 30 grep -q 'listening on' "$LAB_RUN/droce.log"; then
        lab_ggo "$go"
        lab_gwait "$id" 90 > "$LAB_RUN/guest.log" 2>&1 || grc=$?
      else
        echo "droce did not listen"; [ -n "$id" ] && { lab_gkill "$id"; lab_gwait "$id" 15 > /dev/null 2>&1; }
      fi
      lab_stop_pid "$LAB_DROCE_PID" 3; LAB_DROCE_PID=
      echo "guest (exit $grc):"; sed 's/^/  /' "$LAB_RUN/guest.log"
      # rping's words for a REJ: "cma event RDMA_CM_EVENT_REJECTED, error 8" (the reason).
      grep -q 'REJECTED' "$LAB_RUN/guest.log" && [ "$grc" -ne 0 ] || rc=1
      result "$name" "$rc" $(( $(date +%s) - t0 ))
    }
    rping_droce_serves_reject
  else
    result rping_guest_entry_removed 1 0
  fi
fi

# ---- IPv6 (issue 43): the same tools over the guest's ULA GID ($GID6, fd77::1) against droce on
# fd77::2. droce finds the guest's MAC by Neighbor Discovery (RFC 4861) and answers the guest
# kernel's solicitations for fd77::2; the TCP exchanges stay on the IPv4 management link, only the
# RoCEv2 frames are IPv6 (40-byte header, the ICRC over its masked fields). ----
DROCE6_ADDR=(--local-ip "$DROCE_IP6" --local-mac "$DROCE_MAC")
PP6="ibv_rc_pingpong -d rxe0 -g $GID6"
X6="-d rxe0 -x $GID6 -F"
echo6_client() { echo "${EC[@]} --mode client --peer rc_pingpong --oob-port $LAB_OOB_HOSTFWD ${DROCE6_ADDR[*]} --timeout 60"; }
echo6_server() { echo "${EC[@]} --mode server --peer rc_pingpong --oob-port $LAB_OOB_HOST ${DROCE6_ADDR[*]} --timeout 60"; }
perf6_client() { echo "${DP[@]} $1 -p $LAB_OOB_HOSTFWD ${DROCE6_ADDR[*]} --timeout 60 ${*:2} 127.0.0.1"; }
perf6_server() { echo "${DP[@]} $1 -p $LAB_OOB_HOST ${DROCE6_ADDR[*]} --timeout 60 ${*:2}"; }
# nd_resolved NAME FILE: droce's JSON says it found the guest's MAC by Neighbor Discovery.
nd_resolved() {
  wanted "$1" || return 0
  if /usr/bin/python3 -c "import json, sys; j = json.load(open(sys.argv[1])); r = j['remote']
assert r['mac_from'] == 'nd' and r['mac'] == sys.argv[2] and j['addresses']['family'] == 'IPv6', (r, j['addresses'])
print('droce: guest MAC by ND; answered', j['endpoint']['nd_solicitations_answered'], 'NS, ignored', j['endpoint']['nd_ignored'], 'ND frame(s)')" \
     "$2" "$GUEST_MAC"; then
    result "$1" 0 0
  else
    result "$1" 1 0
  fi
}
GS_CAPTURE=1 guest_serves v6_rc_pingpong_guest_server "$PP6 -s 4096 -n 20" $(echo6_client) --size 4096 --count 20 --json "$LAB_RUN/v6_echo.json"
nd_resolved v6_rc_pingpong_guest_server_nd "$LAB_RUN/v6_echo.json"
droce_serves v6_rc_pingpong_droce_server "$PP6 -s 64 -n 20 $GUEST_OOB_ADDR" $(echo6_server) --size 64 --count 20
guest_serves v6_write_bw_guest_server "ib_write_bw $X6 -s 4096 -n 20" $(perf6_client write_bw -s 4096 -n 20)
droce_serves v6_write_bw_droce_server "ib_write_bw $X6 -s 4096 -n 20 $GUEST_OOB_ADDR" $(perf6_server write_bw -s 4096 -n 20)
guest_serves v6_send_bw_guest_server "ib_send_bw $X6 -s 4096 -n 20" $(perf6_client send_bw -s 4096 -n 20)
droce_serves v6_send_bw_droce_server "ib_send_bw $X6 -s 4096 -n 20 $GUEST_OOB_ADDR" $(perf6_server send_bw -s 4096 -n 20)
# Loss both ways, as the IPv4 cases (loss.sh filters IPv6 UDP 4791 too): every 7th guest packet
# and 5 % at droce for the pingpongs, every 11th and 2 % for perftest.
if "$LAB/loss.sh" 7 > /dev/null; then
  guest_serves v6_rc_pingpong_guest_server_lossy "$PP6 -s 4096 -n 30" $(echo6_client) --size 4096 --count 30 --loss 0.05 --seed 13
  droce_serves v6_rc_pingpong_droce_server_lossy "$PP6 -s 4096 -n 30 $GUEST_OOB_ADDR" $(echo6_server) --size 4096 --count 30 --loss 0.05 --seed 14
  echo "guest tc counters:"; "$LAB/loss.sh" off | sed 's/^/  /'
else
  result v6_loss_setup 1 0
fi
if "$LAB/loss.sh" 11 > /dev/null; then
  guest_serves v6_send_bw_guest_server_lossy "ib_send_bw $X6 -s 4096 -n 20" $(perf6_client send_bw -s 4096 -n 20 -t 2 --loss 0.02 --seed 15)
  droce_serves v6_write_bw_droce_server_lossy "ib_write_bw $X6 -s 4096 -n 20 -t 2 $GUEST_OOB_ADDR" $(perf6_server write_bw -s 4096 -n 20 --loss 0.02 --seed 16)
  echo "guest tc counters:"; "$LAB/loss.sh" off | sed 's/^/  /'
else
  result v6_perf_loss_setup 1 0
fi
# Duplicate Address Detection: while droce-echo (fd77::2) waits for its client, the guest adds
# fd77::1:0:2, whose solicited-node group (ff02::1:ff00:2, RFC 4291 §2.7.1) is droce's own, so
# the probe (an NS from :: for that target, RFC 4862 §5.4.2) passes droce's multicast filter and
# reaches its ND. droce must count it ignored (another target) and not answer: an answer would
# leave the address "dadfailed" in the guest (§5.4.5). Then rc_pingpong runs as usual.
DAD_ADDR=fd77::1:0:2
droce_serves v6_nd_ignores_guest_dad "ip -6 addr add $DAD_ADDR/64 dev eth0 || exit 1
for i in \$(seq 150); do ip -6 addr show dev eth0 to $DAD_ADDR/128 | grep -q tentative || break; sleep 0.2; done
ip -6 addr show dev eth0 to $DAD_ADDR/128; st=\$(ip -6 addr show dev eth0 to $DAD_ADDR/128)
ip -6 addr del $DAD_ADDR/64 dev eth0
case \"\$st\" in *tentative*|*dadfailed*|'') echo 'DAD of $DAD_ADDR did not succeed'; exit 1;; esac
exec $PP6 -s 64 -n 10 $GUEST_OOB_ADDR" $(echo6_server) --size 64 --count 10 --json "$LAB_RUN/v6_dad.json"
if wanted v6_nd_ignores_guest_dad_counted; then
  if /usr/bin/python3 -c "import json, sys; e = json.load(open(sys.argv[1]))['endpoint']
print('droce: ND frames ignored', e['nd_ignored'], ', NS answered', e['nd_solicitations_answered'])
assert e['nd_ignored'] >= 1, e" "$LAB_RUN/v6_dad.json"; then
    result v6_nd_ignores_guest_dad_counted 0 0
  else
    result v6_nd_ignores_guest_dad_counted 1 0
  fi
fi
# No -R (RDMA-CM) case over IPv6: the guest's perftest 6.06 resolves and binds its rdma_cm address
# as IPv4 only. As client: "Address family for hostname not supported for fd77::2:18515"; as
# server (listening by IPv4) the guest answers droce-perf's REQ to fd77::1 with REJ reason 28
# (consumer reject). Its --ipv6-addr option is newer than 6.06 ("unrecognized option").
# rping over RDMA-CM and IPv6, both roles: the CM's REQ carries 16-byte addresses in its rdma_cm
# header and IPv6 GIDs in its path; droce-rping's client finds the guest's MAC by Neighbor
# Discovery, the guest's rdma_resolve_addr finds droce's the same way, droce-rping's server takes
# the client's from its REQ's frame.
RP6_ADDR=(--local-ip "$DROCE_IP6" --local-mac "$DROCE_MAC" --timeout 60)
rdmacm_guest_serves v6_rping_guest_server 7174 "exec rping -s -a $GUEST_IP6 -v" \
  "${RP[@]}" -c -a "$GUEST_IP6" "${RP6_ADDR[@]}" -C 10 -S 64 -v --json "$LAB_RUN/v6_rping_client.json"
rping_json_check v6_rping_guest_server_nd "$LAB_RUN/v6_rping_client.json" nd
rdmacm_droce_serves v6_rping_droce_server 'listening on' 1 "rping -c -a $DROCE_IP6 -C 10 -S 64 -v -V" \
  "${RP[@]}" -s "${RP6_ADDR[@]}" -C 10 -v --json "$LAB_RUN/v6_rping_server.json"
rping_json_check v6_rping_droce_server_mac_from_req "$LAB_RUN/v6_rping_server.json" req

# ---- the switched lab (scripts/rxe-lab/lib.sh, lab_switch_start): droce-switch is the guest's
# vhost-user peer and droce apps attach to its memif ports, so that several droce processes share
# the guest's link at once; the switch learns MACs and floods ARP requests. ----
# rping -s in the guest, droce-rping the client on the switch's port 0, its MAC for the guest found
# by ARP through the switch.
if wanted switched_rping_guest_server; then
  if lab_switch_start 2; then
    rdmacm_guest_serves switched_rping_guest_server 7174 "exec rping -s -a $GUEST_IP -v" \
      "$RPING" $(lab_switch_eal 0) -- -c -a "$GUEST_IP" "${RP_ADDR[@]}" -C 10 -S 64 -v --json "$LAB_RUN/sw_rping_client.json"
    lab_switch_stop
    lab_switch_summary
    rping_json_check switched_rping_guest_server_arp "$LAB_RUN/sw_rping_client.json" arp
  else
    result switched_rping_guest_server 1 0
  fi
fi
# Two clients of one droce-rping server at once, behind a switch that loses 0.5 % of the frames
# of every port (ARP and CM MADs too: they retry): the guest's rping (rxe: go-back-N, it offers
# nothing else) and a second droce-rping that asks for selective repeat. The server serves both;
# each connection keeps the recovery its client can do: its JSON says "gbn" for the guest's and
# "sr" for droce's, each with every ping verified. Always run: like every case here, it never
# passes without having run.
mixed_recovery_peers() {
  local name=mixed_recovery_peers t0 id rc=0 crc=0 grc=0 jrc=0
  local sj=$LAB_RUN/mixed_server.json cj=$LAB_RUN/mixed_client.json
  wanted "$name" || return 0
  t0=$(date +%s)
  echo "--- $name: switch --loss 0.005 | droce-rping -s --clients 2 --recovery sr | guest rping -c, droce-rping -c --recovery sr"
  lab_switch_start 2 --loss 0.005 --seed 7 || { result "$name" 1 $(( $(date +%s) - t0 )); return; }
  rm -f "$sj" "$cj"
  lab_droce_start "$LAB_RUN/droce.log" timeout 400 "$RPING" $(lab_switch_eal 0 "$LAB_DROCE_CPU") -- -s \
    --local-ip "$DROCE_IP" --local-mac "$DROCE_MAC" --timeout 120 --clients 2 --recovery sr -C 20 --json "$sj"
  if ! lab_wait_for 60 grep -q 'listening on' "$LAB_RUN/droce.log"; then
    echo "droce-rping's server did not listen"; sed 's/^/  /' "$LAB_RUN/droce.log"
    lab_stop_pid "$LAB_DROCE_PID" 3; LAB_DROCE_PID=; lab_switch_stop; result "$name" 1 $(( $(date +%s) - t0 )); return
  fi
  # Both clients at once: the guest's in the guest, droce's on the switch's port 1 (the other CPU).
  id=$(lab_gstart "rping -c -a $DROCE_IP -C 20 -S 64 -V")
  "$RPING" $(lab_switch_eal 1 "$LAB_SWITCH_CPU") -- -c -a "$DROCE_IP" --local-ip "$DROCE2_IP" --local-mac "$DROCE2_MAC" \
    --timeout 120 --recovery sr -C 20 -S 64 --json "$cj" < /dev/null > "$LAB_RUN/droce2.log" 2>&1 &
  LAB_DROCE2_PID=$!
  if lab_wait_for 300 eval '! lab_alive $LAB_DROCE2_PID'; then
    wait "$LAB_DROCE2_PID" || crc=$?
  else
    echo "droce-rping's client still ran after 300 s: stopped"; lab_stop_pid "$LAB_DROCE2_PID" 3; crc=124
  fi
  LAB_DROCE2_PID=
  if [ -n "$id" ]; then lab_gwait "$id" 300 > "$LAB_RUN/guest.log" 2>&1 || grc=$?; else grc=1; fi
  # A client that failed leaves the server waiting for its pings: end it now; else it ends once
  # both have disconnected.
  [ "$crc" -ne 0 ] || [ "$grc" -ne 0 ] && lab_stop_pid "$LAB_DROCE_PID" 3
  if lab_wait_for 60 eval '! lab_alive $LAB_DROCE_PID'; then
    wait "$LAB_DROCE_PID" || rc=$?
  else
    echo "droce-rping's server still ran 60 s after its clients: stopped"; lab_stop_pid "$LAB_DROCE_PID" 3; rc=124
  fi
  LAB_DROCE_PID=
  lab_switch_stop
  echo "droce-rping server (exit $rc):"; sed 's/^/  /' "$LAB_RUN/droce.log"
  echo "droce-rping client (exit $crc):"; sed 's/^/  /' "$LAB_RUN/droce2.log"
  echo "guest rping client (exit $grc):"; sed 's/^/  /' "$LAB_RUN/guest.log"
  lab_switch_summary
  /usr/bin/python3 -c "
import json, sys
try:
    s, c = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
except (OSError, ValueError) as e:
    sys.exit('no JSON report to check: %s' % e)
guest, droce = sys.argv[3], sys.argv[4]
for x in s['connections']:
    print('server: connection from %s: recovery %s, %d pings verified, %d packets retransmitted' %
          (x['peer_ip'], x['recovery'], x['pings_verified'], x['retransmitted_packets']))
print('client %s: recovery %s, %s pings verified' % (droce, c['recovery'], c.get('verified')))
by = {x['peer_ip']: x for x in s['connections']}
assert len(s['connections']) == 2 and set(by) == {guest, droce}, s['connections']
assert by[guest]['recovery'] == 'gbn' and by[droce]['recovery'] == 'sr', by
assert by[guest]['pings_verified'] == 20 and by[droce]['pings_verified'] == 20, by
assert c['recovery'] == 'sr', c['recovery']" "$sj" "$cj" "$GUEST_IP" "$DROCE2_IP" || jrc=1
  result "$name" $(( rc != 0 || crc != 0 || grc != 0 || jrc != 0 )) $(( $(date +%s) - t0 ))
}
mixed_recovery_peers

# ---- RDMA-CM on two workers against Linux (issue 41): droce's port owner (worker 0) runs the CM
# of every connection and moves worker 1's QPs through its control ring; QP i is on worker i % 2.
# Each worker sends on its own queue, so the link opens two queue pairs (boot.sh: vhost-user
# queues=2, virtio-net mq=on; net_vhost queues=2 here) and the guest uses both for these cases only
# (ethtool -L eth0 combined 2; back to 1 after, since every other droce run reads queue 0 alone and
# a frame the guest sent on queue 1 would be lost there). The guest spreads its frames over both
# queues by flow (XPS, one CPU for both), so QP1's MADs and ARP reach the port owner from either
# queue through droce's software steering. 1 % lab loss on what droce receives. Both lcores on
# LAB_DROCE_CPU: results are judged, not speed. ----
lab_droce_eal2() { echo "--lcores 0@$LAB_DROCE_CPU,1@$LAB_DROCE_CPU --no-pci --no-huge -m 512 --vdev net_vhost0,iface=$LAB_RUN/vhost.sock,queues=2"; }
if wanted w2_rping_droce_server || wanted w2_rping_droce_server_per_worker || wanted w2_rping_guest_server ||
   wanted w2_rping_guest_server_arp || wanted w2_send_bw-R-q4_droce_server; then
  # The channel change goes through virtio-net's control queue to QEMU and on to the vhost-user
  # backend: made while a placeholder backend holds the link (lab_hold_link), as at the end.
  w2_ok=0
  lab_hold_link &&
    lab_gexec_linked "ethtool -L eth0 combined 2 && ethtool -l eth0 | tail -n 5 | grep -q 'Combined:.*2'" 60 > /dev/null && w2_ok=1
  lab_release_link
  if [ "$w2_ok" -eq 1 ]; then
    RP2=("$RPING" $(lab_droce_eal2) --)
    # droce-rping serving two of the guest's rping clients at once: client i's QP on worker i.
    rdmacm_droce_serves w2_rping_droce_server 'listening on' 0 \
      "rping -c -a $DROCE_IP -C 10 -S 64 -V & p=\$!; rping -c -a $DROCE_IP -C 10 -S 64 -V; r=\$?; wait \$p && exit \$r" \
      "${RP2[@]}" -s "${RP_ADDR[@]}" --workers 2 --clients 2 -C 10 --loss 0.01 --seed 11 --json "$LAB_RUN/w2_rping_server.json"
    if wanted w2_rping_droce_server_per_worker; then
      if /usr/bin/python3 -c "import json, sys; d = json.load(open(sys.argv[1]))
assert d['ok'] and len(d['connections']) == 2 and [c['worker'] for c in d['connections']] == [0, 1], d['connections']
assert all(c['pings_verified'] == 10 and c['peer_ip'] == sys.argv[2] for c in d['connections']), d['connections']
assert d['workers'][1]['qp_commands_run'] >= 2 and all(w['qp_commands_failed'] == 0 for w in d['workers']), d['workers']
print('droce-rping: workers', d['workers'])" "$LAB_RUN/w2_rping_server.json" "$GUEST_IP"; then
        result w2_rping_droce_server_per_worker 0 0
      else
        result w2_rping_droce_server_per_worker 1 0
      fi
    fi
    # droce-rping the client on two workers against rping -s: its one QP on worker 0, the guest's
    # frames on either queue.
    rdmacm_guest_serves w2_rping_guest_server 7174 "exec rping -s -a $GUEST_IP -V" \
      "${RP2[@]}" -c -a "$GUEST_IP" "${RP_ADDR[@]}" --workers 2 -C 10 -S 64 --loss 0.01 --seed 12 \
      --json "$LAB_RUN/w2_rping_client.json"
    rping_json_check w2_rping_guest_server_arp "$LAB_RUN/w2_rping_client.json" arp
    # ib_send_bw -R -q 4 against droce-perf -R -q 4 --workers 2: the comm QP and data QPs 0 and 2 on
    # worker 0, 1 and 3 on worker 1, every one connected by the port owner's CM.
    rdmacm_droce_serves w2_send_bw-R-q4_droce_server "Waiting for client" 0 \
      "ib_send_bw -R -q 4 $X -s 4096 -n 20 $DROCE_IP" \
      "$PERF" $(lab_droce_eal2) -- send_bw -R -q 4 --workers 2 "${CM_ADDR[@]}" -s 4096 -n 20 --loss 0.01 --seed 13
  else
    echo "the guest's eth0 did not take two queue pairs (ethtool -L eth0 combined 2)"
    result w2_guest_two_queue_pairs 1 0
  fi
  lab_hold_link
  lab_gexec_linked "ethtool -L eth0 combined 1" 60 > /dev/null || echo "warning: the guest's eth0 kept two queue pairs"
  lab_release_link
fi

echo "rxe counters: $(lab_gexec 'cd /sys/class/infiniband/rxe0/ports/1/hw_counters && for f in sent_pkts rcvd_pkts duplicate_request out_of_seq_request rcvd_seq_err completer_retry_err retry_exceeded_err; do printf "%s=%s " $f $(cat $f); done' 30)"
echo "interop: ${#passed[@]} passed, ${#failed[@]} failed in $(( $(date +%s) - T0 )) s${failed[*]:+ (failed: ${failed[*]})}"
[ ${#failed[@]} -eq 0 ] && [ ${#passed[@]} -gt 0 ]
