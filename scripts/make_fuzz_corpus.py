#!/usr/bin/env python3
"""Regenerates the parser fuzz seed corpus: one file per RoCEv2 frame of tests/data/pcaps/*.pcap.

usage: scripts/make_fuzz_corpus.py   (run from the repository root)
"""
import glob
import hashlib
import os
import struct

OUT = "tests/fuzz/corpus/parser"


def frames(path):
    data = open(path, "rb").read()
    off = 24  # classic pcap global header (the captures are little-endian microsecond pcaps)
    while off + 16 <= len(data):
        _, _, caplen, _ = struct.unpack("<IIII", data[off:off + 16])
        off += 16
        yield data[off:off + caplen]
        off += caplen


def main():
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
