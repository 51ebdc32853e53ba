#!/usr/bin/env python3
"""Regenerates the fuzz seed corpora from tests/data/pcaps/*.pcap (rxe captures):
  parser       one file per RoCEv2 frame
  rc_pingpong  each 52-byte ibv_rc_pingpong exchange message
  perftest     per perftest capture, one side's whole TCP byte stream behind fuzz_perftest's mode
               byte (the test, the role droce plays), and each message alone (mode bit 7)
  droce_lines  droce-gen's control lines as droce-gen writes them (no capture has them)
  arp          ARP frames as Linux sends them: request, reply, announcement, probe, 802.1Q-tagged
               (no capture has them)
  nd           IPv6 Neighbor Solicitations and Advertisements (RFC 4861), made by scapy (which
               computes their ICMPv6 checksums): solicitation, solicited and unsolicited
               advertisement, DAD probe, 802.1Q-tagged, with an unknown option, padded
  parser       also droce's selective-repeat frames (docs/selective-repeat.md; no rxe capture has
               them), built here with their ICRC
  perftest_cm  perftest -R's 56-byte key messages (struct pingpong_dest, big-endian): keys as
               perftest sends them, its all-zero barrier, every field at its limit
  cm_private   droce-gen's RDMA-CM private data (apps/droce-gen/cm_private.cc's layout): REQs
               (56 bytes) and REPs (196 bytes)
  rping_advert rping's 16-byte buffer advertisements from the rxe rping captures (SEND Only
               payloads), one per seed and each consecutive pair (a ping's start and sink)

usage: scripts/make_fuzz_corpus.py   (run from the repository root)
"""
import glob
import hashlib
import os
import struct

OUT = "tests/fuzz/corpus/parser"
CORPUS = "tests/fuzz/corpus"
PERFTEST_PORT = 18515  # perftest's and ibv_rc_pingpong's default
# fuzz_perftest's mode byte: test index << 2 | 1 when droce is the client.
PERFTEST_TESTS = ["send_bw", "write_bw", "read_bw", "send_lat", "write_lat", "read_lat"]


def frames(path):
    data = open(path, "rb").read()
    off = 24  # classic pcap global header (the captures are little-endian microsecond pcaps)
    while off + 16 <= len(data):
        _, _, caplen, _ = struct.unpack("<IIII", data[off:off + 16])
        off += 16
        yield data[off:off + caplen]
        off += caplen


def tcp_payloads(path):
    """(from_client, payload) for each TCP segment with data on the exchange port, in order."""
    for fr in frames(path):
        if len(fr) < 54 or fr[12:14] != b"\x08\x00" or fr[23] != 6:
            continue
        ihl = (fr[14] & 0x0F) * 4
        ip_len = struct.unpack(">H", fr[16:18])[0]
        tcp = fr[14 + ihl:]
        thl = (tcp[12] >> 4) * 4
        sport, dport = struct.unpack(">HH", tcp[:4])
        payload = fr[14 + ihl + thl:14 + ip_len]
        if payload and PERFTEST_PORT in (sport, dport):
            yield dport == PERFTEST_PORT, payload


def write_seed(kind, data):
    d = os.path.join(CORPUS, kind)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, hashlib.sha1(data).hexdigest()[:16]), "wb") as f:
        f.write(data)


def perftest_test(name):
    base = os.path.basename(name)[:-len(".pcap")]
    for i, t in enumerate(PERFTEST_TESTS):
        if base == t or base.startswith(t + "_"):
            return i
    return None


def exchange_seeds():
    n = 0
    for path in sorted(glob.glob("tests/data/pcaps/*.pcap")):
        msgs = list(tcp_payloads(path))
        if os.path.basename(path).startswith("rc_pingpong"):
            for _, m in msgs:
                if len(m) == 52:
                    write_seed("rc_pingpong", m)
                    n += 1
            continue
        t = perftest_test(path)
        if t is None:
            continue
        # droce as the server reads the client's bytes, as the client the server's.
        for client_role in (0, 1):
            stream = b"".join(m for from_client, m in msgs if from_client != bool(client_role))
            write_seed("perftest", bytes([t << 2 | client_role]) + stream)
            write_seed("perftest", bytes([t << 2 | client_role | 2]) + stream)  # with an idle function
            n += 2
        for _, m in msgs:
            write_seed("perftest", b"\x80" + m)
            n += 1
    lines = [
        (0, b"MR 7f3a5c001000 1a2b 64\nEND 1000\nRESULT 1000 0 0 0 0 0\n"),
        (1, b"CONFIG op=write size=4096 mtu=1024 qps=2 inflight=16\nMR 7f3a5c001000 1a2b 64\n"
            b"MR 7f3a5c101000 1a2c 64\nEND 5 6\nRESULT 11 0 0 0 0 0\n"),
        (0, b"CONFIG op=read size=64,4096 mtu=4096 qps=1 inflight=1\nEND 0\n"),
        (0, b"RESULT 9007199254740991 1 2 3 4 5\n" + b"A" * 255 + b"\n"),
    ]
    for qps_minus_one, stream in lines:
        write_seed("droce_lines", bytes([qps_minus_one]) + stream)
        n += 1
    print(f"{n} exchange seeds -> {CORPUS}/{{rc_pingpong,perftest,droce_lines}}")


