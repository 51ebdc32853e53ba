#!/usr/bin/env bash
# A kernel-visible lab for droce: two end namespaces joined through a middle one, one droce process
# in each end namespace on a kernel interface (net_af_packet, net_af_xdp or net_tap):
#
#   NAME-a                          NAME-r (Linux bridge NAME-br)                      NAME-b
#   NAME-va  192.168.77.1 ======== NAME-ra  [nftables: loss]  NAME-rb ======== NAME-vb  192.168.77.2
#   (--tap: bridge NAME-ba holding NAME-va, the tap NAME-ta and the address; NAME-b likewise)
#
# The end interfaces carry kernel addresses for droce's TCP exchange (--oob-host 192.168.77.1);
# RoCE is droce's, on addresses of its own (192.168.77.11 in NAME-a, .12 in NAME-b, or fd77::11 and
# fd77::12). The kernels know each other by permanent neighbour entries, because under net_af_xdp
# ARP and ND frames go to droce (scripts/xdp/roce_to_socket.c). Loss is the middle hop's: this
# kernel has no netem qdisc (nor tc's gact), so an nftables rule in NAME-r's bridge drops that many
# per mille of the UDP 4791 frames it forwards, at random, either way; the TCP exchange is never
# dropped. Frames cross a real Linux bridge, so tc, tcpdump and nft in NAME-r see them all.
#
#   scripts/lab_veth.sh up [NAME] [--mtu N] [--loss PERMILLE] [--tap]
#                                     create the lab (default NAME droce, MTU 1500, no loss) and
#                                     print the commands for each PMD
#   scripts/lab_veth.sh loss NAME PERMILLE   change the loss (0: none); prints the drop counter
#   scripts/lab_veth.sh drops NAME           frames the loss rule dropped so far
#   scripts/lab_veth.sh xdp OUT.o            build the XDP program net_af_xdp needs here (clang)
#   scripts/lab_veth.sh down [NAME]          delete the lab (namespaces, their links and taps)
# NAME: at most 10 characters (interface names are NAME-xx, 15 at most). Needs root.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cmd=${1:-}
shift || true
name=droce
if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then name=$1; shift; fi

die() { echo "lab_veth.sh: $*" >&2; exit 1; }
mac_of() { ip -n "$1" -j link show "$2" | python3 -c 'import json, sys; print(json.load(sys.stdin)[0]["address"])'; }
# The nftables table of the loss rule (a bridge family table in NAME-r: frames the bridge forwards).
loss_rule() {
  local ns=$1-r permille=$2
  ip netns exec "$ns" nft delete table bridge droce_loss 2>/dev/null || true
  [ "$permille" -gt 0 ] || return 0
  ip netns exec "$ns" nft -f - <<NFT
table bridge droce_loss {
  chain forward {
    type filter hook forward priority 0; policy accept;
    udp dport 4791 numgen random mod 1000 < $permille counter drop
  }
}
NFT
}
drops() {
  ip netns exec "$1-r" nft list table bridge droce_loss 2>/dev/null | sed -n 's/.*counter packets \([0-9]*\).*/\1/p' | head -n 1
}

case "$cmd" in
  xdp)
    out=${name:-}
    [ -n "$out" ] && [ "$out" != droce ] || die "usage: $0 xdp OUT.o"
    command -v clang > /dev/null || die "clang is needed to build the XDP program (scripts/setup.sh installs it)"
    clang -O2 -g -target bpf -I"/usr/include/$(gcc -print-multiarch)" -c "$here/xdp/roce_to_socket.c" -o "$out"
    exit 0 ;;
esac

