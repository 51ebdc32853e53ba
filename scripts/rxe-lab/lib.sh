# Shared helpers of the Soft-RoCE (rdma_rxe) interop lab; sourced by the other scripts here.
#
# The lab: one QEMU guest built from Debian packages, running the Linux kernel's rxe driver and
# the rdma-core / perftest tools, wired to droce on this host:
#
#   droce (DPDK net_vhost, vhost-user SERVER, $LAB_RUN/vhost.sock) ==== guest eth0 10.0.77.1, rxe0
#   host 127.0.0.1:$LAB_OOB_HOSTFWD  --QEMU hostfwd-->  guest mgmt0:18515   (guest tool as OOB server)
#   guest 10.0.2.100:18515  --QEMU guestfwd (one socat per connection)-->  host 127.0.0.1:$LAB_OOB_HOST
#                                                        (droce as OOB server, guest tool as client)
#
# Guest addresses (fixed; the guest's /init takes them from the kernel command line):
#   eth0  52:54:00:77:00:01  10.0.77.1/24  rxe0 port 1: RoCE v2 GIDs ::ffff:10.0.77.1, fd77::1 and
#                            fd77::1/64    the link-local fe80::...; their indexes come from the guest
#                                          (lab_gid_index), never assumed
#   mgmt0 52:54:00:77:01:01  10.0.2.15     QEMU user networking, restrict=on
#   droce 02:00:00:77:00:03  10.0.77.3     found by ARP (droce answers it); LAB_STATIC_NEIGH=1 at boot
#                                          gives the guest a permanent neighbour entry instead
#   droce 02:00:00:77:00:03  fd77::2       the same droce over IPv6, found by Neighbor Discovery
#   droce 02:00:00:77:00:04  10.0.77.4     a second droce process, on the switched lab only
#
# The switched lab: droce-switch owns the guest's vhost-user socket instead, and droce processes
# attach to its memif server ports (lab_switch_start, lab_switch_eal below), so that several of
# them share the guest's link (and each other's, through the switch's MAC learning):
#
#   guest eth0 ==== $LAB_RUN/vhost.sock [droce-switch] $LAB_RUN/sw0.sock, sw1.sock ... ==== droce apps
set -o pipefail

LAB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$LAB_DIR/../.." && pwd)
LAB_CACHE=${LAB_CACHE:-$REPO/.cache/rxe-lab}
LAB_RUN=${LAB_RUN:-/tmp/droce-rxe-lab}
LAB_SHARE=$LAB_RUN/share            # 9p share; the guest runs $LAB_SHARE/jobs/*.sh
LAB_JOBS=$LAB_SHARE/jobs
LAB_ACCEL=${ACCEL:-tcg}             # KVM on this kind of nested host never boots the kernel; ACCEL=kvm retries it
LAB_MEM=${LAB_MEM:-1024}            # MiB; also the size of the memfd vhost-user maps
LAB_OOB_HOSTFWD=${LAB_OOB_HOSTFWD:-28515}   # host port forwarded to the guest's 18515
LAB_OOB_HOST=${LAB_OOB_HOST:-18515}         # host port the guest reaches as 10.0.2.100:18515
LAB_MTU=${LAB_MTU:-1500}            # guest eth0 MTU at boot (4200 gives rxe active_mtu 4096)
GUEST_IP=10.0.77.1 GUEST_MAC=52:54:00:77:00:01 GUEST_MGMT_MAC=52:54:00:77:01:01
GUEST_IP6=fd77::1                   # unique-local (RFC 4193), /64 on the guest's eth0
DROCE_IP=10.0.77.3 DROCE_MAC=02:00:00:77:00:03
DROCE_IP6=fd77::2
DROCE2_IP=10.0.77.4 DROCE2_MAC=02:00:00:77:00:04   # a second droce process (switched lab)
GUEST_OOB_ADDR=10.0.2.100           # the guestfwd address (droce's OOB server, seen from the guest)

