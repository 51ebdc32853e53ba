#!/usr/bin/env bash
# The README's first command: installs what is needed, builds droce, and runs the best
# end-to-end job the tree has today: the engine's poll loop forwarding on an in-process
# net_ring lab, the same loop across two processes joined by net_memif, and RoCEv2 frames
# built by droce, checked by an independent ICRC implementation (Scapy) and decoded by tshark.
set -uo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh || { echo "demo: setup failed"; exit 1; }
if [ -f build/build.ninja ]; then meson setup --reconfigure build >/dev/null; else meson setup build >/dev/null; fi
ninja -C build || { echo "demo: build failed"; exit 1; }

step() { printf '\n== %s ==\n' "$*"; }

step "1. droce-fwd on a net_ring loopback port (one process, no options needed)"
timeout 30 build/apps/droce-fwd/droce-fwd -- --duration 3 || exit 1

step "2. droce-fwd in two processes joined by net_memif (shared memory), frames bouncing between them"
sock="/tmp/droce-demo-$$.sock"
timeout 30 build/apps/droce-fwd/droce-fwd -l 1 --no-pci --vdev "net_memif0,role=server,socket=$sock" -- \
  --duration 5 --tx-first 32 --stats-period 1 > /tmp/droce-demo-server.$$ 2>&1 &
server=$!
sleep 1
timeout 30 build/apps/droce-fwd/droce-fwd -l 0 --no-pci --vdev "net_memif0,role=client,socket=$sock" -- \
  --duration 3 --stats-period 0 || true
wait "$server"
sed 's/^/  server: /' /tmp/droce-demo-server.$$
rm -f /tmp/droce-demo-server.$$ "$sock"

step "3. RoCEv2 frames built by droce: every RC opcode, IPv4/IPv6, VLAN; ICRCs checked by Scapy"
pcap=/tmp/droce-demo-frames.$$.pcap
build/tests/wire/write_sample_pcap "$pcap" && /usr/bin/python3 scripts/verify_icrc_scapy.py "$pcap"
if command -v tshark >/dev/null; then
  echo "-- tshark decodes the first IPv4 frames as InfiniBand/RoCEv2:"
  tshark -r "$pcap" -c 6 -d udp.port==4791,infiniband 2>/dev/null | sed 's/^/  /'
fi
rm -f "$pcap"

step "4. Real Linux Soft-RoCE traffic parsed by droce (tests/data/pcaps)"
build/tests/wire/wire_tests '[captures]' | tail -n 2
