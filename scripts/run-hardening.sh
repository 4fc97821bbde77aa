#!/usr/bin/env bash
# The hardening stage of the test command (scripts/run-tests.sh runs it after
# the normal suite; CI runs both). Sanitizer time goes where bugs live -
# parsers, decoders, MPI paths, threads - not to repeating slow end-to-end runs:
#
#   asan  build-asan/  one clang tree with ASan+UBSan (SEDPACK_SANITIZE=ON) and
#                      libFuzzer instrumentation (SEDPACK_FUZZ=ON), no benchmarks,
#                      no command-line tool. Runs the library tests
#                      (SEDPACK_TEST_SET=library): the unit, golden, hostile-input
#                      and containment tests of every parser and decoder, the
#                      HDF5 importer, maintenance, injected faults, and every MPI
#                      test at 1, 2 and 4 ranks. The program tests (the CLI,
#                      crash_test, load_test, SLURM, install, Python) run in the
#                      optimized tree: they drive the same library code through
#                      the tool, at the cost of a process start or an MPI job per
#                      step. For them under ASan by hand: configure a tree as
#                      configure_asan_tree does with -DSEDPACK_BUILD_CLI=ON
#                      -DSEDPACK_TEST_SET=all.
#   tsan  build-tsan/  ThreadSanitizer build (SEDPACK_TSAN=ON, MPI off) of the
#                      tests labelled `threads` only (target sedpack_threaded_tests:
#                      Filler workers, fetch cache, generate, recompress/stats/digest,
#                      HDF5 import); ctest -L threads. MPI never runs under TSan.
#   fuzz  build-asan/  scripts/fuzz.sh on the asan tree (no second build):
#                      every libFuzzer target for SEDPACK_FUZZ_SECONDS (default
#                      12) seconds, two at a time: a smoke run on seeded corpora
#                      (tens of thousands of inputs each); long runs are
#                      scripts/fuzz.sh 3600.
#
# Every sanitizer finding fails its test: UBSan is built without recovery, ASan
# and UBSan halt on the first error, LSan reports leaks at exit, TSan exits 66.
# Leak reports from OpenMPI/HDF5 internals are suppressed by
# tests/sanitizers/lsan.supp, which names third-party libraries only.
#
# Usage: scripts/run-hardening.sh [asan] [tsan] [fuzz]     (default: all three;
#        fuzz builds the asan tree's fuzz targets if asan did not run)
#        asan-build and asan-test are the two halves of asan (run-tests.sh
#        builds the tree while the program tests run, then tests it).
# Environment: SEDPACK_JOBS (default 2), SEDPACK_FUZZ_SECONDS (default 12).
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS="${SEDPACK_JOBS:-2}"
STAGES=("$@")
[ ${#STAGES[@]} -gt 0 ] || STAGES=(asan tsan fuzz)
for s in "${STAGES[@]}"; do
  case "$s" in asan | asan-build | asan-test | tsan | fuzz) ;;
    *) echo "run-hardening: unknown stage '$s' (asan, asan-build, asan-test, tsan, fuzz)" >&2; exit 2 ;;
  esac
done

# shellcheck source=scripts/stages.sh
. ./scripts/stages.sh
./scripts/install-deps.sh

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# ctest's children inherit these; so do the ranks mpirun starts on this node
# (Open MPI passes its environment on to local processes). Tests that start MPI
# ranks add tests/sanitizers/lsan.supp and preload tests/sanitizers/keep_dlopened.c
# themselves (sedpack_mpi_test_env in tests/CMakeLists.txt).
# The ASan tree's executables carry intercept_tls_get_addr=0 as a built-in
# default (tests/sanitizers/asan_default_options.c says why); these flags add to it.
export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:check_initialization_order=1:strict_init_order=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export TSAN_OPTIONS="second_deadlock_stack=1"
# shellcheck source=scripts/sanitizer-trees.sh
. ./scripts/sanitizer-trees.sh
# Both trees are built with -Werror (SEDPACK_WERROR): the project's sources
# compile without a warning under clang and gcc, and a new one fails the stage.
asan_build() { configure_asan_tree build-asan -DSEDPACK_WERROR=ON && cmake --build build-asan -j "$JOBS"; }
asan_test() { test_stage "asan ctest" build-asan --output-on-failure -j "$JOBS" --timeout 900; }
tsan_build() { configure_tsan_tree build-tsan -DSEDPACK_WERROR=ON && cmake --build build-tsan -j "$JOBS" --target sedpack_threaded_tests; }

status=0
for s in "${STAGES[@]}"; do
  case "$s" in
    asan)
      stage "asan build" asan_build && asan_test
      ;;
    asan-build)
      stage "asan build" asan_build
      ;;
    asan-test)
      asan_test
      ;;
    tsan)
      stage "tsan build" tsan_build &&
        test_stage "tsan ctest" build-tsan --output-on-failure -j "$JOBS" --timeout 900 -L threads
      ;;
    fuzz)
      stage "fuzz" env SEDPACK_FUZZ_BUILD_DIR=build-asan ./scripts/fuzz.sh "${SEDPACK_FUZZ_SECONDS:-12}"
      ;;
  esac || status=1  # a failed stage is recorded; the other stages still run
done
# Standalone, print the table here; under run-tests.sh the caller prints it.
[ -z "${SEDPACK_STAGE_OWNER:-}" ] || stage_table
exit $status
