#!/usr/bin/env bash
# The test command (CI runs exactly this): install missing packages, build,
# run the tests in build/; then the hardening stage, scripts/run-hardening.sh:
# the library tests under ASan+UBSan, the threaded ones under TSan and a short
# run of every fuzzer. Every test runs once: build/ registers the program tests
# (the CLI, the Python module, end-to-end runs; SEDPACK_TEST_SET=programs) and
# the ASan+UBSan tree the library tests, which are the ones the sanitizers are
# for. SEDPACK_HARDENING=0 skips the hardening stage and runs every test in
# build/ instead (quick local runs). Ends with a table of the wall and CPU time
# of every stage (the ASan+UBSan build overlaps the program tests: its row's
# wall time is then its own, not an addition to the total).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/stages.sh
. ./scripts/stages.sh
JOBS="${SEDPACK_JOBS:-2}"
BUILD="${SEDPACK_BUILD_DIR:-build}"
status=0
stage deps ./scripts/install-deps.sh || { stage_table; exit 1; }
TEST_SET=programs
[ "${SEDPACK_HARDENING:-1}" != 0 ] || TEST_SET=all
# -Werror (SEDPACK_WERROR) here and in the hardening trees: a warning in the
# project's sources fails the test command.
stage build env SEDPACK_JOBS="$JOBS" ./scripts/build.sh -DSEDPACK_TEST_SET=$TEST_SET -DSEDPACK_WERROR=ON || { stage_table; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
asan_pid=""
if [ "${SEDPACK_HARDENING:-1}" != 0 ]; then
  # The program tests leave about a third of the cores idle (they wait on the
  # processes and MPI jobs they start), so the ASan+UBSan tree is built meanwhile
  # at the lowest CPU priority; its output goes to a log, shown if it fails.
  mkdir -p "$BUILD"
  SEDPACK_JOBS="$JOBS" nice -n 19 ./scripts/run-hardening.sh asan-build > "$BUILD/asan-build.log" 2>&1 &
  asan_pid=$!
fi
# A failed program test is run once more, alone (these start processes and MPI
# jobs and stop them with signals, so a loaded machine can make one miss a
# deadline); one that passes then is reported as FLAKY above the stage table
# and does not fail the run, one that fails again does.
test_stage ctest "$BUILD" --output-on-failure -j "$JOBS" --timeout 600 ||
  rerun_stage "ctest rerun" "$BUILD" --output-on-failure -j 1 --timeout 600 || status=1
if [ -n "$asan_pid" ]; then
  if wait "$asan_pid"; then
    hardening=(asan-test tsan fuzz)
  else
    echo "== the ASan+UBSan build failed ($BUILD/asan-build.log):"
    tail -50 "$BUILD/asan-build.log"
    status=1
    hardening=(tsan fuzz)
  fi
  # The fuzz stage seeds its corpora with a dataset written by the tool just built.
  SEDPACK_SEED_CLI="$(pwd)/$BUILD/src/cli/sedpack" SEDPACK_JOBS="$JOBS" ./scripts/run-hardening.sh "${hardening[@]}" ||
    status=1
fi
stage_table
exit $status
