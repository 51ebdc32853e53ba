#!/usr/bin/env python3
"""Draws the two-hop PFC experiment from two droce-sim JSON results (PFC alone, PFC + DCQCN):
the innocent flow's throughput, the pauses sent, and the queue on S1's uplink over time.

usage: plot_pfc_hol.py PFC_ONLY.json PFC_DCQCN.json OUT.png
Needs Debian's python3-matplotlib (run with /usr/bin/python3).
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    runs = [(json.load(open(sys.argv[1])), "PFC only"), (json.load(open(sys.argv[2])), "PFC + DCQCN")]
    fig, (ax1, ax2, ax3) = plt.subplots(3, 1, figsize=(9, 8), sharex=True)
    for res, label in runs:
        s = res["series"]
        t = [x / 1000 for x in s["time_us"]]
        ax1.plot(t, s["innocent_gbps"], lw=0.9,
                 label=f"{label}: innocent flow {res['innocent_gbps']:.1f} Gb/s (last half)")
        ax2.plot(t, s["pauses"], lw=1.2, label=f"{label}: {res['pfc']['pauses_sent']} pauses")
        ax3.plot(t, [q / 1000 for q in s["uplink_queue_bytes"]], lw=0.8, label=label)
    cfg = runs[0][0]["config"]
    ax1.axhline(cfg["link_gbps"], color="grey", ls="--", lw=0.8)
    ax1.set_ylabel("innocent flow (Gb/s)")
    ax1.legend(fontsize=8, loc="center right")
    ax2.set_ylabel("PFC pauses sent (cumulative)")
    ax2.legend(fontsize=8)
    ax3.set_ylabel("S1 uplink queue (KB)")
    ax3.set_xlabel("time (ms)")
    ax3.legend(fontsize=8)
    fig.suptitle(f"{cfg['flows']}->1 incast across two hops at {cfg['link_gbps']:g} Gb/s plus an innocent flow on the "
                 f"first hop only:\nPFC head-of-line blocking, and DCQCN on top of PFC", fontsize=11)
    fig.tight_layout()
    fig.savefig(sys.argv[3], dpi=110)


if __name__ == "__main__":
    main()
