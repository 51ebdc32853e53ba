#!/bin/bash
# Runs a shell command in the running lab guest (through the 9p job directory) and prints its
# output; exits with its status (124: timed out, the job was killed in the guest).
#   scripts/rxe-lab/exec.sh 'ibv_devinfo -v'               wait for it (timeout 120 s)
#   scripts/rxe-lab/exec.sh --timeout 600 'CMD'            another timeout
#   scripts/rxe-lab/exec.sh --bg 'CMD'                     start it, print the job id
#   scripts/rxe-lab/exec.sh --wait ID [TIMEOUT]            wait for a --bg job
set -uo pipefail
source "$(dirname "$0")/lib.sh"
lab_qemu_pid > /dev/null || lab_die "no lab guest running (scripts/rxe-lab/boot.sh)"
case "${1:-}" in
  --bg) lab_gstart "$2" ;;
  --wait) lab_gwait "$2" "${3:-120}" ;;
  --timeout) lab_gexec "$3" "$2" ;;
  ""|-h|--help) sed -n 2,8p "$0" ;;
  *) lab_gexec "$1" 120 ;;
esac
