"""A DPDK telemetry client for the app tests: what dpdk-telemetry.py does, as functions.

EAL's telemetry socket is <runtime dir>/<file prefix>/dpdk_telemetry.v2 (SOCK_SEQPACKET): it greets
with one JSON object, then answers each command with {"<command>": value}; an unknown parameter
gives null.

As a program: telemetry_client.py PREFIX COMMAND... prints each answer as one JSON line.
"""
import glob
import json
import os
import socket
import sys
import time

RUN_DIRS = ("/var/run/dpdk", "/run/user", "/tmp/dpdk", os.environ.get("XDG_RUNTIME_DIR", "/nonexistent"))


def socket_path(prefix, timeout_s=30.0):
    """The telemetry socket of the process with this file prefix, waiting up to timeout_s for it."""
    deadline = time.time() + timeout_s
    while True:
        found = [p for d in RUN_DIRS for p in glob.glob(f"{d}/**/{prefix}/dpdk_telemetry.v2", recursive=True)]
        if found:
            return found[0]
        if time.time() >= deadline:
            raise AssertionError(f"no telemetry socket for prefix {prefix} after {timeout_s} s")
        time.sleep(0.2)


def query(path, cmd):
    """One command's answer (the value under the command's name)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(5)
    try:
        s.connect(path)
        json.loads(s.recv(65536).decode())  # the greeting
        s.send(cmd.encode())
        reply = json.loads(s.recv(1 << 20).decode())
    finally:
        s.close()
    return reply[cmd.split(",")[0]]


def query_when_listening(path, cmd, timeout_s=30.0):
    """One command's answer, whatever it is (null included), retrying only while the socket refuses
    connections: EAL creates the socket file a moment before it listens."""
    deadline = time.time() + timeout_s
    while True:
        try:
            return query(path, cmd)
        except OSError:
            if time.time() >= deadline:
                raise
            time.sleep(0.05)


def wait_until(path, cmd, ok, timeout_s=30.0):
    """Queries cmd until ok(answer) holds (returns the answer) or timeout_s passes (AssertionError).

    A null answer is "not yet": DPDK answers null for a command nobody has registered yet (an app
    registers some once its objects exist) and for a parameter its command refuses (an endpoint
    or port that does not exist yet). ok() only sees real answers."""
    deadline = time.time() + timeout_s
    last = None
    while time.time() < deadline:
        try:
            last = query(path, cmd)
            if last is not None and ok(last):
                return last
        except (OSError, ValueError, KeyError):
            pass  # the process is still starting
        time.sleep(0.2)
    raise AssertionError(f"{cmd}: condition not met in {timeout_s} s; last answer {last}")


if __name__ == "__main__":
    p = socket_path(sys.argv[1])
    for c in sys.argv[2:]:
        print(json.dumps(query(p, c)))
