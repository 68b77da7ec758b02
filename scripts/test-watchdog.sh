#!/usr/bin/env bash
# Run a test command with a time limit, its output shown and kept in a log.
#
#   scripts/test-watchdog.sh SECONDS LOG COMMAND [ARGUMENTS...]
#
# When the limit passes first, it prints the tests that started and never ended (from the log),
# then every thread's stack of each test process (gdb, when installed), stops the command and
# exits 124. Otherwise it exits with the command's status.
set -uo pipefail
limit="$1"
log="$2"
shift 2
here="$(cd "$(dirname "$0")" && pwd)"

# Line-buffered, so that the log holds every line up to the moment the limit passes.
stdbuf -oL -eL "$@" > >(tee "$log") 2>&1 &
command_pid=$!
started=$SECONDS
while kill -0 "$command_pid" 2>/dev/null; do
  if ((SECONDS - started >= limit)); then
    echo
    echo "==> $* is still running after ${limit} s: it hangs or is far too slow."
    echo "==> Tests that started and never ended:"
    python3 "$here/unfinished-tests.py" "$log"
    for pid in $(pgrep -f 'PackageTests\.xctest' || true); do
      echo "==> Threads of the test process $pid:"
      if command -v gdb >/dev/null 2>&1; then
        timeout 120 gdb -p "$pid" -batch -ex "thread apply all bt" 2>&1 | grep -E '^(Thread|#)' || true
      else
        echo "(gdb is not installed: no stacks)"
      fi
      kill -9 "$pid" 2>/dev/null || true
    done
    kill "$command_pid" 2>/dev/null || true
    wait "$command_pid" 2>/dev/null
    exit 124
  fi
  sleep 1
done
wait "$command_pid"
