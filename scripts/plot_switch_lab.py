#!/usr/bin/env python3
"""Draws a droce-switch --lab-senders JSON result: each sender's DCQCN rate (top), its goodput
(middle) and the bottleneck queue with the CNPs the receiver sent, over time; on a leaf-spine
(--fabric) a last panel with every leaf-spine link's queues, both directions.

usage: plot_switch_lab.py RESULT.json OUT.png
Needs Debian's python3-matplotlib (run with /usr/bin/python3).
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    res = json.load(open(sys.argv[1]))
    cfg, s = res["config"], res["series"]
    t = s["time_ms"]
    rates = list(zip(*s["rate_gbps"])) if s["rate_gbps"] else []
    good = list(zip(*s["goodput_gbps"])) if s["goodput_gbps"] else []
    links = s.get("links", [])
    fig, axes = plt.subplots(4 if links else 3, 1, figsize=(9, 10.5 if links else 8), sharex=True)
    ax1, ax2, ax3 = axes[:3]
    for i, r in enumerate(rates):
        ax1.plot(t, r, lw=0.9, label=f"sender {i}")
    ax1.set_ylabel("DCQCN rate (Gb/s)")
    ax1.set_yscale("log")
    ax1.legend(loc="lower right", fontsize=8)
    for i, g in enumerate(good):
        ax2.plot(t, g, lw=0.9, label=f"sender {i}")
    ax2.axhline(cfg["bottleneck_gbps"], color="grey", ls="--", lw=0.8, label="bottleneck")
    ax2.set_ylabel("goodput (Gb/s)")
    ax2.legend(loc="upper right", fontsize=8)
    ax3.plot(t, [q / 1000 for q in s["queue_bytes"]], lw=0.8, color="tab:red", label="bottleneck queue")
    ax3.axhline(cfg["kmin_bytes"] / 1000, color="grey", ls=":", lw=0.8, label="Kmin")
    ax3.axhline(cfg["kmax_bytes"] / 1000, color="grey", ls="--", lw=0.8, label="Kmax")
    ax3.set_ylabel("queue (KB)")
    axes[-1].set_xlabel("time (ms)")
    ax4 = ax3.twinx()
    ax4.bar(t, s["cnps"], width=(t[1] - t[0]) if len(t) > 1 else 0.5, color="tab:blue", alpha=0.35, label="CNPs")
    ax4.set_ylabel("CNPs per sample")
    ax3.legend(loc="upper left", fontsize=8)
    for link in links:
        for d, ls in (("up", "-"), ("down", "--")):
            axes[3].plot(t, [q / 1000 for q in link[d]["queue_bytes"]], lw=0.8, ls=ls, label=f"{link['name']} {d}")
    if links:
        axes[3].set_ylabel("link queue (KB)")
        axes[3].legend(loc="upper right", fontsize=7, ncol=2)
    fig.suptitle(f"droce-switch live lab: {cfg['senders']} droce senders, {cfg['bottleneck_gbps']} Gb/s bottleneck, "
                 f"cc {cfg['cc']} ({cfg['preset']}){', PFC' if cfg['pfc'] else ''}"
                 f"{', leaf-spine ' + str(res['fabric']['leaves']) + 'x' + str(res['fabric']['spines']) if links else ''}")
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)


if __name__ == "__main__":
    main()
