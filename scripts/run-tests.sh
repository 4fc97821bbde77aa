#!/usr/bin/env bash
# The test command (CI runs exactly this): install missing packages, build,
# run every test (ctest) in build/; then the hardening stage,
# scripts/run-hardening.sh: the whole suite under ASan+UBSan, the threaded
# tests under TSan and a short run of every fuzzer (each in its own build
# tree). SEDPACK_HARDENING=0 skips the hardening stage (quick local runs).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
SEDPACK_JOBS="${SEDPACK_JOBS:-2}" ./scripts/build.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
(cd "${SEDPACK_BUILD_DIR:-build}" && ctest --output-on-failure -j "${SEDPACK_JOBS:-2}" --timeout 600)
if [ "${SEDPACK_HARDENING:-1}" != 0 ]; then
  # The fuzz stage seeds its corpora with a dataset written by the tool just built.
  SEDPACK_SEED_CLI="$(pwd)/${SEDPACK_BUILD_DIR:-build}/src/cli/sedpack" SEDPACK_JOBS="${SEDPACK_JOBS:-2}" \
    ./scripts/run-hardening.sh
fi
