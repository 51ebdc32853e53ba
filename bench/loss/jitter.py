#!/usr/bin/env python3
"""Scheduling jitter as a busy-polling thread sees it: the gaps in a tight loop that reads the clock.

A poll-mode worker that is descheduled stops answering for the whole gap; to a peer that is a
lost packet. docs/transport.md ("The floor") chooses the adaptive RTO's floor above these gaps.
Prints how many gaps over --min-us came per second and their median, p90, p99, p99.9 and maximum.
Run it alone and beside the load that matters (other builds, `python3 -c "while True: pass"` x2).
"""
import argparse
import os
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=10.0, help="how long to poll (default 10)")
    ap.add_argument("--min-us", type=float, default=50.0, help="the smallest gap counted (default 50 us)")
    a = ap.parse_args()
    clock = time.perf_counter_ns
    limit_ns = int(a.min_us * 1000)
    gaps = []
    start = prev = clock()
    end = start + int(a.seconds * 1e9)
    while prev < end:
        now = clock()
        if now - prev > limit_ns:
            gaps.append(now - prev)
        prev = now
    gaps.sort()

    def q(f):
        return gaps[min(len(gaps) - 1, int(f * len(gaps)))] / 1e6 if gaps else 0.0

    print(f"gaps over {a.min_us:g} us: {len(gaps)} in {a.seconds:g} s ({len(gaps) / a.seconds:.1f}/s); ms: "
          f"median {q(0.5):.2f}  p90 {q(0.9):.2f}  p99 {q(0.99):.2f}  p99.9 {q(0.999):.2f}  max {q(1.0):.2f}")
    print("load average: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