def arp_seeds():
    """Ethernet ARP for IPv4 (RFC 826), padded to the 60-byte minimum frame."""
    bcast, zero = b"\xff" * 6, b"\x00" * 6
    a_mac, b_mac = bytes.fromhex("020000000001"), bytes.fromhex("020000000002")
    a_ip, b_ip = bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2])

    def frame(dst, src, op, sha, spa, tha, tpa, tag=None):
        eth = dst + src + (b"\x81\x00" + struct.pack(">H", tag) if tag is not None else b"") + b"\x08\x06"
        arp = struct.pack(">HHBBH", 1, 0x0800, 6, 4, op) + sha + spa + tha + tpa
        return (eth + arp).ljust(60, b"\x00")

    seeds = [
        frame(bcast, a_mac, 1, a_mac, a_ip, zero, b_ip),                  # request
        frame(a_mac, b_mac, 2, b_mac, b_ip, a_mac, a_ip),                 # reply
        frame(bcast, a_mac, 1, a_mac, a_ip, zero, a_ip),                  # announcement (RFC 5227)
        frame(bcast, a_mac, 1, a_mac, b"\x00" * 4, zero, b_ip),           # probe (RFC 5227)
        frame(bcast, a_mac, 1, a_mac, a_ip, zero, b_ip, tag=(3 << 13) | 100),  # 802.1Q
        frame(bcast, a_mac, 1, a_mac, a_ip, zero, b_ip)[:42],             # unpadded
    ]
    for s in seeds:
        write_seed("arp", s)
    print(f"{len(seeds)} ARP seeds -> {CORPUS}/arp")


def nd_seeds():
    """IPv6 NS/NA frames; scapy computes the checksums (imported here: only this corpus needs it)."""
    from scapy.all import (Dot1Q, Ether, ICMPv6NDOptDstLLAddr, ICMPv6NDOptSrcLLAddr, ICMPv6ND_NA,
                           ICMPv6ND_NS, ICMPv6NDOptUnknown, IPv6, raw)
    a_mac, b_mac = "02:00:00:00:00:01", "02:00:00:00:00:02"
    a_ip, b_ip = "fd00::1", "fd00::2"

    def ns(src_ip=a_ip, opts=True, tag=None):
        eth = Ether(src=a_mac, dst="33:33:ff:00:00:02")
        if tag is not None:
            eth = eth / Dot1Q(vlan=tag, prio=3)
        p = eth / IPv6(src=src_ip, dst="ff02::1:ff00:2", hlim=255) / ICMPv6ND_NS(tgt=b_ip)
        return raw(p / ICMPv6NDOptSrcLLAddr(lladdr=a_mac) if opts else p)

    def na(dst_mac=a_mac, dst_ip=a_ip, solicited=1):
        return raw(Ether(src=b_mac, dst=dst_mac) / IPv6(src=b_ip, dst=dst_ip, hlim=255) /
                   ICMPv6ND_NA(tgt=b_ip, R=0, S=solicited, O=1) / ICMPv6NDOptDstLLAddr(lladdr=b_mac))

    seeds = [
        ns(),                                                      # solicitation
        na(),                                                      # solicited advertisement
        na("33:33:00:00:00:01", "ff02::1", 0),                     # unsolicited (RFC 4861 §7.2.6)
        ns("::", opts=False),                                      # DAD probe (RFC 4862 §5.4.2)
        ns(tag=100),                                               # 802.1Q
        raw(Ether(src=a_mac, dst="33:33:ff:00:00:02") / IPv6(src=a_ip, dst="ff02::1:ff00:2", hlim=255) /
            ICMPv6ND_NS(tgt=b_ip) / ICMPv6NDOptUnknown(type=14, len=1, data=b"\x01" * 6) /
            ICMPv6NDOptSrcLLAddr(lladdr=a_mac)),                   # with a Nonce option
        ns() + b"\x00" * 10,                                       # Ethernet padding
    ]
    for s in seeds:
        write_seed("nd", s)
    print(f"{len(seeds)} ND seeds -> {CORPUS}/nd")


