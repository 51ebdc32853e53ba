#!/usr/bin/env bash
# Builds droce three times (gcc release-with-asserts with the app tests only, clang ASan+UBSan with
# every unit test and the fuzz targets, clang TSan with the threaded tests only) and runs every
# unit test and fuzz target under ASan+UBSan, the threaded tests under TSan, and every app test
# once: those of the suite 'loaded' in the gcc build beside two CPU hogs (the loaded pass), the
# gcc-only ones (suite 'plain': the kernel PMDs, vhost-user peer death) in the gcc build, the other
# app tests (suite 'apps') under ASan+UBSan; then the interop suite, the demo (scripts/demo.sh
# --short) and examples/ (examples/run.sh, against the gcc build's installed package) on the gcc
# build; ends with one "N passed, N failed" line. Exit status 0 only if all pass.
set -uo pipefail
cd "$(dirname "$0")/.."

if [ "${DROCE_SKIP_SETUP:-0}" != 1 ]; then
  bash scripts/setup.sh || { echo "setup failed: cannot build"; echo "0 passed, 1 failed"; exit 1; }
fi

JOBS=${DROCE_JOBS:-$(nproc)}
FUZZ_SECONDS=${DROCE_FUZZ_SECONDS:-30}
status=0
builds=()
build_failures=0
failed_steps=()  # builds, the demo and examples/ that failed: named again in the summary
phase_times=()   # "name seconds" of each step, printed before the summary (CI's budget is 50 min)
# timed NAME COMMAND...: runs it, records how long it took.
timed() {
  local name=$1 t0=$SECONDS rc=0; shift
  "$@" || rc=$?
  phase_times+=("$name: $(( SECONDS - t0 )) s")
  return $rc
}

# configure DIR [meson options...]: fresh or reconfigure, so a reused tree picks up option changes.
configure() {
  local dir=$1; shift
  if [ -f "$dir/build.ninja" ]; then
    meson setup --reconfigure "$dir" "$@" >/dev/null
  else
    meson setup "$dir" "$@" >/dev/null
  fi
}

# run_build NAME DIR "EXTRA MESON TEST ARGS" [meson options...]
run_build() {
  local name=$1 dir=$2 test_args=$3; shift 3
  echo "== $name: configure + build ($dir) =="
  if ! configure "$dir" "$@" || ! timed "$name (compile)" ninja -C "$dir" -j "$JOBS"; then
    echo "== $name: BUILD FAILED =="
    status=1
    build_failures=$((build_failures + 1))
    failed_steps+=("$name: configure or build")
    return
  fi
  echo "== $name: tests =="
  builds+=("$dir")
  # shellcheck disable=SC2086
  timed "$name (tests)" meson test -C "$dir" --print-errorlogs --num-processes "$JOBS" $test_args || status=1
}

# The interop suite's guest image (scripts/rxe-lab/build-image.sh: debootstrap from the Debian
# archive, 2-3 minutes of mostly downloading and unpacking) is built in the background of the gcc
# compile and the tests after it, instead of in the interop suite's own time: the suite's call of
# the same script then finds it cached and takes a second. A failure here is reported by the
# suite, which calls the script again and fails loud if it still cannot build the image.
image_log=$(mktemp)
(timeout 1200 bash scripts/rxe-lab/build-image.sh > "$image_log" 2>&1; echo "exit $?" >> "$image_log") &
image_pid=$!

# The Soft-RoCE interop suite (a QEMU guest, several minutes) runs once, in the gcc build, after
# the loaded pass (below).
# pkgconfig.relocatable: a default, given here too so that a reused build tree has it (examples/run.sh).
# The app tests (suite 'apps', two processes or more each, most of CI's test time) run once: in
# this build's loaded pass (suite 'loaded', below) or, the others, in the ASan+UBSan build, where
# a memory error or undefined behaviour in the apps' code shows. Running each in both builds cost
# about 10 minutes of CI's 50 (the run in both took 3,572 s in all on the CI machine). The test
# pass right after this build runs the app tests that exist in a plain build only (suite 'plain').
# -Dunit_tests=false: this build compiles no unit test suite (tests/wire ... tests/engine): they run
# in the ASan+UBSan build, where a memory error shows too, and compiling them here cost about
# 350 s of the 50 minutes (their 53 engine test files alone 430 s of CPU) for 70 s of tests that
# the other build runs again. The apps, the benchmarks and the app tests' own helpers are built.
# -g1 (line tables and function names, no variables' locations): a crash's backtrace still names
# file and line, and the compile is about a tenth shorter than with -g's full debug information.
run_build "gcc build" build "--no-suite interop --no-suite apps" -Dbuildtype=debugoptimized -Dcpp_args=-g1 -Dc_args=-g1 \
  -Dwerror=true -Dfuzz=false -Dpkgconfig.relocatable=true -Dunit_tests=false

