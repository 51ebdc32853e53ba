#!/usr/bin/python3
"""A stuck NIC's PFC storm over the lab leaf-spine, with and without the switches' PFC watchdog
(issue 39's benchmark). Runs bench/fabric/pfc_storm (droce's LeafSpine and LabSwitch on the
fabric's own clock, so the figures do not depend on the host's load) for four cases:

  healthy           no stuck NIC
  stuck             host 0's NIC pauses forever, no watchdog
  stuck + wd 20 ms  the same, every switch's PFC watchdog at 20 ms
  stuck + wd 5 ms   at 5 ms

and writes DIR/pfc_storm.json (every run's report), DIR/pfc_storm.md (the table, with the command
of every row) and, with matplotlib, DIR/pfc_storm.png (innocent goodput and paused egress ports
over time).

Usage: bench/fabric/pfc_storm.py [--build DIR] [--duration-ms MS] [--out DIR]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

CASES = [
    ("healthy", ["--stuck-endpoint", "none"]),
    ("stuck, no watchdog", ["--stuck-endpoint", "0"]),
    ("stuck, watchdog 20 ms", ["--stuck-endpoint", "0", "--pfc-watchdog-ms", "20"]),
    ("stuck, watchdog 5 ms", ["--stuck-endpoint", "0", "--pfc-watchdog-ms", "5"]),
]


def run(binary, args, tmp):
    out = os.path.join(tmp, "run.json")
    cmd = [binary, *args, "--json", out]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=600)
    if p.returncode != 0:
        sys.exit("pfc_storm failed (%d): %s\n%s" % (p.returncode, " ".join(cmd), p.stderr))
    with open(out) as f:
        r = json.load(f)
    r["command"] = "pfc_storm " + " ".join(args)
    r["line"] = p.stdout.strip()
    return r


def table(results):
    rows = ["| case | innocent Gb/s (whole run) | last half | of offered | storm Gb/s | hosts paused | "
            "egress ports paused | paused host time (sum) | watchdog trips | watchdog drops | tail drops | command |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for name, r in results:
        s = r["summary"]
        host_time = sum(h["paused_fraction"] for h in r["hosts"]) * r["config"]["duration_ms"]
        rows.append("| %s | %.3f | %.3f | %.3f | %.3f | %d of %d | %d of %d | %.1f ms | %d | %d | %d | `%s` |" % (
            name, s["innocent_gbps"], s["innocent_gbps_last_half"], s["innocent_offered_gbps"], s["storm_gbps"],
            s["hosts_paused"], r["config"]["hosts"], s["egress_ports_paused"], s["egress_ports"], host_time,
            s["watchdog_trips"], s["watchdog_drops"], s["tail_drops"], r["command"]))
    return "\n".join(rows)


def flows_table(results):
    names = [n for n, _ in results]
    rows = ["| flow | kind | " + " | ".join(names) + " |", "|---|---|" + "---:|" * len(names)]
    for i, f in enumerate(results[0][1]["flows"]):
        cells = ["%.3f" % r["flows"][i]["gbps_last_half"] for _, r in results]
        rows.append("| h%d -> h%d | %s | %s |" % (f["src"], f["dst"], f["kind"], " | ".join(cells)))
    return "\n".join(rows)


def paused_ports(results):
    lines = []
    for name, r in results:
        held = ["%s %.2f" % (p["name"], p["paused_fraction"]) for p in r["egress_ports"] if p["paused_fraction"] > 0]
        lines.append("- %s: %s" % (name, ", ".join(held) if held else "none"))
    return "\n".join(lines)


def plot(results, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("no matplotlib: %s not drawn" % path, file=sys.stderr)
        return False
    fig, (a, b) = plt.subplots(2, 1, figsize=(9, 6.5), sharex=True)
    for name, r in results:
        s = r["series"]
        style = {"color": "black", "linestyle": "--"} if name == "healthy" else {}
        a.plot(s["t_ms"], s["innocent_gbps"], label=name, **style)
        b.step(s["t_ms"], s["egress_ports_paused"], where="post", label=name, **style)
    a.set_ylabel("innocent flows, Gb/s")
    a.set_title("A stuck NIC's PFC storm on a 4x2 leaf-spine (8 hosts, 10 Gb/s links)")
    a.legend(fontsize=8)
    b.set_ylabel("egress ports paused\n(in each 1 ms)")
    b.set_xlabel("fabric time, ms")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--duration-ms", type=float, default=200)
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    a = ap.parse_args()
    binary = os.path.join(a.build, "bench", "fabric", "pfc_storm")
    if not os.access(binary, os.X_OK):
        sys.exit("no %s: build it first (ninja -C %s bench/fabric/pfc_storm)" % (binary, a.build))
    os.makedirs(a.out, exist_ok=True)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, args in CASES:
            r = run(binary, [*args, "--duration-ms", "%g" % a.duration_ms], tmp)
            print(name + ": " + r["line"])
            results.append((name, r))
    with open(os.path.join(a.out, "pfc_storm.json"), "w") as f:
        json.dump([{"case": n, **r} for n, r in results], f, indent=1)
    drawn = plot(results, os.path.join(a.out, "pfc_storm.png"))
    with open(os.path.join(a.out, "pfc_storm-table.md"), "w") as f:
        f.write(table(results) + "\n\nEach flow's goodput over the last half (Gb/s):\n\n" + flows_table(results) +
                "\n\nEgress ports held by pauses, with the fraction of the run they were held:\n\n" +
                paused_ports(results) + "\n" + ("\n![storm](pfc_storm.png)\n" if drawn else ""))
    print("wrote %s" % os.path.join(a.out, "pfc_storm-table.md"))


if __name__ == "__main__":
    main()
