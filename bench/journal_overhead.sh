#!/usr/bin/env bash
# The cost of the job journal, for every journaled writing job: generate (1
# rank; 2 ranks under mpirun), import-hdf5, import-trs, import-chipwhisperer,
# recompress, digest, export-hdf5 (1 rank; 2 ranks under mpirun, collective
# MPI-IO), export-trs, index build (of a tree of lists long enough to last
# seconds), and the Python filler (Dataset.filler with a job_id against one
# without). Jobs of a few seconds each, so that start-up does not hide a 2% cost.
# Each job runs once to warm the page cache, then REPS interleaved pairs
# (journal, --no-journal; then the other way round; ...), every run into a fresh output. Per
# job: its length (median without the journal); wall medians and their cost;
# CPU seconds (user + sys of every process) medians and their cost; and the
# journal's own time, measured inside the journaled runs
# (SEDPACK_BENCH_JOURNAL_STATS, src/journal/stats_internal.h: the wall time
# spent creating, appending to, syncing and removing the journal, hashing what
# it records and waiting for it, summed over the job's threads and ranks), as a
# share of the same run's wall time (median over the runs), and beside it the
# journal's time on its own threads (bg: a queue's writer, a hasher), which the
# job does not wait for; last, the CPU time (user and system) of the journal's
# calls on both kinds of thread as a share of the run's CPU seconds: what the
# journal takes from the machine, without the waits and the time off a CPU that
# the wall share counts. The wall share bounds the journal's cost on the job's way
# from above (all of it would have to be on the critical path to cost that
# much); the wall comparison of seconds-long runs is at the mercy of the
# kernel's page allocation and writeback and of other processes on a shared
# machine (on this kind of VM the same run varies by 10 to 50%), as `uptime`
# before and after shows.
# Run it with WORK on a tmpfs (/dev/shm) to take the disk out of the wall and
# CPU comparisons; the journal's fsyncs then cost nothing, so run it on a disk too.
# SCALE (environment, default 1: jobs of about 3 s on a quiet 2-core machine,
# digest less) multiplies every input's size: SCALE=0.2
# gives the second-long jobs of bench/resume_bench.sh.
# JOBS (environment, default every job): the jobs to run, as words separated by
# spaces, each choosing the jobs whose name (first column of the table) begins
# with it: JOBS="export-hdf5 export-trs" runs export-hdf5 on 1 and 2 ranks and
# export-trs; "export-hdf5," only the 2-rank one; "index" index build. Only the
# inputs the chosen jobs read are made.
# Usage: [JOBS="..."] bench/journal_overhead.sh BUILD_DIR WORK_DIR [REPS]
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 2 ]; then
  echo "usage: $0 BUILD_DIR WORK_DIR [REPS]" >&2
  exit 2
fi
BUILD="$(cd "$1" && pwd)"
WORK="$2"
REPS="${3:-5}"
SCALE="${SCALE:-1}"
BIN="$BUILD/src/cli/sedpack"
H5TOOL="$BUILD/tests/hdf5/sedpack_make_h5_fixture"
PY=/usr/bin/python3
export PYTHONPATH="$BUILD/python${PYTHONPATH:+:$PYTHONPATH}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
rm -rf "$WORK"
mkdir -p "$WORK"
calc() { awk "BEGIN { print $1 }"; }
scaled() { calc "int($1 * $SCALE + 0.5)"; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
least() { sort -g | head -1; }
now() { date +%s.%N; }
load() { echo "load: $(uptime | sed 's/.*load average: //')"; }
started=$(now)
JOBS="${JOBS:-}"
wanted() {  # JOB...: true if JOBS chooses any of them
  [ -z "$JOBS" ] && return 0
  local job word
  for job in "$@"; do
    for word in $JOBS; do
      case $job in "$word"*) return 0 ;; esac
    done
  done
  return 1
}

# ---- inputs (the shapes of bench/resume_bench.sh, larger) -----------------
echo "== inputs (SCALE=$SCALE)"
GEN=(generate configs/generate_small.json --trace-length 20000 --shard-by-key false --key-group-size 128
     --examples-train "$(scaled 30000)" --examples-test "$(scaled 1500)" --examples-holdout 0
     --examples-per-shard 128 -q)
