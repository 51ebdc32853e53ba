#!/usr/bin/env python3
"""droce-coll --plot: bus bandwidth against size (both placements) and every timed iteration's
completion time per size, from droce-coll's --json. Usage: plot_coll.py REPORT.json OUT.png"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    d = json.load(open(sys.argv[1]))
    c = d["config"]
    res = d["results"]
    fig, (a, b) = plt.subplots(1, 2, figsize=(12, 4.5))
    for place, style in (("out_of_place", "o-"), ("in_place", "s--")):
        xs = [r["size"] for r in res if place in r]
        ys = [r[place]["busbw_gbps"] for r in res if place in r]
        if xs:
            a.plot(xs, ys, style, label=place.replace("_", "-"))
    if c.get("egress_gbps"):
        a.axhline(c["egress_gbps"], color="grey", lw=0.8, ls=":", label="port rate")
    a.set_xscale("log", base=2)
    a.set_xlabel("size (bytes, nccl-tests' semantics)")
    a.set_ylabel("busbw (Gb/s)")
    a.set_title(f"{c['pattern']} ({c['algo']}), {c['ranks']} ranks")
    a.grid(True, alpha=0.3)
    a.legend()
    for r in res:
        p = r.get("out_of_place") or r.get("in_place")
        it = p["iteration_us"]["all"]
        b.plot([r["size"]] * len(it), it, "k.", alpha=0.5)
        b.plot([r["size"]], [p["iteration_us"]["p50"]], "r_", ms=14)
    b.set_xscale("log", base=2)
    b.set_yscale("log")
    b.set_xlabel("size (bytes)")
    b.set_ylabel("iteration time (us): dots every iteration, bar p50")
    b.set_title("per-iteration completion (start to the last rank done)")
    b.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)


if __name__ == "__main__":
    main()
