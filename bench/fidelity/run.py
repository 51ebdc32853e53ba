#!/usr/bin/env python3
"""The simulator against the live lab (issue 44 item 3): each scenario of bench/fidelity/scenarios run
in droce-sim and live, and the same metrics computed from both JSONs against named bounds.

  flows      droce-switch's live lab (--lab-senders: N droce senders, one lab switch and a receiver
             in one process) against droce-sim's dumbbell on droce's own RC transport
             (--transport rcqp: requester and responder RcQp of protocols/rc on the simulated clock)
  pattern    droce-coll's in-process lab (--pattern ... --egress-gbps G) against droce-sim's
             --topology leafspine on one leaf (every rank on one switch, as droce-coll's star);
             that topology runs the simulator's model transport (no --transport rcqp there yet)

Calibration, not fitting: the simulator gets the scenario's rates, buffers, ECN/PFC thresholds, MTU
and message size, and one figure measured in the live lab, its base round trip: one sender of
one-packet WRITEs at a tenth of the bottleneck rate (the queue empty), whose QP's smallest measured
RTT (`min_rtt_us` in the lab's JSON) becomes droce-sim's --delay-us so that the dumbbell's base RTT
(2 serialisations of a frame, 4 link delays, a 64-byte ACK) equals it. Nothing is tuned per
scenario. Before that, one sender with no congestion control at rising bottleneck rates says where
the live lab's own CPU stops keeping its bottleneck busy (`cpu_limit` in the JSON).

Metrics (one definition each, applied to both JSONs; the window is the second half of the
scenario's schedule, [D/2, D) — droce-sim's own "last half"):
  utilisation   bytes the bottleneck port carried in the window over its rate x window (live: the
                difference of the lab's `bottleneck_tx_bytes` series; sim: `utilization`, what
                reached the receiver, i.e. less the frames lost after the port)     bound 0.10 abs
  goodput       payload delivered in order in the window over the bottleneck rate (live: completed
                WRITEs, the `goodput_gbps` series; sim: `goodput_gbps`)            bound 0.10 abs
  jain          Jain's index of the flows' goodput in the window (2+ flows)         bound 0.05 abs
  queue_p99     99th percentile (nearest rank) of the bottleneck queue samples in the window, both
                sampled every --sample-us                                          bound 20 % rel
  retransmitted packets resent over the whole run (the live lab keeps no per-window count; its drain
                after D is in it too)                                             bound 30 % rel
  completion_us a collective's time per iteration (nccl-tests' time; live: the mean of --iters)
                                                                                  bound 20 % rel
  busbw         a collective's bus bandwidth over the link rate                     bound 0.10 abs
A relative bound is taken against the live figure; two zeros agree.

Each app reads the scenario file itself (--scenario FILE, docs/scenario.md): sim_args, switch_args
and coll_args add only what the command line must say over it (the measured per-hop delay, the live
QPs' timers, a cap on simulated time), and each app's JSON must name the scenario it ran. What an
app cannot run is said, never faked: the live lab's links have no random loss, so the live side of
a lossy scenario runs the scenario less its loss with --drop-rule every:round(1/loss) (a
deterministic 1-in-N per flow, at every ingress: data and acknowledgements alike), where the
simulator drops at random after the bottleneck.

Writes --json FILE (scenarios[]: {name, metrics: {NAME: {sim, live, bound, within}}, commands},
the calibration and the CPU sweep), prints the markdown table (--md FILE writes it too) and with
--plots DIR draws each flows scenario's rates and queue, sim against live. --quick: one live run per
scenario and a shorter CPU sweep (within 10 minutes on a busy 2-core machine); the default repeats
each live run 3 times and takes each metric's median.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.dirname(os.path.abspath(__file__))
ROCE_FRAMING = 62  # Ethernet, IPv4, UDP, BTH, ICRC, FCS around a payload (droce-sim's --packet-bytes less PMTU)
BOUNDS = {  # name: (kind, bound)
    "utilisation": ("abs", 0.10),
    "goodput": ("abs", 0.10),
    "jain": ("abs", 0.05),
    "queue_p99": ("rel", 0.20),
    "retransmitted": ("rel", 0.30),
    "completion_us": ("rel", 0.20),
    "busbw": ("abs", 0.10),
}


class Unsupported(Exception):
    """A scenario field an app cannot honour: the run is marked with this, not faked."""


# ---------------------------------------------------------------------------- the scenario format

def load(path):
    sc = json.load(open(path))
    if not re.fullmatch(r"[a-z0-9_-]+", sc.get("name", "")):
        raise ValueError(f"scenario {path}: name: required, [a-z0-9_-]+")
    t = sc.get("traffic", {})
    if ("flows" in t) == ("pattern" in t):
        raise ValueError(f"scenario {path}: traffic: exactly one of flows and pattern")
    sc["_file"] = path
    return sc


def fabric(sc):
    return sc.get("fabric", {})


def is_flows(sc):
    return "flows" in sc["traffic"]


def check_star(sc, app):
    f = fabric(sc)
    if f.get("topology", "star") != "star":
        raise Unsupported(f"{app} here: fabric.topology: only star in bench/fidelity")


# ------------------------------------------------- each app reads the scenario file (--scenario FILE)

def without_loss(sc, work):
    """A copy of the scenario without fabric.loss, for the live lab (which has no random loss)."""
    copy = {k: v for k, v in sc.items() if not k.startswith("_")}
    copy["fabric"] = {k: v for k, v in fabric(sc).items() if k != "loss"}
    path = os.path.join(work, f"{sc['name']}.lossless.json")
    with open(path, "w") as f:
        json.dump(copy, f, indent=1)
    return path


def sim_args(sc):
    """droce-sim: the scenario, and on the command line (which wins) the live QPs' timers and, for a
    pattern, a cap on simulated time long enough for its bytes."""
    check_star(sc, "droce-sim")
    # The live lab's QPs keep droce's default timers (rtt_estimator.h: an RTO floor of 20 ms, probes
    # after 2 ms); droce-sim's --rto-us sets the floor (and probes after an eighth: 2.5 ms), else its
    # 320 us would fire behind a queue of a few ms at these rates, which the live QPs never do.
    args = ["--scenario", sc["_file"], "--rto-us", "20000"]
    if not is_flows(sc):
        args += ["--duration-ms", "60000"]
    return args


def switch_args(sc, work):
    """droce-switch's live lab: the scenario; a lossy one without its loss (the lab's links have no
    random loss) and a deterministic 1-in-N drop per flow at every ingress instead."""
    check_star(sc, "droce-switch")
    if not is_flows(sc):
        raise Unsupported("droce-switch runs flows, not a pattern: traffic.pattern")
    loss = float(fabric(sc).get("loss", 0))
    if loss <= 0:
        return ["--scenario", sc["_file"]]
    return ["--scenario", without_loss(sc, work), "--drop-rule", f"every:{round(1 / loss)}"]


def coll_args(sc):
    """droce-coll's in-process lab: the scenario."""
    check_star(sc, "droce-coll")
    if is_flows(sc):
        raise Unsupported("droce-coll runs a pattern, not flows: traffic.flows")
    return ["--scenario", sc["_file"]]


