# Sourced by droce-gen's end-to-end checks (check_gen.sh, check_gen_pairs.sh, check_gen_sweep.sh,
# check_gen_mix.sh): the binary ($1), a scratch directory removed at exit, check(), refused(), and
# the lcores they use.
set -uo pipefail
gen=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail=0
last_pair=""  # the name of the last client/server pair: its logs are shown when a check fails
check() {
  if eval "$2"; then echo "ok: $1"; return; fi
  echo "FAILED: $1"
  fail=1
  if [ -n "$last_pair" ]; then
    for f in "$out/$last_pair.s.txt" "$out/$last_pair.c.txt"; do
      [ -f "$f" ] && { echo "  --- $(basename "$f") (last lines)"; tail -n 8 "$f" | sed 's/^/  /'; }
    done
  fi
}
# shellcheck source=tests/apps/forever_wait.sh
. "$(dirname "$0")/forever_wait.sh"

# Two lcores on any machine: 0 on CPU 0, 1 on the last CPU (the same one on a 1-CPU machine).
last_cpu=$(( $(nproc) - 1 ))
two_lcores="--lcores 0@0,1@$last_cpu --no-pci"

# every_worker JSON WORKERS QPS ACTIVE: each worker verified its share, nothing lost, and the
# workers' figures add up to the totals.
every_worker() {
  /usr/bin/python3 - "$@" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); n, qps, active = map(int, sys.argv[2:5])
w = d['workers']
assert len(w) == n and sorted(x['index'] for x in w) == list(range(n)), w
assert len({x['lcore'] for x in w}) == n, w
assert sum(x['qps'] for x in w) == qps and sum(x['active_qps'] for x in w) == active, w
for x in w:
    assert x['messages'] > 0 and x['bytes'] > 0, x
    assert x['lost'] == 0 and x['duplicated'] == 0 and x['out_of_order'] == 0 and x['corrupted'] == 0 and x['errors'] == 0, x
assert sum(x['messages'] for x in w) == d['messages'] and sum(x['bytes'] for x in w) == d['bytes'], d
assert d['lost'] == 0 and d['duplicated'] == 0 and d['corrupted'] == 0 and d['errors'] == 0 and d['problem'] == '', d
assert d['config']['workers'] == n and d['config']['qps'] == qps and d['config']['active_qps'] == active
PY
}
# refused WHAT ARGS..: droce-gen given ARGS (no EAL arguments) exits 2 with one line on stderr
# containing WHAT, before EAL (so no EAL line); else the exit status and the output, and false.
refused() {
  local what=$1
  shift
  "$gen" -- "$@" > "$out/bad.txt" 2>&1
  local rc=$?
  [ $rc -eq 2 ] && [ "$(wc -l < "$out/bad.txt")" -eq 1 ] && grep -q -- "$what" "$out/bad.txt" ||
    { echo "rc $rc for $*:"; cat "$out/bad.txt"; false; }
}
