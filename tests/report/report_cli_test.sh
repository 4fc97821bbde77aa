#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `sedpack report` from the command line: the page and the JSON, exit codes
# (2 for usage, 1 for a corrupt dataset), nothing written on failure, a
# symbolic link written through, --json - on standard output.
# Usage: report_cli_test.sh SEDPACK CONFIG PYTHON
set -euo pipefail
SEDPACK=$1 CONFIG=$2 PYTHON=$3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
DS="$T/ds"
"$SEDPACK" generate "$CONFIG" "$DS" > /dev/null
SNR='hw(sbox(plaintext[0]^key[0]))'

"$SEDPACK" report "$DS" -o "$T/r.html" --snr "$SNR" --snr 'hw(plaintext[0]^key[0])' --json "$T/r.json" > "$T/out.txt"
grep -q "wrote $T/r.html" "$T/out.txt" || { cat "$T/out.txt"; fail "no summary line"; }
grep -q "<svg id=\"snr-train-1\"" "$T/r.html" || fail "no second SNR plot"
"$PYTHON" - "$T/r.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert j["schema"] == "sedpack-hpc/report/1", j["schema"]
assert j["snr"]["expression"] == "hw(sbox(plaintext[0]^key[0]))"
assert len(j["snrs"]) == 6, len(j["snrs"])  # two expressions on three splits
assert [s["split"] for s in j["splits"]] == ["train", "test", "holdout"]
# generate_small.json: 1000 samples, leak stride 7; SubBytes region at 250, AddRoundKey at 62.
assert j["snr"]["peak_sample"] == 251, j["snr"]
assert j["snrs"][1]["peak_sample"] == 63, j["snrs"][1]
PY

# --json - : only JSON on standard output, the summary on stderr.
"$SEDPACK" report "$DS" -s test --json - 2> "$T/err.txt" | "$PYTHON" -c 'import json,sys; json.load(sys.stdin)' \
  || fail "--json - is not JSON alone"

# Usage errors: exit 2, naming the problem, no page written.
expect() {  # expect CODE TEXT ARGS...
  local code=$1 text=$2; shift 2
  set +e
  "$SEDPACK" report "$@" > "$T/o.txt" 2> "$T/e.txt"; local rc=$?
  set -e
  [ $rc -eq "$code" ] || { cat "$T/e.txt"; fail "report $*: exit $rc, want $code"; }
  grep -qF -- "$text" "$T/e.txt" || { cat "$T/e.txt"; fail "report $*: stderr lacks: $text"; }
}
expect 2 'unknown attribute "plain"' "$DS" -o "$T/bad.html" --snr 'hw(plain[0])'
expect 2 'index 16 is out of range' "$DS" -o "$T/bad.html" --snr 'plaintext[16]'
expect 2 'not an integer dtype' "$DS" -o "$T/bad.html" --snr 'trace1[0]'
expect 2 "expected ')'" "$DS" -o "$T/bad.html" --snr 'hw(key[0]'
expect 2 'missing -o' "$DS"
expect 2 '--max-samples' "$DS" -o "$T/bad.html" --max-samples x
expect 2 'folder' "$DS" -o "$T"
expect 2 'no such folder' "$DS" -o "$T/nope/r.html"
[ ! -e "$T/bad.html" ] || fail "a page was written after a usage error"

# A corrupt shard: exit 1, the old page kept as it was.
cp "$T/r.html" "$T/keep.html"
SHARD=$(find "$DS/train" -name '*.fb' | sort | head -1)
printf 'garbage' | dd of="$SHARD" bs=1 seek=100 conv=notrunc status=none
expect 1 'mismatch' "$DS" -o "$T/r.html"
cmp -s "$T/r.html" "$T/keep.html" || fail "the page changed after a failed report"
ls "$T" | grep -q update_ && fail "a temporary file was left"

# A symbolic link is written through, not replaced.
"$SEDPACK" generate "$CONFIG" "$T/ds2" > /dev/null
touch "$T/target.html"
ln -s "$T/target.html" "$T/link.html"
"$SEDPACK" report "$T/ds2" -s holdout -o "$T/link.html" > /dev/null
[ -L "$T/link.html" ] || fail "the link was replaced"
grep -q "<svg" "$T/target.html" || fail "the page did not go through the link"
echo OK
