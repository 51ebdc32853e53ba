#!/usr/bin/python3
"""ECMP collisions on a leaf-spine (issue 38): busbw of a permutation with the default hash and
1, 4 and 8 QPs per pair, beside hashes and source ports that collide on purpose, all in one run,
and beside what random hashing (balls into bins) predicts for the same flows.

The fabric: --fabric leafspine:4,2, 8 ranks (2 a leaf), every rank's port at G Gb/s and every
leaf-spine link at G/2 (each leaf has 2G of ranks behind G of uplinks: 2:1 oversubscribed).
Each run is one droce-coll process on one lcore, --no-huge, out of place; every byte verified.

The model beside each run is a fluid one: the run takes as long as its busiest link (bytes /
rate), over the rank links and the leaf-spine links both ways. "links" applies it to the bytes
each leaf-spine link carried in that run (its JSON's fabric.links); "random hashing" is its mean
over 20,000 draws of a spine per flow (each pair's K QPs K flows, S/K bytes each) for the same
permutation. Both are reported as busbw relative to the ideal split (every uplink equally busy).

Usage: bench/fabric/run.py [--build DIR] [--quick] [--out DIR] [--replot]
Writes DIR/results.json, DIR/results.md and, with matplotlib, DIR/ecmp.png (default bench/fabric/).
"""
import argparse
import json
import os
import random
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
LEAVES, SPINES, RANKS = 4, 2, 8


def run(coll, args, out_json):
    cmd = [coll, "-l", "0", "--no-huge", "-m", "1024", "--no-pci", "--no-shconf", "--",
           *args, "--placement", "out-of-place", "--quiet", "--json", out_json]
    t0 = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    shown = "droce-coll -- " + " ".join(args)
    if p.returncode != 0:
        print(p.stdout[-3000:], p.stderr[-2000:], file=sys.stderr)
        raise SystemExit(f"failed ({p.returncode}): {shown}")
    d = json.load(open(out_json))
    d["_command"] = shown
    d["_wall_s"] = round(time.time() - t0, 1)
    return d


def fluid_time(pairs, assign, size, g, up):
    """Seconds the busiest link needs: pairs (a, b) send `size` bytes each, split over the
    flows in assign[(a, b)] (a list of spines, one per QP)."""
    rank_out = {a: size for a, _ in pairs}
    link = {}
    per_leaf = RANKS // LEAVES
    for (a, b), spines in assign.items():
        la, lb = a // per_leaf, b // per_leaf
        if la == lb:
            continue
        for s in spines:
            link[("up", la, s)] = link.get(("up", la, s), 0) + size / len(spines)
            link[("down", lb, s)] = link.get(("down", lb, s), 0) + size / len(spines)
    t_rank = max(rank_out.values()) * 8 / (g * 1e9)
    t_link = max(link.values(), default=0) * 8 / (up * 1e9)
    return max(t_rank, t_link)


def ideal_time(pairs, size, g, up):
    """The busiest link when every leaf's cross traffic splits evenly over its uplinks."""
    per_leaf = RANKS // LEAVES
    up_bytes, down_bytes = {}, {}
    for a, b in pairs:
        la, lb = a // per_leaf, b // per_leaf
        if la != lb:
            up_bytes[la] = up_bytes.get(la, 0) + size
            down_bytes[lb] = down_bytes.get(lb, 0) + size
    t_rank = size * 8 / (g * 1e9)
    t_link = max(list(up_bytes.values()) + list(down_bytes.values()), default=0) / SPINES * 8 / (up * 1e9)
    return max(t_rank, t_link)


def random_hashing(pairs, k, size, g, up, draws=20000, seed=1):
    rng = random.Random(seed)
    ideal = ideal_time(pairs, size, g, up)
    total = 0.0
    for _ in range(draws):
        assign = {p: [rng.randrange(SPINES) for _ in range(k)] for p in pairs}
        total += ideal / fluid_time(pairs, assign, size, g, up)
    return total / draws


