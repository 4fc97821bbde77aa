#!/usr/bin/env bash
# Resumed maintenance jobs (recompress, digest, index build) against a full run,
# in one run, on a generated TinyAES-shaped dataset (configs/generate_tinyaes.json
# with SHARD examples per shard: 2304 examples, ~370 MB of LZ4 shards):
#  - full: the journaled job run to the end (median of REPEAT runs);
#  - stopped: the same job stopped by SIGTERM right after the journal record at
#    ~45% of its units (SEDPACK_TEST_KILL_AT/_SIGNAL=15, io/kill_point.h: the
#    signal lands at a known point, as SLURM's at the time limit would anywhere);
#  - rerun: the same command again (REPEAT rounds of stop and rerun, the
#    median), its time and its ratio to the full run
#    (target <= 0.60 plus start-up), and whether its result equals an
#    uninterrupted run's (every byte of the tree for recompress, content.json
#    for digest, index.bin for index build);
#  - start-up: the fixed cost of the command, what a rerun pays whatever is
#    left: the wall time of the same command (journaled, same options) on a
#    dataset of one shard of SHARD examples (median of REPEAT runs): process
#    start, config and metadata parse, input open, journal set-up, commit.
#    Each row says whether rerun <= 0.60 * full + start-up (the issue's target
#    for a stop at 45%);
#  - overhead: journal against --no-journal, REPEAT interleaved pairs, medians;
#  - all kept: the rerun of a job stopped right after its last record (start-up,
#    the check of every kept unit, the commit), and whether
#    rerun <= 0.60 * full + all kept.
# Index build reads only shards_list.json files; the dataset gets BRANCHES
# appends so that its tree has subtrees to journal. That build lasts a few
# hundredths of a second, so "index-long" builds the index of a synthetic tree
# of lists (same schema, hashes not recorded, shards never read): 64 subtrees
# of 64 lists of LONG_SHARDS/4096 shards each (default 2.4 million shards:
# a build of about 2 s), where the journal's fixed cost is measured against a
# job long enough to show it as a fraction.
# JOBS (environment, default "recompress digest index index-long") runs only those rows.
# Usage: bench/resume_maintain.sh [BUILD_DIR] [WORKDIR] [REPEAT] [SHARD] [BRANCHES] [LONG_SHARDS]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="${1:-build}"
WORK="${2:-${TMPDIR:-/tmp}/sedpack-resume-maintain-bench}"
REPEAT="${3:-3}"
SHARD="${4:-32}"
BRANCHES="${5:-24}"
LONG_SHARDS="${6:-2400000}"
BIN="$(cd "$BUILD" && pwd)/src/cli/sedpack"
rm -rf "$WORK"
mkdir -p "$WORK"
calc() { awk "BEGIN { print $1 }"; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
now() { date +%s.%N; }
# Seconds of one run of "$@" (its output to the log; a failure ends the bench).
timed() {
  local t0 t1
  t0=$(now)
  "$@" >>"$WORK/log" 2>&1
  t1=$(now)
  calc "$t1 - $t0"
}

python3 - "$WORK/gen.json" "$SHARD" <<'PY'
import json, sys
c = json.load(open("configs/generate_tinyaes.json"))
c["dataset_structure"]["examples_per_shard"] = int(sys.argv[2])
json.dump(c, open(sys.argv[1], "w"))
PY
DS="$WORK/ds"
"$BIN" generate "$WORK/gen.json" "$DS" -q
for _ in $(seq 1 "$BRANCHES"); do
  "$BIN" generate "$WORK/gen.json" "$DS" -q --append --examples-train 4 --examples-test 0 --examples-holdout 0
done
echo "dataset: $(du -sh "$DS" | cut -f1), $(find "$DS" -name '*.fb' | wc -l) shards, $(find "$DS" -name shards_list.json | wc -l) lists"
# The start-up input: one shard.
ONE="$WORK/one"
"$BIN" generate "$WORK/gen.json" "$ONE" -q --examples-train "$SHARD" --examples-test 0 --examples-holdout 0
LONG="$WORK/long"
/usr/bin/python3 bench/make_list_tree.py "$DS" "$LONG" "$LONG_SHARDS"
echo "index-long: $(du -sh "$LONG" | cut -f1), $(find "$LONG" -name shards_list.json | wc -l) lists"

# The command of job $1 writing into $2 (a copy for digest and index build),
# reading SRC (the dataset; the start-up runs set it to the one-shard one).
SRC="$DS"
job_argv() {
  case "$1" in
    recompress) echo "$BIN recompress $SRC --compression zstd -o $2 -q --threads 2" ;;
    digest) echo "$BIN digest $2 -q --threads 2" ;;
    index) echo "$BIN index build $2 -q --threads 2" ;;
    index-long) echo "$BIN index build $LONG -q --threads 2" ;;
  esac
}
# Make $2 ready for a run of job $1.
prepare() {
  rm -rf "$2"
  case "$1" in
    recompress) ;;
    index-long) rm -rf "$LONG/.sedpack-hpc" ;;  # built in place: only its index and journals go
    *) cp -a "$SRC" "$2"; rm -f "$2/.sedpack-hpc/content.json" "$2/.sedpack-hpc/index.bin" ;;
  esac
}
# What must equal an uninterrupted run: a digest of the files.
result() {
  case "$1" in
    recompress) (cd "$2" && find . -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16) ;;
    digest) sha256sum <"$2/.sedpack-hpc/content.json" | cut -c1-16 ;;
    index) sha256sum <"$2/.sedpack-hpc/index.bin" | cut -c1-16 ;;
    index-long) sha256sum <"$LONG/.sedpack-hpc/index.bin" | cut -c1-16 ;;
  esac
}

