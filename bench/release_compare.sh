#!/usr/bin/env bash
# The GZIP write, GZIP read and serial verify of two builds of the tool, run
# interleaved in one session (the VM is noisy: only ratios measured side by side
# mean anything). Both tools must accept `generate CONFIG OUT` with
# --examples-train/--examples-test and `verify [--deep] DATASET`.
#
#   write   generate of configs/generate_tinyaes.json with GZIP, 512 train
#           examples, no test (81.9 MB of examples), each tool at its default level
#   read    verify --deep of that dataset as the OLD tool wrote it
#   verify  verify of the default TinyAES dataset (LZ4) as the OLD tool wrote it
#
# Prints the median and the minimum wall seconds of REPEAT runs and the
# old/new ratio of both.
# Usage: bench/release_compare.sh OLD_SEDPACK NEW_SEDPACK [WORKDIR] [REPEAT]
# e.g.   git worktree add /tmp/old <commit> && (cd /tmp/old && ./scripts/build.sh)
#        bench/release_compare.sh /tmp/old/build/src/cli/sedpack build/src/cli/sedpack
set -euo pipefail
cd "$(dirname "$0")/.."
OLD="$(realpath "$1")"
NEW="$(realpath "$2")"
WORK="${3:-${TMPDIR:-/tmp}/sedpack-release-compare}"
REPEAT="${4:-11}"
mkdir -p "$WORK"
. ./bench/measure.sh  # calc, median, now, load
stats() { sort -g | awk '{a[NR]=$1} END {printf "%s %s", (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2, a[1]}'; }

# The GZIP variant of the TinyAES config (the old tool may have no --compression).
python3 - "$WORK/gzip.json" << 'EOF'
import json, sys
c = json.load(open("configs/generate_tinyaes.json"))
c["dataset_structure"]["compression"] = "GZIP"
json.dump(c, open(sys.argv[1], "w"), indent=1)
EOF
rm -rf "$WORK/old-gzip" "$WORK/old-lz4"
"$OLD" generate "$WORK/gzip.json" "$WORK/old-gzip" --examples-train 512 --examples-test 0 > /dev/null
"$OLD" generate configs/generate_tinyaes.json "$WORK/old-lz4" > /dev/null

declare -A runs
for i in $(seq "$REPEAT"); do
  for tool in old new; do
    bin="$OLD"
    [ "$tool" = new ] && bin="$NEW"
    rm -rf "$WORK/out"
    t0=$(now); "$bin" generate "$WORK/gzip.json" "$WORK/out" --examples-train 512 --examples-test 0 > /dev/null; t1=$(now)
    runs[write-$tool]+="$(calc "$t1 - $t0") "
    t0=$(now); "$bin" verify --deep "$WORK/old-gzip" > /dev/null; t1=$(now)
    runs[read-$tool]+="$(calc "$t1 - $t0") "
    t0=$(now); "$bin" verify "$WORK/old-lz4" > /dev/null; t1=$(now)
    runs[verify-$tool]+="$(calc "$t1 - $t0") "
  done
done
printf "%-7s %18s %18s %14s\n" step "old: median (min)" "new: median (min)" "ratio (min)"
for step in write read verify; do
  read -r om omin <<< "$(printf '%s\n' ${runs[$step-old]} | stats)"
  read -r nm nmin <<< "$(printf '%s\n' ${runs[$step-new]} | stats)"
  printf "%-7s %9.3f (%5.3f) %9.3f (%5.3f) %6.2fx (%.2fx)\n" "$step" "$om" "$omin" "$nm" "$nmin" \
    "$(calc "$om / $nm")" "$(calc "$omin / $nmin")"
done
rm -rf "$WORK/out"
printf "GZIP files: old %s bytes, new %s bytes\n" "$(du -sb "$WORK/old-gzip/train" | cut -f1)" \
  "$(rm -rf "$WORK/out" && "$NEW" generate "$WORK/gzip.json" "$WORK/out" --examples-train 512 --examples-test 0 > /dev/null && du -sb "$WORK/out/train" | cut -f1)"
