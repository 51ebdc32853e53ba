#!/usr/bin/python3
"""The plots of docs/fabric-lab.md's failure recipes (issue 39), each from the recipe's own command:

  link_down.png     droce-coll's allreduce over leafspine:2,2 whose busy uplink fails at 50 ms and
                    returns at 150 ms: every leaf-spine queue over time (--sample-ms), the failed
                    link's drops and re-hashed flows in the title
  slow_receiver.png droce-switch's live lab, two senders to a receiver whose NIC drains at a
                    quarter of its 2 Gb/s port (--slow-receiver), beside the same run without it:
                    the bottleneck's queue and the receiver's goodput over time
  drop_rule.png     the 1-in-256 drop (bench/fabric/drop_rule.py's committed samples): go-back-0,
                    go-back-N and selective repeat against their lossless runs
(the PFC storm's plot is pfc_storm.py's). The live runs measure this host as much as the fabric:
read the shapes (a queue that moves, a pause-held bottleneck), not the absolute rates.

Usage: bench/fabric/recipes.py [--build DIR] [--out DIR]   (default: build, docs/plots)
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
EAL = ["-l", "0", "--no-huge", "-m", "1024", "--no-pci", "--no-shconf"]


def run(cmd, what):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, timeout=600)
    if p.returncode != 0:
        sys.exit("%s failed (%d): %s\n%s" % (what, p.returncode, " ".join(cmd), p.stdout[-3000:]))
    return p.stdout


LINK_DOWN = ["--fabric", "leafspine:2,2", "--ranks", "8", "--pattern", "allreduce", "--size", "2M", "--iters", "2",
             "--egress-gbps", "1", "--uplink-gbps", "0.1", "--ecmp-hash", "dst-port", "--qps-per-peer", "4",
             "--shaper-burst-us", "2000", "--qp-timeout", "16", "--placement", "out-of-place", "--quiet"]


def link_down(build, tmp, plt, out):
    coll = os.path.join(build, "apps", "droce-coll", "droce-coll")
    # Which spine the dst-port hash put leaf 0's cross-leaf flows on: the busy uplink fails.
    probe = os.path.join(tmp, "probe.json")
    run([coll, *EAL, "--", *LINK_DOWN, "--iters", "1", "--json", probe], "droce-coll (probe)")
    links = json.load(open(probe))["fabric"]["links"]
    spine = next(l["spine"] for l in links if l["leaf"] == 0 and l["up"]["tx_frames"] > 0)
    j = os.path.join(tmp, "ld.json")
    args = [*LINK_DOWN, "--link-down", "0:%d@50:150" % spine]
    run([coll, *EAL, "--", *args, "--json", j], "droce-coll --link-down")
    d = json.load(open(j))
    s = d["fabric"]["series"]
    failed = next(l for l in d["fabric"]["links"] if l["leaf"] == 0 and l["spine"] == spine)
    fig, (a, b) = plt.subplots(2, 1, figsize=(9, 6), sharex=True)
    for l in s["links"]:
        a.plot(s["time_ms"], [v / 1e3 for v in l["up_queue_bytes"]], label=l["name"] + " up")
        b.plot(s["time_ms"], [v / 1e3 for v in l["down_queue_bytes"]], label=l["name"] + " down")
    for ax in (a, b):
        ax.axvspan(failed["last_down_ms"], failed["last_up_ms"] if failed["last_up_ms"] else s["time_ms"][-1],
                   color="grey", alpha=0.2)
        ax.legend(fontsize=7, ncol=2)
    a.set_ylabel("leaf -> spine queue, KB")
    b.set_ylabel("spine -> leaf queue, KB")
    b.set_xlabel("ms from the first timed iteration")
    a.set_title("leaf0-spine%d down %.0f-%.0f ms (grey): %d + %d frames dropped, %d + %d flows re-hashed; %s" % (
        spine, failed["last_down_ms"], failed["last_up_ms"] or -1,
        failed["up"]["link_down_drops"] + failed["down"]["link_down_lost"],
        failed["down"]["link_down_drops"] + failed["up"]["link_down_lost"],
        failed["up"]["rehashed_flows"], sum(l["up"]["rehashed_flows"] for l in d["fabric"]["links"]) -
        failed["up"]["rehashed_flows"], "exact" if d["wrong"] == 0 and d["ok"] else "WRONG"), fontsize=9)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "link_down.png"), dpi=90)
    return "droce-coll -- " + " ".join(args) + " --json ld.json"


SLOW = ["--lab-senders", "2", "--lab-duration-ms", "200", "--cc", "none", "--pfc", "--pfc-xoff-bytes", "30000",
        "--pfc-xon-bytes", "15000"]


def slow_receiver(build, tmp, plt, out):
    sw = os.path.join(build, "apps", "droce-switch", "droce-switch")
    runs = []
    for name, extra in (("receiver at line rate", []), ("slow receiver, 0.25", ["--slow-receiver", "2:0.25"])):
        j = os.path.join(tmp, "sw.json")
        run([sw, "--", *SLOW, *extra, "--json", j], "droce-switch " + name)
        runs.append((name, json.load(open(j)), extra))
    fig, (a, b) = plt.subplots(2, 1, figsize=(9, 6), sharex=True)
    for name, d, _ in runs:
        s = d["series"]
        a.plot(s["time_ms"], [q / 1e3 for q in s["queue_bytes"]], label=name)
        # The senders' goodput together, over 10 samples (a sample holds a message or none).
        total = [sum(g) if isinstance(g, list) else g for g in s["goodput_gbps"]]
        smooth = [sum(total[max(0, i - 9):i + 1]) / len(total[max(0, i - 9):i + 1]) for i in range(len(total))]
        b.plot(s["time_ms"], smooth, label=name)
    a.set_ylabel("bottleneck queue, KB")
    b.set_ylabel("goodput, both senders, Gb/s\n(10-sample mean)")
    b.set_xlabel("ms")
    slow = runs[1][1]["bottleneck"]
    a.set_title("2 senders -> 2 Gb/s port; the slow receiver's NIC sent %d pauses (%d ms held); data %s" % (
        slow["slow_receiver_pauses"], slow["pfc_paused_ns"] // 1_000_000,
        "verified" if runs[1][1]["data_ok"] else "WRONG"), fontsize=9)
    a.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "slow_receiver.png"), dpi=90)
    return "droce-switch -- " + " ".join(SLOW + runs[1][2]) + " --json slow.json"


def drop_rule(plt, out):
    d = json.load(open(os.path.join(HERE, "results", "drop_rule.json")))
    sizes = sorted({k.split("/")[0] for k in d["samples"]}, key=int, reverse=True)
    recs = ["gb0", "gbn", "sr"]
    fig, ax = plt.subplots(figsize=(8, 4))
    width = 0.13
    for i, size in enumerate(sizes):
        for k, rec in enumerate(recs):
            ratio = []
            # go-back-0 is go-back-N until a loss: its lossless run is go-back-N's (drop_rule.py's).
            lossless = d["samples"].get("%s/%s-lossless" % (size, "gbn" if rec == "gb0" else rec), [])
            rule = d["samples"].get("%s/%s" % (size, rec), [])
            if not lossless or not rule:
                continue
            base = sorted(x["goodput_gbps"] for x in lossless)[len(lossless) // 2]
            ratio = sorted(x["goodput_gbps"] / base for x in rule)[len(rule) // 2] if base > 0 else 0
            ax.bar(i + (k - 1) * width * 1.2, ratio, width, color="C%d" % k, label=rec if i == 0 else None)
            ax.text(i + (k - 1) * width * 1.2, ratio + 0.02, "%.2f" % ratio, ha="center", fontsize=8)
    ax.set_xticks(range(len(sizes)))
    ax.set_xticklabels(["%d KiB WRITEs" % (int(s) // 1024) for s in sizes])
    ax.set_ylabel("goodput / lossless (median)")
    ax.set_ylim(0, 1.15)
    ax.set_title("IPv4 ID ending in 0xff dropped (1 in 256): go-back-0 livelocks on 4 MiB", fontsize=10)
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(out, "drop_rule.png"), dpi=90)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "plots"))
    a = ap.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("recipes.py draws with matplotlib: run it with /usr/bin/python3")
    os.makedirs(a.out, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        print("link_down.png:", link_down(a.build, tmp, plt, a.out))
        print("slow_receiver.png:", slow_receiver(a.build, tmp, plt, a.out))
    drop_rule(plt, a.out)
    print("drop_rule.png: from bench/fabric/results/drop_rule.json")


if __name__ == "__main__":
    main()