lab_log() { printf '[rxe-lab %s] %s\n' "$(date +%T)" "$*" >&2; }
lab_die() { lab_log "ERROR: $*"; exit 1; }
# lab_trace_start NAME / lab_trace STEP: with LAB_TRACE=1 (run_interop.sh's INTEROP_TRACE=1), one
# line on stderr per step of a case: the wall clock and the seconds since lab_trace_start, so that
# a case's time can be split into its steps. Bash builtins only ($EPOCHREALTIME): no process.
LAB_TRACE=${LAB_TRACE:-0}
LAB_TRACE_T0= LAB_TRACE_NAME=
lab_trace_start() { LAB_TRACE_T0=${EPOCHREALTIME/./} LAB_TRACE_NAME=$1; lab_trace "start"; }
lab_trace() {
  [ "$LAB_TRACE" = 1 ] || return 0
  local now=${EPOCHREALTIME/./} d
  d=$(( now - ${LAB_TRACE_T0:-$now} ))
  printf '[trace %(%T)T +%d.%03d] %s: %s\n' "${now:0:-6}" $(( d / 1000000 )) $(( d % 1000000 / 1000 )) "${LAB_TRACE_NAME:--}" "$*" >&"${LAB_TRACE_FD:-2}"
}
lab_need() { command -v "$1" >/dev/null 2>&1 || lab_die "missing host tool '$1' (apt-get install $2; scripts/setup.sh installs it)"; }

# lab_wait_for SECONDS COMMAND...: polls COMMAND every LAB_POLL_S (0.05 s) until it succeeds; 1 on
# timeout. Each step of a case waits on the one before it: a coarse poll adds half its period to
# every step (0.2 s cost a case about a second), and a host `sleep` is cheap beside the guest.
LAB_POLL_S=${LAB_POLL_S:-0.05}
lab_wait_for() {
  local t=$1 end; shift
  end=$(( EPOCHSECONDS + t ))
  until "$@"; do
    (( EPOCHSECONDS >= end )) && return 1
    sleep "$LAB_POLL_S"
  done
}

# lab_qemu_pid: the running guest's QEMU PID, or nothing. Builtins only: lab_gwait asks it at
# every poll.
lab_qemu_pid() {
  local p= c=
  { read -r p < "$LAB_RUN/qemu.pid"; } 2>/dev/null || return 1
  [ -n "$p" ] && kill -0 "$p" 2>/dev/null && { read -r c < "/proc/$p/comm"; } 2>/dev/null && [ "$c" = qemu-system-x86 ] && echo "$p"
}

