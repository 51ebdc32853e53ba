#!/usr/bin/env bash
# Decodes a droce pcapng with tshark (opcode and PSN of every RoCEv2 frame) and re-checks with
# Scapy the ICRC of every whole frame and the headers of every frame the snap length cut
# (--pcap-snaplen). Exits non-zero if tshark finds no RoCE frame, a frame it cannot decode as
# InfiniBand, a frame cut inside its headers, or any ICRC is wrong.  usage: scripts/verify_capture.sh FILE.pcapng
set -euo pipefail
f=${1:?usage: verify_capture.sh FILE.pcapng}
command -v tshark >/dev/null || { echo "verify_capture: tshark not installed"; exit 1; }
fields=$(tshark -r "$f" -Y 'udp.dstport == 4791' -T fields -e infiniband.bth.opcode -e infiniband.bth.psn 2>/dev/null)
total=$(printf '%s\n' "$fields" | grep -c . || true)
undecoded=$(printf '%s\n' "$fields" | awk 'NF < 2' | grep -c . || true)
echo "tshark: $total RoCEv2 frames, $undecoded not decoded as InfiniBand"
echo "tshark: frames per BTH opcode:"
printf '%s\n' "$fields" | awk '{print $1}' | sort | uniq -c | sed 's/^/  /'
echo "tshark: AETH syndromes (0x1f ACK, 0x60 NAK sequence error, 0x2x RNR NAK):"
tshark -r "$f" -Y 'infiniband.aeth' -T fields -e infiniband.aeth.syndrome 2>/dev/null |
  while read -r v; do printf '0x%02x\n' "$v"; done | sort | uniq -c | sed 's/^/  /'
echo "tshark: PSN range: $(printf '%s\n' "$fields" | awk '{print $2}' | sort -n | sed -n '1p;$p' | paste -sd- -)"
[ "$total" -gt 0 ] && [ "$undecoded" -eq 0 ] || exit 1
/usr/bin/python3 "$(dirname "$0")/verify_icrc_scapy.py" "$f"
