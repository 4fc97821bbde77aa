#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `mpirun -n 2 sedpack report` gives the numbers of one process: integer
# attributes to the bit, the float16 trace's statistics and SNR to rounding
# (relative 1e-9: the per-sample sums are added in another grouping).
# Usage: report_ranks_test.sh SEDPACK CONFIG MPIEXEC PYTHON
set -euo pipefail
SEDPACK=$1 CONFIG=$2 MPIEXEC=$3 PYTHON=$4
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
"$SEDPACK" generate "$CONFIG" "$T/ds" > /dev/null
ARGS=(--snr 'hw(sbox(plaintext[0]^key[0]))' --snr 'hw(plaintext[0]^key[0])')
for n in 1 2; do
  OMPI_MCA_orte_tmpdir_base="$OMPI_MCA_orte_tmpdir_base/np$n" \
    "$MPIEXEC" -n $n --oversubscribe "$SEDPACK" report "$T/ds" -o "$T/r$n.html" "${ARGS[@]}" --json "$T/r$n.json" \
    > "$T/out$n.txt" || fail "report under $n ranks"
  [ "$(grep -c '^wrote ' "$T/out$n.txt")" -eq 1 ] || fail "$n ranks: the page was not written once"
done
"$PYTHON" - "$T/r1.json" "$T/r2.json" <<'PY'
import json, math, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
worst = [0.0, ""]
def same(x, y, path):
    if isinstance(x, dict):
        assert x.keys() == y.keys(), path
        for k in x: same(x[k], y[k], path + "." + k)
    elif isinstance(x, list):
        assert len(x) == len(y), path
        for i, (p, q) in enumerate(zip(x, y)): same(p, q, f"{path}[{i}]")
    elif isinstance(x, float) or isinstance(y, float):
        d = abs(x - y) / max(abs(x), abs(y), 1e-300)
        if d > worst[0]: worst[:] = [d, path]
        assert d <= 1e-9, f"{path}: {x} vs {y}"
    else:
        assert x == y, f"{path}: {x} vs {y}"
same(a, b, "")
print(f"1 and 2 ranks agree; largest relative difference {worst[0]:.3g} at {worst[1] or '-'}")
PY
