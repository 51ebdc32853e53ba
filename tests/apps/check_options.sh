#!/usr/bin/env bash
# Hostile command lines for every app: each bad value -> exit 2 and exactly one stderr line naming
# the option, nothing on stdout, nothing run (no EAL, no simulation, no file left behind); good
# values still parse. Usage: check_options.sh GEN ECHO PERF FWD SWITCH SIM RPING COLL
set -uo pipefail
gen=$1 echo_=$2 perf=$3 fwd=$4 switch=$5 sim=$6 rping=$7 coll=$8
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
cases=0
nope=/nonexistent-droce-dir/out.json

# bad OPTION BINARY ARGS...: refused at parse time with one line naming OPTION.
bad() {
  local want=$1 bin=$2; shift 2
  cases=$((cases + 1))
  timeout 60 "$bin" "$@" > "$tmp/out" 2> "$tmp/err"
  local rc=$? lines
  lines=$(wc -l < "$tmp/err")
  local why=""
  [ $rc -eq 2 ] || why+=" exit $rc (want 2);"
  [ "$lines" -eq 1 ] || why+=" $lines stderr lines (want 1);"
  grep -qF -- "$want" "$tmp/err" || why+=" stderr does not name $want;"
  [ ! -s "$tmp/out" ] || why+=" stdout not empty;"
  ! grep -q "^EAL" "$tmp/out" "$tmp/err" || why+=" EAL started;"
  if [ -n "$why" ]; then
    echo "FAILED: $(basename "$bin") $(printf '%q ' "$@"):$why"
    sed 's/^/    | /' "$tmp/err" | head -5
    fail=1
  fi
}

# good NAME BINARY ARGS...: parses (exit 0, nothing on stderr).
good() {
  local name=$1 bin=$2; shift 2
  cases=$((cases + 1))
  if ! timeout 60 "$bin" "$@" > "$tmp/out" 2> "$tmp/err" || [ -s "$tmp/err" ]; then
    echo "FAILED: $name: $(basename "$bin") $(printf '%q ' "$@") did not parse"
    sed 's/^/    | /' "$tmp/err" | head -5
    fail=1
  fi
}

sizes65=$(seq -s, 64 64 4160)   # 65 entries
times65=$(seq -s, 1 65)

# --- droce-gen: numbers, fractions for integers, lists, output paths
bad --size "$gen" -- --size nan
bad --size "$gen" -- --size inf
bad --size "$gen" -- --size -nan
bad --size "$gen" -- --size 4096.5
bad --impair-direction "$gen" -- --impair-direction sideways
bad --size "$gen" -- --size ''
bad --size "$gen" -- --size 0
bad --size "$gen" -- --size 64,,4096
bad --size "$gen" -- --size 64,
bad --size "$gen" -- --size ' 64'
bad --size "$gen" -- --size 64abc
bad --size "$gen" -- --size $'64\nEAL: a second line'
bad --size "$gen" -- --size "$sizes65"
bad --mtu "$gen" -- --mtu 1024.5
bad --mtu "$gen" -- --mtu nan
bad --mtu "$gen" -- --mtu 1000
bad --qps "$gen" -- --qps 2.7
bad --qps "$gen" -- --qps 1e30
bad --inflight "$gen" -- --inflight -1
bad --rate-gbps "$gen" -- --rate-gbps nan
bad --msg-rate "$gen" -- --msg-rate inf
bad --arrivals "$gen" -- --arrivals uniform
bad --arrivals "$gen" -- --arrivals poisson
bad --burst "$gen" -- --burst 0
bad --burst "$gen" -- --burst 2.5
bad --duration "$gen" -- --duration 1e400
bad --count "$gen" -- --count 1.5
bad --warmup "$gen" -- --warmup -nan
bad --oob-port "$gen" -- --oob-port 65536
bad --local-qpn "$gen" -- --local-qpn 0x1000000
bad --psn "$gen" -- --psn -1
bad --connect-timeout "$gen" -- --connect-timeout nan
bad --qp-timeout "$gen" -- --qp-timeout 14.5
bad --retry-cnt "$gen" -- --retry-cnt 8
bad --adaptive-rto "$gen" -- --adaptive-rto maybe
bad --adaptive-rto "$gen" -- --adaptive-rto ''
bad --line-gbps "$gen" -- --line-gbps nan
bad --dcqcn-g "$gen" -- --dcqcn-g nan
bad --dcqcn-byte-counter-bytes "$gen" -- --dcqcn-byte-counter-bytes 1e30
bad --dcqcn-fast-recovery-steps "$gen" -- --dcqcn-fast-recovery-steps 2.5
bad --dcqcn-min-rate-mbps "$gen" -- --dcqcn-min-rate-mbps 50000
bad --dcqcn-nope "$gen" -- --dcqcn-nope 1
bad --pfc-priority "$gen" -- --pfc-priority 3.5
bad --loss "$gen" -- --loss nan
bad --burst-frames "$gen" -- --burst-frames 0.5
bad --seed "$gen" -- --seed -1
bad --seed "$gen" -- --seed 1e30
bad --oob-host "$gen" -- --oob-host ''
bad --mode "$gen" -- --mode ''
bad --json "$gen" -- --json ''
bad --json "$gen" -- --json "$nope"
bad --json "$gen" -- --json "$tmp"
bad --csv "$gen" -- --csv "$nope"
bad --pcap "$gen" -- --pcap "$nope"
bad --stats-json "$gen" -- --stats-json "$nope"
bad --stats-json "$gen" -- --stats-json
bad --interval "$gen" -- --interval 0
bad --interval "$gen" -- --interval x
bad --interval "$gen" -- --interval 0.05
bad --interval "$gen" -- --interval 3601
bad --bogus "$gen" -- --bogus
bad --qps "$gen" -- --qps
# --- droce-gen: workers and QP counts
bad --qps "$gen" -- --qps 16385
bad --active-qps "$gen" -- --active-qps 0
bad --active-qps "$gen" -- --qps 4 --active-qps 5
bad --split "$gen" -- --split 0
bad --split "$gen" -- --split 2.5
bad --split "$gen" -- --split nan
bad --split "$gen" -- --qps 128 --split 65
bad --split "$gen" -- --qps 2 --split 4
bad --split "$gen" -- --qps 6 --split 4
bad --split "$gen" -- --qps 8 --split 4 --workers 3
bad --split "$gen" -- --qps 4 --split 4 --size 3
bad --split "$gen" -- --qps 2 --split 2 --op send
bad --split "$gen" -- --qps 2 --split 2 --mode client
bad --workers "$gen" -- --workers 0
bad --workers "$gen" -- --workers 1.5
bad --workers "$gen" -- --workers 129
bad --workers "$gen" -- --workers 3 --qps 2
bad MemAvailable "$gen" -- --qps 16384 --size 1G   # 2 ends x 16384 QPs x 16 x 1 GiB: more than any host has
# droce-gen --local-mac: a port's source MAC (client and server modes), a MAC that parses.
bad "--local-mac" "$gen" -- --local-mac 02:00:00:00:00:01
bad "--local-mac" "$gen" -- --mode server --local-mac 02:00:00:00:00:0g
# Limits known once EAL has started (still one line, exit 2): the lcores -l gave, the port's queues.
# --no-huge: no hugepages held, and no warning line when there are none.
bad "--workers 2 needs 2 lcores" "$gen" -l 0 --no-pci --no-huge -m 256 -- --workers 2 --qps 2
bad "at most 16 RX and 16 TX queues" "$gen" --lcores '(0-16)@0' --no-pci --no-huge -m 256 --vdev net_ring0 -- \
  --mode client --workers 17 --qps 17

