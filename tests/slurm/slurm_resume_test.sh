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

# shellcheck source=local_slurm.sh
. "$(dirname "$0")/local_slurm.sh"
local_slurm_up sedpack-slurm-resume

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
wait_requeued_job "$JOBID" "$deadline"
echo "---- job output"; cat "$TMP/job.out"; echo "---- end of job output"
[ "$state" = COMPLETED ] || fail "job $JOBID ended as '${state:-unknown}' or did not finish in ${JOB_TIMEOUT}s"
[ "${restarts:-0}" -ge 1 ] || fail "job $JOBID was not requeued (Restarts=${restarts:-?})"
kept=$(sed -n 's/.*resumed job [^:]*: \([0-9]*\) of [0-9]* shards kept.*/\1/p' "$TMP/job.out" | head -1)
[ -n "$kept" ] && [ "$kept" -gt 0 ] || fail "the requeued run kept no shards"

equal_to_reference "$TMP/reference" "$OUT" train test
JOBID=""
echo "PASS: job stopped by its warning signal, requeued (Restarts=$restarts), resumed with $kept shards kept; equal to an uninterrupted run"
