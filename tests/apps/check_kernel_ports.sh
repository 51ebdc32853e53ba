#!/usr/bin/env bash
# droce-gen, droce-perf and droce-echo over the kernel's interfaces, net_af_packet, net_af_xdp and
# net_tap, between network namespaces this script creates and removes (scripts/lab_veth.sh: NAME-a
# and NAME-b joined through NAME-r, a Linux bridge whose nftables rule drops RoCEv2 frames at random;
# this kernel has no netem qdisc). Per PMD: droce-gen both ways (server in NAME-a, then in NAME-b)
# with 1 % of the RoCEv2 frames dropped on the middle hop, every message verified and resent frames
# seen; droce-perf send_bw bidirectional (-b), every iteration counted on both sides; droce-echo,
# every reply checked by its client. The TCP exchange runs over the kernels' own addresses.
#   check_kernel_ports.sh GEN PERF ECHO SOURCE_ROOT [PMD...]   (PMDs: af_packet af_xdp tap; default all)
# Needs root (CI runs as root); without it, or without nft, it says why and exits 77 (skipped).
# The AF_XDP cases need clang to build scripts/xdp/roce_to_socket.c: without it they are skipped,
# named, and the script fails (a PMD silently untested is not a pass).
set -uo pipefail
gen=$1 perf=$2 echo_bin=$3 src=$4
shift 4
pmds=("$@")
[ ${#pmds[@]} -gt 0 ] || pmds=(af_packet af_xdp tap)
lab="$src/scripts/lab_veth.sh"
if [ "$(id -u)" -ne 0 ]; then echo "SKIP: not root: network namespaces and veth pairs need root (CI runs as root)"; exit 77; fi
if ! command -v nft > /dev/null; then echo "SKIP: nft missing: the middle hop's loss needs nftables (scripts/setup.sh)"; exit 77; fi

out=$(mktemp -d)
# NAME: 'k' + 8 hex digits, unique to this run (interface names NAME-xx stay within 15 characters).
name=k$(od -An -N4 -tx4 /dev/urandom | tr -d ' \n')
# What the lab needs of the kernel, asked first: a container or kernel without network namespaces,
# veth, bridges or nftables cannot run these PMDs at all (a skip naming what is missing), while a
# lab that fails to come up where all of them work is this project's failure (below).
probe=$name-p
if ! probe_err=$( { ip netns add "$probe" &&
                    ip -n "$probe" link add "$probe-x" type veth peer name "$probe-y" &&
                    ip -n "$probe" link add "$probe-br" type bridge &&
                    ip netns exec "$probe" nft list tables; } 2>&1); then
  ip netns delete "$probe" 2> /dev/null
  echo "SKIP: this kernel or container cannot make the lab's network namespaces, veth pairs, bridge or nftables table: $(echo "$probe_err" | tail -n 2 | tr '\n' ' ')"
  rm -rf "$out"
  exit 77
fi
ip netns delete "$probe"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2> /dev/null; done
  bash "$lab" down "$name" > /dev/null 2>&1
  [ -n "${KEEP_OUT:-}" ] || rm -rf "$out"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

fail=0
last=""  # the last pair's output files, shown when a check fails
check() {
  if eval "$2"; then echo "ok: $1"; return; fi
  echo "FAILED: $1"
  fail=1
  for f in "$out/$last".*; do
    [ -f "$f" ] && { echo "  --- $(basename "$f") (last lines)"; tail -n 12 "$f" | sed 's/^/  /'; }
  done
}
last_cpu=$(($(nproc) - 1))
# The QPs' local ACK timeout: 4.096 us * 2^16 = 268 ms (a loaded CI host deschedules a poller for
# longer than perftest's 67 ms now and then; results are judged, never timing).
qp_timeout=16

# lab_up PMD: the lab for one PMD; sets dev_a and dev_b (the --vdev of each end) and mtu (droce's path MTU).
lab_up() {
  local pmd=$1
  mac_a=() mac_b=()
  bash "$lab" down "$name" > /dev/null 2>&1
  case $pmd in
    af_packet)
      # Frames of path MTU 4096 (4096 + 78 bytes of headers) in af_packet's ring: 6 KiB frames (a frame
      # less its 32-byte header must fit the apps' 6144-byte mbufs), two per 12 KiB block (the PMD
      # finds frame i at i x framesz: blocks hold whole frames, no gap).
      bash "$lab" up "$name" --mtu 4200 > "$out/lab.txt" 2>&1 || return 1
      dev_a="net_af_packet0,iface=$name-va,blocksz=12288,framesz=6144,framecnt=512"
      dev_b="net_af_packet0,iface=$name-vb,blocksz=12288,framesz=6144,framecnt=512"
      mtu=4096 ;;
    af_xdp)
      # DPDK 22.11's AF_XDP frames stop near 3.5 KiB (one mbuf per page of UMEM): path MTU 2048. The
      # XDP program gives the socket RoCEv2, ARP and ND only, so the kernel keeps its TCP exchange.
      bash "$lab" up "$name" --mtu 3000 > "$out/lab.txt" 2>&1 || return 1
      bash "$lab" xdp "$out/roce.o" > "$out/xdp.txt" 2>&1 || return 1
      dev_a="net_af_xdp0,iface=$name-va,xdp_prog=$out/roce.o"
      dev_b="net_af_xdp0,iface=$name-vb,xdp_prog=$out/roce.o"
      mtu=2048 ;;
    tap)
      bash "$lab" up "$name" --tap > "$out/lab.txt" 2>&1 || return 1
      # net_tap gives the kernel's tap droce's port MAC, and a bridge keeps its ports' MACs as its
      # own (frames to them stop at the bridge): droce sends from another MAC. net_tap sets the
      # tap's MTU to 1500 at start (DPDK's default; droce leaves the port MTU alone): path MTU 1024.
      dev_a="net_tap0,iface=$name-ta"
      dev_b="net_tap0,iface=$name-tb"
      mac_a=(--local-mac 02:43:00:00:00:11) mac_b=(--local-mac 02:43:00:00:00:12)
      mtu=1024 ;;
  esac
}