# ----------------------------------------------------------------------------------- running them

def run_json(cmd, out, timeout):
    """Runs an app with --json out; its JSON, or an exception naming the command and its tail."""
    p = subprocess.run(cmd + ["--json", out], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=timeout)
    if p.returncode != 0 or not os.path.exists(out):
        raise RuntimeError(f"exit {p.returncode}: {' '.join(cmd)}\n{p.stdout[-1500:]}")
    return json.load(open(out))


def named(j, sc, who):
    """Each app's JSON names the scenario it ran: a run of the wrong file is an error, not a figure."""
    got = j.get("scenario", {}).get("name")
    if got != sc["name"]:
        raise RuntimeError(f"{who}'s JSON names scenario {got!r}, not {sc['name']!r}")


def shown(cmd):
    """A command as the results show it: the app's name, not the build folder, and files relative to
    the repository's root."""
    def arg(x):
        if x.endswith(".lossless.json"):  # without_loss's copy in the scratch folder
            return f"<scenarios/{os.path.basename(x)[:-len('.lossless.json')]}.json less fabric.loss>"
        return os.path.relpath(x, ROOT) if x.startswith(ROOT + "/") else x
    return " ".join([os.path.basename(cmd[0]), *(arg(x) for x in cmd[1:])])


# ------------------------------------------------------------------------------------ the metrics

def p99(v):
    v = sorted(v)
    return v[min(len(v) - 1, max(0, int(0.99 * len(v) + 0.999999) - 1))] if v else 0


def jain(x):
    s, q = sum(x), sum(v * v for v in x)
    return s * s / (len(x) * q) if q > 0 else 0


