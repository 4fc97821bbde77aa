#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Containment through the `sedpack` binary: a dataset whose metadata names
# /etc/passwd or ../x, whose tree holds symbolic links out of its root, or
# whose counts and shapes are absurd gives every command a clear error naming
# the file; nothing outside the root is read, written or removed. Every command
# runs under a 2 GiB address-space cap, so an allocation sized by a hostile
# count or shape fails the test instead of passing on a big machine.
# Usage: containment_cli_test.sh SEDPACK [PYTHON3]
set -euo pipefail
SEDPACK=$1
PYTHON=${2:-python3}
HERE=$(cd "$(dirname "$0")" && pwd)
T=$(realpath "$(mktemp -d)")   # canonical: messages print where links resolve to
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
tamper() { "$PYTHON" "$HERE/tamper.py" "$@"; }
# A cap on address space turns an unbounded allocation into a failure. Sanitizer
# builds reserve terabytes of shadow address space, so there the cap is left off
# (the normal build runs this test with it).
if [ -z "${SEDPACK_SANITIZED:-}" ]; then
  ulimit -v $((2 * 1024 * 1024))
else
  echo "sanitizer build: no address-space cap"
fi

# run WANT_RC PATTERN ARGS...: `sedpack ARGS` exits WANT_RC and prints PATTERN
# (stdout or stderr). The matching line is echoed for the log.
run() {
  local want=$1 pattern=$2 rc=0
  shift 2
  timeout 120 "$SEDPACK" "$@" > "$T/out" 2>&1 || rc=$?
  if [ "$rc" -ne "$want" ] || ! grep -qF -- "$pattern" "$T/out"; then
    cat "$T/out" >&2
    fail "sedpack $*: exit $rc (want $want), output should contain: $pattern"
  fi
  echo "  sedpack $* -> $rc: $(grep -F -m1 -- "$pattern" "$T/out" | cut -c1-240)"
}

# One small dataset, hashed with sha256 only (tamper.py re-stamps sha256).
cat > "$T/config.json" <<'EOF'
{
  "metadata": {"description": "containment test", "dataset_version": "1.0.0"},
  "dataset_structure": {"compression": "LZ4", "examples_per_shard": 8, "shard_file_type": "fb",
                        "hash_checksum_algorithms": ["sha256"]},
  "generate": {"seed": 7, "examples": {"train": 32, "test": 16}, "trace_length": 256,
               "key_group_size": 8, "shard_by_key": false, "threads": 1}
}
EOF
BASE="$T/base"
"$SEDPACK" generate "$T/config.json" "$BASE" > /dev/null
tamper restamp "$BASE"   # the same dataset in tamper.py's JSON layout
"$SEDPACK" verify "$BASE" --deep | grep -q "OK$" || fail "the base dataset does not verify"
LEAF=$(cd "$BASE" && find train -name shards_list.json | awk '{print length, $0}' | sort -rn | head -1 | cut -d' ' -f2-)
SHARD=$(grep -o '"file_path": "[^"]*\.fb"' "$BASE/$LEAF" | head -1 | cut -d'"' -f4)
SUB=train/$(cd "$BASE/train" && ls -d */ | head -1 | tr -d /)
[ -n "$SHARD" ] && [ -d "$BASE/$SUB" ] || fail "unexpected layout of the base dataset"

fresh() { rm -rf "$T/$1" "$T/out_$1"; cp -r "$BASE" "$T/$1"; mkdir "$T/out_$1"; echo "$T/$1"; }
# An orphan inside the dataset that `fix --gc --apply` must leave alone when it refuses.
plant_orphan() { mkdir -p "$1/test/deadjob-r0"; echo x > "$1/test/deadjob-r0/orphan.fb"; }

