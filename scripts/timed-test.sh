#!/usr/bin/env bash
# Cargo's runner for the test executables in scripts/test.sh: runs one and
# appends "<seconds> <executable>" to $TRAPLINE_TEST_TIMES, so the run can
# say which executables its time went to (CI has a budget). The test's own
# exit status is kept.
start=$(date +%s.%N)
status=0
"$@" || status=$?
if [ -n "${TRAPLINE_TEST_TIMES:-}" ]; then
  awk -v a="$start" -v b="$(date +%s.%N)" -v exe="${1##*/}" \
    'BEGIN { printf "%8.1f %s\n", b - a, exe }' >>"$TRAPLINE_TEST_TIMES"
fi
exit "$status"