def live_flow_metrics(j, sc):
    """The flows metrics of a droce-switch lab JSON over [D/2, D)."""
    d, g = float(sc["duration_ms"]), float(fabric(sc)["host_gbps"])
    s = j["series"]
    sample_s = 1e-6 * float(j.get("config", {}).get("sample_us", 500) or 500)
    rows = [i for i, t in enumerate(s["time_ms"]) if d / 2 <= t < d]
    if len(rows) < 2:
        raise RuntimeError("live lab: fewer than 2 samples in the window")
    a, b = rows[0], rows[-1]
    span_s = (s["time_ms"][b] - s["time_ms"][a]) / 1e3
    tx = s["bottleneck_tx_bytes"]
    # Goodput samples are bytes over a nominal period (a late sample holds every byte since the
    # last): their sum over (a, b] is the payload of that span.
    flows = len(s["goodput_gbps"][a])
    per_flow = [sum(s["goodput_gbps"][i][k] for i in rows[1:]) * sample_s / span_s for k in range(flows)]
    m = {"utilisation": (tx[b] - tx[a]) * 8 / span_s / (g * 1e9), "goodput": sum(per_flow) / g,
         "queue_p99": p99([s["queue_bytes"][i] for i in rows]),
         "retransmitted": sum(x["retransmitted_packets"] for x in j["senders"])}
    if len(per_flow) > 1:
        m["jain"] = jain(per_flow)
    return m, per_flow


def sim_flow_metrics(j, sc):
    d, g = float(sc["duration_ms"]), float(fabric(sc)["host_gbps"])
    s = j["series"]
    q = [v for t, v in zip(s["time_us"], s["queue_bytes"]) if d / 2 <= t / 1e3 < d]
    per_flow = [f["goodput_gbps"] for f in j["flows"]]
    m = {"utilisation": j["utilization"], "goodput": j["goodput_gbps"] / g, "queue_p99": p99(q),
         "retransmitted": j["retransmitted"]}
    if len(per_flow) > 1:
        m["jain"] = jain(per_flow)
    return m, per_flow


def live_coll_metrics(j, sc):
    r = j["results"][0]
    return {"completion_us": r["time_us"], "busbw": r["busbw_gbps"] / float(fabric(sc)["host_gbps"])}


def sim_coll_metrics(j, sc):
    return {"completion_us": j["time_us"], "busbw": j["busbw_gbytes"] * 8 / float(fabric(sc)["host_gbps"])}


def bound_text(k):
    kind, bound = BOUNDS[k]
    return f"{bound:g} absolute" if kind == "abs" else f"{bound:.0%} relative"


def compare(sim, live):
    out = {}
    for k in BOUNDS:
        if k not in sim or k not in live:
            continue
        kind, bound = BOUNDS[k]
        s, l = sim[k], live[k]
        if kind == "abs":
            ok = abs(s - l) <= bound
        else:
            ok = (s == 0 and l == 0) or (l != 0 and abs(s - l) / abs(l) <= bound)
        out[k] = {"sim": s, "live": l, "bound": bound_text(k), "within": bool(ok)}
    return out


def median_metrics(runs):
    return {k: statistics.median(r[k] for r in runs) for k in runs[0]}


# ------------------------------------------------------------------------------- the calibrations

def cpu_sweep(a, work, rates, duration_ms=200):
    """One sender, no congestion control, 64 KiB WRITEs: the bottleneck's use over the second half
    at each rate. Where it falls short of 1 the lab's CPU, not the link, is the limit."""
    rows = []
    for g in rates:
        cmd = [a.switch, "--", "--lab-senders", "1", "--lab-duration-ms", str(duration_ms), "--lab-bottleneck-gbps",
               str(g), "--line-gbps", str(g), "--cc", "none", "--lab-message-bytes", "65536", "--buffer-bytes", "512K"]
        j = run_json(cmd, os.path.join(work, f"cpu_{g}.json"), 120)
        fake = {"duration_ms": duration_ms, "fabric": {"host_gbps": g}}
        m, _ = live_flow_metrics(j, fake)
        rows.append({"gbps": g, "utilisation": m["utilisation"], "command": shown(cmd)})
        print(f"cpu sweep: {g} Gb/s bottleneck, one sender: utilisation {m['utilisation']:.3f}", flush=True)
    return rows


