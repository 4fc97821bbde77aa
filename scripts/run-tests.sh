#!/usr/bin/env bash
# The test command: install missing packages, build everything, run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
SEDPACK_JOBS="${SEDPACK_JOBS:-2}" ./scripts/build.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cd "${SEDPACK_BUILD_DIR:-build}"
ctest --output-on-failure -j "${SEDPACK_JOBS:-2}" --timeout 600
