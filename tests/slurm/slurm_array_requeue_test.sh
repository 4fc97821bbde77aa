#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# End-to-end SLURM test of the job identity of an append: a job array
# (jobs/append.sbatch, 2 tasks, no --seed, no --job-id) appends into one
# dataset. A task's job is its array job and task ids with its parameters
# (docs/cli.md, "Jobs"), so:
#   - task 1, requeued while it writes (`scontrol requeue`), resumes its own
#     journal as the same job and ends with its examples in the dataset once;
#   - task 0, requeued after it completed, appends nothing ("nothing appended:
#     job <its job id> ...") and still ends COMPLETED (exit 0);
#   - the dataset ends with exactly base + 2N train examples and verifies clean.
#
#   slurm_array_requeue_test.sh SEDPACK_BIN REPO_DIR
#
# Exits 77 (ctest SKIP_RETURN_CODE) when SLURM cannot be started here.
set -uo pipefail

BIN=$(readlink -f "${1:?usage: $0 SEDPACK_BIN REPO_DIR}")
REPO=$(readlink -f "${2:?usage: $0 SEDPACK_BIN REPO_DIR}")
CONFIG="$REPO/configs/generate_small.json"
N=1600
# The base dataset's structure (an append keeps it): 16 examples a shard, GZIP.
STRUCTURE="--examples-per-shard 16 --compression GZIP"
# A pause after each journal record (SEDPACK_TEST_JOURNAL_DELAY_MS,
# src/io/kill_point.h): task 1 is still writing when the requeue reaches it,
# however late this script's polls see it.
# No -q: each run's summary names its job ("(job jXXXXXXXXXXX)").
ARGS="--examples-train $N --examples-test 0 --examples-holdout 0 --threads 1"
JOURNAL_DELAY_MS=40
START_TIMEOUT=240
PROGRESS_TIMEOUT=300
FINISH_TIMEOUT=400

# shellcheck source=local_slurm.sh
. "$(dirname "$0")/local_slurm.sh"
local_slurm_up sedpack-slurm-array-requeue

train_count() {
  "$BIN" info "$1" --json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["splits"]["train"]["examples"])' 2>/dev/null
}

OUT="$TMP/dataset"
# shellcheck disable=SC2086  # STRUCTURE is a list of options
"$BIN" generate "$CONFIG" "$OUT" --examples-train 64 --examples-test 16 --examples-holdout 0 $STRUCTURE -q \
  || fail "generate of the base dataset failed"
base=$(train_count "$OUT")
[ -n "$base" ] || fail "sedpack info --json gives no train count for the base dataset"

# %1: one task at a time, so that while task 1 runs the only journal is its own.
ARRAY=$(sbatch --parsable --array=0-1%1 --time=5 --chdir="$TMP" --open-mode=append \
          --output="$TMP/job-%A_%a.out" --job-name=sedpack-array-requeue \
          --export=ALL,SEDPACK_BIN="$BIN",SEDPACK_REPO="$REPO",SEED_BASE=,APPEND_ARGS="$ARGS",SEDPACK_TEST_JOURNAL_DELAY_MS="$JOURNAL_DELAY_MS" \
          "$REPO/jobs/append.sbatch" "$OUT") || fail "sbatch failed"
ARRAY=${ARRAY%%;*}
JOBID="$ARRAY"
T0="${ARRAY}_0"
T1="${ARRAY}_1"
echo "submitted array job $ARRAY"

wait_job_started "$T1" $((SECONDS + START_TIMEOUT))
echo "task 1 started ($(job_field "$T1" JobState))"

# Wait until task 1's journal names a few dozen shards while it runs.
wait_journal "$T1" "$OUT/.sedpack-hpc/jobs/*.journal" 20000 $((SECONDS + PROGRESS_TIMEOUT)) "$TMP"/job-*.out
scontrol requeue "$T1" || fail "scontrol requeue $T1 failed"
echo "requeued task 1 while it was writing (journal ${size} bytes)"

deadline=$((SECONDS + FINISH_TIMEOUT))
wait_requeued_job "$T0" "$deadline"
[ "$state" = COMPLETED ] || { cat "$TMP"/job-*.out >&2; job_queue_report "$T0" >&2; fail "task 0 ended as '${state:-unknown}'"; }
wait_requeued_job "$T1" "$deadline"
echo "---- task 1 output"; cat "$TMP/job-${ARRAY}_1.out"; echo "---- end"
if [ "$state" != COMPLETED ]; then
  job_queue_report "$T1" >&2
  fail "task 1 ended as '${state:-unknown}' or did not finish in ${FINISH_TIMEOUT} s after the requeue"
fi
[ "${restarts:-0}" -ge 1 ] || fail "task 1 was not requeued (Restarts=${restarts:-?})"
# job_of FILE: the job id in the first run's summary line of a task's output.
job_of() { sed -n 's/^generated .* (job \([a-z0-9]*\))$/\1/p' "$1" | head -1; }
job1=$(job_of "$TMP/job-${ARRAY}_1.out")
[ -n "$job1" ] || fail "task 1's output has no summary naming its job"
kept=$(sed -n "s/.*resumed job $job1: \([0-9]*\) of [0-9]* shards kept.*/\1/p" "$TMP/job-${ARRAY}_1.out" | head -1)
[ -n "$kept" ] && [ "$kept" -gt 0 ] || fail "the requeued task 1 did not resume its journal as job $job1 with shards kept"

count=$(train_count "$OUT")
[ "$count" = $((base + 2 * N)) ] || fail "train has $count examples, want $base + 2 x $N = $((base + 2 * N))"
echo "both tasks appended once: train $base + 2 x $N = $count"

# Task 0 again, after it completed: the same identity, so nothing is appended.
scontrol requeue "$T0" || fail "scontrol requeue $T0 (a completed task) failed"
wait_requeued_job "$T0" $((SECONDS + FINISH_TIMEOUT))
echo "---- task 0 output"; cat "$TMP/job-${ARRAY}_0.out"; echo "---- end"
[ "$state" = COMPLETED ] || { job_queue_report "$T0" >&2; fail "the requeued completed task 0 ended as '${state:-unknown}'"; }
[ "${restarts:-0}" -ge 1 ] || fail "task 0 was not requeued (Restarts=${restarts:-?})"
job0=$(job_of "$TMP/job-${ARRAY}_0.out")
[ -n "$job0" ] && [ "$job0" != "$job1" ] || fail "task 0's job '$job0' is missing or the same as task 1's"
grep -q "^nothing appended: job $job0 " "$TMP/job-${ARRAY}_0.out" \
  || fail "the requeued task 0 did not say 'nothing appended: job $job0 ...'"
count2=$(train_count "$OUT")
[ "$count2" = "$count" ] || fail "the rerun of a completed task changed train from $count to $count2"

"$BIN" verify "$OUT" > "$TMP/verify.out" || { cat "$TMP/verify.out" >&2; fail "verify of the dataset"; }
if grep -q "resumable_job\|orphan" "$TMP/verify.out"; then cat "$TMP/verify.out" >&2; fail "verify reports leftovers"; fi
JOBID=""
echo "PASS: task 1 requeued while writing resumed as job $job1 ($kept shards kept); task 0 (job $job0) rerun after its commit appended nothing; train = $count"
