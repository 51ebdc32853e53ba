#!/bin/bash
# Boots the rxe lab guest (building its image first if needed) and waits until its job agent is
# ready; the guest keeps running after this script returns (scripts/rxe-lab/down.sh stops it).
#   guest eth0 = virtio-net over vhost-user: QEMU is the CLIENT of $LAB_RUN/vhost.sock with
#                reconnect=1, so each droce app run (the vhost-user server) reconnects the link.
#                Two queue pairs (queues=2, mq=on) for droce's runs on two workers, each of which
#                sends on its own queue; the guest's one CPU makes Linux use one pair
#                (virtio-net's default is min(pairs, CPUs)) until `ethtool -L eth0 combined 2`,
#                so droce's one-queue runs (net_vhost queues=1) see every frame on queue 0.
#   guest mgmt0 = QEMU user networking, restrict=on: hostfwd 127.0.0.1:$LAB_OOB_HOSTFWD -> guest
#                :18515, guestfwd 10.0.2.100:18515 -> host 127.0.0.1:$LAB_OOB_HOST (one socat per
#                connection)
# QEMU waits for a vhost-user server before it starts the guest, so this script runs droce-echo
# as a placeholder server until the guest is up.
# usage: scripts/rxe-lab/boot.sh
# env: LAB_MTU=1500 (4200: rxe active_mtu 4096)  ACCEL=tcg (kvm to try KVM)  LAB_RUN=/tmp/droce-rxe-lab
#      LAB_MEM=1024  BOOT_TIMEOUT=300  DROCE_BUILD=<repo>/build
set -euo pipefail
source "$(dirname "$0")/lib.sh"
BOOT_TIMEOUT=${BOOT_TIMEOUT:-300}
lab_need qemu-system-x86_64 qemu-system-x86
lab_need socat socat
[ -z "$(lab_qemu_pid || true)" ] || lab_die "a lab guest is already running (pid $(lab_qemu_pid)); scripts/rxe-lab/down.sh stops it"
[ -x "$DROCE_ECHO" ] || lab_die "$DROCE_ECHO not built (meson setup build && ninja -C build), or set DROCE_BUILD"
if [ "$LAB_ACCEL" = kvm ]; then
  [ -w /dev/kvm ] || lab_die "ACCEL=kvm but /dev/kvm is not usable"
  accel=(-accel kvm)
else
  accel=(-accel tcg -cpu max)
fi

timeout 1200 "$LAB_DIR/build-image.sh"
mkdir -p "$LAB_JOBS"
rm -f "$LAB_JOBS"/* "$LAB_RUN"/console.log "$LAB_RUN"/qemu.log

T0=$(date +%s)
lab_hold_link || lab_die "droce-echo did not create $LAB_RUN/vhost.sock"
qemu-system-x86_64 "${accel[@]}" -m "$LAB_MEM" -smp 1 -nodefaults -display none -no-reboot -name rxe-lab \
  -kernel "$LAB_CACHE/vmlinuz" -initrd "$LAB_CACHE/initrd.img" \
  -append "console=ttyS0 panic=-1 quiet lab.ip=$GUEST_IP/24 lab.ip6=$GUEST_IP6/64 lab.mac=$GUEST_MAC lab.mgmtmac=$GUEST_MGMT_MAC lab.mtu=$LAB_MTU${LAB_STATIC_NEIGH:+ lab.neigh=$DROCE_IP,$DROCE_MAC}" \
  -serial "file:$LAB_RUN/console.log" -monitor "unix:$LAB_RUN/monitor.sock,server=on,wait=off" \
  -virtfs "local,path=$LAB_SHARE,mount_tag=host,security_model=none,id=host" \
  -object "memory-backend-memfd,id=mem,size=${LAB_MEM}M,share=on" -numa node,memdev=mem \
  -chardev "socket,id=vu0,path=$LAB_RUN/vhost.sock,reconnect=1" \
  -netdev vhost-user,id=d0,chardev=vu0,queues=2 \
  -device "virtio-net-pci,netdev=d0,mac=$GUEST_MAC,vectors=0,mq=on" \
  -netdev "user,id=m0,restrict=on,net=10.0.2.0/24,hostfwd=tcp:127.0.0.1:$LAB_OOB_HOSTFWD-:18515,guestfwd=tcp:$GUEST_OOB_ADDR:18515-cmd:socat - TCP:127.0.0.1:$LAB_OOB_HOST" \
  -device "virtio-net-pci,netdev=m0,mac=$GUEST_MGMT_MAC" \
  < /dev/null > "$LAB_RUN/qemu.log" 2>&1 &
qpid=$!
echo $qpid > "$LAB_RUN/qemu.pid"
lab_log "qemu pid $qpid (accel $LAB_ACCEL, eth0 mtu $LAB_MTU), console $LAB_RUN/console.log"
# Until the background shell has exec'd QEMU, /proc/PID/comm names bash and lab_qemu_pid would
# call the guest gone: on a busy host that fork-to-exec gap outlasted the first check below, and
# a QEMU that was starting was reported as exited and stopped. Wait for the exec (at most 10 s).
for _ in $(seq 200); do
  [ -n "$(lab_qemu_pid || true)" ] && break
  kill -0 "$qpid" 2>/dev/null || break
  sleep 0.05
done

ready() { [ -s "$LAB_JOBS/READY" ] || { lab_qemu_pid > /dev/null || return 0; return 1; }; }
if ! lab_wait_for "$BOOT_TIMEOUT" ready || ! lab_qemu_pid > /dev/null; then
  lab_log "guest not ready after ${BOOT_TIMEOUT}s or QEMU exited; qemu log / console tail:"
  cat "$LAB_RUN/qemu.log" >&2; tail -20 "$LAB_RUN/console.log" >&2
  "$LAB_DIR/down.sh"
  exit 1
fi
lab_release_link
lab_log "guest up in $(( $(date +%s) - T0 )) s (guest uptime $(cat "$LAB_JOBS/READY") s): eth0 $GUEST_MAC $GUEST_IP $GUEST_IP6"
cat "$LAB_JOBS/info.txt" >&2