# --- droce-echo
bad --size "$echo_" -- --size nan
bad --timeout "$echo_" -- --timeout nan
bad --timeout "$echo_" -- --timeout -nan
bad --count "$echo_" -- --count 1.5
bad --warmup "$echo_" -- --warmup -1
bad --mtu "$echo_" -- --mtu inf
bad --qp-timeout "$echo_" -- --qp-timeout 1e30
bad --adaptive-rto "$echo_" -- --adaptive-rto 1
bad --oob-port "$echo_" -- --oob-port -1
bad --loss "$echo_" -- --loss inf
bad --seed "$echo_" -- --seed 1.5
bad --oob-host "$echo_" -- --oob-host ''
bad --json "$echo_" -- --json "$nope"
bad --json "$echo_" -- --json "$tmp"
bad --bogus "$echo_" -- --bogus x

# --- droce-perf
bad "server name is empty" "$perf" -- write_bw ''
bad "''" "$perf" -- ''
bad -s "$perf" -- write_bw -s nan
bad --adaptive-rto "$perf" -- write_bw --adaptive-rto yes
bad -s "$perf" -- write_bw -s 1.5K
bad --size "$perf" -- write_bw --size -64
bad -n "$perf" -- write_bw -n nan
bad -n "$perf" -- write_bw -n 1e30
bad -q "$perf" -- write_bw -q 2.7
bad -m "$perf" -- write_bw -m nan
bad -p "$perf" -- write_bw -p 65536
bad -t "$perf" -- write_bw -t -1
bad --loss "$perf" -- write_bw --loss nan
bad --loss "$perf" -- write_bw --loss 1
bad --seed "$perf" -- write_bw --seed -1
bad --timeout "$perf" -- write_bw --timeout inf
bad --max-size "$perf" -- write_bw --max-size nan
bad --json "$perf" -- write_bw --json "$nope"
bad --bogus "$perf" -- write_bw --bogus

# --- droce-fwd
bad --mbufs "$fwd" -- --mbufs nan
bad --rx-port "$fwd" -- --rx-port -1
bad --tx-port "$fwd" -- --tx-port 1.5
bad --duration "$fwd" -- --duration nan
bad --tx-first "$fwd" -- --tx-first 1.5
bad --pkt-size "$fwd" -- --pkt-size inf
bad --stats-period "$fwd" -- --stats-period -nan
bad --json "$fwd" -- --json "$nope"
bad --bogus "$fwd" -- --bogus
bad "'extra'" "$fwd" -- extra

# --- droce-switch
bad --kmin-bytes "$switch" -- --kmin-bytes nan
bad --kmin-bytes "$switch" -- --kmin-bytes 1e30
bad --pmax "$switch" -- --pmax nan
bad --buffer-bytes "$switch" -- --buffer-bytes 2048.5
bad --seed "$switch" -- --seed -1
bad --pfc-quanta "$switch" -- --pfc-quanta 65536
bad --route "$switch" -- --route 10.0.0.0/nan=1
bad --route "$switch" -- --route 10.0.0.0/24=1.5
bad --egress-gbps "$switch" -- --egress-gbps 1=nan
bad --egress-gbps "$switch" -- --egress-gbps nan=5
bad --lab-senders "$switch" -- --lab-senders 2.5
bad --lab-start-ms "$switch" -- --lab-senders 2 --lab-start-ms 1,nan
bad --lab-stop-ms "$switch" -- --lab-senders 2 --lab-stop-ms "$times65"
bad --lab-sample-us "$switch" -- --lab-senders 2 --lab-sample-us nan
bad --lab-sample-us "$switch" -- --lab-senders 2 --lab-duration-ms 600000 --lab-sample-us 10
bad --dcqcn-ai-mbps "$switch" -- --dcqcn-ai-mbps inf
bad --json "$switch" -- --json "$nope"
bad --plot "$switch" -- --plot /nonexistent-droce-dir/plot.png
bad --bogus "$switch" -- --bogus
# No port named: refused before EAL, which would otherwise probe and take the host's PCI NICs.
bad "no ports: name at least two" "$switch" -- --route 10.0.0.1/32=0
# --fabric leafspine:L,S (the live lab on a leaf-spine) and its options
bad --fabric "$switch" -- --lab-senders 3 --fabric ring:2,2
bad --fabric "$switch" -- --lab-senders 3 --fabric leafspine:2
bad --fabric "$switch" -- --lab-senders 3 --fabric leafspine:0,2
bad --fabric "$switch" -- --lab-senders 3 --fabric leafspine:2,33
bad --fabric "$switch" -- --lab-senders 3 --fabric leafspine:2.5,2
bad --fabric "$switch" -- --lab-senders 2 --fabric leafspine:4,2
bad --route "$switch" --no-pci --vdev net_null0 --vdev net_null1 -- --fabric leafspine:2,2 --route 10.0.0.0/24=0
bad --route "$switch" --no-pci --vdev net_null0 --vdev net_null1 -- --fabric leafspine:2,2 --route 10.0.0.1/32=0 \
  --route 10.0.0.2/32=0
