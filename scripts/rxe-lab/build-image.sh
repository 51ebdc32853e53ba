#!/bin/bash
# Builds the rxe lab guest from Debian packages only, into $LAB_CACHE (default .cache/rxe-lab/):
#   vmlinuz      the Debian kernel (linux-image-amd64's current linux-image-6.x-amd64), unpacked
#                with dpkg-deb, not installed on this host
#   initrd.img   zstd cpio of a debootstrap --variant=minbase rootfs with rdma-core, ibverbs-utils,
#                ibverbs-providers, rdmacm-utils (rping, ucmatose, udaddy), perftest, iproute2, kmod,
#                ... plus the kernel modules the lab needs; it is the guest's whole root
#                filesystem, with guest-init.sh as /init
# Idempotent: each step keeps a stamp of its inputs and reruns only when they change (a rerun
# with nothing changed takes about a second). The root filesystem's stamp holds GUEST_PKGS, so a
# cache built before a package was added (CI's, a local one) is rebuilt on the next run of this
# script, which boot.sh and run_interop.sh call first. FORCE=1 rebuilds everything.
# Needs root (debootstrap, chroot), the Debian archive (MIRROR=, default: this host's apt source)
# and the host tools debootstrap cpio zstd kmod.
# usage: scripts/rxe-lab/build-image.sh
set -euo pipefail
source "$(dirname "$0")/lib.sh"

SUITE=${SUITE:-bookworm}
GUEST_PKGS=rdma-core,ibverbs-utils,ibverbs-providers,rdmacm-utils,perftest,iproute2,kmod,procps,iputils-ping,netcat-openbsd,tcpdump,ethtool
# Loaded by /init or used by tc in the guest; their dependencies come along (modprobe --show-depends).
GUEST_MODS="virtio_pci virtio_net rdma_rxe ib_uverbs rdma_ucm 9p 9pnet_virtio sch_prio sch_netem cls_u32 act_gact af_packet crc32_generic"
STEP_TIMEOUT=${STEP_TIMEOUT:-900}

host_mirror() {
  { grep -h '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2}'
    grep -h '^deb ' /etc/apt/sources.list 2>/dev/null | awk '{print $2}'; } | grep -v security | head -n1 || true
}
MIRROR=${MIRROR:-$(host_mirror)}
[ -n "$MIRROR" ] || lab_die "no Debian mirror in this host's apt sources; set MIRROR="
[ "$(id -u)" -eq 0 ] || lab_die "building the image needs root (debootstrap)"
lab_need debootstrap debootstrap; lab_need cpio cpio; lab_need zstd zstd; lab_need depmod kmod; lab_need dpkg-deb dpkg

