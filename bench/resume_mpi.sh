#!/usr/bin/env bash
# Resumed 2-rank jobs (mpirun -n 2), in one run, warm page cache, the way a
# SLURM job is stopped: the case that issue 31 opened with (import-hdf5 of a
# 300,000-row ASCAD-shaped capture, GZIP level 9, 300 shards) and a 2-rank
# generate. For each command:
#  - full: an uninterrupted journaled run (median of REPEAT runs);
#  - start-up: the same command on an input of one shard a rank (median of
#    REPEAT runs): process start, MPI init, config parse, input open, journal
#    set-up, commit, what a rerun pays whatever is left;
#  - two stops, each once about STOP_AT of the full run's shards are on disk:
#      "SIGTERM, all ranks": both ranks' processes are sent SIGTERM at once
#      (SLURM's signal at the time limit or on preemption);
#      "SIGKILL, rank 1": rank 1's process alone is killed (a lost rank: OOM
#      killer, node failure); mpirun then stops rank 0;
#      "ENOSPC (disk full)" (as root, where tmpfs can be mounted): the output
#      on a tmpfs of STOP_AT of the dataset's size; the job fails when it is
#      full, then the tmpfs grows (a user freeing space) before the rerun;
#    then the same command again: its time against the full run (target <= 0.60
#    plus start-up for a stop at 45%), the shards it kept, and whether the
#    result equals the uninterrupted run's, every split value for value and in
#    order (the Python module's as_numpy_iterator, hashed).
# JOBS (environment, default "import-hdf5 generate") runs only those rows.
# Usage: bench/resume_mpi.sh [BUILD_DIR] [WORKDIR] [REPEAT] [STOP_AT]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="$(cd "${1:-build}" && pwd)"
WORK="${2:-${TMPDIR:-/tmp}/sedpack-resume-mpi-bench}"
REPEAT="${3:-3}"
STOP_AT="${4:-0.45}"
BIN="$BUILD/src/cli/sedpack"
H5TOOL="$BUILD/tests/hdf5/sedpack_make_h5_fixture"
command -v mpirun > /dev/null || { echo "mpirun not found" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
if mountpoint -q "$WORK/small" 2> /dev/null; then umount "$WORK/small"; fi
rm -rf "$WORK"
mkdir -p "$WORK"
trap 'if mountpoint -q "$WORK/small"; then umount "$WORK/small"; fi' EXIT
. ./bench/measure.sh  # calc, median, now, load
LAUNCH=(mpirun -n 2)

# ---- inputs ---------------------------------------------------------------
H5="$WORK/capture.h5" H5_ONE="$WORK/one.h5"
"$H5TOOL" ascad1 "$H5" trace_len=700 profiling_rows=300000 attack_rows=2000 fixed_key=1 > /dev/null
"$H5TOOL" ascad1 "$H5_ONE" trace_len=700 profiling_rows=2000 attack_rows=2000 fixed_key=1 > /dev/null
HDF=(import-hdf5 -c configs/import_ascad_v1_fixed.json --compression GZIP --level 9 --examples-per-shard 1000
     -j 1 --memory-budget 64 -q)
GEN=(generate configs/generate_small.json --trace-length 20000 --shard-by-key false --key-group-size 128
     --examples-per-shard 128 --examples-holdout 0 --threads 1 -q)

PYTHON_MODULE_DIR="$BUILD/python"
. ./bench/resume_lib.sh  # shards, content
# argv of command $1 writing OUT $2 (ONE=1: its one-shard input).
argv() {
  case "$1" in
    import-hdf5) if [ "${ONE:-0}" = 1 ]; then echo "${HDF[*]} $H5_ONE -o $2"; else echo "${HDF[*]} $H5 -o $2"; fi ;;
    generate) if [ "${ONE:-0}" = 1 ]; then echo "${GEN[*]} --examples-train 256 --examples-test 0 -o $2";
              else echo "${GEN[*]} --examples-train 12000 --examples-test 1024 -o $2"; fi ;;
  esac
}
timed() {  # OUT JOB: wall seconds of one mpirun -n 2 run
  local t0 t1
  t0=$(now)
  # shellcheck disable=SC2046  # argv is a word list
  "${LAUNCH[@]}" "$BIN" $(argv "$2" "$1") > /dev/null 2>> "$WORK/log"
  t1=$(now)
  calc "$t1 - $t0"
}

load
printf "%-12s %-19s %7s %10s %11s %9s %8s %10s %6s %-8s %s\n" command stopped "full s" "start-up s" "stopped at" \
  kept "rerun s" "" ratio "<=.6f+s" equal
