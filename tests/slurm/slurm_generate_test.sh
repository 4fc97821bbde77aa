#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# End-to-end SLURM test: start a local single-node SLURM (scripts/slurm/start-local-slurm.sh),
# submit jobs/generate.sbatch for configs/generate_small.json with NTASKS tasks, wait for
# it, and require a clean `sedpack check` and the configured example counts from `sedpack info`.
# Then concurrent appends: submit jobs/append.sbatch as an array of ARRAY_TASKS tasks
# into that dataset and jobs/verify.sbatch after it (--dependency=afterok), and require
# every task's examples in the dataset (exact counts, each task's own folders) and a
# clean verify without orphans.
#
#   slurm_generate_test.sh SEDPACK_BIN REPO_DIR
#
# Exits 77 (ctest SKIP_RETURN_CODE) only when SLURM cannot be started here at all (not
# root, packages unavailable, a foreign slurm.conf); the reason goes to stderr.
# Environment: SEDPACK_SLURM_TEST_NTASKS (default 2), SEDPACK_SLURM_KEEP=1 to leave the
# daemons running (they are stopped at the end only if this test started them).
set -uo pipefail

BIN=$(readlink -f "${1:?usage: $0 SEDPACK_BIN REPO_DIR}")
REPO=$(readlink -f "${2:?usage: $0 SEDPACK_BIN REPO_DIR}")
NTASKS="${SEDPACK_SLURM_TEST_NTASKS:-2}"
CONFIG="$REPO/configs/generate_small.json"
# What generate_small.json configures.
declare -A EXPECT=([train]=64 [test]=32 [holdout]=16 [total]=112)
JOB_TIMEOUT=300

# shellcheck source=local_slurm.sh
. "$(dirname "$0")/local_slurm.sh"
[ -x "$BIN" ] || fail "sedpack binary not found: $BIN"
[ -f "$CONFIG" ] || fail "config not found: $CONFIG"
local_slurm_up sedpack-slurm-test

OUT="$TMP/dataset"
JOBID=$(sbatch --parsable --ntasks="$NTASKS" --time=5 --chdir="$TMP" \
          --output="$TMP/job.out" --job-name=sedpack-slurm-test \
          --export=ALL,SEDPACK_BIN="$BIN",SEDPACK_REPO="$REPO" \
          "$REPO/jobs/generate.sbatch" "$CONFIG" "$OUT") || fail "sbatch failed"
JOBID=${JOBID%%;*}
echo "submitted job $JOBID ($NTASKS tasks): generate $CONFIG -> $OUT"

# Poll the controller (no accounting database here, so scontrol rather than sacct).
# wait_job ID: sets state and exitcode once the job (every task of an array) ended.
wait_job() {
  local id=$1 deadline=$((SECONDS + JOB_TIMEOUT)) states s
  state=""
  while [ $SECONDS -lt $deadline ]; do
    info=$(scontrol -o show job "$id" 2>/dev/null)
    states=$(sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' <<<"$info" | sort -u)
    state=""
    for s in $states; do
      case "$s" in
        COMPLETED) state=${state:-COMPLETED} ;;
        FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|BOOT_FAIL|DEADLINE|PREEMPTED) state=$s ;;
        *) state=RUNNING; break ;;
      esac
    done
    case "$state" in
      ""|RUNNING) ;;
      *) break ;;
    esac
    sleep 1
  done
  exitcode=$(sed -n 's/.* ExitCode=\([0-9:]*\).*/\1/p' <<<"$info" | sort -u | tr '\n' ' ')
}
wait_job "$JOBID"
echo "---- job $JOBID output ($TMP/job.out)"
cat "$TMP/job.out" 2>/dev/null
echo "---- end of job output"
[ "$state" = COMPLETED ] || fail "job $JOBID ended as '${state:-unknown}' (ExitCode=${exitcode:-?}) or did not finish within ${JOB_TIMEOUT}s"
DONE_JOB=$JOBID; JOBID=""  # finished; nothing to cancel

