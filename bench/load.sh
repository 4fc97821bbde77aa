#!/usr/bin/env bash
# Load: `sedpack generate` and `sedpack verify --deep` with RANKS MPI ranks
# (oversubscribed when there are fewer cores), then many threads reading one
# dataset under an address-space cap: `sedpack stats -j READ_THREADS` and
# sedpack_fetch_load (random examples through the index and a byte-bounded
# shard cache, every value checked). Prints the peak resident memory of every
# rank and every reader. Every step runs under `timeout`: a deadlock ends the
# run with exit 124 instead of hanging; any failure makes the script fail.
#
# Usage: bench/load.sh [BUILD_DIR] [WORKDIR]
# Environment (defaults in brackets):
#   RANKS [8]  TRAIN [8192] examples of train (test and holdout get 1/4 and 1/8)
#   TRACE [8000] float16 samples per trace  PER_SHARD [128] examples per shard
#   READ_THREADS [32]  FETCHES [2000] per thread  CACHE_MB [64] fetch cache bound
#   CAP_MB [1024] address-space cap of the readers  STEP_TIMEOUT [300] seconds
#   SEDPACK, FETCH_LOAD, MPIEXEC: binaries (default: BUILD_DIR's, mpirun)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="${1:-build}"
WORK="${2:-${TMPDIR:-/tmp}/sedpack-load-bench}"
RANKS="${RANKS:-8}" TRAIN="${TRAIN:-8192}" TRACE="${TRACE:-8000}" PER_SHARD="${PER_SHARD:-128}"
READ_THREADS="${READ_THREADS:-32}" FETCHES="${FETCHES:-2000}" CACHE_MB="${CACHE_MB:-64}"
CAP_MB="${CAP_MB:-1024}" STEP_TIMEOUT="${STEP_TIMEOUT:-300}"
SEDPACK="${SEDPACK:-$BUILD/src/cli/sedpack}"
FETCH_LOAD="${FETCH_LOAD:-$BUILD/tests/stress/sedpack_fetch_load}"
MPIEXEC="${MPIEXEC:-mpirun}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
TIME=/usr/bin/time   # GNU time: %M is the peak resident set size in KB
fail() { echo "FAIL: $*" >&2; exit 1; }
[ -x "$TIME" ] || fail "$TIME (GNU time, Debian package 'time') is needed for the peak memory"

rm -rf "$WORK"
mkdir -p "$WORK"
DS="$WORK/ds"
cat > "$WORK/config.json" <<EOF
{
  "metadata": {"description": "load benchmark", "dataset_version": "1.0.0"},
  "dataset_structure": {"compression": "LZ4", "examples_per_shard": $PER_SHARD, "shard_file_type": "fb",
                        "hash_checksum_algorithms": ["sha256", "xxh64"]},
  "generate": {"seed": 1, "examples": {"train": $TRAIN, "test": $((TRAIN / 4)), "holdout": $((TRAIN / 8))},
               "trace_length": $TRACE, "key_group_size": $PER_SHARD, "shard_by_key": true, "threads": 1}
}
EOF

# step NAME TIMEOUT COMMAND...: run it, keep its output in $WORK/NAME.out, fail
# (naming a timeout as such) unless it exits 0.
step() {
  local name=$1 limit=$2 rc=0 t0 t1
  shift 2
  t0=$(date +%s.%N)
  timeout --kill-after=10 "$limit" "$@" > "$WORK/$name.out" 2>&1 || rc=$?
  t1=$(date +%s.%N)
  WALL=$(awk "BEGIN { printf \"%.1f\", $t1 - $t0 }")
  if [ "$rc" -ne 0 ]; then
    tail -20 "$WORK/$name.out" >&2
    [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ] && fail "$name did not finish within $limit s (deadlock?)"
    fail "$name exited $rc"
  fi
}
# Every rank under GNU time, writing WORK/NAME.<rank>: "<peak RSS KB> <wall s>".
per_rank() {
  local name=$1
  shift
  step "$name" "$STEP_TIMEOUT" "$MPIEXEC" --oversubscribe -n "$RANKS" \
    sh -c 'exec '"$TIME"' -f "%M %e" -o "$0.$OMPI_COMM_WORLD_RANK" "$@"' "$WORK/$name" "$@"
}
peak() { tail -1 "$1" | cut -d' ' -f"$2"; }

