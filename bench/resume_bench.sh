#!/usr/bin/env bash
# Resumable writing jobs, two figures in one run:
#  (a) the cost of the journal: generate and import-hdf5 with the journal (the
#      default) against --no-journal, interleaved (ABAB...), REPEAT runs each;
#      the median wall times and their ratio (target: under 2% cost);
#  (b) the rerun: for generate, import-hdf5, import-trs and import-chipwhisperer
#      a full run; a run stopped by SIGTERM once about STOP_AT of the full run's
#      shards are on disk (what SLURM sends at the time limit); the rerun of the
#      same command, its time against the full run (target <= 0.60 + start-up
#      for a stop at 45%), and whether the result equals the uninterrupted run
#      value for value and in order (`sedpack cat` of every split); beside it
#      the command's start-up: the fixed cost a rerun pays whatever is left,
#      measured as the wall time of the same command (same options) on an
#      input of one shard: generate of 128 train examples, import-hdf5 of a
#      capture of 1,000 profiling and 24 attack rows (one shard a split),
#      import-trs of 1,000 traces, import-chipwhisperer of 2 x 250 traces
#      (median of REPEAT runs): process start, config parse, input open,
#      journal set-up and commit. Each row says whether
#      rerun <= 0.60 * full + start-up.
# `uptime` before and after: the machine is shared, wall times are what others leave.
# Usage: bench/resume_bench.sh [BUILD_DIR] [WORKDIR] [REPEAT] [STOP_AT]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="${1:-build}"
WORK="${2:-${TMPDIR:-/tmp}/sedpack-resume-bench}"
REPEAT="${3:-5}"
STOP_AT="${4:-0.45}"
BIN="$(pwd)/$BUILD/src/cli/sedpack"
H5TOOL="$(pwd)/$BUILD/tests/hdf5/sedpack_make_h5_fixture"
rm -rf "$WORK"
mkdir -p "$WORK"
. ./bench/measure.sh  # calc, median, now, load

