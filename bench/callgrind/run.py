#!/usr/bin/env python3
"""Where each frame's instructions go, by stage: droce-gen's loopback lab under callgrind.

Runs `droce-gen --mode loopback` (both endpoints of one QP in one process over net_ring, one lcore)
under `valgrind --tool=callgrind` at two message counts and takes differences, so start-up (EAL,
pools, QP set-up) cancels and only the per-message work remains. Instruction counts are
deterministic: the same binary gives the same numbers run after run, on any machine load (each run
gets the same argv and environment, see guest_env).

Four runs per count:
  whole    no toggle: the whole program
  receive  --toggle-collect=droce::engine::RcEndpoint::receive_burst(*    (every frame of an RX
           burst through receive(), the free of the frames no view kept, the per-burst QP
           bookkeeping; inclusive)
  send     --toggle-collect=droce::engine::RcEndpoint::transmit_ready(*   (next_packet, headers,
           ICRC, mbufs, push into the TX batch; inclusive)
  poll     --toggle-collect=droce::engine::RcEndpoint::poll(unsigned long) (RX burst, receive,
           timers, transmit_ready, TX flush; inclusive)
The self cost of every (object, file, function) in each run is read from the callgrind.out file and
put into a stage (stage_of: the inlined header, the shared object, the function's name, the
source file; HEADER_STAGES, OBJECT_STAGES, FUNCTION_STAGES, FILE_STAGES). Regions that no single
toggle isolates are differences of these runs: "rest of the poll" = poll - receive - send (RX burst,
timers, the TX flush; exact), "outside the poll" = whole - poll
(droce-gen's requester and verification, the lab relay between the two rings; it carries the
whole program's wall-clock noise, well under one instruction per message).

Frames are counted by callgrind itself (calls of RcEndpoint::receive and RcEndpoint::transmit in the
whole-program run): droce-gen's JSON has messages but no per-endpoint frame counters, and the
responder coalesces ACKs (one ACK answers a burst of requests), so a message is not a fixed number
of frames. Every figure is given per frame and per message.

Output: markdown on stdout; with --out DIR also DIR/callgrind.md and DIR/callgrind.json (every raw
number, the command lines, valgrind's version, the tree's git commit). Python 3 stdlib only.
Not a test (each callgrind run takes tens of seconds on a loaded machine); --self-test is a quick
smoke check with small counts that the toggles still name existing functions.
"""
import argparse
import collections
import concurrent.futures
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Issue 14's budget per 64 B SEND frame.
BUDGET = {"receive": 350, "send": 300}

EAL = ["-l", "0", "--no-huge", "-m", "512", "--no-pci", "--no-shconf"]

RECEIVE_FN = "droce::engine::RcEndpoint::receive(rte_mbuf*, unsigned long)"
TRANSMIT_FN = "droce::engine::RcEndpoint::transmit(droce::engine::RcEndpoint::QpSlot&, droce::rc::TxDescriptor const&, unsigned long)"
POLL_FN = "droce::engine::RcEndpoint::poll(unsigned long)"
POLL_RECEIVED_FN = "droce::engine::RcEndpoint::poll_received(unsigned long, rte_mbuf* const*, unsigned short)"
# Received ACKs and responses: the completer's entry, called once per such frame. Requests are the
# rest of the received frames (a run of SENDs and WRITEs reaches the responder in one call, on_request_run, so
# calls of on_request no longer count requests).
ON_RESPONSE_FN = "droce::rc::RcQp::on_response(droce::wire::PacketInfo const&, unsigned char const*, unsigned long)"

# Toggle runs: name -> valgrind --toggle-collect pattern (valgrind matches demangled names, * and ?).
TOGGLES = {
    "whole": None,
    "receive": "droce::engine::RcEndpoint::receive_burst(*",
    "send": "droce::engine::RcEndpoint::transmit_ready(*",
    "poll": POLL_FN,
}

# Shared objects whose code is one stage whatever the function (Debian's DPDK .so files have no
# symbols for their static functions: callgrind names those by address).
PMD_OBJECTS = ("librte_net_ring", "librte_net_memif", "librte_ethdev")
OBJECT_STAGES = [
    (re.compile(r"/libz\.so|/librte_net\.so|/libisal\.so"), "ICRC"),
    (re.compile(r"/librte_(mbuf|mempool|mempool_ring|ring|net_ring|net_memif|ethdev)\.so"), "mbuf + PMD burst"),
]

