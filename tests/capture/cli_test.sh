#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The capture commands end to end: TRS and ChipWhisperer fixtures written by
# trs_tool.py (struct-based, independent of the C++ code), imported with 1 and
# 2 ranks, exported with export-trs and parsed back by trs_tool.py's own reader.
# Usage: cli_test.sh SEDPACK TEST_DIR [MPIRUN]
set -euo pipefail
SEDPACK=$1
HERE=$2
MPIRUN=${3:-}
TOOL="python3 $HERE/trs_tool.py"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
expect_code() {  # CODE MESSAGE-PATTERN COMMAND...
  local want=$1 pat=$2
  shift 2
  local rc=0
  "$@" > "$T/out.txt" 2> "$T/err.txt" || rc=$?
  [ "$rc" = "$want" ] || { cat "$T/err.txt" >&2; fail "exit $rc, want $want: $*"; }
  grep -q -- "$pat" "$T/err.txt" || { cat "$T/err.txt" >&2; fail "no \"$pat\" in the error of: $*"; }
}

# TRS v2 (titles, INPUT/KEY parameters, int16) in two files, and v1 of every coding.
$TOOL write "$T/a.trs" 1 0x02 40 100 --v2 --titles
$TOOL write "$T/b.trs" 2 0x02 25 100 --v2 --titles
"$SEDPACK" inspect-trs "$T/a.trs" > "$T/inspect.txt"
grep -q "TRS version 2, 40 traces of 100 int16 samples" "$T/inspect.txt" || { cat "$T/inspect.txt"; fail inspect; }
grep -q 'data.INPUT  uint8 (16,).*-> attribute "INPUT"' "$T/inspect.txt" || { cat "$T/inspect.txt"; fail inspect fields; }
"$SEDPACK" inspect-trs "$T/a.trs" --json > "$T/inspect.json"
python3 -c "
import json, sys
j = json.load(open('$T/inspect.json'))
assert j['version'] == 2 and j['number_traces'] == 40 and j['scale_y'] == 0.25, j
assert [d['name'] for d in j['data_fields']] == ['INPUT', 'KEY'], j
assert j['trace_set_parameters'] == {'LAB': 'x1'}, j
"
"$SEDPACK" inspect-trs "$T/a.trs" --mapping > "$T/mapping.json"
python3 -c "
import json
m = json.load(open('$T/mapping.json'))
assert m['import_trs']['splits']['train']['attributes'] == {'title': 'title', 'INPUT': 'data.INPUT', 'KEY': 'data.KEY', 'trace': 'samples'}, m
"

"$SEDPACK" import-trs "$T/a.trs" "$T/b.trs" -o "$T/ds1" -q
"$SEDPACK" check "$T/ds1" > /dev/null
"$SEDPACK" export-trs "$T/ds1" -s train -o "$T/back1.trs" -q
$TOOL compare "$T/back1.trs" "$T/a.trs" "$T/b.trs"
expect_code 2 "already exists" "$SEDPACK" export-trs "$T/ds1" -s train -o "$T/back1.trs"

# A mapping that renames and drops: same JSON shape as import-hdf5's.
python3 - "$T/mapping.json" "$T/renamed.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["dataset_structure"]["saved_data_description"] = [
    a for a in m["dataset_structure"]["saved_data_description"] if a["name"] not in ("title", "KEY")]
for a in m["dataset_structure"]["saved_data_description"]:
    if a["name"] == "INPUT":
        a["name"] = "plaintext"
m["import_trs"]["splits"]["train"]["attributes"] = {"plaintext": "data.INPUT", "trace": "samples"}
json.dump(m, open(sys.argv[2], "w"))
PY
"$SEDPACK" import-trs "$T/a.trs" -c "$T/renamed.json" -o "$T/ds_renamed" -q
"$SEDPACK" info "$T/ds_renamed" | grep -q plaintext || fail "renamed attribute missing"

