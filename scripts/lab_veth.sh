#!/usr/bin/env bash
# A kernel-visible lab for droce: a veth pair between two network namespaces, one droce process
# in each on net_af_packet. The veth ends also get kernel addresses so the TCP connection
# exchange (--oob-host) reaches the other namespace; RoCE itself is droce's, not the kernel's.
#   scripts/lab_veth.sh up [NAME]      create NAME-a / NAME-b (default droce) and print the commands
#   scripts/lab_veth.sh down [NAME]    delete them (deleting a namespace deletes its veth end)
set -euo pipefail
cmd=${1:-}
name=${2:-droce}
[ "$(id -u)" -eq 0 ] || { echo "lab_veth.sh: needs root (ip netns)"; exit 1; }
case "$cmd" in
  up)
    for ns in "$name-a" "$name-b"; do
      ip netns list | grep -qw "$ns" && { echo "lab_veth.sh: namespace $ns exists (run: $0 down $name)"; exit 1; }
    done
    ip netns add "$name-a"
    ip netns add "$name-b"
    ip link add "$name-va" type veth peer name "$name-vb"
    ip link set "$name-va" netns "$name-a"
    ip link set "$name-vb" netns "$name-b"
    ip -n "$name-a" addr add 192.168.77.1/24 dev "$name-va"
    ip -n "$name-b" addr add 192.168.77.2/24 dev "$name-vb"
    for ns in a b; do
      ip -n "$name-$ns" link set lo up
      ip -n "$name-$ns" link set "$name-v$ns" up
    done
    gen=build/apps/droce-gen/droce-gen
    cat <<MSG
lab '$name' is up: $name-a (192.168.77.1, $name-va) <-veth-> $name-b (192.168.77.2, $name-vb)
  ip netns exec $name-a $gen -l 1 --no-pci --vdev net_af_packet0,iface=$name-va -- --mode server --op write --size 4096
  ip netns exec $name-b $gen -l 0 --no-pci --vdev net_af_packet0,iface=$name-vb -- --mode client --op write --size 4096 --duration 5 --oob-host 192.168.77.1
  tear down: $0 down $name
MSG
    ;;
  down)
    for ns in "$name-a" "$name-b"; do ip netns del "$ns" 2>/dev/null || true; done
    echo "lab '$name' is down"
    ;;
  *) echo "usage: $0 up|down [NAME]"; exit 2 ;;
esac
