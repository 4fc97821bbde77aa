#!/usr/bin/env bash
# Parallel benchmarks of the sedpack tool on the TinyAES-shaped workload:
#  - generate throughput with 1 and 2 MPI ranks, each bound to one core (one generate
#    thread and one shard-writing thread per rank), and the
#    scaling efficiency = throughput(2 ranks) / (2 x throughput(1 rank));
#  - verify (sha256) time with 1 and 2 ranks against `sha256sum` over the same files,
#    on a warm page cache, median of REPEAT runs.
# Usage: bench/scaling.sh [SEDPACK_BIN] [CONFIG] [WORKDIR] [REPEAT]
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="${1:-build/src/cli/sedpack}"
CONFIG="${2:-configs/generate_tinyaes.json}"
WORK="${3:-${TMPDIR:-/tmp}/sedpack-scaling}"
REPEAT="${4:-3}"
GEN_ARGS="${SEDPACK_BENCH_GENERATE_ARGS:-}"  # e.g. "--examples-train 8192" for a longer run
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
mkdir -p "$WORK"

. ./bench/measure.sh  # calc, median, now, load
seconds() { local t0 t1; t0=$(date +%s.%N); "$@" > /dev/null; t1=$(date +%s.%N); calc "$t1 - $t0"; }

echo "== generate ($CONFIG), median of $REPEAT"
declare -A GEN
for n in 1 2; do
  times=()
  for i in $(seq "$REPEAT"); do
    rm -rf "$WORK/gen$n"
    times+=("$(seconds mpirun --bind-to core -n "$n" "$BIN" generate "$CONFIG" "$WORK/gen$n" --threads 1 $GEN_ARGS)")
  done
  GEN[$n]=$(printf '%s\n' "${times[@]}" | median)
done
BYTES=$(du -sb "$WORK/gen1" | cut -f1)
for n in 1 2; do
  printf "generate %d rank(s): %.2f s, %.1f MB/s\n" "$n" "${GEN[$n]}" "$(calc "$BYTES / ${GEN[$n]} / 1000000")"
done
printf "scaling efficiency at 2 ranks: %.0f%%\n" "$(calc "100 * ${GEN[1]} / (2 * ${GEN[2]})")"

echo "== verify (sha256) vs sha256sum over the same files, warm cache, median of $REPEAT"
DS="$WORK/gen1"
mapfile -t FILES < <(find "$DS" -type f | sort)
cat "${FILES[@]}" > /dev/null  # warm the page cache
S=(); V1=(); V2=()
for i in $(seq "$REPEAT"); do
  S+=("$(seconds sha256sum "${FILES[@]}")")
  V1+=("$(seconds mpirun --bind-to core -n 1 "$BIN" verify "$DS")")
  V2+=("$(seconds mpirun --bind-to core -n 2 "$BIN" verify "$DS")")
done
s=$(printf '%s\n' "${S[@]}" | median)
v1=$(printf '%s\n' "${V1[@]}" | median)
v2=$(printf '%s\n' "${V2[@]}" | median)
printf "sha256sum: %.2f s (%.1f MB/s)\n" "$s" "$(calc "$BYTES / $s / 1000000")"
printf "verify 1 rank: %.2f s = %.2fx sha256sum\n" "$v1" "$(calc "$v1 / $s")"
# What two cores of this machine give at all: sha256sum of the two halves of the
# file list at once, against one after the other.
HALF=$(( ${#FILES[@]} / 2 ))
P=(); Q=()
for i in $(seq "$REPEAT"); do
  P+=("$(seconds bash -c 'sha256sum "$@" > /dev/null' _ "${FILES[@]}")")
  Q+=("$(seconds bash -c 'h=$1; shift; sha256sum "${@:1:$h}" > /dev/null & sha256sum "${@:$((h+1))}" > /dev/null; wait' _ "$HALF" "${FILES[@]}")")
done
p=$(printf '%s\n' "${P[@]}" | median)
q=$(printf '%s\n' "${Q[@]}" | median)
printf "machine ceiling: 2 x sha256sum in parallel speed-up %.2fx (efficiency %.0f%%)\n" "$(calc "$p / $q")" "$(calc "50 * $p / $q")"
printf "verify 2 ranks: %.2f s = %.2fx sha256sum, speed-up %.2fx over 1 rank\n" "$v2" "$(calc "$v2 / $s")" "$(calc "$v1 / $v2")"
rm -rf "$WORK"
