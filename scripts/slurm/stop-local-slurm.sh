#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Stop the daemons started by scripts/slurm/start-local-slurm.sh (slurmd, slurmctld, munged),
# by the process ids in their pid files. Leaves packages, configuration and state in place.
# Idempotent: stopping what is not running is not an error. --keep-munge leaves munged up.
set -uo pipefail

log() { echo "stop-local-slurm: $*"; }

stop_pidfile() {  # pidfile, expected command name
  local f=$1 name=$2 pid
  if [ ! -s "$f" ]; then log "$name not running (no $f)"; return 0; fi
  pid=$(cat "$f" 2>/dev/null)
  if [ -z "$pid" ] || ! kill -0 "$pid" 2>/dev/null ||
     [ "$(cat "/proc/$pid/comm" 2>/dev/null)" != "$name" ]; then
    log "$name not running (stale $f)"; rm -f "$f"; return 0
  fi
  log "stopping $name (pid $pid)"
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  if kill -0 "$pid" 2>/dev/null; then log "$name still running; sending SIGKILL"; kill -9 "$pid" 2>/dev/null || true; fi
  rm -f "$f"
}

stop_pidfile /run/slurm/slurmd.pid slurmd
stop_pidfile /run/slurm/slurmctld.pid slurmctld
if [ "${1:-}" != "--keep-munge" ]; then stop_pidfile /run/munge/munged.pid munged; fi
