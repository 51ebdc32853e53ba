#!/usr/bin/env python3
"""Workers and connections: droce-gen's message rate and goodput with 1 and 2 (or more) poll-mode
workers, and with a few QPs against thousands of connected QPs of which a few are busy. Every
configuration runs --reps times, interleaved (1 worker, 2 workers, 1 worker, ...) so that a noisy
neighbour hits all of them alike; the figures are medians and each ratio is taken within this run.

Cases (droce-gen's in-process loopback: each worker runs both ends of its share of the QPs over
its own net_ring lab, every message verified by droce-gen):
  scaling      64 B SEND and 4 KiB WRITE, --workers 1 vs --workers N (N from --workers, default 2)
  connections  64 B SEND, 16 QPs vs --qps 10000 --active-qps 100, one worker (and 16,384 QPs, 100
               busy: the most a process holds); and 100 QPs, all busy, as the control that
               separates the idle QPs' cost from the busy ones'
  connect      client and server (two processes over net_memif, one CPU each) joining 10,000 and
               16,384 QPs through droce-gen's TCP exchange: the seconds from the first QP's
               exchange to the last QP connected (droce-gen's setup_s.connect), then 1 s of 64 B
               SEND on 100 of them, every message verified

Lcores: droce-gen runs worker 0 on the main lcore (beside its control side: live line, end of
run) and worker k on lcore k; lcore k is pinned to CPU k modulo the CPUs, so N workers on N CPUs
share none with each other.
Not a test (timings): bench/workers/results.md records the figures and the command.
"""
import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def lcores(workers, cpus):
    """EAL --lcores: lcore k on CPU k % cpus (droce-gen runs worker 0 on the main lcore)."""
    return ",".join(f"{k}@{k % cpus}" for k in range(workers))


def memory_args(a):
    """Hugepages without files (--in-memory), or none at all: EAL refuses the two together."""
    return ["--no-huge", "-m", str(a.mem_mb)] if a.no_huge else ["--in-memory"]


