# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Sourced by the SLURM tests: the local single-node SLURM they share, their
# temporary folder and their clean-up, and the wait for a job that requeues
# itself. Needs REPO (the source tree). Exits 77 (ctest SKIP_RETURN_CODE) only
# where SLURM cannot be started here.

skip() { echo "SKIP: $*" >&2; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }

# local_slurm_up NAME: SLURM up (started here unless it runs already), TMP a
# fresh /tmp/NAME.XXXXXX; at exit the jobs in JOBID are cancelled, TMP goes and
# the daemons stop if this test started them (SEDPACK_SLURM_KEEP=1 keeps them).
local_slurm_up() {
  [ "$(id -u)" -eq 0 ] || skip "needs root to start a local SLURM (munged, slurmctld, slurmd)"
  local f rc
  started_here=1
  for f in /run/munge/munged.pid /run/slurm/slurmctld.pid /run/slurm/slurmd.pid; do
    if [ -s "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null; then started_here=0; fi
  done
  TMP=$(mktemp -d "/tmp/$1.XXXXXX")
  JOBID=""
  trap local_slurm_cleanup EXIT
  "$REPO/scripts/slurm/start-local-slurm.sh"
  rc=$?
  case $rc in
    0) ;;
    2) skip "local SLURM cannot be started here (start-local-slurm.sh exit 2, see above)" ;;
    *) fail "start-local-slurm.sh failed (exit $rc)" ;;
  esac
}

local_slurm_cleanup() {
  # shellcheck disable=SC2086  # JOBID may hold several job ids
  if [ -n "$JOBID" ]; then scancel $JOBID 2>/dev/null || true; fi
  rm -rf "$TMP"
  if [ "$started_here" = 1 ] && [ "${SEDPACK_SLURM_KEEP:-0}" != 1 ]; then
    "$REPO/scripts/slurm/stop-local-slurm.sh" >/dev/null 2>&1 || true
  fi
}

# job_field ID FIELD: FIELD (JobState, Reason, Restarts, ...) of job ID as the
# controller has it now ("" once it has forgotten the job). There is no
# accounting database here (AccountingStorageType=none), so no sacct: the
# controller keeps an ended job for MinJobAge (300 s), longer than any wait here.
job_field() {
  scontrol -o show job "$1" 2>/dev/null | sed -n "s/.* $2=\([^ ]*\).*/\1/p" | head -1
}

# job_queue_report ID: why job ID waits, for a failure message: its state and
# reason, every job of the local SLURM (another user's job holds the node's
# CPUs: Reason=Resources) and the node's state.
job_queue_report() {
  echo "job $1: JobState=$(job_field "$1" JobState) Reason=$(job_field "$1" Reason)"
  echo "squeue:"; squeue -a -o "  %.10i %.9u %.20j %.10T %.8M %R" 2>&1
  echo "sinfo:"; sinfo -N -o "  %N %T %C %E" 2>&1
}

# wait_job_started ID DEADLINE: returns once job ID has left PENDING (it runs,
# or already ended); fails, saying what holds it back, if it is still pending
# when SECONDS reaches DEADLINE. A loaded machine or another user's job on the
# one local node can keep it queued for a while: the deadline is generous, and
# the failure says which it was.
wait_job_started() {
  local s
  while :; do
    s=$(job_field "$1" JobState)
    case "$s" in
      PENDING|CONFIGURING|"") ;;
      *) return 0 ;;
    esac
    if [ $SECONDS -ge "$2" ]; then
      job_queue_report "$1" >&2
      fail "job $1 did not start: still ${s:-unknown to the controller} at the deadline (see above)"
    fi
    sleep 1
  done
}

# wait_journal JOB GLOB MIN_BYTES DEADLINE OUTPUTS...: polls until the first
# file matching GLOB (a job's journal) holds more than MIN_BYTES while job JOB
# runs; sets `size`. Fails, showing OUTPUTS (the job's output files), if the
# job leaves RUNNING first (nothing left to stop) or SECONDS reaches DEADLINE.
wait_journal() {
  local job=$1 glob=$2 min=$3 deadline=$4 journal s
  shift 4
  size=0
  while :; do
    # shellcheck disable=SC2086  # GLOB is a pattern on purpose
    journal=$(ls $glob 2>/dev/null | head -1)
    size=$( [ -n "$journal" ] && stat -c %s "$journal" 2>/dev/null || echo 0)
    [ "$size" -gt "$min" ] && return 0
    s=$(job_field "$job" JobState)
    if [ "$s" != RUNNING ]; then
      cat "$@" >&2
      fail "job $job is $s before its journal named enough shards (${size} bytes): nothing left to stop"
    fi
    if [ $SECONDS -ge "$deadline" ]; then
      cat "$@" >&2
      fail "job $job runs but its journal has only ${size} bytes at the deadline"
    fi
    sleep 0.2
  done
}

# wait_requeued_job ID DEADLINE: polls until the job ends (or SECONDS reaches
# DEADLINE); sets state and restarts. slurmctld holds a requeued batch job back
# (Reason=BeginTime, about two minutes); this lets it start at once, as an
# operator could, but only once the node is idle again: a start forced while
# slurmd still cleans up the stopped run's step finds the job's credential
# revoked, and slurmctld then kills the job ("Killing non-startable batch job").
wait_requeued_job() {
  local info node
  state=""
  restarts=0
  while [ $SECONDS -lt "$2" ]; do
    info=$(scontrol -o show job "$1" 2>/dev/null)
    state=$(sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' <<<"$info")
    restarts=$(sed -n 's/.*Restarts=\([0-9]*\).*/\1/p' <<<"$info")
    case "$state" in
      COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|BOOT_FAIL|DEADLINE) return ;;
    esac
    if [ "$state" = PENDING ] && [ "${restarts:-0}" -ge 1 ] && grep -q "Reason=BeginTime" <<<"$info"; then
      node=$(sinfo -h -N -o %T 2>/dev/null | head -1)
      if [ "$node" = idle ]; then
        sleep 2  # and slurmd's own clean-up of the step after it
        scontrol update JobId="$1" StartTime=now || fail "scontrol update StartTime=now failed"
      fi
    fi
    sleep 1
  done
}

# equal_to_reference REFERENCE OUT SPLIT...: OUT holds the same examples as
# REFERENCE, split by split (`sedpack cat`, needs BIN), and verifies without
# leftovers (no resumable job, no orphan).
equal_to_reference() {
  local ref=$1 out=$2 split
  shift 2
  for split in "$@"; do
    "$BIN" cat "$ref" -s "$split" > "$TMP/a.jsonl" || fail "cat of the reference's $split"
    "$BIN" cat "$out" -s "$split" > "$TMP/b.jsonl" || fail "cat of the resumed $split"
    cmp -s "$TMP/a.jsonl" "$TMP/b.jsonl" || fail "$split: the resumed dataset differs from an uninterrupted run"
  done
  "$BIN" verify "$out" > "$TMP/verify.out" || fail "verify of the resumed dataset"
  if grep -q "resumable_job\|orphan" "$TMP/verify.out"; then fail "verify reports leftovers"; fi
}
