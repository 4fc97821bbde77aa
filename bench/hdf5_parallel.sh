#!/usr/bin/env bash
# export-hdf5 and import-hdf5 with 1 and 2 ranks, in one run, on a generated
# TinyAES-shaped dataset (float16 traces of SAMPLES samples, key, plaintext,
# ciphertext; LZ4 + sha256 shards) of ROWS train examples:
#  - export-hdf5: one process (no mpirun), then mpirun -n 2 (built against
#    parallel HDF5: both ranks write their rows through MPI-IO); with BASELINE=
#    a sedpack built against serial HDF5 also its 2-rank export (rank 0 gathers
#    and writes alone);
#  - the 2-rank file is compared with the 1-process one (tests/hdf5/h5_compare.py);
#  - import-hdf5 of the export (mapping from inspect-hdf5 --mapping), 1 and 2 ranks;
#  - the read side of that question: each of 2 ranks reads its half of the rows
#    with h5py through the default (sec2) driver, as import-hdf5 does, and through
#    the MPI-IO driver, independent and collective (needs python3-h5py-mpi).
# Times are the median of REPEAT runs on a warm page cache (mpirun's own
# start-up is in every mpirun row; it is timed alone too). The ratio is the
# mpirun -n 1 time over the mpirun -n 2 time (above 1: 2 ranks are faster).
# WORKDIR on tmpfs (/dev/shm) keeps the disk out of the figures: the export
# ends with an fsync of the whole file.
# Usage: bench/hdf5_parallel.sh [BUILD_DIR] [WORKDIR] [REPEAT] [ROWS] [SAMPLES]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="${1:-build}"
WORK="${2:-${TMPDIR:-/tmp}/sedpack-hdf5-parallel-bench}"
REPEAT="${3:-3}"
ROWS="${4:-2048}"
SAMPLES="${5:-40000}"
BIN="$BUILD/src/cli/sedpack"
PY=/usr/bin/python3
# Open MPI binds each of up to 2 ranks to one core: every thread of a rank
# (shard decoding, import workers) would share it, and a rank could not move
# off a core another job keeps busy (the one-process rows are not bound
# either); and a rank waiting in a collective spins unless told to yield.
BIND="--bind-to none --mca mpi_yield_when_idle 1"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
mkdir -p "$WORK"
. ./bench/measure.sh  # calc, median, now, load
# timed NAME CMD...: median wall time of REPEAT runs of CMD (OUT removed before each).
timed() {
  local times=() t0 t1
  for _ in $(seq "$REPEAT"); do
    rm -rf "$OUT"
    t0=$(now); "$@" > /dev/null; t1=$(now)
    times+=("$(calc "$t1 - $t0")")
  done
  printf '%s\n' "${times[@]}" | median
}

DS="$WORK/ds"
if [ ! -d "$DS" ]; then
  "$BIN" generate configs/generate_tinyaes.json -o "$DS" --examples-train "$ROWS" --examples-test 0 \
    --trace-length "$SAMPLES" -q
fi
"$BIN" cat "$DS" -s train > /dev/null  # warm the page cache
VALUE_MB=$(calc "$ROWS * ($SAMPLES * 2 + 48) / 1e6")
echo "$("$BIN" --version | grep HDF5 | sed 's/^ *//')"
printf "dataset: %d examples x %d float16 samples + key/plaintext/ciphertext = %.0f MB of values; %d cores\n\n" \
  "$ROWS" "$SAMPLES" "$VALUE_MB" "$(nproc)"