bad --uplink-gbps "$switch" -- --lab-senders 3 --uplink-gbps 1
bad --uplink-gbps "$switch" -- --lab-senders 3 --fabric star --uplink-gbps 1
bad --uplink-gbps "$switch" -- --lab-senders 3 --fabric leafspine:2,2 --uplink-gbps nan
bad --ecmp-hash "$switch" -- --lab-senders 3 --ecmp-hash dst-port
bad --ecmp-hash "$switch" -- --lab-senders 3 --fabric leafspine:2,2 --ecmp-hash dst-mac
bad --link-down "$switch" -- --lab-senders 3 --link-down 0:1@10
bad --link-down "$switch" -- --lab-senders 3 --fabric leafspine:2,2 --link-down 0:2@10
bad --link-down "$switch" -- --lab-senders 3 --fabric leafspine:2,2 --link-down 0:1@20:10
bad --link-down "$switch" -- --lab-senders 3 --fabric leafspine:2,2 --link-down 0:1@10:30 --link-down 0:1@20
good "switch leaf-spine lab" "$switch" -- --lab-senders 3 --fabric leafspine:2,2 --uplink-gbps 0.5 --ecmp-hash dst-port,seed=3 --link-down 0:1@10:30 --help

# --- droce-sim (no EAL; its own options)
bad --sample-us "$sim" --sample-us 1e-6 --json "$tmp/sim.json"
bad --kmin-bytes "$sim" --kmin-bytes 1e30 --json "$tmp/sim.json"
bad --seed "$sim" --seed -1 --json "$tmp/sim.json"
bad --flows "$sim" --flows nan --json "$tmp/sim.json"
bad --flows "$sim" --flows 2.5 --json "$tmp/sim.json"
bad --link-gbps "$sim" --link-gbps inf --json "$tmp/sim.json"
bad --duration-ms "$sim" --duration-ms nan --json "$tmp/sim.json"
bad --pmax "$sim" --pmax -nan --json "$tmp/sim.json"
bad --loss "$sim" --loss nan --json "$tmp/sim.json"
bad --packet-bytes "$sim" --packet-bytes 1e30 --json "$tmp/sim.json"
bad --transport "$sim" --transport rcqp --json "$tmp/sim.json"
bad --transport "$sim" --transport tcp --recovery gbn --json "$tmp/sim.json"
bad --packet-bytes "$sim" --transport rcqp --recovery sr --packet-bytes 300 --json "$tmp/sim.json"
bad --g "$sim" --g nan --json "$tmp/sim.json"
bad --alpha-period-us "$sim" --alpha-period-us 0 --json "$tmp/sim.json"
bad --rate-increase-period-us "$sim" --rate-increase-period-us 1e30 --json "$tmp/sim.json"
bad --min-rate-mbps "$sim" --min-rate-mbps 50000 --json "$tmp/sim.json"
bad --preset "$sim" --preset=fast --json "$tmp/sim.json"
bad --json "$sim" --json "$nope"
bad --json "$sim" --flows 2
bad --plot "$sim" --json "$tmp/sim.json" --plot /nonexistent-droce-dir/plot.png
bad --bogus "$sim" --bogus --json "$tmp/sim.json"
bad "'extra'" "$sim" --json "$tmp/sim.json" extra
bad --plot "$sim" --json - --plot "$tmp/sim.png"
# --topology leafspine: its options and what it does not model, each refused by name
bad --ranks "$sim" --topology leafspine --ranks 16 --leaves 3 --json "$tmp/sim.json"
bad --pattern "$sim" --topology leafspine --ranks 16 --leaves 4 --pattern halving --json "$tmp/sim.json"
bad --cc "$sim" --topology leafspine --ranks 16 --leaves 4 --cc dcqcn --json "$tmp/sim.json"
bad --recovery "$sim" --topology leafspine --ranks 16 --leaves 4 --recovery gbn --json "$tmp/sim.json"
bad --loss "$sim" --topology leafspine --ranks 16 --leaves 4 --loss 0.01 --json "$tmp/sim.json"
bad --flow-bytes "$sim" --topology leafspine --ranks 16 --leaves 4 --transport rcqp --recovery gbn --flow-bytes 1M --json "$tmp/sim.json"
bad --uplink-gbps "$sim" --topology leafspine --ranks 16 --leaves 4 --uplink-gbps -1 --json "$tmp/sim.json"
bad --flows "$sim" --topology leafspine --ranks 16 --leaves 4 --flows 2 --json "$tmp/sim.json"
bad --pattern "$sim" --pattern allreduce --flows 2 --json "$tmp/sim.json"
bad --leaves "$sim" --topology two-hop --leaves 4 --json "$tmp/sim.json"
[ ! -e "$tmp/sim.json" ] || { echo "FAILED: a refused droce-sim run left $tmp/sim.json behind"; fail=1; }

# --- droce-perf and droce-echo --workers / --qps (issue 13): refused at parse time
bad --workers "$perf" -- write_bw --workers 0
bad --workers "$perf" -- write_bw --workers nan
bad --workers "$perf" -- write_bw -q 64 --workers 65
bad --workers "$perf" -- write_bw -q 2 --workers 3
bad --workers "$perf" -- send_lat --workers 2
bad --workers "$echo_" -- --mode server --workers 0
bad --workers "$echo_" -- --mode server --workers 17
bad --workers "$echo_" -- --workers 2
bad --workers "$echo_" -- --mode client --peer rc_pingpong --workers 2
bad --workers "$echo_" -- --mode client --thread app --workers 2
bad --qps "$echo_" -- --mode client --qps 65
bad --qps "$echo_" -- --mode client --qps 1.5
bad --qps "$echo_" -- --mode server --qps 2
bad --peer "$echo_" -- --peer srq
bad --peer "$echo_" -- --peer srq_pingpong
bad --workers "$echo_" -- --mode server --peer srq_pingpong --workers 2
bad --rx-depth "$echo_" -- --mode client --peer srq_pingpong --rx-depth 0
bad --rx-depth "$echo_" -- --mode client --peer srq_pingpong --rx-depth 65537
bad --rx-depth "$echo_" -- --mode client --peer srq_pingpong --qps 8 --rx-depth 4
bad --rx-depth "$echo_" -- --mode client --peer srq_pingpong --rx-depth 10
bad --rx-depth "$echo_" -- --mode client --rx-depth 8
bad --rx-depth "$echo_" -- --mode server --peer srq_pingpong --size 65536 --rx-depth 2000
bad --thread "$echo_" -- --mode client --peer srq_pingpong --thread app
good workers-perf "$perf" -- write_bw -q 4 --workers 2 --help
good workers-echo "$echo_" -- --mode client --workers 2 --qps 4 --help
good srq-echo "$echo_" -- --mode client --peer srq_pingpong --qps 4 --rx-depth 8 --help