# ---- commands in the guest: the 9p job directory (see guest-init.sh) ----
# lab_gstart 'shell commands' -> prints a job id; the guest runs it in the background.
lab_gstart() {
  local id d=$LAB_JOBS
  id=$(date +%s%N)
  printf '%s\n' "$*" > "$d/.$id.tmp" && mv "$d/.$id.tmp" "$d/$id.sh" || return 1
  lab_trace "guest job $id queued"
  echo "$id"
}
# lab_gwait ID [TIMEOUT_S]: waits for the job, prints its output, returns its exit status (124 on
# timeout; the job is then killed in the guest through its pid file).
lab_gwait() {
  local id=$1 t=${2:-120} d=$LAB_JOBS end
  end=$(( EPOCHSECONDS + t ))
  while [ ! -s "$d/$id.rc" ]; do
    if (( EPOCHSECONDS >= end )); then
      lab_log "guest job $id timed out after ${t}s"
      cat "$d/$id.out" 2>/dev/null
      lab_gkill "$id"
      return 124
    fi
    lab_qemu_pid > /dev/null || { lab_log "the guest is gone (job $id)"; cat "$d/$id.out" 2>/dev/null; return 125; }
    sleep "$LAB_POLL_S"
  done
  lab_trace "guest job $id done (exit $(cat "$d/$id.rc"))"
  cat "$d/$id.out"
  return "$(cat "$d/$id.rc")"
}
# lab_gkill ID: ends a running guest job (its process group, by the PID the agent recorded).
lab_gkill() { [ -e "$LAB_JOBS/$1.pid" ] && printf 'kill -TERM -- -%s 2>/dev/null\n' "$(cat "$LAB_JOBS/$1.pid")" > "$LAB_JOBS/.k$1.tmp" && mv "$LAB_JOBS/.k$1.tmp" "$LAB_JOBS/k$1.sh"; return 0; }
# lab_gexec 'shell commands' [TIMEOUT_S]
lab_gexec() { local id; id=$(lab_gstart "$1") || return 1; lab_gwait "$id" "${2:-120}"; }
# Shell functions for guest jobs (put LAB_GFUNCS first in the job). Each process started in the
# guest costs a fork and an exec on its one emulated CPU, and a poll that starts processes steals
# that CPU from the tool the case waits for: these poll with bash builtins only, every 50 ms.
#   g_sleep_ms MS             a wait without `sleep` (read -t on a fifo nobody writes)
#   g_until SECONDS MS CMD... CMD every MS ms until it succeeds; 1 after SECONDS
#   g_link_up                 eth0 has carrier and rxe0 port 1 is ACTIVE; G_LINK says what they were
#   g_tcp_listens HEXPORT     a TCP socket listens on the port (/proc/net/tcp, tcp6; hex, 4 digits)
LAB_GFUNCS='[ -p /run/lab.tick ] || mkfifo /run/lab.tick 2>/dev/null
g_sleep_ms() { local f=00$(( $1 % 1000 )); read -t "$(( $1 / 1000 )).${f: -3}" <> /run/lab.tick; return 0; }
g_until() { local n=$(( $1 * 1000 / $2 )) ms=$2; shift 2; until "$@"; do (( n-- > 0 )) || return 1; g_sleep_ms "$ms"; done; }
g_link_up() { local c= s=; { read -r c < /sys/class/net/eth0/carrier; read -r s < /sys/class/infiniband/rxe0/ports/1/state; } 2>/dev/null; G_LINK="carrier=$c rxe0=$s"; [ "$c" = 1 ] && [[ $s == *ACTIVE* ]]; }
g_tcp_listens() { local f a st; for f in /proc/net/tcp /proc/net/tcp6; do while read -r _ a _ st _; do [ "$st" = 0A ] && [ "${a##*:}" = "$1" ] && return 0; done < "$f"; done; return 1; }'
# lab_gtcp_listens PORT: the guest-side test (for lab_gserve_start) that a TCP port listens in the guest.
lab_gtcp_listens() { printf 'g_tcp_listens %04X' "$1"; }
# lab_glinkwait [TIMEOUT_S]: until the guest's eth0 has carrier and rxe0 port 1 is ACTIVE (a
# vhost-user backend is connected).
lab_glinkwait() {
  lab_gexec "$LAB_GFUNCS
g_until ${1:-30} 50 g_link_up && exit 0; echo \"\$G_LINK\"; exit 1" $(( ${1:-30} + 30 )) && lab_trace "guest link up"
}
# lab_gexec_linked 'CMD' [TIMEOUT_S]: CMD in the guest once the link is up (at most 30 s), as one job.
lab_gexec_linked() {
  lab_gexec "$LAB_GFUNCS
g_until 30 50 g_link_up || { echo \"lab: the guest link did not come up (\$G_LINK)\"; exit 90; }
$1" "${2:-120}"
}
# The steps of one guest tool that serves, as one guest job (a job per step cost a bash start and
# a poll each): wait for the link, start the tool in the background, poll until it listens
# (LISTENS, a guest-side test such as `lab_gtcp_listens PORT`), say so by a marker file, and wait
# for the tool: the job's status is the tool's. A tool that exits before it listens ends the job at once with its status.
# LISTENS is polled every POLL_MS (default 50; a test that starts processes, such as `rdma res`,
# wants longer). lab_gserve_script MARKER LISTENS 'COMMAND' [POLL_MS]: prints the job.
lab_gserve_script() {
  printf '%s\n' "$LAB_GFUNCS" 'g_until 30 50 g_link_up || { echo "lab: the guest link did not come up ($G_LINK)"; exit 90; }' \
    "{ $3
} &" 'lab_tool=$!' "lab_ready() { $2 || ! kill -0 \$lab_tool 2>/dev/null; }" \
    "g_until 60 ${4:-50} lab_ready || { echo 'lab: the tool did not listen within 60 s'; kill -TERM \$lab_tool; wait \$lab_tool; exit 91; }" \
    "kill -0 \$lab_tool 2>/dev/null && : > /host/jobs/$1" 'wait $lab_tool'
}
# The guest tool as the client, as one job: wait for the host's go (GO: droce listens), then for
# the link, then run COMMAND in the job's shell (so that its `exit` and `exec` are the job's).
# lab_gclient_script GO 'COMMAND': prints the job.
lab_gclient_script() {
  printf '%s\n' "$LAB_GFUNCS" \
    "g_until 120 50 test -e /host/jobs/$1 || { echo 'lab: no go from the host within 120 s'; exit 92; }" \
    'g_until 30 50 g_link_up || { echo "lab: the guest link did not come up ($G_LINK)"; exit 90; }' "$2"
}
# lab_gname: a fresh name for a marker or go file in the job directory (not a job: no .sh).
lab_gname() { echo "m${EPOCHREALTIME/./}.$RANDOM"; }
# lab_ggo NAME: the host's go to a job waiting for it.
lab_ggo() { : > "$LAB_JOBS/$1"; lab_trace "go $1"; }
# lab_gserve_start LISTENS 'COMMAND' [POLL_MS]: queues the job of lab_gserve_script, then
# holds the link up (lab_hold_link: perftest refuses a port that is down) while it starts; its id
# in LAB_GSERVE_ID. The guest starts the job while the placeholder's EAL comes up. 1 (with the
# job ended) if the placeholder did not start.
lab_gserve_start() {
  LAB_GSERVE_MARK=$(lab_gname)
  LAB_GSERVE_ID=$(lab_gstart "$(lab_gserve_script "$LAB_GSERVE_MARK" "$1" "$2" "${3:-}")") || return 1
  lab_hold_link || { lab_gkill "$LAB_GSERVE_ID"; lab_gwait "$LAB_GSERVE_ID" 15; return 1; }
}
# lab_gserve_wait [TIMEOUT_S]: until the tool listens (the job's marker; default 120 s); the
# placeholder still holds the link: start the droce app, then lab_handover_link. 1 if the job ended
# first or the time ran out: its output printed, the job ended and awaited, the link released.
lab_gserve_wait() {
  local id=$LAB_GSERVE_ID
  if lab_wait_for "${1:-120}" eval '[ -e "$LAB_JOBS/$LAB_GSERVE_MARK" ] || [ -s "$LAB_JOBS/$LAB_GSERVE_ID.rc" ] || ! lab_qemu_pid > /dev/null' &&
     [ -e "$LAB_JOBS/$LAB_GSERVE_MARK" ]; then
    lab_trace "the guest tool listens"
    return 0
  fi
  lab_release_link
  lab_gkill "$id"
  lab_gwait "$id" 15
  return 1
}

