#!/usr/bin/env python3
"""Raw forwarding: droce's own rx->tx loop (droce-fwd) vs dpdk-testpmd --forward-mode=io, same PMD, same run.

Topologies (both sides get identical settings, lcores and frames in flight):
  ring   one process, a net_ring loopback port; --tx-first injects 32 frames that circulate.
  memif  two processes joined by net_memif; the server side injects 32 frames, both sides
         forward, so the frames bounce between them. The rate is the server's RX rate.
Each measurement runs DURATION seconds; implementations alternate for REPEATS rounds and the
median rate of each is compared. Prints the ratios and writes JSON.

usage: bench/rawfwd/rawfwd.py [--build build] [--duration 4] [--repeats 3] [--json FILE]
"""
import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import time

TESTPMD = "dpdk-testpmd"


def eal(lcores, main_lcore, prefix):
    # --no-huge keeps this runnable anywhere; both implementations get the same memory mode.
    return ["-l", lcores, "--main-lcore", str(main_lcore), "--no-pci", "--no-huge", "-m", "512",
            "--file-prefix", prefix, "--no-shconf", "--log-level", "*:error"]


def testpmd_cmd(eal_args, vdev, tx_first):
    cmd = [TESTPMD] + eal_args + ["--vdev", vdev, "--", "--forward-mode=io", "--nb-cores=1",
                                  "--stats-period", "1", "--total-num-mbufs=16384", "--burst=32"]
    if tx_first:
        cmd.append("--tx-first")
    return cmd


def droce_cmd(build, eal_args, vdev, tx_first, duration):
    # droce-fwd runs its loop on the main lcore: give it the lcore testpmd forwards on.
    return [os.path.join(build, "apps/droce-fwd/droce-fwd")] + eal_args + ["--vdev", vdev, "--",
            "--duration", str(duration), "--tx-first", str(32 if tx_first else 0), "--stats-period", "1",
            "--mbufs", "16383"]


def parse_testpmd(out):
    rates = [int(x) for x in re.findall(r"Rx-pps:\s+(\d+)", out)]
    rates = [r for r in rates if r > 0]
    # Drop the first (ramp-up) sample when there are enough.
    if len(rates) > 2:
        rates = rates[1:]
    return statistics.median(rates) / 1e6 if rates else 0.0


def parse_droce(out):
    rates = [float(x) for x in re.findall(r"droce-fwd: ([\d.]+) Mpps", out)]
    if len(rates) > 2:
        rates = rates[1:]
    return statistics.median(rates) if rates else 0.0


def run(cmd, duration, sigint):
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return p


def finish(p, duration, sigint):
    try:
        if sigint:
            time.sleep(duration)
            p.send_signal(signal.SIGINT)
        out, _ = p.communicate(timeout=duration + 30)
    except subprocess.TimeoutExpired:
        p.kill()
        out, _ = p.communicate()
    return out


def measure_ring(impl, build, duration):
    args = eal("0,1", 0, f"rf_ring_{impl}_{os.getpid()}")
    if impl == "testpmd":
        p = run(testpmd_cmd(args, "net_ring0", True), duration, True)
        return parse_testpmd(finish(p, duration + 1, True))
    args = eal("1", 1, f"rf_ring_{impl}_{os.getpid()}")
    p = run(droce_cmd(build, args, "net_ring0", True, duration + 1), duration, False)
    return parse_droce(finish(p, duration + 1, False))


def measure_memif(impl, build, duration):
    sock = f"/tmp/droce-rawfwd-{os.getpid()}.sock"
    server_vdev = f"net_memif0,role=server,socket={sock}"
    client_vdev = f"net_memif0,role=client,socket={sock}"
    if impl == "testpmd":
        srv = run(testpmd_cmd(eal("0,1", 0, f"rf_ms_{os.getpid()}"), server_vdev, True), duration, True)
        time.sleep(1.0)
        cli = run(testpmd_cmd(eal("0,1", 1, f"rf_mc_{os.getpid()}"), client_vdev, False), duration, True)
        time.sleep(duration + 1)
        # Stop the client first: killing a memif peer first can upset the other side.
        out_c = finish(cli, 0, True)
        out_s = finish(srv, 0, True)
        del out_c
        return parse_testpmd(out_s)
    srv = run(droce_cmd(build, eal("1", 1, f"rf_ds_{os.getpid()}"), server_vdev, True, duration + 2), duration, False)
    time.sleep(1.0)
    cli = run(droce_cmd(build, eal("0", 0, f"rf_dc_{os.getpid()}"), client_vdev, False, duration + 1), duration, False)
    out_s = finish(srv, duration + 2, False)
    finish(cli, 1, False)
    return parse_droce(out_s)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--duration", type=float, default=4)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", default="")
    ap.add_argument("--topologies", default="ring,memif")
    a = ap.parse_args()
    if not os.path.exists(os.path.join(a.build, "apps/droce-fwd/droce-fwd")):
        sys.exit(f"rawfwd: {a.build}/apps/droce-fwd/droce-fwd not built (run scripts/test.sh or ninja -C {a.build})")
    results = {}
    for topo in a.topologies.split(","):
        fn = {"ring": measure_ring, "memif": measure_memif}[topo]
        samples = {"droce": [], "testpmd": []}
        for r in range(a.repeats):
            for impl in (("droce", "testpmd") if r % 2 == 0 else ("testpmd", "droce")):
                mpps = fn(impl, a.build, a.duration)
                samples[impl].append(mpps)
                print(f"rawfwd: {topo:5s} round {r + 1} {impl:7s} {mpps:8.2f} Mpps", flush=True)
        d, t = statistics.median(samples["droce"]), statistics.median(samples["testpmd"])
        ratio = d / t if t > 0 else 0.0
        results[topo] = {"droce_mpps": d, "testpmd_mpps": t, "ratio": ratio, "samples": samples}
        print(f"rawfwd: {topo}: droce {d:.2f} Mpps vs testpmd io {t:.2f} Mpps -> ratio {ratio:.2f} (target >= 0.9)")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"duration_s": a.duration, "repeats": a.repeats, "results": results}, f, indent=2)
    ok = all(r["ratio"] >= 0.9 for r in results.values())
    print(f"rawfwd: {'all targets met' if ok else 'target missed'}")


if __name__ == "__main__":
    main()
