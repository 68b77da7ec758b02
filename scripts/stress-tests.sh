#!/usr/bin/env bash
# Run the default `swift test` N times in a row (built once) and say how each run went:
#
#   scripts/stress-tests.sh N [BUILD FLAGS...]
#
# One line per run (passed or failed, how long, and the failing tests), then "N passed, M failed".
# Each run is limited to 10 minutes (scripts/test-watchdog.sh prints what hangs). Exits non-zero
# when any run failed. Try it with the processor busy too: `yes >/dev/null &` twice, or under
# `taskset -c 0`.
set -uo pipefail
cd "$(dirname "$0")/.."
# At most 16 test cases at once (a caller's own setting wins). Unbounded, Swift Testing starts
# the suite's 1,400 tests together: on a 2-core machine that is about a thousand threads, the
# kernel switching between them for a third of the run's processor time, and calls waiting
# longer than their own timeouts for a turn.
export SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH="${SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH:-16}"
runs="${1:?usage: scripts/stress-tests.sh N [build flags...]}"
shift
swift build --build-tests "$@" >/dev/null || exit 1
# This run's logs only: .build/stress/run-N.log, and failed-run-N.log for each run that failed.
rm -rf .build/stress
mkdir -p .build/stress
passed=0
failed=0
slowest=0
for ((run = 1; run <= runs; run++)); do
  log=".build/stress/run-$run.log"
  start=$EPOCHREALTIME
  scripts/test-watchdog.sh 600 "$log" swift test --skip-build "$@" >/dev/null
  status=$?
  seconds=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
  if awk -v s="$seconds" -v m="$slowest" 'BEGIN { exit !(s > m) }'; then slowest=$seconds; fi
  summary=$(grep -a -E '^. Test run with' "$log" | tail -1 | sed -E 's/^. //')
  if ((status == 0)); then
    passed=$((passed + 1))
    echo "run $run: passed in ${seconds} s: $summary"
  else
    failed=$((failed + 1))
    echo "run $run: FAILED (status $status) in ${seconds} s: ${summary:-no summary}"
    grep -a -E '^✘ Test .* (recorded an issue|failed)' "$log" | cut -c1-300 | head -10 | sed 's/^/    /'
    cp "$log" ".build/stress/failed-run-$run.log"
  fi
done
echo "$passed passed, $failed failed (slowest run ${slowest} s)"
((failed == 0))
