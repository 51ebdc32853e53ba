#!/usr/bin/env bash
# The examples against the installed package, as a service's own build would see it: installs the
# meson build into a scratch --destdir, checks that every public header is there and compiles on
# its own flags, builds examples/ with make outside the meson tree (pkg-config --cflags --libs
# droce), and once more against the build tree uninstalled (meson-uninstalled), then runs
# upper-service and upper-client against each other over net_memif. Exit 0 only when every step
# passed and the client checked every reply.
#
#   examples/run.sh [BUILD_DIR] [REQUESTS]     (defaults: build, 1000)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
count=${2:-1000}
scratch=$(mktemp -d /tmp/droce-examples.XXXXXX)
service_pid=
cleanup() {
  [ -n "$service_pid" ] && kill "$service_pid" 2>/dev/null
  rm -rf "$scratch"
}
trap cleanup EXIT
die() { echo "examples: $*" >&2; exit 1; }

# ---- install ----
meson install -C "$build" --destdir "$scratch/dest" --quiet > "$scratch/install.log" 2>&1 ||
  { tail -n 20 "$scratch/install.log" >&2; die "meson install failed"; }
pc=$(find "$scratch/dest" -name droce.pc -print -quit)
[ -n "$pc" ] || die "no droce.pc in the install tree"
export PKG_CONFIG_PATH=$(dirname "$pc")
inc=$(find "$scratch/dest" -type d -path '*/include/droce' -print -quit)
[ -n "$inc" ] || die "no include/droce in the install tree"
echo "examples: installed into $scratch/dest ($(pkg-config --modversion droce), $(find "$inc" -name '*.h' | wc -l) headers)"

# ---- every public header installed, and each compiles alone on pkg-config's flags ----
missing=0
for h in $(cd "$root" && ls protocols/{common,wire,rc,dcqcn}/*.h engine/{core,endpoint,workers,exchange,lab}/*.h); do
  [ -f "$inc/$h" ] || { echo "examples: $h is not installed" >&2; missing=1; }
done
[ "$missing" = 0 ] || die "public headers missing from the install (meson.build droce_public_headers)"
for h in $(cd "$inc" && find . -name '*.h' | sed 's|^\./||' | sort); do echo "#include <droce/$h>"; done > "$scratch/all_headers.cc"
# droce's own headers warning-free under -Wall -Wextra -Werror; DPDK's as system headers (they
# warn under C++20: -Wvolatile in rte_spinlock.h).
cflags=$(pkg-config --cflags droce | sed 's|-I\([^ ]*dpdk[^ ]*\)|-isystem\1|g')
# shellcheck disable=SC2086
c++ -std=c++20 -Wall -Wextra -Werror -fsyntax-only $cflags "$scratch/all_headers.cc" ||
  die "the installed headers do not compile with pkg-config --cflags droce"

# ---- build the examples out of tree ----
cp "$root"/examples/Makefile "$root"/examples/*.cc "$root"/examples/*.h "$scratch/"
make -C "$scratch" -j2 > "$scratch/make.log" 2>&1 || { cat "$scratch/make.log" >&2; die "make failed"; }
echo "examples: built upper-service and upper-client with make (pkg-config --cflags --libs droce)"

# ---- and against the build tree, uninstalled: meson's droce-uninstalled.pc, as a service's
# developer builds against a droce checkout without installing it ----
mkdir -p "$scratch/uninstalled"
cp "$root"/examples/Makefile "$root"/examples/*.cc "$root"/examples/*.h "$scratch/uninstalled/"
PKG_CONFIG_PATH=$(cd "$build" && pwd)/meson-uninstalled make -C "$scratch/uninstalled" -j2 > "$scratch/make-uninstalled.log" 2>&1 ||
  { cat "$scratch/make-uninstalled.log" >&2; die "make against the build tree (PKG_CONFIG_PATH=$build/meson-uninstalled) failed"; }
echo "examples: built them against the build tree too (PKG_CONFIG_PATH=$build/meson-uninstalled)"

# ---- run them over net_memif: the service on the last CPU, the client on the first ----
# A shared libdroce (-Ddefault_library=shared) is found in the scratch prefix; DPDK's PMDs,
# net_memif among them, are loaded by EAL from its plugin folder.
export LD_LIBRARY_PATH=$(dirname "$(dirname "$pc")")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
cpus=$(python3 -c 'import os; print(" ".join(map(str, sorted(os.sched_getaffinity(0)))))')
first=${cpus%% *} last=${cpus##* }
eal=(--no-pci --no-huge -m 256 --no-telemetry)
sock="$scratch/upper.sock"
run_pair() {
  timeout 60 "$scratch/upper-service" -l "$last" "${eal[@]}" -- --socket "$sock" --seconds 45 > "$scratch/service.log" 2>&1 &
  service_pid=$!
  # The client starts once the service's socket is there (a memif client retries anyway; this keeps
  # its log free of "Failed to connect").
  for _ in $(seq 300); do [ -S "$sock" ] || ! kill -0 "$service_pid" 2>/dev/null && break; sleep 0.1; done
  client_rc=0
  timeout 60 "$scratch/upper-client" -l "$first" "${eal[@]}" -- --socket "$sock" --count "$count" --seconds 45 \
    > "$scratch/client.log" 2>&1 || client_rc=$?
  wait "$service_pid"
  service_rc=$?
  service_pid=
}
run_pair
# On a loaded machine a net_memif pair now and then never connects (DPDK 22.11's server has logged "Failed to accept
# connection request on socket fd -1" in such runs of the apps): nothing was exchanged, so
# the pair is started once more. Any other failure, and a second link failure, fail the stage.
if [ "$client_rc" != 0 ] && grep -q "did not come up" "$scratch/client.log" "$scratch/service.log"; then
  echo "examples: the memif link did not come up (a DPDK 22.11 memif server problem); starting the pair once more"
  grep -v '^EAL: \|^TELEMETRY' "$scratch/service.log" | tail -n 3 | sed 's/^/  service | /'
  rm -f "$sock"
  run_pair
fi
grep -v '^EAL: \|^TELEMETRY' "$scratch/service.log" | sed 's/^/  service | /'
grep -v '^EAL: \|^TELEMETRY' "$scratch/client.log" | sed 's/^/  client  | /'
[ "$client_rc" = 0 ] || die "upper-client exited $client_rc"
[ "$service_rc" = 0 ] || die "upper-service exited $service_rc"
grep -q "^upper-client: .* $count requests, 0 replies wrong" "$scratch/client.log" || die "the client did not report $count checked replies"
echo "examples: passed ($count requests, every reply checked)"
