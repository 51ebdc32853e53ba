#!/bin/bash
# Loss on the guest's RoCEv2 output: every N-th packet to UDP 4791 leaving eth0 is dropped (tc prio +
# u32 filters, one for IPv4 and one for IPv6, each with its own gact "random determ drop N"), or with "random" each with probability 1/N (gact's
# netrand); "off" removes it and prints the filter's counters first. The deterministic counter drops
# the same PSN in every go-back-N round whose length is a multiple of N (a replayed 1 MiB READ
# answer of 700 packets at N=100, for instance) for ever: use "random" where rounds vary.
# usage: scripts/rxe-lab/loss.sh N [random] | off
set -uo pipefail
source "$(dirname "$0")/lib.sh"
case "${1:-}" in
  off) lab_gexec 'tc -s filter show dev eth0 2>/dev/null | grep -E "determ|Sent|dropped" ; tc qdisc del dev eth0 root 2>/dev/null; true' 120 ;;
  ''|*[!0-9]*) lab_die "usage: loss.sh N [random] | off (N >= 2: drop every N-th RoCEv2 packet the guest sends, or one in N at random)" ;;
  *) [ "$1" -ge 2 ] || lab_die "N must be at least 2"
     case "${2:-}" in
       '') mode=determ ;;
       random) mode=netrand ;;
       *) lab_die "loss.sh: '$2' is not a mode (random, or nothing for every N-th)" ;;
     esac
     lab_gexec "tc qdisc del dev eth0 root 2>/dev/null; tc qdisc add dev eth0 root handle 1: prio && tc filter add dev eth0 parent 1: protocol ip prio 1 u32 match ip dport 4791 0xffff action gact ok random $mode drop $1 && tc filter add dev eth0 parent 1: protocol ipv6 prio 2 u32 match ip6 dport 4791 0xffff action gact ok random $mode drop $1" 120 ;;
esac