# lab_gid_index ADDRESS: the index of the guest rxe0 port 1's RoCE v2 GID for ADDRESS (an IPv4
# address as its ::ffff:a.b.c.d GID). The table grows with the guest's addresses (the link-local,
# the IPv4-mapped, the ULA) in the order the kernel adds them: read from sysfs (gids/N and
# gid_attrs/types/N), not assumed. 1 when no such GID.
lab_gid_index() {
  local want
  want=$(/usr/bin/python3 -c 'import ipaddress, sys
a = ipaddress.ip_address(sys.argv[1])
print((ipaddress.IPv6Address("::ffff:" + str(a)) if a.version == 4 else a).exploded)' "$1") || return 1
  # One grep over the whole table (rxe has 1024 slots: a process per slot is minutes under TCG).
  lab_gexec "cd /sys/class/infiniband/rxe0/ports/1/gids || exit 1; for i in \$(grep -lx $want * | sort -n); do [ \"\$(cat ../gid_attrs/types/\$i 2>/dev/null)\" = 'RoCE v2' ] && { echo \$i; exit 0; }; done; exit 1" 180
}

# ---- host processes, ended by PID only ----
# lab_alive PID: the process exists and is not a zombie.
lab_alive() { local s; s=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) && [ -n "$s" ] && [ "$s" != Z ]; }
# lab_stop_pid PID [GRACE_S]: SIGINT, then SIGTERM, then SIGKILL, waiting GRACE_S after each.
lab_stop_pid() {
  local p=$1 g=${2:-5} sig
  [ -n "$p" ] || return 0
  for sig in INT TERM KILL; do
    lab_alive "$p" || break
    kill -"$sig" "$p" 2>/dev/null
    lab_wait_for "$g" eval "! lab_alive $p" && break
  done
  wait "$p" 2>/dev/null || true
  return 0
}

