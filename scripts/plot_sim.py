#!/usr/bin/env python3
"""Draws a droce-sim JSON result: per-flow DCQCN rate (top) and bottleneck queue (bottom) over time.

usage: plot_sim.py RESULT.json OUT.png [--title TEXT]
Needs Debian's python3-matplotlib (run with /usr/bin/python3).
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    res = json.load(open(sys.argv[1]))
    title = sys.argv[sys.argv.index("--title") + 1] if "--title" in sys.argv else None
    cfg = res["config"]
    s = res["series"]
    t_ms = [t / 1000 for t in s["time_us"]]
    rates = list(zip(*s["flow_rate_gbps"])) if s["flow_rate_gbps"] else []
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(9, 6), sharex=True)
    for i, r in enumerate(rates):
        ax1.plot(t_ms, r, lw=0.9, label=f"flow {i}" if len(rates) <= 8 else None)
    ax1.set_ylabel("sender rate (Gb/s)")
    ax1.set_ylim(0, cfg["link_gbps"] * 1.05)
    if 0 < len(rates) <= 8:
        ax1.legend(loc="upper right", fontsize=8, ncol=4)
    ax1.grid(alpha=0.3)
    ax2.plot(t_ms, [q / 1000 for q in s["queue_bytes"]], color="tab:red", lw=0.8)
    ax2.axhline(cfg["kmin_bytes"] / 1000, color="gray", ls=":", lw=0.8, label="Kmin")
    ax2.axhline(cfg["kmax_bytes"] / 1000, color="gray", ls="--", lw=0.8, label="Kmax")
    ax2.set_ylabel("queue (KB)")
    ax2.set_xlabel("time (ms)")
    ax2.legend(loc="upper right", fontsize=8)
    ax2.grid(alpha=0.3)
    default = (f"{cfg['flows']} flows, {cfg['link_gbps']:g} Gb/s, cc={cfg['cc']}, preset={cfg['preset']}: "
               f"Jain {res['jain_index']:.3f}, util {res['utilization']:.2f}, "
               f"queue p99 {res['queue_bytes']['p99'] / 1000:.0f} KB, drops {res['drops']}")
    fig.suptitle(title or default, fontsize=10)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)


if __name__ == "__main__":
    main()
