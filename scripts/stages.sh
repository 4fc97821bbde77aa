# Sourced by run-tests.sh and run-hardening.sh: run named stages, record wall
# and CPU time and outcome of each, and print them as one table at the end.
#
#   stage LABEL COMMAND...   run COMMAND, record a row; returns COMMAND's status
#   stage_table              print every row recorded so far (this process and
#                            any child that shared SEDPACK_STAGE_FILE), after the
#                            tail of the output of every test that failed
#   test_stage LABEL DIR ARGS...
#                            a stage that runs ctest --test-dir DIR ARGS...; if a
#                            test fails, its name and the last lines of its output
#                            are kept for stage_table, so that the end of a long
#                            log (often all a CI page shows) says what failed
#   rerun_stage LABEL DIR ARGS...
#                            after a failed test_stage on DIR: its failed tests
#                            once more (ctest --rerun-failed ARGS...); each is
#                            reported as flaky (passed when run again) or as
#                            failing again; returns 0 if none failed again
#
# Rows go to the file named by SEDPACK_STAGE_FILE, so that run-hardening.sh
# started by run-tests.sh adds its rows to the caller's table. The first script
# that sources this file creates it (and removes it on exit).
if [ -z "${SEDPACK_STAGE_FILE:-}" ]; then
  SEDPACK_STAGE_FILE=$(mktemp)
  SEDPACK_FAILED_FILE=$(mktemp)
  export SEDPACK_STAGE_FILE SEDPACK_FAILED_FILE
  SEDPACK_STAGE_OWNER=1
  trap 'rm -f "$SEDPACK_STAGE_FILE" "$SEDPACK_FAILED_FILE"' EXIT
fi
SEDPACK_FAILED_FILE=${SEDPACK_FAILED_FILE:-/dev/null}
SEDPACK_STAGE_T0=${SEDPACK_STAGE_T0:-$(date +%s)}
export SEDPACK_STAGE_T0

_stage_cpu() {  # STAGE_CPU=seconds of user + sys CPU used by the finished children of this shell
  # `times` must run in this shell, not inside $(...), where it would only see
  # the children of a subshell; its output goes through a file for that reason.
  local f
  f=$(mktemp)
  times > "$f"
  STAGE_CPU=$(tail -1 "$f" | awk '{ s = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); s += a[1] * 60 + a[2] } printf "%d", s }')
  rm -f "$f"
}

stage() {
  local label=$1 start cpu0 cpu1 rc=0
  shift
  start=$(date +%s)
  _stage_cpu
  cpu0=$STAGE_CPU
  echo "== stage: $label"
  "$@" || rc=$?
  _stage_cpu
  cpu1=$STAGE_CPU
  printf '%-14s %6s %6s  %s\n' "$label" "$(($(date +%s) - start))" "$((cpu1 - cpu0))" \
    "$([ $rc -eq 0 ] && echo ok || echo "FAILED (exit $rc)")" >> "$SEDPACK_STAGE_FILE"
  return $rc
}

_failed_tests() {  # DIR LABEL: append the failed tests of DIR's last ctest run
  local dir=$1 label=$2 failed=$1/Testing/Temporary/LastTestsFailed.log
  local log=$1/Testing/Temporary/LastTest.log name
  [ -f "$failed" ] || return 0
  while IFS= read -r name; do
    name=${name#*:}
    echo "-- $label: $name (its last lines; all of it: $dir/Testing/Temporary/LastTest*.log)"
    # A test's part of LastTest.log runs from "N/M Testing: NAME" to the line
    # after "<end of output>"; a timeout ends it with "Test time" alone.
    awk -v n="$name" '/^[0-9]+\/[0-9]+ Testing: / { t = $0; sub(/^[^:]*: /, "", t); if (t == n) { on = 1; next } }
      on && /^<end of output>|^Test time/ { exit } on' "$log" | tail -n 25
  done < "$failed" >> "$SEDPACK_FAILED_FILE"
}

test_stage() {
  local label=$1 dir=$2 rc=0
  shift 2
  rm -f "$dir/Testing/Temporary/LastTestsFailed.log"
  stage "$label" ctest --test-dir "$dir" "$@" || rc=$?
  [ $rc -eq 0 ] || _failed_tests "$dir" "$label"
  return $rc
}

rerun_stage() {
  local label=$1 dir=$2 rc=0 name again=""
  shift 2
  local failed=$dir/Testing/Temporary/LastTestsFailed.log
  [ -s "$failed" ] || return 1
  local first
  first=$(cut -d: -f2- "$failed")
  cp "$dir/Testing/Temporary/LastTest.log" "$dir/Testing/Temporary/LastTest-before-rerun.log"
  stage "$label" ctest --test-dir "$dir" --rerun-failed "$@" || rc=$?
  [ $rc -eq 0 ] || again=$(cut -d: -f2- "$failed" 2> /dev/null || true)
  while IFS= read -r name; do
    if grep -qxF -- "$name" <<< "$again"; then
      echo "-- $label: $name failed again"
    else
      echo "-- $label: $name is FLAKY: it failed above, then passed when run again"
    fi
  done <<< "$first" >> "$SEDPACK_FAILED_FILE"
  return $rc
}

stage_table() {
  if [ -s "$SEDPACK_FAILED_FILE" ]; then
    echo "== failed tests"
    cat "$SEDPACK_FAILED_FILE"
  fi
  echo "== stage timing (seconds; cpu = user + sys of the stage's processes)"
  printf '%-14s %6s %6s  %s\n' stage wall cpu result
  cat "$SEDPACK_STAGE_FILE"
  printf '%-14s %6s %6s\n' total "$(($(date +%s) - SEDPACK_STAGE_T0))" ""
}