# ---- droce on the lab link ----
LAB_DROCE_BUILD=${DROCE_BUILD:-$REPO/build}
DROCE_ECHO=${DROCE_ECHO:-$LAB_DROCE_BUILD/apps/droce-echo/droce-echo}
LAB_DROCE_CPU=${LAB_DROCE_CPU:-$(( $(nproc) - 1 ))}
# EAL options that put a droce app on the lab link: the vhost-user server the guest's QEMU
# (re)connects to. No hugepages, so that a run never depends on what other processes hold: the
# vhost PMD maps the guest's memfd RAM.
lab_droce_eal() { echo "-l $LAB_DROCE_CPU --no-pci --no-huge -m 512 --vdev net_vhost0,iface=$LAB_RUN/vhost.sock,queues=1"; }
# lab_droce_start LOG CMD...: starts a droce app (given lab_droce_eal) in the background of this
# shell (so that `wait "$LAB_DROCE_PID"` gives its exit status). A socket file left by an app that
# was killed would make the next bind fail: removed first.
# While the lab switch runs, the socket is the switch's and the app is a memif client: left alone.
lab_droce_start() {
  local log=$1; shift
  lab_switch_running || rm -f "$LAB_RUN/vhost.sock"
  "$@" < /dev/null > "$log" 2>&1 &
  LAB_DROCE_PID=$!
  lab_trace "droce started (pid $LAB_DROCE_PID)"
}

# The guest's link is up only while a vhost-user server is connected, and some tools refuse to
# start on a port that is down (perftest: "Port number 1 state is Down"). lab_hold_link runs
# droce-echo as a placeholder server that only keeps the link up (the guest sees carrier, rxe0
# ACTIVE) until lab_release_link. The placeholder's socket is $LAB_RUN/holder.sock and vhost.sock
# a symbolic link to it (QEMU's connect follows it): a droce app started while the placeholder
# still holds the link removes the link and binds vhost.sock itself, and lab_handover_link stops
# the placeholder only once it has (the placeholder's exit unlinks holder.sock, its own path),
# so that the app's EAL start-up is not added to the case. QEMU reconnects 1 s after the
# placeholder's end (its reconnect=1; the socket is then there, not a second later).
# While the lab switch runs, the switch is that server and holds the link: nothing to do.
lab_hold_link() {
  lab_switch_running && return 0
  rm -f "$LAB_RUN/holder.sock" "$LAB_RUN/vhost.sock"
  "$DROCE_ECHO" -l "$LAB_DROCE_CPU" --no-pci --no-huge -m 512 --vdev "net_vhost0,iface=$LAB_RUN/holder.sock,queues=1" -- \
    --mode server --oob-port 0 --timeout 900 < /dev/null > "$LAB_RUN/holder.log" 2>&1 &
  LAB_HOLDER_PID=$!
  echo "$LAB_HOLDER_PID" > "$LAB_RUN/holder.pid"
  ln -s holder.sock "$LAB_RUN/vhost.sock"
  lab_trace "holder started (pid $LAB_HOLDER_PID)"
  lab_wait_for 30 test -S "$LAB_RUN/holder.sock" || { cat "$LAB_RUN/holder.log" >&2; lab_release_link; return 1; }
  lab_trace "holder's vhost-user socket up"
}
lab_release_link() {
  [ -n "${LAB_HOLDER_PID:-}" ] && lab_stop_pid "$LAB_HOLDER_PID" 3 && lab_trace "holder stopped"
  LAB_HOLDER_PID=
  rm -f "$LAB_RUN/holder.pid" "$LAB_RUN/holder.sock"
  [ -L "$LAB_RUN/vhost.sock" ] && rm -f "$LAB_RUN/vhost.sock"
  return 0
}
# lab_handover_link: right after lab_droce_start, while the placeholder holds the link: once the
# app's vhost-user socket is there (or the app ended; at most 30 s), the placeholder stops.
lab_handover_link() {
  [ -n "${LAB_HOLDER_PID:-}" ] || return 0
  lab_wait_for 30 eval '[ -S "$LAB_RUN/vhost.sock" ] && [ ! -L "$LAB_RUN/vhost.sock" ] || ! lab_alive "$LAB_DROCE_PID"'
  lab_trace "droce's vhost-user socket up"
  lab_release_link
}

