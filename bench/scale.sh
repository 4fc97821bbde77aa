#!/usr/bin/env bash
# Scale benchmark: datasets of many shards (one 256-sample trace per shard, the
# shape of the issue's measurement). For each size: shards, lists and examples
# per second and peak RSS of
#   generate (1 rank), cat --limit 1, get of the last example (no index),
#   index build (1 rank, then 2, which must give the same bytes), get of the
#   last example (with the index), verify at 1 rank (one
#   thread, then all cores) and 2 ranks.
# Peak RSS is GNU time's "Maximum resident set size" of the process (the largest
# rank's for mpirun runs, as mpirun reports its children's maximum).
# Usage: bench/scale.sh [SEDPACK_BIN] [WORKDIR] SIZE...   e.g. bench/scale.sh build/src/cli/sedpack /tmp/scale 100000 1000000
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="${1:-build/src/cli/sedpack}"
WORK="${2:-${TMPDIR:-/tmp}/sedpack-scale}"
shift 2 || true
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(100000)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
[ -x /usr/bin/time ] || { echo "scale.sh: needs GNU time (/usr/bin/time, Debian package 'time')" >&2; exit 2; }
mkdir -p "$WORK"
BIN=$(realpath "$BIN")

# run LABEL COUNT UNIT CMD...: time CMD, print seconds, COUNT/s and peak RSS.
run() {
  local label=$1 count=$2 unit=$3
  shift 3
  local log="$WORK/time.log"
  /usr/bin/time -v -o "$log" "$@" > "$WORK/out.txt" 2> "$WORK/err.txt" || {
    echo "scale.sh: $label failed:" >&2
    tail -5 "$WORK/err.txt" >&2
    return 1
  }
  local secs rss
  secs=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s }' "$log")
  rss=$(awk -F': ' '/Maximum resident set size/ { print int($2 / 1024) }' "$log")
  printf "  %-28s %9.2f s %12.0f %s/s %8d MB\n" "$label" "$secs" "$(awk "BEGIN { print $count / ($secs > 0 ? $secs : 0.001) }")" \
    "$unit" "$rss"
}

for n in "${SIZES[@]}"; do
  DS="$WORK/ds$n"
  CFG="$WORK/gen$n.json"
  python3 - "$CFG" "$n" <<'PY'
import json, sys
cfg = json.load(open("configs/generate_small.json"))
cfg["dataset_structure"]["examples_per_shard"] = 1
cfg["dataset_structure"]["compression"] = ""
cfg["dataset_structure"]["hash_checksum_algorithms"] = ["xxh64"]
cfg["generate"]["examples"] = {"train": int(sys.argv[2])}
cfg["generate"]["trace_length"] = 256
json.dump(cfg, open(sys.argv[1], "w"))
PY
  rm -rf "$DS"
  echo "== $n shards (one 256-sample example each, fb uncompressed, xxh64)"
  run "generate" "$n" shards "$BIN" generate "$CFG" "$DS"
  lists=$(find "$DS/train" -name shards_list.json | wc -l)
  biggest=$(find "$DS/train" -name shards_list.json -printf '%s\n' | sort -n | tail -1)
  echo "  $lists shards_list.json files, the largest $((biggest / 1024)) kB"
  run "cat --limit 1" 1 examples "$BIN" cat "$DS" --split train --limit 1
  rm -rf "$DS/.sedpack-hpc/index.bin"
  run "get last (no index)" 1 examples "$BIN" get "$DS" --split train --index $((n - 1))
  run "index build" "$n" shards "$BIN" index build "$DS"
  run "get last (index)" 1 examples "$BIN" get "$DS" --split train --index $((n - 1))
  cp "$DS/.sedpack-hpc/index.bin" "$WORK/index.serial"
  run "index build, 2 ranks" "$n" shards mpirun -n 2 "$BIN" index build "$DS"
  cmp -s "$DS/.sedpack-hpc/index.bin" "$WORK/index.serial" || { echo "scale.sh: the 2-rank index differs from the 1-rank one" >&2; exit 1; }
  run "verify, 1 rank, 1 thread" "$n" shards "$BIN" verify "$DS" -j 1
  run "verify, 1 rank, all cores" "$n" shards "$BIN" verify "$DS"
  run "verify, 2 ranks" "$n" shards mpirun -n 2 "$BIN" verify "$DS"
  [ -n "${SEDPACK_SCALE_KEEP:-}" ] || rm -rf "$DS"
done
