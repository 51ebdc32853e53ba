#!/bin/bash
# Deterministic loss on the guest's RoCEv2 output: every N-th packet to UDP 4791 leaving eth0 is
# dropped (tc prio + u32 filter + gact "random determ drop N"); "off" removes it and prints the
# filter's counters first.
# usage: scripts/rxe-lab/loss.sh N | off
set -uo pipefail
source "$(dirname "$0")/lib.sh"
case "${1:-}" in
  off) lab_gexec 'tc -s filter show dev eth0 2>/dev/null | grep -E "determ|Sent|dropped" ; tc qdisc del dev eth0 root 2>/dev/null; true' 30 ;;
  ''|*[!0-9]*) lab_die "usage: loss.sh N|off (N >= 2: drop every N-th RoCEv2 packet the guest sends)" ;;
  *) [ "$1" -ge 2 ] || lab_die "N must be at least 2"
     lab_gexec "tc qdisc del dev eth0 root 2>/dev/null; tc qdisc add dev eth0 root handle 1: prio && tc filter add dev eth0 parent 1: protocol ip prio 1 u32 match ip dport 4791 0xffff action gact ok random determ drop $1" 30 ;;
esac