for c in 0x01 0x04 0x14; do
  $TOOL write "$T/v1_$c.trs" 5 $c 30 64
  "$SEDPACK" import-trs "$T/v1_$c.trs" -o "$T/v1_$c" -q
  "$SEDPACK" export-trs "$T/v1_$c" -o "$T/v1_$c.back.trs" -q
  $TOOL compare "$T/v1_$c.back.trs" "$T/v1_$c.trs"
done

# NUMBER_TRACES that disagrees with the file: refused (exit 1), or the complete records.
$TOOL write "$T/cut.trs" 3 0x14 20 64 --header-traces 0
expect_code 1 "NUMBER_TRACES says 0" "$SEDPACK" import-trs "$T/cut.trs" -o "$T/cut"
[ ! -e "$T/cut" ] || fail "a refused import left $T/cut"
"$SEDPACK" import-trs "$T/cut.trs" --complete-records -o "$T/cut" -q
# Layouts that disagree.
$TOOL write "$T/other.trs" 1 0x02 5 99 --v2 --titles
expect_code 2 "must agree" "$SEDPACK" import-trs "$T/a.trs" "$T/other.trs" -o "$T/mixed"
# Hostile: truncated header.
head -c 20 "$T/a.trs" > "$T/trunc.trs"
expect_code 1 "truncated header" "$SEDPACK" import-trs "$T/trunc.trs" -o "$T/trunc"
expect_code 2 "missing -o/--out" "$SEDPACK" import-trs "$T/a.trs"

# ChipWhisperer: two segments and a disabled one; knownkey.npy (pickled) skipped.
$TOOL cw "$T/cw"
"$SEDPACK" inspect-chipwhisperer "$T/cw/proj.cwp" > "$T/cw.txt"
grep -q "(disabled)" "$T/cw.txt" || { cat "$T/cw.txt"; fail "inspect-chipwhisperer"; }
"$SEDPACK" inspect-chipwhisperer "$T/cw/proj.cwp" --json | python3 -c "
import json, sys
j = json.load(sys.stdin)
assert [s['enabled'] for s in j['segments']] == [True, False, True], j
assert [s['num_traces'] for s in j['segments'] if s['enabled']] == [27, 13], j
"
"$SEDPACK" import-chipwhisperer "$T/cw/proj.cwp" -o "$T/cwds" 2> "$T/cw_err.txt" > /dev/null
grep -q "never unpickled" "$T/cw_err.txt" || { cat "$T/cw_err.txt"; fail "no note on knownkey.npy"; }
"$SEDPACK" export-trs "$T/cwds" -o "$T/cw.trs" -q
$TOOL compare "$T/cw.trs" "cw:$T/cw"
"$SEDPACK" import-chipwhisperer "$T/cw/proj.cwp" --traces-float32 -o "$T/cwds32" -q
"$SEDPACK" info "$T/cwds32" | grep -q float32 || fail "--traces-float32"
# A project naming ../ paths.
mkdir -p "$T/evil"
printf '[Trace Management]\ntracefile0 = ..\\..\\etc\\config_x.cfg\nenabled0 = True\n' > "$T/evil/evil.cwp"
expect_code 2 "must stay inside the project" "$SEDPACK" import-chipwhisperer "$T/evil/evil.cwp" -o "$T/evilds"

# Two ranks: the same datasets, value for value.
if [ -n "$MPIRUN" ]; then
  "$MPIRUN" -n 2 --oversubscribe "$SEDPACK" import-trs "$T/a.trs" "$T/b.trs" -o "$T/ds2" -q
  "$SEDPACK" export-trs "$T/ds2" -o "$T/back2.trs" -q
  cmp "$T/back1.trs" "$T/back2.trs" || fail "2 ranks export differs from 1 rank"
  "$MPIRUN" -n 2 --oversubscribe "$SEDPACK" import-chipwhisperer "$T/cw/proj.cwp" -o "$T/cwds2" -q
  "$SEDPACK" export-trs "$T/cwds2" -o "$T/cw2.trs" -q
  cmp "$T/cw.trs" "$T/cw2.trs" || fail "2 ranks ChipWhisperer import differs"
fi
echo "capture cli test: ok"
