#!/usr/bin/env python3
"""The loss table (issue 36): droce-gen goodput under random loss against lossless, in the same run.

4 KiB RDMA WRITEs at PMTU 1024, one QP, --inflight 16, for go-back-N and selective repeat, at 0,
0.1 % and 1 % loss, in two topologies:
  loopback  one droce-gen process, both endpoints on one lcore over net_ring; its --loss drops
            frames at both endpoints' receive sides, so both directions lose: requests and their
            ACKs, NAKs and SACKs alike
  memif     a droce-gen client (the requester) and server (the responder) over net_memif, each
            on its own lcore, each given --loss: both directions again, each at its receive side
The adaptive retransmission timer and tail-loss probes are on by default; the lossy rows are also
run with --adaptive-rto off (the plain IBTA timer, what droce did before) for comparison. Each
configuration runs --repeats times in interleaved rounds (a failed run is retried once); the table
gives medians, and each lossy median's ratio to the lossless median of the same topology and
recovery (and the same variant) from this same run. --gen-args passes more droce-gen options to every
run (both processes of a memif pair); --variant LABEL=GEN[:ARGS], given more than once, runs each
configuration with each binary and options in turn, interleaved in the same rounds (an A/B, or a
sweep of one knob), each variant's lossy rows against its own lossless ones. Timer expiries (ack_timeouts: IBTA and adaptive ones) and tail probes
are the requester's, per run (medians).

Writes --out DIR/loss.json (every sample, the command lines, the machine's load) and
DIR/results-table.md (the table), and prints the table. Not a test: ~15 minutes at the defaults.
"""
import argparse
import json
import os
import shlex
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WORKLOAD = ["--op", "write", "--size", "4096", "--mtu", "1024", "--qps", "1", "--inflight", "16", "--quiet"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def figures(report, requester):
    """What the table needs from a droce-gen --json report (the requester's for the timer)."""
    lr = requester.get("loss_recovery", {})
    return {"goodput_gbps": report.get("goodput_gbps", 0.0), "messages": report.get("messages", 0),
            "ack_timeouts": requester.get("ack_timeouts", 0), "adaptive_timeouts": lr.get("adaptive_timeouts", 0),
            "tail_probes": lr.get("tail_probes", 0), "spurious_retransmits": lr.get("spurious_retransmits", 0),
            "retransmitted_packets": report.get("retransmitted_packets", 0),
            "rto_us": (lr.get("rto_us") or [0])[0], "srtt_us": (lr.get("srtt_us") or [0])[0],
            "dropped": report.get("impairment", {}).get("dropped", 0),
            "verified": all(report.get(k, 1) == 0 for k in ("lost", "duplicated", "out_of_order", "corrupted",
                                                             "errors"))}


def run_loopback(a, cfg, seed, work):
    out = os.path.join(work, "lb.json")
    gen, extra = a.variants[cfg["variant"]]
    cmd = [gen, "-l", a.loopback_cpu, "--", *WORKLOAD, "--duration", str(a.duration), "--recovery", cfg["recovery"],
           "--loss", str(cfg["loss"]), "--seed", str(seed), "--adaptive-rto", cfg["rto"], "--json", out, *extra]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=a.duration + 120)
    if p.returncode != 0:
        return None, cmd, p.stdout[-1500:]
    r = json.load(open(out))
    return figures(r, r), cmd, ""


