#!/usr/bin/env python3
"""droce-coll's benchmarks (not timed tests): results and the commands that made them.

1. 8 ranks, ring allreduce at 64 MiB against the port rate: a sweep of --egress-gbps finds the
   highest port rate this machine sustains (busbw >= 0.9 x the port rate), then alltoall and
   permutation at that rate beside it.
2. The same allreduce at 0.1 % and 1 % loss on every link, go-back-N against selective repeat:
   completion time (p50, max) and busbw, with the loss-free run of the same invocation set as the
   baseline.

Usage: bench/coll/run.py [--build DIR] [--quick] [--out DIR]
Writes DIR/results.json and DIR/results.md (default bench/coll/). Every run is one droce-coll
process, one lcore, --no-huge, out of place; each figure is from its own run's JSON.
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def run(coll, args, out_json, eal_mb):
    cmd = [coll, "-l", "0", "--no-huge", "-m", str(eal_mb), "--no-pci", "--no-shconf", "--",
           *args, "--placement", "out-of-place", "--quiet", "--json", out_json]
    t0 = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
    wall = time.time() - t0
    shown = "droce-coll -- " + " ".join(args)
    if p.returncode != 0:
        print(p.stdout[-3000:], p.stderr[-2000:], file=sys.stderr)
        raise SystemExit(f"failed ({p.returncode}): {shown}")
    d = json.load(open(out_json))
    r = d["results"][-1]
    o = r["out_of_place"]
    return {
        "command": shown,
        "size": r["size"],
        "time_us": r["time_us"],
        "busbw_gbps": r["busbw_gbps"],
        "algbw_gbps": r["algbw_gbps"],
        "iter_p50_us": o["iteration_us"]["p50"],
        "iter_max_us": o["iteration_us"]["max"],
        "retransmitted_packets": o["retransmitted_packets"],
        "naks_received": o["naks_received"],
        "wrong": r["wrong"],
        "wall_s": round(wall, 1),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--quick", action="store_true", help="16 MiB and fewer iterations (a check of the script)")
    ap.add_argument("--out", default=HERE)
    a = ap.parse_args()
    coll = os.path.join(a.build, "apps", "droce-coll", "droce-coll")
    size = "16M" if a.quick else "64M"
    iters = ["--iters", "2" if a.quick else "3", "--warmup_iters", "1"]
    common = ["--ranks", "8", "--size", size, "--chunk", "256K", "--buffers", "8", "--mtu", "4096",
              # A QP's window (128 x 4 KiB) takes 10 to 100 ms to drain at these port rates: an ACK
              # timeout below that resends what is only queued (go-back-N's drop spiral). 1.07 s.
              "--qp-timeout", "18", "--timeout", "600", *iters]
    tmp = os.path.join(a.out, "tmp.json")
    res = {"host": os.uname().nodename, "cpus": os.cpu_count(), "size": size, "rate_sweep": [], "beside": [],
           "loss": []}
    # 1. The port rate: unshaped first (what the CPU gives), then shaped rates up to it.
    unshaped = run(coll, ["--pattern", "allreduce", *common], tmp, 1536)
    res["unshaped"] = unshaped
    print(f"unshaped: busbw {unshaped['busbw_gbps']:.2f} Gb/s", flush=True)
    best = None
    # Port rates up to twice what the unshaped run reached (the CPU's ceiling on this machine).
    rates = [g for g in (0.05, 0.1, 0.2, 0.5, 1, 2, 4, 8) if g <= 2 * unshaped["busbw_gbps"]]
    for g in rates or [round(unshaped["busbw_gbps"] / 2, 3)]:
        r = run(coll, ["--pattern", "allreduce", *common, "--egress-gbps", str(g)], tmp, 1536)
        r["port_gbps"] = g
        r["ratio"] = r["busbw_gbps"] / g
        res["rate_sweep"].append(r)
        print(f"port {g} Gb/s: busbw {r['busbw_gbps']:.3f} Gb/s ({r['ratio']:.2f} x)", flush=True)
        if r["ratio"] >= 0.9:
            best = g
    # No rate reaching 0.9 x (a loaded host): the comparisons run at the lowest rate swept.
    res["sustained"] = best is not None
    res["port_gbps"] = best if best is not None else res["rate_sweep"][0]["port_gbps"]
    rate = ["--egress-gbps", str(res["port_gbps"])]
    for pat in ("alltoall", "permutation"):
        r = run(coll, ["--pattern", pat, *common, *rate], tmp, 1536)
        r["pattern"] = pat
        res["beside"].append(r)
        print(f"{pat}: busbw {r['busbw_gbps']:.3f} Gb/s", flush=True)
    # 2. Loss, go-back-N against selective repeat, at the same port rate.
    for loss in (0, 0.001, 0.01):
        for rec in ("gbn", "sr"):
            if loss == 0 and rec == "sr":
                continue
            r = run(coll, ["--pattern", "allreduce", *common, *rate, "--loss", str(loss), "--recovery", rec,
                           "--seed", "3"], tmp, 1536)
            r["loss"] = loss
            r["recovery"] = rec
            res["loss"].append(r)
            print(f"loss {loss} {rec}: p50 {r['iter_p50_us'] / 1e3:.1f} ms, busbw {r['busbw_gbps']:.3f} Gb/s, "
                  f"retransmitted {r['retransmitted_packets']}", flush=True)
    os.remove(tmp)
    json.dump(res, open(os.path.join(a.out, "results.json"), "w"), indent=1)
    md = [f"# droce-coll benchmarks ({'quick' if a.quick else 'full'} run)", "",
          f"`bench/coll/run.py{' --quick' if a.quick else ''}` on {res['cpus']} CPUs; every run one droce-coll "
          f"process on one lcore (ranks, switch and links), --no-huge, 8 ranks, out of place, chunk 256 KiB x 8 slots, "
          "MTU 4096, --qp-timeout 18, float32; every byte verified in every run (wrong = 0).", "",
          "## Ring allreduce busbw against the port rate", "",
          "| port rate (--egress-gbps) | busbw (Gb/s) | busbw / port rate | iteration p50 (ms) | command |", "|---|---|---|---|---|",
          f"| unshaped | {unshaped['busbw_gbps']:.3f} | - | {unshaped['iter_p50_us'] / 1e3:.1f} | `{unshaped['command']}` |"]
    for r in res["rate_sweep"]:
        md.append(f"| {r['port_gbps']} Gb/s | {r['busbw_gbps']:.3f} | {r['ratio']:.2f} | {r['iter_p50_us'] / 1e3:.1f} | "
                  f"`{r['command']}` |")
    best_ratio = max(res["rate_sweep"], key=lambda r: r["ratio"])
    md += ["", (f"Highest port rate sustained (busbw >= 0.9 x port rate): **{res['port_gbps']} Gb/s**." if res["sustained"]
                else f"**No port rate reached 0.9 x** on this host (best {best_ratio['ratio']:.2f} x at "
                     f"{best_ratio['port_gbps']} Gb/s); the runs below use the lowest rate swept, {res['port_gbps']} Gb/s."), "",
           "## Beside it, at that port rate", "", "| pattern | busbw (Gb/s) | busbw / port rate | command |",
           "|---|---|---|---|"]
    for r in res["beside"]:
        md.append(f"| {r['pattern']} | {r['busbw_gbps']:.3f} | {r['busbw_gbps'] / res['port_gbps']:.2f} | `{r['command']}` |")
    md += ["", "## Allreduce under loss: go-back-N against selective repeat", "",
           "| loss (every link) | recovery | iteration p50 (ms) | max (ms) | busbw (Gb/s) | vs loss-free | retransmitted packets | command |",
           "|---|---|---|---|---|---|---|---|"]
    base = res["loss"][0]["busbw_gbps"]
    for r in res["loss"]:
        md.append(f"| {r['loss']} | {r['recovery']} | {r['iter_p50_us'] / 1e3:.1f} | {r['iter_max_us'] / 1e3:.1f} | "
                  f"{r['busbw_gbps']:.3f} | {r['busbw_gbps'] / base:.2f} | {r['retransmitted_packets']} | `{r['command']}` |")
    open(os.path.join(a.out, "results.md"), "w").write("\n".join(md) + "\n")
    print("\n".join(md))


if __name__ == "__main__":
    main()