"$BIN" check "$OUT" || fail "sedpack check $OUT failed (exit $?)"

info_out=$("$BIN" info "$OUT") || fail "sedpack info $OUT failed"
for split in train test holdout total; do
  got=$(awk -v s="$split" '$1 == s && $3 == "examples" { print $2 }' <<<"$info_out")
  [ "$got" = "${EXPECT[$split]}" ] ||
    { echo "$info_out" >&2; fail "sedpack info: $split has '${got}' examples, expected ${EXPECT[$split]}"; }
done

# With several tasks the work must have been split: rank 1 wrote its own subtree
# (<split>/<job-id>-r<rank>/, DESIGN.md "MPI protocol (writing)").
if [ "$NTASKS" -gt 1 ]; then
  r1=$(find "$OUT" -mindepth 2 -maxdepth 2 -type d -name "*-r$((NTASKS - 1))" | head -1)
  [ -n "$r1" ] || { find "$OUT" -maxdepth 2 >&2; fail "no <split>/<job-id>-r$((NTASKS - 1)) subtree: the $NTASKS tasks did not split the work"; }
fi

echo "generate: job $DONE_JOB with $NTASKS tasks generated ${EXPECT[total]} examples; check clean"

# ---- concurrent appends: a job array into the same dataset, then verify after it.
ARRAY_TASKS="${SEDPACK_SLURM_TEST_ARRAY:-4}"
declare -A PER_TASK=([train]=8 [test]=4 [holdout]=2)
ARRAY=$(sbatch --parsable --array=0-$((ARRAY_TASKS - 1)) --time=5 --chdir="$TMP" \
          --output="$TMP/append-%a.out" --job-name=sedpack-slurm-append \
          --export=ALL,SEDPACK_BIN="$BIN",SEDPACK_REPO="$REPO",SEED_BASE=5000,APPEND_ARGS="--examples-train ${PER_TASK[train]} --examples-test ${PER_TASK[test]} --examples-holdout ${PER_TASK[holdout]}" \
          "$REPO/jobs/append.sbatch" "$OUT" "$CONFIG") || fail "sbatch of the append array failed"
ARRAY=${ARRAY%%;*}
JOBID=$ARRAY
VERIFY=$(sbatch --parsable --dependency=afterok:"$ARRAY" --ntasks=1 --time=5 --chdir="$TMP" \
           --output="$TMP/verify.out" --job-name=sedpack-slurm-verify --export=ALL,SEDPACK_BIN="$BIN",SEDPACK_REPO="$REPO" \
           "$REPO/jobs/verify.sbatch" "$OUT") || fail "sbatch of the verify step failed"
VERIFY=${VERIFY%%;*}
JOBID="$ARRAY $VERIFY"
echo "submitted array $ARRAY ($ARRAY_TASKS tasks): generate --append into $OUT; verify $VERIFY after it"
wait_job "$ARRAY"
for ((t = 0; t < ARRAY_TASKS; t++)); do
  echo "---- array task $t output"; cat "$TMP/append-$t.out" 2>/dev/null
done
[ "$state" = COMPLETED ] || fail "array $ARRAY ended as '${state:-unknown}' (ExitCode=${exitcode:-?})"
JOBID=$VERIFY
wait_job "$VERIFY"
echo "---- verify output"; cat "$TMP/verify.out" 2>/dev/null
[ "$state" = COMPLETED ] || fail "verify job $VERIFY ended as '${state:-unknown}' (ExitCode=${exitcode:-?})"
JOBID=""
if grep -qi orphan "$TMP/verify.out"; then fail "verify after the appends reports orphans"; fi