# --- output paths: the parse-time check leaves an earlier run's file whole and creates none
echo '{"previous": true}' > "$tmp/prev.json"
bad --size "$echo_" -- --json "$tmp/prev.json" --size nan
bad --size "$gen" -- --json "$tmp/new.json" --size nan
[ "$(cat "$tmp/prev.json")" = '{"previous": true}' ] || { echo "FAILED: the --json check truncated an existing file"; fail=1; }
[ ! -e "$tmp/new.json" ] || { echo "FAILED: the --json check left $tmp/new.json behind"; fail=1; }

# --- good lines still parse (options before --help are parsed, then the help is printed)
good help-gen "$gen" -- --size 1e3,64,0x40 --mtu 4096 --qps 2 --count 1e6 --seed 0 --loss 0.01 --impair-direction both --json "$tmp/g.json" --help
good help-gen-workers "$gen" -- --qps 16384 --active-qps 100 --workers 4 --inflight 4 --size 4096 --help
good help-gen-split "$gen" -- --qps 8 --split 4 --workers 2 --size 10000 --op read --help
good help-gen-open "$gen" -- --msg-rate 1e5 --arrivals poisson --burst 8 --seed 3 --help
good help-gen-marks "$gen" -- --mode client --dscp 26 --vlan 100 --pcp 3 --help
bad --dscp "$gen" -- --mode client --dscp 64
bad --vlan "$gen" -- --mode client --vlan 0
bad --vlan "$gen" -- --mode client --vlan 4095
bad --pcp "$gen" -- --mode client --pcp 8
bad "give --vlan too" "$gen" -- --mode client --pcp 3
bad "client and server modes" "$gen" -- --dscp 26
good help-gen-feed "$gen" -- --stats-json - --interval 0.1 --help
# Addresses: IPv4 or IPv6 (one family), and the frame marks, in droce-gen and droce-echo alike.
good help-gen-ipv6 "$gen" -- --mode client --local-ip fd00::1 --peer-ip 2001:db8::2 --peer-mac 02:00:00:00:00:02 --help
good help-gen-ipv6-static "$gen" -- --mode server --oob-port 0 --remote-qpn 0x11 --op send --local-ip fe80::1 --peer-ip fe80::2 --help
good help-echo-ipv6 "$echo_" -- --mode client --local-ip fd00::1 --dscp 46 --vlan 4094 --pcp 7 --pcap "$tmp/e.pcapng" --help
for bin in "$gen" "$echo_"; do
  bad --local-ip "$bin" -- --mode client --local-ip fd00::1::2
  bad --local-ip "$bin" -- --mode client --local-ip 10.0.0.256
  bad --local-ip "$bin" -- --mode client --local-ip 'fd00::1%eth0'
  bad "multicast" "$bin" -- --mode client --local-ip ff02::1
  bad "IPv4-mapped" "$bin" -- --mode client --local-ip ::ffff:10.0.0.1
  bad "unspecified" "$bin" -- --mode client --local-ip ::
  bad "loopback address" "$bin" -- --mode client --local-ip ::1
  bad --dscp "$bin" -- --mode client --dscp 64
  bad --dscp "$bin" -- --mode client --dscp -1
  bad --vlan "$bin" -- --mode client --vlan 0
  bad --vlan "$bin" -- --mode client --vlan 4095
  bad --pcp "$bin" -- --mode client --pcp 8
  bad "give --vlan too" "$bin" -- --mode client --pcp 3
