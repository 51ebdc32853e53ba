#!/usr/bin/env bash
# scripts/coll-mpi.sh NP [droce-coll options]: droce-coll across NP processes on this host, the way a
# cluster runs it across hosts — started by Open MPI's mpirun, each process on its own DPDK port —
# through droce-switch: NP net_memif server ports, process p's client on port p. With
# --ranks-per-process K (-g K) among the options each process holds K ranks on its port (ranks
# p*K .. p*K+K-1), so the world is NP*K; else one rank each. A /32 route to every rank's address
# (rank r: 10.0.0.(r+1)) on its process's port. The switch is up (its telemetry says "running"
# with NP ports) before mpirun starts, and stopped on every way out. Exits with droce-coll's
# status (mpirun's: rank 0's verdict, or the status a rank aborted the job with).
#
# Environment (all optional):
#   DROCE_COLL, DROCE_SWITCH   the binaries (default: build/apps/droce-coll/droce-coll, .../droce-switch)
#   COLL_MPI_TIMEOUT           seconds the whole run may take, switch included (default 600)
#   COLL_MPI_DIR               where sockets and the switch's output go (default: a new temporary dir)
#   COLL_MPI_SWITCH_ARGS       droce-switch options (e.g. "--loss 0.001 --egress-gbps 1")
#   COLL_MPI_LAST_ARGS         options for the last process only, after the others (an mpirun MPMD
#                              context: how the tests start one process with a different --size)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if [ $# -lt 1 ] || ! [[ $1 =~ ^[0-9]+$ ]] || [ "$1" -lt 2 ] || [ "$1" -gt 30 ]; then
  echo "usage: scripts/coll-mpi.sh NP [droce-coll options]   (NP 2..30: droce-switch's memif ports and DPDK's 32 ethdevs)" >&2
  exit 2
fi
np=$1
shift
# Ranks per process, as droce-coll reads it (the last one given); droce-coll checks the value.
k=1
prev=""
for a in "$@"; do
  case "$prev" in --ranks-per-process | -g) k=$a ;; esac
  case "$a" in --ranks-per-process=*) k=${a#*=} ;; esac
  prev=$a
done
if ! [[ $k =~ ^[0-9]+$ ]] || [ "$k" -lt 1 ] || [ $((np * k)) -gt 64 ]; then
  echo "coll-mpi.sh: --ranks-per-process $k: NP x K must be 1..64 ranks (droce-coll's limit)" >&2
  exit 2
fi
coll=${DROCE_COLL:-$root/build/apps/droce-coll/droce-coll}
sw=${DROCE_SWITCH:-$root/build/apps/droce-switch/droce-switch}
limit=${COLL_MPI_TIMEOUT:-600}
for b in "$coll" "$sw"; do
  [ -x "$b" ] || { echo "coll-mpi.sh: $b is not built (ninja -C build)" >&2; exit 2; }
done
command -v mpirun >/dev/null || { echo "coll-mpi.sh: no mpirun: install openmpi-bin (scripts/setup.sh)" >&2; exit 2; }
start_s=$(date +%s)

dir=${COLL_MPI_DIR:-}
own_dir=0
if [ -z "$dir" ]; then
  dir=$(mktemp -d /tmp/coll-mpi.XXXXXX)
  own_dir=1
fi
mkdir -p "$dir"
tag="collmpi$$"
swpid=""
stop_switch() {
  if [ -n "$swpid" ] && kill -0 "$swpid" 2>/dev/null; then
    kill -INT "$swpid" 2>/dev/null
    for _ in $(seq 50); do kill -0 "$swpid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$swpid" 2>/dev/null
    wait "$swpid" 2>/dev/null
  fi
  swpid=""
  rm -f "$dir"/rank*.sock
  [ $own_dir -eq 1 ] && rm -rf "$dir"
}
trap stop_switch EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The switch: one memif server per process (bsize 8192: a frame in one buffer), a route per rank,
# on the last CPU (the processes take the CPUs in turn from the first). --duration bounds it even if this
# script is killed with SIGKILL.
last_cpu=$(( $(nproc) - 1 ))
vdevs=() routes=()
for p in $(seq 0 $((np - 1))); do
  vdevs+=(--vdev "net_memif$p,role=server,socket=$dir/rank$p.sock,bsize=8192")
  for r in $(seq $((p * k)) $((p * k + k - 1))); do routes+=(--route "10.0.0.$((r + 1))/32=$p"); done
done
# shellcheck disable=SC2086
"$sw" -l "$last_cpu" --no-pci --no-huge -m 1024 --file-prefix "$tag" "${vdevs[@]}" -- "${routes[@]}" \
  --duration "$limit" --quiet ${COLL_MPI_SWITCH_ARGS:-} > "$dir/switch.txt" 2>&1 &
swpid=$!
# Ready when its telemetry says so (the commands answer from before EAL starts).
if ! python3 - "$tag" "$np" "$root/tests/apps" <<'PY'
import sys
sys.path.insert(0, sys.argv[3])
from telemetry_client import socket_path, wait_until
path = socket_path(sys.argv[1], timeout_s=60)
wait_until(path, "/droce/switch", lambda s: s is not None and s["state"] == "running" and s["ports"] == int(sys.argv[2]),
           timeout_s=60)
PY
then
  echo "coll-mpi.sh: droce-switch did not come up:" >&2
  sed 's/^/  /' "$dir/switch.txt" >&2
  exit 1
fi

# mpirun on one host without a network: shared memory between the ranks (btl vader), no binding
# (each process pins its own lcore from OMPI_COMM_WORLD_LOCAL_RANK), more processes than CPUs allowed.
mpi=(--bind-to none --oversubscribe --mca btl self,vader)
[ "$(id -u)" -eq 0 ] && mpi+=(--allow-run-as-root)
port="net_memif0,role=client,socket=$dir/rank{rank}.sock,bsize=8192"
left=$(( limit - ($(date +%s) - start_s) ))
[ $left -lt 10 ] && left=10
if [ -n "${COLL_MPI_LAST_ARGS:-}" ]; then
  # shellcheck disable=SC2086
  timeout --kill-after=10 "$left" mpirun "${mpi[@]}" -np $((np - 1)) "$coll" -- --port "$port" "$@" : \
    -np 1 "$coll" -- --port "$port" "$@" $COLL_MPI_LAST_ARGS
else
  timeout --kill-after=10 "$left" mpirun "${mpi[@]}" -np "$np" "$coll" -- --port "$port" "$@"
fi
rc=$?
exit $rc