info_out=$("$BIN" info "$OUT") || fail "sedpack info $OUT failed"
total=0
for split in train test holdout; do
  want=$((EXPECT[$split] + ARRAY_TASKS * PER_TASK[$split]))
  total=$((total + want))
  got=$(awk -v s="$split" '$1 == s && $3 == "examples" { print $2 }' <<<"$info_out")
  [ "$got" = "$want" ] || { echo "$info_out" >&2; fail "after the appends $split has '$got' examples, expected $want (a task's commit was lost)"; }
done
# Each task is in the dataset under its own job folder.
for ((t = 0; t < ARRAY_TASKS; t++)); do
  job=$(sed -n 's/.*appended to .* (job \([0-9a-zA-Z_-]*\)).*/\1/p' "$TMP/append-$t.out")
  [ -n "$job" ] || fail "array task $t printed no job id"
  [ -d "$OUT/train/$job-r0" ] && grep -q "\"train/$job-r0/shards_list.json\"" "$OUT/train/shards_list.json" ||
    fail "array task $t (job $job) is not in $OUT/train/shards_list.json"
done

# ---- the other parallel commands' batch scripts: export-hdf5, import-hdf5 (its
# mapping from inspect-hdf5), recompress; the examples survive the round trip.
if "$BIN" --version | grep -q "HDF5     yes"; then
  submit() {  # submit NAME SCRIPT ARGS...: run one batch script with NTASKS tasks and wait for it
    local name=$1 script=$2
    shift 2
    JOBID=$(sbatch --parsable --ntasks="$NTASKS" --time=5 --chdir="$TMP" --output="$TMP/$name.out" \
              --job-name="sedpack-slurm-$name" --export=ALL,SEDPACK_BIN="$BIN",SEDPACK_REPO="$REPO" "$REPO/jobs/$script" "$@") ||
      fail "sbatch of $script failed"
    JOBID=${JOBID%%;*}
    wait_job "$JOBID"
    echo "---- $name output"; cat "$TMP/$name.out" 2>/dev/null
    [ "$state" = COMPLETED ] || fail "$script job $JOBID ended as '${state:-unknown}' (ExitCode=${exitcode:-?})"
    JOBID=""
  }
  submit export export-hdf5.sbatch "$OUT" "$TMP/dataset.h5"
  grep -q "exported $total examples of 3 splits .* with $NTASKS rank" "$TMP/export.out" || fail "export summary"
  "$BIN" inspect-hdf5 "$TMP/dataset.h5" --mapping > "$TMP/mapping.json" 2>/dev/null || fail "inspect-hdf5 --mapping"
  submit import import-hdf5.sbatch "$TMP/mapping.json" "$TMP/back" "$TMP/dataset.h5"
  submit recompress recompress.sbatch "$TMP/back" --profile hot
  "$BIN" verify "$TMP/back" > /dev/null || fail "verify of the imported, recompressed dataset"
  grep -q "compression         LZ4" <("$BIN" info "$TMP/back") || fail "recompress --profile hot did not apply LZ4"
  for split in train test holdout; do
    # Same examples; the mapping lists the attributes by name, so compare them as objects.
    "$BIN" cat "$OUT" -s $split > "$TMP/a.jsonl"
    "$BIN" cat "$TMP/back" -s $split > "$TMP/b.jsonl"
    python3 - "$TMP/a.jsonl" "$TMP/b.jsonl" <<'PY' || fail "$split: export-hdf5 -> import-hdf5 -> recompress changed the examples"
import json, sys
a = [json.loads(l) for l in open(sys.argv[1])]
b = [json.loads(l) for l in open(sys.argv[2])]
sys.exit(0 if a == b and a else 1)
PY
  done
  echo "export-hdf5, import-hdf5 and recompress jobs with $NTASKS tasks: round trip equal under cat"
fi

echo "PASS: job $DONE_JOB with $NTASKS tasks generated ${EXPECT[total]} examples; array $ARRAY of $ARRAY_TASKS tasks appended, $total examples in all; check and verify clean; export/import/recompress jobs round trip"