for job in ${JOBS:-import-hdf5 generate}; do
  ups=() fulls=()
  for _ in $(seq "$REPEAT"); do
    rm -rf "$WORK/one-out"; ups+=("$(ONE=1 timed "$WORK/one-out" "$job")")
    rm -rf "$WORK/full"; fulls+=("$(timed "$WORK/full" "$job")")
  done
  rm -rf "$WORK/one-out"
  t_up=$(printf '%s\n' "${ups[@]}" | median)
  t_full=$(printf '%s\n' "${fulls[@]}" | median)
  total=$(shards "$WORK/full")
  reference=$(content "$WORK/full")
  want=$(calc "int($total * $STOP_AT + 0.999)")
  hows=("SIGTERM, all ranks" "SIGKILL, rank 1")
  bytes=$(du -sb "$WORK/full" | cut -f1)
  if [ "$(id -u)" = 0 ] && mkdir -p "$WORK/small" && mount -t tmpfs -o size=$(calc "int($bytes * $STOP_AT)") tmpfs \
       "$WORK/small" 2> /dev/null; then
    hows+=("ENOSPC (disk full)")
  fi
  for how in "${hows[@]}"; do
    ds="$WORK/stopped"
    rm -rf "$ds"
    if [ "$how" = "ENOSPC (disk full)" ]; then
      # The output on a file system of STOP_AT of the dataset's size: the job
      # fails when it is full; then, as when a user frees space, it grows.
      ds="$WORK/small/ds"
      rc=0
      # shellcheck disable=SC2046
      "${LAUNCH[@]}" "$BIN" $(argv "$job" "$ds") > /dev/null 2> "$WORK/stop.err" || rc=$?
      at=$(shards "$ds")
      mount -o remount,size=$((bytes * 2)) "$WORK/small"
    fi
    if [ "$how" != "ENOSPC (disk full)" ]; then
      # shellcheck disable=SC2046
      "${LAUNCH[@]}" "$BIN" $(argv "$job" "$ds") > /dev/null 2> "$WORK/stop.err" &
      pid=$!
    fi
    while [ "$how" != "ENOSPC (disk full)" ] && kill -0 "$pid" 2> /dev/null && [ "$(shards "$ds")" -lt "$want" ]; do
      sleep 0.02
    done
    [ "$how" = "ENOSPC (disk full)" ] || at=$(shards "$ds")
    if [ "$how" = "ENOSPC (disk full)" ]; then
      :
    elif [ "$how" = "SIGTERM, all ranks" ]; then
      # Each rank's process, as slurmstepd signals a step's tasks (mpirun
      # itself passes a SIGTERM on only after a delay of its own).
      kill -TERM $(pgrep -P "$pid") 2> /dev/null || true
    else
      victim=$(pgrep -P "$pid" | sort -n | tail -1 || true)
      [ -z "$victim" ] || kill -KILL "$victim" 2> /dev/null || true
    fi
    if [ "$how" != "ENOSPC (disk full)" ]; then
      rc=0
      wait "$pid" || rc=$?
    fi
    t0=$(now)
    # shellcheck disable=SC2046
    "${LAUNCH[@]}" "$BIN" $(argv "$job" "$ds") > /dev/null 2> "$WORK/rerun.err" || { cat "$WORK/rerun.err" >&2; exit 1; }
    t1=$(now)
    t_rerun=$(calc "$t1 - $t0")
    kept=$(sed -n 's/.*resumed job [^:]*: \([0-9]* of [0-9]*\) shards kept.*/\1/p' "$WORK/rerun.err" | head -1)
    equal=no
    [ "$(content "$ds")" = "$reference" ] && equal=yes
    within=no
    [ "$(calc "($t_rerun <= 0.60 * $t_full + $t_up) ? 1 : 0")" = 1 ] && within=yes
    printf "%-12s %-19s %7.2f %10.2f %5d/%-5d %9s %8.2f %10s %6.2f %-8s %s\n" "$job" "$how" "$t_full" "$t_up" \
      "$at" "$total" "${kept:-none}" "$t_rerun" "(exit $rc)" "$(calc "$t_rerun / $t_full")" "$within" "$equal"
  done
  rm -rf "$WORK/full" "$WORK/stopped"
  if mountpoint -q "$WORK/small"; then umount "$WORK/small"; fi
done
load
echo "(stopped at: shards on disk when the signal was sent, of the full run's; kept: what the rerun kept, over"
echo " both ranks; full and start-up: medians of $REPEAT runs; <=.6f+s: rerun <= 0.60 * full + start-up)"