def sr_seeds():
    """RoCEv2 frames of droce's selective-repeat extension: SR data opcodes (a RETH on every
    packet), the SR acknowledgement (AETH + 16-byte SACK bitmap), the SR READ request and
    responses, the SR atomics and their acknowledgement, with a valid ICRC."""
    import zlib

    def frame(opcode, psn, ext, payload, ack_req=True):
        pad = (4 - len(payload) % 4) % 4
        bth = struct.pack(">BBHB", opcode, pad << 4, 0xFFFF, 0) + (0x11).to_bytes(3, "big")
        bth += bytes([0x80 if ack_req else 0]) + psn.to_bytes(3, "big")
        ib = bth + ext + payload + b"\x00" * pad
        udp = struct.pack(">HHHH", 0xC000, 4791, 8 + len(ib) + 4, 0)
        ip = bytearray(struct.pack(">BBHHHBBH4s4s", 0x45, 0x02, 20 + len(udp) + len(ib) + 4, 0, 0x4000, 64, 17, 0,
                                   bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2])))
        csum = sum(struct.unpack(">10H", ip))
        csum = (csum & 0xFFFF) + (csum >> 16)
        csum = (csum & 0xFFFF) + (csum >> 16)
        ip[10:12] = struct.pack(">H", ~csum & 0xFFFF)
        # ICRC (A17.4.1): CRC-32 over 8 bytes of ones and the IP packet with its variant fields
        # (TOS, TTL, header checksum, UDP checksum, BTH byte 4) as ones; stored least significant first.
        masked = bytearray(bytes(ip) + udp + ib)
        masked[1] = masked[8] = masked[10] = masked[11] = 0xFF
        masked[26] = masked[27] = 0xFF
        masked[32] = 0xFF
        icrc = struct.pack("<I", zlib.crc32(b"\xff" * 8 + bytes(masked)))
        eth = bytes.fromhex("020000000002020000000001") + b"\x08\x00"
        return eth + bytes(ip) + udp + ib + icrc

    def reth(va, rkey, length):
        return struct.pack(">QII", va, rkey, length)

    data = bytes(range(256)) * 4
    seeds = [
        frame(0xC6, 100, reth(0x7F0000001000, 0x1234, 3072), data[:1024], False),   # SR WRITE First
        frame(0xC7, 101, reth(0x7F0000001400, 0x1234, 3072), data[:1024], False),   # SR WRITE Middle
        frame(0xC9, 102, reth(0x7F0000001800, 0x1234, 3072) + struct.pack(">I", 7), data[:1024]),  # Last Imm
        frame(0xC0, 200, reth(0, 3, 1500), data[:1024], False),                     # SR SEND First, RSN 3
        frame(0xC2, 201, reth(1024, 3, 1500), data[:476]),                          # SR SEND Last
        frame(0xC5, 202, reth(0, 4, 13) + struct.pack(">I", 0xBEEF), data[:13]),    # SR SEND Only Imm
        frame(0xD7, 203, reth(0, 5, 8) + struct.pack(">I", 0x4242), data[:8]),      # SR SEND Only Inv
        frame(0xD1, 99, struct.pack(">I", 0x1F << 24 | 1), struct.pack(">QQ", 0x1C, 0)),   # SACK
        frame(0xD1, 0xFFFFFF, struct.pack(">I", 0x1F << 24), struct.pack(">QQ", 0, 1 << 63)),  # SACK, wrap
        frame(0xCC, 300, reth(0x7F0000002000, 0x1234, 3000), b""),                   # SR READ Request
        frame(0xCC, 0xFFFFFE, reth(0x7F0000002400, 0x1234, 1024), b""),              # SR READ Request, wrap
        frame(0xCD, 300, struct.pack(">I", 0x1F << 24 | 2), data[:1024], False),     # SR READ Response First
        frame(0xCE, 301, b"", data[:1024], False),                                   # SR READ Response Middle
        frame(0xCF, 302, struct.pack(">I", 0x1F << 24 | 2), data[:952], False),      # SR READ Response Last
        frame(0xD0, 303, struct.pack(">I", 0x1F << 24 | 3), data[:100], False),      # SR READ Response Only
        frame(0xD3, 304, struct.pack(">QIQQ", 0x7F0000003000, 0x1234, 5, 4), b""),   # SR CmpSwap
        frame(0xD4, 305, struct.pack(">QIQQ", 0x7F0000003008, 0x1234, 9, 0), b""),   # SR FetchAdd
        frame(0xD2, 304, struct.pack(">IQ", 0x1F << 24 | 4, 4), b"", False),         # SR ATOMIC Acknowledge
    ]
    for s in seeds:
        write_seed("parser", s)
    print(f"{len(seeds)} selective-repeat frames -> {OUT}")


