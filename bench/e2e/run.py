#!/usr/bin/python3
"""End to end: droce against dpdk-testpmd on the same PMD, a bare-PMD ping-pong and kernel UDP,
all in one run, for 64 B, 1 KiB, 4 KiB and 64 KiB messages.

Measured (every item REPEATS times, rounds interleaved so that noise spreads evenly; medians):
  droce       droce-gen RC SEND and WRITE goodput/message rate at PMTU 4096: loopback (one process,
              net_ring, one lcore) and client/server over net_memif (two processes, one CPU each);
              with 4 KiB in --sizes also 4 KiB WRITE at PMTU 1024 over memif (every byte verified);
              droce-echo RTT (loopback and memif).
  testpmd     txonly -> rxonly streaming on memif (two processes, one CPU each): the headline
              ceiling, at droce's own frame sizes (droce_frame(): 126 B for a 64 B SEND, 1082 B for
              a PMTU-1024 WRITE middle frame) and at each size's secondary frame below.
              Secondary: io forwarding with frames bouncing (--tx-first) on memif (two processes)
              and on two net_ring loopback ports (one forwarding lcore), at a WRITE first frame
              (Ethernet, IPv4, UDP, BTH, RETH, ICRC: payload + 74 B) carrying min(size, 4096) B:
              4170 B, multi-segment on memif, for 4 KiB and 64 KiB (64 KiB messages are sixteen
              PMTU-4096 frames for droce, so their per-byte goodput is compared with those).
  pmd         bench/e2e/pmd_pingpong: the same frames bounced with bare rx/tx bursts (ring, memif).
  kernel      bench/e2e/udp_blaster and udp_pingpong (blocking and busy-poll) over a veth pair
              between two network namespaces created here and deleted on exit (needs root).
              64 KiB becomes 65507 B, the largest IPv4 UDP datagram.

droce's frames (droce_frame()): droce-gen posts SEND and WRITE with immediate data, so a message is
SEND_ONLY_IMM or SEND_FIRST, SEND_MIDDLE..., SEND_LAST_IMM (ImmDt 4 B on only/last), and
WRITE_ONLY_IMM or WRITE_FIRST, WRITE_MIDDLE..., WRITE_LAST_IMM (RETH 16 B on first/only, ImmDt on
only/last); every frame is untagged Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + those + payload + pad to
4 + ICRC 4 (no FCS).

Targets (issue 14; printed as ratios with PASS/MISS, the headline first):
  headline, against the one-way stream (testpmd txonly -> rxonly over memif):
  RC SEND 64 B message rate          >= 0.5 x the stream's packet rate at 126-B frames
  RC WRITE 4 KiB goodput, PMTU 1024  >= 0.4 x the payload the stream carries at 1082-B frames
                                        (stream pps x 1024 B x 8)
  64 B RTT p50 (droce-echo memif)    <= 1.5 x the bare PMD ping-pong on memif
  secondary (printed, not the goal):
  RC WRITE 4 KiB goodput, PMTU 4096  >= 0.8 x testpmd io-bounce bytes/s on memif (4170-B frames)
  RC SEND 64 B message rate          >= 0.5 x testpmd io-bounce packet rate on memif (138-B frames)
  64 B RTT p50 (droce-echo memif)    10 x lower than kernel UDP ping-pong (blocking and busy-poll)
The headline items run when --sizes has 64 (SEND, 126-B stream, RTT) and 4096 (WRITE PMTU 1024,
1082-B stream); the default sizes and --quick have both.

Writes RESULTS_DIR/e2e.json and RESULTS_DIR/e2e.png.
"""
import argparse
import atexit
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

TESTPMD = "dpdk-testpmd"
# droce's headers (untagged Ethernet, IPv4; /work/shared/ROCEV2.md "Frame"); no FCS on the wire count.
ETH, IPV4, UDP, BTH, RETH, IMMDT, ICRC = 14, 20, 8, 12, 16, 4, 4
PMTU = 4096                 # droce-gen --mtu of the per-size items
# Issue 14's headline targets: their messages and the PMTU of the WRITE goodput target.
TARGET_SEND_SIZE, TARGET_WRITE_SIZE, TARGET_WRITE_PMTU = 64, 4096, 1024
TARGET_SEND_RATIO, TARGET_WRITE_RATIO, TARGET_RTT_RATIO = 0.5, 0.4, 1.5
UDP_MAX = 65507
# Two-process runs: one CPU each; one-process runs use SERVER_CPU (testpmd's main lcore on CLIENT_CPU).
SERVER_CPU, CLIENT_CPU = 1, 0   # --cpus CLIENT,SERVER

TMP = ""  # scratch directory for sockets and JSON, made by main() and removed at exit
# run.sh passes its PID so that its exit trap can delete exactly these namespaces.
NETNS_TAG = os.environ.get("E2E_NETNS_TAG", str(os.getpid()))
NETNS = [f"droce-e2e-a{NETNS_TAG}", f"droce-e2e-b{NETNS_TAG}"]
VETH_ADDR = ["10.231.0.1", "10.231.0.2"]
_children = []
_counter = [0]


def log(msg):
    print(f"e2e: {msg}", flush=True)


def serial():
    _counter[0] += 1
    return _counter[0]


# ---------------------------------------------------------------- processes

def start(cmd, netns=None):
    if netns:
        cmd = ["ip", "netns", "exec", netns] + cmd
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         start_new_session=True)
    _children.append(p)
    return p


def memif_listening(path):
    """net_memif's socket is abstract by default (no file): look for it in /proc/net/unix."""
    try:
        with open("/proc/net/unix") as f:
            return any(line.rstrip().endswith(("@" + path, " " + path)) for line in f)
    except OSError:
        return False


