#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `sedpack export-hdf5` under mpirun with NP ranks writes the same file as one
# process: every dataset with the same dtype, shape and values (h5py compares
# them; chunking may differ), for a dataset of every dtype family (str and bytes
# included) and a generated numeric one, plain and with --deflate and chunks
# that straddle the ranks' rows. Then h5py's MPI-IO driver reads the file under
# mpirun -n 2, and a shard that fails its hash check on one rank fails every
# rank with exit 1 and leaves nothing behind.
# Exit 77 (skipped) without h5py; the MPI-IO read is skipped, loudly, without
# h5py built for MPI (python3-h5py-mpi).
# Usage: export_ranks_test.sh SEDPACK MAKE_MIXED CONFIGS_DIR MPIEXEC PYTHON NP
set -euo pipefail
SEDPACK=$1 MAKE=$2 CONFIGS=$3 MPIEXEC=$4 PYTHON=$5 NP=$6
HERE=$(cd "$(dirname "$0")" && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
if ! "$PYTHON" -c 'import h5py' 2>/dev/null; then
  echo "SKIP: $PYTHON has no h5py (install python3-h5py): the files cannot be compared" >&2
  exit 77
fi
"$SEDPACK" --version | grep -q "HDF5 .*(parallel, MPI-IO)" \
  || echo "NOTE: this sedpack uses serial HDF5: rank 0 writes alone ($("$SEDPACK" --version | grep HDF5))" >&2

compare() {  # compare A B: equal files, or fail
  "$PYTHON" "$HERE/h5_compare.py" "$1" "$2" > "$T/compare.txt" || fail "$2 differs from $1"
  echo "$(basename "$2"): $(cat "$T/compare.txt")"
}

"$MAKE" "$T/mixed" 61 3  # 21 shards over 3 splits: ranks get uneven shares
"$SEDPACK" generate "$CONFIGS/generate_small.json" -o "$T/numeric" -q
for ds in mixed numeric; do
  "$SEDPACK" export-hdf5 "$T/$ds" -o "$T/$ds.1.h5" -q || fail "export-hdf5 of $ds with one process"
  "$MPIEXEC" -n "$NP" --oversubscribe "$SEDPACK" export-hdf5 "$T/$ds" -o "$T/$ds.np.h5" > "$T/out.txt" \
    || fail "export-hdf5 of $ds with $NP ranks"
  grep -q "with $NP rank" "$T/out.txt" || { cat "$T/out.txt"; fail "summary of $ds"; }
  compare "$T/$ds.1.h5" "$T/$ds.np.h5"
  # Chunks of 5 rows cut across shards (3 or 16 rows), so ranks write parts of the same chunks.
  "$MPIEXEC" -n "$NP" --oversubscribe "$SEDPACK" export-hdf5 "$T/$ds" -o "$T/$ds.deflate.h5" \
    --deflate 3 --chunk-rows 5 -q || fail "export-hdf5 --deflate of $ds with $NP ranks"
  compare "$T/$ds.1.h5" "$T/$ds.deflate.h5"
  "$SEDPACK" inspect-hdf5 "$T/$ds.deflate.h5" | grep -q "chunked (5, .*deflate" || fail "$ds: chunking"
done
# The comparison can fail: two different datasets differ.
if "$PYTHON" "$HERE/h5_compare.py" "$T/mixed.1.h5" "$T/numeric.1.h5" 2> /dev/null; then
  fail "h5_compare.py found two different files equal"
fi
ls "$T" | grep -q partial && fail "a temporary file was left behind"

if [ "$NP" -gt 1 ]; then
  # h5py's MPI-IO driver reads the parallel export, each rank its rows.
  for ds in mixed numeric; do
    rc=0
    "$MPIEXEC" -n 2 --oversubscribe "$PYTHON" "$HERE/h5_mpi_read.py" "$T/$ds.np.h5" "$T/$ds.1.h5" \
      > "$T/mpio.txt" 2> "$T/mpio.err" || rc=$?
    if [ $rc = 77 ] || grep -q "not built for MPI\|No module named 'mpi4py'" "$T/mpio.err"; then
      echo "SKIP (part): h5py has no MPI-IO driver here (install python3-h5py-mpi): $(cat "$T/mpio.err")" >&2
      break
    fi
    [ $rc = 0 ] || { cat "$T/mpio.txt" "$T/mpio.err"; fail "h5py mpio read of $ds"; }
    cat "$T/mpio.txt"
  done

  # A shard that only rank 1 decodes fails its hash check: every rank stops,
  # exit 1, no output and no temporary file.
  cp -r "$T/numeric" "$T/bad"
  shard=$("$SEDPACK" ls "$T/bad" -s train | sed -n 2p | cut -f3)
  printf 'garbage' | dd of="$T/bad/$shard" bs=1 seek=100 conv=notrunc status=none
  rc=0
  "$MPIEXEC" -n "$NP" --oversubscribe "$SEDPACK" export-hdf5 "$T/bad" -s train -o "$T/bad.h5" \
    > "$T/bad.txt" 2>&1 || rc=$?
  [ $rc = 1 ] || { cat "$T/bad.txt"; fail "a bad shard on rank 1: exit $rc, expected 1"; }
  grep -q "$(basename "$shard")" "$T/bad.txt" || { cat "$T/bad.txt"; fail "the error does not name the shard"; }
  [ ! -e "$T/bad.h5" ] || fail "bad.h5 was written"
  ls "$T" | grep -q partial && fail "a temporary file was left behind after the failure"
fi
echo "PASS: export-hdf5 with $NP ranks"
