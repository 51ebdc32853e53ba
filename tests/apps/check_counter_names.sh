#!/usr/bin/env bash
# Counters by their Linux names (docs/counters.md):
#  - the engine's table (engine/endpoint/linux_counter_names.cc) and the docs list the same names,
#    those droce has and those it has not
#  - droce-gen's --json (a lossy loopback run) carries "hw_counters" with exactly those names,
#    equal to the report's own keys for the same events, "drop_reasons", "version", "timestamp";
#    every --stats-json line carries them too, growing, and the final line's equal the report's
#  - droce-echo's --json carries them, and droce-switch's lab --json (equal to its receiver's own
#    DCQCN counts)
#   usage: check_counter_names.sh DROCE_GEN DROCE_ECHO DROCE_SWITCH SOURCE_ROOT
set -uo pipefail
gen=$1 echo_bin=$2 switch=$3 root=$4
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
passed=0 failed=0
result() {  # NAME RC LOG...
  local name=$1 rc=$2; shift 2
  if [ "$rc" -eq 0 ]; then
    passed=$((passed + 1))
    echo "ok: $name"
  else
    failed=$((failed + 1))
    echo "FAILED: $name"
    for f in "$@"; do [ -f "$f" ] && tail -n 5 "$f" | sed 's/^/  /'; done
  fi
}

# The names the engine publishes, read from its table; the test's other steps compare with them.
/usr/bin/python3 - "$root" "$out/names.txt" <<'PY'
import re, sys
root, dest = sys.argv[1], sys.argv[2]
src = open(f"{root}/engine/endpoint/linux_counter_names.cc").read()
mapped_part = src.split("kCounters[] = {")[1].split("};")[0]
unmapped_part = src.split("kUnmapped[] = {")[1].split("};")[0]
mapped = re.findall(r'\{"([a-z_0-9]+)",\s*"(?:mlx5|rxe)', mapped_part)
unmapped = re.findall(r'\{"([a-z_0-9]+)",\s*"(?:mlx5|rxe)', unmapped_part)
assert len(mapped) >= 20 and len(unmapped) >= 10, (mapped, unmapped)
doc = open(f"{root}/docs/counters.md").read()
have = doc.split("## The names droce has")[1].split("## Linux names droce does not have")[0]
have_not = doc.split("## Linux names droce does not have")[1].split("## Drop reasons")[0]
doc_mapped = re.findall(r"^\| `([a-z_0-9]+)` \|", have, re.M)
doc_unmapped = [n for row in re.findall(r"^\| (`[^|]+) \|", have_not, re.M) for n in re.findall(r"`([a-z_0-9]+)`", row)]
assert sorted(doc_mapped) == sorted(mapped), ("docs vs engine, names droce has", sorted(set(doc_mapped) ^ set(mapped)))
assert sorted(doc_unmapped) == sorted(unmapped), ("docs vs engine, names it has not", sorted(set(doc_unmapped) ^ set(unmapped)))
assert not set(mapped) & set(unmapped)
open(dest, "w").write("\n".join(mapped) + "\n")
PY
result "docs/counters.md and the engine's table list the same Linux names" $?

# A second of traffic, not a message count: the feed needs two lines or more (--interval 0.2), and
# with tail-loss probes 3000 messages at 2 % loss may finish before the first (docs/transport.md).
timeout 120 "$gen" -- --op send --size 1024 --qps 2 --loss 0.02 --duration 1 --quiet --json "$out/gen.json" \
  --stats-json "$out/feed.jsonl" --interval 0.2 > "$out/gen.txt" 2>&1
rc=$?
[ $rc -eq 0 ] && /usr/bin/python3 - "$out/gen.json" "$out/feed.jsonl" "$out/names.txt" <<'PY'
import json, re, sys, datetime
j = json.load(open(sys.argv[1]))
names = open(sys.argv[3]).read().split()
hw = j["hw_counters"]
assert sorted(hw) == sorted(names), sorted(set(hw) ^ set(names))
# The same events under the report's own keys (both ends of the loopback, summed alike).
same = {"out_of_sequence": "out_of_sequence", "duplicate_request": "duplicate_requests",
        "local_ack_timeout_err": "ack_timeouts", "rnr_nak_retry_err": "rnr_naks", "np_cnp_sent": "cnps_sent",
        "rp_cnp_handled": "rp_cnp_handled", "rp_cnp_ignored": "rp_cnp_ignored",
        "np_ecn_marked_roce_packets": "np_ecn_marked_roce_packets"}
