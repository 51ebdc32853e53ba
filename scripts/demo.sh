#!/usr/bin/env bash
# The README's first command: installs what is needed, builds droce and runs the main job,
# droce-gen on an in-process lab (clean, then lossy with a capture that tshark and Scapy check),
# then droce-gen as client and server over net_memif, droce-perf, the raw forwarding loop across two
# processes and the DCQCN simulator.
#   usage: scripts/demo.sh [--short]
#   --short: one-second runs (scripts/test.sh runs the demo this way after its gcc build, so the
#            README's first command is checked on every CI run); DROCE_SKIP_SETUP=1 skips setup.sh.
set -uo pipefail
cd "$(dirname "$0")/.."

secs=3
case "${1:-}" in
  --short) secs=1 ;;
  "") ;;
  *) echo "usage: scripts/demo.sh [--short]" >&2; exit 2 ;;
esac

if [ "${DROCE_SKIP_SETUP:-0}" != 1 ]; then
  bash scripts/setup.sh || { echo "demo: setup failed"; exit 1; }
fi
if [ -f build/build.ninja ]; then meson setup --reconfigure build >/dev/null; else meson setup build >/dev/null; fi
ninja -C build || { echo "demo: build failed"; exit 1; }

step() { printf '\n== %s ==\n' "$*"; }

step "1. droce-gen, the main job: real RC queue pairs on an in-process lab, every message verified"
timeout 60 build/apps/droce-gen/droce-gen -- --op write --size 4096 --duration "$secs" || exit 1

step "2. the same with 2 % of the frames dropped by the lab: go-back-N recovers, nothing lost or duplicated"
# A message count, not a duration: the capture stays small enough (a few MB) to decode in step 3.
pcap=/tmp/droce-demo-lossy.$$.pcapng
timeout 60 build/apps/droce-gen/droce-gen -- --op send --size 3000 --qps 2 --loss 0.02 --count 1000 --pcap "$pcap" || exit 1

step "3. that capture, decoded by tshark and every ICRC re-checked by Scapy (an implementation that is not droce's)"
bash scripts/verify_capture.sh "$pcap" || exit 1
rm -f "$pcap"

step "4. droce-gen as server and client in two processes over net_memif, 1 % loss each way"
sock="/tmp/droce-demo-gen-$$.sock"
last_cpu=$(( $(nproc) - 1 ))
timeout 60 build/apps/droce-gen/droce-gen -l "$last_cpu" --no-pci --vdev "net_memif0,role=server,socket=$sock" -- \
  --mode server --op send --size 1024 --loss 0.01 --quiet > /tmp/droce-demo-gen-server.$$ 2>&1 &
server=$!
sleep 0.5
timeout 60 build/apps/droce-gen/droce-gen -l 0 --no-pci --vdev "net_memif0,role=client,socket=$sock" -- \
  --mode client --op send --size 1024 --loss 0.01 --duration "$secs" || { wait "$server"; exit 1; }
wait "$server" || exit 1
sed 's/^/  server: /' /tmp/droce-demo-gen-server.$$
rm -f /tmp/droce-demo-gen-server.$$ "$sock"

step "4b. droce-perf: perftest's write_bw and send_lat between two droce processes (perftest's exchange and tables)"
for t in "write_bw -s 65536 -n 2000" "send_lat -s 64 -n 2000"; do
  # shellcheck disable=SC2086
  timeout 60 build/apps/droce-perf/droce-perf -- $t -p 18599 > /tmp/droce-demo-perf-server.$$ 2>&1 &
  server=$!
  sleep 0.5
  # shellcheck disable=SC2086
  timeout 60 build/apps/droce-perf/droce-perf -- $t -p 18599 127.0.0.1 || { wait "$server"; exit 1; }
  wait "$server" || exit 1
done
rm -f /tmp/droce-demo-perf-server.$$

step "5. the engine's raw forwarding loop across two processes joined by net_memif"
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

step "6. DCQCN on the simulator: two flows converging at 40 Gb/s (paper parameters)"
build/apps/droce-sim/droce-sim --flows 2 --start-stagger-ms 10 --duration-ms 100 --json /tmp/droce-demo-sim.$$.json || exit 1
rm -f /tmp/droce-demo-sim.$$.json

step "7. live DCQCN: two droce senders through droce-switch's 2 Gb/s bottleneck (the second joins at 100 ms)"
build/apps/droce-switch/droce-switch -- --lab-senders 2 --lab-duration-ms 300 --lab-start-ms 0,100 \
  --lab-stop-ms 300,200 --lab-bottleneck-gbps 2 --kmax-bytes 40000 --pmax 0.1 || exit 1

step "8. PFC head-of-line blocking across two hops, then DCQCN on top (simulator)"
for cc in none dcqcn; do
  build/apps/droce-sim/droce-sim --topology two-hop --pfc --flows 8 --incast --duration-ms 50 --cc $cc \
    --json /tmp/droce-demo-hol.$$.json || exit 1
  /usr/bin/python3 -c "import json; d = json.load(open('/tmp/droce-demo-hol.$$.json')); print(f\"  cc $cc: innocent flow {d['innocent_gbps']:.1f} Gb/s, PFC pauses {d['pfc']['pauses_sent']}\")"
done
rm -f /tmp/droce-demo-hol.$$.json

step "9. droce-coll: an 8-rank ring allreduce and an alltoall on the lab fabric, nccl-tests' table, every byte verified"
big=$([ "$secs" = 1 ] && echo 1M || echo 16M)
timeout 120 build/apps/droce-coll/droce-coll -- --pattern allreduce --ranks 8 --minbytes 64K --maxbytes "$big" \
  --stepfactor 16 --iters 5 --warmup_iters 1 --quiet || exit 1
timeout 120 build/apps/droce-coll/droce-coll -- --pattern alltoall --ranks 8 --size 1M --iters 5 --warmup_iters 1 \
  --loss 0.01 --recovery sr --quiet || exit 1

printf '\n== demo: every step ran to its end ==\n'
