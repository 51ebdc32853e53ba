#!/usr/bin/env bash
# droce-coll under mpirun (scripts/coll-mpi.sh): 4 processes, one rank each on its own net_memif
# port through droce-switch; 2 processes of 2 ranks each (--ranks-per-process), alltoall and
# allreduce, rank 0's JSON naming 4 ranks in 2 processes; the refusals of K against the options. alltoall clean and allreduce at 1 % loss, rank 0's JSON checked (every
# element verified on arrival and in the outputs, the sizes, busbw, every rank's process); a rank
# SIGSTOPped mid-run is named by droce (rank 0's line) and the job ends non-zero before the
# script's own bound; a rank started with another --size refuses at bootstrap naming rank and
# option (exit 2); under mpirun without --port, one line, exit 2. Judged on results, not timing.
set -uo pipefail
coll=$1
sw=$2
root=$3
if ! command -v mpirun >/dev/null; then
  echo "SKIP: no mpirun (openmpi-bin; scripts/setup.sh installs it)"
  exit 77
fi
if OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=0 "$coll" -- --size 64K 2>&1 | grep -q "built without MPI"; then
  echo "SKIP: droce-coll was built without MPI (meson -Dmpi=disabled, or no libopenmpi-dev)"
  exit 77
fi
out=$(mktemp -d)
stopped=""
cleanup() {
  # A rank left stopped would hold its CPU and socket forever: wake and end it.
  [ -n "$stopped" ] && { kill -CONT "$stopped" 2>/dev/null; kill -KILL "$stopped" 2>/dev/null; }
  rm -rf "$out"
}
trap cleanup EXIT
fail=0
check() { if eval "$2"; then echo "ok: $1"; else echo "FAILED: $1"; sed -n 1,80p "${3:-/dev/null}"; fail=1; fi; }
export DROCE_COLL=$coll DROCE_SWITCH=$sw
run() {  # NAME [droce-coll options]: sets rc; output in $out/NAME.txt
  local name=$1
  shift
  COLL_MPI_DIR="$out/$name.d" COLL_MPI_TIMEOUT=300 "$root/scripts/coll-mpi.sh" 4 "$@" > "$out/$name.txt" 2>&1
  rc=$?
}
# Rank 0's JSON: nothing wrong anywhere, the sizes asked for, busbw, every rank's process named.
verify() {  # FILE SIZE PATTERN [PROCESSES RANKS_PER_PROCESS] (default 4 x 1)
  /usr/bin/python3 - "$@" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
size, pattern = int(sys.argv[2]), sys.argv[3]
procs, per = (int(sys.argv[4]), int(sys.argv[5])) if len(sys.argv) > 5 else (4, 1)
assert d['ok'] and d['wrong'] == 0 and d['failure'] == '', (d['wrong'], d['failure'])
assert d['config']['pattern'] == pattern and d['config']['ranks'] == procs * per == 4, d['config']
assert [r['size'] for r in d['results']] == [size], d['results']
for r in d['results']:
    assert r['wrong'] == 0 and r['busbw_gbps'] > 0 and r['algbw_gbps'] > 0, r
    for k in ('out_of_place', 'in_place'):
        if k in r:
            assert r[k]['wrong'] == 0 and r[k]['wrong_on_arrival'] == 0, r[k]
            assert len(r[k]['iteration_us']['all']) == d['config']['iters'], r[k]
m = d['mpi']
assert m['processes'] == procs and m['ranks_per_process'] == per, m
assert sorted(x['rank'] for x in m['ranks']) == [0, 1, 2, 3], m
# rank = process x K + local index; each process its own pid, its ranks sharing it.
assert all(x['process'] == x['rank'] // per for x in m['ranks']), m
assert len({x['pid'] for x in m['ranks']}) == procs, m
for p in range(procs):
    assert len({x['pid'] for x in m['ranks'] if x['process'] == p}) == 1, m
# Ranks of one process talk through it (looped), never back out of the switch port they came in on.
assert (m['looped_frames'] > 0) == (per > 1), m
assert d['hw_counters']['sent_pkts'] > 0 and d['hw_counters']['rcvd_pkts'] > 0, d['hw_counters']
print('retransmitted', sum(r[k]['retransmitted_packets'] for r in d['results'] for k in ('out_of_place', 'in_place') if k in r))
PY
}

# Five busy-polling processes (four ranks and the switch) share two cores with the other tests: a
# rank descheduled for a few hundred ms is not loss. Each local ACK timeout without progress spends
# a retry, and 8 of perftest's 67 ms end a QP after half a second of such silence (CI's ASan pass
# met it at 1 % loss). Loss recovery runs on the adaptive RTO and tail probes, which spend no
# retry, so a 1.07 s timeout (18) changes only how long a silence must be to fail a QP.
busy=(--qp-timeout 18)
run a2a --pattern alltoall --size 1M --iters 5 --warmup_iters 1 --timeout 60 "${busy[@]}" --json "$out/a2a.json"
check "alltoall, 4 processes through droce-switch: exit 0, rank 0's JSON verified" \
  "[ $rc -eq 0 ] && verify $out/a2a.json 1048576 alltoall" "$out/a2a.txt"

COLL_MPI_SWITCH_ARGS="--loss 0.01 --seed 3" run ar --pattern allreduce --size 1M --iters 5 --warmup_iters 1 \
  --timeout 60 "${busy[@]}" --json "$out/ar.json"
check "allreduce (ring, out of place and in place) at 1 % loss: exit 0, every element verified, frames resent" \
  "[ $rc -eq 0 ] && verify $out/ar.json 1048576 allreduce | tee $out/ar.retx && ! grep -qx 'retransmitted 0' $out/ar.retx" \
  "$out/ar.txt"

# Two processes of two ranks each (--ranks-per-process 2, the -g of nccl-tests): each process's
# ranks on its one port, frames between them looped in the process, the others through the switch.
COLL_MPI_DIR="$out/k2a.d" COLL_MPI_TIMEOUT=300 "$root/scripts/coll-mpi.sh" 2 --ranks-per-process 2 --pattern alltoall \
  --size 1M --iters 5 --warmup_iters 1 --timeout 60 "${busy[@]}" --json "$out/k2a.json" > "$out/k2a.txt" 2>&1
rc=$?
check "alltoall, 2 processes x 2 ranks: exit 0, rank 0's JSON names 4 ranks in 2 processes, every element verified" \
  "[ $rc -eq 0 ] && verify $out/k2a.json 1048576 alltoall 2 2" "$out/k2a.txt"
COLL_MPI_DIR="$out/k2r.d" COLL_MPI_TIMEOUT=300 "$root/scripts/coll-mpi.sh" 2 -g 2 --pattern allreduce \
  --size 1M --iters 5 --warmup_iters 1 --timeout 60 "${busy[@]}" --json "$out/k2r.json" > "$out/k2r.txt" 2>&1
rc=$?
check "allreduce (ring, out of place and in place), 2 processes x 2 ranks (-g 2): exit 0, every element verified" \
  "[ $rc -eq 0 ] && verify $out/k2r.json 1048576 allreduce 2 2" "$out/k2r.txt"

# A rank stopped (SIGSTOP) mid-run: its pid by the run's own socket directory and its rank's
# environment. The job has iterations for minutes; it must end by droce's verdict, not by the bound.
COLL_MPI_DIR="$out/stop.d" COLL_MPI_TIMEOUT=240 "$root/scripts/coll-mpi.sh" 4 --pattern allreduce --size 256K \
  --iters 1000000 --warmup_iters 0 --timeout 10 > "$out/stop.txt" 2>&1 &
job=$!
for _ in $(seq 600); do grep -q "^#       size" "$out/stop.txt" 2>/dev/null && break; sleep 0.1; done
for p in $(pgrep -f "socket=$out/stop.d/rank"); do
  tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null | grep -qx OMPI_COMM_WORLD_RANK=2 && stopped=$p
done
t0=$(date +%s)
[ -n "$stopped" ] && kill -STOP "$stopped"
wait $job
rc=$?
took=$(( $(date +%s) - t0 ))
echo "stopped pid ${stopped:-none}; the job ended $took s later with status $rc"
check "a SIGSTOPped rank: the job ends non-zero by droce's verdict naming rank 2 (not the script's bound)" \
  "[ -n '$stopped' ] && [ $rc -ne 0 ] && [ $rc -ne 124 ] && [ $rc -ne 137 ] && \
   grep -E '^droce-coll: rank 2 stopped: no word from its process \(pid $stopped ' $out/stop.txt" "$out/stop.txt"
kill -CONT "$stopped" 2>/dev/null
kill -KILL "$stopped" 2>/dev/null
stopped=""

COLL_MPI_LAST_ARGS="--size 128K" run mismatch --pattern alltoall --size 64K --iters 2 --timeout 60
check "the last rank given another --size: exit 2 at bootstrap, naming rank 3 and --size" \
  "[ $rc -eq 2 ] && grep -qx 'droce-coll: bootstrap: rank 3 runs with --minbytes (--size) 131072, rank 0 with 65536: every rank needs the same parameters' $out/mismatch.txt" \
  "$out/mismatch.txt"

# Under mpirun (its environment) without a port of its own: one line naming --port, exit 2.
OMPI_COMM_WORLD_SIZE=4 OMPI_COMM_WORLD_RANK=0 "$coll" -- --size 64K > "$out/noport.txt" 2>&1
rc=$?
check "under mpirun without --port: one line, exit 2" \
  "[ $rc -eq 2 ] && [ \$(wc -l < $out/noport.txt) -eq 1 ] && grep -q -- '--port DEVARGS' $out/noport.txt" "$out/noport.txt"
OMPI_COMM_WORLD_SIZE=4 OMPI_COMM_WORLD_RANK=0 "$coll" -- --size 64K --port net_null0 --loss 0.01 > "$out/lab.txt" 2>&1
rc=$?
check "under mpirun with a lab-only option (--loss): one line naming it, exit 2" \
  "[ $rc -eq 2 ] && [ \$(wc -l < $out/lab.txt) -eq 1 ] && grep -q -- '^droce-coll: --loss: ' $out/lab.txt" "$out/lab.txt"
# --ranks-per-process against what the other options say: one line naming it, exit 2, before MPI.
OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=0 "$coll" -- --size 64K --port net_null0 --ranks-per-process 2 \
  --ranks 5 > "$out/kdiv.txt" 2>&1
rc=$?
check "--ranks 5 with --ranks-per-process 2: one line, exit 2" \
  "[ $rc -eq 2 ] && [ \$(wc -l < $out/kdiv.txt) -eq 1 ] && \
   grep -qx 'droce-coll: --ranks 5: not a multiple of --ranks-per-process 2 (every process holds 2 ranks)' $out/kdiv.txt" \
  "$out/kdiv.txt"
OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=0 "$coll" -- --size 64K --port net_null0 -g 2 --ranks 6 > "$out/knp.txt" 2>&1
rc=$?
check "--ranks 6 with -g 2 under -np 2: one line naming -np 3, exit 2" \
  "[ $rc -eq 2 ] && [ \$(wc -l < $out/knp.txt) -eq 1 ] && grep -q -- '^droce-coll: --ranks 6: .*(-np 3 for 6)' $out/knp.txt" \
  "$out/knp.txt"
"$root/scripts/coll-mpi.sh" 20 -g 4 --size 64K > "$out/kmax.txt" 2>&1
rc=$?
check "coll-mpi.sh 20 -g 4 (80 ranks): one line, exit 2, no switch started" \
  "[ $rc -eq 2 ] && [ \$(wc -l < $out/kmax.txt) -eq 1 ]" "$out/kmax.txt"
"$coll" -- --size 64K -g 2 > "$out/knompi.txt" 2>&1
rc=$?
check "--ranks-per-process outside mpirun: one line, exit 2" \
  "[ $rc -eq 2 ] && [ \$(wc -l < $out/knompi.txt) -eq 1 ] && grep -q -- '^droce-coll: --ranks-per-process: ' $out/knompi.txt" \
  "$out/knompi.txt"
# Explicit EAL options reach every process unchanged: a --file-prefix on a host of two is refused.
OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_LOCAL_SIZE=2 "$coll" --no-pci --file-prefix same \
  -- --size 64K --port net_null0 > "$out/prefix.txt" 2>&1
rc=$?
check "under mpirun, two processes on a host given one --file-prefix: one line, exit 2" \
  "[ $rc -eq 2 ] && [ \$(wc -l < $out/prefix.txt) -eq 1 ] && grep -q -- '^droce-coll: --file-prefix: ' $out/prefix.txt" \
  "$out/prefix.txt"
"$coll" -- --size 64K --port net_null0 > "$out/nompi.txt" 2>&1
rc=$?
check "--port outside mpirun: one line, exit 2" "[ $rc -eq 2 ] && [ \$(wc -l < $out/nompi.txt) -eq 1 ]" "$out/nompi.txt"
exit $fail