# ---- inputs ---------------------------------------------------------------
# (An append keeps the dataset's shard size: it takes GEN_SHAPE without it.)
GEN_SHAPE=(generate configs/generate_small.json --trace-length 20000 --shard-by-key false --key-group-size 128 -q)
GEN_COUNTS=(--examples-train 8000 --examples-test 400 --examples-holdout 0)
GEN=("${GEN_SHAPE[@]}" "${GEN_COUNTS[@]}" --examples-per-shard 128)
# An ASCAD v1 shaped capture (the test fixture maker) and its mapping.
H5="$WORK/capture.h5"
"$H5TOOL" ascad1 "$H5" trace_len=700 profiling_rows=60000 attack_rows=2000 fixed_key=1 > /dev/null
HDF=(import-hdf5 -c configs/import_ascad_v1_fixed.json "$H5" --compression GZIP -j 2 --memory-budget 64 -q)
# The start-up inputs: one shard of each.
H5_ONE="$WORK/one.h5"
"$H5TOOL" ascad1 "$H5_ONE" trace_len=700 profiling_rows=1000 attack_rows=24 fixed_key=1 > /dev/null
TRS="$WORK/capture.trs"
CW="$WORK/cw"
# A TRS file of N traces and a ChipWhisperer project of 2 segments of ROWS.
make_captures() {  # TRS CW N ROWS
/usr/bin/python3 - "$@" <<'PY'
import os, struct, sys
import numpy
trs, cw = sys.argv[1], sys.argv[2]
n, ns, rows = int(sys.argv[3]), 1000, int(sys.argv[4])
def tlv(tag, v): return bytes([tag, len(v)]) + v
h = (tlv(0x41, struct.pack("<I", n)) + tlv(0x42, struct.pack("<I", ns)) + tlv(0x43, b"\x01") +
     tlv(0x44, struct.pack("<H", 16)) + b"\x5f\x00")
with open(trs, "wb") as f:
    f.write(h)
    for i in range(0, n, 4096):
        f.write(os.urandom(min(4096, n - i) * (16 + ns)))
def npy(path, descr, shape, payload):
    d = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, ", ".join(map(str, shape)))
    d = d.ljust(64 * ((10 + len(d) + 1 + 63) // 64) - 10 - 1) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(d)) + d.encode() + payload)
traces = os.path.join(cw, "proj_data", "traces")
os.makedirs(traces)
points, lines = 500, ["[Trace Management]"]
for seg in range(2):
    prefix = "seg%d_" % seg
    with open(os.path.join(traces, "config_%s.cfg" % prefix), "w") as f:
        f.write("[Trace Config]\nnumTraces = %d\nprefix = %s\n" % (rows, prefix))
    # ADC steps of 1/1024, as ChipWhisperer stores them.
    steps = numpy.frombuffer(os.urandom(rows * points * 2), dtype="<u2") % 1024
    npy(os.path.join(traces, prefix + "traces.npy"), "<f8", (rows, points),
        (steps / 1024.0 - 0.5).astype("<f8").tobytes())
    for what in ("textin", "textout", "keylist"):
        npy(os.path.join(traces, prefix + what + ".npy"), "|u1", (rows, 16), os.urandom(rows * 16))
    lines += ["tracefile%d = proj_data\\traces\\config_%s.cfg" % (seg, prefix), "enabled%d = True" % seg]
with open(os.path.join(cw, "proj.cwp"), "w") as f:
    f.write("[ChipWhisperer]\n" + "\n".join(lines) + "\n")
PY
}
make_captures "$TRS" "$CW" 60000 12000
make_captures "$WORK/one.trs" "$WORK/one-cw" 1000 250
TRSCMD=(import-trs "$TRS" --examples-per-shard 1000 --compression GZIP -j 2 -q)
CWCMD=(import-chipwhisperer "$CW/proj.cwp" --examples-per-shard 500 --compression GZIP -j 2 -q)

# Run `${LAUNCH[@]} sedpack ARGS... -o OUT`, print the wall seconds.
LAUNCH=()
# The CPU seconds (user + sys, all processes) of the last run go to $WORK/cpu.
timed() {  # OUT ARGS...
  local out=$1
  shift
  local t0 t1
  t0=$(now)
  /usr/bin/time -f "%U %S" -o "$WORK/time.txt" "${LAUNCH[@]}" "$BIN" "$@" -o "$out" > /dev/null
  t1=$(now)
  awk '{ print $1 + $2 }' "$WORK/time.txt" > "$WORK/cpu"
  calc "$t1 - $t0"
}

# ---- (a) journaling overhead -------------------------------------------------
echo "== journaling overhead: journal (default) against --no-journal, $REPEAT interleaved runs each"
load
# Wall seconds: medians and the best runs (the least disturbed by other
# processes); CPU seconds (user + sys): medians. j: journal, n: --no-journal.
printf "%-20s %-24s %-24s %-21s\n" "" "wall median j / n" "wall best j / n" "CPU median j / n"
printf "%-20s %7s %7s %7s   %7s %7s %7s   %6s %6s %7s\n" "command" "j s" "n s" "cost" "j s" "n s" "cost" "j s" \
  "n s" "cost"
# A one-rank generate takes the N-rank path with the journal and the one-rank
# path with --no-journal; an append takes the N-rank path either way, so that
# its row (into a copy of a small base) shows the journal alone.
"$BIN" "${GEN_SHAPE[@]}" --examples-per-shard 128 -o "$WORK/base" > /dev/null
NAMES=(generate "generate --append" import-hdf5)
command -v mpirun > /dev/null && NAMES=(generate "generate --append" "generate, 2 ranks" import-hdf5)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
for name in "${NAMES[@]}"; do
  LAUNCH=()
  case $name in
    generate) args=("${GEN[@]}" --threads 2) ;;
    "generate --append") args=("${GEN_SHAPE[@]}" "${GEN_COUNTS[@]}" --threads 2 --seed 7 --append) ;;
    # Both sides on the N-rank path: only the journal differs.
    "generate, 2 ranks") args=("${GEN[@]}" --threads 1); LAUNCH=(mpirun -n 2) ;;
    import-hdf5) args=("${HDF[@]}") ;;
  esac
  j=() n=()
  [ "$name" != "generate --append" ] || cp -r "$WORK/base" "$WORK/warm"
  timed "$WORK/warm" "${args[@]}" > /dev/null; rm -rf "$WORK/warm"
  fresh() { rm -rf "$WORK/o"; [ "$name" != "generate --append" ] || cp -r "$WORK/base" "$WORK/o"; sync; }
  cj=() cn=()
  for _ in $(seq "$REPEAT"); do
    fresh; j+=("$(timed "$WORK/o" "${args[@]}")"); cj+=("$(cat "$WORK/cpu")")
    fresh; n+=("$(timed "$WORK/o" "${args[@]}" --no-journal)"); cn+=("$(cat "$WORK/cpu")")
  done
  rm -rf "$WORK/o"
  mj=$(printf '%s\n' "${j[@]}" | median)
  mn=$(printf '%s\n' "${n[@]}" | median)
  bj=$(printf '%s\n' "${j[@]}" | sort -g | head -1)
  bn=$(printf '%s\n' "${n[@]}" | sort -g | head -1)
  pj=$(printf '%s\n' "${cj[@]}" | median)
  pn=$(printf '%s\n' "${cn[@]}" | median)
  printf "%-20s %7.3f %7.3f %6.1f%%   %7.3f %7.3f %6.1f%%   %6.2f %6.2f %6.1f%%\n" "$name" \
    "$mj" "$mn" "$(calc "100 * ($mj / $mn - 1)")" "$bj" "$bn" "$(calc "100 * ($bj / $bn - 1)")" \
    "$pj" "$pn" "$(calc "100 * ($pj / $pn - 1)")"
