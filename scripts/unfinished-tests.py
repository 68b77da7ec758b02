#!/usr/bin/env python3
"""Print the tests and test cases that a `swift test` log shows as started but not ended.

Usage: scripts/unfinished-tests.py LOG
Swift Testing prints "◇ Test NAME started." when a test starts and "✔ Test NAME passed ..." or
"✘ Test NAME failed ..." (or another mark before "passed", such as a test with known issues)
when it ends ("recorded an issue" does not end it); a
parameterized test prints "◇ Test case passing ARGUMENTS to NAME started." for each case and
ends as a whole.
"""
import re
import sys

started = {}
ended = set()
with open(sys.argv[1], encoding="utf-8", errors="replace") as log:
    for line in log:
        line = line.rstrip("\n")
        if line == "◇ Test run started.":
            continue
        if match := re.match(r"^◇ Test (\S+) started\.$", line):
            started[match.group(1)] = line
        elif match := re.match(r"^◇ Test case passing (.*) to (\S+) started\.$", line):
            started.setdefault(match.group(2), line)
            started[match.group(2) + " [" + match.group(1) + "]"] = line
        elif match := re.match(r"^\S+ Test (\S+) (passed|failed|skipped|with \d+ test cases? (passed|failed))", line):
            ended.add(match.group(1))

unfinished = [name for name in started if name.split(" [")[0] not in ended]
for name in unfinished:
    print(name)
if not unfinished:
    print("(none: every test that started has ended)")
