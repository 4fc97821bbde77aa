#!/usr/bin/env bash
# `sedpack report` with one --snr against `sedpack verify --deep` of the same
# TinyAES dataset (configs/generate_tinyaes.json, 369 MB) in the same session
# (target: report <= 1.5x verify); the page's size; the SNR peak; and the JSON
# of 1 against 2 ranks (largest relative difference).
# The two commands alternate (verify, report, verify, report, ...) REPEAT times
# each on a warm page cache, so that a burst of load from other processes hits
# both alike; the figures are the medians and the ratio is that of the medians.
# The load average is printed before and after: on a shared machine a ratio
# taken under changing load is not worth much.
# Usage: bench/report.sh [BUILD_DIR] [WORKDIR]   (REPEAT=5 by default, >= 1)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="${1:-build}"
WORK="${2:-${TMPDIR:-/tmp}/sedpack-report-bench}"
REPEAT="${REPEAT:-5}"
BIN="$BUILD/src/cli/sedpack"
PYTHON=/usr/bin/python3
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
mkdir -p "$WORK"
. ./bench/measure.sh  # calc, median, now, load
load() { cut -d' ' -f1-3 /proc/loadavg; }
[ -d "$WORK/tinyaes" ] || "$BIN" generate configs/generate_tinyaes.json "$WORK/tinyaes" > /dev/null
DS="$WORK/tinyaes"
SNR='hw(sbox(plaintext[0]^key[0]))'
printf "dataset: %s (%.1f MB on disk); %d cores; %d runs each, interleaved; load before %s\n" "$DS" \
  "$(calc "$(du -sb "$DS" | cut -f1) / 1e6")" "$(nproc)" "$REPEAT" "$(load)"
find "$DS" -name "*.fb" -exec cat {} + > /dev/null  # every run reads from the page cache
verify_times=() report_times=()
for _ in $(seq "$REPEAT"); do
  t0=$(now); "$BIN" verify "$DS" --deep > /dev/null; t1=$(now)
  "$BIN" report "$DS" -o "$WORK/report.html" --snr "$SNR" --json "$WORK/r1.json" > "$WORK/out.txt"; t2=$(now)
  verify_times+=("$(calc "$t1 - $t0")") report_times+=("$(calc "$t2 - $t1")")
done
V=$(printf '%s\n' "${verify_times[@]}" | median) R=$(printf '%s\n' "${report_times[@]}" | median)
printf "verify --deep runs: %s\n" "$(printf '%.2f ' "${verify_times[@]}")"
printf "report --snr runs:  %s\n" "$(printf '%.2f ' "${report_times[@]}")"
printf "verify --deep: median %.3f s; report --snr: median %.3f s; ratio of medians %.2fx (target <= 1.5x); load after %s\n" \
  "$V" "$R" "$(calc "$R / $V")" "$(load)"
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