# Inlined code: callgrind names the header it came from; these headers decide the stage whatever the
# function they were inlined into (rte_mbuf.h inlined into transmit is mbuf handling).
HEADER_STAGES = [
    (re.compile(r"/rte_(mbuf|mbuf_core|mempool|ring|ring_elem|ring_elem_pvt|ring_generic_pvt|ring_c11_pvt|ethdev|ethdev_core|lcore|memcpy|prefetch)\.h$"), "mbuf + PMD burst"),
    (re.compile(r"/engine/core/tx_batch\.h$"), "mbuf + PMD burst"),
    (re.compile(r"/protocols/wire/(icrc|icrc_template|crc32)\.h$"), "ICRC"),
    (re.compile(r"/protocols/wire/build\.h$|/protocols/rc/descriptor_fields\.h$"), "header build"),
    (re.compile(r"/protocols/wire/parse(_fast|_general)?\.h$|/protocols/wire/pfc\.h$"), "parse"),
    (re.compile(r"/protocols/dcqcn/"), "DCQCN / pacing / timer wheels"),
]

# By function (demangled), first match wins.
FUNCTION_STAGES = [
    (re.compile(r"^droce::engine::RcEndpoint::(end_message|keep_payload|receive_message|release|note_completions|poll_cq|drain_completions)\(|MessageView|^droce::rc::RcQp::(push_completion|complete_send|complete_recv|poll_cq)\("), "application hand-off"),
    (re.compile(r"^droce::wire::(parse_frame|parse|is_mac_control|pkey_matches)"), "parse"),
    (re.compile(r"^droce::wire::(icrc|crc32|detail::icrc|\(anonymous namespace\)::masked_header)|crc32|rte_net_crc"), "ICRC"),
    (re.compile(r"^droce::wire::(write_headers|build|pad_for)|^droce::rc::packet_fields"), "header build"),
    (re.compile(r"^droce::rc::"), "QP state machine"),
    (re.compile(r"^droce::dcqcn::"), "DCQCN / pacing / timer wheels"),
    (re.compile(r"^(rte_pktmbuf|rte_mempool|rte_ring|rte_eth_|__rte_pktmbuf|rte_mbuf)"), "mbuf + PMD burst"),
    (re.compile(r"^__(memcpy|memmove|memset|memcmp|mempcpy)|^(memcpy|memmove|memset|memcmp)$"), "memcpy / memset / memcmp (libc)"),
    (re.compile(r"^droce::engine::(LoopbackLab|RingLink|LinkImpairment)|^droce::engine::.*ring_link"), "lab relay (not the engine)"),
    (re.compile(r"^droce::gen::|^droce::apps::"), "droce-gen application (not the engine)"),
    (re.compile(r"^droce::engine::"), "endpoint glue"),
]

# The engine's own source files, for what the rules above did not place.
FILE_STAGES = [
    (re.compile(r"/protocols/wire/parse"), "parse"),
    (re.compile(r"/protocols/wire/(icrc|crc32)"), "ICRC"),
    (re.compile(r"/protocols/wire/build"), "header build"),
    (re.compile(r"/protocols/rc/"), "QP state machine"),
    (re.compile(r"/protocols/dcqcn/"), "DCQCN / pacing / timer wheels"),
    (re.compile(r"/engine/endpoint/"), "endpoint glue"),
    (re.compile(r"/engine/lab/"), "lab relay (not the engine)"),
    (re.compile(r"/apps/"), "droce-gen application (not the engine)"),
]

STAGE_ORDER = ["parse", "ICRC", "QP state machine", "DCQCN / pacing / timer wheels", "mbuf + PMD burst",
               "header build", "application hand-off", "endpoint glue", "memcpy / memset / memcmp (libc)",
               "droce-gen application (not the engine)", "lab relay (not the engine)", "other"]


# The receive function inlines the parser's fast path (parse_fast.h), whose SSE intrinsics
# callgrind names by the compiler's headers: in that function they are the parser's (the only
# other SIMD on the receive path, the CRC, is a call into libisal or zlib).
INTRINSICS_HEADER = re.compile(r"/[a-z0-9]*intrin\.h$")
PARSER_INLINED_INTO = re.compile(r"^droce::engine::RcEndpoint::receive\(")


