#!/usr/bin/env python3
"""Verifies the ICRC of every RoCEv2 packet in a pcap/pcapng with Scapy's scapy.contrib.roce.

An independent implementation (not droce's) recomputes each ICRC from the packet's own IPv4
pseudo-header (Scapy implements no IPv6 ICRC, so IPv6 packets are counted as skipped); the script prints "N packets, N icrc ok, N bad" and exits 1 on any bad one or
when the file holds no RoCEv2 packet. Needs Debian's python3-scapy (use /usr/bin/python3).
usage: verify_icrc_scapy.py FILE [FILE...]
"""
import sys

try:
    from scapy.all import rdpcap, Ether, IP, UDP
    from scapy.contrib.roce import BTH
except ImportError as e:  # pragma: no cover
    sys.exit(f"verify_icrc_scapy: scapy is not available ({e}); apt-get install python3-scapy")


def verify(path):
    total = ok = bad = skipped = 0
    for pkt in rdpcap(path):
        if UDP not in pkt or pkt[UDP].dport != 4791 or BTH not in pkt:
            continue
        if IP not in pkt:
            skipped += 1  # Scapy's BTH computes ICRCs over IPv4 only (it returns 0 for IPv6)
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
    return total, ok, bad, skipped


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    t = o = b = sk = 0
    for path in sys.argv[1:]:
        n, k, x, y = verify(path)
        t, o, b, sk = t + n, o + k, b + x, sk + y
    print(f"{t} packets, {o} icrc ok, {b} bad" + (f" ({sk} IPv6 packets skipped: Scapy has no IPv6 ICRC)" if sk else ""))
    sys.exit(0 if t > 0 and b == 0 else 1)


if __name__ == "__main__":
    main()