[ "$(id -u)" -eq 0 ] || die "needs root (ip netns)"
[ ${#name} -le 10 ] || die "NAME '$name' is longer than 10 characters (interface names NAME-xx must fit 15)"
case "$cmd" in
  up)
    mtu=1500 loss=0 tap=0
    while [ $# -gt 0 ]; do
      case "$1" in
        --mtu) mtu=${2:?--mtu N}; shift 2 ;;
        --loss) loss=${2:?--loss PERMILLE}; shift 2 ;;
        --tap) tap=1; shift ;;
        *) die "unknown option '$1' (up [NAME] [--mtu N] [--loss PERMILLE] [--tap])" ;;
      esac
    done
    [[ "$mtu" =~ ^[0-9]+$ ]] && [ "$mtu" -ge 1280 ] && [ "$mtu" -le 9000 ] || die "--mtu $mtu: 1280..9000"
    [[ "$loss" =~ ^[0-9]+$ ]] && [ "$loss" -le 500 ] || die "--loss $loss: 0..500 per mille"
    command -v nft > /dev/null || [ "$loss" -eq 0 ] || die "--loss needs nft (apt-get install nftables; scripts/setup.sh installs it)"
    for ns in "$name-a" "$name-r" "$name-b"; do
      [ ! -e "/run/netns/$ns" ] || die "namespace $ns exists (run: $0 down $name)"
    done
    ip netns add "$name-a"
    ip netns add "$name-r"
    ip netns add "$name-b"
    ip -n "$name-r" link add "$name-br" type bridge
    for s in a b; do
      ip link add "$name-v$s" type veth peer name "$name-r$s"
      ip link set "$name-v$s" netns "$name-$s"
      ip link set "$name-r$s" netns "$name-r"
      ip -n "$name-r" link set "$name-r$s" mtu "$mtu" master "$name-br" up
      ip -n "$name-$s" link set lo up
      # The kernel's own IPv6 stays quiet (router solicitations, MLD, DAD): the lab's frames are droce's.
      ip netns exec "$name-$s" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
      ip -n "$name-$s" link set "$name-v$s" mtu "$mtu" up
      dev=$name-v$s
      if [ "$tap" -eq 1 ]; then
        # A persistent multi-queue tap that net_tap attaches to (iface=NAME-ts), bridged with the veth.
        # net_tap gives the tap droce's port MAC, which the bridge then keeps as its own (frames to
        # it stop here), so droce sends from another MAC (--local-mac); and it sets the tap's MTU
        # to 1500 at start, so path MTU 1024 over it.
        ip -n "$name-$s" tuntap add dev "$name-t$s" mode tap multi_queue
        ip -n "$name-$s" link add "$name-b$s" type bridge
        ip -n "$name-$s" link set "$name-t$s" mtu "$mtu" master "$name-b$s" up
        ip -n "$name-$s" link set "$name-v$s" master "$name-b$s"
        # A bridge takes the lowest MAC of its ports unless given one, and net_tap changes the
        # tap's at every start: fixed here, or the other kernel's permanent entry goes stale.
        ip -n "$name-$s" link set "$name-b$s" address "$(mac_of "$name-$s" "$name-v$s")"
        ip -n "$name-$s" link set "$name-b$s" up
        dev=$name-b$s
      fi
      ip -n "$name-$s" addr add "192.168.77.$([ $s = a ] && echo 1 || echo 2)/24" dev "$dev"
    done
    ip -n "$name-r" link set "$name-br" up
    ip -n "$name-r" link set lo up
    # Each kernel knows the other's MAC for good: ARP belongs to droce under net_af_xdp.
    dev_a=$name-va dev_b=$name-vb
    [ "$tap" -eq 1 ] && dev_a=$name-ba dev_b=$name-bb
    ip -n "$name-a" neigh replace 192.168.77.2 lladdr "$(mac_of "$name-b" "$dev_b")" dev "$dev_a" nud permanent
    ip -n "$name-b" neigh replace 192.168.77.1 lladdr "$(mac_of "$name-a" "$dev_a")" dev "$dev_b" nud permanent
    loss_rule "$name" "$loss"
    gen=build/apps/droce-gen/droce-gen
    xa="" xb=""
    if [ "$tap" -eq 1 ]; then
      va="net_tap0,iface=$name-ta" vb="net_tap0,iface=$name-tb"
      xa=" --local-mac 02:43:00:00:00:11 --mtu 1024" xb=" --local-mac 02:43:00:00:00:12 --mtu 1024"
      what="net_tap on $name-ta / $name-tb"
    else
      va="net_af_packet0,iface=$name-va" vb="net_af_packet0,iface=$name-vb"
      what="net_af_packet (or net_af_xdp) on $name-va / $name-vb"
    fi
    cat <<MSG
lab '$name' is up: $name-a (192.168.77.1) <-> $name-r (bridge, loss $loss per mille of RoCEv2) <-> $name-b (192.168.77.2), MTU $mtu, $what
  ip netns exec $name-a $gen -l 1 --no-pci --vdev $va -- --mode server --local-ip 192.168.77.11$xa --op write --size 4096
  ip netns exec $name-b $gen -l 0 --no-pci --vdev $vb -- --mode client --local-ip 192.168.77.12$xb --oob-host 192.168.77.1 --op write --size 4096 --duration 5
MSG
    if [ "$tap" -eq 0 ]; then
      cat <<MSG
  net_af_packet at path MTU 2048 or 4096 (with --mtu 4200): add ,blocksz=12288,framesz=6144 to the --vdev
  net_af_xdp: $0 xdp /tmp/roce.o, then --vdev net_af_xdp0,iface=$name-va,xdp_prog=/tmp/roce.o (path MTU 2048 at most)
MSG
    fi
    echo "  loss: $0 loss $name PERMILLE    tear down: $0 down $name"
    ;;
  loss)
    [ -e "/run/netns/$name-r" ] || die "no lab '$name'"
    [[ "${1:-}" =~ ^[0-9]+$ ]] && [ "$1" -le 500 ] || die "usage: $0 loss NAME PERMILLE (0..500)"
    echo "dropped so far: $(drops "$name")"
    loss_rule "$name" "$1"
    ;;
  drops)
    [ -e "/run/netns/$name-r" ] || die "no lab '$name'"
    d=$(drops "$name")
    echo "${d:-0}"
    ;;
  down)
    # Deleting a namespace deletes its veth ends and bridges; a persistent tap goes with its namespace too.
    for ns in "$name-a" "$name-r" "$name-b"; do ip netns del "$ns" 2>/dev/null || true; done
    # A veth pair is made in this namespace before its ends move: one left here by an interrupted 'up'.
    for l in "$name-va" "$name-vb"; do ip link del "$l" 2>/dev/null || true; done
    echo "lab '$name' is down"
    ;;
  *) echo "usage: $0 up|loss|drops|xdp|down [NAME] ... (see the comment at the top)"; exit 2 ;;
esac
