#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `sedpack fix`: diagnosis, --gc (dry run by default, --apply removes),
# --rebuild-index, --rewrite-digests with its audit record; and recompress /
# digest / verify --content / pack from the command line.
# Usage: fix_cli_test.sh SEDPACK CONFIG
set -euo pipefail
SEDPACK=$1 CONFIG=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
DS="$T/ds"
# (--no-journal: a journaled job leaves an empty .sedpack-hpc/jobs/, which a pack
# does not carry, and the unpack below must be byte-identical.)
"$SEDPACK" generate "$CONFIG" "$DS" --no-journal > /dev/null

# Leftovers of dead jobs.
mkdir -p "$DS/train/deadjob-r0/aa" "$T/.ds.recompress/train"
echo x > "$DS/train/deadjob-r0/aa/0123.fb"
echo x > "$DS/train/update_1700000000_0123456789abcdef0123456789abcdef_of_shards_list.json"
echo x > "$DS/update_1700000000_0123456789abcdef0123456789abcdef_of_dataset_info.json"
"$SEDPACK" fix "$DS" > "$T/diag.txt"
for want in "orphan train/deadjob-r0/aa/0123.fb" "temporary train/update_" "temporary update_" "recompress $T/.ds.recompress"; do
  grep -qF "$want" "$T/diag.txt" || { cat "$T/diag.txt"; fail "diagnosis lacks: $want"; }
done
"$SEDPACK" fix "$DS" --gc > /dev/null
[ -e "$DS/train/deadjob-r0/aa/0123.fb" ] && [ -d "$T/.ds.recompress" ] || fail "--gc without --apply removed something"
"$SEDPACK" fix "$DS" --gc --apply > "$T/gc.txt"
[ ! -e "$DS/train/deadjob-r0" ] || fail "orphan subtree left"
[ ! -e "$T/.ds.recompress" ] || fail "recompress folder left"
ls "$DS" | grep -q update_ && fail "temporary file left"
"$SEDPACK" verify "$DS" --deep | grep -q "OK$" || fail "not clean after --gc --apply"

# A deliberate edit of a leaf list breaks the hash chain; re-stamping needs a reason.
LIST=$(find "$DS/test" -name shards_list.json | awk '{print length, $0}' | sort -rn | head -1 | cut -d' ' -f2-)
sed -i 's/"number_of_examples"/ "number_of_examples"/' "$LIST"
set +e
"$SEDPACK" verify "$DS" > /dev/null; rc=$?
"$SEDPACK" fix "$DS" --rewrite-digests > /dev/null 2>&1; rc2=$?
set -e
[ $rc -eq 1 ] || fail "verify after the edit: exit $rc, want 1"
[ $rc2 -eq 2 ] || fail "--rewrite-digests without --reason: exit $rc2, want 2"
"$SEDPACK" fix "$DS" --rewrite-digests --reason "reformatted a list by hand" > "$T/rs.txt"
grep -q "re-stamped 0 shard hash entries and rewrote" "$T/rs.txt" || { cat "$T/rs.txt"; fail "re-stamp summary"; }
"$SEDPACK" verify "$DS" | grep -q "OK$" || fail "not clean after --rewrite-digests"
grep -q '"reason":"reformatted a list by hand"' "$DS/.sedpack-hpc/audit.jsonl" || fail "no audit record"

# Stale index: --rebuild-index.
"$SEDPACK" index build "$DS" > /dev/null
"$SEDPACK" stats "$DS" --write > /dev/null   # rewrites dataset_info.json
"$SEDPACK" fix "$DS" | grep -q "index.bin: stale" || fail "stale index not reported"
"$SEDPACK" fix "$DS" --rebuild-index | grep -q "rebuilt" || fail "index not rebuilt"
"$SEDPACK" index check "$DS" > /dev/null || fail "index not fresh after --rebuild-index"

# Content digests survive recompress; verify --content; a pack verifies in place.
"$SEDPACK" digest "$DS" | grep -q "^content id " || fail "digest"
ID=$("$SEDPACK" digest "$DS" --print | tail -1)
"$SEDPACK" recompress "$DS" --profile archive > /dev/null
"$SEDPACK" verify "$DS" --deep --content | grep -q "matches the recorded one" || fail "content changed by recompress"
[ "$("$SEDPACK" digest "$DS" --print | tail -1)" = "$ID" ] || fail "content id changed by recompress"
"$SEDPACK" info "$DS" | grep -q "LZMA" || fail "not recompressed"
"$SEDPACK" pack "$DS" -o "$T/ds.pack" > /dev/null
"$SEDPACK" verify "$T/ds.pack" --deep | grep -q "OK$" || fail "pack does not verify"
"$SEDPACK" unpack "$T/ds.pack" "$T/back" > /dev/null
diff -r "$DS" "$T/back" > /dev/null || fail "unpack is not byte-identical"
echo "fix cli test passed"
