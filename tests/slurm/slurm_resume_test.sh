#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# End-to-end SLURM test of a resumable job: jobs/generate.sbatch (2 tasks) is
# stopped part way as SLURM stops a job at its time limit, requeues itself and
# resumes; the final dataset must equal an uninterrupted run's, value for value.
#
#   slurm_resume_test.sh SEDPACK_BIN REPO_DIR
#
# The stop is the warning signal of `#SBATCH --signal=TERM@120`, sent to the
# tasks with `scancel --signal=TERM` once rank 0's journal names
# some shards (so the test waits for progress, not for a time limit of whole
# minutes). Exits 77 (ctest SKIP_RETURN_CODE) when SLURM cannot be started here.
set -uo pipefail

BIN=$(readlink -f "${1:?usage: $0 SEDPACK_BIN REPO_DIR}")
REPO=$(readlink -f "${2:?usage: $0 SEDPACK_BIN REPO_DIR}")
CONFIG="$REPO/configs/generate_small.json"
# Enough shards (16 examples each, GZIP at zlib's level 9) that the job is still
# writing when the signal comes.
ARGS="--examples-train 30000 --examples-test 64 --examples-holdout 0 --examples-per-shard 16 --trace-length 2000 --compression GZIP --level 9 --threads 1"
JOB_TIMEOUT=150

skip() { echo "SKIP: $*" >&2; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || skip "needs root to start a local SLURM"

alive() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }
started_here=1
for f in /run/munge/munged.pid /run/slurm/slurmctld.pid /run/slurm/slurmd.pid; do
  alive "$f" && started_here=0
done
TMP=$(mktemp -d /tmp/sedpack-slurm-resume.XXXXXX)
JOBID=""
cleanup() {
  if [ -n "$JOBID" ]; then scancel "$JOBID" 2>/dev/null || true; fi
  rm -rf "$TMP"
  if [ "$started_here" = 1 ] && [ "${SEDPACK_SLURM_KEEP:-0}" != 1 ]; then
    "$REPO/scripts/slurm/stop-local-slurm.sh" >/dev/null 2>&1 || true
  fi
}
trap cleanup EXIT
"$REPO/scripts/slurm/start-local-slurm.sh"
case $? in
  0) ;;
  2) skip "local SLURM cannot be started here" ;;
  *) fail "start-local-slurm.sh failed" ;;
esac

# shellcheck disable=SC2086  # ARGS is a list of options
"$BIN" generate "$CONFIG" "$TMP/reference" $ARGS -q || fail "uninterrupted generate failed"

OUT="$TMP/dataset"
JOBID=$(sbatch --parsable --ntasks=2 --time=5 --chdir="$TMP" --output="$TMP/job.out" \
          --job-name=sedpack-slurm-resume --export=ALL,SEDPACK_BIN="$BIN",SEDPACK_REPO="$REPO",GENERATE_ARGS="$ARGS -q" \
          "$REPO/jobs/generate.sbatch" "$CONFIG" "$OUT") || fail "sbatch failed"
JOBID=${JOBID%%;*}
echo "submitted job $JOBID"

# Wait until rank 0's journal names a few dozen shards (each record is about 1 kB).
journal=""
deadline=$((SECONDS + JOB_TIMEOUT))
while [ $SECONDS -lt $deadline ]; do
  journal=$(ls "$OUT"/.sedpack-hpc/jobs/*.r0.journal 2>/dev/null | head -1)
  if [ -n "$journal" ] && [ "$(stat -c %s "$journal" 2>/dev/null || echo 0)" -gt 40000 ]; then break; fi
  sleep 0.2
done
[ -n "$journal" ] || { cat "$TMP/job.out" >&2; fail "the job wrote no journal"; }
scancel --signal=TERM "$JOBID" || fail "scancel --signal=TERM failed"
echo "sent the warning signal to job $JOBID"

# The job requeues itself, runs again and completes.
state=""
while [ $SECONDS -lt $deadline ]; do
  info=$(scontrol -o show job "$JOBID" 2>/dev/null)
  state=$(sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' <<<"$info")
  restarts=$(sed -n 's/.*Restarts=\([0-9]*\).*/\1/p' <<<"$info")
  case "$state" in
    COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|BOOT_FAIL|DEADLINE) break ;;
  esac
  # slurmctld holds a requeued batch job back (Reason=BeginTime, about two
  # minutes); the test lets it start at once, as an operator could.
  if [ "$state" = PENDING ] && [ "${restarts:-0}" -ge 1 ] && grep -q "Reason=BeginTime" <<<"$info"; then
    scontrol update JobId="$JOBID" StartTime=now || fail "scontrol update StartTime=now failed"
  fi
  sleep 1
done
echo "---- job output"; cat "$TMP/job.out"; echo "---- end of job output"
[ "$state" = COMPLETED ] || fail "job $JOBID ended as '${state:-unknown}' or did not finish in ${JOB_TIMEOUT}s"
[ "${restarts:-0}" -ge 1 ] || fail "job $JOBID was not requeued (Restarts=${restarts:-?})"
kept=$(sed -n 's/.*resumed job [^:]*: \([0-9]*\) of [0-9]* shards kept.*/\1/p' "$TMP/job.out" | head -1)
[ -n "$kept" ] && [ "$kept" -gt 0 ] || fail "the requeued run kept no shards"

for split in train test; do
  "$BIN" cat "$TMP/reference" -s $split > "$TMP/a.jsonl" || fail "cat reference"
  "$BIN" cat "$OUT" -s $split > "$TMP/b.jsonl" || fail "cat resumed"
  cmp -s "$TMP/a.jsonl" "$TMP/b.jsonl" || fail "$split: the resumed dataset differs from an uninterrupted run"
done
"$BIN" verify "$OUT" > "$TMP/verify.out" || fail "verify of the resumed dataset"
if grep -q "resumable_job\|orphan" "$TMP/verify.out"; then fail "verify reports leftovers"; fi
JOBID=""
echo "PASS: job stopped by its warning signal, requeued (Restarts=$restarts), resumed with $kept shards kept; equal to an uninterrupted run"
