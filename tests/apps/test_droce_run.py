#!/usr/bin/env python3
"""scripts/droce_run.py against a short loopback droce-gen: the live feed arrives while the run
goes on, in order, its totals only grow, and its final line is the --json report's; failures
raise with the program's own words.

usage: test_droce_run.py DROCE_GEN DROCE_PERF SCRIPTS_DIR
"""
import sys
import time
import unittest

GEN, PERF, SCRIPTS = sys.argv[1:4]
sys.path.insert(0, SCRIPTS)
import droce_run  # noqa: E402

EAL = ["-l", "0", "--no-pci", "--no-huge", "-m", "512"]
APP = ["--op", "write", "--size", "1024", "--qps", "2", "--duration", "2", "--interval", "0.5"]
# The cumulative figures every line carries under "total" (the final line's are the report's).
COUNTS = ["messages", "bytes", "retransmitted_packets", "naks_sent", "naks_received", "rnr_naks", "cnps_sent",
          "cnps_received", "ack_timeouts"]


class FeedTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.arrivals = []
        cls.res = droce_run.run_gen(GEN, EAL, APP, timeout=120,
                                    on_line=lambda line: cls.arrivals.append(time.monotonic()))
        cls.lines = cls.res["lines"]

    def test_interval_lines_arrive_during_the_run(self):
        intervals = [l for l in self.lines if not l["final"]]
        self.assertGreaterEqual(len(intervals), 2, self.lines)
        # The run lasts 2 s after the first line (at 0.5 s) was due, and every line is flushed as it
        # is written: the first came long before the last, not all at the end. (A reader starved for
        # a second on a loaded host narrows the gap; 0.25 s still tells live from batched.)
        self.assertGreater(self.arrivals[-1] - self.arrivals[0], 0.25)
        for l in intervals:
            self.assertGreater(l["interval_s"], 0)
            self.assertEqual(len(l["qps"]), 2)
            self.assertIn("goodput_gbps", l["interval"])

    def test_sequence_numbers_increase(self):
        self.assertEqual([l["seq"] for l in self.lines], list(range(len(self.lines))))
        self.assertEqual([l["final"] for l in self.lines], [False] * (len(self.lines) - 1) + [True])

    def test_totals_never_decrease(self):
        for key in COUNTS:
            seen = [l["total"][key] for l in self.lines]
            self.assertEqual(seen, sorted(seen), key)
        self.assertGreater(self.lines[-1]["total"]["messages"], 0)

    def test_final_line_is_the_report(self):
        final, report = self.res["final"], self.res["report"]
        self.assertIs(final, self.lines[-1])
        for key in COUNTS + ["goodput_gbps", "msg_rate_mps", "duration_s", "errors", "lost"]:
            self.assertEqual(final["total"][key], report[key], key)
        self.assertEqual(final["problem"], "")
        self.assertEqual(sum(m for m, _ in final["qps"]), report["messages"])


class FailureTest(unittest.TestCase):
    def test_bad_flag_raises_with_the_error_line(self):
        with self.assertRaises(droce_run.DroceRunError) as cm:
            droce_run.run_gen(GEN, EAL, ["--no-such-flag"], timeout=60)
        self.assertEqual(cm.exception.returncode, 2)
        self.assertIn("unknown option", str(cm.exception))
        self.assertEqual(len(cm.exception.stderr_tail), 1, cm.exception.stderr_tail)

    def test_missed_threshold_raises_below_threshold_with_the_verdict(self):
        with self.assertRaises(droce_run.DroceRunError) as cm:
            droce_run.run_gen(GEN, EAL, ["--count", "500", "--expect-gbps", "100000"], timeout=120)
        self.assertEqual(cm.exception.returncode, droce_run.GEN_BELOW_THRESHOLD)
        self.assertTrue(cm.exception.below_threshold)
        self.assertEqual(cm.exception.report["expect"]["verdict"], "fail")
        self.assertEqual(cm.exception.report["messages"], 500)

    def test_bad_interval_raises(self):
        with self.assertRaises(droce_run.DroceRunError) as cm:
            droce_run.run_gen(GEN, EAL, ["--interval", "0"], timeout=60)
        self.assertIn("--interval", str(cm.exception))

    def test_timeout_kills_the_run(self):
        with self.assertRaises(droce_run.DroceRunError) as cm:
            droce_run.run_gen(GEN, EAL, ["--duration", "600"], timeout=3)
        self.assertTrue(cm.exception.timed_out)

    def test_perf_bad_flag_raises(self):
        with self.assertRaises(droce_run.DroceRunError) as cm:
            droce_run.run_perf(PERF, [], ["write_bw", "--no-such-flag"], timeout=60)
        self.assertEqual(cm.exception.returncode, 2)
        self.assertIn("unknown option", str(cm.exception))


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
