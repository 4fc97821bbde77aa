#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ctest entry of bench/load.sh at a size that takes well under a minute on the
# CI's 2 cores: 8 ranks generate and verify --deep (oversubscribed), then 32
# threads read under a 1 GiB address-space cap. bench/load.sh fails on any
# error, wrong value or timeout (a deadlock); the table it prints is the log.
# Usage: load_test.sh SEDPACK FETCH_LOAD MPIEXEC
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
# Sanitizer builds (SEDPACK_SANITIZED) fetch far slower: 32 threads x 250
# fetches took 76 s under ASan on 2 cores next to another test, against about
# 7 s for 32 x 2000 in the normal build. There each thread fetches 125 examples;
# the checks are the same.
FETCHES=2000
[ -z "${SEDPACK_SANITIZED:-}" ] || FETCHES=125
SEDPACK=$1 FETCH_LOAD=$2 MPIEXEC=$3 RANKS=8 TRAIN=8192 TRACE=8000 PER_SHARD=64 \
  READ_THREADS=32 FETCHES=$FETCHES CACHE_MB=16 CAP_MB=1024 STEP_TIMEOUT=120 \
  "$HERE/../../bench/load.sh" "" "$WORK/load"
echo "load test passed"