def measured_links_ratio(d, pairs, size, g, up):
    """The fluid model on the bytes each leaf-spine link carried (payload share of its frames)."""
    links = d["fabric"]["links"]
    up_total = sum(l["up"]["tx_bytes"] for l in links)
    per_leaf = RANKS // LEAVES
    cross = sum(size for a, b in pairs if a // per_leaf != b // per_leaf)
    if up_total == 0:
        return 1.0
    # Frame bytes include headers and ACKs: scale them to the payload that crossed.
    scale = 2 * cross / (up_total + sum(l["down"]["tx_bytes"] for l in links))
    busiest = max(max(l["up"]["tx_bytes"], l["down"]["tx_bytes"]) for l in links) * scale
    t = max(size * 8 / (g * 1e9), busiest * 8 / (up * 1e9))
    return ideal_time(pairs, size, g, up) / t


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--quick", action="store_true", help="1 MiB, 1 iteration (a check of the script)")
    ap.add_argument("--out", default=HERE)
    ap.add_argument("--gbps", type=float, default=0.05, help="every rank's port (uplinks at half)")
    ap.add_argument("--replot", action="store_true", help="only draw DIR/ecmp.png from DIR/results.json")
    a = ap.parse_args()
    if a.replot:
        plot(a, json.load(open(os.path.join(a.out, "results.json"))))
        return
    coll = os.path.join(a.build, "apps", "droce-coll", "droce-coll")
    g, up = a.gbps, a.gbps / 2
    size = "1M" if a.quick else "4M"
    size_bytes = (1 if a.quick else 4) << 20
    iters = ["--iters", "1" if a.quick else "3", "--warmup_iters", "1"]
    common = ["--fabric", f"leafspine:{LEAVES},{SPINES}", "--pattern", "permutation", "--ranks", str(RANKS),
              "--size", size, "--chunk", "64K", "--buffers", "4", "--mtu", "4096", "--egress-gbps", str(g),
              "--uplink-gbps", str(up), "--seed", "3", "--qp-timeout", "18", "--timeout", "600", *iters]
    cases = [
        ("5-tuple (default), 1 QP", 1, []),
        ("5-tuple (default), 4 QPs", 4, []),
        ("5-tuple (default), 8 QPs", 8, []),
        ("dst-port only, 1 QP: every flow collides", 1, ["--ecmp-hash", "dst-port"]),
        ("src-port only, 4 QPs on one port (--udp-sport 50000,0)", 4,
         ["--ecmp-hash", "src-port", "--udp-sport", "50000,0"]),
        ("src-port only, 4 QPs on 4 ports (--udp-sport 50000,1)", 4,
         ["--ecmp-hash", "src-port", "--udp-sport", "50000,1"]),
    ]
    # 4 x 64 KiB in flight per pair and at most two pairs on any queue (2 ranks a leaf, each
    # receiving from one): 512 KiB, below the 1 MB egress buffer, so nothing is tail-dropped and no
    # QP waits out an ACK timeout for a lost tail (a first draft with 8 x 128 KiB lost frames, and
    # with 8 QPs per pair each QP's lost tail cost a 1 s timeout).
    tmp = os.path.join(a.out, "tmp.json")
    rows = []
    baseline = None
    for name, k, extra in cases:
        d = run(coll, [*common, "--qps-per-peer", str(k), *extra], tmp)
        assert d["ok"] and d["wrong"] == 0, name
        m = d["traffic_matrix"]["measured"]
        pairs = [(i, j) for i in range(RANKS) for j in range(RANKS) if m[i][j] > 0]
        r = d["results"][-1]
        busbw = r["busbw_gbps"]
        if baseline is None:
            baseline = busbw
        row = {
            "case": name, "qps_per_pair": k, "command": d["_command"], "wall_s": d["_wall_s"],
            "busbw_gbps": busbw, "vs_baseline": busbw / baseline, "busbw_vs_port": busbw / g,
            "links_model": measured_links_ratio(d, pairs, size_bytes, g, up),
            "ideal_vs_port": size_bytes * 8 / (g * 1e9) / ideal_time(pairs, size_bytes, g, up),
            "random_hashing": random_hashing(pairs, k, size_bytes, g, up) if not extra else None,
            "uplink_tx_bytes": {l["name"]: l["up"]["tx_bytes"] for l in d["fabric"]["links"]},
            "uplink_queue_max": {l["name"]: l["up"]["queue_max_bytes"] for l in d["fabric"]["links"]},
            "fabric_tail_drops": sum(l["up"]["tail_drops"] + l["down"]["tail_drops"] for l in d["fabric"]["links"]),
            "retransmitted_packets": r["out_of_place"]["retransmitted_packets"],
            "pairs": pairs,
        }
        rows.append(row)
        print(f"{name}: busbw {busbw:.4f} Gb/s ({row['vs_baseline']:.2f} x 1 QP), links model "
              f"{row['links_model']:.2f}", flush=True)
    os.remove(tmp)
    res = {"host": os.uname().nodename, "cpus": os.cpu_count(), "load_avg": os.getloadavg(), "size": size,
           "port_gbps": g, "uplink_gbps": up, "rows": rows}
    json.dump(res, open(os.path.join(a.out, "results.json"), "w"), indent=1)
    write_md(a, res)
    plot(a, res)


def write_md(a, res):
    L = []
    L.append(f"# ECMP collisions on a leaf-spine ({'quick' if a.quick else 'full'} run)\n")
    L.append(f"`bench/fabric/run.py` on {res['cpus']} CPUs (load average at the end "
             f"{res['load_avg'][0]:.1f}): leafspine:{LEAVES},{SPINES}, {RANKS} ranks, permutation of "
             f"{res['size']} per rank (--seed 3, the same permutation in every row), ports "
             f"{res['port_gbps']} Gb/s, leaf-spine links {res['uplink_gbps']} Gb/s (2:1 oversubscribed), "
             "one droce-coll process on one lcore, every byte verified. busbw is nccl-tests' "
             "(permutation: factor 1). \"links model\" is the busbw the busiest leaf-spine link of that run "
             "allows, relative to an even split; \"random hashing\" the same model's mean over random "
             "spine choices per flow (balls into bins) for this permutation.\n")
    L.append("| case | busbw (Gb/s) | vs 5-tuple 1 QP | links model | random hashing | even split | "
             "fabric tail drops | retransmitted | uplink bytes (leaf-spine) | command |")
    L.append("|---|---|---|---|---|---|---|---|---|---|")
    for r in res["rows"]:
        ups = ", ".join(f"{k} {v}" for k, v in r["uplink_tx_bytes"].items())
        rh = f"{r['random_hashing']:.2f}" if r["random_hashing"] is not None else "-"
        L.append(f"| {r['case']} | {r['busbw_gbps']:.4f} | {r['vs_baseline']:.2f} | {r['links_model']:.2f} | {rh} "
                 f"| {r['ideal_vs_port'] * res['port_gbps']:.4f} Gb/s | {r['fabric_tail_drops']} "
                 f"| {r['retransmitted_packets']} | {ups} | `{r['command']}` |")
    open(os.path.join(a.out, "results.md"), "w").write("\n".join(L) + "\n")


def plot(a, res):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib missing: no plot", file=sys.stderr)
        return
    rows = res["rows"]
    fig, ax = plt.subplots(figsize=(9, 4))
    xs = range(len(rows))
    ax.bar([x - 0.2 for x in xs], [r["busbw_gbps"] / res["port_gbps"] for r in rows], 0.4, label="measured busbw / port")
    ax.bar([x + 0.2 for x in xs], [r["links_model"] * r["ideal_vs_port"] for r in rows], 0.4,
           label="the run's busiest link allows (fluid model)")
    for x, r in zip(xs, rows):
        ax.plot([x - 0.4, x + 0.4], [r["ideal_vs_port"]] * 2, "g:")
        if r["random_hashing"] is not None:
            ax.plot([x - 0.4, x + 0.4], [r["random_hashing"] * r["ideal_vs_port"]] * 2, "k--")
    ax.set_xticks(list(xs))
    ax.set_xticklabels([r["case"].split(":")[0].replace(" (", "\n(").replace(", ", ",\n") for r in rows], fontsize=7)
    ax.set_ylabel("fraction of the port rate")
    ax.set_title("permutation on leafspine:4,2 (dotted: even split; dashed: random hashing)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(a.out, "ecmp.png"), dpi=100)


if __name__ == "__main__":
    main()