T0=$(date +%s)
C=$LAB_CACHE
mkdir -p "$C/deb"
[ "${FORCE:-0}" = 1 ] && rm -rf "$C/rootfs" "$C/kernel" "$C"/*.stamp "$C/initrd.img" "$C/vmlinuz"

# 1. Kernel: the package linux-image-amd64 points at today (needs current apt lists).
KPKG=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/{print $2; exit}') || true
if [ -z "$KPKG" ]; then
  timeout "$STEP_TIMEOUT" apt-get update -q > "$C/apt-update.log" 2>&1 || lab_die "apt-get update failed (see $C/apt-update.log)"
  KPKG=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/{print $2; exit}')
fi
[ -n "$KPKG" ] || lab_die "cannot resolve linux-image-amd64 from the apt lists"
KVER=${KPKG#linux-image-}
if [ "$(cat "$C/kernel.stamp" 2>/dev/null)" != "$KPKG" ] || [ ! -f "$C/vmlinuz" ]; then
  lab_log "downloading $KPKG"
  rm -f "$C"/deb/linux-image-*.deb
  (cd "$C/deb" && timeout "$STEP_TIMEOUT" apt-get download "$KPKG") > "$C/download.log" 2>&1 ||
    lab_die "apt-get download $KPKG failed (see $C/download.log)"
  rm -rf "$C/kernel" && mkdir -p "$C/kernel"
  dpkg-deb -x "$C"/deb/"$KPKG"_*.deb "$C/kernel"
  depmod -b "$C/kernel" "$KVER"
  cp "$C/kernel/boot/vmlinuz-$KVER" "$C/vmlinuz"
  echo "$KPKG" > "$C/kernel.stamp"
  rm -f "$C/modules.stamp"
fi

# 2. Root filesystem.
RSTAMP="$SUITE $MIRROR $GUEST_PKGS"
if [ "$(cat "$C/rootfs.stamp" 2>/dev/null)" != "$RSTAMP" ]; then
  lab_log "debootstrap --variant=minbase $SUITE with $GUEST_PKGS (about a minute)"
  rm -rf "$C/rootfs"
  timeout "$STEP_TIMEOUT" debootstrap --variant=minbase --include="$GUEST_PKGS" "$SUITE" "$C/rootfs" "$MIRROR" \
    > "$C/debootstrap.log" 2>&1 || { tail -20 "$C/debootstrap.log" >&2; lab_die "debootstrap failed (see $C/debootstrap.log)"; }
  R=$C/rootfs
  chroot "$R" apt-get clean
  # The tree becomes an initramfs held in guest RAM: drop what nobody reads there.
  rm -rf "$R"/usr/share/doc/* "$R"/usr/share/man/* "$R"/usr/share/info/* "$R"/usr/share/locale/* \
         "$R"/var/lib/apt/lists/* "$R"/usr/share/zoneinfo/right
  chroot "$R" dpkg-query -W -f '${Package} ${Version}\n' > "$C/guest-packages.txt"
  echo "$RSTAMP" > "$C/rootfs.stamp"
  rm -f "$C/modules.stamp"
fi

# 3. Kernel modules (with their dependencies) into the rootfs.
MSTAMP="$KPKG $GUEST_MODS"
if [ "$(cat "$C/modules.stamp" 2>/dev/null)" != "$MSTAMP" ]; then
  R=$C/rootfs
  rm -rf "$R/lib/modules" && mkdir -p "$R/lib/modules/$KVER"
  cp "$C/kernel/lib/modules/$KVER"/modules.{order,builtin,builtin.modinfo} "$R/lib/modules/$KVER/"
  for m in $GUEST_MODS; do
    modprobe -d "$C/kernel" -S "$KVER" --show-depends "$m" | awk '$1 == "insmod" {print $2}'
  done | sort -u | while read -r p; do
    rel=${p#"$C/kernel"}
    mkdir -p "$R$(dirname "$rel")" && cp "$p" "$R$rel"
  done
  depmod -b "$R" "$KVER"
  echo "$MSTAMP" > "$C/modules.stamp"
fi

# 4. /init, then the cpio (only when something in it changed).
R=$C/rootfs
install -m 0755 "$LAB_DIR/guest-init.sh" "$R/init"
printf '127.0.0.1 localhost\n%s rxe-lab\n%s droce\n' "$GUEST_IP" "$DROCE_IP" > "$R/etc/hosts"
HASH=$(cat "$C/rootfs.stamp" "$C/modules.stamp" "$C/kernel.stamp" "$R/init" "$R/etc/hosts" | sha256sum | cut -d' ' -f1)
if [ ! -f "$C/initrd.img" ] || [ "$(head -1 "$C/image.stamp" 2>/dev/null)" != "$HASH" ]; then
  lab_log "packing the initramfs"
  (cd "$R" && find . -xdev -print0 | LC_ALL=C sort -z | cpio --null -o -H newc --reproducible --quiet) |
    zstd -q -T0 -10 > "$C/initrd.img.tmp"
  mv "$C/initrd.img.tmp" "$C/initrd.img"
  printf '%s\nkernel=%s\npackages=%s\nmodules=%s\n' "$HASH" "$KPKG" "$GUEST_PKGS" "$GUEST_MODS" > "$C/image.stamp"
fi
lab_log "image ready in $(( $(date +%s) - T0 )) s: $C/vmlinuz ($KVER), $C/initrd.img ($(du -h "$C/initrd.img" | cut -f1))"