echo "cores: $(nproc), ranks: $RANKS; dataset: $((TRAIN + TRAIN / 4 + TRAIN / 8)) examples of $TRACE float16 samples, $PER_SHARD per shard"
per_rank generate "$SEDPACK" generate "$WORK/config.json" "$DS"
GEN_WALL=$WALL
per_rank verify "$SEDPACK" verify "$DS" --deep
VERIFY_WALL=$WALL
grep -q ": OK$" "$WORK/verify.out" || { cat "$WORK/verify.out" >&2; fail "verify --deep did not report OK"; }
printf "generate: %s s wall, %s\n" "$GEN_WALL" "$(grep -m1 ' MB of values' "$WORK/generate.out" | sed 's/^ *//')"
printf "verify --deep: %s s wall, %s\n" "$VERIFY_WALL" "$(tail -1 "$WORK/verify.out")"
echo
echo "peak resident memory per rank (GNU time %M)"
printf "%-6s %18s %10s %18s %10s\n" rank "generate RSS MB" "wall s" "verify RSS MB" "wall s"
for r in $(seq 0 $((RANKS - 1))); do
  printf "%-6s %18.1f %10s %18.1f %10s\n" "$r" \
    "$(awk "BEGIN { print $(peak "$WORK/generate.$r" 1) / 1024 }")" "$(peak "$WORK/generate.$r" 2)" \
    "$(awk "BEGIN { print $(peak "$WORK/verify.$r" 1) / 1024 }")" "$(peak "$WORK/verify.$r" 2)"
done
echo

# Readers under the cap. glibc reserves 64 MB of address space for each of up
# to 8 x cores malloc arenas; capped to two arenas, the address space follows
# the memory actually used (plus 8 MB of stack per thread), so the cap bounds
# memory rather than reservations. The other two settings are the ones
# `sedpack` chooses for itself when GLIBC_TUNABLES does not mention malloc.
CAPPED=(prlimit --as=$((CAP_MB * 1024 * 1024)) --
        env GLIBC_TUNABLES=glibc.malloc.arena_max=2:glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=1073741824)
if [ -n "${SEDPACK_SANITIZED:-}" ]; then
  # Sanitizer runtimes reserve terabytes of shadow address space: no cap there.
  # The readers start no MPI, so they need not record allocation stacks with the
  # slow unwinder the MPI steps use for their leak suppressions (the later
  # setting wins); with it, 32 threads of fetches run several times slower.
  CAPPED=(env "ASAN_OPTIONS=${ASAN_OPTIONS:-}:fast_unwind_on_malloc=1")
  echo "readers: $READ_THREADS threads each (sanitizer build: no address-space cap)"
else
  echo "readers: $READ_THREADS threads each, address space capped at $CAP_MB MB"
fi
step index "$STEP_TIMEOUT" "$SEDPACK" index build "$DS"
step stats "$STEP_TIMEOUT" "${CAPPED[@]}" "$TIME" -f "%M %e" -o "$WORK/stats.time" \
  "$SEDPACK" stats "$DS" --split train -j "$READ_THREADS"
printf "  sedpack stats -j %s: peak RSS %.1f MB, %s s\n" "$READ_THREADS" \
  "$(awk "BEGIN { print $(peak "$WORK/stats.time" 1) / 1024 }")" "$(peak "$WORK/stats.time" 2)"
step fetch "$STEP_TIMEOUT" "${CAPPED[@]}" "$TIME" -f "%M %e" -o "$WORK/fetch.time" \
  "$FETCH_LOAD" "$DS" "$READ_THREADS" "$FETCHES" "$CACHE_MB" train
printf "  %s\n" "$(grep '^fetch_load:' "$WORK/fetch.out")"
printf "  sedpack_fetch_load: peak RSS %.1f MB (GNU time), %s s\n" \
  "$(awk "BEGIN { print $(peak "$WORK/fetch.time" 1) / 1024 }")" "$(peak "$WORK/fetch.time" 2)"
rm -rf "$DS"
