#!/usr/bin/env bash
# CI builds on Linux only, so every platform branch (`#if canImport(...)`, `#if os(...)`) needs a
# line in CONTRIBUTING.md's "Platform branches" list saying how it was checked. This fails when a
# branch has no line, or a line names a branch that no longer exists. It refuses APIs newer than
# the declared minimum platforms. Off Apple platforms it then type-checks the Apple side of the
# code: Errand's Combine, os, Network and Security branches, and Errand's and ErrandStubs'
# FoundationNetworking behaviour branches flipped (scripts/flip-networking-branches.py), against
# the API shapes in scripts/apple-shims/.
set -euo pipefail
cd "$(dirname "$0")/.."

found="$(grep -rnE '^[[:space:]]*#(if|elseif)[[:space:]].*(canImport|os|compiler)\(' \
    Sources Tests Examples Benchmarks/Sources --include='*.swift' |
  sed -E 's#//.*$##; s#^([^:]+):[0-9]+:[[:space:]]*\#(if|elseif)[[:space:]]+(.*[^[:space:]])[[:space:]]*$#- `\1` `\3`#' |
  sort -u)"
listed="$(sed -n '/^### Platform branches/,/^##/p' CONTRIBUTING.md |
  { grep -oE '^- `[^`]+` `[^`]+`' || true; } | sort -u)"

missing="$(comm -23 <(printf '%s\n' "$found") <(printf '%s\n' "$listed"))"
stale="$(comm -13 <(printf '%s\n' "$found") <(printf '%s\n' "$listed"))"
if [ -n "$missing" ] || [ -n "$stale" ]; then
  [ -z "$missing" ] || printf 'Platform branches with no line in CONTRIBUTING.md:\n%s\n' "$missing" >&2
  [ -z "$stale" ] || printf 'Lines in CONTRIBUTING.md for branches that no longer exist:\n%s\n' "$stale" >&2
  echo 'Add "- `file` `condition`: how it was checked" under "### Platform branches".' >&2
  exit 1
fi
echo "every platform branch ($(printf '%s\n' "$found" | wc -l | tr -d ' ')) says how it was checked"

# Linux applies no availability checking, so an API newer than the declared minimums (macOS 13,
# iOS 16, tvOS 16, watchOS 9) would pass here and fail on a Mac: refuse the ones most likely.
newer='\bMutex\b|\bAtomic<|import Synchronization|\bRawSpan\b|\bSpan<|\bInlineArray\b'
newer="$newer"'|Task\(name:|Task\.immediate|withDiscardingTaskGroup|@Observable\b|isolated deinit'
if hits="$(grep -rnE "$newer" Sources --include='*.swift' | grep -vE '^[^:]+:[0-9]+:[[:space:]]*//')"; then
  printf 'APIs newer than the declared minimum platforms (macOS 13, iOS 16):\n%s\n' "$hits" >&2
  exit 1
fi
echo "no API newer than the declared minimum platforms"

if [ "$(uname)" = Darwin ]; then
  exit 0  # the real SDK builds these branches
fi
shims="$(mktemp -d)"
trap 'rm -rf "$shims"' EXIT
for shim in scripts/apple-shims/*.swift; do
  name="$(basename "$shim" .swift)"
  swiftc -parse-as-library -emit-module -module-name "$name" \
    -emit-module-path "$shims/$name.swiftmodule" "$shim"
done
# The Apple side of the FoundationNetworking behaviour branches, in a copy with them flipped:
# Errand (with its Combine, os and Network branches, against the shims) is emitted as a module,
# and ErrandStubs, whose run-loop branch needs CoreFoundation's shapes, is type-checked against it.
flipped="$shims/flipped"
errand_flips="$(scripts/flip-networking-branches.py Sources/Errand "$flipped/Errand")"
stubs_flips="$(scripts/flip-networking-branches.py Sources/ErrandStubs "$flipped/ErrandStubs" \
  AppleCoreFoundation)"
flags=(-swift-version 6 -warnings-as-errors -package-name errand
  -enable-upcoming-feature ExistentialAny -enable-upcoming-feature MemberImportVisibility -I "$shims")
swiftc -emit-module -emit-module-path "$shims/Errand.swiftmodule" -module-name Errand \
  -parse-as-library "${flags[@]}" $(find "$flipped/Errand" -name '*.swift')
swiftc -typecheck -module-name ErrandStubs "${flags[@]}" $(find "$flipped/ErrandStubs" -name '*.swift')
echo "Errand's Combine, os, Network and Security branches and its $errand_flips FoundationNetworking branches, and"
echo "ErrandStubs' $stubs_flips, type-check with the Apple side taken (against scripts/apple-shims)"