H5="$WORK/capture.h5"
wanted import-hdf5 &&
  "$H5TOOL" ascad1 "$H5" trace_len=700 profiling_rows="$(scaled 300000)" attack_rows=2000 fixed_key=1 > /dev/null
HDF=(import-hdf5 -c configs/import_ascad_v1_fixed.json "$H5" --compression GZIP -j 2 --memory-budget 64 -q)
TRS="$WORK/capture.trs"
CW="$WORK/cw"
wanted import-trs import-chipwhisperer && "$PY" - "$TRS" "$CW" "$(scaled 400000)" "$(scaled 90000)" <<'PY'
# A TRS file (int8 samples, 16 data bytes) and a two-segment ChipWhisperer
# project (float64 traces of ADC steps, as ChipWhisperer saves them), random.
import os, struct, sys
import numpy as np
trs, cw, traces_n, rows = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
rng = np.random.default_rng(7)
samples = 1000
header = b"".join(bytes([tag, len(v)]) + v for tag, v in (
    (0x41, struct.pack("<I", traces_n)), (0x42, struct.pack("<I", samples)), (0x43, b"\x01"),
    (0x44, struct.pack("<H", 16))))
with open(trs, "wb") as out:
    out.write(header + b"\x5f\x00")
    for start in range(0, traces_n, 8192):
        out.write(rng.integers(0, 256, (min(8192, traces_n - start), 16 + samples), np.uint8).tobytes())
folder = os.path.join(cw, "proj_data", "traces")
os.makedirs(folder)
project = ["[Trace Management]"]
for seg in (0, 1):
    prefix = f"seg{seg}_"
    with open(os.path.join(folder, f"config_{prefix}.cfg"), "w") as cfg:
        cfg.write(f"[Trace Config]\nnumTraces = {rows}\nprefix = {prefix}\n")
    np.save(os.path.join(folder, prefix + "traces.npy"), rng.integers(0, 1024, (rows, 500)) / 1024.0 - 0.5)
    for name in ("textin", "textout", "keylist"):
        np.save(os.path.join(folder, prefix + name + ".npy"), rng.integers(0, 256, (rows, 16), np.uint8))
    project += [f"tracefile{seg} = proj_data\\traces\\config_{prefix}.cfg", f"enabled{seg} = True"]
with open(os.path.join(cw, "proj.cwp"), "w") as f:
    f.write("[ChipWhisperer]\n" + "\n".join(project) + "\n")
PY
TRSCMD=(import-trs "$TRS" --examples-per-shard 1000 --compression GZIP -j 2 -q)
CWCMD=(import-chipwhisperer "$CW/proj.cwp" --examples-per-shard 500 --compression GZIP -j 2 -q)
# The maintenance jobs read a generated dataset (LZ4 shards).
DS="$WORK/ds"
wanted recompress digest export-hdf5 "export-hdf5, 2 ranks" export-trs "index build" && "$BIN" generate configs/generate_small.json --trace-length 20000 --shard-by-key false --key-group-size 128 \
  --examples-train "$(scaled 24000)" --examples-test "$(scaled 1200)" --examples-holdout 0 \
  --examples-per-shard 64 --threads 2 -q -o "$DS" --no-journal
# The Python filler: float32 traces from a small pool (so that the job is the
# filler's, not numpy's), shards hashed and compressed as generate's.
cat > "$WORK/fill.py" <<'PY'
import sys
import numpy as np
from sedpack_hpc import Attribute, Dataset, DatasetStructure, Metadata
path, n, journal = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "journal"
ds = Dataset.create(path, metadata=Metadata(description="journal overhead"),
                    dataset_structure=DatasetStructure(
                        saved_data_description=[Attribute(name="trace", dtype="float32", shape=(20000,)),
                                                Attribute(name="i", dtype="int64", shape=())],
                        compression="LZ4", examples_per_shard=128, hash_checksum_algorithms=("sha256",)))
