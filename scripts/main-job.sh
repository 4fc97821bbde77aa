#!/usr/bin/env bash
# The main job: install missing packages, build, generate a TinyAES-shaped trace
# dataset with all local cores (one MPI rank per core), verify it in parallel,
# and print a summary.
# Usage: scripts/main-job.sh [OUT_DIR] [CONFIG]
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${1:-${TMPDIR:-/tmp}/sedpack-tinyaes-demo}"
CONFIG="${2:-configs/generate_tinyaes.json}"
./scripts/install-deps.sh
./scripts/build.sh
BIN="$(pwd)/${SEDPACK_BUILD_DIR:-build}/src/cli/sedpack"
RANKS="$(nproc)"
# Open MPI refuses to run as root unless told; more ranks than cores need oversubscribe.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
if [ -e "$OUT" ]; then
  echo "main-job: removing previous demo output $OUT"
  rm -rf "$OUT"
fi
echo "== generate: $CONFIG -> $OUT with $RANKS MPI ranks"
mpirun -n "$RANKS" "$BIN" generate "$CONFIG" "$OUT" --threads 1 --progress
echo "== verify: $RANKS MPI ranks, every hash, every shard decoded"
"$BIN" checksums "$OUT" > "$OUT.checksums"
mpirun -n "$RANKS" "$BIN" verify "$OUT" --deep --expect-file "$OUT.checksums" --progress
echo "== summary"
"$BIN" info "$OUT"
echo "root checksums saved in $OUT.checksums"
