#!/usr/bin/env bash
# Regenerates docs/plots/*.png and docs/plots/summary.md from droce-sim (needs a built tree).
set -euo pipefail
cd "$(dirname "$0")/.."
sim=build/apps/droce-sim/droce-sim
[ -x "$sim" ] || { echo "make_plots: build first (ninja -C build)"; exit 1; }
out=docs/plots
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run() { local name=$1; shift; "$sim" "$@" --json "$tmp/$name.json" --plot "$out/$name.png" | sed 's/^droce-sim: //'; }

run convergence_2flows_paper --flows 2 --start-stagger-ms 10 --duration-ms 100 --preset paper
run convergence_2flows_none --flows 2 --start-stagger-ms 10 --duration-ms 100 --cc none
run incast_8to1_paper --flows 8 --incast --duration-ms 50 --buffer-bytes 4000000 --preset paper
run incast_8to1_none --flows 8 --incast --duration-ms 50 --buffer-bytes 4000000 --cc none
run convergence_2flows_mlx5 --flows 2 --start-stagger-ms 10 --duration-ms 100 --preset mlx5
run incast_8to1_pfc_lossless --flows 8 --incast --duration-ms 50 --pfc --cc none

# PFC head-of-line blocking across two hops, without and with DCQCN.
for cc in none dcqcn; do
  "$sim" --topology two-hop --pfc --flows 8 --incast --duration-ms 50 --cc $cc --json "$tmp/hol_$cc.json" | sed 's/^droce-sim: //'
done
/usr/bin/python3 scripts/plot_pfc_hol.py "$tmp/hol_none.json" "$tmp/hol_dcqcn.json" $out/pfc_two_hop_hol.png

# Go-back-N against selective repeat: the loss sweep and the two-hop incast (recovery_*.png and
# recovery_summary.md, every row with its command).
/usr/bin/python3 scripts/plot_recovery.py --sim "$sim" --out "$out"

# The live lab: two droce senders through droce-switch's core (real frames, real time).
switch=build/apps/droce-switch/droce-switch
if [ -x "$switch" ]; then
  "$switch" -- --lab-senders 2 --lab-duration-ms 300 --lab-start-ms 0,100 --lab-stop-ms 300,200 \
    --lab-bottleneck-gbps 2 --kmax-bytes 40000 --pmax 0.1 --json "$tmp/live.json" --plot $out/live_two_senders.png
fi

{
  echo "| preset | flows | Jain (last half) | utilisation | queue p99 (B) | drops | CNPs |"
  echo "|---|---|---|---|---|---|---|"
  for preset in paper mlx5; do
    for n in 2 8 16; do
      "$sim" --flows $n --start-stagger-ms 1 --duration-ms 100 --preset $preset --json "$tmp/t.json" >/dev/null
      /usr/bin/python3 - "$tmp/t.json" "$preset" "$n" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(f"| {sys.argv[2]} | {sys.argv[3]} | {r['jain_index']:.3f} | {r['utilization']:.3f} | {r['queue_bytes']['p99']} | {r['drops']} | {r['cnps']} |")
PY
    done
  done
  echo
  echo "| two-hop 8->1 incast + innocent flow | innocent Gb/s | incast utilisation | PFC pauses (S1/S2) | innocent paused |"
  echo "|---|---|---|---|---|"
  for cc in none dcqcn; do
    /usr/bin/python3 - "$tmp/hol_$cc.json" "$cc" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
p = r['pfc']
print(f"| PFC{' + DCQCN' if sys.argv[2] == 'dcqcn' else ' only'} | {r['innocent_gbps']:.2f} | {r['utilization']:.3f} | "
      f"{p['pauses_sent']} ({p['pauses_s1']}/{p['pauses_s2']}) | {100 * p['host_paused_fraction'][-1]:.1f} % |")
PY
  done
} > $out/summary.md
cat $out/summary.md