def measure_delay(a, work, gbps, mtu=1024):
    """The live lab's base RTT and the droce-sim --delay-us that gives the dumbbell the same."""
    rate = gbps / 10
    cmd = [a.switch, "--", "--lab-senders", "1", "--lab-duration-ms", "100", "--lab-bottleneck-gbps", str(gbps),
           "--line-gbps", str(rate), "--cc", "dcqcn", "--lab-message-bytes", str(mtu)]
    j = run_json(cmd, os.path.join(work, "rtt.json"), 120)
    rtt_us = j["senders"][0]["min_rtt_us"]
    ser_us = lambda b: b * 8 / (gbps * 1e3)  # noqa: E731
    base_us = 2 * ser_us(mtu + ROCE_FRAMING) + ser_us(64)  # droce-sim's dumbbell without link delay
    delay = max(0.0, (rtt_us - base_us) / 4)
    print(f"calibration: live min RTT {rtt_us:.1f} us at {gbps} Gb/s -> droce-sim --delay-us {delay:.2f}", flush=True)
    return {"command": shown(cmd), "min_rtt_us": rtt_us, "srtt_us": j["senders"][0]["srtt_us"],
            "sim_rtt_without_delay_us": base_us, "delay_us": delay,
            "how": "one sender of one-packet WRITEs paced by DCQCN's line rate at a tenth of the bottleneck "
                   "(the queue stays empty); its QP's smallest RTT sample; droce-sim's dumbbell base RTT is "
                   "2 frame serialisations + a 64-byte ACK's + 4 link delays, so --delay-us = (RTT - those) / 4"}


# ---------------------------------------------------------------------------------- the scenarios

def run_scenario(a, sc, delay_us, work, repeats):
    name = sc["name"]
    res = {"name": name, "file": os.path.relpath(sc["_file"], ROOT), "description": sc.get("description", ""),
           "commands": {}, "notes": []}
    sim_cmd = [a.sim, *sim_args(sc)]
    if is_flows(sc):
        # The command line wins over the scenario: the measured per-hop delay, and the live lab's
        # sampling period so that both queue series are sampled alike.
        sim_cmd += ["--delay-us", f"{delay_us:.3f}", "--sample-us", "500"]
    else:
        res["notes"].append("droce-sim --topology leafspine on one leaf; no delay calibration: the scenario's "
                            "delay_us per hop")
    res["commands"]["sim"] = shown(sim_cmd)
    sim = run_json(sim_cmd, os.path.join(work, f"{name}.sim.json"), 600)
    named(sim, sc, "droce-sim")
    try:
        if is_flows(sc):
            live_cmd = [a.switch, "--", *switch_args(sc, work)]
        else:
            live_cmd = [a.coll, "--", *coll_args(sc), "--iters", str(3 if a.quick else 5), "--warmup_iters", "1"]
    except Unsupported as e:
        res["live_missing"] = str(e)
        sm = sim_flow_metrics(sim, sc)[0] if is_flows(sc) else sim_coll_metrics(sim, sc)
        res["metrics"] = {k: {"sim": v, "live": None, "bound": bound_text(k), "within": None} for k, v in sm.items()}
        return res, sim, []
    res["commands"]["live"] = shown(live_cmd)
    lives, live_jsons = [], []
    for r in range(repeats):
        j = run_json(live_cmd, os.path.join(work, f"{name}.live{r}.json"), 600)
        named(j, sc, "the live lab")
        if is_flows(sc) and not j.get("data_ok", False):
            raise RuntimeError(f"{name}: the live lab's data did not verify")
        live_jsons.append(j)
        lives.append(live_flow_metrics(j, sc)[0] if is_flows(sc) else live_coll_metrics(j, sc))
    sm = sim_flow_metrics(sim, sc)[0] if is_flows(sc) else sim_coll_metrics(sim, sc)
    res["metrics"] = compare(sm, median_metrics(lives))
    res["live_runs"] = lives
    if is_flows(sc) and float(fabric(sc).get("loss", 0)) > 0:
        res["notes"].append("live loss: --drop-rule every:N (deterministic, data and ACKs); sim: random after the port")
    return res, sim, live_jsons


def fmt(k, v):
    if v is None:
        return "-"
    if k in ("queue_p99", "retransmitted", "completion_us"):
        return f"{v:.0f}"
    return f"{v:.3f}"


def table(results):
    lines = ["| scenario | metric | sim | live | bound | within |", "|---|---|---|---|---|---|"]
    for r in results:
        if "error" in r:
            lines.append(f"| {r['name']} | - | - | - | - | failed: {r['error'].splitlines()[0]} |")
            continue
        for k, m in r["metrics"].items():
            w = "yes" if m["within"] else ("no" if m["within"] is False else r.get("live_missing", "-"))
            lines.append(f"| {r['name']} | {k} | {fmt(k, m['sim'])} | {fmt(k, m['live'])} | {m['bound']} | {w} |")
    return "\n".join(lines)