def free_port():
    """A TCP port nobody holds now (the kernel's pick for port 0), for the pair's exchange."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_gen(a, work, tag, workers, op, size, qps, active=None):
    out = os.path.join(work, f"{tag}.json")
    cmd = [a.gen, "--lcores", lcores(workers, a.cpus), "--no-pci"] + memory_args(a)
    cmd += ["--", "--mode", "loopback", "--op", op, "--size", str(size), "--qps", str(qps),
            "--workers", str(workers), "--duration", str(a.duration), "--warmup", str(a.warmup),
            "--qp-timeout", "14", "--quiet", "--json", out]
    if active is not None:
        cmd += ["--active-qps", str(active)]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=a.duration * 4 + 120)
    try:
        r = json.load(open(out))
    except (OSError, ValueError) as e:
        sys.stderr.write(p.stdout[-3000:])
        raise SystemExit(f"workers bench: {tag}: no JSON report ({e}); command: {' '.join(cmd)}")
    bad = {k: r.get(k) for k in ("lost", "duplicated", "corrupted", "errors") if r.get(k, 0) != 0}
    if p.returncode != 0 or bad:
        sys.stderr.write(p.stdout[-3000:])
        raise SystemExit(f"workers bench: {tag}: exit {p.returncode}, {bad}; command: {' '.join(cmd)}")
    return {"command": cmd, "msg_rate_mps": r["msg_rate_mps"], "goodput_gbps": r["goodput_gbps"],
            "create_qps_s": r["setup_s"]["create_qps"], "connect_s": r["setup_s"]["connect"]}


def run_pair(a, work, tag, qps, active):
    """droce-gen server and client over one memif pair, each on its own CPU: the client's report."""
    sock = os.path.join(work, f"{tag}.sock")
    oob = str(free_port())
    eal = lambda role, cpu: [a.gen, "-l", str(cpu % a.cpus), "--no-pci", "--file-prefix", f"dw{role}{os.getpid()}",
                             "--vdev", f"net_memif0,role={role},socket={sock},bsize=8192"] + memory_args(a)
    common = ["--op", "send", "--size", "64", "--qps", str(qps), "--active-qps", str(active), "--oob-port", oob,
              "--qp-timeout", "14", "--quiet"]
    outs = {r: os.path.join(work, f"{tag}-{r}.json") for r in ("server", "client")}
    server = subprocess.Popen(eal("server", 1) + ["--", "--mode", "server", "--json", outs["server"]] + common,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    time.sleep(1.0)
    client = subprocess.run(eal("client", 0) + ["--", "--mode", "client", "--duration", "1", "--json", outs["client"]] + common,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
    try:
        server_out, _ = server.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        server.kill()
        server_out, _ = server.communicate()
    try:
        r = json.load(open(outs["client"]))
    except (OSError, ValueError) as e:
        sys.stderr.write(client.stdout[-3000:] + server_out[-3000:])
        raise SystemExit(f"workers bench: {tag}: no JSON report from the client ({e})")
    bad = {k: r.get(k) for k in ("lost", "duplicated", "corrupted", "errors") if r.get(k, 0) != 0}
    if client.returncode != 0 or server.returncode != 0 or bad:
        sys.stderr.write(client.stdout[-3000:] + server_out[-3000:])
        raise SystemExit(f"workers bench: {tag}: exit {client.returncode}/{server.returncode}, {bad}")
    return {"command": client.args, "msg_rate_mps": r["msg_rate_mps"], "goodput_gbps": r["goodput_gbps"],
            "create_qps_s": r["setup_s"]["create_qps"], "connect_s": r["setup_s"]["connect"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gen", default=os.path.join(ROOT, "build/apps/droce-gen/droce-gen"), help="droce-gen binary")
    ap.add_argument("--workers", type=int, default=2, help="the scaled case's worker count (default 2)")
    ap.add_argument("--cpus", type=int, default=os.cpu_count(), help="CPUs to place workers on (default all)")
    ap.add_argument("--reps", type=int, default=5, help="runs of each configuration (default 5)")
    ap.add_argument("--duration", type=float, default=4.0, help="measured seconds per run (default 4)")
    ap.add_argument("--warmup", type=float, default=1.0, help="unmeasured seconds per run (default 1)")
    ap.add_argument("--no-huge", action="store_true", help="run without hugepages (--no-huge -m MEM_MB)")
    ap.add_argument("--mem-mb", type=int, default=1024)
    ap.add_argument("--only", choices=["scaling", "connections", "connect"], default=None)
    ap.add_argument("--json", default=None, help="write every run and the medians here")
    a = ap.parse_args()
    if a.workers < 2 or a.reps < 1 or a.duration <= 0 or a.cpus < 1:
        ap.error("--workers must be >= 2, --reps >= 1, --duration > 0")
    configs = []
    if a.only in (None, "scaling"):
        for op, size in (("send", 64), ("write", 4096)):
            for w in (1, a.workers):
                configs.append((f"{op}{size}-w{w}", dict(workers=w, op=op, size=size, qps=16 * a.workers)))
    if a.only in (None, "connections"):
        configs.append(("send64-qps16", dict(workers=1, op="send", size=64, qps=16)))
        configs.append(("send64-qps100", dict(workers=1, op="send", size=64, qps=100)))
        configs.append(("send64-qps10000-active100", dict(workers=1, op="send", size=64, qps=10000, active=100)))
        # The most a process holds (issue 13: connection state compact enough for 16,384 QPs).
        configs.append(("send64-qps16384-active100", dict(workers=1, op="send", size=64, qps=16384, active=100)))
    if a.only in (None, "connect"):
        for n in (10000, 16384):
            configs.append((f"connect-qps{n}", dict(pair=True, qps=n, active=100)))
    work = tempfile.mkdtemp(prefix="droce-workers-")
    runs = {tag: [] for tag, _ in configs}
    for rep in range(a.reps):
        for tag, kw in configs:
            if kw.get("pair"):
                r = run_pair(a, work, f"{tag}-r{rep}", kw["qps"], kw["active"])
            else:
                r = run_gen(a, work, f"{tag}-r{rep}", **kw)
            runs[tag].append(r)
            print(f"rep {rep} {tag:28s} {r['msg_rate_mps']:8.3f} M msg/s {r['goodput_gbps']:8.3f} Gb/s"
                  f"   connected in {r['connect_s']:.3f} s", flush=True)
    med = {tag: {k: statistics.median(x[k] for x in rs)
                 for k in ("msg_rate_mps", "goodput_gbps", "create_qps_s", "connect_s")}
           for tag, rs in runs.items()}
    ratios = {}
    if a.only in (None, "scaling"):
        for op, size in (("send", 64), ("write", 4096)):
            one, many = med[f"{op}{size}-w1"], med[f"{op}{size}-w{a.workers}"]
            ratios[f"{op}{size} {a.workers} workers / 1"] = many["msg_rate_mps"] / one["msg_rate_mps"]
    if a.only in (None, "connections"):
        ratios["send64 10000 QPs (100 active) / 16 QPs"] = (med["send64-qps10000-active100"]["msg_rate_mps"] /
                                                           med["send64-qps16"]["msg_rate_mps"])
        # The control: the same 100 busy QPs without the 9,900 idle ones. Its ratio to the line
        # above is what the idle QPs cost; 100 vs 16 busy QPs is what more active state costs.
        ratios["send64 10000 QPs (100 active) / 100 QPs"] = (med["send64-qps10000-active100"]["msg_rate_mps"] /
                                                            med["send64-qps100"]["msg_rate_mps"])
        ratios["send64 16384 QPs (100 active) / 16 QPs"] = (med["send64-qps16384-active100"]["msg_rate_mps"] /
                                                           med["send64-qps16"]["msg_rate_mps"])
    print("\nmedians:")
    for tag, m in med.items():
        print(f"  {tag:28s} {m['msg_rate_mps']:8.3f} M msg/s {m['goodput_gbps']:8.3f} Gb/s"
              f"   QPs created in {m['create_qps_s']:.3f} s, connected in {m['connect_s']:.3f} s")
    print("ratios (same run):")
    for k, v in ratios.items():
        print(f"  {k:42s} {v:6.2f}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"cpus": a.cpus, "reps": a.reps, "duration_s": a.duration, "runs": runs, "medians": med,
                       "ratios": ratios}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
