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

The apps do not read the scenario format yet (another branch adds --scenario FILE): sim_args,
switch_args and coll_args turn a scenario into each app's flags, one function per app, so that
`--scenario FILE` can replace them. What an app cannot run is said, never faked: the live lab's
senders have no --recovery until `droce-switch --help` lists it (selective repeat then runs in
the simulator alone, marked "needs the lab's --recovery"), and its --loss is not applied in the lab,
so the live side of a lossy scenario drops with --drop-rule every:round(1/loss) (a deterministic
1-in-N per flow, at every ingress: data and acknowledgements alike) where the simulator drops at
random after the bottleneck.

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

def size(v):
    """A size as the apps take it: a number, or a string with K/M/G = 2^10/2^20/2^30."""
    if isinstance(v, (int, float)):
        return int(v)
    m = re.fullmatch(r"(\d+)([KMG]?)", str(v).strip())
    if not m:
        raise ValueError(f"not a size: {v!r}")
    return int(m.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30}[m.group(2)]


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


def transport(sc):
    return sc.get("transport", {})


def is_flows(sc):
    return "flows" in sc["traffic"]


def queue_flags(sc):
    """Buffer, RED/ECN, PFC and per-hop delay: the same names in all three apps."""
    f = fabric(sc)
    out = []
    if "buffer_bytes" in f:
        out += ["--buffer-bytes", str(size(f["buffer_bytes"]))]
    ecn = f.get("ecn", {})
    for k, flag in (("kmin_bytes", "--kmin-bytes"), ("kmax_bytes", "--kmax-bytes")):
        if k in ecn:
            out += [flag, str(size(ecn[k]))]
    if "pmax" in ecn:
        out += ["--pmax", str(ecn["pmax"])]
    pfc = f.get("pfc", False)
    if pfc:
        out.append("--pfc")
        if isinstance(pfc, dict):
            if "xoff_bytes" in pfc:
                out += ["--pfc-xoff-bytes", str(size(pfc["xoff_bytes"]))]
            if "xon_bytes" in pfc:
                out += ["--pfc-xon-bytes", str(size(pfc["xon_bytes"]))]
    return out


def check_star(sc, app):
    f = fabric(sc)
    if f.get("topology", "star") != "star":
        raise Unsupported(f"{app} here: fabric.topology: only star in bench/fidelity")
    for k in ("links", "link_down", "uplink_gbps", "ecmp_hash"):
        if k in f:
            raise Unsupported(f"{app}: fabric.{k}: leaf-spine only")


# ------------------------------------------------------------------- one function per app's flags

def sim_args(sc):
    """droce-sim's flags for a scenario (to be replaced by --scenario FILE)."""
    check_star(sc, "droce-sim")
    f, tr = fabric(sc), transport(sc)
    mtu = int(tr.get("mtu", 1024))
    args = ["--link-gbps", str(f["host_gbps"]), "--packet-bytes", str(mtu + ROCE_FRAMING), *queue_flags(sc)]
    if "delay_us" in f:
        args += ["--delay-us", str(f["delay_us"])]
    if "seed" in sc:
        args += ["--seed", str(sc["seed"])]
    t = sc["traffic"]
    if not is_flows(sc):
        if t.get("algo", "ring") != "ring":
            raise Unsupported("droce-sim: traffic.algo: the leaf-spine model runs ring only")
        if f.get("loss", 0):
            raise Unsupported("droce-sim --topology leafspine: fabric.loss is not modelled")
        # One leaf, one spine: every rank on the leaf, as droce-coll's star (the spine carries nothing).
        return args + ["--topology", "leafspine", "--leaves", "1", "--spines", "1", "--ranks", str(t["ranks"]),
                       "--pattern", t["pattern"], "--size", str(size(t["size"])), "--duration-ms", "60000"]
    flows = t["flows"]
    starts = [float(x.get("start_ms", 0)) for x in flows]
    if any("stop_ms" in x for x in flows):
        raise Unsupported("droce-sim: traffic.flows[].stop_ms is not modelled (flows run to the end)")
    if all(s == 0 for s in starts):
        args += ["--incast"]
    else:
        stagger = starts[1] - starts[0] if len(starts) > 1 else 0
        if starts[0] != 0 or any(abs(s - i * stagger) > 1e-9 for i, s in enumerate(starts)):
            raise Unsupported("droce-sim: traffic.flows[].start_ms: only a constant stagger from 0 is modelled")
        args += ["--start-stagger-ms", str(stagger)]
    if float(tr.get("line_gbps", f["host_gbps"])) != float(f["host_gbps"]):
        raise Unsupported("droce-sim: transport.line_gbps: DCQCN's line rate is the link's (--link-gbps)")
    if size(tr.get("message_bytes", 65536)) != 65536:
        raise Unsupported("droce-sim --transport rcqp: transport.message_bytes: it posts 64 KiB WRITEs")
    return args + ["--flows", str(len(flows)), "--duration-ms", str(sc["duration_ms"]), "--cc", tr.get("cc", "dcqcn"),
                   "--preset", tr.get("preset", "paper"), "--loss", str(f.get("loss", 0)),
                   "--recovery", tr.get("recovery", "gbn"), "--transport", "rcqp",
                   # The live lab's QPs keep droce's default timers (rtt_estimator.h: an RTO floor
                   # of 20 ms, probes after 2 ms); droce-sim's --rto-us sets the floor (and probes
                   # after an eighth: 2.5 ms), else its 320 us would fire behind a queue of a few
                   # ms at these rates, which the live QPs never do.
                   "--rto-us", "20000"]


