#!/usr/bin/env bash
# The hardening stage of the test command (scripts/run-tests.sh runs it after
# the normal suite; CI runs both). Three stages, each in its own build tree:
#
#   asan  build-asan/  ASan+UBSan build (SEDPACK_SANITIZE=ON, no benchmarks) of
#                      the whole project; the WHOLE ctest suite, MPI runs included.
#   tsan  build-tsan/  ThreadSanitizer build (SEDPACK_TSAN=ON, MPI off) of the
#                      tests labelled `threads` only (target sedpack_threaded_tests:
#                      Filler workers, fetch cache, generate, recompress/stats/digest,
#                      HDF5 import, the CLI); ctest -L threads. MPI never runs under TSan.
#   fuzz  build-fuzz/  scripts/fuzz.sh: every libFuzzer target for
#                      SEDPACK_FUZZ_SECONDS (default 60) seconds, two at a time.
#
# Every sanitizer finding fails its test: UBSan is built without recovery, ASan
# and UBSan halt on the first error, LSan reports leaks at exit, TSan exits 66.
# Leak reports from OpenMPI/HDF5 internals are suppressed by
# tests/sanitizers/lsan.supp, which names third-party libraries only.
# No test is excluded from any stage.
#
# Usage: scripts/run-hardening.sh [asan] [tsan] [fuzz]     (default: all three)
# Environment: SEDPACK_JOBS (default 2), SEDPACK_FUZZ_SECONDS (default 60).
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS="${SEDPACK_JOBS:-2}"
STAGES=("$@")
[ ${#STAGES[@]} -gt 0 ] || STAGES=(asan tsan fuzz)
for s in "${STAGES[@]}"; do
  case "$s" in asan | tsan | fuzz) ;; *) echo "run-hardening: unknown stage '$s' (asan, tsan, fuzz)" >&2; exit 2 ;; esac
done

./scripts/install-deps.sh

GEN=()
command -v ninja > /dev/null 2>&1 && GEN=(-G Ninja)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# ctest's children inherit these; so do the ranks mpirun starts on this node
# (Open MPI passes its environment on to local processes). Tests that start MPI
# ranks append the slow unwinder and tests/sanitizers/lsan.supp themselves
# (sedpack_mpi_sanitizer_env in tests/CMakeLists.txt).
export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:check_initialization_order=1:strict_init_order=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export TSAN_OPTIONS="second_deadlock_stack=1"
# Sanitizer trees: -O1 and line tables only. They compile in about half the
# time of -O2 -g, and reports still name file and line.
SAN_FLAGS=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG"
           -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DSEDPACK_BUILD_BENCH=OFF)

TIMES=()
status=0
CPU_FILE=$(mktemp)
trap 'rm -f "$CPU_FILE"' EXIT
child_cpu() {  # CPU=seconds (user + sys) used so far by the finished children of this shell
  times > "$CPU_FILE"  # run here: inside $(...) `times` would only see a subshell's children
  CPU=$(tail -1 "$CPU_FILE" | awk '{ s = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); s += a[1] * 60 + a[2] } printf "%d", s }')
}
timed() {  # timed LABEL COMMAND...: run, record wall and CPU time and outcome
  local label=$1 start cpu rc=0
  shift
  start=$(date +%s)
  child_cpu
  cpu=$CPU
  echo "== hardening: $label"
  "$@" || rc=$?
  child_cpu
  TIMES+=("$(printf '%-12s wall %5ss  cpu %5ss  %s' "$label" "$(($(date +%s) - start))" "$((CPU - cpu))" \
    "$([ $rc -eq 0 ] && echo ok || echo "FAILED ($rc)")")")
  [ $rc -eq 0 ] || status=1
  return $rc
}

configure() {  # configure DIR CMAKE_ARGS...
  local dir=$1
  shift
  if [ ! -f "$dir/CMakeCache.txt" ]; then
    cmake -S . -B "$dir" "${GEN[@]}" "$@"
  else
    cmake "$dir" "$@" > /dev/null
  fi
}
asan_build() {
  configure build-asan "${SAN_FLAGS[@]}" -DSEDPACK_SANITIZE=ON && cmake --build build-asan -j "$JOBS"
}
tsan_build() {
  configure build-tsan "${SAN_FLAGS[@]}" -DSEDPACK_TSAN=ON -DSEDPACK_WITH_MPI=OFF &&
    cmake --build build-tsan -j "$JOBS" --target sedpack_threaded_tests
}

for s in "${STAGES[@]}"; do
  case "$s" in
    asan)
      timed "asan build" asan_build &&
        timed "asan ctest" ctest --test-dir build-asan --output-on-failure -j "$JOBS" --timeout 900
      ;;
    tsan)
      timed "tsan build" tsan_build &&
        timed "tsan ctest" ctest --test-dir build-tsan --output-on-failure -j "$JOBS" --timeout 900 -L threads
      ;;
    fuzz)
      timed "fuzz" ./scripts/fuzz.sh "${SEDPACK_FUZZ_SECONDS:-60}"
      ;;
  esac || true  # a failed stage is recorded in $status; the other stages still run
done

echo "== hardening: wall time per step"
printf '%s\n' "${TIMES[@]}"
exit $status
