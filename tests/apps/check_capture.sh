#!/usr/bin/env bash
# droce-gen --pcap in every mode (loopback, client, server) writes a pcapng that tshark opens and
# decodes as RoCEv2 with every ICRC right (scripts/verify_capture.sh). The loopback lab makes its
# ports after the capture is opened: its file once had no interface block and tshark refused it.
#   usage: check_capture.sh DROCE_GEN
set -uo pipefail
gen=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail=0
check() {
  if eval "$2"; then echo "ok: $1"; return; fi
  echo "FAILED: $1"
  fail=1
  [ -n "${3:-}" ] && [ -f "$3" ] && tail -n 8 "$3" | sed 's/^/  /'
}
verified() { bash "$root/scripts/verify_capture.sh" "$1" > "$1.verify.txt" 2>&1; }

# Loopback: both endpoints in this process, 2 % loss so NAKs and retransmissions are in the file.
timeout 120 "$gen" -- --op send --size 1500 --qps 2 --loss 0.02 --count 300 --quiet --pcap "$out/loop.pcapng" \
  > "$out/loop.txt" 2>&1
check "loopback run with --pcap exits 0" "[ $? -eq 0 ]" "$out/loop.txt"
check "loopback capture: tshark decodes it, Scapy verifies every ICRC" "verified '$out/loop.pcapng'" "$out/loop.pcapng.verify.txt"
# Captures that fit (issue 34): by default each frame is cut to 346 bytes (--pcap-snaplen), every
# header kept; the 1500-byte SENDs are cut, their headers checked, the ACKs whole, ICRC verified.
check "default --pcap-snaplen: no frame over 346 bytes, SENDs cut with headers whole, ACKs' ICRC verified, the report says so" \
  "[ \$(tshark -r '$out/loop.pcapng' -T fields -e frame.cap_len 2>/dev/null | sort -n | tail -1) -le 346 ] &&
   grep -Eq ' [1-9][0-9]* icrc ok, 0 bad, [1-9][0-9]* cut by the snap length' '$out/loop.pcapng.verify.txt' &&
   grep -Eq 'capture: [1-9][0-9]* frames in .*; [1-9][0-9]* cut to 346 bytes' '$out/loop.txt' &&
   grep -Eq '^ +[0-9]+ 0x[0-9a-f]{2}$' '$out/loop.pcapng.verify.txt'" "$out/loop.pcapng.verify.txt"
# A size cap (--pcap-max-mb): writing stops at 1 MiB, the file stays under it and still verifies
# (cut frames' headers, whole frames' ICRC), and the report counts the frames not written.
timeout 180 "$gen" -- --op write --size 4096 --count 6000 --quiet --pcap "$out/cap.pcapng" --pcap-max-mb 1 \
  --json "$out/cap.json" > "$out/cap.txt" 2>&1
check "--pcap-max-mb 1 run exits 0" "[ $? -eq 0 ]" "$out/cap.txt"
check "--pcap-max-mb 1: the file is at most 1 MiB, verifies, the report and JSON count the frames not written" \
  "[ \$(stat -c %s '$out/cap.pcapng') -le 1048576 ] && verified '$out/cap.pcapng' &&
   grep -Eq 'capture: [1-9][0-9]* frames in .*; [1-9][0-9]* not written \(--pcap-max-mb 1: writing stopped at the cap\)' '$out/cap.txt' &&
   /usr/bin/python3 -c \"
import json; c = json.load(open('$out/cap.json'))['capture']
assert c['max_mb'] == 1 and c['not_written'] > 0 and c['frames'] > 1000 and c['cut'] > 0, c\"" "$out/cap.pcapng.verify.txt"
# The box holds the capture line: it comes before the report's closing dashes.
check "the capture line is inside the report box" \
  "[ \"\$(grep -E '^ capture:|^-{20,}' '$out/cap.txt' | tail -n 1 | cut -c1-5)\" = '-----' ]" "$out/cap.txt"
# A ring (--pcap-files 2): files of 1 MiB numbered from _00001, only the last two kept, each
# under the cap and verified; nothing written under the bare name.
timeout 180 "$gen" -- --op write --size 4096 --count 12000 --quiet --pcap "$out/ring.pcapng" --pcap-max-mb 1 \
  --pcap-files 2 --json "$out/ring.json" > "$out/ring.txt" 2>&1