rng = np.random.default_rng(1)
pool = [rng.standard_normal(20000).astype(np.float32) for _ in range(64)]
kw = {"job_id": "bench", "job_parameters": {"n": n}} if journal else {}
with ds.filler(concurrency=2, **kw) as f:
    for i in range(n):
        f.write_example(values={"trace": pool[i % 64], "i": i}, split="train")
PY
FILL_N=$(scaled 32000)
# Index build reads only lists: a tree of them (bench/make_list_tree.py).
LONG="$WORK/long"
wanted "index build" && "$PY" bench/make_list_tree.py "$DS" "$LONG" "$(scaled 1600000)"
size() { if [ -e "$1" ]; then du -sh "$1" | cut -f1; else echo "no"; fi; }
echo "inputs: $(size "$H5") HDF5, $(size "$TRS") TRS, $(size "$CW") ChipWhisperer," \
  "$(size "$DS") dataset ($(find "$DS" -name '*.fb' 2> /dev/null | wc -l) shards)," \
  "$(find "$LONG" -name shards_list.json 2> /dev/null | wc -l) lists for index build; $(calc "$(now) - $started") s"

# ---- one run ----------------------------------------------------------------
# Job $1, journaled ($2 = j) or not (n), into the fresh output $WORK/o: its
# wall seconds on stdout, its CPU seconds (user + sys, all processes) into $WORK/cpu.
prepare() {
  rm -rf "$WORK"/o "$WORK"/o.* "$WORK/stats.txt"
  case $1 in
    digest) rm -rf "$DS/.sedpack-hpc/content.json" "$DS/.sedpack-hpc/jobs" ;;
    "index build") rm -rf "$LONG/.sedpack-hpc" ;;
  esac
  sync
}
argv() {  # JOB J|N: the command line
  local off=()
  [ "$2" = j ] || off=(--no-journal)
  case $1 in
    generate) echo "$BIN" "${GEN[@]}" --threads 2 -o "$WORK/o" "${off[@]}" ;;
    "generate, 2 ranks") echo mpirun -n 2 "$BIN" "${GEN[@]}" --threads 1 -o "$WORK/o" "${off[@]}" ;;
    import-hdf5) echo "$BIN" "${HDF[@]}" -o "$WORK/o" "${off[@]}" ;;
    import-trs) echo "$BIN" "${TRSCMD[@]}" -o "$WORK/o" "${off[@]}" ;;
    import-chipwhisperer) echo "$BIN" "${CWCMD[@]}" -o "$WORK/o" "${off[@]}" ;;
    recompress) echo "$BIN" recompress "$DS" --compression zstd --threads 2 -q -o "$WORK/o" "${off[@]}" ;;
    digest) echo "$BIN" digest "$DS" --threads 2 -q "${off[@]}" ;;
    export-hdf5) echo "$BIN" export-hdf5 "$DS" -o "$WORK/o.h5" -q "${off[@]}" ;;
    "export-hdf5, 2 ranks") echo mpirun -n 2 "$BIN" export-hdf5 "$DS" -o "$WORK/o.h5" -q "${off[@]}" ;;
    export-trs) echo "$BIN" export-trs "$DS" -o "$WORK/o.trs" -q "${off[@]}" ;;
    "index build") echo "$BIN" index build "$LONG" -q --threads 2 "${off[@]}" ;;
    "python filler") echo "$PY" "$WORK/fill.py" "$WORK/o" "$FILL_N" "$([ "$2" = j ] && echo journal || echo plain)" ;;
  esac
}
timed() {  # JOB J|N
  prepare "$1"
  local t0 t1
  t0=$(now)
  # (argv's words hold no spaces: WORK and BUILD must not either.)
  # shellcheck disable=SC2046
  local stats=()
  [ "$2" = j ] && stats=(env "SEDPACK_BENCH_JOURNAL_STATS=$WORK/stats.txt")
  "${stats[@]}" /usr/bin/time -f "%U %S" -o "$WORK/time.txt" $(argv "$1" "$2") > "$WORK/run.log" 2>&1 || {
    echo "failed: $(argv "$1" "$2")" >&2
    cat "$WORK/run.log" >&2
    exit 1
  }
  t1=$(now)
  awk '{ print $1 + $2 }' "$WORK/time.txt" > "$WORK/cpu"
  # The journal's own seconds, over every process of the run (0 without the
  # journal): on the job's threads, and on the journal's own (background).
  # Then the CPU seconds of those same calls, on both kinds of thread.
  if [ -f "$WORK/stats.txt" ]; then awk '{ s += $5; b += $6; c += $7 + $8 } END { print s + 0, b + 0, c + 0 }' "$WORK/stats.txt"
  else echo 0 0 0; fi > "$WORK/journal"
  calc "$t1 - $t0"
}

