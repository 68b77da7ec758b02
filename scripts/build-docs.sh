#!/usr/bin/env bash
# Build the DocC archives for Errand, ErrandStubs, ErrandTesting, LoopbackServer and ErrandCurl with the toolchain's `docc`, from symbol
# graphs that SwiftPM dumps itself (no plugin, no package dependency). Documentation warnings are
# errors. Archives land in .build/docs/<Module>.doccarchive.
set -euo pipefail
cd "$(dirname "$0")/.."

graphs="$(swift package dump-symbol-graph --minimum-access-level public 2>&1 | sed -n 's/^Files written to //p')"
[ -d "$graphs" ] || { echo "no symbol graphs were written" >&2; exit 1; }

# With Xcode, docc is not on PATH: xcrun finds the selected Xcode's.
if command -v docc >/dev/null 2>&1; then
  docc=docc
elif command -v xcrun >/dev/null 2>&1 && xcrun --find docc >/dev/null 2>&1; then
  docc="$(xcrun --find docc)"
else
  echo "docc was not found: install a Swift toolchain that has it (or Xcode)" >&2
  exit 1
fi

modules="Errand ErrandStubs ErrandTesting LoopbackServer"
# ErrandCurl's symbols exist on Linux only: on a Mac its module is empty and its article's links
# would not resolve.
[ "$(uname)" = Linux ] && modules="$modules ErrandCurl"
for module in $modules; do
  dir=".build/docs/symbol-graphs/$module"
  rm -rf "$dir" ".build/docs/$module.doccarchive"
  mkdir -p "$dir"
  cp "$graphs/$module.symbols.json" "$dir/"
  for extension in "$graphs/$module@"*.symbols.json; do
    [ -e "$extension" ] && cp "$extension" "$dir/"
  done
  "$docc" convert "Sources/$module/$module.docc" \
    --additional-symbol-graph-dir "$dir" \
    --output-path ".build/docs/$module.doccarchive" \
    --fallback-display-name "$module" \
    --fallback-bundle-identifier "org.errand.$module" \
    --warnings-as-errors
  echo "built .build/docs/$module.doccarchive"
done
