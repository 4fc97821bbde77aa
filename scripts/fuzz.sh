#!/usr/bin/env bash
# Build the libFuzzer targets (clang, ASan+UBSan) in build-asan/ and run each
# for SECONDS (default 60) on seed corpora made from the golden datasets, a
# freshly generated dataset and the shipped configs. Crashes are saved by
# libFuzzer as build-asan/artifacts/<target>/crash-*; turn each into a
# regression test. Longer runs: scripts/fuzz.sh 3600 (or one target:
# FUZZ_TARGETS=fuzz_shard scripts/fuzz.sh 600). FUZZ_PARALLEL=N runs N
# targets at once (default 2).
# Usage: scripts/fuzz.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_TARGET="${1:-60}"
B="${SEDPACK_FUZZ_BUILD_DIR:-build-asan}"
GOLDEN="${SEDPACK_GOLDEN_DIR:-tests/data/golden}"
T0=$(date +%s)
# The fuzz targets live in the ASan+UBSan tree of the hardening stage (same
# configuration, scripts/sanitizer-trees.sh); only they are built here.
# shellcheck source=scripts/sanitizer-trees.sh
. ./scripts/sanitizer-trees.sh
configure_asan_tree "$B" > /dev/null
TARGETS="${FUZZ_TARGETS:-fuzz_metadata fuzz_shard fuzz_decompress fuzz_hdf5_mapping fuzz_trs}"
# The seed dataset is written by the `sedpack` tool of the optimized tree
# (the sanitizer tree does not build the tool): SEDPACK_SEED_CLI if given,
# else build/src/cli/sedpack.
SEED_CLI="${SEDPACK_SEED_CLI:-${SEDPACK_BUILD_DIR:-build}/src/cli/sedpack}"
if [ ! -x "$SEED_CLI" ]; then
  echo "fuzz.sh: no sedpack tool at $SEED_CLI to write the seed dataset; run scripts/build.sh first" \
       "(or set SEDPACK_SEED_CLI)" >&2
  exit 2
fi
cmake --build "$B" -j "${SEDPACK_JOBS:-2}" --target $TARGETS > /dev/null
T1=$(date +%s)

# Seed corpora (rebuilt every run, never committed).
C="$B/corpus"
rm -rf "$C"
mkdir -p "$C"/{fuzz_metadata,fuzz_shard,fuzz_decompress,fuzz_hdf5_mapping,fuzz_trs}
rm -rf "$B/seed-ds"
ASAN_OPTIONS=detect_leaks=0 "$SEED_CLI" generate configs/generate_small.json "$B/seed-ds" > /dev/null
python3 - "$C" "$GOLDEN" "$B/seed-ds" <<'PY'
import json, os, sys, hashlib
corpus, roots = sys.argv[1], sys.argv[2:]
choices = {("fb", ""): 0, ("fb", "GZIP"): 1, ("fb", "ZLIB"): 1, ("fb", "BZ2"): 2, ("fb", "LZMA"): 3,
           ("fb", "LZ4"): 4, ("fb", "ZSTD"): 5, ("npz", ""): 6, ("npz", "ZIP"): 7, ("tfrec", ""): 8,
           ("tfrec", "GZIP"): 9, ("tfrec", "ZLIB"): 10}
codec_byte = {"GZIP": 0, "ZLIB": 1, "BZ2": 2, "LZMA": 3, "LZ4": 4, "ZSTD": 5}
def put(target, data):
    name = hashlib.sha1(data).hexdigest()
    with open(os.path.join(corpus, target, name), "wb") as f:
        f.write(data)
for top in roots:
    for dirpath, _, files in os.walk(top):
        if "dataset_info.json" not in files:
            continue
        info = json.load(open(os.path.join(dirpath, "dataset_info.json")))
        st = info["dataset_structure"]
        key = (st.get("shard_file_type", "fb"), st.get("compression", ""))
        for sub, _, fs in os.walk(dirpath):
            for f in fs:
                p = os.path.join(sub, f)
                data = open(p, "rb").read()
                if f.endswith(".json"):
                    put("fuzz_metadata", data)
                elif key in choices and len(data) < (1 << 20):
                    put("fuzz_shard", bytes([choices[key]]) + data)
                    if key[0] == "fb" and key[1] in codec_byte:
                        put("fuzz_decompress", bytes([codec_byte[key[1]]]) + data)
                        if key[1] in ("LZ4", "GZIP"):  # The range decoder: points header, then the file.
                            put("fuzz_decompress", bytes([0x41 if key[1] == "LZ4" else 0x40, 10]) +
                                bytes(16) + data)
PY
cp configs/import_*.json "$C/fuzz_hdf5_mapping/"
# TRS seeds: small files of every coding, v1 and v2, written by the test helper.
for spec in "1 0x02 6 20 --v2 --titles" "2 0x01 4 16" "3 0x04 3 8 --titles" "4 0x14 5 12 --v2"; do
  set -- $spec
  python3 tests/capture/trs_tool.py write "$C/fuzz_trs/seed_$1.trs" $spec
done

# Run FUZZ_PARALLEL targets at a time (default 2, one per core of a CI
# machine); the table is printed in target order once all have finished.
PARALLEL="${FUZZ_PARALLEL:-2}"
run_target() {
  local t=$1
  mkdir -p "$B/artifacts/$t"
  local rc=0
  ASAN_OPTIONS=detect_leaks=1 "$B/fuzz/$t" "$C/$t" -max_total_time="$SECONDS_PER_TARGET" -rss_limit_mb=2048 \
    -timeout=10 -artifact_prefix="$B/artifacts/$t/" -print_final_stats=1 > "$B/$t.log" 2>&1 || rc=$?
  echo "$rc" > "$B/$t.rc"
}
T2=$(date +%s)
RUN=()
for t in $TARGETS; do
  [ -x "$B/fuzz/$t" ] || continue
  RUN+=("$t")
  rm -f "$B/$t.rc"
  run_target "$t" &
  while [ "$(jobs -rp | wc -l)" -ge "$PARALLEL" ]; do wait -n || true; done
done
wait

T3=$(date +%s)
echo "fuzz.sh: build $((T1 - T0)) s, seed corpora $((T2 - T1)) s, runs $((T3 - T2)) s (${#RUN[@]} targets, $PARALLEL at a time)"
printf "%-20s %12s %12s %8s\n" target execs execs/s seconds
status=0
for t in "${RUN[@]}"; do
  log="$B/$t.log"
  rc=$(cat "$B/$t.rc" 2>/dev/null || echo 1)
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  secs=$(grep -o 'Done [0-9]* runs in [0-9]* second' "$log" | grep -o 'in [0-9]*' | grep -o '[0-9]*' || echo "$SECONDS_PER_TARGET")
  printf "%-20s %12s %12s %8s\n" "$t" "$runs" "$(( runs / (secs > 0 ? secs : 1) ))" "$secs"
  if [ "$rc" -ne 0 ]; then
    echo "  $t FAILED (exit $rc); see $log and $B/artifacts/$t/" >&2
    status=1
  fi
done
exit $status
