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
# 16 examples a shard, GZIP at zlib's level 9; each journal record of the job
# (not of the reference run) waits JOURNAL_DELAY_MS (SEDPACK_TEST_JOURNAL_DELAY_MS,
# src/io/kill_point.h), so that the job is still writing when the signal comes
# however late this script's polls see its progress: a job left to run at full
# speed (about 1,900 shards in a few seconds) was once seen only near its end,
# and finished before the signal reached it.
ARGS="--examples-train 6400 --examples-test 64 --examples-holdout 0 --examples-per-shard 16 --trace-length 2000 --compression GZIP --level 9 --threads 1"
JOURNAL_DELAY_MS=40
# Deadlines of the three waits, each long enough for a loaded 2-core machine
# (the whole job takes about a minute when the machine is idle): the job's
# start, its progress to the stop, and the requeued run to its end. They catch
# a hang; how long the job takes is not what is tested.
START_TIMEOUT=240
PROGRESS_TIMEOUT=300
FINISH_TIMEOUT=400

# shellcheck source=local_slurm.sh
. "$(dirname "$0")/local_slurm.sh"
local_slurm_up sedpack-slurm-resume

# shellcheck disable=SC2086  # ARGS is a list of options
"$BIN" generate "$CONFIG" "$TMP/reference" $ARGS -q || fail "uninterrupted generate failed"

OUT="$TMP/dataset"
JOBID=$(sbatch --parsable --ntasks=2 --time=5 --chdir="$TMP" --output="$TMP/job.out" \
          --job-name=sedpack-slurm-resume --export=ALL,SEDPACK_BIN="$BIN",SEDPACK_REPO="$REPO",GENERATE_ARGS="$ARGS -q",SEDPACK_TEST_JOURNAL_DELAY_MS="$JOURNAL_DELAY_MS" \
          "$REPO/jobs/generate.sbatch" "$CONFIG" "$OUT") || fail "sbatch failed"
JOBID=${JOBID%%;*}
echo "submitted job $JOBID"

wait_job_started "$JOBID" $((SECONDS + START_TIMEOUT))
echo "job $JOBID started ($(job_field "$JOBID" JobState))"

# Wait until rank 0's journal names a few dozen shards (each record is about 1 kB),
# while the job runs.
wait_journal "$JOBID" "$OUT/.sedpack-hpc/jobs/*.r0.journal" 40000 $((SECONDS + PROGRESS_TIMEOUT)) "$TMP/job.out"
scancel --signal=TERM "$JOBID" || fail "scancel --signal=TERM failed"
echo "sent the warning signal to job $JOBID"

# The job requeues itself, runs again and completes.
wait_requeued_job "$JOBID" $((SECONDS + FINISH_TIMEOUT))
echo "---- job output"; cat "$TMP/job.out"; echo "---- end of job output"
if [ "$state" != COMPLETED ]; then
  job_queue_report "$JOBID" >&2
  fail "job $JOBID ended as '${state:-unknown}' or did not finish in ${FINISH_TIMEOUT} s after the stop"
fi
[ "${restarts:-0}" -ge 1 ] || fail "job $JOBID was not requeued (Restarts=${restarts:-?})"
kept=$(sed -n 's/.*resumed job [^:]*: \([0-9]*\) of [0-9]* shards kept.*/\1/p' "$TMP/job.out" | head -1)
[ -n "$kept" ] && [ "$kept" -gt 0 ] || fail "the requeued run kept no shards"

equal_to_reference "$TMP/reference" "$OUT" train test
JOBID=""
echo "PASS: job stopped by its warning signal, requeued (Restarts=$restarts), resumed with $kept shards kept; equal to an uninterrupted run"
