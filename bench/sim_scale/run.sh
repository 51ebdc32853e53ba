#!/bin/bash
# droce-sim's leaf-spine runs at 256, 1024 and 4096 ranks: ring allreduce, incast and alltoall on
# non-blocking fabrics of 100 Gb/s hosts and 400 Gb/s uplinks, PFC on, 4096-byte PMTU frames.
# Usage: bench/sim_scale/run.sh [BUILD_DIR] [OUT_DIR]; each run's text report goes to stdout, its
# JSON (with the cost: events, events/s, peak RSS per rank) to OUT_DIR/<pattern><ranks>.json.
set -euo pipefail
build=${1:-build}
out=${2:-${TMPDIR:-/tmp}/sim_scale}
mkdir -p "$out"
sim="$build/apps/droce-sim/droce-sim"
common=(--topology leafspine --link-gbps 100 --uplink-gbps 400 --packet-bytes 4158 --pfc --buffer-bytes 4M
  --duration-ms 10000)
run() {
  local name=$1
  shift
  echo "\$ droce-sim ${common[*]} $*"
  "$sim" "${common[@]}" "$@" --json "$out/$name.json"
  echo
}
run allreduce256 --ranks 256 --leaves 8 --spines 8 --pattern allreduce --size 64M
run incast256 --ranks 256 --leaves 8 --spines 8 --pattern incast --size 1M
run alltoall256 --ranks 256 --leaves 8 --spines 8 --pattern alltoall --size 16M
run allreduce1024 --ranks 1024 --leaves 32 --spines 8 --pattern allreduce --size 16M
run incast1024 --ranks 1024 --leaves 32 --spines 8 --pattern incast --size 1M
run alltoall1024 --ranks 1024 --leaves 32 --spines 8 --pattern alltoall --size 16M
run allreduce4096 --ranks 4096 --leaves 64 --spines 16 --pattern allreduce --size 16M
run incast4096 --ranks 4096 --leaves 64 --spines 16 --pattern incast --size 256K
run alltoall4096 --ranks 4096 --leaves 64 --spines 16 --pattern alltoall --size 16M