def run_memif(a, cfg, seed, work):
    sock = os.path.join(work, "loss.sock")
    port = free_port()
    ccpu, scpu = a.memif_cpus.split(",")
    gen, extra = a.variants[cfg["variant"]]
    common = [*WORKLOAD, "--recovery", cfg["recovery"], "--loss", str(cfg["loss"]), "--adaptive-rto", cfg["rto"],
              "--oob-port", str(port), "--connect-timeout", "30", *extra]
    srv = [gen, "-l", scpu, "--no-pci", "--vdev", f"net_memif0,role=server,socket={sock},bsize=8192", "--",
           "--mode", "server", "--seed", str(2 * seed), "--json", os.path.join(work, "s.json"), *common]
    cli = [gen, "-l", ccpu, "--no-pci", "--vdev", f"net_memif0,role=client,socket={sock},bsize=8192", "--",
           "--mode", "client", "--seed", str(2 * seed + 1), "--duration", str(a.duration),
           "--json", os.path.join(work, "c.json"), *common]
    with open(os.path.join(work, "s.txt"), "w") as slog:
        s = subprocess.Popen(srv, stdout=slog, stderr=subprocess.STDOUT)
        time.sleep(1.0)
        c = subprocess.run(cli, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=a.duration + 120)
        try:
            s.wait(timeout=60)
        except subprocess.TimeoutExpired:
            s.kill()
            s.wait()
    cmd = {"server": srv, "client": cli}
    if c.returncode != 0 or s.returncode != 0:
        return None, cmd, c.stdout[-1500:] + open(os.path.join(work, "s.txt")).read()[-1500:]
    r = json.load(open(os.path.join(work, "c.json")))
    srv_r = json.load(open(os.path.join(work, "s.json")))
    f = figures(r, r)
    f["verified"] = f["verified"] and figures(srv_r, srv_r)["verified"]
    f["dropped"] += srv_r.get("impairment", {}).get("dropped", 0)
    return f, cmd, ""


def configs(a):
    out = []
    for mode in a.modes.split(","):
        for rec in a.recovery.split(","):
            for v in a.variants:
                for loss in [float(x) for x in a.losses.split(",")]:
                    out.append({"variant": v, "mode": mode, "recovery": rec, "loss": loss, "rto": "on"})
                for loss in [float(x) for x in a.off_losses.split(",") if x]:
                    out.append({"variant": v, "mode": mode, "recovery": rec, "loss": loss, "rto": "off"})
    return out


def key(c):
    # The default variant keeps the keys of runs before --variant existed.
    prefix = "" if c["variant"] == "default" else c["variant"] + "/"
    return f"{prefix}{c['mode']}/{c['recovery']}/{c['loss']}/{c['rto']}"


def parse_variants(a, ap):
    """LABEL -> (droce-gen binary, extra arguments); one 'default' variant without --variant."""
    if not a.variant:
        return {"default": (a.gen, shlex.split(a.gen_args))}
    out = {}
    for v in a.variant:
        label, sep, rest = v.partition("=")
        gen, _, args = rest.partition(":")
        if not sep or not label or not gen or "/" in label or label in out:
            ap.error(f"--variant {v!r}: want a unique LABEL=GEN[:ARGS], the label without '/'")
        out[label] = (gen, shlex.split(a.gen_args) + shlex.split(args))
    return out


def load_average():
    return list(os.getloadavg())