check "--pcap-max-mb 1 --pcap-files 2 run exits 0" "[ $? -eq 0 ]" "$out/ring.txt"
ring_last=$(/usr/bin/python3 -c "import json; print(json.load(open('$out/ring.json'))['capture']['files_rotated'] + 1)" 2>/dev/null)
ring_file() { printf '%s/ring_%05d.pcapng' "$out" "$1"; }
check "the ring rotated at least twice and kept only its last two files, each at most 1 MiB, both verified" \
  "[ -n '$ring_last' ] && [ '${ring_last:-0}' -ge 3 ] && [ ! -e '$out/ring.pcapng' ] &&
   [ \$(ls '$out'/ring_*.pcapng | wc -l) -eq 2 ] && [ ! -e \"\$(ring_file 1)\" ] &&
   [ \$(stat -c %s \"\$(ring_file $(( ${ring_last:-0} - 1 )))\") -le 1048576 ] &&
   [ \$(stat -c %s \"\$(ring_file ${ring_last:-0})\") -le 1048576 ] &&
   verified \"\$(ring_file $(( ${ring_last:-0} - 1 )))\" && verified \"\$(ring_file ${ring_last:-0})\" &&
   grep -Eq 'capture: [1-9][0-9]* frames written, the files kept .*ring_[0-9]{5}.pcapng .. .*ring_[0-9]{5}.pcapng; .*ring of 2 files of 1 MiB: [1-9][0-9]* rotated, [1-9][0-9]* removed' '$out/ring.txt'" "$out/ring.txt"
"$gen" -- --pcap-files 3 --pcap "$out/x.pcapng" > "$out/files-bad.txt" 2>&1
check "--pcap-files without --pcap-max-mb: one line naming it, exit 2" \
  "[ $? -eq 2 ] && [ \$(wc -l < '$out/files-bad.txt') -eq 1 ] && grep -q -- '--pcap-max-mb' '$out/files-bad.txt'" \
  "$out/files-bad.txt"
"$gen" -- --pcap-max-mb 3 > "$out/max-bad.txt" 2>&1
check "--pcap-max-mb without --pcap: one line naming it, exit 2" \
  "[ $? -eq 2 ] && [ \$(wc -l < '$out/max-bad.txt') -eq 1 ] && grep -q -- '--pcap' '$out/max-bad.txt'" \
  "$out/max-bad.txt"
# Selective repeat (docs/selective-repeat.md): its manufacturer-specific opcodes (SR WRITE
# packets 0xC6..0xCB, SACKs 0xD1) are RoCEv2 frames as any: the same decode and ICRC check holds.
timeout 120 "$gen" -- --op write --size 3000 --loss 0.02 --count 300 --recovery sr --quiet --pcap "$out/sr.pcapng" \
  > "$out/sr.txt" 2>&1
check "loopback --recovery sr run with --pcap exits 0" "[ $? -eq 0 ]" "$out/sr.txt"
check "selective-repeat capture: tshark decodes it, Scapy verifies every ICRC, SACKs (0xd1) in it" \
  "verified '$out/sr.pcapng' && grep -Eq '^ *[0-9]+ 209$' '$out/sr.pcapng.verify.txt'" "$out/sr.pcapng.verify.txt"

# --udp-sport: QP i sends from BASE + i x STRIDE (both ends of the loopback lab), so the capture
# holds exactly the three ports asked for, data and ACKs alike.
timeout 120 "$gen" -- --op write --size 1500 --qps 3 --udp-sport 40000,2 --count 60 --quiet \
  --pcap "$out/sport.pcapng" > "$out/sport.txt" 2>&1
check "loopback --qps 3 --udp-sport 40000,2 exits 0" "[ $? -eq 0 ]" "$out/sport.txt"
check "its capture's UDP source ports are exactly 40000, 40002 and 40004" \
  "[ \"\$(tshark -r '$out/sport.pcapng' -T fields -e udp.srcport 2>/dev/null | sort -u | tr '\n' ' ')\" = '40000 40002 40004 ' ]" \
  "$out/sport.txt"
"$gen" -- --qps 3 --udp-sport 65534,1 > "$out/sport-bad.txt" 2>&1
check "--udp-sport past 65535 for 3 QPs: one line naming it, exit 2" \
  "[ $? -eq 2 ] && [ \$(wc -l < '$out/sport-bad.txt') -eq 1 ] && grep -q -- '--udp-sport' '$out/sport-bad.txt'" \
  "$out/sport-bad.txt"

# Client and server over net_memif, each capturing its own port. Realistic ACK timeout for a busy host.
last_cpu=$(( $(nproc) - 1 ))
sock="$out/cap.sock"
timeout 120 "$gen" -l "$last_cpu" --no-pci --vdev "net_memif0,role=server,socket=$sock,bsize=8192" -- \
  --mode server --oob-port 0 --remote-qpn 0x11 --qp-timeout 16 --op send --size 2048 --count 300 --quiet \
  --pcap "$out/server.pcapng" > "$out/server.txt" 2>&1 &
server=$!
timeout 120 "$gen" -l 0 --no-pci --vdev "net_memif0,role=client,socket=$sock,bsize=8192" -- \
  --mode client --oob-port 0 --remote-qpn 0x11 --qp-timeout 16 --op send --size 2048 --count 300 --quiet \
  --pcap "$out/client.pcapng" > "$out/client.txt" 2>&1
cli_rc=$?
wait "$server"
srv_rc=$?
check "memif client with --pcap exits 0" "[ $cli_rc -eq 0 ]" "$out/client.txt"
check "memif server with --pcap exits 0" "[ $srv_rc -eq 0 ]" "$out/server.txt"
check "client capture: tshark decodes it, Scapy verifies every ICRC" "verified '$out/client.pcapng'" "$out/client.pcapng.verify.txt"
check "server capture: tshark decodes it, Scapy verifies every ICRC" "verified '$out/server.pcapng'" "$out/server.pcapng.verify.txt"

[ $fail -eq 0 ] && echo "check_capture: all passed" || echo "check_capture: FAILED"
exit $fail
