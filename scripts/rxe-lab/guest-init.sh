#!/bin/bash
# /init of the rxe lab guest: the initramfs is the whole root filesystem. Brings up the data NIC
# and rxe0 on it, the management NIC, and the job agent on the 9p share, then idles.
# Kernel command line (set by boot.sh):
#   lab.ip=10.0.77.1/24  lab.ip6=fd77::1/64  lab.mac=52:54:00:77:00:01  lab.mgmtmac=52:54:00:77:01:01  lab.mtu=1500
#   lab.neigh=10.0.77.3,02:00:00:77:00:03   permanent neighbour entry for droce (no ARP needed;
#                                           only with LAB_STATIC_NEIGH=1 at boot: the lab uses ARP)
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH HOME=/root
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mkdir -p /dev/pts /dev/shm /run /tmp /host
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /dev/shm
ln -sf /proc/self/fd /dev/fd 2>/dev/null
ulimit -l unlimited   # verbs memory registration pins pages

IP= IP6= MAC= MGMTMAC= MTU=1500 NEIGH=
for a in $(cat /proc/cmdline); do
  case "$a" in
    lab.ip=*) IP=${a#*=} ;; lab.ip6=*) IP6=${a#*=} ;; lab.mac=*) MAC=${a#*=} ;; lab.mgmtmac=*) MGMTMAC=${a#*=} ;;
    lab.mtu=*) MTU=${a#*=} ;; lab.neigh=*) NEIGH=${a#*=} ;;
  esac
done
hostname rxe-lab
echo "lab-init: kernel $(uname -r) ip=$IP ip6=$IP6 mac=$MAC mtu=$MTU"
for m in virtio_pci virtio_net 9pnet_virtio 9p ib_uverbs rdma_ucm rdma_rxe; do modprobe "$m" || echo "lab-init: modprobe $m failed"; done
sysctl -qw kernel.printk="4 4 1 7"
ip link set lo up

for i in $(seq 100); do [ "$(ls /sys/class/net | grep -vc '^lo$')" -ge 2 ] && break; sleep 0.1; done
ifbymac() { local n; for n in /sys/class/net/*; do [ "$(cat "$n/address")" = "$1" ] && basename "$n"; done; }
M=$(ifbymac "$MGMTMAC")
if [ -n "$M" ]; then
  ip link set "$M" name mgmt0
  sysctl -qw net.ipv6.conf.mgmt0.disable_ipv6=1
  ip addr add 10.0.2.15/24 dev mgmt0
  ip link set mgmt0 up
fi
D=$(ifbymac "$MAC")
if [ -n "$D" ]; then
  [ "$D" != eth0 ] && { [ -e /sys/class/net/eth0 ] && ip link set eth0 name ethx; ip link set "$D" name eth0; }
  # IPv6 on eth0 with the ULA only (no router solicitations, no SLAAC): the rxe port's RoCE v2
  # GIDs are then the link-local fe80::..., ::ffff:<IPv4> and the ULA, in the order the kernel
  # adds them (the host reads their indexes from sysfs: lib.sh's lab_gid_index). Without
  # lab.ip6, IPv6 stays off and the table holds the first two only. The ULA goes through DAD
  # (RFC 4862 §5.4) once the link first has carrier: droce's ND sees those probes and must not
  # answer them.
  if [ -n "$IP6" ]; then
    sysctl -qw net.ipv6.conf.eth0.accept_ra=0 net.ipv6.conf.eth0.autoconf=0
  else
    sysctl -qw net.ipv6.conf.eth0.disable_ipv6=1
  fi
  # The MTU before rxe attaches: rxe's active_mtu is the largest IB MTU that fits (1500 -> 1024).
  ip link set eth0 mtu "$MTU"
  ip addr add "$IP" dev eth0
  [ -n "$IP6" ] && ip -6 addr add "$IP6" dev eth0
  ip link set eth0 up
  [ -n "$NEIGH" ] && ip neigh replace "${NEIGH%,*}" lladdr "${NEIGH#*,}" dev eth0 nud permanent
  rdma link add rxe0 type rxe netdev eth0
fi

# Job agent: each <id>.sh appearing in /host/jobs runs in its own session; output -> <id>.out,
# exit status -> <id>.rc, session leader PID -> <id>.pid (the host kills a job through it).
# It looks every 50 ms and waits between looks with `read -t` on a fifo nobody writes (a builtin):
# a `sleep` would start a process 10 times a second for the guest's whole life, each a fork and
# exec that an emulated CPU pays for while a tool starts. Jobs use the same fifo (lib.sh's
# LAB_GFUNCS).
mkfifo /run/lab.tick
if mount -t 9p -o trans=virtio,version=9p2000.L,cache=none host /host; then
  mkdir -p /host/jobs
  (
    cd /host/jobs || exit 1
    exec 3<> /run/lab.tick
    while :; do
      for j in *.sh; do
        [ -e "$j" ] || continue
        b=${j%.sh}
        mv "$j" "$b.run" || continue
        # The host ends a job by SIGTERM to its whole process group (lab_gkill), this wrapper
        # included: the wrapper traps TERM (a handler, not an ignore, so the job's own commands
        # still die of it), outlives the job and records its status (143), so the host's
        # lab_gwait returns at once instead of sitting out its timeout.
        # The job runs in a subshell of the wrapper (a fork, not a second bash to exec; the
        # subshell's TERM is the default again), and its status is written in one write: the
        # host waits for a non-empty <id>.rc (no `mv`, a process more per job).
        setsid bash -c 'trap : TERM; echo $$ > "$1.pid"; ( . "./$1.run" ) > "$1.out" 2>&1; echo $? > "$1.rc"' _ "$b" 3<&- &
      done
      read -t 0.05 -u 3
    done
  ) &
  { ip -br link; ip -br addr; rdma link show; ibv_devinfo -v -d rxe0 2>&1 | grep -E 'GID|mtu|state'; } > /host/jobs/info.txt 2>&1
  cut -d' ' -f1 /proc/uptime > /host/jobs/READY
  echo "lab-init: ready after $(cut -d' ' -f1 /proc/uptime) s"
else
  echo "lab-init: no 9p share: the host cannot run commands here"
fi
# A shell on the serial console for debugging (boot.sh logs the console to a file).
while :; do setsid -c bash -l < /dev/ttyS0 > /dev/ttyS0 2>&1 || sleep 1; done