def wait_for_socket(path, proc, timeout=10.0):
    """Until the memif server listens (a loaded machine can take seconds), it exits, or the timeout
    passes; the client started after this finds the server listening."""
    end = time.time() + timeout
    while time.time() < end and not memif_listening(path) and proc.poll() is None:
        time.sleep(0.05)
    time.sleep(0.1)


def finish(p, timeout, sigint_after=None):
    """Waits for p (SIGINT first when sigint_after seconds are given); kills it past the timeout."""
    try:
        if sigint_after is not None:
            try:
                out, _ = p.communicate(timeout=sigint_after)
                return out, p.returncode
            except subprocess.TimeoutExpired:
                p.send_signal(signal.SIGINT)
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, _ = p.communicate()
        out += "\n[killed after timeout]"
    if p in _children:
        _children.remove(p)
    return out, p.returncode


def kill_children():
    for p in list(_children):
        if p.poll() is None:
            p.kill()
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
    _children.clear()


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def tail(out, n=4):
    return " | ".join(out.strip().splitlines()[-n:])


# ---------------------------------------------------------------- machine

def hugepages_available():
    try:
        free = int(re.search(r"HugePages_Free:\s+(\d+)", open("/proc/meminfo").read()).group(1))
        return free > 0 and "hugetlbfs" in open("/proc/mounts").read()
    except (OSError, AttributeError):
        return False


def machine():
    cpu = "unknown"
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    dpdk = subprocess.run(["pkg-config", "--modversion", "libdpdk"], capture_output=True, text=True).stdout.strip()
    return {"cpu_model": cpu, "cores": os.cpu_count(), "kernel": platform.release(), "dpdk_version": dpdk,
            "hugepages": hugepages_available(), "python": platform.python_version()}


def loadavg():
    return [float(x) for x in open("/proc/loadavg").read().split()[:3]]


# ---------------------------------------------------------------- droce

def droce_eal(lcore, vdev=None):
    # droce's Eal adds --no-huge (no hugepages) or a per-process --file-prefix by itself.
    a = ["-l", str(lcore), "--no-pci"]
    return a + (["--vdev", vdev] if vdev else [])


def gen_args(op, size, cfg, mtu=PMTU):
    return ["--op", op, "--size", str(size), "--mtu", str(mtu), "--inflight", str(cfg.inflight), "--quiet"]


def gen_result(j):
    return {"goodput_gbps": j["goodput_gbps"], "msg_rate_mps": j["msg_rate_mps"],
            "latency_p50_ns": j["latency_ns"]["p50"], "latency_p99_ns": j["latency_ns"]["p99"]}


def echo_result(j):
    return {"rtt_p50_ns": j["rtt_ns"]["p50"], "rtt_p99_ns": j["rtt_ns"]["p99"], "round_trips": j["round_trips"]}


def run_one(label, binary, app_args, timeout):
    """One process on SERVER_CPU (both ends in it); its --json report, or RuntimeError."""
    js = os.path.join(TMP, f"run{serial()}.json")
    out, rc = finish(start([binary] + droce_eal(SERVER_CPU) + ["--"] + app_args + ["--json", js]), timeout)
    j = read_json(js)
    if rc != 0 or j is None:
        raise RuntimeError(f"{label}: rc {rc}: {tail(out)}")
    return j


def run_memif_pair(label, binary, server_args, client_args, timeout, sigint_after):
    """Server and client processes of `binary` over one memif socket, each on its own CPU; the
    client's --json report, or RuntimeError with both ends' last lines. The server is stopped
    with SIGINT `sigint_after` seconds after the client ended, if still running."""
    n = serial()
    sock, js = os.path.join(TMP, f"pair{n}.sock"), os.path.join(TMP, f"pair{n}.json")
    srv = start([binary] + droce_eal(SERVER_CPU, f"net_memif0,role=server,socket={sock}") + ["--"] + server_args)
    wait_for_socket(sock, srv)
    cli = start([binary] + droce_eal(CLIENT_CPU, f"net_memif0,role=client,socket={sock}") + ["--"] + client_args +
                ["--json", js])
    out_c, rc_c = finish(cli, timeout)
    out_s, _ = finish(srv, 15, sigint_after=sigint_after)
    j = read_json(js)
    if rc_c != 0 or j is None:
        raise RuntimeError(f"{label}: rc {rc_c}: {tail(out_c)} / server: {tail(out_s, 2)}")
    return j


def oob_port(base):
    return str(base + serial() % 2000)


def droce_gen_loopback(cfg, op, size):
    return gen_result(run_one(f"droce-gen loopback {op} {size}", cfg.gen,
                              ["--mode", "loopback", "--duration", str(cfg.duration), "--warmup", str(cfg.warmup)] +
                              gen_args(op, size, cfg), cfg.duration + cfg.warmup + 30))


def droce_gen_memif(cfg, op, size, mtu=PMTU):
    common = gen_args(op, size, cfg, mtu) + ["--oob-port", oob_port(19000), "--connect-timeout", "10"]
    return gen_result(run_memif_pair(f"droce-gen memif {op} {size} mtu {mtu}", cfg.gen, ["--mode", "server"] + common,
                                     ["--mode", "client", "--duration", str(cfg.duration), "--warmup", str(cfg.warmup)] +
                                     common, cfg.duration + cfg.warmup + 40, sigint_after=5))


def droce_echo_loopback(cfg, size):
    return echo_result(run_one(f"droce-echo loopback {size}", cfg.echo,
                               ["--mode", "loopback", "--size", str(size), "--count", str(cfg.rtt_count),
                                "--warmup", "500", "--timeout", "5"], 120))


def droce_echo_memif(cfg, size):
    port = oob_port(21000)
    return echo_result(run_memif_pair(f"droce-echo memif {size}", cfg.echo,
                                      ["--mode", "server", "--oob-port", port, "--timeout", "3"],
                                      ["--mode", "client", "--oob-port", port, "--size", str(size),
                                       "--count", str(cfg.rtt_count), "--warmup", "500", "--timeout", "5"],
                                      120, sigint_after=1))