def stage_of(obj, file, fn):
    """The stage of one (object, file, function) self cost: a known header first (inlined code),
    then a whole shared object, then the function's name, then the engine's source file."""
    obj, file, fn = obj or "", file or "", fn or ""
    if INTRINSICS_HEADER.search(file) and PARSER_INLINED_INTO.search(fn):
        return "parse"
    for pat, st in HEADER_STAGES:
        if pat.search(file):
            return st
    if re.search(r"/libc\.so", obj) and re.match(r"^_*(mem|wmem)", fn):
        return "memcpy / memset / memcmp (libc)"
    for pat, st in OBJECT_STAGES:
        if pat.search(obj):
            return st
    for pat, st in FUNCTION_STAGES:
        if pat.search(fn):
            return st
    for pat, st in FILE_STAGES:
        if pat.search(file):
            return st
    return "other"


class Profile:
    """One callgrind.out file: total, self cost per (object, file, function) where file is the
    inlined header's when callgrind says so (fi=/fe=, as callgrind_annotate names it), and per call
    edge (caller function, callee object, callee function) its call count and inclusive cost."""

    def __init__(self, path):
        self.total = None
        self.self_cost = collections.Counter()
        self.calls = collections.Counter()      # callee function -> calls
        self.edge_calls = collections.Counter()  # (caller fn, caller file, callee obj, callee fn) -> calls
        self.edge_cost = collections.Counter()   # same key -> inclusive Ir of those calls
        self._read(path)

    def _read(self, path):
        names = {"ob": {}, "fl": {}, "fn": {}}

        def name(kind, v):
            m = re.match(r"\((\d+)\)(?:\s(.*))?$", v)
            if not m:
                return v
            if m.group(2) is not None:
                names[kind][m.group(1)] = m.group(2)
            return names[kind].get(m.group(1), "?")

        ob = cur = fn = cob = cfn = None
        pending_call = None
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                line = line.rstrip("\n")
                if not line:
                    continue
                c = line[0]
                if c.isdigit() or c in "+-*":
                    parts = line.split()
                    ir = int(parts[1]) if len(parts) >= 2 else 0
                    if pending_call is not None:
                        key, n = pending_call
                        self.edge_calls[key] += n
                        self.edge_cost[key] += ir
                        pending_call = None
                    else:
                        self.self_cost[(ob, cur, fn)] += ir
                    continue
                k, _, v = line.partition("=")
                if k == "ob":
                    ob = name("ob", v)
                    cob = ob
                elif k == "fl":
                    cur = name("fl", v)
                elif k in ("fi", "fe"):
                    cur = name("fl", v)
                elif k == "fn":
                    fn = name("fn", v)
                elif k in ("cfi", "cfl"):
                    name("fl", v)
                elif k == "cob":
                    cob = name("ob", v)
                elif k == "cfn":
                    cfn = name("fn", v)
                elif k == "calls":
                    n = int(v.split()[0])
                    self.calls[cfn] += n
                    pending_call = ((fn, cur, cob, cfn), n)
                    cob = ob  # a cob= holds for one call only
                elif line.startswith("summary:") or line.startswith("totals:"):
                    self.total = int(line.split()[1])
        if self.total is None:
            self.total = sum(self.self_cost.values())


def sub(a, b):
    """a - b per key (Counters keep only positives; these differences must stay signed)."""
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, 0) - v
    return out


def gen_args(o, count):
    return EAL + ["--", "--mode", "loopback", "--op", o.op, "--size", str(o.size), "--mtu", str(o.mtu),
                  "--inflight", str(o.inflight), "--count", str(count), "--quiet", "--json", "gen.json"]


def guest_env():
    """A fixed environment: the guest's stack (argv, environment) and heap layout must not depend on
    who runs the script, or the alignment-dependent paths of libc's memcmp/memcpy move the counts."""
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LC_ALL": "C"}
    env.update({k: v for k, v in os.environ.items() if k.startswith("VALGRIND_")})
    return env