def perftest_cm_seeds():
    """perftest -R's key message: lid, out_reads, qpn, psn, rkey, pad, vaddr, gid, srqn, gid_index."""
    def dest(lid, out_reads, qpn, psn, rkey, vaddr, gid, srqn=0, gid_index=0):
        return struct.pack(">IIIII4xQ16sII", lid, out_reads, qpn, psn, rkey, vaddr, gid, srqn, gid_index)
    v4 = b"\x00" * 10 + b"\xff\xff" + bytes([10, 0, 0, 1])
    seeds = [
        dest(0, 1, 0x11, 0x5A17C3, 0x1234, 0x7F3A5C001000, v4, 0, 1),   # write_bw's keys on RoCE
        dest(0, 16, 0x12, 0x000001, 0x2345, 0x7F3A5C101000, v4, 0, 3),  # read_bw's (-o 16)
        bytes(56),                                                      # the barrier
        dest(0xFFFF, 0xFFFF, 0xFFFFFF, 0xFFFFFF, 0xFFFFFFFF, 2**64 - 1, b"\xff" * 16, 2**32 - 1, 2**32 - 1),
    ]
    for s in seeds:
        write_seed("perftest_cm", s)
    print(f"{len(seeds)} perftest -R key messages -> {CORPUS}/perftest_cm")


def cm_private_seeds():
    """droce-gen's REQ (44 bytes of 56) and REP (24 of 196) records; "DRGN", version 1."""
    def req(flags, qp_index, qps, active, op, mtu, inflight, digest, limit_ms, warmup_ms):
        return struct.pack(">4sBBHHHBxHIQQQ", b"DRGN", 1, flags, qp_index, qps, active, op, mtu, inflight, digest,
                           limit_ms, warmup_ms).ljust(56, b"\x00")

    def rep(flags, qp_index, vaddr, rkey, slots):
        return struct.pack(">4sBBHQII", b"DRGN", 1, flags, qp_index, vaddr, rkey, slots).ljust(196, b"\x00")

    seeds = [
        req(0, 0, 1, 1, 1, 1024, 16, 0x8F3A0C2B1D4E5F60, 10000, 0),
        req(1, 3, 4, 2, 5, 4096, 1, 0xFFFFFFFFFFFFFFFF, 2**64 - 1, 2**64 - 1),
        rep(0, 0, 0x7F3A5C001000, 0x1A2B, 16),
        rep(1, 3, 0x7F3A5C101000, 0x1A2C, 1),
    ]
    for s in seeds:
        write_seed("cm_private", s)
    print(f"{len(seeds)} droce-gen RDMA-CM records -> {CORPUS}/cm_private")


def rping_advert_seeds():
    """The 16-byte SEND Only payloads (BTH opcode 4) of the rxe rping captures."""
    n = 0
    for path in sorted(glob.glob("tests/data/pcaps/rxe_rping_*.pcap")):
        adverts = []
        for fr in frames(path):
            if len(fr) == 14 + 20 + 8 + 12 + 16 + 4 and fr[12:14] == b"\x08\x00" and fr[23] == 17 and \
                    fr[36:38] == b"\x12\xb7" and fr[42] == 0x04:
                adverts.append(fr[54:70])
        for i, a in enumerate(adverts):
            write_seed("rping_advert", a)
            if i + 1 < len(adverts):
                write_seed("rping_advert", a + adverts[i + 1])
            n += 1
    print(f"{n} rping advertisements -> {CORPUS}/rping_advert")


def main():
    exchange_seeds()
    perftest_cm_seeds()
    cm_private_seeds()
    rping_advert_seeds()
    arp_seeds()
    nd_seeds()
    sr_seeds()
    os.makedirs(OUT, exist_ok=True)
    n = 0
    for path in sorted(glob.glob("tests/data/pcaps/*.pcap")):
        for fr in frames(path):
            if len(fr) > 42 and fr[12:14] == b"\x08\x00" and fr[23] == 17 and fr[36:38] == b"\x12\xb7":
                name = hashlib.sha1(fr).hexdigest()[:16]
                with open(os.path.join(OUT, name), "wb") as f:
                    f.write(fr)
                n += 1
    print(f"{n} frames -> {OUT}")


if __name__ == "__main__":
    main()