done
LAUNCH=()
load

# ---- (b) stopped at STOP_AT, rerun ----------------------------------------------
PYTHON_MODULE_DIR="$(pwd)/$BUILD/python"
. ./bench/resume_lib.sh  # shards, content
echo
echo "== rerun after SIGTERM at about $(calc "100 * $STOP_AT")% of the shards"
load
printf "%-22s %7s %11s %9s %9s %10s %7s %-8s %s\n" "command" "full s" "stopped at" "kept" "rerun s" "start-up s" \
  "ratio" "<=.6f+s" "equal"
for name in generate import-hdf5 import-trs import-chipwhisperer; do
  # args: the command; one: the same on its one-shard input.
  case $name in
    generate) args=("${GEN[@]}" --threads 2)
      one=("${GEN_SHAPE[@]}" --examples-train 128 --examples-test 0 --examples-holdout 0 --examples-per-shard 128
        --threads 2) ;;
    import-hdf5) args=("${HDF[@]}") one=("${HDF[@]/#$H5/$H5_ONE}") ;;
    import-trs) args=("${TRSCMD[@]}") one=("${TRSCMD[@]/#$TRS/$WORK/one.trs}") ;;
    import-chipwhisperer) args=("${CWCMD[@]}") one=("${CWCMD[@]/#$CW\/proj.cwp/$WORK/one-cw/proj.cwp}") ;;
  esac
  ups=()
  for _ in $(seq "$REPEAT"); do
    rm -rf "$WORK/one-out"
    ups+=("$(timed "$WORK/one-out" "${one[@]}")")
  done
  rm -rf "$WORK/one-out"
  t_up=$(printf '%s\n' "${ups[@]}" | median)
  full="$WORK/full-$name" ds="$WORK/stopped-$name"
  t_full=$(timed "$full" "${args[@]}")
  total=$(shards "$full")
  want=$(calc "int($total * $STOP_AT + 0.999)")
  "$BIN" "${args[@]}" -o "$ds" > /dev/null 2> "$WORK/stop.err" &
  pid=$!
  while kill -0 "$pid" 2> /dev/null && [ "$(shards "$ds")" -lt "$want" ]; do sleep 0.02; done
  at=$(shards "$ds")
  kill -TERM "$pid" 2> /dev/null || true
  rc=0
  wait "$pid" || rc=$?
  t0=$(now)
  "$BIN" "${args[@]}" -o "$ds" > /dev/null 2> "$WORK/rerun.err"
  t1=$(now)
  t_rerun=$(calc "$t1 - $t0")
  kept=$(sed -n 's/.*resumed job [^:]*: \([0-9]* of [0-9]*\) shards kept.*/\1/p' "$WORK/rerun.err")
  equal=no
  [ "$(content "$full")" = "$(content "$ds")" ] && equal=yes
  within=no
  [ "$(calc "($t_rerun <= 0.60 * $t_full + $t_up) ? 1 : 0")" = 1 ] && within=yes
  printf "%-22s %7.2f %4d/%-3d %3s %9s %9.2f %10.2f %7.2f %-8s %s\n" "$name" "$t_full" "$at" "$total" "(exit $rc)" \
    "${kept:-none}" "$t_rerun" "$t_up" "$(calc "$t_rerun / $t_full")" "$within" "$equal"
  rm -rf "$full" "$ds"
done
load
