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
} > $out/summary.md
cat $out/summary.md
