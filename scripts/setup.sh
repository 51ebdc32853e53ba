#!/usr/bin/env bash
# Installs everything droce needs to build, test and run on Debian 12, and reserves hugepages.
# Idempotent: safe to run again. Prints one screen saying what it did and what it could not do.
set -uo pipefail

# Build, test and runtime dependencies (Debian 12 / bookworm package names, DPDK 22.11 = ABI 23).
PACKAGES=(
  # toolchain and build
  build-essential meson ninja-build pkg-config clang libclang-rt-14-dev clang-format
  # DPDK: headers + libraries, dpdk-testpmd (in dpdk-dev), and the PMD plugins the labs use
  libdpdk-dev dpdk-dev
  librte-net-null23 librte-net-ring23 librte-net-memif23 librte-net-vhost23 librte-net-virtio23
  librte-net-tap23 librte-net-af-packet23 librte-net-af-xdp23 librte-net-pcap23 librte-net-mlx5-23
  librte-pcapng23 librte-telemetry23
  # libraries
  catch2 libcli11-dev libboost-dev libbenchmark-dev nlohmann-json3-dev zlib1g-dev libisal-dev libpcap-dev rdma-core libibverbs-dev
  # droce-coll across processes and hosts (mpirun; optional at build time)
  openmpi-bin libopenmpi-dev
  # scripts: plots, independent ICRC check (Scapy), capture decoding (tshark), lab tools
  python3 python3-matplotlib python3-scapy tshark iproute2 valgrind
  # the kernel-interface labs (scripts/lab_veth.sh, tests/apps/check_kernel_ports.sh): the middle
  # hop's loss rule, the AF_XDP program's headers (built with clang)
  nftables libbpf-dev
  # the Soft-RoCE interop lab (scripts/rxe-lab): QEMU guest image from Debian packages, OOB forwarding
  qemu-system-x86 qemu-utils debootstrap cpio zstd kmod socat
)
HUGEPAGES_2M=${DROCE_HUGEPAGES:-512}

did=()
couldnt=()
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO="sudo -n"; fi
fi

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  did+=("packages: all ${#PACKAGES[@]} already installed")
elif [ "$(id -u)" -ne 0 ] && [ -z "$SUDO" ]; then
  couldnt+=("packages: not root and no sudo; missing: ${missing[*]}")
else
  export DEBIAN_FRONTEND=noninteractive
  log=$(mktemp)
  if $SUDO apt-get update -q >"$log" 2>&1 &&
     $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}" >>"$log" 2>&1; then
    did+=("packages: installed ${#missing[@]} (${missing[*]})")
  else
    couldnt+=("packages: apt-get failed, last lines:")
    while IFS= read -r l; do couldnt+=("    $l"); done < <(tail -n 5 "$log")
  fi
  rm -f "$log"
fi

# Hugepages: DPDK runs without them (--no-huge), but pools and memif/vhost are faster with them.
nr=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
if [ -r "$nr" ]; then
  have=$(cat "$nr")
  if [ "$have" -ge "$HUGEPAGES_2M" ]; then
    did+=("hugepages: $have x 2 MiB already reserved")
  elif echo "$HUGEPAGES_2M" | $SUDO tee "$nr" >/dev/null 2>&1; then
    did+=("hugepages: reserved $(cat "$nr") x 2 MiB (asked $HUGEPAGES_2M)")
  else
    couldnt+=("hugepages: cannot write $nr (not root or not allowed); droce will use --no-huge")
  fi
else
  couldnt+=("hugepages: kernel has no 2 MiB hugepage support; droce will use --no-huge")
fi
if grep -qs ' hugetlbfs ' /proc/mounts; then
  did+=("hugetlbfs: mounted at $(awk '$3=="hugetlbfs"{print $2; exit}' /proc/mounts)")
else
  $SUDO mkdir -p /dev/hugepages 2>/dev/null
  if $SUDO mount -t hugetlbfs nodev /dev/hugepages 2>/dev/null; then
    did+=("hugetlbfs: mounted at /dev/hugepages")
  else
    couldnt+=("hugetlbfs: could not mount /dev/hugepages; droce will use --no-huge")
  fi
fi

echo "== droce setup =="
for l in "${did[@]}"; do echo "  done: $l"; done
for l in "${couldnt[@]}"; do echo "  NOT done: $l"; done
# Missing packages are fatal: nothing builds without them. Hugepages are optional.
for l in "${couldnt[@]}"; do case "$l" in packages:*) exit 1 ;; esac; done
exit 0