# ---- the table ----------------------------------------------------------------
echo
echo "== journal (default) against --no-journal: $REPS interleaved pairs per job (j n n j j n ...), medians"
load
ALL_JOBS=(generate)
command -v mpirun > /dev/null && ALL_JOBS+=("generate, 2 ranks")
ALL_JOBS+=(import-hdf5 import-trs import-chipwhisperer recompress digest export-hdf5)
command -v mpirun > /dev/null && "$BIN" --version | grep -q "(parallel, MPI-IO)" && ALL_JOBS+=("export-hdf5, 2 ranks")
ALL_JOBS+=(export-trs "index build" "python filler")
printf "%-21s %6s | %-23s | %-23s | %-21s | %-31s\n" "" "job" "wall median" "wall fastest" "CPU median" \
  "in the journal, medians"
printf "%-21s %6s | %7s %7s %7s | %7s %7s %7s | %6s %6s %7s | %7s %7s %7s %7s\n" command "s" "j s" "n s" cost "j s" "n s" cost \
  "j s" "n s" cost "s" "of wall" "bg s" "of CPU"
for job in "${ALL_JOBS[@]}"; do
  wanted "$job" || continue
  timed "$job" n > /dev/null  # warm-up
  j=() n=() cj=() cn=() jj=() jb=() jr=() jc=()
  # The pairs alternate their order (j n, n j, j n, ...): a run that always
  # came second would inherit the first's writeback and freed pages.
  for rep in $(seq "$REPS"); do
    for mode in $( ((rep % 2)) && echo j n || echo n j); do
      if [ "$mode" = n ]; then
        n+=("$(timed "$job" n)"); cn+=("$(cat "$WORK/cpu")")
        continue
      fi
      j+=("$(timed "$job" j)"); cj+=("$(cat "$WORK/cpu")")
      read -r on off oncpu < "$WORK/journal"
      jj+=("$on"); jb+=("$off"); jr+=("$(calc "100 * $on / ${j[-1]}")")
      jc+=("$(calc "100 * $oncpu / ${cj[-1]}")")
    done
  done
  mj=$(printf '%s\n' "${j[@]}" | median) mn=$(printf '%s\n' "${n[@]}" | median)
  bj=$(printf '%s\n' "${j[@]}" | least) bn=$(printf '%s\n' "${n[@]}" | least)
  pj=$(printf '%s\n' "${cj[@]}" | median) pn=$(printf '%s\n' "${cn[@]}" | median)
  js=$(printf '%s\n' "${jj[@]}" | median) jbs=$(printf '%s\n' "${jb[@]}" | median)
  share=$(printf '%s\n' "${jr[@]}" | median) cpushare=$(printf '%s\n' "${jc[@]}" | median)
  printf "%-21s %6.2f | %7.3f %7.3f %+6.1f%% | %7.3f %7.3f %+6.1f%% | %6.2f %6.2f %+6.1f%% | %7.4f %6.2f%% %7.4f %6.2f%%\n" \
    "$job" "$mn" "$mj" "$mn" "$(calc "100 * ($mj / $mn - 1)")" "$bj" "$bn" "$(calc "100 * ($bj / $bn - 1)")" \
    "$pj" "$pn" "$(calc "100 * ($pj / $pn - 1)")" "$js" "$share" "$jbs" "$cpushare"
  echo "$job: j ${j[*]}; n ${n[*]}; journal s ${jj[*]}; background s ${jb[*]}" >> "$WORK/runs.txt"
done
rm -rf "$WORK"/o "$WORK"/o.*
load
echo "(j: journal, the default; n: --no-journal; every run's wall seconds in $WORK/runs.txt;" \
  "bench $(calc "int($(now) - $started)") s)"