def run_one(o, binary, work, name, count):
    """One callgrind run; returns (Profile, droce-gen's JSON report, the command line). Each run has
    its own directory holding a link ./droce-gen to the binary, and droce-gen's argv is the same in
    every run but for the count, so memory layout is the same whatever the paths (see guest_env)."""
    rundir = os.path.join(work, f"{name}.{count}")
    os.makedirs(rundir, exist_ok=True)
    link = os.path.join(rundir, "droce-gen")
    if os.path.lexists(link):
        os.unlink(link)
    os.symlink(os.path.abspath(binary), link)
    cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=callgrind.out"]
    if TOGGLES[name] is not None:
        cmd.append(f"--toggle-collect={TOGGLES[name]}")
    cmd += ["./droce-gen"] + gen_args(o, count)
    p = subprocess.run(cmd, cwd=rundir, env=guest_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=o.timeout)
    if p.returncode != 0:
        sys.exit(f"callgrind: droce-gen failed (exit {p.returncode}) in {rundir}: {' '.join(cmd)}\n{p.stderr[-3000:]}")
    with open(os.path.join(rundir, "gen.json")) as f:
        rep = json.load(f)
    bad = {k: rep.get(k) for k in ("lost", "duplicated", "out_of_order", "corrupted", "errors", "retransmitted_packets",
                                    "ack_timeouts") if rep.get(k)}
    if rep.get("messages") != count or bad or rep.get("problem"):
        sys.exit(f"callgrind: droce-gen run not clean ({name}, {count}): messages {rep.get('messages')} {bad} "
                 f"{rep.get('problem', '')}")
    return Profile(os.path.join(rundir, "callgrind.out")), rep, cmd


def tool_version(args):
    try:
        return subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True).stdout.strip()
    except OSError:
        return None


def git_commit():
    def git(*a):
        p = subprocess.run(["git", "-C", ROOT] + list(a), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        return p.stdout.strip() if p.returncode == 0 else None
    head = git("rev-parse", "HEAD")
    if head is None:
        return None
    dirty = git("status", "--porcelain", "--untracked-files=no")
    return head + ("-dirty" if dirty else "")


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def measure(o, binary):
    counts = (o.counts[0], o.counts[1])
    work = o.keep or tempfile.mkdtemp(prefix="droce-callgrind-")
    os.makedirs(work, exist_ok=True)
    jobs = [(name, n) for n in counts for name in TOGGLES]
    res = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=o.jobs) as ex:
        futs = {ex.submit(run_one, o, binary, work, name, n): (name, n) for name, n in jobs}
        for fut in concurrent.futures.as_completed(futs):
            res[futs[fut]] = fut.result()
            print(f"  done: {futs[fut][0]} at {futs[fut][1]} messages", file=sys.stderr)
    if not o.keep:
        shutil.rmtree(work, ignore_errors=True)
    return counts, res


