#!/bin/bash
# droce-sim's leaf-spine on both transports, each case run twice in a row: the model (the fast,
# open-loop mode) and droce's own RC transport (--transport rcqp --recovery gbn: one requester and
# one responder RcQp per rank pair). The fabric is run.sh's (non-blocking, 100 Gb/s hosts, 400 Gb/s
# uplinks, PFC, 4096-byte PMTU frames). Usage: bench/sim_scale/run_rcqp.sh [BUILD_DIR] [OUT_DIR]
# [CASE...]; each run's text report goes to stdout, its JSON to OUT_DIR/<case>-<transport>.json
# (bench/sim_scale/table.py OUT_DIR writes the comparison). CASE: allreduce64 ... incast4096.
set -euo pipefail
build=${1:-build}
out=${2:-${TMPDIR:-/tmp}/sim_scale_rcqp}
shift $(($# < 2 ? $# : 2))
mkdir -p "$out"
sim="$build/apps/droce-sim/droce-sim"
common=(--topology leafspine --link-gbps 100 --uplink-gbps 400 --packet-bytes 4158 --pfc --buffer-bytes 4M
  --duration-ms 10000)
declare -A cases=(
  [allreduce64]="--ranks 64 --leaves 4 --spines 4 --pattern allreduce --size 16M"
  [incast64]="--ranks 64 --leaves 4 --spines 4 --pattern incast --size 1M"
  [alltoall64]="--ranks 64 --leaves 4 --spines 4 --pattern alltoall --size 16M"
  [allreduce256]="--ranks 256 --leaves 8 --spines 8 --pattern allreduce --size 16M"
  [incast256]="--ranks 256 --leaves 8 --spines 8 --pattern incast --size 1M"
  [allreduce1024]="--ranks 1024 --leaves 32 --spines 8 --pattern allreduce --size 16M"
  [incast1024]="--ranks 1024 --leaves 32 --spines 8 --pattern incast --size 1M"
  [allreduce4096]="--ranks 4096 --leaves 64 --spines 16 --pattern allreduce --size 16M"
  [incast4096]="--ranks 4096 --leaves 64 --spines 16 --pattern incast --size 256K"
)
order=(allreduce64 incast64 alltoall64 allreduce256 incast256 allreduce1024 incast1024 allreduce4096 incast4096)
[ $# -eq 0 ] || order=("$@")
for name in "${order[@]}"; do
  [ -n "${cases[$name]:-}" ] || { echo "run_rcqp.sh: no case $name" >&2; exit 2; }
  read -r -a args <<< "${cases[$name]}"
  for transport in "model" "rcqp --recovery gbn"; do
    read -r -a t <<< "$transport"
    echo "\$ droce-sim ${common[*]} ${args[*]} --transport ${t[*]}"
    "$sim" "${common[@]}" "${args[@]}" --transport "${t[@]}" --json "$out/$name-${t[0]}.json"
    echo
  done
done