# ---------------------------------------------------------------- bare PMD ping-pong

def pmd_pingpong_ring(cfg, size):
    return echo_result(run_one(f"pmd_pingpong ring {size}", cfg.pingpong,
                               ["--mode", "ring", "--size", str(size), "--count", str(cfg.rtt_count), "--timeout", "5"],
                               120))


def pmd_pingpong_memif(cfg, size):
    return echo_result(run_memif_pair(f"pmd_pingpong memif {size}", cfg.pingpong,
                                      ["--mode", "server", "--timeout", "5"],
                                      ["--mode", "client", "--size", str(size), "--count", str(cfg.rtt_count),
                                       "--timeout", "5"], 120, sigint_after=0.5))


# ---------------------------------------------------------------- testpmd

FRAME_POSITIONS = ("only", "first", "middle", "last")


def droce_frame(op, payload, pmtu, position):
    """Bytes on the wire (Ethernet header to ICRC) of one frame of a droce-gen `op` message
    ('send' or 'write') carrying `payload` bytes at `position` (only/first/middle/last).
    droce-gen posts both with immediate data (apps/droce-gen/job.cc), so droce's requester sends
    SEND_ONLY_IMM / SEND_FIRST / SEND_MIDDLE / SEND_LAST_IMM and WRITE_ONLY_IMM / WRITE_FIRST /
    WRITE_MIDDLE / WRITE_LAST_IMM: ImmDt on only and last, RETH on a WRITE's first and only frame.
    FIRST and MIDDLE carry exactly one PMTU, ONLY and LAST 1..PMTU; the payload is padded to a
    multiple of 4 (BTH PadCnt)."""
    if op not in ("send", "write") or position not in FRAME_POSITIONS:
        raise ValueError(f"droce_frame: op send|write and position {'|'.join(FRAME_POSITIONS)}")
    full = position in ("first", "middle")
    if not 1 <= payload <= pmtu or (full and payload != pmtu):
        raise ValueError(f"droce_frame: {payload} B cannot be a {position} frame at PMTU {pmtu}")
    ext = (IMMDT if position in ("only", "last") else 0) + \
        (RETH if op == "write" and position in ("only", "first") else 0)
    return ETH + IPV4 + UDP + BTH + ext + payload + (-payload) % 4 + ICRC