def analyse(o, counts, res):
    lo, hi = counts
    d_msgs = hi - lo
    prof = {name: (res[(name, lo)][0], res[(name, hi)][0]) for name in TOGGLES}
    whole_lo, whole_hi = prof["whole"]
    rx_frames = whole_hi.calls[RECEIVE_FN] - whole_lo.calls[RECEIVE_FN]
    tx_frames = whole_hi.calls[TRANSMIT_FN] - whole_lo.calls[TRANSMIT_FN]
    requests = rx_frames - (whole_hi.calls[ON_RESPONSE_FN] - whole_lo.calls[ON_RESPONSE_FN])
    if rx_frames <= 0 or tx_frames <= 0:
        sys.exit(f"callgrind: no calls of {RECEIVE_FN} / {TRANSMIT_FN} counted: renamed? (rx {rx_frames}, tx {tx_frames})")

    # Per-key deltas of each toggle run, and the derived regions.
    delta = {name: sub(prof[name][1].self_cost, prof[name][0].self_cost) for name in TOGGLES}
    totals = {name: prof[name][1].total - prof[name][0].total for name in TOGGLES}
    for name in ("receive", "send", "poll"):
        # A toggle that collects (almost) nothing names a function that no longer exists.
        if totals[name] < d_msgs or prof[name][0].total <= 0:
            sys.exit(f"callgrind: --toggle-collect={TOGGLES[name]} collected {totals[name]} instructions over "
                     f"{d_msgs} messages: the function was renamed or inlined; update TOGGLES")
    regions = {
        "receive": delta["receive"],
        "send": delta["send"],
        "poll_rest": sub(sub(delta["poll"], delta["receive"]), delta["send"]),
        "outside_poll": sub(delta["whole"], delta["poll"]),
    }
    region_totals = {
        "receive": totals["receive"],
        "send": totals["send"],
        "poll_rest": totals["poll"] - totals["receive"] - totals["send"],
        "outside_poll": totals["whole"] - totals["poll"],
    }

    # The poll's own pieces of each direction, from its call edges and inlined headers (poll run).
    p_lo, p_hi = prof["poll"]

    def edge_cost(pred):
        return sum(v for k, v in p_hi.edge_cost.items() if pred(k)) - sum(v for k, v in p_lo.edge_cost.items() if pred(k))

    def self_cost(pred):
        return sum(v for k, v in regions["poll_rest"].items() if pred(k))

    def pmd(obj):
        return any(x in (obj or "") for x in PMD_OBJECTS)

    rx_burst = (self_cost(lambda k: k[2] == POLL_FN and (k[1] or "").endswith("/rte_ethdev.h"))
                + edge_cost(lambda k: k[0] == POLL_FN and pmd(k[2])))
    tx_flush = (self_cost(lambda k: k[2] == POLL_RECEIVED_FN and re.search(r"/(tx_batch|rte_ethdev)\.h$", k[1] or ""))
                + edge_cost(lambda k: k[0] == POLL_RECEIVED_FN and re.search(r"/(tx_batch|rte_ethdev)\.h$", k[1] or "")
                            and pmd(k[2])))
    paths = {
        "receive": {"RcEndpoint::receive_burst (inclusive: receive, free, per-burst QP work)": region_totals["receive"],
                    "RX burst (rte_eth_rx_burst, net_ring PMD)": rx_burst},
        "send": {"RcEndpoint::transmit_ready (inclusive)": region_totals["send"],
                 "TX flush (TxBatch::flush, rte_eth_tx_burst, net_ring PMD)": tx_flush},
    }

    def stages(region):
        acc = collections.Counter()
        for (obj, file, fn), v in regions[region].items():
            acc[stage_of(obj, file, fn)] += v
        return {s: acc[s] for s in STAGE_ORDER if acc.get(s)}

    def top(region, n):
        rows = sorted(((v, k) for k, v in regions[region].items() if v), key=lambda r: (-r[0], r[1]))[:n]
        return [{"instructions": v, "object": os.path.basename(k[0] or ""), "file": k[1], "function": k[2],
                 "stage": stage_of(*k)} for v, k in rows]

    out = {
        "messages": d_msgs, "rx_frames": rx_frames, "tx_frames": tx_frames, "request_frames": requests,
        "other_rx_frames": rx_frames - requests,
        "whole_per_message": totals["whole"] / d_msgs,
        "toggle_totals": {name: {"low": prof[name][0].total, "high": prof[name][1].total, "delta": totals[name]}
                          for name in TOGGLES},
        "region_totals": region_totals,
        "paths": paths,
        "budget": {},
        "stages": {r: stages(r) for r in regions},
        "top_self": {r: top(r, o.top) for r in regions},
    }
    for d in ("receive", "send"):
        frames = rx_frames if d == "receive" else tx_frames
        per_frame = sum(paths[d].values()) / frames
        out["budget"][d] = {"per_frame": per_frame, "budget": BUDGET[d], "met": per_frame <= BUDGET[d],
                            "applies": o.op == "send" and o.size == 64}
    return out


def fmt(x, digits=1):
    """x with `digits` decimals and thousands separators; never "-0.0" (a difference that rounds to 0)."""
    text = f"{x:,.{digits}f}"
    return text[1:] if text.startswith("-") and float(text[1:].replace(",", "")) == 0 else text


