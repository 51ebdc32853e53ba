#!/usr/bin/env python3
"""Runs droce-gen or droce-perf from Python and hands back their results as dicts.

Standard library only. droce-gen runs with "--stats-json -" (its live feed on stdout, one JSON
object per --interval, then a line with "final": true; everything else it prints goes to stderr)
and "--json FILE" (the end-of-run report); droce-perf with "--json FILE".

    import droce_run
    for line in droce_run.follow_gen(GEN, ["-l", "0", "--no-pci", "--no-huge", "-m", "512"],
                                     ["--duration", "5", "--interval", "0.5"]):
        if not line["final"]:              # interval lines: "interval" (the last "partial")
            print(line["seq"], line["interval"]["goodput_gbps"])
        else:                                                   # the final line, last: "total"
            print(line["seq"], line["total"]["goodput_gbps"])
    res = droce_run.run_gen(GEN, eal, app, on_line=print)      # {"lines", "final", "report"}
    perf = droce_run.run_perf(PERF, eal, app)                  # droce-perf's --json

Each run is its own process group, killed whole (SIGTERM, then SIGKILL) when `timeout` seconds
pass. A non-zero exit raises DroceRunError carrying the exit status, the last stderr lines and,
where the program wrote one, its report; its below_threshold is true when droce-gen's run was
verified but missed --expect-gbps or --expect-p99-us (exit status 3, the report's "expect").
"""
import collections
import json
import os
import signal
import subprocess
import tempfile
import threading

STDERR_TAIL = 20  # stderr lines kept for the error message
GEN_BELOW_THRESHOLD = 3  # droce-gen's exit status for a verified run that missed --expect-gbps/--expect-p99-us
KILL_GRACE_S = 5  # between SIGTERM and SIGKILL


class DroceRunError(RuntimeError):
    """The program failed: exited non-zero, was killed at the timeout, or its output was unreadable."""

    def __init__(self, message, returncode=None, stderr_tail=(), report=None, timed_out=False):
        super().__init__(message)
        self.returncode = returncode
        self.stderr_tail = list(stderr_tail)
        self.report = report
        self.timed_out = timed_out

    @property
    def below_threshold(self):
        """droce-gen ran and verified everything but missed a threshold (report["expect"] says which)."""
        return self.returncode == GEN_BELOW_THRESHOLD


class _Process:
    """One run: the process in its own group, stderr drained on a thread, a timeout that kills."""

    def __init__(self, cmd, timeout):
        self.cmd = cmd
        self.tail = collections.deque(maxlen=STDERR_TAIL)
        self.timed_out = False
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, start_new_session=True, text=True)
        self._reader = threading.Thread(target=self._drain_stderr, daemon=True)
        self._reader.start()
        self._timer = threading.Timer(timeout, self._expire)
        self._timer.daemon = True
        self._timer.start()

    def _drain_stderr(self):
        for line in self.proc.stderr:  # ends at EOF: the process (group) has gone
            self.tail.append(line.rstrip("\n"))

    def _signal_group(self, sig):
        try:
            os.killpg(self.proc.pid, sig)
        except ProcessLookupError:
            pass

    def _expire(self):
        self.timed_out = True
        self._signal_group(signal.SIGTERM)
        try:
            self.proc.wait(KILL_GRACE_S)
        except subprocess.TimeoutExpired:
            self._signal_group(signal.SIGKILL)

    def stdout_lines(self):
        for line in self.proc.stdout:
            yield line

    def finish(self):
        """Waits for the exit (the timer still bounds it); returns the exit status."""
        rc = self.proc.wait()
        self._timer.cancel()
        self._reader.join(KILL_GRACE_S)
        return rc

    def abandon(self):
        """The caller stopped early: end the whole group now."""
        self._timer.cancel()
        if self.proc.poll() is None:
            self._signal_group(signal.SIGKILL)
        self.proc.wait()
        self._reader.join(KILL_GRACE_S)

    def error(self, rc, report=None):
        name = os.path.basename(self.cmd[0])
        if self.timed_out:
            why = "was killed after its timeout"
        elif rc < 0:
            why = "was killed by signal %d" % -rc
        else:
            why = "exited with status %d" % rc
        tail = list(self.tail)
        last = tail[-1] if tail else "(nothing on stderr)"
        return DroceRunError("%s %s: %s" % (name, why, last), rc, tail, report, self.timed_out)


def _command(binary, eal_args, app_args):
    return [str(binary)] + [str(a) for a in eal_args] + ["--"] + [str(a) for a in app_args]


def _read_report(path):
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return None
    return json.loads(text) if text.strip() else None


def follow_gen(binary, eal_args=(), app_args=(), timeout=120.0, result=None):
    """Starts droce-gen and yields each feed line (a dict) as it arrives, the final one last.

    `app_args` must not hold --stats-json or --json (added here). When `result` is a dict, it
    receives "final" (the final feed line) and "report" (the --json report) once the run ends
    well. Raises DroceRunError on a non-zero exit, a timeout, or a run without a final line.
    """
    with tempfile.TemporaryDirectory(prefix="droce_run.") as tmp:
        report_path = os.path.join(tmp, "report.json")
        proc = _Process(_command(binary, eal_args, list(app_args) + ["--stats-json", "-", "--json", report_path]),
                        timeout)
        final = None
        done = False
        try:
            for text in proc.stdout_lines():
                try:
                    line = json.loads(text)
                except ValueError:
                    raise DroceRunError("droce-gen: not a feed line on stdout: %r" % text[:200])
                if line.get("final"):
                    final = line
                yield line
            rc = proc.finish()
            done = True
        finally:
            if not done:
                proc.abandon()
        report = _read_report(report_path)
        if rc != 0 or proc.timed_out:
            raise proc.error(rc, report)
        if final is None or report is None:
            raise DroceRunError("droce-gen exited 0 without a final feed line and report", rc, proc.tail, report)
        if result is not None:
            result["final"] = final
            result["report"] = report


def run_gen(binary, eal_args=(), app_args=(), timeout=120.0, on_line=None):
    """droce-gen to its end: {"lines": every feed line, "final": the last, "report": --json}.

    `on_line` (optional) is called with each feed line as it arrives.
    """
    result = {}
    lines = []
    for line in follow_gen(binary, eal_args, app_args, timeout, result):
        lines.append(line)
        if on_line is not None:
            on_line(line)
    result["lines"] = lines
    return result


def run_perf(binary, eal_args=(), app_args=(), timeout=120.0):
    """droce-perf to its end; returns its --json result. `app_args` must not hold --json."""
    with tempfile.TemporaryDirectory(prefix="droce_run.") as tmp:
        report_path = os.path.join(tmp, "result.json")
        proc = _Process(_command(binary, eal_args, list(app_args) + ["--json", report_path]), timeout)
        try:
            for _ in proc.stdout_lines():  # its text report: read so that the pipe never fills
                pass
            rc = proc.finish()
        except BaseException:
            proc.abandon()
            raise
        report = _read_report(report_path)
        if rc != 0 or proc.timed_out:
            raise proc.error(rc, report)
        if report is None:
            raise DroceRunError("droce-perf exited 0 without its --json result", rc, proc.tail)
        return report