def plot(path, sc, sim, live_json):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(9, 6.5), sharex=True)
    st = [t / 1e3 for t in sim["series"]["time_us"]]
    for k in range(len(sim["flows"])):
        ax1.plot(st, [r[k] for r in sim["series"]["flow_rate_gbps"]], lw=1, label=f"sim flow {k}")
    ax2.plot(st, [q / 1e3 for q in sim["series"]["queue_bytes"]], lw=1, label="sim")
    if live_json:
        ls = live_json["series"]
        for k in range(len(ls["rate_gbps"][0])):
            ax1.plot(ls["time_ms"], [r[k] for r in ls["rate_gbps"]], lw=1, ls="--", label=f"live sender {k}")
        ax2.plot(ls["time_ms"], [q / 1e3 for q in ls["queue_bytes"]], lw=1, ls="--", label="live")
    ax1.set_ylabel("DCQCN rate (Gb/s)")
    ax2.set_ylabel("bottleneck queue (KB)")
    ax2.set_xlabel("ms")
    for ax in (ax1, ax2):
        ax.axvline(float(sc["duration_ms"]) / 2, color="grey", lw=0.5)
        ax.legend(fontsize=7, ncol=2)
    ax1.set_title(f"{sc['name']}: droce-sim (--transport rcqp) against the live lab; metrics after the grey line")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="one live run per scenario, a shorter CPU sweep")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"), help="the meson build folder (default build/)")
    ap.add_argument("--json", required=True, help="write the results here")
    ap.add_argument("--md", help="write the markdown table here too")
    ap.add_argument("--plots", help="draw each flows scenario's rates and queue into this folder")
    ap.add_argument("--scenarios", help="comma-separated names (default every file in scenarios/)")
    ap.add_argument("--no-sweep", action="store_true", help="skip the CPU sweep (the CI test)")
    a = ap.parse_args()
    a.sim = os.path.join(a.build, "apps/droce-sim/droce-sim")
    a.switch = os.path.join(a.build, "apps/droce-switch/droce-switch")
    a.coll = os.path.join(a.build, "apps/droce-coll/droce-coll")
    for exe in (a.sim, a.switch, a.coll):
        if not os.access(exe, os.X_OK):
            sys.exit(f"run.py: {exe} is not built (ninja -C {a.build})")
    sdir = os.path.join(HERE, "scenarios")
    names = a.scenarios.split(",") if a.scenarios else sorted(n[:-5] for n in os.listdir(sdir) if n.endswith(".json"))
    scenarios = [load(os.path.join(sdir, n + ".json")) for n in names]
    if a.plots:
        os.makedirs(a.plots, exist_ok=True)
    t0 = time.time()
    out = {"quick": a.quick, "window": "second half of each scenario's schedule, [D/2, D)",
           "bounds": {k: bound_text(k) for k in BOUNDS},
           "scenarios": []}
    with tempfile.TemporaryDirectory(prefix="fidelity-") as work:
        if not a.no_sweep:
            out["cpu_limit"] = cpu_sweep(a, work, [0.1, 0.2, 0.5] if a.quick else [0.05, 0.1, 0.2, 0.3, 0.5, 1, 2])
        rates = {float(fabric(sc)["host_gbps"]) for sc in scenarios if is_flows(sc)}
        out["calibration"] = {str(g): measure_delay(a, work, g) for g in sorted(rates)}
        for sc in scenarios:
            print(f"scenario {sc['name']} ...", flush=True)
            delay = out["calibration"].get(str(float(fabric(sc)["host_gbps"])), {}).get("delay_us", 0)
            try:
                r, sim, lives = run_scenario(a, sc, delay, work, 1 if a.quick else 3)
                if a.plots and is_flows(sc):
                    plot(os.path.join(a.plots, f"{sc['name']}.png"), sc, sim, lives[0] if lives else None)
            except (RuntimeError, subprocess.TimeoutExpired, Unsupported) as e:
                r = {"name": sc["name"], "error": str(e)}
            out["scenarios"].append(r)
    out["wall_s"] = round(time.time() - t0, 1)
    out["loadavg"] = os.getloadavg()
    md = table(out["scenarios"])
    with open(a.json, "w") as f:
        json.dump(out, f, indent=1)
    if a.md:
        with open(a.md, "w") as f:
            f.write(md + "\n")
    print(md)
    print(f"run.py: {out['wall_s']} s, load average {out['loadavg'][0]:.1f}")
    return 1 if any("error" in r for r in out["scenarios"]) else 0


if __name__ == "__main__":
    sys.exit(main())
