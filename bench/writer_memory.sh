#!/usr/bin/env bash
# Writer memory against the shard count: `sedpack generate` of N one-example
# shards (256-sample traces, LZ4, xxh64: the scale bench's shape), journaled
# (the default) and --no-journal, each size in a fresh folder; prints wall
# seconds, peak RSS (GNU time) and the checks sidecar's size; then the same
# shards written by the Python filler (`Dataset.filler()`, `write_example`, one
# process; needs the built module: PYTHONPATH, default BIN's build/python). A
# writer's memory should not grow with N: its sidecar records go to disk as
# shards finish.
# Usage: bench/writer_memory.sh [SEDPACK_BIN] [WORKDIR] N...   e.g. bench/writer_memory.sh build/src/cli/sedpack /dev/shm/wm 50000 200000
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$(realpath "${1:-build/src/cli/sedpack}")
WORK="${2:-${TMPDIR:-/tmp}/sedpack-writer-memory}"
shift 2 || true
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(200000)
[ -x /usr/bin/time ] || { echo "writer_memory.sh: needs GNU time (/usr/bin/time, Debian package 'time')" >&2; exit 2; }
mkdir -p "$WORK"
printf "%-10s %-12s %9s %10s %12s\n" shards mode seconds "peak RSS" "checks.bin"
for n in "${SIZES[@]}"; do
  CFG="$WORK/gen$n.json"
  python3 - "$CFG" "$n" <<'PY'
import json, sys
cfg = json.load(open("configs/generate_small.json"))
cfg["dataset_structure"].update(examples_per_shard=1, compression="LZ4", hash_checksum_algorithms=["xxh64"])
cfg["generate"]["examples"] = {"train": int(sys.argv[2])}
cfg["generate"]["trace_length"] = 256
json.dump(cfg, open(sys.argv[1], "w"))
PY
  for mode in journaled --no-journal; do
    DS="$WORK/ds$n"
    rm -rf "$DS"
    extra=()
    [ "$mode" = journaled ] || extra=(--no-journal)
    /usr/bin/time -f "%e %M" -o "$WORK/time.txt" "$BIN" generate "$CFG" "$DS" -q --no-progress "${extra[@]}"
    read -r secs kb < "$WORK/time.txt"
    printf "%-10s %-12s %9.2f %7d MB %9.2f MB\n" "$n" "$mode" "$secs" $((kb / 1024)) \
      "$(awk "BEGIN { print $(stat -c %s "$DS/.sedpack-hpc/checks.bin") / 1048576 }")"
    rm -rf "$DS"
  done
  DS="$WORK/ds$n"
  rm -rf "$DS"
  PYTHONPATH="${PYTHONPATH:-$(dirname "$(dirname "$(dirname "$BIN")")")/python}" \
    /usr/bin/time -f "%e %M" -o "$WORK/time.txt" "${PYTHON:-python3}" - "$DS" "$n" <<'PY'
import sys
import numpy as np
from sedpack_hpc import Attribute, Dataset, DatasetStructure
structure = DatasetStructure(saved_data_description=[Attribute(name="trace1", dtype="float16", shape=(256,)),
                                                     Attribute(name="key", dtype="uint8", shape=(16,))],
                             examples_per_shard=1, compression="LZ4", hash_checksum_algorithms=["xxh64"])
ds = Dataset.create(sys.argv[1], metadata={"description": "writer memory"}, dataset_structure=structure)
trace = np.zeros(256, np.float16)
with ds.filler() as f:
    for i in range(int(sys.argv[2])):
        key = np.full(16, i % 256, np.uint8)
        f.write_example(values={"trace1": trace, "key": key}, split="train")
PY
  read -r secs kb < "$WORK/time.txt"
  printf "%-10s %-12s %9.2f %7d MB %9.2f MB\n" "$n" "python" "$secs" $((kb / 1024)) \
    "$(awk "BEGIN { print $(stat -c %s "$DS/.sedpack-hpc/checks.bin") / 1048576 }")"
  rm -rf "$DS"
done