# pair NAME APP SERVER_SIDE SERVER_ARGS -- CLIENT_ARGS: the server in NAME-SIDE (a or b) in the
# background, the client in the other namespace reaching it at the server's kernel address; sets
# srv_rc and cli_rc. Outputs in $out/NAME.{s,c}.{txt,json}.
pair() {
  local tag=$1 app=$2 side=$3
  shift 3
  last=$tag
  local sargs=() cargs=() part=s
  for a in "$@"; do
    if [ "$a" = "--" ] && [ $part = s ]; then part=c; continue; fi
    if [ $part = s ]; then sargs+=("$a"); else cargs+=("$a"); fi
  done
  local other=b sdev=$dev_a cdev=$dev_b host=192.168.77.1
  if [ "$side" = b ]; then other=a sdev=$dev_b cdev=$dev_a host=192.168.77.2; fi
  # The namespaces are this run's own: a fixed TCP port is free in them.
  timeout 120 ip netns exec "$name-$side" "$app" -l "$last_cpu" --no-pci --vdev "$sdev" -- "${sargs[@]}" \
    > "$out/$tag.s.txt" 2>&1 &
  local spid=$!
  pids+=("$spid")
  # Until the server listens on its TCP port in its namespace (up to 60 s on a loaded host: the
  # client's own wait for it is 30 s from its start, and a server that came up later than that
  # left both sides waiting for the other in one run here).
  local listening=0
  for _ in $(seq 600); do
    if ip netns exec "$name-$side" ss -Hltn 2> /dev/null | grep -q ":18515 "; then listening=1; break; fi
    kill -0 "$spid" 2> /dev/null || break
    sleep 0.1
  done
  [ $listening -eq 1 ] || echo "== $tag: the server was not listening on TCP 18515 after 60 s (or exited)"
  timeout 120 ip netns exec "$name-$other" "$app" -l 0 --no-pci --vdev "$cdev" -- "${cargs[@]}" "${host_arg[@]/HOST/$host}" \
    > "$out/$tag.c.txt" 2>&1
  cli_rc=$?
  wait "$spid"
  srv_rc=$?
  pids=()
  if [ $cli_rc -ne 0 ] || [ $srv_rc -ne 0 ]; then echo "== $tag: client exit $cli_rc, server exit $srv_rc"; fi
}