done
bad "give both of one family" "$gen" -- --mode client --local-ip fd00::1 --peer-ip 10.0.0.2
bad "give both of one family" "$gen" -- --mode server --local-ip 10.0.0.2 --peer-ip fd00::1
bad "give an IPv6 --local-ip too" "$gen" -- --mode client --peer-ip fd00::2
bad "needs the peer's --peer-ip" "$gen" -- --mode client --oob-port 0 --remote-qpn 0x11 --op send --local-ip fd00::1
bad "client and server modes" "$gen" -- --local-ip fd00::1
# --connect: tcp (droce-gen's TCP exchange, the default) or cm (RDMA-CM over QP1), and its limits.
bad --connect "$gen" -- --mode client --connect udp
bad --connect "$gen" -- --mode client --connect
bad "--connect cm connects a client and a server" "$gen" -- --connect cm
good help-gen-cm-workers "$gen" -- --mode client --connect cm --workers 2 --qps 2 --help
bad "--connect cm connects at most 64 QPs" "$gen" -- --mode server --connect cm --qps 65
bad "RDMA-CM port --oob-port" "$gen" -- --mode server --connect cm --oob-port 0 --remote-qpn 0x11 --op send
bad "needs the server's --peer-ip" "$gen" -- --mode client --connect cm --local-ip fd00::1
good help-gen-cm "$gen" -- --mode client --connect cm --qps 64 --recovery sr --op read --size 8K --mtu 4096 --help
good help-gen-tcp "$gen" -- --mode server --connect tcp --workers 2 --qps 100 --help
# Selective repeat carries every op; a READ spans at most --sr-bdp-packets x --mtu.
good help-gen-sr-atomic "$gen" -- --mode client --op cmp_swap --recovery sr --help
bad "a READ spans at most" "$gen" -- --op read --recovery sr --size 1M --mtu 4096
bad "need --mode server or client" "$echo_" -- --local-ip fd00::1
bad "need --mode server or client" "$echo_" -- --dscp 26
bad "need --mode server or client" "$echo_" -- --vlan 100
bad --pcap "$echo_" -- --mode client --pcap "$nope"
bad "need --mode server or client" "$echo_" -- --pcap "$tmp/loop.pcapng"
good help-echo "$echo_" -- --size 64 --count 1e5 --timeout 0.5 --json "$tmp/e.json" --help
good help-perf "$perf" -- write_bw -s 64K -n 1000 --help
good help-rto-off "$gen" -- --adaptive-rto off --qp-timeout 10 --help
good help-rto-echo "$echo_" -- --adaptive-rto off --help
good help-rto-perf "$perf" -- read_bw -u 17 --adaptive-rto on --help
good help-perf-ipv6 "$perf" -- write_bw --local-ip fd00:5::1 --vlan 7 --pcp 3 --dscp 26 --help
bad --local-ip "$perf" -- write_bw --local-ip ::1
bad --local-ip "$perf" -- write_bw --local-ip 10.0.0.300
good help-fwd "$fwd" -- --mbufs 4095 --duration 0.5 --json "$tmp/f.json" --help
good help-switch "$switch" -- --kmin-bytes 1e4 --pmax 0.2 --lab-start-ms 0,5 --json "$tmp/s.json" --help
good help-sim "$sim" --flows 3 --seed 7 --help
good sim-run "$sim" --flows 2 --duration-ms 1 --sample-us 1e2 --seed 0x10 --preset=mlx5 --json "$tmp/ok.json"
[ -s "$tmp/ok.json" ] || { echo "FAILED: droce-sim wrote no JSON"; fail=1; }
# --json -: the JSON alone on stdout, the summary line on stderr.
cases=$((cases + 1))
if ! timeout 60 "$sim" -- --flows 2 --duration-ms 1 --sample-us 1e2 --json - > "$tmp/sim-stdout.json" 2> "$tmp/sim-err" ||
  ! /usr/bin/python3 -c "import json, sys; assert len(json.load(open(sys.argv[1]))['flows']) == 2" "$tmp/sim-stdout.json" ||
  ! grep -q '^droce-sim: 2 flows' "$tmp/sim-err"; then
  echo "FAILED: droce-sim --json -: not one JSON document on stdout and the summary on stderr"
  head -c 300 "$tmp/sim-stdout.json" "$tmp/sim-err" | sed 's/^/    | /'
  fail=1
fi
# Two outputs cannot both be stdout; --plot draws from a file.
bad --stats-json "$gen" -- --json - --stats-json -
bad --plot "$coll" -- --json - --plot "$tmp/coll.png"
# droce-coll --link (a leaf-spine link's own settings): the grammar, the fabric and the tiers.
lsp=(--fabric leafspine:2,2 --ranks 4)
bad "--link: only with --fabric leafspine" "$coll" -- --ranks 4 --link leaf0-spine0:gbps=1
bad "unknown key 'speed'" "$coll" -- "${lsp[@]}" --link leaf0-spine0:speed=1
bad "'gbps' given twice" "$coll" -- "${lsp[@]}" --link leaf0-spine0:gbps=1,gbps=2
bad "a link is named leafL-spineS" "$coll" -- "${lsp[@]}" --link spine0-leaf0:gbps=1
bad "KMIN must not exceed KMAX" "$coll" -- "${lsp[@]}" --link leaf0-spine0:ecn=200K:20K:0.1
bad "pfc: XON must be below XOFF" "$coll" -- "${lsp[@]}" --pfc --link leaf0-spine0:pfc=32K:64K
bad "leave dir at both" "$coll" -- "${lsp[@]}" --pfc --link leaf0-spine0:dir=up,pfc=off
bad "no link leaf2-spine0" "$coll" -- "${lsp[@]}" --link leaf2-spine0:gbps=1
bad "leaf0-spine1 given twice" "$coll" -- "${lsp[@]}" --link leaf0-spine1:gbps=1 --link leaf0-spine1:dir=down,gbps=2
bad "link leaf1-spine1 up: PFC on a port of a switch without PFC" "$coll" -- "${lsp[@]}" --link leaf1-spine1:pfc=on
bad "link leaf0-spine0 up: PFC xoff must be below the port's buffer" "$coll" -- "${lsp[@]}" --pfc \
  --link leaf0-spine0:buffer=64K,pfc=128K:32K
good coll-link "$coll" -- "${lsp[@]}" --link leaf0-spine1:dir=up,gbps=1 --link leaf0-spine1:dir=down,gbps=2 --help
# droce-switch --link: the same parser and checks, in its lab and between real ports.
bad "--link: only with --fabric leafspine" "$switch" -- --lab-senders 3 --link leaf0-spine0:gbps=1
bad "no link leaf0-spine2" "$switch" -- --lab-senders 3 --fabric leafspine:2,2 --link leaf0-spine2:gbps=1
bad "link leaf1-spine0 up: PFC on a port of a switch without PFC" "$switch" -- --lab-senders 3 \
  --fabric leafspine:2,2 --link leaf1-spine0:pfc=on
bad "unknown key 'speed'" "$switch" -- --fabric leafspine:2,2 --route 10.0.0.1/32=0 --link leaf0-spine0:speed=1
good switch-link "$switch" -- --lab-senders 3 --fabric leafspine:2,2 --pfc --link leaf0-spine1:pfc=off,delay-us=2 --help

# --- CLI11 forms (issue 18): --opt=value, K/M/G suffixes (sizes binary, rates and counts decimal),
# --config FILE (name = value; the command line wins), one line naming the option on a bad one
good gen-equals "$gen" -- --qps=2 --size=1K,64 --msg-rate=1M --count=1K --mode=client --help
good gen-suffix "$gen" -- --size 1M --inflight 4 --help
bad --size "$gen" -- --size 2G
bad --size "$gen" -- --size=1.5K
bad --msg-rate "$gen" -- --msg-rate 2G
bad --qps "$gen" -- --qps=nan
bad --qps "$gen" -- --qps=
bad --qps "$gen" -- --qps nan --qps 2          # given twice: the last wins, but every value is checked
good echo-equals "$echo_" -- --mode=client --size=4K --count=1M --warmup=1K --help
bad --size "$echo_" -- --size 65K
good switch-repeat "$switch" -- --route=10.0.0.1/32=0 --route 10.0.0.2/32=1 --egress-gbps 1=5 --egress-gbps 2 \
  --kmax-bytes 1M --help
