#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `sedpack inspect-hdf5` and `sedpack import-hdf5` from the command line:
# serial and with 2 MPI ranks, the same examples either way; bad input fails
# with exit code 2 and leaves no OUT behind.
# Usage: cli_test.sh SEDPACK MAKE_FIXTURE CONFIGS_DIR MPIEXEC
set -euo pipefail
SEDPACK=$1 MAKE=$2 CONFIGS=$3 MPIEXEC=$4
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$MAKE" ascad1 "$T/a.h5" trace_len=700 profiling_rows=90 attack_rows=30 fixed_key=1 float_metadata=1
"$MAKE" ascad1 "$T/b.h5" trace_len=700 profiling_rows=41 attack_rows=17 seed=2 chunked=0 fixed_key=1

# inspect-hdf5 lists datasets, chunking and compound fields.
"$SEDPACK" inspect-hdf5 "$T/a.h5" > "$T/inspect.txt"
grep -q "/Profiling_traces/traces  (90, 700) int8, chunked (16, 700), deflate" "$T/inspect.txt" \
  || { cat "$T/inspect.txt"; fail "inspect listing"; }
grep -q "\.masks  float64 (16,)" "$T/inspect.txt" || fail "inspect fields"
"$SEDPACK" inspect-hdf5 "$T/a.h5" --mapping > "$T/suggested.json"
grep -q '"import_hdf5"' "$T/suggested.json" || fail "suggested mapping"

# Serial import of two files, then the same with two ranks: same examples.
"$SEDPACK" import-hdf5 --config "$CONFIGS/import_ascad_v1_fixed.json" "$T/a.h5" "$T/b.h5" "$T/serial" \
  --examples-per-shard 16 > "$T/serial.txt"
grep -q "imported 178 examples (train 131, test 47, holdout 0) from 2 files" "$T/serial.txt" \
  || { cat "$T/serial.txt"; fail "serial summary"; }
"$MPIEXEC" -n 2 --oversubscribe "$SEDPACK" import-hdf5 -c "$CONFIGS/import_ascad_v1_fixed.json" \
  "$T/a.h5" "$T/b.h5" "$T/mpi" --examples-per-shard 16 > "$T/mpi.txt"
grep -q "imported 178 examples .* with 2 ranks" "$T/mpi.txt" || { cat "$T/mpi.txt"; fail "mpi summary"; }
"$SEDPACK" verify "$T/mpi" --deep > /dev/null || fail "verify of the 2-rank import"
for split in train test; do
  "$SEDPACK" cat "$T/serial" --split $split > "$T/serial.$split.jsonl"
  "$SEDPACK" cat "$T/mpi" --split $split > "$T/mpi.$split.jsonl"
  cmp -s "$T/serial.$split.jsonl" "$T/mpi.$split.jsonl" || fail "$split differs between 1 and 2 ranks"
done
[ "$(wc -l < "$T/serial.train.jsonl")" = 131 ] || fail "train count"
ls "$T/mpi/train" | grep -q -- "-r1$" || fail "no rank-1 subtree"

# An inexact value (3.5 in uint8 plaintext) near the end: every rank fails, exit 2,
# and all or nothing (--no-journal): no OUT.
"$MAKE" ascad1 "$T/bad.h5" trace_len=700 profiling_rows=90 attack_rows=30 float_metadata=1 bad_plaintext=85
set +e
"$MPIEXEC" -n 2 --oversubscribe "$SEDPACK" import-hdf5 -c "$CONFIGS/import_ascad_v1_fixed.json" \
  "$T/bad.h5" "$T/badout" --no-journal 2> "$T/bad.err"
rc=$?
set -e
[ $rc -ne 0 ] || fail "inexact value accepted"
grep -q 'row 85 element 0: value 3.5 is not exactly representable as uint8' "$T/bad.err" \
  || { cat "$T/bad.err"; fail "inexact message"; }
[ ! -e "$T/badout" ] || fail "a failed import left $T/badout"

# A missing dataset: exit 2 before anything is written.
set +e
"$SEDPACK" import-hdf5 -c "$CONFIGS/import_ascad_v2_extracted.json" "$T/a.h5" "$T/v2out" 2> "$T/v2.err"
rc=$?
set -e
[ $rc -eq 2 ] || fail "missing field: exit $rc, want 2"
grep -q 'a.h5' "$T/v2.err" || fail "error does not name the file"
[ ! -e "$T/v2out" ] || fail "v2out left behind"
# export-hdf5 with 1 and 2 ranks (rank 0 gathers and writes): the same file
# content, and import-hdf5 of it (mapping from inspect-hdf5) gives back the examples.
"$SEDPACK" export-hdf5 "$T/serial" -o "$T/e1.h5" > /dev/null || fail "export-hdf5"
"$MPIEXEC" -n 2 --oversubscribe "$SEDPACK" export-hdf5 "$T/serial" -o "$T/e2.h5" --deflate 1 > "$T/e2.txt" \
  || fail "export-hdf5 with 2 ranks"
grep -q "exported 178 examples of 2 splits .* with 2 ranks" "$T/e2.txt" || { cat "$T/e2.txt"; fail "export summary"; }
"$SEDPACK" inspect-hdf5 "$T/e2.h5" | grep -q "/train/trace  (131, 700) int8, chunked" || fail "export layout"
"$SEDPACK" inspect-hdf5 "$T/e1.h5" --mapping > "$T/e.json" 2> /dev/null
"$SEDPACK" import-hdf5 -c "$T/e.json" "$T/e2.h5" -o "$T/eback" -q || fail "import of the export"
for split in train test; do
  # The suggested mapping lists the attributes by name: compare the examples as objects.
  "$SEDPACK" cat "$T/eback" --split $split > "$T/eback.$split.jsonl"
  python3 -c 'import json, sys
a, b = ([json.loads(l) for l in open(f)] for f in sys.argv[1:])
sys.exit(0 if a == b and a else 1)' "$T/serial.$split.jsonl" "$T/eback.$split.jsonl" ||
    fail "$split: export-hdf5 -> import-hdf5 changed the examples"
done
echo "hdf5 cli test passed"