# ---- The loaded pass: CI machines are busy, so the app tests that pair processes over the TCP
# exchange, net_memif and telemetry (the ones whose waits a busy machine stretches) run on
# the gcc build beside two CPU hogs, `python3 -c "while True: pass"` twice, the standard the tests
# are written to hold under. A test that holds only on an idle machine turns CI red here, on the
# developer's machine. These tests carry the suite 'loaded' (tests/apps/meson.build) and run only
# here: the plain pass above runs the suite 'plain' only, and the ASan+UBSan build leaves these out.
# Its results are counted in the summary (meson-logs/loaded.json). ----
hog_pids=()
stop_hogs() {
  local p
  for p in "${hog_pids[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${hog_pids[@]}"; do wait "$p" 2>/dev/null; done
  hog_pids=()
}
# Every way out of this script stops them; and each hog ends by itself once this shell is gone
# (its parent changes), so not even a SIGKILL of this script leaves one spinning.
trap stop_hogs EXIT
trap 'stop_hogs; exit 130' INT
trap 'stop_hogs; exit 143' TERM
start_hogs() {
  for _ in 1 2; do
    python3 -c '
import os
parent = os.getppid()
while os.getppid() == parent:
    for _ in range(100000):
        pass' &
    hog_pids+=($!)
  done
}
rm -f build/meson-logs/loaded.json
if [[ " ${builds[*]} " == *" build "* ]]; then
  echo "== gcc build: loaded pass, beside two CPU hogs: the suite 'loaded' =="
  start_hogs
  timed "loaded pass" meson test -C build --no-rebuild --print-errorlogs --num-processes "$JOBS" --logbase loaded \
    --suite loaded || status=1
  stop_hogs
  echo "== gcc build: loaded pass done, hogs stopped =="
fi

# The interop suite: a QEMU guest under TCG for several minutes, in the foreground. It ran in the
# background of the steps after it once (stop 49), and cost more than it saved: the guest's emulated
# CPU and droce's poller take both cores, so the ASan build's compile beside it took twice as long
# (580 s alone, 1197 s beside it). Its results (meson-logs/interop.json) join the summary.
rm -f build/meson-logs/interop.json
wait "$image_pid" 2>/dev/null
echo "== the guest image, built in the background: $(tail -n 1 "$image_log") =="
rm -f "$image_log"
if [[ " ${builds[*]} " == *" build "* ]]; then
  echo "== gcc build: the interop suite (Soft-RoCE in a QEMU guest) =="
  timed "interop" meson test -C build --no-rebuild --print-errorlogs --num-processes 1 --logbase interop --suite interop ||
    status=1
fi

# The README's first command, in its short mode, on the gcc build: it must run to its end.
demo_failures=0
demo_passed=0
if [ -f build/build.ninja ]; then
  echo "== scripts/demo.sh --short (the README's first command) =="
  if DROCE_SKIP_SETUP=1 timed "demo" timeout 900 bash scripts/demo.sh --short > build/demo.log 2>&1; then
    echo "demo: ran to its end (log: build/demo.log)"
    demo_passed=1
  else
    echo "demo: FAILED, last lines of build/demo.log:"
    tail -n 30 build/demo.log | sed 's/^/  /'
    failed_steps+=("scripts/demo.sh --short (build/demo.log)")
    demo_failures=1
    status=1
  fi
fi
# The package as a service sees it: the gcc build installed into a scratch --destdir, examples/
# built there with make and pkg-config, and its service and client run against each other.
examples_failures=0
examples_passed=0
if [ -f build/build.ninja ]; then
  echo "== examples/run.sh (examples/ built from the installed package) =="
  if timed "examples" timeout 300 bash examples/run.sh build > build/examples.log 2>&1; then
    tail -n 1 build/examples.log
    examples_passed=1
  else
    echo "examples: FAILED, last lines of build/examples.log:"
    tail -n 30 build/examples.log | sed 's/^/  /'
    failed_steps+=("examples/run.sh (build/examples.log)")
    examples_failures=1
    status=1
  fi
