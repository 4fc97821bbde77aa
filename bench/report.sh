#!/usr/bin/env bash
# `sedpack report` with one --snr against `sedpack verify --deep` of the same
# TinyAES dataset (configs/generate_tinyaes.json, 369 MB), one run each in the
# same session (target: report <= 1.5x verify); the page's size; the SNR peak;
# and the JSON of 1 against 2 ranks (largest relative difference).
# Usage: bench/report.sh [BUILD_DIR] [WORKDIR]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="${1:-build}"
WORK="${2:-${TMPDIR:-/tmp}/sedpack-report-bench}"
BIN="$BUILD/src/cli/sedpack"
PYTHON=/usr/bin/python3
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
mkdir -p "$WORK"
calc() { awk "BEGIN { print $1 }"; }
now() { date +%s.%N; }
[ -d "$WORK/tinyaes" ] || "$BIN" generate configs/generate_tinyaes.json "$WORK/tinyaes" > /dev/null
DS="$WORK/tinyaes"
SNR='hw(sbox(plaintext[0]^key[0]))'
printf "dataset: %s (%.1f MB on disk); %d cores; load %s\n" "$DS" "$(calc "$(du -sb "$DS" | cut -f1) / 1e6")" \
  "$(nproc)" "$(cut -d' ' -f1 /proc/loadavg)"
find "$DS" -name "*.fb" -exec cat {} + > /dev/null  # both runs read from the page cache
t0=$(now); "$BIN" verify "$DS" --deep > /dev/null; t1=$(now)
"$BIN" report "$DS" -o "$WORK/report.html" --snr "$SNR" --json "$WORK/r1.json" > "$WORK/out.txt"; t2=$(now)
V=$(calc "$t1 - $t0") R=$(calc "$t2 - $t1")
printf "verify --deep: %.2f s; report --snr: %.2f s; ratio %.2fx\n" "$V" "$R" "$(calc "$R / $V")"
printf "page: %d bytes\n" "$(stat -c %s "$WORK/report.html")"
grep "snr" "$WORK/out.txt"
mpirun -n 2 "$BIN" report "$DS" --snr "$SNR" --json "$WORK/r2.json" > /dev/null
"$PYTHON" - "$WORK/r1.json" "$WORK/r2.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
a.pop("dataset"), b.pop("dataset")
worst, exact = [0.0, "-"], [0, 0]
def walk(x, y, path):
    if isinstance(x, dict):
        for k in x: walk(x[k], y[k], path + "." + k)
    elif isinstance(x, list):
        assert len(x) == len(y), path
        for i, (p, q) in enumerate(zip(x, y)): walk(p, q, f"{path}[{i}]")
    elif isinstance(x, float):
        exact[1] += 1
        exact[0] += x == y
        d = abs(x - y) / max(abs(x), abs(y), 1e-300)
        if d > worst[0]: worst[:] = [d, path]
    else:
        assert x == y, f"{path}: {x} vs {y}"
walk(a, b, "")
print(f"1 vs 2 ranks: {exact[0]} of {exact[1]} floats identical; largest relative difference {worst[0]:.3g} ({worst[1]})")
PY