def table(cfgs, samples):
    def med(c, field):
        vals = [s[field] for s in samples[key(c)]]
        return statistics.median(vals) if vals else float("nan")

    variants = len({c["variant"] for c in cfgs}) > 1
    rows = ["| " + ("variant | " if variants else "") + "topology | recovery | loss | adaptive RTO | goodput Gb/s (median) | x lossless | runs (Gb/s) | "
            "timer expiries (adaptive) | tail probes | spurious | RTO us, SRTT us (last run) |",
            "|" + ("---|" if variants else "") + "---|---|---:|---|---:|---:|---|---:|---:|---:|---|"]
    for c in cfgs:
        ss = samples[key(c)]
        v = f"| {c['variant']} " if variants else ""
        if not ss:
            rows.append(f"{v}| {c['mode']} | {c['recovery']} | {c['loss'] * 100:g} % | {c['rto']} | failed | | | | | | |")
            continue
        base = dict(c, loss=0.0, rto="on")
        g = med(c, "goodput_gbps")
        b = med(base, "goodput_gbps") if samples.get(key(base)) else float("nan")
        runs = ", ".join(f"{s['goodput_gbps']:.2f}" for s in ss)
        rows.append(f"{v}| {c['mode']} | {c['recovery']} | {c['loss'] * 100:g} % | {c['rto']} | {g:.2f} | {g / b:.2f} | "
                    f"{runs} | {med(c, 'ack_timeouts'):g} ({med(c, 'adaptive_timeouts'):g}) | "
                    f"{med(c, 'tail_probes'):g} | {med(c, 'spurious_retransmits'):g} | "
                    f"{ss[-1]['rto_us']}, {ss[-1]['srtt_us']} |")
    return "\n".join(rows) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gen", default=os.path.join(ROOT, "build/apps/droce-gen/droce-gen"), help="droce-gen binary")
    ap.add_argument("--duration", type=float, default=10, help="seconds per run (default 10)")
    ap.add_argument("--repeats", type=int, default=3, help="runs per configuration, in rounds (default 3)")
    ap.add_argument("--modes", default="loopback,memif", help="loopback,memif (default both)")
    ap.add_argument("--recovery", default="gbn,sr", help="gbn,sr (default both)")
    ap.add_argument("--losses", default="0,0.001,0.01", help="loss fractions with the adaptive timer (default 0,0.001,0.01)")
    ap.add_argument("--off-losses", default="0.001,0.01",
                    help="loss fractions also run with --adaptive-rto off ('' for none; default 0.001,0.01)")
    ap.add_argument("--loopback-cpu", default="0", help="the loopback run's lcore (default 0)")
    ap.add_argument("--memif-cpus", default=None, help="CLIENT,SERVER lcores (default 0 and the last CPU)")
    ap.add_argument("--gen-args", default="", help="more droce-gen options for every run, one shell-quoted string")
    ap.add_argument("--variant", action="append", default=[],
                    help="LABEL=GEN[:ARGS]: a binary and its extra options; repeat it to interleave several (A/B)")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench/loss/results"), help="where loss.json and the table go")
    a = ap.parse_args()
    if a.memif_cpus is None:
        a.memif_cpus = f"0,{os.cpu_count() - 1}"
    if a.repeats < 1 or a.duration <= 0:
        ap.error("--repeats and --duration must be positive")
    a.variants = parse_variants(a, ap)
    cfgs = configs(a)
    samples = {key(c): [] for c in cfgs}
    failures = []
    commands = {}
    doc = {"argv": sys.argv, "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "machine": {"cpus": os.cpu_count(), "kernel": platform.release(), "python": platform.python_version()},
           "load_before": load_average(), "gen_args": a.gen_args,
           "variants": {k: {"gen": g, "args": x} for k, (g, x) in a.variants.items()}}
    try:
        doc["git"] = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], stdout=subprocess.PIPE,
                                    text=True).stdout.strip()
    except OSError:
        pass
    for rnd in range(a.repeats):
        for c in cfgs:
            for attempt in range(2):
                with tempfile.TemporaryDirectory(prefix="droce-loss-") as work:
                    run = run_loopback if c["mode"] == "loopback" else run_memif
                    seed = 1 + rnd + 100 * attempt
                    f, cmd, log = run(a, c, seed, work)
                commands[key(c)] = cmd
                if f is not None and f["verified"]:
                    f["round"] = rnd
                    samples[key(c)].append(f)
                    print(f"{key(c)} round {rnd}: {f['goodput_gbps']:.3f} Gb/s, {f['ack_timeouts']} timer expiries "
                          f"({f['adaptive_timeouts']} adaptive), {f['tail_probes']} probes", flush=True)
                    break
                failures.append({"config": key(c), "round": rnd, "attempt": attempt, "log": log})
                print(f"{key(c)} round {rnd}: failed (attempt {attempt})\n{log}", file=sys.stderr, flush=True)
    doc["load_after"] = load_average()
    doc["configs"] = cfgs
    doc["samples"] = samples
    doc["failures"] = failures
    doc["commands"] = commands
    md = table(cfgs, samples)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "loss.json"), "w") as f:
        json.dump(doc, f, indent=1)
    with open(os.path.join(a.out, "results-table.md"), "w") as f:
        f.write(md)
    print(md)
    return 0 if not any(not v for v in samples.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