def markdown(o, a, meta):
    L = []
    lo, hi = o.counts
    L.append(f"# callgrind: {o.op.upper()} {o.size} B, MTU {o.mtu}, inflight {o.inflight} (droce-gen loopback)")
    L.append("")
    L.append(f"Whole program: **{a['whole_per_message']:,.0f} instructions per message** "
             f"(difference of {hi} and {lo} messages; start-up cancels). The receive, send and poll toggles "
             "count exactly the same in every run; the whole program (and so the region outside the poll) varies by "
             "well under one instruction per message, from droce-gen's statistics published every 50 ms and "
             "EAL's interrupt thread, which follow the wall clock.")
    L.append("")
    L.append(f"Over those {a['messages']} messages: {a['rx_frames']} frames received "
             f"({a['request_frames']} requests, {a['other_rx_frames']} ACKs/responses: the responder coalesces ACKs) "
             f"and {a['tx_frames']} sent; counted by callgrind (calls of RcEndpoint::receive / transmit). "
             "Per frame = per frame of either kind.")
    L.append("")
    budgeted = o.op == "send" and o.size == 64
    L.append("## Budget (issue 14: per 64 B SEND frame, receive <= 350, send <= 300)" if budgeted else
             "## Receive and send paths (issue 14's budget is for 64 B SEND frames; not checked here)")
    L.append("")
    L.append("| path | part | per frame | per message |")
    L.append("|---|---|---:|---:|")
    for d in ("receive", "send"):
        frames = a["rx_frames"] if d == "receive" else a["tx_frames"]
        for part, v in sorted(a["paths"][d].items(), key=lambda kv: ("inclusive" not in kv[0], "free" in kv[0])):
            L.append(f"| {d} | {part} | {fmt(v / frames)} | {fmt(v / a['messages'])} |")
        b = a["budget"][d]
        label = f"**total** (budget {b['budget']})" if budgeted else "**total**"
        L.append(f"| **{d}** | {label} | **{fmt(b['per_frame'])}** | "
                 f"**{fmt(sum(a['paths'][d].values()) / a['messages'])}** |")
    L.append("")
    for d in ("receive", "send") if budgeted else ():
        b = a["budget"][d]
        L.append(f"- {d}: {fmt(b['per_frame'])} per frame, budget {b['budget']}: "
                 f"{'met' if b['met'] else 'NOT met'}"
                 + ("" if b["met"] else f" ({b['per_frame'] / b['budget']:.1f}x)"))
    L.append("")
    titles = {
        "receive": ("Receive: RcEndpoint::receive_burst, inclusive (receive per frame, the free of the frames, per-burst QP work)", "rx_frames"),
        "send": ("Send: RcEndpoint::transmit_ready, inclusive (next_packet, headers, ICRC, mbufs; TX flush is in the poll's rest)", "tx_frames"),
        "poll_rest": ("Rest of RcEndpoint::poll (RX burst, timers, TX flush) = poll - receive - send", "rx_frames"),
        "outside_poll": ("Outside the endpoint's poll (droce-gen, lab relay) = whole - poll", "rx_frames"),
    }
    for r, (title, fkey) in titles.items():
        tot = a["region_totals"][r]
        frames = a[fkey]
        L.append(f"## {title}")
        L.append("")
        L.append(f"| stage | per frame | per message | share |")
        L.append("|---|---:|---:|---:|")
        for s, v in sorted(a["stages"][r].items(), key=lambda kv: STAGE_ORDER.index(kv[0])):
            share = f"{fmt(100.0 * v / tot)} %" if tot else "-"
            L.append(f"| {s} | {fmt(v / frames)} | {fmt(v / a['messages'])} | {share} |")
        L.append(f"| **total** | **{fmt(tot / frames)}** | **{fmt(tot / a['messages'])}** | 100 % |")
        L.append("")
        L.append(f"Top self costs (per frame):")
        L.append("")
        L.append("| per frame | stage | function | file / object |")
        L.append("|---:|---|---|---|")
        for t in a["top_self"][r]:
            where = os.path.basename(t["file"]) if t["file"] and t["file"] != "???" else t["object"]
            fn = t["function"]
            fn = fn if len(fn) <= 90 else fn[:87] + "..."
            L.append(f"| {fmt(t['instructions'] / frames)} | {t['stage']} | `{fn}` | {where} |")
        L.append("")
    L.append("## Runs")
    L.append("")
    L.append(f"- binary: `{meta['binary']}` (sha256 {meta['binary_sha256'][:16]}...), tree {meta['git_commit']}")
    L.append(f"- {meta['valgrind']}; per-item cost = (Ir({hi}) - Ir({lo})) / {hi - lo}")
    L.append(f"- toggles: " + ", ".join(f"{k}: `{v}`" if v else f"{k}: none" for k, v in TOGGLES.items()))
    L.append(f"- command (count {hi}, receive toggle; in a directory with a link ./droce-gen to the binary, "
             f"environment PATH and LC_ALL only): `{meta['example_command']}`")
    L.append("")
    return "\n".join(L)


