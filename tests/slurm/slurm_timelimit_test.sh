#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# End-to-end: a 2-task import-hdf5 job (jobs/import-hdf5.sbatch) whose time
# limit is shorter than the job. SLURM itself stops it: the warning signal
# (--signal=TERM@30 with --time=1) reaches the tasks before the limit, they
# stop keeping their finished shards, the job requeues itself and resumes on
# its next start, as often as it takes. The test requires at least one requeue,
# a resumed start that kept shards, no TIMEOUT, and a dataset equal to an
# uninterrupted import, value for value.
#
#   slurm_timelimit_test.sh SEDPACK_BIN REPO_DIR MAKE_H5_FIXTURE IMPORT_CONFIG
#
# The capture is small; SEDPACK_TEST_JOURNAL_DELAY_MS (src/io/kill_point.h)
# stretches the job to about 100 s so that it outlasts its one-minute limit.
# Exits 77 (ctest SKIP_RETURN_CODE) only where SLURM cannot be started here.
set -uo pipefail

BIN=$(readlink -f "${1:?usage: $0 SEDPACK_BIN REPO_DIR MAKE_H5 IMPORT_CONFIG}")
REPO=$(readlink -f "${2:?usage: $0 SEDPACK_BIN REPO_DIR MAKE_H5 IMPORT_CONFIG}")
MAKE_H5=$(readlink -f "${3:?usage: $0 SEDPACK_BIN REPO_DIR MAKE_H5 IMPORT_CONFIG}")
MAPPING=$(readlink -f "${4:?usage: $0 SEDPACK_BIN REPO_DIR MAKE_H5 IMPORT_CONFIG}")
JOB_SECONDS="${SEDPACK_SLURM_TIMELIMIT_JOB_SECONDS:-100}"
JOB_TIMEOUT=480

# shellcheck source=local_slurm.sh
. "$(dirname "$0")/local_slurm.sh"
local_slurm_up sedpack-slurm-timelimit

H5="$TMP/capture.h5"
"$MAKE_H5" ascad1 "$H5" trace_len=700 profiling_rows=20000 attack_rows=500 fixed_key=1 float_metadata=1 \
  || fail "cannot write the capture"
# Small shards: many journal records, so that a short wait after each stretches
# the job evenly and a stop lands between two of them.
sed 's/"examples_per_shard": *[0-9]*/"examples_per_shard": 256/' "$MAPPING" > "$TMP/mapping.json" \
  || fail "cannot write the mapping"
MAPPING="$TMP/mapping.json"
ARGS="--threads 1 -q --memory-budget 16"
# shellcheck disable=SC2086  # ARGS is a list of options
"$BIN" import-hdf5 --config "$MAPPING" "$H5" "$TMP/reference" $ARGS || fail "uninterrupted import failed"
shards=$(find "$TMP/reference" -type f ! -name '*.json' ! -path '*/.sedpack-hpc/*' | wc -l)
[ "$shards" -ge 40 ] || fail "the reference import wrote only $shards shards"
# Two tasks journal about shards/2 records each.
delay_ms=$((JOB_SECONDS * 2000 / shards))
echo "capture: $shards shards; each task waits ${delay_ms} ms per journal record (~${JOB_SECONDS} s job)"

OUT="$TMP/dataset"
JOBID=$(sbatch --parsable --ntasks=2 --time=1 --signal=TERM@30 --open-mode=append --chdir="$TMP" \
          --output="$TMP/job.out" --job-name=sedpack-slurm-timelimit \
          --export=ALL,SEDPACK_BIN="$BIN",SEDPACK_REPO="$REPO",IMPORT_ARGS="$ARGS",SEDPACK_TEST_JOURNAL_DELAY_MS="$delay_ms" \
          "$REPO/jobs/import-hdf5.sbatch" "$MAPPING" "$OUT" "$H5") || fail "sbatch failed"
JOBID=${JOBID%%;*}
echo "submitted job $JOBID (time limit 1 min, warning signal 30 s before it)"

wait_requeued_job "$JOBID" $((SECONDS + JOB_TIMEOUT))
echo "---- job output"; cat "$TMP/job.out"; echo "---- end of job output"
[ "$state" = COMPLETED ] || fail "job $JOBID ended as '${state:-unknown}' or did not finish in ${JOB_TIMEOUT}s"
[ "${restarts:-0}" -ge 1 ] || fail "job $JOBID was not requeued (Restarts=${restarts:-?})"
grep -q "stopped before the time limit" "$TMP/job.out" || fail "no start was stopped by the warning signal"
kept=$(sed -n 's/.*resumed job [^:]*: \([0-9]*\) of \([0-9]*\) shards kept.*/\1 of \2/p' "$TMP/job.out" | tail -1)
[ -n "$kept" ] && [ "${kept%% *}" -gt 0 ] || fail "the last start kept no shards"
stops=$(grep -c "stopped before the time limit" "$TMP/job.out")

equal_to_reference "$TMP/reference" "$OUT" train test
JOBID=""
echo "PASS: $stops start(s) stopped by the warning signal before the time limit, requeued $restarts time(s), the last start kept $kept shards; equal to an uninterrupted import"