bad "--route port" "$switch" -- --route 10.0.0.1/32=0 --route 10.0.0.2/32=70 --route 10.0.0.3/32=1
bad --kmin-bytes "$switch" -- --kmin-bytes 2M --kmax-bytes 1M
good fwd-equals "$fwd" -- --rx-port=0 --mbufs 4K --duration=0.5 --help
bad --mbufs "$fwd" -- --mbufs 8M
printf 'qps = 2\nsize = 64K\nmsg-rate = "1M"\n' > "$tmp/gen.ini"
good gen-config "$gen" -- --config "$tmp/gen.ini" --help
good gen-config-cli-wins "$gen" -- --config "$tmp/gen.ini" --qps 4 --workers 3 --help
bad "--workers 3 is more than --qps 2" "$gen" -- --config "$tmp/gen.ini" --workers 3
printf 'qps = 0\n' > "$tmp/bad.ini"
bad --qps "$gen" -- --config "$tmp/bad.ini"
printf 'nope = 1\n' > "$tmp/extra.ini"
bad --config "$gen" -- --config "$tmp/extra.ini"
bad --config "$gen" -- --config "$nope"
good sim-equals "$sim" --flows=2 --duration-ms=1 --recovery=sr --rto-us=100 --json="$tmp/eq.json"
[ -s "$tmp/eq.json" ] || { echo "FAILED: droce-sim --json=FILE wrote no JSON"; fail=1; }
good sim-suffix "$sim" --flows 2 --duration-ms 1 --kmax-bytes 200K --buffer-bytes 1M --recovery sr --flow-bytes 64K --json "$tmp/k.json"
grep -q '"kmax_bytes":204800' "$tmp/k.json" && grep -q '"flow_bytes":65536' "$tmp/k.json" ||
  { echo "FAILED: droce-sim --kmax-bytes 200K / --flow-bytes 64K not 204800 / 65536 in the JSON"; fail=1; }
bad --buffer-bytes "$sim" --buffer-bytes 2T --json "$tmp/sim.json"
bad --flows "$sim" --flows 5K --json "$tmp/sim.json"
good sim-dcqcn-names "$sim" --dcqcn-g 0.5 --ai-mbps 20 --preset mlx5 --flows 2 --duration-ms 1 --json "$tmp/d.json"
grep -q '"g":0.5,' "$tmp/d.json" && grep -q '"ai_rate_bps":20000000' "$tmp/d.json" ||
  { echo "FAILED: droce-sim DCQCN overrides given before --preset were not applied after it"; fail=1; }
# one parameter under both names: the later on the command line wins, the command line over --config
for pair in "--g 0.5 --dcqcn-g 0.25:0.25" "--dcqcn-g 0.25 --g 0.5:0.5"; do
  # shellcheck disable=SC2086
  good sim-both-names "$sim" ${pair%:*} --flows 2 --duration-ms 1 --json "$tmp/g.json"
  grep -q "\"g\":${pair#*:}," "$tmp/g.json" || { echo "FAILED: droce-sim ${pair%:*}: g is not ${pair#*:}"; fail=1; }
done
printf 'g = 0.5\n' > "$tmp/g.ini"
good sim-both-names-config "$sim" --config "$tmp/g.ini" --dcqcn-g 0.25 --flows 2 --duration-ms 1 --json "$tmp/g.json"
grep -q '"g":0.25,' "$tmp/g.json" || { echo "FAILED: droce-sim --dcqcn-g did not win over g in --config"; fail=1; }
printf 'g = 0.5\ndcqcn-g = 0.25\n' > "$tmp/g2.ini"
bad "give one" "$sim" --config "$tmp/g2.ini" --json "$tmp/sim.json"
bad --dcqcn-g "$sim" --dcqcn-g 2 --json "$tmp/sim.json"
printf 'flows = 3\nduration-ms = 1\nbuffer-bytes = 2M\nrecovery = gbn\n' > "$tmp/sim.ini"
good sim-config "$sim" --config "$tmp/sim.ini" --flows 4 --json "$tmp/c.json"
grep -q '"flows":4,' "$tmp/c.json" && grep -q '"buffer_bytes":2097152' "$tmp/c.json" && grep -q '"recovery":"gbn"' "$tmp/c.json" ||
  { echo "FAILED: droce-sim --config: file values or the command line's win not in the JSON"; fail=1; }
printf 'flows = 0\n' > "$tmp/sim-bad.ini"
bad --flows "$sim" --config "$tmp/sim-bad.ini" --json "$tmp/sim.json"
bad --config "$sim" --config "$tmp/extra.ini" --json "$tmp/sim.json"
[ ! -e "$tmp/sim.json" ] || { echo "FAILED: a refused droce-sim run left $tmp/sim.json behind"; fail=1; }

# --- droce-perf on the same CLI11 layer: perftest's spellings (short and long), --opt=value, K/M/G
# (sizes binary, rates and counts decimal), --config, the server name after the options, and
# perftest's flags droce-perf leaves out: refused ones one line naming them as typed, ignored ones a
# warning line each once the line runs (their values are theirs, never the server name)
good perf-short "$perf" -- write_bw -s 4096 -n 1000 -q 2 -m 4096 -t 64 -o 16 -u 17 -b -Q 10 -I 64 -N -r 256 \
  -p 20000 -x 1 -d rxe0 -F -c RC -T 104 127.0.0.1 --help
good perf-long "$perf" -- send_bw --size 4096 --iters 1000 --qp 2 --mtu 4096 --tx-depth 64 --qp-timeout 17 \
  --bidirectional --report-both --cq-mod 10 --inline_size 64 --noPeak --rx-depth 256 --port 20000 --gid-index 1 \
  --ib-dev rxe0 --CPU-freq --connection RC --tos 104 --report_gbits --out_json --out_json_file "$tmp/p.json" --help
good perf-atomic "$perf" -- atomic_bw -A CMP_AND_SWAP --atomic_type=FETCH_AND_ADD -o 4 --help
good perf-duration "$perf" -- write_lat -D 4 -f 1 --tclass 104 --help
good perf-all "$perf" -- send_bw -a --max-size 16K --help
good perf-rate "$perf" -- write_bw --rate_limit=0.2 --rate_units=g --rate_limit_type=SW --burst_size=16 --help
good perf-droce "$perf" -- write_bw --local-ip 10.0.0.1 --local-mac 02:00:00:00:00:01 --peer-mac 02:00:00:00:00:02 \
  --dscp 26 --vlan 100 --pcp 3 --loss 0.01 --seed 5 --timeout 60 --json "$tmp/pd.json" -q 2 --workers 2 --help