def replot(o):
    """The markdown of an earlier run, from its callgrind.json (with --out: DIR/callgrind.md)."""
    with open(o.replot) as f:
        saved = json.load(f)
    meta, a = saved["meta"], saved["analysis"]
    for k in ("op", "size", "mtu", "inflight", "counts"):
        setattr(o, k, meta["config"][k])
    md = markdown(o, a, meta)
    print(md)
    if o.out:
        os.makedirs(o.out, exist_ok=True)
        with open(os.path.join(o.out, "callgrind.md"), "w") as f:
            f.write(md + "\n")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build", help="meson build directory (uses DIR/apps/droce-gen/droce-gen)")
    ap.add_argument("--binary", help="droce-gen binary (overrides --build)")
    ap.add_argument("--op", default="send", choices=["send", "write", "read"])
    ap.add_argument("--size", type=int, default=64, help="message size in bytes (default 64)")
    ap.add_argument("--mtu", type=int, default=4096, choices=[256, 512, 1024, 2048, 4096])
    ap.add_argument("--inflight", type=int, default=64)
    ap.add_argument("--counts", default="20000,40000", help="the two message counts (default 20000,40000)")
    ap.add_argument("--jobs", type=int, default=2, help="callgrind runs at once (default 2)")
    ap.add_argument("--top", type=int, default=10, help="rows of the top self costs (default 10)")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per callgrind run (default 1800)")
    ap.add_argument("--out", help="write DIR/callgrind.md and DIR/callgrind.json")
    ap.add_argument("--keep", help="keep the callgrind.out files and droce-gen reports in this directory")
    ap.add_argument("--replot", metavar="JSON", help="print the tables of a callgrind.json again, no measuring")
    ap.add_argument("--self-test", action="store_true",
                    help="smoke check with 2000/4000 messages: every toggle collects, the tables add up")
    o = ap.parse_args()
    if o.replot:
        return replot(o)
    if o.self_test:
        o.counts = "2000,4000"
    try:
        o.counts = [int(x) for x in o.counts.split(",")]
    except ValueError:
        sys.exit("callgrind: --counts takes two integers, e.g. 20000,40000")
    if len(o.counts) != 2 or not 0 < o.counts[0] < o.counts[1]:
        sys.exit("callgrind: --counts takes two increasing positive counts, e.g. 20000,40000")
    if o.jobs < 1 or o.top < 1 or o.size < 1 or o.inflight < 1:
        sys.exit("callgrind: --jobs, --top, --size and --inflight must be positive")
    binary = o.binary or os.path.join(o.build, "apps", "droce-gen", "droce-gen")
    if not os.access(binary, os.X_OK):
        sys.exit(f"callgrind: no droce-gen binary at {binary} (build it, or give --build DIR / --binary PATH)")
    if shutil.which("valgrind") is None:
        sys.exit("callgrind: valgrind is not installed")

    counts, res = measure(o, binary)
    a = analyse(o, counts, res)
    meta = {
        "binary": binary,
        "binary_sha256": sha256(binary),
        "git_commit": git_commit(),
        "valgrind": tool_version(["valgrind", "--version"]),
        "commands": {f"{name}.{n}": res[(name, n)][2] for name in TOGGLES for n in counts},
        "example_command": " ".join(res[("receive", counts[1])][2]),
        "config": {"op": o.op, "size": o.size, "mtu": o.mtu, "inflight": o.inflight, "counts": list(counts)},
        "budget": BUDGET,
        "toggles": TOGGLES,
    }
    md = markdown(o, a, meta)
    print(md)
    if o.out:
        os.makedirs(o.out, exist_ok=True)
        with open(os.path.join(o.out, "callgrind.md"), "w") as f:
            f.write(md + "\n")
        raw = {"meta": meta, "analysis": a,
               "raw": {f"{name}.{n}": {"total": res[(name, n)][0].total,
                                       "self_cost": [[k[0], k[1], k[2], v] for k, v in
                                                     sorted(res[(name, n)][0].self_cost.items(),
                                                            key=lambda kv: (-kv[1], tuple(x or "" for x in kv[0])))
                                                     if v],
                                       "droce_gen": res[(name, n)][1]}
                       for name in TOGGLES for n in counts}}
        with open(os.path.join(o.out, "callgrind.json"), "w") as f:
            json.dump(raw, f, indent=1, sort_keys=True)
            f.write("\n")
    if o.self_test:
        # The regions must add up to the whole, and every toggle must have collected.
        parts = sum(a["region_totals"].values())
        whole = a["toggle_totals"]["whole"]["delta"]
        if parts != whole:
            sys.exit(f"callgrind self-test: regions add up to {parts}, the whole is {whole}")
        for d in ("receive", "send"):
            if min(a["paths"][d].values()) <= 0:
                sys.exit(f"callgrind self-test: a part of the {d} path collected nothing: {a['paths'][d]}")
        print("callgrind self-test: OK", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
