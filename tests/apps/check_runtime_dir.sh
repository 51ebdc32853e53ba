#!/usr/bin/env bash
# No trail in EAL's runtime folder (/var/run/dpdk, a RAM tmpfs): droce-gen removes the runtime
# directory it made after a clean run, after an error past EAL start-up and after a SIGINT; a
# SIGKILLed run's directory is swept by the next run; with a user's --file-prefix on hugepages, the
# hugepage files stay linked for the run (dpdk-dumpcap attaches through them) and are gone after it.
#   usage: check_runtime_dir.sh DROCE_GEN
set -uo pipefail
gen=$1
out=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2> /dev/null; done
  rm -rf "$out"
}
trap cleanup EXIT
fail=0
check() {
  if eval "$2"; then echo "ok: $1"; return; fi
  echo "FAILED: $1"
  fail=1
  [ -n "${3:-}" ] && [ -f "$3" ] && tail -n 8 "$3" | sed 's/^/  /'
}
# EAL's choice of folder (DPDK 22.11 eal_create_runtime_dir), as engine/core/runtime_dir.cc makes it.
if [ "$(id -u)" -eq 0 ]; then parent=/var/run/dpdk; else parent=${XDG_RUNTIME_DIR:-/tmp}/dpdk; fi
ring=(-l 0 --no-pci --no-huge -m 256)  # EAL's own, without a --file-prefix: droce makes droce<PID>_0

# wait_for PATTERN PID: until a path matches PATTERN (true), or PID ends or 180 s pass (false). An
# event, not a time.
wait_for() {
  local i
  for ((i = 0; i < 1800; i++)); do
    compgen -G "$1" > /dev/null && return 0
    kill -0 "$2" 2> /dev/null || { compgen -G "$1" > /dev/null; return; }
    sleep 0.1
  done
  return 1
}
# finish PID: its exit status, killing it after 300 s (then 137; the first run on a machine with
# thousands of stale directories sweeps them all).
finish() {
  local i
  for ((i = 0; i < 3000; i++)); do
    kill -0 "$1" 2> /dev/null || break
    sleep 0.1
  done
  kill -9 "$1" 2> /dev/null
  wait "$1"
}

# A clean loopback run, and one that fails after EAL started (2 workers on one lcore: exit 2).
"$gen" "${ring[@]}" -- --op write --size 4096 --count 200 --quiet > "$out/clean.txt" 2>&1 &
clean=$!; pids+=("$clean")
finish "$clean"
rc=$?
check "a clean run exits 0" "[ $rc -eq 0 ]" "$out/clean.txt"
check "a clean run leaves no runtime directory" "[ ! -e '$parent/droce${clean}_0' ]"
"$gen" "${ring[@]}" -- --workers 2 --qps 2 > "$out/error.txt" 2>&1 &
error=$!; pids+=("$error")
finish "$error"
rc=$?
check "an error after EAL start-up: exit 2, the reason named" "[ $rc -eq 2 ] && grep -q 'needs 2 lcores' '$out/error.txt'" \
  "$out/error.txt"
check "an error after EAL start-up leaves no runtime directory" "[ ! -e '$parent/droce${error}_0' ]"

# A long run interrupted once its directory exists: SIGINT ends it through its exit path.
"$gen" "${ring[@]}" -- --op write --size 4096 --duration 600 --quiet > "$out/int.txt" 2>&1 &
int=$!; pids+=("$int")
check "a running run has its runtime directory" "wait_for '$parent/droce${int}_0' $int" "$out/int.txt"
kill -INT "$int"
finish "$int"
rc=$?
check "SIGINT ends the run (not killed at the bound)" "[ $rc -ne 137 ]" "$out/int.txt"
check "a SIGINTed run leaves no runtime directory" "[ ! -e '$parent/droce${int}_0' ]"

# SIGKILL runs no exit path: the directory stays until the next droce run sweeps it.
"$gen" "${ring[@]}" -- --op write --size 4096 --duration 600 --quiet > "$out/kill.txt" 2>&1 &
killed=$!; pids+=("$killed")
check "a second running run has its runtime directory" "wait_for '$parent/droce${killed}_0' $killed" "$out/kill.txt"
kill -9 "$killed"
wait "$killed" 2> /dev/null
check "a SIGKILLed run leaves its directory behind" "[ -e '$parent/droce${killed}_0' ]"
"$gen" "${ring[@]}" -- --op write --size 4096 --count 50 --quiet > "$out/next.txt" 2>&1 &
next=$!; pids+=("$next")
finish "$next"
rc=$?
check "the next run exits 0" "[ $rc -eq 0 ]" "$out/next.txt"
check "the next run swept the SIGKILLed run's directory" "[ ! -e '$parent/droce${killed}_0' ]"

# A user's --file-prefix on hugepages: no --huge-unlink, so its files exist during the run and are
# unlinked at its end, with its runtime directory.
huge_dir=$(awk '$3 == "hugetlbfs" { print $2; exit }' /proc/mounts)
free_pages=$(cat /sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages 2> /dev/null || echo 0)
if [ -n "$huge_dir" ] && [ -w "$huge_dir" ] && [ "$free_pages" -ge 128 ]; then
  prefix="h34rt$$"
  "$gen" -l 0 --no-pci --file-prefix "$prefix" -- --op write --size 4096 --duration 600 --quiet \
    > "$out/huge.txt" 2>&1 &
  huge=$!; pids+=("$huge")
  check "hugepage files of --file-prefix exist during the run" "wait_for '$huge_dir/${prefix}map_*' $huge" "$out/huge.txt"
  kill -INT "$huge"
  finish "$huge"
  check "--file-prefix run: no hugepage file left" "! ls '$huge_dir' | grep -q '^${prefix}map_'" "$out/huge.txt"
  check "--file-prefix run: no runtime directory left" "[ ! -e '$parent/$prefix' ]"
else
  echo "skipped: the --file-prefix hugepage case (no writable hugetlbfs with 128 free 2 MiB pages)"
fi

[ $fail -eq 0 ] && echo "check_runtime_dir: all passed" || echo "check_runtime_dir: FAILED"
exit $fail
