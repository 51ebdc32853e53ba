#!/bin/bash
# Sets the guest's eth0 MTU and re-creates rxe0 on it: rxe takes its active_mtu (the largest IB
# MTU that fits the netdev MTU: 1500 -> 1024, 4200 -> 4096) when the link is added.
# usage: scripts/rxe-lab/mtu.sh MTU      (e.g. 4200 for path MTU 4096, 1500 to go back)
set -uo pipefail
source "$(dirname "$0")/lib.sh"
case "${1:-}" in ''|*[!0-9]*) lab_die "usage: mtu.sh MTU (576..9000)" ;; esac
[ "$1" -ge 576 ] && [ "$1" -le 9000 ] || lab_die "MTU must be in 576..9000"
lab_gexec "rdma link del rxe0 2>/dev/null; ip link set eth0 mtu $1 && rdma link add rxe0 type rxe netdev eth0 && ibv_devinfo -d rxe0 | grep -E 'active_mtu'" 60
