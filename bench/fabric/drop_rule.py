#!/usr/bin/env python3
"""SIGCOMM'16's 1-in-256 drop (issue 39's benchmark): goodput of go-back-0, go-back-N and selective
repeat through `--drop-rule ip-id:0xff`, against the same transfer without the rule, in one run.

"RDMA over Commodity Ethernet at Scale" (Guo et al., SIGCOMM'16, section 5.1): a switch dropped
every IPv4 frame whose Identification ended in 0xff, and NICs that went back to the start of a
message on any loss (go-back-0) never finished a 4 MB message, since every attempt of 4096
packets holds about 16 such frames. droce-gen loopback (both endpoints on one lcore over net_ring)
runs RDMA WRITEs at PMTU 1024, one QP, one message in flight, with the rule at both endpoints'
receive sides (requests and ACKs pass it, as through a switch), for each --sizes entry:

  gbn-lossless, sr-lossless   without the rule: the baselines (same size, same run)
  gbn, sr    go-back-N and selective repeat through the rule, each against its own baseline
  gb0        go-back-0 through the rule, against go-back-N's baseline (without loss they are one
             protocol): messages longer than 256 packets make no progress

Each configuration runs --repeats times in interleaved rounds; the table gives medians. A gb0 run
that completes nothing exits 1 by design (droce-gen's "incomplete run"): it is a sample of 0 Gb/s,
kept when nothing was lost, duplicated or corrupted. Writes --out DIR/drop_rule.json (every sample,
the command lines, the machine's load) and DIR/drop_rule-table.md (the table), and prints the table.
Not a test: about 5 x sizes x repeats x (duration + 1) seconds.
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# (name, recovery, through the rule, the lossless run its ratio is against)
CONFIGS = [("gbn-lossless", "gbn", False, "gbn-lossless"), ("sr-lossless", "sr", False, "sr-lossless"),
           ("gbn", "gbn", True, "gbn-lossless"), ("sr", "sr", True, "sr-lossless"),
           ("gb0", "gb0", True, "gbn-lossless")]


def run(a, size, recovery, rule, work):
    out = os.path.join(work, "gen.json")
    cmd = [a.gen, "-l", a.cpu, *a.eal.split(), "--", "--op", "write", "--size", str(size), "--mtu", "1024",
           "--qps", "1", "--inflight", "1", "--recovery", recovery, "--duration", str(a.duration), "--quiet",
           "--json", out]
    if rule:
        cmd += ["--drop-rule", "ip-id:0xff"]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=a.duration + 120)
    if not os.path.exists(out):
        return None, cmd, p.stdout[-1500:]
    d = json.load(open(out))
    intact = all(d.get(k, 1) == 0 for k in ("lost", "duplicated", "corrupted", "errors"))
    livelock = recovery == "gb0" and p.returncode == 1 and d.get("messages", 0) == 0
    if not intact or (p.returncode != 0 and not livelock):
        return None, cmd, p.stdout[-1500:]
    lr = d.get("loss_recovery", {})
    imp = d.get("impairment", {})
    return {"goodput_gbps": d.get("goodput_gbps", 0.0), "messages": d.get("messages", 0),
            "rule_dropped": imp.get("rule_dropped", 0), "retransmitted_packets": d.get("retransmitted_packets", 0),
            "ack_timeouts": d.get("ack_timeouts", 0),
            "gb0_messages_discarded": lr.get("gb0_messages_discarded", 0), "exit": p.returncode}, cmd, ""


def table(sizes, samples):
    rows = ["| size | recovery | drop rule | goodput Gb/s (median) | x its lossless | runs (Gb/s) | messages | "
            "ruled drops | packets resent | timer expiries | gb0 restarts |",
            "|---:|---|---|---:|---:|---|---:|---:|---:|---:|---:|"]
    for size in sizes:
        for name, rec, rule, base_name in CONFIGS:
            base = samples.get(f"{size}/{base_name}") or []
            b = statistics.median([s["goodput_gbps"] for s in base]) if base else float("nan")
            ss = samples.get(f"{size}/{name}") or []
            label = f"{size // 1024} KiB" if size < 1 << 20 else f"{size >> 20} MiB"
            if not ss:
                rows.append(f"| {label} | {rec} | {'ip-id:0xff' if rule else 'none'} | failed | | | | | | | |")
                continue

            def med(field):
                return statistics.median([s[field] for s in ss])

            g = med("goodput_gbps")
            runs = ", ".join(f"{s['goodput_gbps']:.2f}" for s in ss)
            rows.append(f"| {label} | {rec} | {'ip-id:0xff' if rule else 'none'} | {g:.2f} | {g / b:.2f} | {runs} | "
                        f"{med('messages'):g} | {med('rule_dropped'):g} | {med('retransmitted_packets'):g} | "
                        f"{med('ack_timeouts'):g} | {med('gb0_messages_discarded'):g} |")
    return "\n".join(rows) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gen", default=os.path.join(ROOT, "build/apps/droce-gen/droce-gen"), help="droce-gen binary")
    ap.add_argument("--sizes", default="4194304,65536",
                    help="WRITE sizes in bytes (default 4 MiB, the paper's, and 64 KiB, under 256 packets)")
    ap.add_argument("--duration", type=float, default=5, help="seconds per run (default 5)")
    ap.add_argument("--repeats", type=int, default=3, help="runs per configuration, in rounds (default 3)")
    ap.add_argument("--cpu", default="0", help="the run's lcore (default 0)")
    ap.add_argument("--eal", default="", help="more EAL options, e.g. '--no-huge -m 1024'")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench/fabric/results"), help="where the JSON and table go")
    a = ap.parse_args()
    if a.repeats < 1 or a.duration <= 0:
        ap.error("--repeats and --duration must be positive")
    try:
        sizes = [int(x) for x in a.sizes.split(",")]
    except ValueError:
        ap.error("--sizes: comma-separated byte counts")
    if any(s < 1 or s > 1 << 30 for s in sizes):
        ap.error("--sizes: each 1..1073741824")
    samples, failures, commands = {}, [], {}
    doc = {"argv": sys.argv, "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "machine": {"cpus": os.cpu_count(), "kernel": platform.release(), "python": platform.python_version()},
           "load_before": list(os.getloadavg())}
    doc["git"] = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], stdout=subprocess.PIPE,
                                text=True).stdout.strip()
    for rnd in range(a.repeats):
        for size in sizes:
            for name, rec, rule, _ in CONFIGS:
                key = f"{size}/{name}"
                with tempfile.TemporaryDirectory(prefix="droce-rule-") as work:
                    f, cmd, log = run(a, size, rec, rule, work)
                commands[key] = cmd
                if f is None:
                    failures.append({"config": key, "round": rnd, "log": log})
                    print(f"{key} round {rnd}: failed\n{log}", file=sys.stderr, flush=True)
                    continue
                samples.setdefault(key, []).append(dict(f, round=rnd))
                print(f"{key} round {rnd}: {f['goodput_gbps']:.3f} Gb/s, {f['messages']} messages, "
                      f"{f['rule_dropped']} ruled drops, {f['gb0_messages_discarded']} gb0 restarts", flush=True)
    doc.update({"load_after": list(os.getloadavg()), "samples": samples, "failures": failures, "commands": commands})
    md = table(sizes, samples)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "drop_rule.json"), "w") as f:
        json.dump(doc, f, indent=1)
    with open(os.path.join(a.out, "drop_rule-table.md"), "w") as f:
        f.write(md)
    print(md)
    return 0 if all(samples.get(f"{s}/{n}") for s in sizes for n, _, _, _ in CONFIGS) else 1


if __name__ == "__main__":
    sys.exit(main())