fi
# The sanitizer builds keep line tables only (-gline-tables-only): their reports name file and line,
# and the compile is about a tenth shorter than with full debug information.
# Every unit test and fuzz target, and the app tests the gcc build does not run (suite 'apps' less
# 'loaded').
CC=clang CXX=clang++ run_build "clang ASan+UBSan build" build-asan "--no-suite interop --no-suite loaded" \
  -Dbuildtype=debug -Dcpp_args=-gline-tables-only -Dc_args=-gline-tables-only \
  -Dwerror=true -Db_sanitize=address,undefined -Db_lundef=false -Dbench=false -Dunit_tests=true \
  -Dfuzz=true -Dfuzz_seconds="$FUZZ_SECONDS"

# ThreadSanitizer over the threaded tests only (the workers' binary: workers on EAL lcores
# steering frames through shared rings, one capture file fed by two lcores), so the step stays a
# few minutes on two cores. The suppressions (tests/engine/workers/tsan.supp) name DPDK's rte_ring
# internals only, never our code. The net_memif case is left out here: its connection handling
# runs on EAL's interrupt thread inside uninstrumented libraries (rte_malloc, the PMD's sockets),
# whose locks TSan cannot see and whose frames it cannot name for a precise suppression.
echo "== clang TSan build: configure + build (build-tsan, workers tests only) =="
if CC=clang CXX=clang++ configure build-tsan -Dbuildtype=debug -Dcpp_args=-gline-tables-only -Dc_args=-gline-tables-only -Dwerror=true -Db_sanitize=thread -Db_lundef=false \
     -Dbench=false -Dfuzz=false -Dunit_tests=true &&
   timed "clang TSan build (compile)" ninja -C build-tsan -j "$JOBS" tests/engine/workers/engine_workers_tests; then
  echo "== clang TSan build: tests =="
  builds+=(build-tsan)
  timed "clang TSan build (tests)" meson test -C build-tsan --no-rebuild --print-errorlogs --test-args '~[memif]' engine_workers || status=1
else
  echo "== clang TSan build: BUILD FAILED =="
  status=1
  build_failures=$((build_failures + 1))
  failed_steps+=("clang TSan build: configure or build")
fi

# Where the time went (setup included in the total), then the slowest tests: CI has a budget.
echo "== time: ${SECONDS} s in all =="
printf '  %s\n' "${phase_times[@]}"
# One summary over all builds, from meson's machine-readable logs.
FAILED_STEPS=$(printf '%s\n' "${failed_steps[@]}") BUILD_FAILURES=$((build_failures + demo_failures + examples_failures)) \
  DEMO_PASSED=$((demo_passed + examples_passed)) python3 - "${builds[@]}" <<'PY'
import json, os, sys
skipped = 0
failed = int(os.environ.get("BUILD_FAILURES", "0"))  # a failed build or demo counts as a failed test
passed = int(os.environ.get("DEMO_PASSED", "0"))  # the demo ran to its end, examples/ passed
loaded = 0
failures = []  # (build, log, test name, result, seconds, last lines of its output)
for d in sys.argv[1:]:
    # loaded.json: the gcc build's loaded pass; interop.json: its interop suite
    for log in ("testlog.json", "loaded.json", "interop.json"):
        try:
            lines = open(f"{d}/meson-logs/{log}").read().splitlines()
        except OSError:
            continue
        for line in lines:
            t = json.loads(line)
            r = t.get("result")
            loaded += log == "loaded.json"
            if r in ("OK", "EXPECTEDFAIL"): passed += 1
            elif r == "SKIP": skipped += 1
            else:
                failed += 1
                out = (t.get("stdout") or "") + (t.get("stderr") or "")
                failures.append((d, log, t.get("name"), r, t.get("duration", 0), out.splitlines()[-25:]))
durations = []  # (seconds, build, test) of every test outside the loaded pass
for d in sys.argv[1:]:
    for log in ("testlog.json", "interop.json"):
        try:
            tests = [json.loads(l) for l in open(f"{d}/meson-logs/{log}")]
        except OSError:
            continue
        durations += [(t.get("duration", 0), d, t.get("name")) for t in tests]
print("slowest tests: " + ", ".join(f"{n} ({d}) {s:.0f} s" for s, d, n in sorted(durations, reverse=True)[:8]))
# The failures again, last: a CI log is often read from its tail only, and meson's error logs
# scroll far above it.
for step in filter(None, os.environ.get("FAILED_STEPS", "").splitlines()):
    print(f"FAILED: {step}")
for d, log, name, r, secs, tail in failures:
    where = "loaded pass" if log == "loaded.json" else "tests"
    print(f"FAILED: {d} ({where}): {name}: {r} after {secs:.0f} s; its last lines:")
    for l in tail:
        print(f"  | {l[:200]}")
print(f"loaded pass: {loaded} of the results below ran beside two CPU hogs")
print(f"{passed} passed, {failed} failed, {skipped} skipped")
PY
exit $status