# gen_ok FILE COUNT: droce-gen's JSON: COUNT messages, each verified, nothing lost, duplicated or
# corrupted, and (with the middle hop's loss) packets resent.
gen_ok() {
  /usr/bin/python3 - "$@" << 'PY'
import json, sys
d = json.load(open(sys.argv[1]))
n = int(sys.argv[2])
assert d['messages'] == n, d['messages']
assert d['lost'] == d['duplicated'] == d['corrupted'] == d['errors'] == 0 and d['problem'] == '', d
assert d['retransmitted_packets'] > 0, 'no packet resent: the loss did not bite'
PY
}
# perf_ok FILE ITERS: a droce-perf -b side's JSON: no problem, each direction's row of ITERS
# iterations with a positive message rate (perftest checks no payload; droce's transport checks
# every packet's ICRC and PSN, and a message missing or twice would leave an iteration short).
perf_ok() {
  /usr/bin/python3 - "$@" << 'PY'
import json, sys
d = json.load(open(sys.argv[1]))
n = int(sys.argv[2])
assert d['bidirectional'] and d['problem'] == '', d
l, r = d['results_local'][-1], d['results_remote'][-1]
assert l['iterations'] == r['iterations'] == n, (l, r)
assert l['msg_rate_mpps'] > 0 and r['msg_rate_mpps'] > 0, (l, r)
PY
}

for pmd in "${pmds[@]}"; do
  if [ "$pmd" = af_xdp ] && ! command -v clang > /dev/null; then
    echo "FAILED: af_xdp not run: clang is missing (it builds scripts/xdp/roce_to_socket.c; scripts/setup.sh installs it)"
    fail=1
    continue
  fi
  if ! lab_up "$pmd"; then
    echo "FAILED: $pmd: the lab did not come up"
    cat "$out/lab.txt" "$out/xdp.txt" 2> /dev/null | tail -n 8 | sed 's/^/  /'
    fail=1
    continue
  fi
  # droce-gen both ways, 1 % of the RoCEv2 frames dropped in NAME-r, every message verified.
  bash "$lab" loss "$name" 10 > /dev/null
  host_arg=(--oob-host HOST)
  for dir in a b; do
    ip=11 peer=12 smac=("${mac_a[@]}") cmac=("${mac_b[@]}")
    [ $dir = b ] && ip=12 peer=11 smac=("${mac_b[@]}") cmac=("${mac_a[@]}")
    op=write
    [ $dir = b ] && op=send
    pair "$pmd.gen.$dir" "$gen" $dir \
      --mode server --local-ip 192.168.77.$ip "${smac[@]}" --mtu $mtu --op $op --size 8192 --quiet --json "$out/$pmd.gen.$dir.s.json" -- \
      --mode client --local-ip 192.168.77.$peer "${cmac[@]}" --mtu $mtu --op $op --size 8192 --count 1500 \
      --quiet --json "$out/$pmd.gen.$dir.c.json"
    check "$pmd: droce-gen $op, server in $dir, 1 % loss on the middle hop: 1500 messages verified, packets resent" \
      "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && gen_ok '$out/$pmd.gen.$dir.c.json' 1500"
  done
  drops=$(bash "$lab" drops "$name")
  check "$pmd: the middle hop dropped RoCEv2 frames ($drops)" "[ '${drops:-0}' -gt 0 ]"
  bash "$lab" loss "$name" 0 > /dev/null
  # droce-perf send_bw both ways at once (-b): every iteration on both sides.
  host_arg=(HOST)
  pair "$pmd.perf" "$perf" a \
    send_bw -b -s 4096 -n 400 -m $mtu -u $qp_timeout --timeout 30 --local-ip 192.168.77.11 "${mac_a[@]}" --json "$out/$pmd.perf.s.json" -- \
    send_bw -b -s 4096 -n 400 -m $mtu -u $qp_timeout --timeout 30 --local-ip 192.168.77.12 "${mac_b[@]}" --json "$out/$pmd.perf.c.json"
  check "$pmd: droce-perf send_bw -b, 400 iterations each way, both sides" \
    "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ] && perf_ok '$out/$pmd.perf.c.json' 400 && perf_ok '$out/$pmd.perf.s.json' 400"
  # droce-echo: the client in NAME-a checks every reply.
  host_arg=(--oob-host HOST)
  pair "$pmd.echo" "$echo_bin" b \
    --mode server --local-ip 192.168.77.12 "${mac_b[@]}" --oob-port 18515 --mtu $mtu --timeout 10 -- \
    --mode client --local-ip 192.168.77.11 "${mac_a[@]}" --oob-port 18515 --mtu $mtu --size 3000 --count 2000 --timeout 10
  check "$pmd: droce-echo, 2000 round trips of 3000 bytes, every reply intact" "[ $cli_rc -eq 0 ] && [ $srv_rc -eq 0 ]"
done
bash "$lab" down "$name" > /dev/null 2>&1
for ns in "$name-a" "$name-r" "$name-b"; do
  check "namespace $ns removed" "[ ! -e /run/netns/$ns ]"
done
exit $fail
