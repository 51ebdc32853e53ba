#!/usr/bin/env bash
# DPDK telemetry of a running droce-gen: every endpoint (two per worker in loopback: each worker
# runs both ends of its share) is listed, each gives its own counters, and the totals are their
# sums. Queried over EAL's telemetry socket, as dpdk-telemetry.py does.
set -uo pipefail
gen=$1
out=$(mktemp -d)
prefix="droce_tel_$$"
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$out"' EXIT
last_cpu=$(( $(nproc) - 1 ))
"$gen" --lcores "0@0,1@$last_cpu" --no-pci --file-prefix "$prefix" -- --workers 2 --qps 4 --op send --size 256 \
  --duration 20 --quiet --json "$out/run.json" > "$out/run.txt" 2>&1 &
pid=$!
/usr/bin/python3 - "$prefix" "$pid" <<'PY'
import glob, json, os, socket, sys, time
prefix, pid = sys.argv[1], int(sys.argv[2])
deadline = time.time() + 30
path = None
while time.time() < deadline and path is None:
    found = [p for d in ("/var/run/dpdk", "/run/user", "/tmp/dpdk", os.environ.get("XDG_RUNTIME_DIR", "/nonexistent"))
             for p in glob.glob(f"{d}/**/{prefix}/dpdk_telemetry.v2", recursive=True)]
    path = found[0] if found else None
    time.sleep(0.2)
assert path, "no telemetry socket for " + prefix

def query(cmd):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(5)
    s.connect(path)
    json.loads(s.recv(65536).decode())  # the greeting
    s.send(cmd.encode())
    reply = json.loads(s.recv(1 << 20).decode())
    s.close()
    return reply[cmd.split(",")[0]]

# Wait until traffic flows on every endpoint (the run starts after EAL and the labs are up).
while time.time() < deadline:
    ids = query("/droce/endpoints")
    if len(ids) == 4 and all(query(f"/droce/endpoint_stats,{i}")["tx_frames"] > 0 for i in ids):
        break
    time.sleep(0.2)
ids = query("/droce/endpoints")
assert len(ids) == 4, f"expected 4 endpoints (2 workers x 2 ends), got {ids}"
per = [query(f"/droce/endpoint_stats,{i}") for i in ids]
for p in per:
    assert p["tx_frames"] > 0 and p["rx_frames"] > 0 and p["qps"] == 2, p
unknown = query("/droce/endpoint_stats,99999")
assert unknown in (None, {}), f"unknown id answered: {unknown}"
tot = query("/droce/endpoint_totals")
assert tot["endpoints"] == 4 and tot["qps"] == 8, tot
# Counters keep moving between the per-endpoint reads and the totals: the totals are at least the sum.
assert tot["tx_frames"] >= sum(p["tx_frames"] for p in per), (tot["tx_frames"], [p["tx_frames"] for p in per])
print("ok: telemetry lists 4 endpoints, each with its own counters; totals sum them")
PY
rc=$?
kill -INT "$pid" 2>/dev/null
wait "$pid"
pid=""
if [ $rc -ne 0 ]; then
  echo "FAILED: telemetry of a running droce-gen"
  tail -n 5 "$out/run.txt" | sed 's/^/  /'
  exit 1
fi
echo "1 passed, 0 failed"
