#!/usr/bin/env python3
"""Go-back-N against selective repeat in droce-sim: runs the sweeps, draws the figures, writes the table.

usage: plot_recovery.py [--sim PATH] [--out DIR] [--seeds N] [--duration-ms T] [--jobs N]
                        [--transport rcqp|model] [--packet-bytes B]

--transport rcqp (the default): droce's own RC transport carries each flow (a requester and a
responder RcQp of protocols/rc, frames built and parsed as on the wire), with 1086-byte frames
(a 1024-byte PMTU); --transport model: the simulator's own go-back-N and selective repeat, with
1000-byte packets (the figures before droce-sim ran the real transport).

1. Goodput of one 100 Gb/s flow against random loss (0, 0.001 %, 0.01 %, 0.1 %, 1 %, 5 %) at
   about 10 us and 100 us base RTT, --recovery gbn and sr (sr's cap at the BDP, its default; the
   model also at twice the BDP as a sensitivity check: the RcQp clamps its window to 128 PSNs,
   kSrMaxBdpPkts, so twice a BDP of 118 or more is that same 128), mean over seeds 1..N:
   DIR/recovery_loss.png.
2. The two-hop 8 -> 1 incast with an innocent flow, 100 Gb/s, with and without PFC, gbn and sr,
   without congestion control and with DCQCN: DIR/recovery_two_hop.png.
3. At 1 % loss, base RTTs from 10 us to 100 us (BDP 128 to 1253 packets): sr / gbn against the
   ceiling that the line rate sets (line rate / gbn's goodput: no recovery can do better), where
   issue 19's 3x target is reachable at all: DIR/recovery_rtt.png.
The tables, with the commands that produce every row, go to DIR/recovery_summary.md.
Needs a built droce-sim and Debian's python3-matplotlib (run with /usr/bin/python3).
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import tempfile

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

LOSSES = [0, 1e-5, 1e-4, 1e-3, 1e-2, 5e-2]
# One-way delay per link: the dumbbell's base RTT is 4 delays plus two 1000-byte serialisations.
RTTS = [("10 us", 2.5), ("100 us", 25.0)]
# Part 3: 1 % loss at base RTTs between the two (the one-way delays per link).
SWEEP_DELAYS = [2.5, 5.0, 7.5, 10.0, 15.0, 25.0]
SWEEP_LOSS = 1e-2
LINK_GBPS = 100


def run(sim, args, tmp):
    fd, path = tempfile.mkstemp(suffix=".json", dir=tmp)
    os.close(fd)
    subprocess.run([sim, *args, "--json", path], check=True, stdout=subprocess.DEVNULL)
    with open(path) as f:
        return json.load(f)


# --transport and --packet-bytes, as main() sets them from the command line.
TRANSPORT = ["--transport", "rcqp", "--packet-bytes", "1086"]


def loss_args(delay, loss, mode, seed, duration, bdp=None):
    a = ["--flows", "1", "--cc", "none", "--link-gbps", str(LINK_GBPS), "--delay-us", str(delay),
         "--duration-ms", str(duration), "--loss", f"{loss:g}", "--seed", str(seed), "--recovery", mode, *TRANSPORT]
    return a + (["--bdp-packets", str(bdp)] if bdp else [])


def two_hop_args(cc, pfc, mode, duration):
    return (["--topology", "two-hop", "--flows", "8", "--incast", "--link-gbps", str(LINK_GBPS),
             "--duration-ms", str(duration), "--cc", cc, "--recovery", mode, *TRANSPORT] + (["--pfc"] if pfc else []))


def ratio(a, b):
    """a / b; infinite when b delivered nothing (a timeout can stall a short run's last half)."""
    return a / b if b else float("inf")


def jain(r):
    """Jain's index over the incast flows' goodput (the innocent flow, last, left out)."""
    g = [f["goodput_gbps"] for f in r["flows"][:-1]]
    return sum(g) ** 2 / (len(g) * sum(x * x for x in g)) if any(g) else 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sim", default="build/apps/droce-sim/droce-sim")
    ap.add_argument("--out", default="docs/plots")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--duration-ms", type=float, default=100)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--transport", choices=["rcqp", "model"], default="rcqp")
    ap.add_argument("--packet-bytes", type=int, default=None,
                    help="bytes a data frame on the wire (default 1086 for rcqp: a 1024-byte PMTU; 1000 for the model)")
    o = ap.parse_args()
    pkt = o.packet_bytes or (1086 if o.transport == "rcqp" else 1000)
    TRANSPORT[:] = ["--transport", o.transport, "--packet-bytes", str(pkt)]
    rcqp = o.transport == "rcqp"
    what = (f"droce's RcQp, {pkt}-byte frames (PMTU {pkt - 62})" if rcqp else f"the model, {pkt}-byte packets")
    if not os.access(o.sim, os.X_OK):
        raise SystemExit(f"plot_recovery: {o.sim} is not built (ninja -C build apps/droce-sim/droce-sim)")
    dur = f"{o.duration_ms:g}"
    with tempfile.TemporaryDirectory() as tmp, concurrent.futures.ThreadPoolExecutor(o.jobs) as pool:
        # The default cap (link rate x base RTT) as droce-sim computes it, from a lossless sr run.
        bdp = {d: run(o.sim, loss_args(d, 0, "sr", 1, 1), tmp)["recovery"]["bdp_packets"]
               for d in sorted({d for _, d in RTTS} | set(SWEEP_DELAYS))}
        variants = [("gbn", "gbn", None), ("sr", "sr", None)] + ([] if rcqp else [("sr, cap 2 x BDP", "sr", 2)])
        jobs = {}
        for _, d in RTTS:
            for label, mode, mult in variants:
                for loss in LOSSES:
                    for seed in range(1, o.seeds + 1):
                        args = loss_args(d, loss, mode, seed, dur, bdp[d] * mult if mult else None)
                        jobs[(d, label, loss, seed)] = pool.submit(run, o.sim, args, tmp)
        for d in SWEEP_DELAYS:
            for label, mode, mult in variants:
                for seed in range(1, o.seeds + 1):
                    if (d, label, SWEEP_LOSS, seed) not in jobs:
                        args = loss_args(d, SWEEP_LOSS, mode, seed, dur, bdp[d] * mult if mult else None)
                        jobs[(d, label, SWEEP_LOSS, seed)] = pool.submit(run, o.sim, args, tmp)
        hop = {}
        for cc in ("none", "dcqcn"):
            for pfc, mode in ((True, "gbn"), (False, "sr"), (False, "gbn"), (True, "sr")):
                hop[(cc, pfc, mode)] = pool.submit(run, o.sim, two_hop_args(cc, pfc, mode, 50), tmp)
        res = {k: v.result() for k, v in jobs.items()}
        hop = {k: v.result() for k, v in hop.items()}

    def mean(d, label, loss, key="goodput_gbps"):
        return sum(res[(d, label, loss, s)][key] for s in range(1, o.seeds + 1)) / o.seeds

    for r in list(res.values()) + list(hop.values()):
        assert r["order_errors"] == 0, "a receiver handed a packet on out of order"
        for f in r["flows"]:  # the real transport: no frame lost to the simulation, no QP in error
            assert f.get("transport_drops", 0) == 0 and not f.get("qp_failed", False), "a QP flow failed"
    labels = [label for label, _, _ in variants]

    # ---- figure 1: goodput against loss ----
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    styles = {"gbn": ("tab:red", "-", "o"), "sr": ("tab:blue", "-", "s"), "sr, cap 2 x BDP": ("tab:blue", ":", "^")}
    xs = [max(loss, 1e-6) * 100 for loss in LOSSES]  # 0 % drawn at 0.0001 % on the log axis
    for ax, (name, d) in zip(axes, RTTS):
        for label, _, _ in variants:
            c, ls, m = styles[label]
            ax.plot(xs, [mean(d, label, loss) for loss in LOSSES], color=c, ls=ls, marker=m, label=label)
        ax.set_xscale("log")
        ax.set_xticks(xs)
        ax.set_xticklabels(["0"] + [f"{loss * 100:g}" for loss in LOSSES[1:]])
        ax.set_xlabel("random loss (%)")
        ax.set_title(f"base RTT {name} (BDP {bdp[d]} packets)", fontsize=10)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("goodput (Gb/s, payload in order)")
    axes[0].legend(fontsize=8)
    fig.suptitle(f"one flow, {LINK_GBPS} Gb/s, {what}, RTO 320 us, mean of {o.seeds} seeds", fontsize=10)
    fig.tight_layout()
    fig.savefig(os.path.join(o.out, "recovery_loss.png"), dpi=110)

    # ---- figure 2: the two-hop incast ----
    order = [(True, "gbn"), (False, "sr"), (False, "gbn"), (True, "sr")]
    names = ["PFC + gbn", "no PFC + sr", "no PFC + gbn", "PFC + sr"]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for ax, cc in zip(axes, ("none", "dcqcn")):
        inc = [hop[(cc, p, m)]["goodput_gbps"] for p, m in order]
        inn = [hop[(cc, p, m)]["innocent_goodput_gbps"] for p, m in order]
        x = range(len(order))
        ax.bar([i - 0.2 for i in x], inc, 0.4, label="8 incast flows (sum)", color="tab:gray")
        ax.bar([i + 0.2 for i in x], inn, 0.4, label="innocent flow", color="tab:green")
        ax.set_xticks(list(x))
        ax.set_xticklabels(names, fontsize=8)
        ax.set_title(f"congestion control: {cc}", fontsize=10)
        ax.grid(alpha=0.3, axis="y")
    axes[0].set_ylabel("goodput (Gb/s, last half)")
    axes[0].set_ylim(0, LINK_GBPS * 1.2)
    axes[0].legend(fontsize=8, loc="upper center", ncol=2)
    fig.suptitle(f"two-hop 8 -> 1 incast + innocent flow, {LINK_GBPS} Gb/s, 50 ms, {what}", fontsize=10)
    fig.tight_layout()
    fig.savefig(os.path.join(o.out, "recovery_two_hop.png"), dpi=110)

    # ---- figure 3: sr / gbn at 1 % loss against the BDP, with the line rate's ceiling ----
    line_gbps = mean(SWEEP_DELAYS[0], "gbn", 0) if (SWEEP_DELAYS[0], "gbn", 0, 1) in res else None
    line_gbps = line_gbps or max(mean(d, labels[-1], SWEEP_LOSS) for d in SWEEP_DELAYS)
    sweep = []
    for d in SWEEP_DELAYS:
        g, s1, s2 = (mean(d, v, SWEEP_LOSS) if v in labels else None for v in ("gbn", "sr", "sr, cap 2 x BDP"))
        sweep.append((d, bdp[d], g, s1, s2, ratio(line_gbps, g)))
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    bx = [row[1] for row in sweep]
    ax.plot(bx, [ratio(row[3], row[2]) for row in sweep], "s-", color="tab:blue", label="sr / gbn (cap = BDP)")
    if not rcqp:
        ax.plot(bx, [ratio(row[4], row[2]) for row in sweep], "^:", color="tab:blue", label="sr / gbn (cap = 2 x BDP)")
    ax.plot(bx, [row[5] for row in sweep], "k--", label="ceiling: line rate / gbn")
    ax.axhline(3, color="tab:red", lw=0.8, label="issue 19's target, 3x")
    ax.set_xscale("log")
    ax.set_xlabel(f"BDP (packets of {pkt} B at 100 Gb/s)")
    ax.set_ylabel("goodput ratio")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(f"1 % random loss, one 100 Gb/s flow, {what}, mean of {o.seeds} seeds", fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(o.out, "recovery_rtt.png"), dpi=110)

    # ---- the tables ----
    cap2 = "" if rcqp else " sr, cap 2 x BDP |"
    lines = [f"Generated by `scripts/plot_recovery.py --transport {o.transport} --seeds {o.seeds} --duration-ms {dur}`"
             f" ({what}).", "",
             f"Goodput (Gb/s of payload handed on in order, last half of {dur} ms, mean of seeds 1..{o.seeds}); "
             f"one flow, {LINK_GBPS} Gb/s, `--cc none`, RTO 320 us.", "",
             f"| base RTT | BDP (packets) | loss | gbn | sr | sr / gbn |{cap2} gbn resent | sr resent |",
             "|---|---|---|---|---|---|" + ("" if rcqp else "---|") + "---|---|"]
    for name, d in RTTS:
        for loss in LOSSES:
            g, s = (mean(d, v, loss) for v in ("gbn", "sr"))
            s2 = "" if rcqp else f" {mean(d, 'sr, cap 2 x BDP', loss):.2f} |"
            gr, sr_ = (mean(d, v, loss, "retransmitted") for v in ("gbn", "sr"))
            lines.append(f"| {name} | {bdp[d]} | {loss * 100:g} % | {g:.2f} | {s:.2f} | {ratio(s, g):.2f} |{s2} "
                         f"{gr:.0f} | {sr_:.0f} |")
    lines += ["", "Commands (one row, one seed; `--loss` and `--seed` vary, `--recovery sr` for sr"
              + ("" if rcqp else ", 2 x BDP adds `--bdp-packets`") + "):", "```"]
    for _, d in RTTS:
        lines.append("droce-sim " + " ".join(loss_args(d, 0.01, "gbn", 1, dur)) + " --json out.json")
    lines += ["```", "",
              f"At {SWEEP_LOSS * 100:g} % loss against the base RTT (the same runs; the ceiling is the lossless "
              f"line goodput, {line_gbps:.2f} Gb/s, over gbn's: no recovery scheme exceeds it):", "",
              "| base RTT | BDP (packets) | gbn | sr | sr / gbn |" + ("" if rcqp else " sr, cap 2 x BDP | its ratio |")
              + " ceiling |", "|---|---|---|---|---|" + ("" if rcqp else "---|---|") + "---|"]
    for d, b, g, s1, s2, ceil in sweep:
        rtt = 4 * d + 2 * pkt * 8 / (LINK_GBPS * 1e3)
        two = "" if rcqp else f" {s2:.2f} | {ratio(s2, g):.2f} |"
        lines.append(f"| {rtt:.0f} us | {b} | {g:.2f} | {s1:.2f} | {ratio(s1, g):.2f} |{two} {ceil:.2f} |")
    lines += ["",
              "| two-hop incast, 50 ms | cc | incast goodput | Jain (incast goodput) | innocent goodput | drops | resent | PFC pauses | "
              "innocent paused |",
              "|---|---|---|---|---|---|---|---|---|"]
    for cc in ("none", "dcqcn"):
        for (p, m), n in zip(order, names):
            r = hop[(cc, p, m)]
            lines.append(f"| {n} | {cc} | {r['goodput_gbps']:.2f} | {jain(r):.3f} | "
                         f"{r['innocent_goodput_gbps']:.2f} | {r['drops']} | "
                         f"{r['retransmitted']} | {r['pfc']['pauses_sent']} | "
                         f"{100 * r['pfc']['host_paused_fraction'][-1]:.1f} % |")
    lines += ["", "Commands:", "```"]
    for cc in ("none", "dcqcn"):
        for p, m in order[:2]:
            lines.append("droce-sim " + " ".join(two_hop_args(cc, p, m, 50)) + " --json out.json")
    lines += ["```"]
    with open(os.path.join(o.out, "recovery_summary.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