# ---- the lab switch: several droce processes on the lab link at once ----
# droce-switch (apps/droce-switch) is the vhost-user server of the guest's link (net_vhost, the
# socket droce apps use otherwise) and the memif server of K more ports, $LAB_RUN/sw0.sock ..
# sw<K-1>.sock; it forwards by MAC learning and floods what it has not learnt (ARP requests), so
# the guest and every droce app attached to it reach each other. Its own CPU (LAB_SWITCH_CPU),
# the droce apps' on LAB_DROCE_CPU; no hugepages, as lab_droce_eal.
LAB_SWITCH=${DROCE_SWITCH:-$LAB_DROCE_BUILD/apps/droce-switch/droce-switch}
LAB_SWITCH_CPU=${LAB_SWITCH_CPU:-0}
LAB_SWITCH_PID=
# lab_switch_running: the switch this shell started is alive.
lab_switch_running() { [ -n "${LAB_SWITCH_PID:-}" ] && lab_alive "$LAB_SWITCH_PID"; }
# lab_switch_sock N: the memif socket of the switch's port N (N from 0).
lab_switch_sock() { echo "$LAB_RUN/sw$1.sock"; }
# lab_switch_eal N [CPU]: EAL options that put a droce app on the switch's memif port N (a memif
# client; the switch is the server), on CPU (default LAB_DROCE_CPU).
lab_switch_eal() { echo "-l ${2:-$LAB_DROCE_CPU} --no-pci --no-huge -m 512 --vdev net_memif0,role=client,socket=$(lab_switch_sock "$1")"; }
# lab_switch_start K [SWITCH OPTIONS...]: starts droce-switch with the guest's vhost-user port and
# K memif ports (1..8), options such as --loss P --seed S passed on; its report goes to
# $LAB_RUN/switch.json when it stops (lab_switch_stop), its output to $LAB_RUN/switch.log. Waits
# (bounded) until the switch forwards and the guest's link is up (carrier, rxe0 ACTIVE); 1 if not,
# with the switch stopped. The switch ends by itself after an hour (--duration) should nobody
# stop it; stdbuf: its "ready" line reaches the log at once, not at exit.
lab_switch_start() {
  local k=$1 i vdevs; shift
  case "$k" in [1-8]) ;; *) lab_log "lab_switch_start: 1..8 memif ports, not '$k'"; return 1;; esac
  [ -x "$LAB_SWITCH" ] || { lab_log "droce-switch is not built ($LAB_SWITCH)"; return 1; }
  lab_switch_stop
  lab_release_link   # a placeholder on the vhost-user socket would keep the switch off it
  rm -f "$LAB_RUN/vhost.sock" "$LAB_RUN/switch.json"
  vdevs=(--vdev "net_vhost0,iface=$LAB_RUN/vhost.sock,queues=1")
  for (( i = 0; i < k; i++ )); do
    rm -f "$(lab_switch_sock "$i")"
    vdevs+=(--vdev "net_memif$i,role=server,socket=$(lab_switch_sock "$i")")
  done
  stdbuf -oL "$LAB_SWITCH" -l "$LAB_SWITCH_CPU" --no-pci --no-huge -m 512 "${vdevs[@]}" -- \
    --duration 3600 --quiet --json "$LAB_RUN/switch.json" "$@" < /dev/null > "$LAB_RUN/switch.log" 2>&1 &
  LAB_SWITCH_PID=$!
  echo "$LAB_SWITCH_PID" > "$LAB_RUN/switch.pid"
  if ! lab_wait_for 60 grep -qs 'ports, Ctrl-C to stop' "$LAB_RUN/switch.log"; then
    lab_log "droce-switch did not start:"; sed 's/^/  /' "$LAB_RUN/switch.log" >&2
    lab_switch_stop; return 1
  fi
  if ! lab_glinkwait 30 > /dev/null; then
    lab_log "the guest link did not come up behind droce-switch"; lab_switch_stop; return 1
  fi
}
# lab_switch_stop: stops the switch (SIGINT: it writes its report), removes its sockets. The
# guest's link goes down with it.
lab_switch_stop() {
  [ -n "${LAB_SWITCH_PID:-}" ] && lab_stop_pid "$LAB_SWITCH_PID" 5
  LAB_SWITCH_PID=
  rm -f "$LAB_RUN/switch.pid" "$LAB_RUN"/sw[0-9].sock
}
# lab_switch_summary: one line per switch port from the report of the last stopped switch (port 0
# the guest's link, port N+1 memif port N): frames received, sent, lost to --loss, flooded.
lab_switch_summary() {
  /usr/bin/python3 -c "import json, sys
for i, p in enumerate(json.load(open(sys.argv[1]))['ports']):
    print('switch port %d (%s): rx %d tx %d lost %d flooded %d' % (i, 'guest' if i == 0 else 'memif %d' % (i - 1),
          p['rx_frames'], p['tx_frames'], p.get('impairment', {}).get('dropped', 0), p.get('flooded', 0)))" "$LAB_RUN/switch.json"
}
