#!/usr/bin/env bash
# Configure and build into build/ (or $SEDPACK_BUILD_DIR). Extra args go to cmake.
# The build is optimized (-O2) with line tables (-g1): backtraces, perf and
# sanitizer reports name file and line, and it compiles in about two thirds of
# the time of full debug info (-g). For a gdb session with locals, configure a
# tree of your own with -DCMAKE_BUILD_TYPE=Debug.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${SEDPACK_BUILD_DIR:-build}"
JOBS="${SEDPACK_JOBS:-$(nproc)}"
GEN=()
command -v ninja >/dev/null 2>&1 && GEN=(-G Ninja)
if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
  cmake -S . -B "$BUILD_DIR" "${GEN[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" "$@"
else
  cmake "$BUILD_DIR" "$@" >/dev/null
fi
cmake --build "$BUILD_DIR" -j "$JOBS"
