#!/usr/bin/env bash
# import-trs throughput against a plain read of the same file, in the same run,
# on a generated TRS (int8 samples, 16 data bytes split by the legacy input
# objects) of TRACES x SAMPLES, warm page cache:
#  - plain read: `cat FILE > /dev/null`, and `cp` (read + write the same bytes);
#  - import with 1 rank and, with mpirun, 2 ranks: the default profile (LZ4 +
#    sha256) and a fast one (uncompressed, xxh64);
#  - figures are MB/s of file bytes, median of REPEAT runs, with the process's
#    CPU seconds (user + sys; on a shared machine wall time is what others leave).
# Usage: bench/trs_import.sh [BUILD_DIR] [WORKDIR] [REPEAT] [TRACES] [SAMPLES]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="${1:-build}"
WORK="${2:-${TMPDIR:-/tmp}/sedpack-trs-bench}"
REPEAT="${3:-3}"
TRACES="${4:-500000}"
SAMPLES="${5:-1000}"
BIN="$BUILD/src/cli/sedpack"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
mkdir -p "$WORK"
F="$WORK/capture.trs"
python3 - "$F" "$TRACES" "$SAMPLES" <<'PY'
import os, struct, sys
path, n, ns = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def tlv(tag, v): return bytes([tag, len(v)]) + v
h = (tlv(0x41, struct.pack("<I", n)) + tlv(0x42, struct.pack("<I", ns)) + tlv(0x43, b"\x01") +
     tlv(0x44, struct.pack("<H", 16)) + tlv(0x6B, struct.pack("<I", 0)) + tlv(0x6E, struct.pack("<I", 16)) + b"\x5f\x00")
rec = 16 + ns
with open(path, "wb") as f:
    f.write(h)
    block = 4096
    for i in range(0, n, block):
        f.write(os.urandom(min(block, n - i) * rec))
PY
SIZE=$(stat -c %s "$F")
cat "$F" > /dev/null
. ./bench/measure.sh  # calc, median, now, load
run() {  # LABEL COMMAND... : prints "LABEL  MB/s  cpu s"
  local label=$1
  shift
  local walls="" cpus=""
  for _ in $(seq "$REPEAT"); do
    rm -rf "$WORK/out" "$WORK/copy.trs"
    /usr/bin/time -f "%e %U %S" -o "$WORK/time.txt" "$@" > /dev/null
    read -r wall user sys < "$WORK/time.txt"
    walls="$walls $wall"
    cpus="$cpus $(awk "BEGIN { print $user + $sys }")"
  done
  local w c
  w=$(echo "$walls" | tr ' ' '\n' | grep . | median)
  c=$(echo "$cpus" | tr ' ' '\n' | grep . | median)
  printf "%-34s %8.1f MB/s   %5.2f CPU s   (%.2f s wall)\n" "$label" "$(awk "BEGIN { print $SIZE / 1e6 / $w }")" "$c" "$w"
}
echo "TRS file: $((SIZE / 1000000)) MB, $TRACES traces of $SAMPLES int8 samples; load: $(cut -d' ' -f1-3 /proc/loadavg)"
run "cat > /dev/null" sh -c "cat '$F' > /dev/null"
run "cp (read + write)" cp "$F" "$WORK/copy.trs"
run "import-trs, 1 rank, LZ4+sha256" "$BIN" import-trs "$F" -o "$WORK/out" -q
run "import-trs, 1 rank, none+xxh64" "$BIN" import-trs "$F" -o "$WORK/out" -q --compression none --hash-algorithms xxh64
if command -v mpirun > /dev/null; then
  run "import-trs, 2 ranks, LZ4+sha256" mpirun -n 2 "$BIN" import-trs "$F" -o "$WORK/out" -q
  run "import-trs, 2 ranks, none+xxh64" mpirun -n 2 "$BIN" import-trs "$F" -o "$WORK/out" -q --compression none \
      --hash-algorithms xxh64
fi
rm -rf "$WORK"