def switch_args(sc, switch_help):
    """droce-switch's live-lab flags for a flows scenario (to be replaced by --scenario FILE)."""
    check_star(sc, "droce-switch")
    if not is_flows(sc):
        raise Unsupported("droce-switch runs flows, not a pattern: traffic.pattern")
    f, tr = fabric(sc), transport(sc)
    flows = sc["traffic"]["flows"]
    if int(tr.get("mtu", 1024)) != 1024:
        raise Unsupported("droce-switch's lab: transport.mtu: its QPs run PMTU 1024")
    d = float(sc["duration_ms"])
    args = ["--lab-senders", str(len(flows)), "--lab-duration-ms", str(sc["duration_ms"]),
            "--lab-start-ms", ",".join(str(x.get("start_ms", 0)) for x in flows),
            "--lab-stop-ms", ",".join(str(x.get("stop_ms", d)) for x in flows),
            "--lab-bottleneck-gbps", str(f["host_gbps"]), "--line-gbps", str(tr.get("line_gbps", f["host_gbps"])),
            "--cc", tr.get("cc", "dcqcn"), "--preset", tr.get("preset", "paper"),
            "--lab-message-bytes", str(size(tr.get("message_bytes", 16384))), *queue_flags(sc)]
    if "delay_us" in f:
        args += ["--delay-us", str(f["delay_us"])]
    if "seed" in sc:
        args += ["--seed", str(sc["seed"])]
    rec = tr.get("recovery", "gbn")
    if "--recovery" in switch_help:
        args += ["--recovery", rec]
    elif rec != "gbn":
        raise Unsupported("needs the lab's --recovery (its senders run go-back-N only)")
    loss = float(f.get("loss", 0))
    if loss > 0:
        # The lab does not apply --loss (the impairment is installed on real ports only): a
        # deterministic 1-in-N drop per flow at every ingress is the lab's loss.
        args += ["--drop-rule", f"every:{round(1 / loss)}"]
    return args


def coll_args(sc):
    """droce-coll's flags for a pattern scenario (to be replaced by --scenario FILE)."""
    check_star(sc, "droce-coll")
    if is_flows(sc):
        raise Unsupported("droce-coll runs a pattern, not flows: traffic.flows")
    f, tr, t = fabric(sc), transport(sc), sc["traffic"]
    args = ["--pattern", t["pattern"], "--algo", t.get("algo", "ring"), "--ranks", str(t["ranks"]),
            "--size", str(size(t["size"])), "--egress-gbps", str(f["host_gbps"]), "--mtu", str(tr.get("mtu", 1024)),
            "--cc", tr.get("cc", "none"), *queue_flags(sc)]
    if "delay_us" in f:
        args += ["--delay-us", str(f["delay_us"])]
    if "seed" in sc:
        args += ["--seed", str(sc["seed"])]
    if "recovery" in tr:
        args += ["--recovery", tr["recovery"]]
    if f.get("loss", 0):
        args += ["--loss", str(f["loss"])]
    return args


# ----------------------------------------------------------------------------------- running them

def run_json(cmd, out, timeout):
    """Runs an app with --json out; its JSON, or an exception naming the command and its tail."""
    p = subprocess.run(cmd + ["--json", out], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=timeout)
    if p.returncode != 0 or not os.path.exists(out):
        raise RuntimeError(f"exit {p.returncode}: {' '.join(cmd)}\n{p.stdout[-1500:]}")
    return json.load(open(out))


def shown(cmd):
    """A command as the results show it: the app's name, not the build folder."""
    return " ".join([os.path.basename(cmd[0]), *cmd[1:]])


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

def run_scenario(a, sc, switch_help, delay_us, work, repeats):
    name = sc["name"]
    res = {"name": name, "file": os.path.relpath(sc["_file"], ROOT), "description": sc.get("description", ""),
           "commands": {}, "notes": []}
    sim_cmd = [a.sim, *sim_args(sc)]
    if is_flows(sc):
        # The command line wins over the scenario: the measured per-hop delay, and the live lab's
        # sampling period so that both queue series are sampled alike.
        i = sim_cmd.index("--delay-us") if "--delay-us" in sim_cmd else len(sim_cmd)
        del sim_cmd[i:i + 2]  # one --delay-us: the measured one
        sim_cmd += ["--delay-us", f"{delay_us:.3f}", "--sample-us", "500"]
    else:
        res["notes"].append("droce-sim --topology leafspine runs its model transport (no --transport rcqp there "
                            "yet); no delay calibration: its links' delay is its own (1 us)")
    res["commands"]["sim"] = shown(sim_cmd)
    sim = run_json(sim_cmd, os.path.join(work, f"{name}.sim.json"), 600)
    try:
        if is_flows(sc):
            live_cmd = [a.switch, "--", *switch_args(sc, switch_help)]
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
    switch_help = subprocess.run([a.switch, "--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 text=True, timeout=60).stdout
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
                r, sim, lives = run_scenario(a, sc, switch_help, delay, work, 1 if a.quick else 3)
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
