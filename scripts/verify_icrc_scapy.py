#!/usr/bin/env python3
"""Verifies the ICRC of every RoCEv2 packet in a pcap/pcapng with Scapy's scapy.contrib.roce.

An independent implementation (not droce's) recomputes each ICRC from the packet's own IPv4
pseudo-header. Scapy 2.5 implements no IPv6 ICRC: for IPv6 packets this script masks the fields
itself as IBTA Annex A17.4.1 says (eight 0xFF bytes for the LRH; the IPv6 traffic class, flow
label and hop limit; the UDP checksum; the BTH's FECN/BECN/resv6 byte all ones) and takes the
CRC-32 from Python's zlib. A frame the capture's snap length cut (caplen < wirelen) has no ICRC
in the file: its headers are checked instead (the BTH is whole). It prints "N packets, N icrc ok,
N bad, N cut ..." and exits 1 on any bad one or when the file holds no RoCEv2 packet. Needs Debian's python3-scapy (use /usr/bin/python3).
usage: verify_icrc_scapy.py FILE [FILE...]
"""
import struct
import sys
import zlib

try:
    from scapy.all import rdpcap, Ether, IP, IPv6, UDP
    from scapy.contrib.roce import BTH
except ImportError as e:  # pragma: no cover
    sys.exit(f"verify_icrc_scapy: scapy is not available ({e}); apt-get install python3-scapy")


def icrc_ipv6(pkt):
    """(ICRC on the wire, ICRC recomputed) of a RoCEv2-over-IPv6 packet (IBTA A17.4.1)."""
    ip6 = bytearray(bytes(pkt[IPv6])[:40])
    ip6[0:4] = b"\x6f\xff\xff\xff"  # version 6; traffic class and flow label masked
    ip6[7] = 0xFF  # hop limit
    udp = bytearray(bytes(pkt[UDP])[:8])
    udp[6:8] = b"\xff\xff"  # UDP checksum
    rest = bytearray(bytes(pkt[UDP])[8 : pkt[UDP].len])  # BTH .. ICRC, without Ethernet padding
    rest[4] = 0xFF  # BTH: FECN, BECN, resv6
    crc = zlib.crc32(b"\xff" * 8 + bytes(ip6) + bytes(udp) + bytes(rest[:-4])) & 0xFFFFFFFF
    return bytes(rest[-4:]), struct.pack("<I", crc)


def cut_short(pkt):
    """A frame the capture's snap length cut (caplen < wirelen): its ICRC is not in the file."""
    wirelen = getattr(pkt, "wirelen", None)
    return wirelen is not None and wirelen > len(bytes(pkt))


def verify(path):
    total = ok = bad = skipped = cut = 0
    for pkt in rdpcap(path):
        if UDP not in pkt or pkt[UDP].dport != 4791 or BTH not in pkt:
            continue
        if cut_short(pkt):
            # The headers must be whole (the default snap length keeps every RoCEv2 header): the
            # UDP payload holds at least the BTH.
            total += 1
            if len(bytes(pkt[UDP])) >= 8 + 12:
                cut += 1
            else:
                bad += 1
                print(f"{path}: packet {total}: cut inside its headers ({len(bytes(pkt))} of {pkt.wirelen} bytes)")
            continue
        if IP not in pkt:
            if IPv6 not in pkt:
                skipped += 1
                continue
            total += 1
            wire, again = icrc_ipv6(pkt)
            if wire == again:
                ok += 1
            else:
                bad += 1
                print(f"{path}: packet {total} (IPv6): ICRC {wire.hex()} != {again.hex()} (opcode {pkt[BTH].opcode}, psn {pkt[BTH].psn})")
            continue
        total += 1
        wire = bytes(pkt[BTH])[-4:] if pkt[BTH].icrc is not None else b""
        again = Ether(bytes(pkt))
        again[BTH].icrc = None  # Scapy recomputes it in post_build from the masked pseudo-header
        if bytes(again[BTH])[-4:] == wire:
            ok += 1
        else:
            bad += 1
            print(f"{path}: packet {total}: ICRC {wire.hex()} != {bytes(again[BTH])[-4:].hex()} (opcode {pkt[BTH].opcode}, psn {pkt[BTH].psn})")
    return total, ok, bad, skipped, cut


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    t = o = b = sk = c = 0
    for path in sys.argv[1:]:
        n, k, x, y, z = verify(path)
        t, o, b, sk, c = t + n, o + k, b + x, sk + y, c + z
    print(f"{t} packets, {o} icrc ok, {b} bad, {c} cut by the snap length (headers whole, no ICRC to check)"
          + (f" ({sk} packets neither IPv4 nor IPv6 skipped)" if sk else ""))
    sys.exit(0 if t > 0 and b == 0 else 1)


if __name__ == "__main__":
    main()