for linux, own in same.items():
    assert hw[linux] == j[own], (linux, hw[linux], own, j[own])
# The loss-recovery timer's counts (docs/transport.md) under mlx5's adaptive-retransmission names.
lr = j["loss_recovery"]
assert lr["adaptive_rto"] == "on" and lr["ack_timeouts"] == j["ack_timeouts"], lr
assert hw["roce_adp_retrans_to"] == lr["adaptive_timeouts"], (hw["roce_adp_retrans_to"], lr)
assert hw["roce_adp_retrans"] == lr["adaptive_timeouts"] + lr["tail_probes"], (hw["roce_adp_retrans"], lr)
assert len(lr["rto_us"]) == len(lr["pto_us"]) == len(lr["srtt_us"]) == len(lr["min_rtt_us"]) == 2 and all(r > 0 for r in lr["rto_us"]), lr
# 2 % loss: gaps seen and NAKed, and resends.
assert hw["out_of_sequence"] > 0 and hw["packet_seq_err"] > 0, hw
assert hw["sent_pkts"] >= j["retransmitted_packets"] > 0 and hw["rcvd_pkts"] > 0, (hw, j["retransmitted_packets"])
assert hw["out_of_seq_request"] == hw["out_of_sequence"] and hw["rcvd_seq_err"] == hw["packet_seq_err"], hw
drops = j["drop_reasons"]
assert "bad_icrc" in drops and "unknown_qpn" in drops and all(isinstance(v, int) for v in drops.values()), drops
assert re.fullmatch(r"\d+\.\d+\.\d+", j["version"]["droce"]) and re.fullmatch(r"\d+\.\d+(\.\d+)*", j["version"]["dpdk"]), j["version"]
t = datetime.datetime.strptime(j["timestamp"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc)
assert abs((datetime.datetime.now(datetime.timezone.utc) - t).total_seconds()) < 600, j["timestamp"]
lines = [json.loads(l) for l in open(sys.argv[2])]
assert len(lines) >= 2 and lines[-1]["final"], len(lines)
prev = None
for l in lines:
    assert sorted(l["hw_counters"]) == sorted(names) and "drop_reasons" in l and "timestamp" in l, l.keys()
    if prev is not None:
        assert all(l["hw_counters"][n] >= prev[n] for n in names), (prev, l["hw_counters"])
    prev = l["hw_counters"]
assert lines[-1]["hw_counters"] == hw and lines[-1]["version"] == j["version"], (lines[-1]["hw_counters"], hw)
print(f"ok: {len(names)} Linux names in the report and in {len(lines)} feed lines")
PY
result "droce-gen --json and --stats-json: Linux names, consistent with the report's keys; drop reasons, version, timestamp" $? "$out/gen.txt"

timeout 120 "$echo_bin" -- --mode loopback --count 2000 --json "$out/echo.json" > "$out/echo.txt" 2>&1
rc=$?
[ $rc -eq 0 ] && /usr/bin/python3 - "$out/echo.json" "$out/names.txt" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
names = open(sys.argv[2]).read().split()
assert sorted(j["hw_counters"]) == sorted(names) and j["hw_counters"]["sent_pkts"] >= 4000, j["hw_counters"]
assert "drop_reasons" in j and "timestamp" in j and "droce" in j["version"], j.keys()
PY
result "droce-echo --json: Linux names, drop reasons, version, timestamp" $? "$out/echo.txt"

timeout 120 "$switch" -- --lab-senders 2 --lab-duration-ms 100 --json "$out/sw.json" > "$out/sw.txt" 2>&1
rc=$?
[ $rc -eq 0 ] && /usr/bin/python3 - "$out/sw.json" "$out/names.txt" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
names = open(sys.argv[2]).read().split()
hw = j["hw_counters"]
assert sorted(hw) == sorted(names) and hw["sent_pkts"] > 0, hw
# Only the receiver marks CNPs and counts CE: the lab's sums equal its own figures.
assert hw["np_cnp_sent"] == j["receiver"]["np_cnp_sent"], (hw["np_cnp_sent"], j["receiver"])
assert hw["np_ecn_marked_roce_packets"] == j["receiver"]["np_ecn_marked_roce_packets"], (hw, j["receiver"])
assert "drop_reasons" in j and "timestamp" in j and "droce" in j["version"], j.keys()
PY
result "droce-switch lab --json: Linux names, equal to the receiver's DCQCN counts" $? "$out/sw.txt"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