# ---- a, b: metadata naming a path outside the root ------------------------------
# Readers exit 1 for them, as verify does: the dataset is unsafe to follow (exit-code table).
for bad in /etc/passwd ../x.fb train/../../x; do
  case $bad in /*) why="absolute paths are not allowed" ;; *) why='a ".." component is not allowed' ;; esac
  echo "shard file_path $bad"
  DS=$(fresh shard_path)
  tamper set "$DS/$LEAF" shard_files.0.file_infos.0.file_path "\"$bad\""
  tamper restamp "$DS"
  plant_orphan "$DS"
  run 1 "ERROR path_escape $LEAF: shard_files[0].file_infos[0].file_path: $why" check "$DS"
  run 1 "ERROR path_escape $LEAF: shard_files[0].file_infos[0].file_path: $why" verify "$DS" --deep
  run 1 "$LEAF: shard_files[0].file_infos[0].file_path: $why (\"$bad\")" cat "$DS" --split train
  run 1 "unsafe $LEAF: shard_files[0].file_infos[0].file_path: $why" fix "$DS" --gc --apply
  [ -e "$DS/test/deadjob-r0/orphan.fb" ] && [ -e "$DS/$SHARD" ] || fail "fix --gc --apply removed files"
  run 1 "$LEAF: shard_files[0].file_infos[0].file_path: $why" index build "$DS"

  echo "child list file_path $bad"
  DS=$(fresh child_path)
  list="$bad"
  case $bad in *.fb) list=../shards_list.json ;; train/*) list=train/../../x/shards_list.json ;; esac
  tamper set "$DS/train/shards_list.json" children_shard_lists.0.shard_list_info_file.file_path "\"$list\""
  tamper restamp "$DS"
  want="train/shards_list.json: children_shard_lists[0].shard_list_info_file.file_path: $why"
  run 1 "ERROR path_escape $want" check "$DS"
  run 1 "ERROR path_escape $want" verify "$DS" --deep
  run 1 "$want" cat "$DS" --split train
  run 1 "unsafe $want" fix "$DS" --gc --apply
  run 1 "$want" index build "$DS"
done

# ---- c: symbolic links out of the root ------------------------------------------
OUTSIDE="leads outside the dataset root"

echo "c.i: a shard file that is a link to a file outside"
DS=$(fresh link_shard)
mv "$DS/$SHARD" "$T/out_link_shard/secret.fb"
ln -s "$T/out_link_shard/secret.fb" "$DS/$SHARD"
tamper restamp "$DS"   # the hashes now match the outside file: only containment can catch it
want="$DS/$SHARD $OUTSIDE $DS (it resolves to $T/out_link_shard/secret.fb); not followed"
run 1 "ERROR path_escape $SHARD: $want" check "$DS"
run 1 "ERROR path_escape $SHARD: $want" verify "$DS" --deep
run 1 "$want" cat "$DS" --split train
run 1 "unsafe $SHARD: $want" fix "$DS" --gc --apply
run 0 "wrote" index build "$DS"   # the index holds paths only
run 1 "$want" get "$DS" --split train --index 0
for cmd in "stats" "digest" "recompress --profile hot"; do
  # shellcheck disable=SC2086
  run 1 "$want" $cmd "$DS"
done
run 2 "symbolic links cannot be packed" pack "$DS" -o "$T/link_shard.pack"
[ -e "$T/out_link_shard/secret.fb" ] || fail "the outside file is gone"

echo "c.ii: a split sub-folder that is a link to a folder outside (valid-looking lists and shards)"
DS=$(fresh link_sub)
mv "$DS/$SUB" "$T/out_link_sub/"
ln -s "../../out_link_sub/$(basename "$SUB")" "$DS/$SUB"
echo x > "$T/out_link_sub/$(basename "$SUB")/stray.fb"
plant_orphan "$DS"
want="$DS/$SUB/shards_list.json $OUTSIDE $DS (it resolves to $T/out_link_sub/$(basename "$SUB")/shards_list.json); not followed"
run 1 "ERROR path_escape $SUB/shards_list.json: $want" check "$DS"
run 1 "ERROR path_escape $SUB/shards_list.json: $want" verify "$DS" --deep
run 1 "$want" cat "$DS" --split train
run 1 "unsafe $SUB/shards_list.json: $want" fix "$DS" --gc --apply
[ -e "$T/out_link_sub/$(basename "$SUB")/stray.fb" ] || fail "fix removed a file outside the root"
[ -e "$DS/test/deadjob-r0/orphan.fb" ] || fail "fix removed an orphan although it refused"
run 1 "$want" index build "$DS"
run 1 "$want" stats "$DS"

echo "c.iii: dataset_info.json's split list path through a linked folder (train -> outside)"
DS=$(fresh link_split)
mv "$DS/train" "$T/out_link_split/"
ln -s "$T/out_link_split/train" "$DS/train"
mkdir -p "$T/out_link_split/train/deadjob-r0"
echo x > "$T/out_link_split/train/deadjob-r0/stray.fb"
want="$DS/train/shards_list.json $OUTSIDE $DS (it resolves to $T/out_link_split/train/shards_list.json); not followed"
run 1 "ERROR path_escape train/shards_list.json: $want" check "$DS"
run 1 "ERROR path_escape train: $DS/train $OUTSIDE $DS (it resolves to $T/out_link_split/train); not followed" \
  check "$DS"
run 1 "ERROR path_escape train/shards_list.json: $want" verify "$DS" --deep
run 1 "$want" cat "$DS" --split train
run 1 "unsafe train: $DS/train $OUTSIDE" fix "$DS" --gc --apply
[ -e "$T/out_link_split/train/deadjob-r0/stray.fb" ] || fail "fix removed a file outside the root"
run 1 "$want" index build "$DS"

echo "c.iv: the sidecar folder is a link out: index build and digest do not write through it"
DS=$(fresh link_sidecar)
rm -rf "$DS/.sedpack-hpc"  # the writer's commit lock lives there; replace the folder by the link
ln -s "$T/out_link_sidecar" "$DS/.sedpack-hpc"
run 1 "$DS/.sedpack-hpc $OUTSIDE $DS (it resolves to $T/out_link_sidecar); not followed" index build "$DS"
run 1 "$DS/.sedpack-hpc $OUTSIDE" digest "$DS"
[ -z "$(ls -A "$T/out_link_sidecar")" ] || fail "a sidecar was written outside the root"

echo "c.v: links that stay inside the root keep working"
DS=$(fresh link_inside)
mkdir "$DS/store"
mv "$DS/$SHARD" "$DS/store/a.fb"
ln -s "$(realpath --relative-to="$(dirname "$DS/$SHARD")" "$DS/store/a.fb")" "$DS/$SHARD"
SHARD2=$(grep -o '"file_path": "[^"]*\.fb"' "$BASE/$LEAF" | sed -n 2p | cut -d'"' -f4)
mv "$DS/$SHARD2" "$DS/store/b.fb"
ln -s "$DS/store/b.fb" "$DS/$SHARD2"   # absolute, pointing back inside
run 0 "OK" verify "$DS" --deep
[ "$("$SEDPACK" cat "$DS" --split train | wc -l)" -eq 32 ] || fail "cat through inside links"

# ---- d: absurd number_of_examples ----------------------------------------------
echo "d: number_of_examples 2^62 on one shard"
DS=$(fresh count)
tamper set "$DS/$LEAF" shard_files.0.number_of_examples 4611686018427387904
tamper restamp "$DS"
run 1 "ERROR count_mismatch $LEAF: number_of_examples is 32 but the subtree adds up to 4611686018427387928" check "$DS"
run 1 "ERROR count_mismatch $SHARD: the shard holds 8 examples but $LEAF records 4611686018427387904" \
  verify "$DS" --deep
run 0 "" cat "$DS" --split train
run 0 "train: 4611686018427387928 examples in 4 shards" index build "$DS"
run 1 "$SHARD holds 8 examples, the metadata records 4611686018427387904" get "$DS" --split train --index 100

echo "d: counts that wrap around to 0 (4 x 2^62)"
DS=$(fresh count_wrap)
for i in 0 1 2 3; do tamper set "$DS/$LEAF" shard_files.$i.number_of_examples 4611686018427387904; done
tamper set "$DS/$LEAF" number_of_examples 0
run 1 "ERROR count_mismatch $LEAF: the number_of_examples / number_of_shards of the entries add up to more than 2^64 - 1" \
  check "$DS"
run 1 "index split train: example count overflows" index build "$DS"

for bad in -1 9223372036854775808; do
  echo "d: number_of_examples $bad"
  case $bad in -*) why="must not be negative, got -1" ;; *) why="is too large (at most 4611686018427387904), got $bad" ;; esac
  DS=$(fresh count_bad)
  tamper set "$DS/$LEAF" shard_files.0.number_of_examples "$bad"
  tamper restamp "$DS"
  run 1 "ERROR malformed $LEAF: shard_files[0].number_of_examples: $why" check "$DS"
  run 1 "ERROR malformed $LEAF: shard_files[0].number_of_examples: $why" verify "$DS" --deep
  run 1 "$LEAF: shard_files[0].number_of_examples: $why" cat "$DS" --split train
  run 1 "$LEAF: shard_files[0].number_of_examples: $why" index build "$DS"
  DS=$(fresh count_bad_split)
  tamper set "$DS/dataset_info.json" splits.train.number_of_examples "$bad"
  for cmd in "info" "check" "cat --split train"; do
    # shellcheck disable=SC2086
    run 1 "dataset_info.json: splits.train.number_of_examples: $why" $cmd "$DS"
  done
done

echo "d: dataset_info.json's split count 2^62"
DS=$(fresh count_split)
tamper set "$DS/dataset_info.json" splits.train.number_of_examples 4611686018427387904
run 1 "ERROR count_mismatch train/shards_list.json: the parent's number_of_examples is 4611686018427387904 but the subtree adds up to 32" \
  check "$DS"

# ---- e: absurd shapes ------------------------------------------------------------
echo "e: key of shape (1048576, 1048576) uint8 (2^40 bytes a value) with 16-byte shards"
DS=$(fresh shape)
tamper set "$DS/dataset_info.json" dataset_structure.saved_data_description.1.shape "[1048576, 1048576]"
want='attribute "key" holds 16 bytes, but dtype uint8 and shape (1048576, 1048576) need 1099511627776'
run 1 "ERROR malformed $SHARD: fb shard: example 0 $want" verify "$DS" --deep
run 1 "$SHARD: fb shard: example 0 $want" cat "$DS" --split train
run 1 ".fb: fb shard: example 0 $want" stats "$DS"   # ranks and threads race: any shard
run 0 "wrote" index build "$DS"
run 1 "$SHARD: fb shard: example 0 $want" get "$DS" --split train --index 0

echo "e: shapes whose element or byte count overflows"
DS=$(fresh shape_overflow)
tamper set "$DS/dataset_info.json" dataset_structure.saved_data_description.1.shape "[4294967296, 4294967296]"
want='dataset_info.json: dataset_structure.saved_data_description[1]: attribute "key": shape (4294967296, 4294967296) is too large'
for cmd in "check" "verify --deep" "cat --split train" "index build"; do
  # shellcheck disable=SC2086
  run 1 "$want" $cmd "$DS"
done
tamper set "$DS/dataset_info.json" dataset_structure.saved_data_description.1.shape "[16]"
tamper set "$DS/dataset_info.json" dataset_structure.saved_data_description.0.shape "[2147483648, 2147483648]"
tamper set "$DS/dataset_info.json" dataset_structure.saved_data_description.0.dtype '"float64"'
want='dataset_info.json: dataset_structure.saved_data_description[0]: attribute "trace1": shape (2147483648, 2147483648) of float64 needs more than 4611686018427387904 bytes per value'
run 1 "$want" verify "$DS" --deep
run 1 "$want" cat "$DS" --split train

echo "containment cli test passed"