OUT="$WORK/none"; START=$(timed mpirun -n 2 $BIND true)
OUT="$WORK/e0.h5"; E0=$(timed "$BIN" export-hdf5 "$DS" -o "$OUT" -q)
OUT="$WORK/e1.h5"; E1=$(timed mpirun -n 1 $BIND "$BIN" export-hdf5 "$DS" -o "$OUT" -q)
OUT="$WORK/e2.h5"; E2=$(timed mpirun -n 2 $BIND "$BIN" export-hdf5 "$DS" -o "$OUT" -q)
EQUAL=$($PY tests/hdf5/h5_compare.py "$WORK/e0.h5" "$WORK/e2.h5" 2>&1 || true)
# With --deflate the HDF5 filter is the work: each rank compresses its own chunks.
OUT="$WORK/d1.h5"; D1=$(timed mpirun -n 1 $BIND "$BIN" export-hdf5 "$DS" -o "$OUT" -q --deflate 4)
OUT="$WORK/d2.h5"; D2=$(timed mpirun -n 2 $BIND "$BIN" export-hdf5 "$DS" -o "$OUT" -q --deflate 4)
DEQUAL=$($PY tests/hdf5/h5_compare.py "$WORK/e0.h5" "$WORK/d2.h5" 2>&1 || true)
if [ -n "${BASELINE:-}" ]; then
  OUT="$WORK/eg.h5"; EG=$(timed mpirun -n 2 $BIND "$BASELINE" export-hdf5 "$DS" -o "$OUT" -q)
  OUT="$WORK/dg.h5"; DG=$(timed mpirun -n 2 $BIND "$BASELINE" export-hdf5 "$DS" -o "$OUT" -q --deflate 4)
fi

"$BIN" inspect-hdf5 "$WORK/e1.h5" --mapping > "$WORK/mapping.json"
OUT="$WORK/i0"; I0=$(timed "$BIN" import-hdf5 -c "$WORK/mapping.json" "$WORK/e1.h5" "$OUT" -q)
OUT="$WORK/i1"; I1=$(timed mpirun -n 1 $BIND "$BIN" import-hdf5 -c "$WORK/mapping.json" "$WORK/e1.h5" "$OUT" -q)
OUT="$WORK/i2"; I2=$(timed mpirun -n 2 $BIND "$BIN" import-hdf5 -c "$WORK/mapping.json" "$WORK/e1.h5" "$OUT" -q)

row() { printf "%-52s %8.2f s %8.0f MB/s\n" "$1" "$2" "$(calc "$VALUE_MB / $2")"; }
printf "%-52s %10s %13s\n" "step" "time" "values"
printf "%-52s %8.2f s\n" "mpirun -n 2 true (start-up alone)" "$START"
row "export-hdf5, 1 process (no mpirun)" "$E0"
row "export-hdf5, mpirun -n 1" "$E1"
row "export-hdf5, mpirun -n 2 (this build)" "$E2"
[ -n "${BASELINE:-}" ] && row "export-hdf5, mpirun -n 2 (BASELINE: rank 0 writes)" "$EG"
row "export-hdf5 --deflate 4, mpirun -n 1" "$D1"
row "export-hdf5 --deflate 4, mpirun -n 2 (this build)" "$D2"
[ -n "${BASELINE:-}" ] && row "export-hdf5 --deflate 4, mpirun -n 2 (BASELINE)" "$DG"
row "import-hdf5, 1 process (no mpirun)" "$I0"
row "import-hdf5, mpirun -n 1" "$I1"
row "import-hdf5, mpirun -n 2" "$I2"
printf "\nratio mpirun -n 1 / -n 2: export %.2f, export --deflate 4 %.2f, import %.2f\n" \
  "$(calc "$E1 / $E2")" "$(calc "$D1 / $D2")" "$(calc "$I1 / $I2")"
[ -n "${BASELINE:-}" ] && printf "ratio 2-rank export BASELINE / this build: %.2f, with --deflate 4 %.2f\n" \
  "$(calc "$EG / $E2")" "$(calc "$DG / $D2")"
printf "2-rank export vs 1 process (h5py): %s; with --deflate 4: %s\n" "$EQUAL" "$DEQUAL"

# The read side: what the MPI-IO driver would change for import-hdf5's reads.
echo
mpirun -n 2 $BIND $PY bench/hdf5_read_drivers.py "$WORK/e1.h5" "$REPEAT" train/trace1 train/key train/plaintext train/ciphertext
rm -rf "$WORK/i0" "$WORK/i1" "$WORK/i2" "$WORK"/*.h5
