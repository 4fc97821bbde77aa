#!/usr/bin/env bash
# `mpirun -n N sedpack generate` for N = 1..4 gives the same examples (as a
# multiset), a clean parallel verify, and one progress stream (rank 0 only).
# Usage: generate_ranks_test.sh SEDPACK_BIN CONFIG MPIEXEC
set -euo pipefail
BIN="$1" CONFIG="$2" MPIEXEC="$3"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
reference=""
for n in 1 2 3 4; do
  out="$TMP/ds$n"
  "$MPIEXEC" -n "$n" "$BIN" generate "$CONFIG" "$out" --progress > "$TMP/gen$n.out" 2> "$TMP/gen$n.err" \
    || { cat "$TMP/gen$n.err"; echo "FAIL: generate with $n ranks"; exit 1; }
  # One summary, from rank 0 only.
  [ "$(grep -c '^generated ' "$TMP/gen$n.out")" = 1 ] || { cat "$TMP/gen$n.out"; echo "FAIL: summary count ($n ranks)"; exit 1; }
  if [ "$n" -gt 1 ]; then
    for r in $(seq 0 $((n - 1))); do
      ls -d "$out"/train/*-r"$r" > /dev/null || { echo "FAIL: no subtree of rank $r"; exit 1; }
    done
  fi
  digest="$(for s in train test holdout; do "$BIN" cat "$out" --split "$s" | sort; done | md5sum)"
  if [ -z "$reference" ]; then reference="$digest"; fi
  [ "$digest" = "$reference" ] || { echo "FAIL: examples differ with $n ranks"; exit 1; }
  "$MPIEXEC" -n "$n" "$BIN" verify "$out" --deep > "$TMP/verify$n.out" \
    || { cat "$TMP/verify$n.out"; echo "FAIL: verify with $n ranks"; exit 1; }
  echo "ranks $n: same examples, verify clean"
done
# An existing output folder is refused on every rank, and nothing is written.
mkdir -p "$TMP/taken" && echo x > "$TMP/taken/file"
if "$MPIEXEC" -n 2 "$BIN" generate "$CONFIG" "$TMP/taken" > /dev/null 2>&1; then
  echo "FAIL: generate into a non-empty folder succeeded"; exit 1
fi
[ "$(ls "$TMP/taken")" = file ] || { echo "FAIL: refused generate left files"; exit 1; }
# `fix` lists a dead job's leftovers and removes them; listed data is untouched.
mkdir -p "$TMP/ds2/train/deadjob-r1/aa" && echo x > "$TMP/ds2/train/deadjob-r1/aa/s.fb"
"$BIN" fix "$TMP/ds2" | grep -q "orphan train/deadjob-r1/aa/s.fb" || { echo "FAIL: fix did not list the orphan"; exit 1; }
"$BIN" fix "$TMP/ds2" --remove-orphans > /dev/null
[ ! -e "$TMP/ds2/train/deadjob-r1" ] || { echo "FAIL: fix left the dead subtree"; exit 1; }
"$BIN" verify "$TMP/ds2" | grep -q ": OK$" || { echo "FAIL: verify after fix"; exit 1; }
echo "PASS"
