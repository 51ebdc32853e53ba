#!/usr/bin/env python3
"""Draws a droce-gen run from its live feed (--stats-json): goodput and message rate over time,
retransmissions, NAKs and ACK timeouts per interval, and the latency CDF of the whole run.

usage: plot_gen.py FEED.jsonl OUT.png [--title TEXT]
droce-gen --plot FILE.png runs this itself. Needs Debian's python3-matplotlib (run with /usr/bin/python3).
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read_feed(path):
    """The interval lines and the final line; a torn last line (a killed run) is skipped."""
    intervals, final = [], None
    with open(path) as f:
        for text in f:
            try:
                line = json.loads(text)
            except json.JSONDecodeError:
                continue
            if line.get("final"):
                final = line
            else:
                intervals.append(line)
    return intervals, final


def edges(intervals):
    """Each interval's figure holds from its start to its end: one stair per interval."""
    if not intervals:
        return [0.0]
    first = intervals[0]
    return [first["elapsed_s"] - first.get("interval_s", 0.0)] + [ln["elapsed_s"] for ln in intervals]


def shade_partial(axes, intervals):
    """The run's end cut the last interval short: its figures are over its own, shorter span."""
    if intervals and intervals[-1].get("partial"):
        last = intervals[-1]
        for ax in axes:
            ax.axvspan(last["elapsed_s"] - last.get("interval_s", 0.0), last["elapsed_s"], color="gray", alpha=0.15,
                       label="partial (the run's end)" if ax is axes[0] else None)
        axes[0].legend(loc="lower left", fontsize=8)


def draw_rates(ax_gbps, ax_mps, intervals):
    t = edges(intervals)
    ax_gbps.stairs([ln["interval"]["goodput_gbps"] for ln in intervals], t, color="tab:blue")
    ax_gbps.set_ylabel("goodput (Gb/s)")
    ax_mps.stairs([ln["interval"]["msg_rate_mps"] for ln in intervals], t, color="tab:green")
    ax_mps.set_ylabel("messages (M/s)")
    for ax in (ax_gbps, ax_mps):
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)


def draw_recovery(ax, intervals):
    t = edges(intervals)
    for key, colour in (("retransmitted_packets", "tab:red"), ("naks_received", "tab:orange"),
                        ("ack_timeouts", "tab:purple"), ("cnps_received", "tab:gray")):
        ax.stairs([ln["interval"].get(key, 0) for ln in intervals], t, color=colour, label=key.replace("_", " "))
    ax.set_ylabel("per interval")
    ax.set_xlabel("time (s)")
    # Symmetric log: a few ACK timeouts stay visible beside tens of thousands of resent packets.
    ax.set_yscale("symlog", linthresh=1)
    ax.set_ylim(bottom=0)
    ax.legend(loc="upper right", fontsize=8)
    ax.grid(alpha=0.3)


def draw_cdf(ax, final):
    cdf = (final or {}).get("latency_cdf_ns") or []
    if not cdf:
        ax.text(0.5, 0.5, "no latency samples", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return
    ns = [p[0] for p in cdf]
    frac = [p[1] for p in cdf]
    ax.step([v / 1000 for v in ns], frac, where="post", color="tab:blue")
    ax.set_xscale("log")
    ax.set_xlabel("latency (µs)")
    ax.set_ylabel("fraction of messages")
    ax.set_ylim(0, 1.01)
    ax.grid(alpha=0.3, which="both")
    lat = final.get("latency_ns", {})
    for q, style in (("p50", ":"), ("p99", "--"), ("p999", "-.")):
        if q in lat and lat[q] > 0:
            ax.axvline(lat[q] / 1000, color="gray", ls=style, lw=0.8, label=f"{q} {lat[q] / 1000:.1f} µs")
    ax.legend(loc="lower right", fontsize=8)


def title_of(final, intervals):
    if final is None:
        return f"droce-gen: {len(intervals)} intervals (no final line: the run did not finish)"
    tot = final["total"]
    return (f"droce-gen: {tot['messages']} messages, {tot['goodput_gbps']:.2f} Gb/s, "
            f"{tot['retransmitted_packets']} retransmitted, problem: {final.get('problem') or 'none'}")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    intervals, final = read_feed(sys.argv[1])
    if not intervals and final is None:
        sys.exit(f"plot_gen.py: {sys.argv[1]} holds no feed lines")
    fig = plt.figure(figsize=(11, 7))
    grid = fig.add_gridspec(3, 2)
    ax_gbps = fig.add_subplot(grid[0, 0])
    ax_mps = fig.add_subplot(grid[1, 0], sharex=ax_gbps)
    ax_rec = fig.add_subplot(grid[2, 0], sharex=ax_gbps)
    ax_cdf = fig.add_subplot(grid[:, 1])
    draw_rates(ax_gbps, ax_mps, intervals)
    draw_recovery(ax_rec, intervals)
    draw_cdf(ax_cdf, final)
    shade_partial([ax_gbps, ax_mps, ax_rec], intervals)
    title = sys.argv[sys.argv.index("--title") + 1] if "--title" in sys.argv else title_of(final, intervals)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)


if __name__ == "__main__":
    main()
