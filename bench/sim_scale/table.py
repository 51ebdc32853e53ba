#!/usr/bin/env python3
"""The results table of bench/sim_scale/run.sh's JSON files (droce-sim --topology leafspine), as
markdown: the collective's figures (nccl-tests' columns, the steps' tails, queues, ECN, PFC) and
what each run cost (events, CPU and wall seconds, events per CPU second, peak RSS per rank).
With run_rcqp.sh's files (<case>-model.json and <case>-rcqp.json, each case on both transports in
one run) it writes the comparison of the two instead: the collective's time and busbw, what the
real transport resent, and the cost of each.
Usage: table.py OUT_DIR  (the directory run.sh or run_rcqp.sh wrote)."""
import json
import os
import sys

ORDER = ["allreduce256", "incast256", "alltoall256", "allreduce1024", "incast1024", "alltoall1024",
         "allreduce4096", "incast4096", "alltoall4096"]


RCQP_ORDER = ["allreduce64", "incast64", "alltoall64", "allreduce256", "incast256", "allreduce1024", "incast1024",
              "allreduce4096", "incast4096"]


def transports(out):
    """The model against droce's RcQps, case by case (run_rcqp.sh's files)."""
    rows = []
    for name in RCQP_ORDER:
        paths = [os.path.join(out, f"{name}-{t}.json") for t in ("model", "rcqp")]
        if not all(os.path.exists(p) for p in paths):
            continue
        m, r = (json.load(open(p)) for p in paths)
        c = r["config"]
        t = r["transport"]
        km, kr = m["cost"], r["cost"]
        rows.append(
            f"| {c['pattern']} | {c['ranks']} | {c['leaves']} x {c['spines']} | {r['size']} | {t['qp_pairs']} | "
            f"{m['time_us']:.1f} / {r['time_us']:.1f} | {m['busbw_gbytes']:.2f} / {r['busbw_gbytes']:.2f} | "
            f"{t['retransmitted']} | {m['pfc']['pauses_sent']} / {r['pfc']['pauses_sent']} | "
            f"{km['events']} / {kr['events']} | {km['cpu_s']:.1f} / {kr['cpu_s']:.1f} | "
            f"{km['events_per_cpu_s'] / 1e6:.2f} / {kr['events_per_cpu_s'] / 1e6:.2f} | "
            f"{km['peak_rss_bytes'] / 2**20:.1f} / {kr['peak_rss_bytes'] / 2**20:.1f} | "
            f"{km['peak_rss_bytes_per_rank'] / 1024:.1f} / {kr['peak_rss_bytes_per_rank'] / 1024:.1f} | "
            f"{'yes' if m['complete'] and r['complete'] else 'NO'} |")
    print("| pattern | ranks | leaves x spines | size (B) | QP pairs | time (us) model / rcqp | busbw (GB/s) model / rcqp |"
          " rcqp resent | PFC pauses model / rcqp | events model / rcqp | CPU s model / rcqp |"
          " M events / CPU s model / rcqp | peak RSS (MiB) model / rcqp | per rank (KiB) model / rcqp | complete |")
    print("|" + "---|" * 15)
    print("\n".join(rows))


def main():
    out = sys.argv[1]
    if any(f.endswith("-rcqp.json") for f in os.listdir(out)):
        transports(out)
        return
    rows = []
    cost = []
    for name in ORDER:
        path = os.path.join(out, name + ".json")
        if not os.path.exists(path):
            continue
        j = json.load(open(path))
        c = j["config"]
        steps = j["steps"]
        slow = next(s for s in steps if s["step"] == j["slowest_step"])
        last = steps[-1]
        max_q = max(max(l["up"]["max_queue_bytes"], l["down"]["max_queue_bytes"]) for l in j["links"])
        rows.append(
            f"| {c['pattern']} | {c['ranks']} | {c['leaves']} x {c['spines']} | {j['size']} | {j['count']} | "
            f"{j['time_us']:.1f} | {j['algbw_gbytes']:.2f} | {j['busbw_gbytes']:.2f} | {len(steps)} | "
            f"{slow['step']}: {slow['span_us']:.2f} | {last['finish_p50_us']:.1f} / {last['finish_p99_us']:.1f} / "
            f"{last['finish_max_us']:.1f} | {max_q} | {j['drops']} | {j['ecn_marked']} | {j['pfc']['pauses_sent']} | "
            f"{'yes' if j['complete'] else 'NO'} |")
        k = j["cost"]
        cost.append(
            f"| {c['pattern']} | {c['ranks']} | {j['transfers']} | {j['packets']} | {k['events']} | {k['cpu_s']:.1f} | "
            f"{k['wall_s']:.1f} | {k['events_per_cpu_s'] / 1e6:.2f} | {k['peak_rss_bytes'] / 2**20:.1f} | "
            f"{k['peak_rss_bytes_per_rank'] / 1024:.1f} |")
    print("| pattern | ranks | leaves x spines | size (B) | count | time (us) | algbw (GB/s) | busbw (GB/s) | steps |"
          " slowest step: span (us) | last step finish p50 / p99 / max (us) | deepest queue (B) | drops | ECN marks |"
          " PFC pauses | complete |")
    print("|" + "---|" * 16)
    print("\n".join(rows))
    print()
    print("| pattern | ranks | transfers | packets | events | CPU s | wall s | M events / CPU s | peak RSS (MiB) |"
          " per rank (KiB) |")
    print("|" + "---|" * 10)
    print("\n".join(cost))


if __name__ == "__main__":
    main()
