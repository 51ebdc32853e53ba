#!/bin/bash
# Stops the rxe lab: powers the guest off (sysrq through the job agent), then ends QEMU and any
# placeholder droce by the PIDs boot.sh recorded, each step with a timeout.
# usage: scripts/rxe-lab/down.sh
set -uo pipefail
source "$(dirname "$0")/lib.sh"
if q=$(lab_qemu_pid); then
  [ -d "$LAB_JOBS" ] && lab_gstart 'echo o > /proc/sysrq-trigger' > /dev/null
  lab_wait_for 5 eval '! lab_alive '"$q" || true
  lab_stop_pid "$q" 5
  lab_log "guest stopped (qemu pid $q)"
fi
[ -f "$LAB_RUN/holder.pid" ] && lab_stop_pid "$(cat "$LAB_RUN/holder.pid")" 3
rm -f "$LAB_RUN/qemu.pid" "$LAB_RUN/holder.pid" "$LAB_RUN/vhost.sock" "$LAB_RUN/holder.sock" "$LAB_RUN/monitor.sock"
exit 0