good perf-equals "$perf" -- write_bw --size=64K --iters=1K --qp=2 --port=20000 --timeout=5 --json="$tmp/pe.json" --help
good perf-attached "$perf" -- write_bw -s64K -n1000 -bN 127.0.0.1 --help
good perf-suffix "$perf" -- write_bw -s 8M -n 100M -t 15K --rate_limit 1K --rate_units p --burst_size 64K --help
bad -s "$perf" -- write_bw -s 9M                 # sizes binary: 8M = 2^23 is the top
bad -n "$perf" -- write_bw -n 101M               # counts decimal: 100M = 10^8 is the top
bad --burst_size "$perf" -- write_bw --rate_limit 1 --burst_size 66K
bad --max-size "$perf" -- send_bw -a --max-size 1.5K
bad --rate_limit "$perf" -- write_bw --rate_limit=nan
bad --rate_units "$perf" -- write_bw --rate_limit 1 --rate_units G
bad -T "$perf" -- write_bw -T 256
bad --tclass "$perf" -- write_bw --tclass=-1
bad -x "$perf" -- write_bw -x 65
bad -f "$perf" -- write_bw -D 2 -f 1
bad -r "$perf" -- send_bw -r 0
bad -I "$perf" -- send_bw -I 2K
bad -c "$perf" -- send_bw -c UC
bad --out_json_file "$perf" -- write_bw --out_json --out_json_file="$nope"
bad "--iters: perftest needs at least 5 iterations" "$perf" -- write_bw --iters=4
bad "-s needs a value" "$perf" -- write_bw -s
bad "--size needs a value" "$perf" -- write_bw --size
bad "--report_gbits takes no value" "$perf" -- write_bw --report_gbits=1
bad "-i needs a value" "$perf" -- write_bw -i
bad "unknown option '--Size'" "$perf" -- write_bw --Size 64
bad "no test given" "$perf" --
bad "two server names given: '127.0.0.1' and 'x'" "$perf" -- write_bw -S 3 127.0.0.1 --pkey_index 0 x -e
good help-perf-R-workers "$perf" -- write_bw -R -q 2 --workers 2 --help
bad "--comm_rdma_cm: perftest's, not implemented" "$perf" -- send_bw --comm_rdma_cm
bad "--run_infinitely: perftest's" "$perf" -- send_bw --run_infinitely
bad "-w: perftest's" "$perf" -- write_bw -w 10
bad "--use_cuda: perftest's" "$perf" -- write_bw --use_cuda=0
bad -q "$perf" -- write_bw -e --use-srq -q 0   # refused: no warning line before the one error
printf 'size = 64K\niters = 1K\nqp = 2\nreport_gbits = true\ntos = 104\nrate_limit = 1K\nrate_units = p\n' > "$tmp/perf.ini"
good perf-config "$perf" -- write_bw --config "$tmp/perf.ini" --help
bad "--workers 3: more workers than QPs (-q 2)" "$perf" -- write_bw --config "$tmp/perf.ini" --workers 3
printf 'qp = 1\n' > "$tmp/perf-q1.ini"
bad "-q: multiple QPs are only available in bw tests" "$perf" -- send_lat --config "$tmp/perf-q1.ini" -q 2
printf 'qp = 0\n' > "$tmp/perf-bad.ini"
bad "'0'" "$perf" -- write_bw --config "$tmp/perf-bad.ini"
bad --config "$perf" -- write_bw --config "$tmp/extra.ini"
bad --config "$perf" -- write_bw --config "$nope"
# Ignored flags: one warning line each, as typed and in order, then the run goes on (here to a
# limit EAL sets: exit 2, its one line last).
cases=$((cases + 1))
timeout 60 "$perf" -l 0 --no-pci --no-huge -m 256 --vdev net_null0 -- send_bw -q 2 --workers 2 -e --use-srq -S 3 \
  --events > "$tmp/out" 2> "$tmp/err"
rc=$?
want="droce-perf: warning: -e ignored: droce polls (a poll-mode engine has no completion events)
droce-perf: warning: --use-srq ignored: receives come from each QP's own queue; the wire is the same
droce-perf: warning: -S ignored: RoCE carries no SL: droce marks priority with --vlan/--pcp and --dscp
droce-perf: warning: --events ignored: droce polls (a poll-mode engine has no completion events)"
if [ $rc -ne 2 ] || [ "$(head -n 4 "$tmp/err")" != "$want" ] || [ "$(wc -l < "$tmp/err")" -ne 5 ] ||
   ! tail -n 1 "$tmp/err" | grep -q -- '--workers 2: EAL gives 1 lcore'; then
  echo "FAILED: droce-perf's warned flags: exit $rc, stderr:"; sed 's/^/    | /' "$tmp/err" | head -8
  fail=1
fi
# the same flags from --config: by their long names, after the command line's
printf 'events = true\nsl = 3\n' > "$tmp/perf-warn.ini"
cases=$((cases + 1))
timeout 60 "$perf" -l 0 --no-pci --no-huge -m 256 --vdev net_null0 -- send_bw -q 2 --workers 2 -H \
  --config "$tmp/perf-warn.ini" > "$tmp/out" 2> "$tmp/err"
rc=$?
want="droce-perf: warning: -H ignored: the samples are not listed; the summary row is printed
droce-perf: warning: --sl ignored: RoCE carries no SL: droce marks priority with --vlan/--pcp and --dscp
droce-perf: warning: --events ignored: droce polls (a poll-mode engine has no completion events)"
if [ $rc -ne 2 ] || [ "$(head -n 3 "$tmp/err")" != "$want" ] || [ "$(wc -l < "$tmp/err")" -ne 4 ]; then
  echo "FAILED: droce-perf's warned flags from --config: exit $rc, stderr:"; sed 's/^/    | /' "$tmp/err" | head -8
  fail=1
