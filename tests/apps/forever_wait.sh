# Sourced by the app checks (check_gen.sh, check_echo.sh, check_perf.sh): the check that a server
# told to wait for its client forever (a timeout of 0, as perftest's server waits) still waits where
# one given a 1 s bound has given up, and that Ctrl-C still ends the forever wait at once.
#
# forever_wait_check APP BOUND_PID BOUND_OUT FOREVER_PID FOREVER_OUT READY
#   APP: the app's name as its lines start (droce-gen ...); BOUND_PID/FOREVER_PID: the two servers,
#   started together, the first with a 1 s bound, the second with 0; *_OUT: their output files;
#   READY: a command that succeeds once the forever server listens. Each server gets a 90 s
#   watchdog. Once the bounded one has ended and the other has listened for 3 s, the other must
#   still be waiting; SIGINT must then end it with exit 1 within 12 s, saying interrupted. Reports
#   through the caller's check().
forever_wait_check() {
  local app=$1 bpid=$2 bout=$3 fpid=$4 fout=$5 ready=$6 p
  for p in "$bpid" "$fpid"; do
    # The watchdog kills only its own server (the pid may be reused by then: its output file is
    # this check's own, open as the server's stdout).
    (
      if ! timeout 90 tail --pid="$p" -f /dev/null; then
        out_of_p=$(readlink "/proc/$p/fd/1")
        if [ "$out_of_p" = "$(readlink -f "$bout")" ] || [ "$out_of_p" = "$(readlink -f "$fout")" ]; then kill -KILL "$p"; fi
      fi
    ) > /dev/null 2>&1 &
  done
  for _ in $(seq 600); do eval "$ready" && break; sleep 0.1; done
  local listened=$SECONDS brc frc alive t0 took
  wait "$bpid"
  brc=$?
  while [ $(( SECONDS - listened )) -lt 3 ]; do sleep 0.2; done
  kill -0 "$fpid" 2>/dev/null
  alive=$?
  t0=$SECONDS
  kill -INT "$fpid"
  wait "$fpid"
  frc=$?
  took=$(( SECONDS - t0 ))
  check "a wait of 0: the server still waits after the bounded one gave up, then Ctrl-C ends it with exit 1 within 12 s saying interrupted (took ${took} s)" \
    "[ $brc -eq 1 ] && grep -q 'no client connected within 1000 ms' '$bout' && [ $alive -eq 0 ] && [ $frc -eq 1 ] &&
     [ $took -le 12 ] && grep -q '$app: interrupted' '$fout' || { tail -n 3 '$bout' '$fout'; false; }"
}
