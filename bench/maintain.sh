#!/usr/bin/env bash
# Maintenance throughput on the TinyAES-shaped workload (configs/generate_tinyaes.json):
#  - recompress LZ4 -> ZSTD (profile general) in place with 1 and 2 MPI ranks,
#    MB/s of shard bytes read, median of REPEAT (each run starts from the LZ4 copy);
#  - pack and unpack against `cp -r` of the same tree, in the same run.
# Usage: bench/maintain.sh [BUILD_DIR] [WORKDIR] [REPEAT]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="${1:-build}"
WORK="${2:-${TMPDIR:-/tmp}/sedpack-maintain-bench}"
REPEAT="${3:-3}"
BIN="$BUILD/src/cli/sedpack"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
mkdir -p "$WORK"
. ./bench/measure.sh  # calc, median, now, load
[ -d "$WORK/lz4" ] || "$BIN" generate configs/generate_tinyaes.json "$WORK/lz4" > /dev/null
BYTES=$(du -sb "$WORK/lz4" | cut -f1)
printf "dataset: %s (%.1f MB on disk, LZ4); %d cores\n" "$WORK/lz4" "$(calc "$BYTES / 1e6")" "$(nproc)"
for n in 1 2; do
  times=()
  for i in $(seq "$REPEAT"); do
    rm -rf "$WORK/rc"; cp -r "$WORK/lz4" "$WORK/rc"; sync
    t0=$(now); mpirun -n "$n" "$BIN" recompress "$WORK/rc" --profile general > /dev/null; t1=$(now)
    times+=("$(calc "$t1 - $t0")")
  done
  T=$(printf '%s\n' "${times[@]}" | median)
  printf "recompress LZ4 -> ZSTD, %d rank(s): %.2f s, %.1f MB/s\n" "$n" "$T" "$(calc "$BYTES / $T / 1e6")"
done
declare -A T
for what in cp pack unpack; do
  times=()
  for i in $(seq "$REPEAT"); do
    case $what in
      cp) rm -rf "$WORK/copy"; sync; t0=$(now); cp -r "$WORK/lz4" "$WORK/copy"; t1=$(now) ;;
      pack) rm -f "$WORK/ds.pack"; sync; t0=$(now); "$BIN" pack "$WORK/lz4" -o "$WORK/ds.pack" > /dev/null; t1=$(now) ;;
      unpack) rm -rf "$WORK/back"; sync; t0=$(now); "$BIN" unpack "$WORK/ds.pack" "$WORK/back" > /dev/null; t1=$(now) ;;
    esac
    times+=("$(calc "$t1 - $t0")")
  done
  T[$what]=$(printf '%s\n' "${times[@]}" | median)
  printf "%-7s %.2f s, %.1f MB/s (%.2fx the time of cp -r)\n" "$what" "${T[$what]}" \
    "$(calc "$BYTES / ${T[$what]} / 1e6")" "$(calc "${T[$what]} / ${T[cp]}")"
done
diff -r "$WORK/lz4" "$WORK/back" > /dev/null && echo "unpacked tree is byte-identical"
rm -rf "$WORK/rc" "$WORK/copy" "$WORK/back" "$WORK/ds.pack"