def message_frames(op, size, pmtu):
    """droce's frames for one `op` message of `size` bytes at `pmtu`, in order."""
    if size <= pmtu:
        return [droce_frame(op, size, pmtu, "only")]
    n = -(-size // pmtu)
    return ([droce_frame(op, pmtu, pmtu, "first")] + [droce_frame(op, pmtu, pmtu, "middle")] * (n - 2) +
            [droce_frame(op, size - (n - 1) * pmtu, pmtu, "last")])


def send_target_frame():
    """The headline SEND target's stream frame: the 64 B SEND's own (only) frame, 126 B."""
    return droce_frame("send", TARGET_SEND_SIZE, PMTU, "only")


def write_target_frame():
    """The headline WRITE target's stream frame: a PMTU-1024 WRITE middle frame, 1082 B, carrying
    TARGET_WRITE_PMTU bytes of payload (most of a long WRITE's frames are middle frames)."""
    return droce_frame("write", TARGET_WRITE_PMTU, TARGET_WRITE_PMTU, "middle")


def frame_bytes(size):
    """The secondary baselines' frame for a message size: a WRITE first frame (RETH, no ImmDt:
    payload + 74 B) carrying min(size, PMTU), the frame the io-bounce and ring rows have always
    used (138 B for 64 B, 4170 B for 4 KiB and above), so that earlier results files stay comparable."""
    return droce_frame("write", PMTU, PMTU, "first") - PMTU + min(size, PMTU)


def txpkts(frame):
    # Segments of at most 2048 B (the default mbuf data room): 4170 B is 2048 + 2048 + 74.
    segs = []
    while frame > 0:
        segs.append(min(frame, 2048))
        frame -= segs[-1]
    return ",".join(str(s) for s in segs)


def testpmd_eal(lcores, main_lcore, prefix):
    mem = ["--file-prefix", prefix] if hugepages_available() else ["--no-huge", "-m", "512", "--no-shconf"]
    return ["-l", lcores, "--main-lcore", str(main_lcore), "--no-pci", "--log-level", "*:error"] + mem


def testpmd_cmd(eal, vdevs, mode, frame, tx_first):
    cmd = [TESTPMD] + eal
    for v in vdevs:
        cmd += ["--vdev", v]
    cmd += ["--", f"--forward-mode={mode}", "--nb-cores=1", "--stats-period", "1", "--total-num-mbufs=32768",
            "--burst=32", "--mbuf-size=2176", f"--txpkts={txpkts(frame)}"]
    if tx_first:
        cmd.append("--tx-first")
    return cmd


def parse_testpmd(out, ports=None):
    """Median over the stats periods (first dropped) of the summed Rx-pps of `ports` (all if None)."""
    rates = []
    for block in out.split("Port statistics")[1:]:
        per_port = re.findall(r"Rx-pps:\s+(\d+)", block)
        vals = [int(v) for i, v in enumerate(per_port) if ports is None or i in ports]
        if vals and sum(vals) > 0:
            rates.append(sum(vals))
    if len(rates) > 2:
        rates = rates[1:]
    return statistics.median(rates) / 1e6 if rates else 0.0


def testpmd_memif(cfg, frame, mode):
    """`frame`-byte frames. mode 'io': frames bounce (both forward; the client injects --tx-first
    once its link is up, the server already forwarding), rate at the server's RX.
    mode 'stream': server txonly -> client rxonly, rate at the client's RX."""
    n = serial()
    sock = os.path.join(TMP, f"tp{n}.sock")
    srv_mode, cli_mode = ("io", "io") if mode == "io" else ("txonly", "rxonly")
    srv = start(testpmd_cmd(testpmd_eal(f"{CLIENT_CPU},{SERVER_CPU}", CLIENT_CPU, f"e2e_ts{os.getpid()}_{n}"),
                            [f"net_memif0,role=server,socket={sock}"], srv_mode, frame, False))
    wait_for_socket(sock, srv)
    cli = start(testpmd_cmd(testpmd_eal(f"{CLIENT_CPU},{SERVER_CPU}", SERVER_CPU, f"e2e_tc{os.getpid()}_{n}"),
                            [f"net_memif0,role=client,socket={sock}"], cli_mode, frame, mode == "io"))
    time.sleep(cfg.duration + cfg.warmup + 1.5)
    # Stop the client first: killing a memif peer first can upset the other side.
    out_c, _ = finish(cli, 15, sigint_after=0)
    out_s, _ = finish(srv, 15, sigint_after=0)
    # io: both sides see the same rate; the server's, or the client's if the server's is missing.
    mpps = (parse_testpmd(out_s) or parse_testpmd(out_c)) if mode == "io" else parse_testpmd(out_c)
    if mpps <= 0:
        raise RuntimeError(f"testpmd memif {mode} {frame} B: no rate: {tail(out_s, 3)} / {tail(out_c, 3)}")
    return {"frame_bytes": frame, "mpps": mpps, "gbps": mpps * frame * 8 / 1e3}


def testpmd_ring(cfg, frame):
    """Two net_ring loopback ports (each port's TX ring is its RX ring), io forwarding between them
    on one lcore with --tx-first: every frame moved is one rx and one tx, as droce's loopback."""
    n = serial()
    cmd = testpmd_cmd(testpmd_eal(f"{CLIENT_CPU},{SERVER_CPU}", CLIENT_CPU, f"e2e_tr{os.getpid()}_{n}"),
                      ["net_ring0", "net_ring1"], "io", frame, True)
    p = start(cmd)
    out, _ = finish(p, 15, sigint_after=cfg.duration + cfg.warmup + 1.5)
    mpps = parse_testpmd(out)
    if mpps <= 0:
        raise RuntimeError(f"testpmd ring {frame} B: no rate: {tail(out, 3)}")
    return {"frame_bytes": frame, "mpps": mpps, "gbps": mpps * frame * 8 / 1e3}


# ---------------------------------------------------------------- kernel UDP over veth

def ip(*args, check=True):
    r = subprocess.run(["ip"] + list(args), capture_output=True, text=True, timeout=20)
    if check and r.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {r.stderr.strip()}")


def netns_up():
    netns_down()
    ip("netns", "add", NETNS[0])
    ip("netns", "add", NETNS[1])
    va, vb = f"e2ea{os.getpid() % 100000}", f"e2eb{os.getpid() % 100000}"
    ip("link", "add", va, "type", "veth", "peer", "name", vb)
    for i, v in enumerate((va, vb)):
        ip("link", "set", v, "netns", NETNS[i])
        ip("-n", NETNS[i], "addr", "add", f"{VETH_ADDR[i]}/24", "dev", v)
        ip("-n", NETNS[i], "link", "set", v, "up")
        ip("-n", NETNS[i], "link", "set", "lo", "up")


def netns_down():
    # Deleting a namespace deletes its veth end, and the pair with it.
    for ns in NETNS:
        ip("netns", "del", ns, check=False)


def udp_size(size):
    return min(size, UDP_MAX)


def kernel_blast(cfg, size):
    n = serial()
    js = os.path.join(TMP, f"ub{n}.json")
    port = str(9400 + n % 500)
    rcv = start(["taskset", "-c", str(SERVER_CPU), cfg.blaster, "--role", "recv", "--addr", VETH_ADDR[1], "--port", port,
                 "--size", str(udp_size(size)), "--idle", "0.5", "--timeout", "10", "--json", js], NETNS[1])
    time.sleep(0.3)
    snd = start(["taskset", "-c", str(CLIENT_CPU), cfg.blaster, "--role", "send", "--addr", VETH_ADDR[1], "--port", port,
                 "--size", str(udp_size(size)), "--duration", str(cfg.duration)], NETNS[0])
    out_s, _ = finish(snd, cfg.duration + 20)
    out_r, rc = finish(rcv, 20)
    j = read_json(js)
    if rc != 0 or j is None:
        raise RuntimeError(f"udp_blaster {size}: rc {rc}: {tail(out_r)} / sender: {tail(out_s, 1)}")
    return {"msg_rate_mps": j["msg_rate_mps"], "goodput_gbps": j["goodput_gbps"], "datagram_bytes": udp_size(size)}


def kernel_pingpong(cfg, size, busy):
    n = serial()
    js = os.path.join(TMP, f"up{n}.json")
    port = str(10400 + n % 500)
    extra = ["--busy-poll"] if busy else []
    srv = start(["taskset", "-c", str(SERVER_CPU), cfg.udp_pingpong, "--role", "server", "--addr", VETH_ADDR[1],
                 "--port", port, "--timeout", "5"] + extra, NETNS[1])
    time.sleep(0.3)
    cli = start(["taskset", "-c", str(CLIENT_CPU), cfg.udp_pingpong, "--role", "client", "--addr", VETH_ADDR[1],
                 "--port", port, "--size", str(udp_size(size)), "--count", str(cfg.rtt_count), "--warmup", "200",
                 "--timeout", "1", "--json", js] + extra, NETNS[0])
    out_c, rc = finish(cli, 120)
    finish(srv, 10, sigint_after=2)
    j = read_json(js)
    if rc != 0 or j is None:
        raise RuntimeError(f"udp_pingpong {'busy' if busy else 'blocking'} {size}: rc {rc}: {tail(out_c)}")
    return echo_result(j)


# ---------------------------------------------------------------- plan, targets, output

def write_target_key():
    return f"droce.memif.write.{TARGET_WRITE_SIZE}.pmtu{TARGET_WRITE_PMTU}"


def plan(cfg):
    items = []
    streams_done, frames_done = set(), set()

    def stream(frame):
        if frame not in streams_done:
            streams_done.add(frame)
            items.append((f"testpmd.memif.stream.{frame}", lambda: testpmd_memif(cfg, frame, "stream")))

    for s in cfg.sizes:
        if "droce" in cfg.parts:
            for op in ("send", "write"):
                items.append((f"droce.loopback.{op}.{s}", lambda s=s, op=op: droce_gen_loopback(cfg, op, s)))
                items.append((f"droce.memif.{op}.{s}", lambda s=s, op=op: droce_gen_memif(cfg, op, s)))
            if s == TARGET_WRITE_SIZE:
                items.append((write_target_key(),
                              lambda: droce_gen_memif(cfg, "write", TARGET_WRITE_SIZE, TARGET_WRITE_PMTU)))
            items.append((f"droce.rtt.loopback.{s}", lambda s=s: droce_echo_loopback(cfg, s)))
            items.append((f"droce.rtt.memif.{s}", lambda s=s: droce_echo_memif(cfg, s)))
        if "testpmd" in cfg.parts:
            # The headline ceilings first: the one-way stream at droce's own frames.
            if s == TARGET_SEND_SIZE:
                stream(send_target_frame())
            if s == TARGET_WRITE_SIZE:
                stream(write_target_frame())
            f = frame_bytes(s)
            if f not in frames_done:
                frames_done.add(f)
                items.append((f"testpmd.memif.io.{f}", lambda f=f: testpmd_memif(cfg, f, "io")))
                stream(f)
                items.append((f"testpmd.ring.io.{f}", lambda f=f: testpmd_ring(cfg, f)))
        if "pmd" in cfg.parts:
            items.append((f"pmd.rtt.ring.{s}", lambda s=s: pmd_pingpong_ring(cfg, s)))
            items.append((f"pmd.rtt.memif.{s}", lambda s=s: pmd_pingpong_memif(cfg, s)))
        if "kernel" in cfg.parts:
            items.append((f"kernel.blast.{s}", lambda s=s: kernel_blast(cfg, s)))
            items.append((f"kernel.rtt.blocking.{s}", lambda s=s: kernel_pingpong(cfg, s, False)))
            items.append((f"kernel.rtt.busy.{s}", lambda s=s: kernel_pingpong(cfg, s, True)))
    return items


def median_of(samples):
    """Per-field medians of a list of result dicts."""
    if not samples:
        return None
    out = {}
    for k, v in samples[0].items():
        if isinstance(v, (int, float)):
            out[k] = statistics.median(s[k] for s in samples)
        else:
            out[k] = v
    return out


def get(res, key, field):
    r = res.get(key)
    return None if r is None else r.get(field)


def targets(res):
    """Issue 14's targets, the headline (against the one-way stream and the bare PMD) first; the
    io-bounce and kernel-UDP comparisons follow as secondary."""
    t = []

    def add(tier, name, value, ref, op, limit, note):
        ratio = None if value is None or ref in (None, 0) or value == 0 else value / ref
        ok = None if ratio is None else (ratio >= limit if op == ">=" else ratio <= limit)
        t.append({"tier": tier, "target": name, "droce": value, "baseline": ref, "ratio": ratio,
                  "limit": f"{op} {limit}", "verdict": "n/a" if ok is None else ("PASS" if ok else "MISS"),
                  "note": note})

    fs, fw = send_target_frame(), write_target_frame()
    stream_w = get(res, f"testpmd.memif.stream.{fw}", "mpps")
    add("headline", f"RC SEND {TARGET_SEND_SIZE} B message rate vs stream packet rate (memif)",
        get(res, f"droce.memif.send.{TARGET_SEND_SIZE}", "msg_rate_mps"),
        get(res, f"testpmd.memif.stream.{fs}", "mpps"), ">=", TARGET_SEND_RATIO,
        f"M/s; testpmd txonly -> rxonly at {fs}-B frames (droce's)")
    add("headline", f"RC WRITE {TARGET_WRITE_SIZE // 1024} KiB PMTU {TARGET_WRITE_PMTU} goodput vs stream payload",
        get(res, write_target_key(), "goodput_gbps"),
        None if stream_w is None else stream_w * TARGET_WRITE_PMTU * 8 / 1e3, ">=", TARGET_WRITE_RATIO,
        f"Gb/s; stream pps at {fw}-B frames x {TARGET_WRITE_PMTU} B")
    rtt = get(res, f"droce.rtt.memif.{TARGET_SEND_SIZE}", "rtt_p50_ns")
    add("headline", f"{TARGET_SEND_SIZE} B RTT p50 vs bare PMD ping-pong (memif)", rtt,
        get(res, f"pmd.rtt.memif.{TARGET_SEND_SIZE}", "rtt_p50_ns"), "<=", TARGET_RTT_RATIO, "ns")
    f4k, f64 = frame_bytes(4096), frame_bytes(64)
    add("secondary", "RC WRITE 4 KiB goodput vs testpmd io bytes/s (memif)",
        get(res, "droce.memif.write.4096", "goodput_gbps"), get(res, f"testpmd.memif.io.{f4k}", "gbps"), ">=", 0.8,
        f"Gb/s; PMTU {PMTU}; testpmd bounce at {f4k}-B frames, all frame bytes")
    add("secondary", "RC SEND 64 B message rate vs testpmd io packet rate (memif)",
        get(res, "droce.memif.send.64", "msg_rate_mps"), get(res, f"testpmd.memif.io.{f64}", "mpps"), ">=", 0.5,
        f"M/s; testpmd bounce at {f64}-B frames")
    for mode in ("blocking", "busy"):
        add("secondary", f"64 B RTT p50 vs kernel UDP ping-pong, {mode} (veth)", rtt,
            get(res, f"kernel.rtt.{mode}.64", "rtt_p50_ns"), "<=", 0.1, "ns; 10x lower is a ratio <= 0.1")
    return t


def print_targets(tg):
    def fmt(v, spec="{:.3g}"):
        return "-" if v is None else spec.format(v)

    def line(t):
        print(f"  {t['verdict']:4s}  {t['target']:60s} ratio {fmt(t['ratio'], '{:.3f}'):>7} (want {t['limit']})"
              f"  droce {fmt(t['droce'])} vs {fmt(t['baseline'])} {t['note']}")

    head = [t for t in tg if t.get("tier") == "headline"]
    rest = [t for t in tg if t.get("tier") != "headline"]
    if head:
        print("\ntargets (issue 14: the one-way stream txonly -> rxonly is the ceiling)")
        for t in head:
            line(t)
        print("secondary baselines (testpmd io bounce, kernel UDP)")
    else:
        print("\ntargets (as recorded: this results file predates issue 14's stream targets)")
    for t in rest:
        line(t)


def print_tables(res, tg, sizes):
    def fmt(v, spec="{:.3g}"):
        return "-" if v is None else spec.format(v)

    print("\nthroughput (medians)        " + "".join(f"{s:>14}" for s in sizes))
    rows = [("droce loopback WRITE Gb/s", "droce.loopback.write.{s}", "goodput_gbps"),
            ("droce loopback SEND  Mmsg/s", "droce.loopback.send.{s}", "msg_rate_mps"),
            ("droce memif WRITE Gb/s", "droce.memif.write.{s}", "goodput_gbps"),
            ("droce memif WRITE Mmsg/s", "droce.memif.write.{s}", "msg_rate_mps"),
            ("droce memif SEND Gb/s", "droce.memif.send.{s}", "goodput_gbps"),
            ("droce memif SEND Mmsg/s", "droce.memif.send.{s}", "msg_rate_mps"),
            ("testpmd memif io Gb/s", "testpmd.memif.io.{f}", "gbps"),
            ("testpmd memif io Mpps", "testpmd.memif.io.{f}", "mpps"),
            ("testpmd memif stream Mpps", "testpmd.memif.stream.{f}", "mpps"),
            ("testpmd ring io Gb/s", "testpmd.ring.io.{f}", "gbps"),
            ("testpmd ring io Mpps", "testpmd.ring.io.{f}", "mpps"),
            ("kernel UDP Gb/s", "kernel.blast.{s}", "goodput_gbps"),
            ("kernel UDP Mmsg/s", "kernel.blast.{s}", "msg_rate_mps")]
    for label, key, field in rows:
        print(f"{label:28s}" + "".join(f"{fmt(get(res, key.format(s=s, f=frame_bytes(s)), field)):>14}" for s in sizes))
    print("(testpmd rows: frames of " + ", ".join(f"{frame_bytes(s)} B" for s in sizes) +
          ": payload + 74 B, a WRITE first frame, at most one PMTU-4096 frame)")
    print("\nRTT p50 / p99 us            " + "".join(f"{s:>14}" for s in sizes))
    for label, key in (("droce-echo loopback", "droce.rtt.loopback.{s}"), ("droce-echo memif", "droce.rtt.memif.{s}"),
                       ("pmd ping-pong ring", "pmd.rtt.ring.{s}"), ("pmd ping-pong memif", "pmd.rtt.memif.{s}"),
                       ("kernel UDP blocking", "kernel.rtt.blocking.{s}"), ("kernel UDP busy-poll", "kernel.rtt.busy.{s}")):
        cells = []
        for s in sizes:
            a, b = get(res, key.format(s=s), "rtt_p50_ns"), get(res, key.format(s=s), "rtt_p99_ns")
            cells.append("-" if a is None else f"{a / 1e3:.1f}/{b / 1e3:.1f}")
        print(f"{label:28s}" + "".join(f"{c:>14}" for c in cells))
    fw = write_target_frame()
    stream_w = get(res, f"testpmd.memif.stream.{fw}", "mpps")
    print("\nstream ceiling at droce's frames (issue 14)")
    for label, v in ((f"droce memif SEND {TARGET_SEND_SIZE} B Mmsg/s", get(res, f"droce.memif.send.{TARGET_SEND_SIZE}",
                                                                           "msg_rate_mps")),
                     (f"testpmd memif stream {send_target_frame()} B Mpps",
                      get(res, f"testpmd.memif.stream.{send_target_frame()}", "mpps")),
                     (f"droce memif WRITE {TARGET_WRITE_SIZE} B PMTU {TARGET_WRITE_PMTU} Gb/s",
                      get(res, write_target_key(), "goodput_gbps")),
                     (f"droce memif WRITE {TARGET_WRITE_SIZE} B PMTU {TARGET_WRITE_PMTU} Mmsg/s",
                      get(res, write_target_key(), "msg_rate_mps")),
                     (f"testpmd memif stream {fw} B Mpps", stream_w),
                     (f"  = payload Gb/s at {TARGET_WRITE_PMTU} B per frame",
                      None if stream_w is None else stream_w * TARGET_WRITE_PMTU * 8 / 1e3)):
        print(f"  {label:44s}{fmt(v):>10}")
    print_targets(tg)


def plot(res, tg, sizes, path):
    """Draws e2e.png when matplotlib is installed (Debian: python3-matplotlib); the tables and the
    JSON never need it."""
    try:
        import matplotlib
    except ImportError:
        log(f"no matplotlib: {path} not drawn (the JSON has everything; --replot draws it later)")
        return False
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(1, 3, figsize=(17, 5))
    x = range(len(sizes))
    labels = [f"{s} B" if s < 1024 else f"{s // 1024} KiB" for s in sizes]

    def series(key, field, scale=1.0):
        # A measurement with no successful run is a gap, not a zero.
        vals = [get(res, key.format(s=s, f=frame_bytes(s)), field) for s in sizes]
        return [float("nan") if v is None else v * scale for v in vals]

    bars = [("droce memif WRITE", "droce.memif.write.{s}", "goodput_gbps"),
            ("droce memif SEND", "droce.memif.send.{s}", "goodput_gbps"),
            ("droce loopback WRITE", "droce.loopback.write.{s}", "goodput_gbps"),
            ("testpmd memif io (frame bytes)", "testpmd.memif.io.{f}", "gbps"),
            ("kernel UDP veth", "kernel.blast.{s}", "goodput_gbps")]
    w = 0.8 / len(bars)
    for i, (lab, key, field) in enumerate(bars):
        ax[0].bar([v + i * w for v in x], series(key, field), w, label=lab)
    ax[0].set(title="goodput (Gb/s)", xticks=[v + 0.4 - w / 2 for v in x], xticklabels=labels)
    ax[0].legend(fontsize=7)
    rates = [("droce memif SEND", "droce.memif.send.{s}", "msg_rate_mps"),
             ("droce memif WRITE", "droce.memif.write.{s}", "msg_rate_mps"),
             ("testpmd memif io", "testpmd.memif.io.{f}", "mpps"),
             ("testpmd memif stream", "testpmd.memif.stream.{f}", "mpps"),
             ("kernel UDP veth", "kernel.blast.{s}", "msg_rate_mps")]
    w = 0.8 / len(rates)
    for i, (lab, key, field) in enumerate(rates):
        ax[1].bar([v + i * w for v in x], series(key, field), w, label=lab)
    ax[1].set(title="messages (packets for testpmd) per second, millions", yscale="log",
              xticks=[v + 0.4 - w / 2 for v in x], xticklabels=labels)
    ax[1].legend(fontsize=7)
    for lab, key in (("droce-echo memif", "droce.rtt.memif.{s}"), ("pmd ping-pong memif", "pmd.rtt.memif.{s}"),
                     ("droce-echo loopback", "droce.rtt.loopback.{s}"), ("pmd ping-pong ring", "pmd.rtt.ring.{s}"),
                     ("kernel UDP busy-poll", "kernel.rtt.busy.{s}"), ("kernel UDP blocking", "kernel.rtt.blocking.{s}")):
        p50, p99 = series(key, "rtt_p50_ns", 1e-3), series(key, "rtt_p99_ns", 1e-3)
        if any(v == v for v in p50):
            line = ax[2].plot(list(x), p50, marker="o", label=f"{lab} p50")[0]
            ax[2].plot(list(x), p99, linestyle=":", color=line.get_color())
    ax[2].set(title="RTT (us), p50 solid, p99 dotted", yscale="log", xticks=list(x), xticklabels=labels)
    ax[2].legend(fontsize=7)
    # The headline targets only (all of them for a file recorded before issue 14's tiers).
    shown = [t for t in tg if t.get("tier") == "headline"] or tg
    verdicts = "   ".join(f"{t['verdict']} {t['target'].split(' vs ')[0]} ({t['ratio']:.2f})" for t in shown if t["ratio"])
    verdicts = verdicts.replace(" p50", "")
    fig.suptitle(f"droce end to end vs testpmd, bare PMD and kernel UDP — {verdicts}", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build", help="meson build directory (default build)")
    ap.add_argument("--sizes", default="64,1024,4096,65536",
                    help="message sizes (default 64,1024,4096,65536); 64 and 4096 bring the headline targets' items")
    ap.add_argument("--duration", type=float, default=2, help="seconds per throughput run (default 2)")
    ap.add_argument("--warmup", type=float, default=0.5, help="seconds excluded at the start (default 0.5)")
    ap.add_argument("--repeats", type=int, default=3, help="runs of each measurement, medians reported (default 3)")
    ap.add_argument("--rtt-count", type=int, default=20000, help="round trips per RTT run (default 20000)")
    ap.add_argument("--inflight", type=int, default=64, help="droce-gen messages in flight (default 64)")
    ap.add_argument("--parts", default="droce,testpmd,pmd,kernel", help="what to measure (default all)")
    ap.add_argument("--cpus", default="0,1", help="CLIENT,SERVER CPUs, two different ones (default 0,1)")
    ap.add_argument("--quick", action="store_true",
                    help="smoke check: sizes 64,4096 (every target's items), 1 s runs, 1 repeat, 3000 round trips")
    ap.add_argument("--out", default="bench/e2e/results", help="directory for e2e.json and e2e.png")
    ap.add_argument("--replot", metavar="JSON", help="measure nothing: print the tables and redraw the plot of a results file")
    cfg = ap.parse_args()
    if cfg.replot:
        doc = read_json(cfg.replot)
        if doc is None:
            sys.exit(f"e2e: {cfg.replot}: not a results file")
        print_tables(doc["results"], doc["targets"], doc["config"]["sizes"])
        plot(doc["results"], doc["targets"], doc["config"]["sizes"], os.path.splitext(cfg.replot)[0] + ".png")
        return 0
    if cfg.quick:
        cfg.sizes, cfg.duration, cfg.repeats, cfg.rtt_count, cfg.warmup = "64,4096", 1.0, 1, 3000, 0.3
    try:
        cfg.sizes = [int(s) for s in cfg.sizes.split(",")]
        if any(s < 1 or s > 65536 for s in cfg.sizes):
            raise ValueError
    except ValueError:
        sys.exit("e2e: --sizes: a comma-separated list of sizes in 1..65536")
    if cfg.repeats < 1 or cfg.duration <= 0 or cfg.rtt_count < 1 or not 1 <= cfg.inflight <= 128:
        sys.exit("e2e: --repeats, --duration, --rtt-count must be positive and --inflight in 1..128")
    global SERVER_CPU, CLIENT_CPU
    try:
        CLIENT_CPU, SERVER_CPU = (int(c) for c in cfg.cpus.split(","))
    except ValueError:
        sys.exit("e2e: --cpus: two CPU numbers, CLIENT,SERVER")
    if CLIENT_CPU == SERVER_CPU or not {CLIENT_CPU, SERVER_CPU} <= os.sched_getaffinity(0):
        sys.exit(f"e2e: --cpus: two different CPUs this process may use ({sorted(os.sched_getaffinity(0))})")
    cfg.parts = set(cfg.parts.split(","))
    if not cfg.parts <= {"droce", "testpmd", "pmd", "kernel"}:
        sys.exit("e2e: --parts: a subset of droce,testpmd,pmd,kernel")
    cfg.gen = os.path.join(cfg.build, "apps/droce-gen/droce-gen")
    cfg.echo = os.path.join(cfg.build, "apps/droce-echo/droce-echo")
    cfg.pingpong = os.path.join(cfg.build, "bench/e2e/pmd_pingpong")
    cfg.blaster = os.path.join(cfg.build, "bench/e2e/udp_blaster")
    cfg.udp_pingpong = os.path.join(cfg.build, "bench/e2e/udp_pingpong")
    for exe in (cfg.gen, cfg.echo, cfg.pingpong, cfg.blaster, cfg.udp_pingpong):
        if not os.access(exe, os.X_OK):
            sys.exit(f"e2e: {exe} not built (meson setup {cfg.build} -Dbench=true && ninja -C {cfg.build})")
    if "testpmd" in cfg.parts and shutil.which(TESTPMD) is None:
        sys.exit("e2e: dpdk-testpmd not found (package dpdk-dev)")
    if "kernel" in cfg.parts and os.geteuid() != 0:
        sys.exit("e2e: the kernel baseline creates network namespaces: run as root, or --parts without kernel")

    global TMP
    TMP = tempfile.mkdtemp(prefix="droce-e2e-")

    def cleanup():
        kill_children()
        if "kernel" in cfg.parts:
            netns_down()
        shutil.rmtree(TMP, ignore_errors=True)

    atexit.register(cleanup)
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda s, f: sys.exit(f"e2e: interrupted (signal {s}); partial results not written"))

    info = machine()
    info["load_before"] = loadavg()
    log(f"{info['cpu_model']}, {info['cores']} CPUs, kernel {info['kernel']}, DPDK {info['dpdk_version']}, "
        f"hugepages {'yes' if info['hugepages'] else 'no'}, load {info['load_before']}")
    if "kernel" in cfg.parts:
        netns_up()
    items = plan(cfg)
    samples, errors = {k: [] for k, _ in items}, {}
    t0 = time.time()
    for r in range(cfg.repeats):
        order = items if r % 2 == 0 else list(reversed(items))
        for key, fn in order:
            # A second attempt after a failure: on a loaded 2-CPU machine a peer descheduled for
            # tens of milliseconds can exhaust RC retries or a testpmd link check. Both are logged.
            for attempt in (1, 2):
                try:
                    v = fn()
                    samples[key].append(v)
                    show = ", ".join(f"{k} {x:.4g}" for k, x in v.items() if isinstance(x, float) or k.startswith("rtt"))
                    log(f"round {r + 1}/{cfg.repeats} {key}: {show}")
                    break
                except (RuntimeError, KeyError, TypeError) as e:
                    errors.setdefault(key, []).append(str(e))
                    log(f"round {r + 1}/{cfg.repeats} {key}: FAILED (attempt {attempt}): {e}")
                finally:
                    kill_children()
    info["load_after"] = loadavg()
    res = {k: median_of(v) for k, v in samples.items() if v}
    tg = targets(res)
    print_tables(res, tg, cfg.sizes)
    os.makedirs(cfg.out, exist_ok=True)
    doc = {"machine": info, "command": " ".join(sys.argv),
           "config": {"sizes": cfg.sizes, "duration_s": cfg.duration, "warmup_s": cfg.warmup, "repeats": cfg.repeats,
                      "rtt_count": cfg.rtt_count, "inflight": cfg.inflight, "pmtu": PMTU, "parts": sorted(cfg.parts),
                      "target_frames": {"send_stream": send_target_frame(), "write_stream": write_target_frame(),
                                        "write_pmtu": TARGET_WRITE_PMTU,
                                        "write_message": message_frames("write", TARGET_WRITE_SIZE, TARGET_WRITE_PMTU)},
                      "cpus": {"server_or_single": SERVER_CPU, "client": CLIENT_CPU}},
           "elapsed_s": round(time.time() - t0, 1), "results": res, "samples": samples, "errors": errors,
           "targets": tg}
    with open(os.path.join(cfg.out, "e2e.json"), "w") as f:
        json.dump(doc, f, indent=2)
    drawn = plot(res, tg, cfg.sizes, os.path.join(cfg.out, "e2e.png"))
    log(f"wrote {cfg.out}/e2e.json{' and e2e.png' if drawn else ''} in {doc['elapsed_s']} s; load {info['load_before']} -> "
        f"{info['load_after']}; {sum(len(v) for v in errors.values())} failed runs")
    # Non-zero only when a measurement has no sample at all; retried failures are in the JSON.
    return 1 if any(not v for v in samples.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