# The start-up of job $1 (index-long: an index build, of the one-shard dataset too).
startup() {
  local job=$1 runs=()
  [ "$job" != index-long ] || job=index
  SRC="$ONE"
  for _ in $(seq 1 "$REPEAT"); do
    prepare "$job" "$WORK/one-out"
    runs+=("$(timed $(job_argv "$job" "$WORK/one-out"))")
  done
  SRC="$DS"
  rm -rf "$WORK/one-out"
  printf "%s\n" "${runs[@]}" | median
}

echo "load before: $(uptime | sed 's/.*load average: //')"
printf "%-11s %9s %9s %9s %10s %7s %-9s %6s %-18s %8s %10s %s\n" command "full s" stopped "rerun s" "start-up s" ratio \
  "<=.6f+s" equal "kept" "overhead" "all kept s" "<=.6f+a"
rounds=()  # every round's seconds, per job, printed under the table
for job in ${JOBS:-recompress digest index index-long}; do
  out="$WORK/out-$job"
  up=$(startup "$job")
  # Reference (no journal) and the full journaled runs, interleaved for the overhead.
  plain=() journaled=()
  for _ in $(seq 1 "$REPEAT"); do
    prepare "$job" "$out"
    plain+=("$(timed $(job_argv "$job" "$out") --no-journal)")
    reference=$(result "$job" "$out")
    prepare "$job" "$out"
    journaled+=("$(timed $(job_argv "$job" "$out"))")
  done
  full=$(printf "%s\n" "${journaled[@]}" | median)
  bare=$(printf "%s\n" "${plain[@]}" | median)
  # Where ~45% of the journal records are.
  prepare "$job" "$out"
  SEDPACK_TEST_STEP_LOG="$WORK/steps" $(job_argv "$job" "$out") >>"$WORK/log" 2>&1
  mapfile -t steps < <(awk -F'\t' '$3 == "journal" { print $2 }' "$WORK/steps" | sort -n)
  rm -f "$WORK/steps"
  n=${#steps[@]}
  if [ "$n" -lt 4 ]; then
    printf "%-11s %9.2f %9s %9s %10.2f %7s %-9s %6s %-18s %+.1f%%\n" "$job" "$full" "-" "-" "$up" "-" "-" "-" \
      "$n units" "$(calc "100 * ($full - $bare) / $bare")"
    continue
  fi
  k=${steps[$(( (n - 1) * 45 / 100 ))]}
  # Stopped at ~45% and run again, REPEAT rounds (a single rerun of a job
  # this short is at the mercy of the machine): the median rerun; equal and
  # kept from every round (all must hold).
  reruns=() equal=yes kepts=()
  for _ in $(seq 1 "$REPEAT"); do
    prepare "$job" "$out"
    set +e
    SEDPACK_TEST_KILL_AT=$k SEDPACK_TEST_KILL_SIGNAL=15 $(job_argv "$job" "$out") >>"$WORK/log" 2>&1
    rc=$?
    set -e
    t0=$(now)
    $(job_argv "$job" "$out") >"$WORK/rerun.out" 2>"$WORK/rerun.err"
    t1=$(now)
    reruns+=("$(calc "$t1 - $t0")")
    kepts+=("$(grep -o 'resumed job [^:]*: [0-9]* of [0-9]*' "$WORK/rerun.err" | sed 's/.*: //' || true)")
    [ "$(result "$job" "$out")" = "$reference" ] || equal=no
  done
  rerun=$(printf "%s\n" "${reruns[@]}" | median)
  rounds+=("$job: full $(printf "%.2f " "${journaled[@]}"); --no-journal $(printf "%.2f " "${plain[@]}"); rerun $(printf "%.2f " "${reruns[@]}")")
  # "k of n", or "k1-k2 of n" when the rounds kept different numbers (the
  # units in flight at the stop differ from run to run).
  kept=$(printf "%s\n" "${kepts[@]}" | awk 'NF == 3 { if (lo == "" || $1 < lo) lo = $1; if ($1 > hi) hi = $1; n = $3 }
    END { if (n != "") print (lo == hi ? lo : lo "-" hi) " of " n }')
  # All kept: stopped right after its last record, the rerun has nothing left
  # to do but start, check every kept unit and commit (median of REPEAT).
  all=()
  for _ in $(seq 1 "$REPEAT"); do
    prepare "$job" "$out"
    SEDPACK_TEST_KILL_AT=${steps[$((n - 1))]} SEDPACK_TEST_KILL_SIGNAL=15 $(job_argv "$job" "$out") >>"$WORK/log" 2>&1 || true
    all+=("$(timed $(job_argv "$job" "$out"))")
  done
  allkept=$(printf "%s\n" "${all[@]}" | median)
  within=no
  [ "$(calc "($rerun <= 0.60 * $full + $up) ? 1 : 0")" = 1 ] && within=yes
  withinall=no
  [ "$(calc "($rerun <= 0.60 * $full + $allkept) ? 1 : 0")" = 1 ] && withinall=yes
  printf "%-11s %9.2f %9s %9.2f %10.2f %7.2f %-9s %6s %-18s %+7.1f%% %10.2f %s\n" "$job" "$full" "exit $rc" "$rerun" "$up" \
    "$(calc "$rerun / $full")" "$within" "$equal" "${kept:-none}" "$(calc "100 * ($full - $bare) / $bare")" \
    "$allkept" "$withinall"
done
printf "%s\n" "${rounds[@]}"
echo "(full and overhead: medians of $REPEAT interleaved runs with and without --no-journal; start-up: median of $REPEAT"
echo " runs on a one-shard dataset; rerun: median of $REPEAT stops at the same record, each run again; <=.6f+s: rerun <= 0.60 * full + start-up; kept: units of the stopped run kept by the rerun;"
echo " all kept: a rerun after a stop right after the last record, median of $REPEAT; <=.6f+a: rerun <= 0.60 * full + all kept)"
echo "load after: $(uptime | sed 's/.*load average: //')"
