#!/usr/bin/env bash
# DPDK telemetry and packet capture of every running app, queried over EAL's telemetry socket as
# dpdk-telemetry.py does (tests/apps/telemetry_client.py), and with dpdk-telemetry.py and
# dpdk-dumpcap themselves where they are installed:
#  - droce-gen (loopback, 2 workers, 1 % loss): every endpoint (two per worker: each worker runs
#    both ends of its share) with its own counters, totals that sum them; its QPs (state, PSNs,
#    outstanding work, RC counters and their Linux names); /droce/hw_counters; the prefix line on
#    stderr; dpdk-dumpcap captures RoCEv2 frames from it while it runs
#  - droce-echo (loopback), droce-perf (client and server over net_memif), droce-switch (two
#    net_null ports), droce-fwd (net_ring): each answers its commands with moving counters
#   usage: check_telemetry.sh DROCE_GEN DROCE_ECHO DROCE_PERF DROCE_SWITCH DROCE_FWD
set -uo pipefail
gen=$1 echo_bin=$2 perf=$3 switch=$4 fwd=$5
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  rm -rf "$out"
}
trap cleanup EXIT
last_cpu=$(( $(nproc) - 1 ))
passed=0 failed=0
result() {  # NAME RC LOG...
  local name=$1 rc=$2; shift 2
  if [ "$rc" -eq 0 ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAILED: $name"
    for f in "$@"; do [ -f "$f" ] && tail -n 5 "$f" | sed 's/^/  /'; done
  fi
}
# Ctrl-C, then up to 20 s for the exit.
stop() {
  kill -INT "$1" 2>/dev/null
  for _ in $(seq 200); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$1" 2>/dev/null
  wait "$1" 2>/dev/null
}
py() { PYTHONPATH="$here" /usr/bin/python3 - "$@"; }

# ---- droce-gen ----
prefix="droce_tel_gen_$$"
"$gen" --lcores "0@0,1@$last_cpu" --no-pci --file-prefix "$prefix" -- --workers 2 --qps 4 --op send --size 256 \
  --loss 0.01 --duration 60 --quiet --json "$out/gen.json" > "$out/gen.txt" 2>&1 &
pid=$!
pids+=("$pid")
py "$prefix" <<'PY'
import sys
from telemetry_client import socket_path, query, wait_until
path = socket_path(sys.argv[1])
# Wait until traffic flows on every endpoint (the run starts after EAL and the labs are up).
wait_until(path, "/droce/endpoints", lambda ids: len(ids) == 4 and
           all(query(path, f"/droce/endpoint_stats,{i}")["tx_frames"] > 0 for i in ids))
ids = query(path, "/droce/endpoints")
per = [query(path, f"/droce/endpoint_stats,{i}") for i in ids]
for p in per:
    assert p["tx_frames"] > 0 and p["rx_frames"] > 0 and p["qps"] == 2, p
    # Every EndpointCounters field is exported (a static_assert holds the table to the struct):
    # ARP's, ND's, the CNP and PFC side counts among them.
    missing = [k for k in ("arp_requests_sent", "nd_solicitations_sent", "nd_resolve_failures", "cnp_unknown_qp",
                           "pfc_other_frames", "rx_view_bytes_copied", "tx_payload_bytes_inlined") if k not in p]
    assert not missing, missing
unknown = query(path, "/droce/endpoint_stats,99999")
assert unknown.startswith("error: no endpoint 99999"), f"unknown id answered: {unknown}"
tot = query(path, "/droce/endpoint_totals")
assert tot["endpoints"] == 4 and tot["qps"] == 8, tot
# Counters keep moving between the per-endpoint reads and the totals: the totals are at least the sum.
assert tot["tx_frames"] >= sum(p["tx_frames"] for p in per), (tot["tx_frames"], [p["tx_frames"] for p in per])
print("ok: telemetry lists 4 endpoints, each with its own counters; totals sum them")

# The QPs: two per endpoint (its worker's share of one end), all connected (RTS), each with its
# sequence state and counters; the Linux names of a QP's counters match the fields they come from.
sent = 0
for i in ids:
    qps = query(path, f"/droce/qps,{i}")
    assert len(qps) == 2 and all(s == "RTS" for s in qps.values()), (i, qps)
    for qpn in qps:
        q = query(path, f"/droce/qp,{i},{qpn}")
        assert q["qpn"] == int(qpn) and q["state"] == "RTS" and q["dcqcn"] == "off", q
        for k in ("sq_una", "sq_nxt", "rq_epsn", "rq_msn", "dest_qpn"):
            assert 0 <= q[k] < 1 << 24, (k, q)
        assert 0 <= q["outstanding_wrs"] <= 4096, q
        # One read of the QP's counters gives both: the Linux names are the fields they come from.
        assert q["hw_sent_pkts"] == q["packets_sent"] and q["hw_out_of_sequence"] == q["out_of_sequence"], q
        assert q["hw_rnr_nak_retry_err"] == q["rnr_naks_received"], q
        assert q["hw_retry_rnr_exceeded_err"] == q["rnr_nak_retry_err"] == 0, q
        # The QPN as every report prints it, in hex, names the same QP.
        assert query(path, f"/droce/qp,{i},{int(qpn):#06x}")["qpn"] == int(qpn), (i, qpn)
        sent += q["packets_sent"]
assert sent > 0, "no QP sent a packet"
# A bad or unknown parameter gets a reason, not DPDK's bare null.
assert query(path, f"/droce/qp,{ids[0]},99999").startswith(f"error: no QP 0x01869f (99999) on endpoint {ids[0]}")
assert query(path, "/droce/qps,99999").startswith("error: no endpoint 99999")
assert query(path, "/droce/qp,abc").startswith("error: bad endpoint id 'abc'"), query(path, "/droce/qp,abc")
assert query(path, f"/droce/qp,{ids[0]}").startswith("error: missing QPN")
assert query(path, "/droce/port_stats,77").startswith("error: no port 77")
print("ok: /droce/qps and /droce/qp give each QP's state, PSNs, outstanding work and counters")

# Linux names, all endpoints: they only grow, and the 1 % loss shows as gaps the responders saw
# and NAKed, and as the requesters' sequence errors.
hw = wait_until(path, "/droce/hw_counters", lambda h: h["out_of_sequence"] > 0 and h["packet_seq_err"] > 0)
assert hw["sent_pkts"] >= sent and hw["rcvd_pkts"] > 0, (hw, sent)
assert hw["out_of_seq_request"] == hw["out_of_sequence"] and hw["rcvd_seq_err"] == hw["packet_seq_err"], hw
one = query(path, f"/droce/hw_counters,{ids[0]}")
assert set(one) == set(hw) and 0 < one["sent_pkts"] <= query(path, "/droce/hw_counters")["sent_pkts"], one
assert query(path, "/droce/hw_counters,99999").startswith("error: no endpoint 99999")
print("ok: /droce/hw_counters: Linux names, per endpoint and summed; loss shows in out_of_sequence and packet_seq_err")

# The ports droce drives: each named, with its driver, link and ethdev counters; the lab's links
# carry the run's frames.
ports = query(path, "/droce/ports")
assert len(ports) >= 2, ports
stats = [query(path, f"/droce/port_stats,{p}") for p in ports]
for st in stats:
    assert st["name"] and st["driver"] and st["link"] in ("up", "down"), st
assert sum(st["ethdev_opackets"] for st in stats) > 0 and sum(st["ethdev_ipackets"] for st in stats) > 0, stats
print(f"ok: /droce/ports lists {len(ports)} ports; /droce/port_stats names each with moving ethdev counters")
PY
result "droce-gen: endpoints, QPs and Linux-named counters over telemetry" $? "$out/gen.txt"

grep -qxF "droce-gen: EAL file prefix $prefix: dpdk-telemetry.py -f $prefix; dpdk-dumpcap --file-prefix=$prefix -i PORT" \
  "$out/gen.txt"
result "droce-gen: one stderr line names the EAL file prefix for dpdk-telemetry.py and dpdk-dumpcap" $? "$out/gen.txt"

if [ -x /usr/bin/dpdk-telemetry.py ]; then
  echo /droce/hw_counters | timeout 30 /usr/bin/dpdk-telemetry.py -f "$prefix" > "$out/tool.txt" 2>&1
  py "$out/tool.txt" <<'PY'
import json, sys
lines = [l for l in open(sys.argv[1]) if l.startswith('{"/droce/hw_counters"')]
assert lines and json.loads(lines[-1])["/droce/hw_counters"]["sent_pkts"] > 0, open(sys.argv[1]).read()[-500:]
PY
  result "dpdk-telemetry.py -f PREFIX attaches to droce-gen and reads /droce/hw_counters" $? "$out/tool.txt"
fi

if [ -x /usr/bin/dpdk-dumpcap ]; then
  # Port 0 is the first lab link's end; 20 frames of a running droce-gen, then a pcapng check:
  # Ethernet/IPv4/UDP to 4791 with a BTH (RoCEv2).
  timeout 60 /usr/bin/dpdk-dumpcap --file-prefix="$prefix" -i 0 -c 20 -q -w "$out/cap.pcapng" > "$out/dumpcap.txt" 2>&1
  rc=$?
  [ $rc -eq 0 ] && py "$out/cap.pcapng" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
assert data[:4] == b"\x0a\x0d\x0d\x0a", "not a pcapng"
order = "<" if data[8:12] == b"\x4d\x3c\x2b\x1a" else ">"
off, roce = 0, 0
while off + 12 <= len(data):
    btype, blen = struct.unpack_from(order + "II", data, off)
    if blen < 12:
        break
    if btype == 6:  # Enhanced Packet Block
        caplen = struct.unpack_from(order + "I", data, off + 20)[0]
        f = data[off + 28:off + 28 + caplen]
        l3 = 14 + (4 if f[12:14] == b"\x81\x00" else 0)
        if f[l3 - 2:l3] == b"\x08\x00" and f[l3 + 9] == 17:
            l4 = l3 + (f[l3] & 0x0F) * 4
            if struct.unpack_from(">H", f, l4 + 2)[0] == 4791 and len(f) >= l4 + 8 + 12:
                roce += 1
    off += blen
assert roce >= 10, f"{roce} RoCEv2 frames in the capture"
print(f"ok: dpdk-dumpcap captured {roce} RoCEv2 frames")
PY
  result "dpdk-dumpcap captures RoCEv2 frames from a running droce-gen" $? "$out/dumpcap.txt"
fi
stop "$pid"

# ---- droce-echo, loopback: both ends here ----
prefix="droce_tel_echo_$$"
"$echo_bin" -l 0 --no-pci --file-prefix "$prefix" -- --mode loopback --count 100000000 --timeout 30 \
  > "$out/echo.txt" 2>&1 &
pid=$!
pids+=("$pid")
py "$prefix" <<'PY'
import sys
from telemetry_client import socket_path, query, wait_until
path = socket_path(sys.argv[1])
ids = wait_until(path, "/droce/endpoints", lambda ids: len(ids) == 2)
for i in ids:
    qps = wait_until(path, f"/droce/qps,{i}", lambda q: len(q) >= 1 and all(s == "RTS" for s in q.values()))
    q = wait_until(path, f"/droce/qp,{i},{next(iter(qps))}", lambda q: q["packets_sent"] > 0)
wait_until(path, "/droce/hw_counters", lambda h: h["sent_pkts"] > 0 and h["rcvd_pkts"] > 0)
PY
result "droce-echo: endpoints, QPs and Linux-named counters over telemetry" $? "$out/echo.txt"
stop "$pid"

# ---- droce-perf: write_bw for 8 s over net_memif, the client queried ----
prefix="droce_tel_perf_$$"
port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$perf" -l "$last_cpu" --no-pci --vdev "net_memif0,role=server,socket=$out/perf.sock" -- write_bw -p "$port" -D 8 \
  --timeout 30 > "$out/perf.s.txt" 2>&1 &
spid=$!
pids+=("$spid")
for _ in $(seq 150); do grep -q -F "@$out/perf.sock" /proc/net/unix && break; sleep 0.1; done
"$perf" -l 0 --no-pci --file-prefix "$prefix" --vdev "net_memif0,role=client,socket=$out/perf.sock" -- write_bw \
  -p "$port" -D 8 --timeout 30 127.0.0.1 > "$out/perf.c.txt" 2>&1 &
pid=$!
pids+=("$pid")
py "$prefix" <<'PY'
import sys
from telemetry_client import socket_path, query, wait_until
path = socket_path(sys.argv[1])
ids = wait_until(path, "/droce/endpoints", lambda ids: len(ids) >= 1)
qps = wait_until(path, f"/droce/qps,{ids[0]}", lambda q: len(q) >= 1 and all(s == "RTS" for s in q.values()))
wait_until(path, f"/droce/qp,{ids[0]},{next(iter(qps))}", lambda q: q["packets_sent"] > 0 and q["sq_nxt"] != 0)
wait_until(path, "/droce/hw_counters", lambda h: h["sent_pkts"] > 0)
PY
result "droce-perf: endpoints, QPs and Linux-named counters over telemetry" $? "$out/perf.c.txt" "$out/perf.s.txt"
grep -q "^droce-perf: EAL file prefix $prefix: dpdk-telemetry.py -f $prefix; dpdk-dumpcap --file-prefix=$prefix -i PORT" \
  "$out/perf.c.txt" &&
  # The server's prefix is droce's own pick: its hugepage files are unlinked (or, without
  # hugepages, it has no multi-process channel), so the line says why capture cannot attach.
  grep -Eq "^droce-perf: EAL file prefix [^: ]+: dpdk-telemetry.py -f [^ ]+ \(no dpdk-dumpcap: " \
    "$out/perf.s.txt"
result "droce-perf: the prefix line, naming dpdk-dumpcap only where it can attach" $? "$out/perf.c.txt" "$out/perf.s.txt"
stop "$pid"
stop "$spid"

# ---- droce-switch: two net_null ports (null RX frames, flooded to the other port) ----
prefix="droce_tel_sw_$$"
"$switch" -l 0 --no-pci --file-prefix "$prefix" --vdev net_null0 --vdev net_null1 -- --duration 60 --quiet \
  > "$out/switch.txt" 2>&1 &
pid=$!
pids+=("$pid")
py "$prefix" <<'PY'
import sys
from telemetry_client import socket_path, query, query_when_listening, wait_until
path = socket_path(sys.argv[1])
# Its commands answer from the moment the socket exists (registered before EAL starts), so a
# client's first query gets the switch's state, never DPDK's null for an unknown command.
first = query_when_listening(path, "/droce/switch")
assert first is not None and first["state"] in ("starting", "running"), first
wait_until(path, "/droce/switch", lambda s: s["state"] == "running" and s["ports"] == 2)
a = wait_until(path, "/droce/switch_port,0", lambda p: p["rx_frames"] > 0)
b = wait_until(path, "/droce/switch_port,0", lambda p: p["rx_frames"] > a["rx_frames"])
assert b["rx_bytes"] >= a["rx_bytes"] and "queue_bytes" in b and "pfc_pause_sent" in b, b
assert query(path, "/droce/switch_port,2").startswith("error: no port 2: the switch has 2"), query(path, "/droce/switch_port,2")
# Its ethdev ports answer the engine's commands too.
assert query(path, "/droce/ports") == [0, 1], query(path, "/droce/ports")
assert all(query(path, f"/droce/port_stats,{p}")["driver"] == "net_null" for p in (0, 1))
PY
result "droce-switch: its ports' counters over telemetry, moving" $? "$out/switch.txt"
stop "$pid"

# ---- droce-fwd: a net_ring loopback port forwarding 256 injected frames ----
prefix="droce_tel_fwd_$$"
"$fwd" -l 0 --no-pci --file-prefix "$prefix" --vdev net_ring0 -- --tx-first 256 --duration 60 --stats-period 0 \
  > "$out/fwd.txt" 2>&1 &
pid=$!
pids+=("$pid")
py "$prefix" <<'PY'
import sys
from telemetry_client import socket_path, query, wait_until
path = socket_path(sys.argv[1])
wait_until(path, "/droce/ports", lambda p: p == [0])
s = wait_until(path, "/droce/port_stats,0", lambda s: s["rx_packets"] > 0)
assert s["driver"] == "net_ring" and "drop_bad_icrc" in s, s
PY
result "droce-fwd: its port's counters and drop reasons over telemetry" $? "$out/fwd.txt"
stop "$pid"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
