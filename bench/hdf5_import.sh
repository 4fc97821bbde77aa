#!/usr/bin/env bash
# import-hdf5 throughput against a plain sequential HDF5 read of the same file,
# in the same run, on a generated ASCAD-shaped capture (ascad-variable shape:
# int8 traces of SAMPLES samples, labels, a compound metadata) of ROWS rows:
#  - two layouts: contiguous (as ASCAD ships) and chunked + deflate level 1;
#  - plain read: every dataset read front to back in 64 MB hyperslab blocks;
#  - import with 1 rank (its default threads) and 2 ranks, each once with the
#    default profile (LZ4 + sha256) and once with a fast one (uncompressed, xxh64);
#  - figures are MB/s of value bytes (all attributes), median of REPEAT runs on a
#    warm page cache, and the ratio to the plain read; peak RSS per rank.
# Usage: bench/hdf5_import.sh [BUILD_DIR] [WORKDIR] [REPEAT] [ROWS] [SAMPLES]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="${1:-build}"
WORK="${2:-${TMPDIR:-/tmp}/sedpack-hdf5-bench}"
REPEAT="${3:-3}"
ROWS="${4:-800000}"
SAMPLES="${5:-1400}"
BIN="$BUILD/src/cli/sedpack"
TOOL="$BUILD/bench/sedpack_bench_hdf5"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
mkdir -p "$WORK"
. ./bench/measure.sh  # calc, median, now, load

cat > "$WORK/mapping.json" <<JSON
{
  "dataset_structure": {
    "saved_data_description": [
      {"name": "trace", "dtype": "int8", "shape": [$SAMPLES]},
      {"name": "label", "dtype": "uint8", "shape": [1]},
      {"name": "plaintext", "dtype": "uint8", "shape": [16]},
      {"name": "key", "dtype": "uint8", "shape": [16]},
      {"name": "ciphertext", "dtype": "uint8", "shape": [16]},
      {"name": "masks", "dtype": "uint8", "shape": [18]}
    ],
    "compression": "LZ4", "examples_per_shard": 1024, "shard_file_type": "fb",
    "hash_checksum_algorithms": ["sha256"]
  },
  "import_hdf5": {"splits": {"train": {"attributes": {
    "trace": "Profiling_traces/traces", "label": "Profiling_traces/labels",
    "plaintext": {"dataset": "Profiling_traces/metadata", "field": "plaintext"},
    "key": {"dataset": "Profiling_traces/metadata", "field": "key"},
    "ciphertext": {"dataset": "Profiling_traces/metadata", "field": "ciphertext"},
    "masks": {"dataset": "Profiling_traces/metadata", "field": "masks"}}}},
    "memory_budget_mb": 256}
}
JSON
VALUE_BYTES=$(calc "$ROWS * ($SAMPLES + 1 + 16 * 3 + 18)")
printf "capture: %d rows x %d int8 samples + labels + metadata = %.2f GB of values; %d cores\n" \
  "$ROWS" "$SAMPLES" "$(calc "$VALUE_BYTES / 1e9")" "$(nproc)"

for layout in contiguous chunked-deflate; do
  H5="$WORK/capture-$layout.h5"
  if [ ! -s "$H5" ]; then
    if [ $layout = contiguous ]; then "$TOOL" make "$H5" "$ROWS" "$SAMPLES"; else "$TOOL" make "$H5" "$ROWS" "$SAMPLES" 1024 1; fi
  fi
  "$TOOL" read "$H5" > /dev/null  # warm the page cache
  times=()
  for i in $(seq "$REPEAT"); do
    t0=$(now); "$TOOL" read "$H5" > /dev/null; t1=$(now)
    times+=("$(calc "$t1 - $t0")")
  done
  READ=$(printf '%s\n' "${times[@]}" | median)
  printf "\n== %s (%s on disk)\nplain HDF5 read:            %6.2f s  %7.1f MB/s\n" "$layout" \
    "$(du -h "$H5" | cut -f1)" "$READ" "$(calc "$VALUE_BYTES / $READ / 1e6")"
  for profile in default fast; do
    extra=""
    [ $profile = fast ] && extra="--compression none --hash-algorithms xxh64"
    for n in 1 2; do
      times=()
      rss=0
      for i in $(seq "$REPEAT"); do
        rm -rf "$WORK/out"
        sync
        t0=$(now)
        if [ "$n" = 1 ]; then
          /usr/bin/time -f "%M" -o "$WORK/rss.0" "$BIN" import-hdf5 -c "$WORK/mapping.json" "$H5" "$WORK/out" $extra > /dev/null
        else
          mpirun -n "$n" --oversubscribe sh -c "/usr/bin/time -f %M -o $WORK/rss.\$OMPI_COMM_WORLD_RANK $BIN import-hdf5 -c $WORK/mapping.json $H5 $WORK/out $extra" > /dev/null
        fi
        t1=$(now)
        times+=("$(calc "$t1 - $t0")")
        for f in "$WORK"/rss.*; do r=$(cat "$f"); [ "$r" -gt "$rss" ] && rss=$r; done
        rm -f "$WORK"/rss.*
      done
      T=$(printf '%s\n' "${times[@]}" | median)
      printf "import %-7s %d rank(s):  %6.2f s  %7.1f MB/s  %3.0f%% of plain read  peak RSS/rank %d MB\n" \
        "$profile" "$n" "$T" "$(calc "$VALUE_BYTES / $T / 1e6")" "$(calc "100 * $READ / $T")" "$((rss / 1024))"
    done
  done
done
rm -rf "$WORK/out"
