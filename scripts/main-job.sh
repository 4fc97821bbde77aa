#!/usr/bin/env bash
# The main job: install missing packages, build, generate a TinyAES-shaped trace
# dataset with all local cores, verify it, and print a summary.
# Usage: scripts/main-job.sh [OUT_DIR] [CONFIG]
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${1:-${TMPDIR:-/tmp}/sedpack-tinyaes-demo}"
CONFIG="${2:-configs/generate_tinyaes.json}"
./scripts/install-deps.sh
./scripts/build.sh
BIN="${SEDPACK_BUILD_DIR:-build}/src/cli/sedpack"
if [ -e "$OUT" ]; then
  echo "main-job: removing previous demo output $OUT"
  rm -rf "$OUT"
fi
echo "== generate ($CONFIG -> $OUT, $(nproc) cores)"
"$BIN" generate "$CONFIG" "$OUT" --threads "$(nproc)" --progress
echo "== verify"
"$BIN" check "$OUT" --deep
echo "== summary"
"$BIN" info "$OUT"
