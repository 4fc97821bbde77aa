#!/usr/bin/env bash
# `mpirun -n N sedpack index build` for N = 1, 2, 4 writes the same bytes as the
# serial build, prints one summary, and `get` then agrees with `cat`.
# Usage: index_ranks_test.sh SEDPACK_BIN CONFIG MPIEXEC
set -euo pipefail
BIN="$1" CONFIG="$2" MPIEXEC="$3"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
ds="$TMP/ds"
# Three ranks write: each split gets one subtree per rank to hand out.
"$MPIEXEC" -n 3 "$BIN" generate "$CONFIG" "$ds" > /dev/null || { echo "FAIL: generate"; exit 1; }
"$BIN" index build "$ds" > /dev/null || { echo "FAIL: serial index build"; exit 1; }
cp "$ds/.sedpack-hpc/index.bin" "$TMP/serial.bin"
for n in 1 2 4; do
  rm "$ds/.sedpack-hpc/index.bin"
  "$MPIEXEC" -n "$n" "$BIN" index build "$ds" > "$TMP/build$n.out" \
    || { cat "$TMP/build$n.out"; echo "FAIL: index build with $n ranks"; exit 1; }
  [ "$(grep -c '^wrote ' "$TMP/build$n.out")" = 1 ] || { cat "$TMP/build$n.out"; echo "FAIL: summary count ($n ranks)"; exit 1; }
  cmp "$TMP/serial.bin" "$ds/.sedpack-hpc/index.bin" || { echo "FAIL: index differs with $n ranks"; exit 1; }
  "$BIN" index check "$ds" > /dev/null || { echo "FAIL: index not fresh after $n ranks"; exit 1; }
  echo "ranks $n: same index bytes"
done
n="$("$BIN" cat "$ds" --split train | wc -l)"
args=""
for i in $(seq 0 $((n - 1))); do args="$args --index $i"; done
# shellcheck disable=SC2086
[ "$("$BIN" get "$ds" --split train $args | md5sum)" = "$("$BIN" cat "$ds" --split train | md5sum)" ] \
  || { echo "FAIL: get differs from cat"; exit 1; }
"$BIN" verify "$ds" > "$TMP/verify.out" || { cat "$TMP/verify.out"; echo "FAIL: verify"; exit 1; }
if grep -q orphan "$TMP/verify.out"; then cat "$TMP/verify.out"; echo "FAIL: index reported as orphan"; exit 1; fi
echo "PASS"
