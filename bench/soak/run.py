#!/usr/bin/env python3
"""Soak: many messages through a droce-gen client/server pair over net_memif with loss, reordering
and duplication both ways, every message verified by droce-gen, resident memory of both processes
sampled at a fixed interval. Writes a JSON result and prints a summary; exit 0 only when both ends
verified every message (lost, duplicated, corrupted, errors all 0) and memory stayed flat.

Not a test (it runs for minutes): bench/soak/results.md records its figures and the command.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def rss_kib(pid):
    """VmRSS of a live process in KiB, or None once it has gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gen", default=os.path.join(ROOT, "build/apps/droce-gen/droce-gen"), help="droce-gen binary")
    ap.add_argument("--count", type=int, default=10_000_000, help="messages the client sends (default 1e7)")
    ap.add_argument("--size", default="64", help="droce-gen --size (default 64)")
    ap.add_argument("--op", default="send", choices=["send", "write", "read"])
    ap.add_argument("--qps", type=int, default=4)
    ap.add_argument("--loss", type=float, default=0.05)
    ap.add_argument("--reorder", type=float, default=0.01)
    ap.add_argument("--duplicate", type=float, default=0.01)
    ap.add_argument("--qp-timeout", type=int, default=14, help="local ACK timeout exponent (default 14)")
    ap.add_argument("--sample-s", type=float, default=10.0, help="memory sampling interval (default 10 s)")
    ap.add_argument("--max-hours", type=float, default=4.0, help="give up after this long (default 4)")
    ap.add_argument("--cpus", default=None, help="CLIENT,SERVER lcores (default 0 and the last CPU)")
    ap.add_argument("--warmup-s", type=float, default=30.0,
                    help="memory growth is judged from the first sample at or after this time (default 30 s)")
    ap.add_argument("--flat-tolerance-kib", type=int, default=8192,
                    help="largest RSS growth from the first sample after warm-up to the last (default 8 MiB)")
    ap.add_argument("--json", default=None, help="write the result here")
    a = ap.parse_args()
    if a.count <= 0 or a.sample_s <= 0 or a.max_hours <= 0:
        ap.error("--count, --sample-s and --max-hours must be positive")

    last = os.cpu_count() - 1
    ccpu, scpu = (a.cpus.split(",") if a.cpus else ("0", str(last)))
    work = tempfile.mkdtemp(prefix="droce-soak-")
    sock = os.path.join(work, "soak.sock")
    port = 20000 + os.getpid() % 20000
    common = ["--op", a.op, "--size", a.size, "--qps", str(a.qps), "--loss", str(a.loss), "--reorder", str(a.reorder),
              "--duplicate", str(a.duplicate), "--qp-timeout", str(a.qp_timeout), "--oob-port", str(port),
              "--connect-timeout", "60", "--quiet"]
    srv_cmd = [a.gen, "-l", scpu, "--no-pci", "--vdev", f"net_memif0,role=server,socket={sock},bsize=8192", "--",
               "--mode", "server", "--seed", "2", "--json", os.path.join(work, "server.json")] + common
    cli_cmd = [a.gen, "-l", ccpu, "--no-pci", "--vdev", f"net_memif0,role=client,socket={sock},bsize=8192", "--",
               "--mode", "client", "--seed", "3", "--count", str(a.count),
               # --count runs are limited to max(60 s, --duration): the soak's limit is --max-hours.
               "--duration", str(int(a.max_hours * 3600)), "--json", os.path.join(work, "client.json")] + common
    print("server:", " ".join(srv_cmd))
    print("client:", " ".join(cli_cmd))
    slog = open(os.path.join(work, "server.txt"), "w")
    clog = open(os.path.join(work, "client.txt"), "w")
    srv = subprocess.Popen(srv_cmd, stdout=slog, stderr=subprocess.STDOUT)
    time.sleep(1.0)
    cli = subprocess.Popen(cli_cmd, stdout=clog, stderr=subprocess.STDOUT)
    samples = []
    start = time.monotonic()
    deadline = start + a.max_hours * 3600
    while cli.poll() is None or srv.poll() is None:
        now = time.monotonic()
        if now > deadline:
            cli.kill()
            srv.kill()
            print("soak: gave up after --max-hours", file=sys.stderr)
            break
        samples.append({"t_s": round(now - start, 1), "client_rss_kib": rss_kib(cli.pid), "server_rss_kib": rss_kib(srv.pid)})
        # Sleep in short slices so the end of the run is noticed promptly.
        t_end = now + a.sample_s
        while time.monotonic() < t_end and (cli.poll() is None or srv.poll() is None):
            time.sleep(0.2)
    elapsed = time.monotonic() - start
    result = {"command": {"client": cli_cmd, "server": srv_cmd}, "elapsed_s": round(elapsed, 1),
              "client_rc": cli.returncode, "server_rc": srv.returncode, "samples": samples}
    for side in ("client", "server"):
        try:
            result[side] = json.load(open(os.path.join(work, f"{side}.json")))
        except (OSError, ValueError) as e:
            result[side] = {"problem": f"no JSON report: {e}"}
            print(open(os.path.join(work, f"{side}.txt")).read()[-2000:], file=sys.stderr)

    def growth(key):
        # Pools, rings and memif regions fill during the first seconds; what must not happen is
        # growth after that (a leak per message or per retransmission).
        after = [x[key] for x in samples if x[key] is not None and x["t_s"] >= a.warmup_s]
        if len(after) < 2:
            after = [x[key] for x in samples[1:] if x[key] is not None]
        return (max(after) - after[0]) if len(after) >= 2 else 0

    result["rss_growth_kib"] = {"client": growth("client_rss_kib"), "server": growth("server_rss_kib")}
    c, s = result["client"], result["server"]
    verified = all(d.get(k, 1) == 0 for d in (c, s) for k in ("lost", "duplicated", "corrupted", "errors"))
    flat = all(v <= a.flat_tolerance_kib for v in result["rss_growth_kib"].values())
    result["verified"] = verified and cli.returncode == 0 and srv.returncode == 0
    result["memory_flat"] = flat
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result, f, indent=1)
    print(f"soak: {c.get('messages', 0)} messages in {elapsed:.0f} s "
          f"({c.get('msg_rate_mps', 0):.3f} M msg/s), retransmitted {c.get('retransmitted_packets', 0)} + "
          f"{s.get('retransmitted_packets', 0)} packets, NAKs sent {c.get('naks_sent', 0)} + {s.get('naks_sent', 0)}; "
          f"lost {c.get('lost')}/{s.get('lost')}, duplicated {c.get('duplicated')}/{s.get('duplicated')}, "
          f"corrupted {c.get('corrupted')}/{s.get('corrupted')}, errors {c.get('errors')}/{s.get('errors')}; "
          f"RSS growth client {result['rss_growth_kib']['client']} KiB, server {result['rss_growth_kib']['server']} KiB "
          f"over {len(samples)} samples")
    ok = result["verified"] and flat
    print("soak:", "PASSED" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
