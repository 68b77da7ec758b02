#!/usr/bin/env python3
"""Copy Swift sources with their FoundationNetworking behaviour branches flipped.

Usage: flip-networking-branches.py SOURCE_DIR DEST_DIR [IMPORT ...]

Every `#if canImport(FoundationNetworking)` / `#if !canImport(FoundationNetworking)` whose block
holds more than `import FoundationNetworking` has its condition negated, so that on Linux the
compiler sees the code Apple platforms build. A branch whose `#if` line carries the comment
`apple-check: Linux cannot build this side` is left as it is. Each IMPORT is added as an import to
every file that had a branch flipped (the shims of what Apple's Foundation brings along).
Prints how many branches it flipped.
"""
import pathlib
import re
import sys

source, dest = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
extra_imports = sys.argv[3:]
branch = re.compile(r"^(\s*)#if (!?)canImport\(FoundationNetworking\)(.*)$")
flipped = 0
for path in sorted(source.rglob("*.swift")):
    lines = path.read_text(encoding="utf-8").split("\n")
    changed = False
    for index, line in enumerate(lines):
        match = branch.match(line)
        if not match or "apple-check: Linux cannot build this side" in line:
            continue
        body = []
        for following in lines[index + 1:]:
            if following.strip().startswith("#"):
                break
            if following.strip():
                body.append(following.strip())
        if body == ["import FoundationNetworking"]:
            continue
        negation = "" if match.group(2) else "!"
        lines[index] = f"{match.group(1)}#if {negation}canImport(FoundationNetworking){match.group(3)}"
        flipped += 1
        changed = True
    if changed:
        lines = [f"import {name}" for name in extra_imports] + lines
    target = dest / path.relative_to(source)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("\n".join(lines), encoding="utf-8")
print(flipped)