fi
cases=$((cases + 1))
timeout 60 "$perf" -- -V > "$tmp/out" 2> "$tmp/err"
rc=$?
if [ $rc -ne 0 ] || [ -s "$tmp/err" ] || ! grep -Eq '^droce-perf [0-9]+\.[0-9]+\.[0-9]+ \(DPDK ' "$tmp/out"; then
  echo "FAILED: droce-perf -- -V: exit $rc, stdout '$(head -c 200 "$tmp/out")'"; fail=1
fi

# --- --version, every app, alone or after "--" (droce-sim has no EAL part): one line
# "<app> X.Y.Z (DPDK A.B.C)" on stdout, exit 0, before EAL starts (nothing else printed)
for bin in "$gen" "$echo_" "$perf" "$fwd" "$switch" "$sim"; do
  app=$(basename "$bin")
  forms=("--version" "-- --version")
  [ "$bin" = "$sim" ] && forms=("--version")
  for args in "${forms[@]}"; do
    cases=$((cases + 1))
    # shellcheck disable=SC2086
    timeout 60 "$bin" $args > "$tmp/out" 2> "$tmp/err"
    rc=$?
    if [ $rc -ne 0 ] || [ -s "$tmp/err" ] || [ "$(wc -l < "$tmp/out")" -ne 1 ] ||
       ! grep -Eq "^$app [0-9]+\.[0-9]+\.[0-9]+ \(DPDK [0-9]+\.[0-9]+(\.[0-9]+)?\)\$" "$tmp/out"; then
      echo "FAILED: $app $args: exit $rc, stdout '$(head -c 200 "$tmp/out")', stderr '$(head -c 200 "$tmp/err")'"
      fail=1
    fi
  done
done

# --- droce-rping: rping's flags and their combinations
bad "exactly one of -s" "$rping" -- -s -c
bad "exactly one of -s" "$rping" -- -C 5
bad "-c needs -a" "$rping" -- -c
bad "-a" "$rping" -- -c -a 1.2.3
bad "--size" "$rping" -- -c -a 10.0.0.2 -S 25
bad "--size" "$rping" -- -c -a 10.0.0.2 -S 65536
bad "--port" "$rping" -- -s -p 0
bad "--count" "$rping" -- -c -a 10.0.0.2 -C 0
bad "--peer-mac is the client's" "$rping" -- -s --peer-mac 02:00:00:00:00:01
bad "--local-ip 10.0.0.3" "$rping" -- -s -a 10.0.0.2 --local-ip 10.0.0.3
bad "--json" "$rping" -- -c -a 10.0.0.2 --json "$nope"
bad "--recovery" "$rping" -- -s --recovery fast
bad "--sr-bdp-packets" "$rping" -- -c -a 10.0.0.2 --sr-bdp-packets 0
bad "--sr-bdp-packets" "$rping" -- -c -a 10.0.0.2 --sr-bdp-packets 129
bad "--clients" "$rping" -- -s --clients 0
bad "--clients" "$rping" -- -s --clients 65
bad "--clients is the server's" "$rping" -- -c -a 10.0.0.2 --clients 2
bad "--workers" "$rping" -- -s --workers 0
bad "--workers" "$rping" -- -s --workers 17
bad "--workers 2: EAL gives 1 lcore" "$rping" -- -s --workers 2
bad "--connections" "$rping" -- -c -a 10.0.0.2 --connections 0
bad "--connections" "$rping" -- -c -a 10.0.0.2 --connections 65
bad "--connections is the client's" "$rping" -- -s --connections 2
good rping-server-workers "$rping" -l 0-1 -- -s --workers 2 --help
good rping-client-connections "$rping" -- -c -a 10.0.0.2 --connections 4 --workers 2 --help
good rping-client "$rping" -- -c -a 10.0.0.2 -p 7174 -C 3 -S 4096 -v -V --help
good rping-server "$rping" -- -s -a 10.0.0.2 --local-ip 10.0.0.2 -C 3 --help
good rping-sr-server "$rping" -- -s --clients 64 --recovery sr --sr-bdp-packets 16 --help

# --- an app's own long option before `--` (among the EAL options): one line naming it and where it
# goes, exit 2, before EAL (which would print its whole usage and exit 1); EAL's own names pass.
bad "--op is droce-gen's option: put it after --" "$gen" -l 0 --op send -- --size 64
bad "--op is droce-gen's option: put it after --" "$gen" --op=send --
bad "--config is droce-gen's option" "$gen" --no-pci --config "$tmp/none.ini" -- --op send
bad "--mode is droce-echo's option: put it after --" "$echo_" --no-pci --mode server --
bad "--out_json is droce-perf's option: put it after --" "$perf" -l 0 --out_json -- -s 64
bad "--duration is droce-fwd's option: put it after --" "$fwd" --duration 1 --
bad "--kmin-bytes is droce-switch's option: put it after --" "$switch" --no-pci --kmin-bytes=1000 --
bad "--timeout is droce-rping's option: put it after --" "$rping" --timeout 5 -- -s
bad "--pattern is droce-coll's option: put it after --" "$coll" -l 0 --pattern alltoall -- --ranks 2
good eal-names-pass "$gen" -l 0 --no-pci --no-huge -m 256 --file-prefix "h34opt$$" --vdev net_null0 -- --help
good eal-names-pass-perf "$perf" --no-pci --no-shconf -- --help
# droce-sim runs no EAL: it takes the `--` every app takes, and nothing before it.
good sim-separator "$sim" -- --flows 2 --help
bad "'-l' before --: droce-sim runs no EAL" "$sim" -l 0 -- --flows 2
bad "'--flows' before --" "$sim" --flows 2 -- --json "$tmp/sim.json"

# --- the final write can still fail (disk full): reported, exit non-zero
if [ -w /dev/full ]; then
  cases=$((cases + 1))
  timeout 60 "$sim" --flows 2 --duration-ms 1 --json /dev/full > /dev/null 2> "$tmp/err"
  rc=$?
  if [ $rc -eq 0 ] || ! grep -q "cannot write '/dev/full'" "$tmp/err"; then
    echo "FAILED: droce-sim --json /dev/full: exit $rc, stderr: $(head -c 300 "$tmp/err")"
    fail=1
  fi
fi

echo "$cases command lines checked"
[ $fail -eq 0 ] && echo "all ok"
exit $fail
