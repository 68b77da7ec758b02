#!/usr/bin/env bash
# Fails when the public API of Errand's library products breaks against the baseline: the
# commit that last changed .api-baseline.
#
#   scripts/check-api.sh [BUILD FLAGS...]
#
# The build flags are passed to `swift build` for the current tree, so that a build made with the
# same flags just before is reused (.ci/run passes its warnings-as-errors flags).
#
# What counts: every `public` and `open` declaration of every module of a library product
# (Errand, ErrandStubs, ErrandTesting, LoopbackServer, ErrandCurl; a product added later is
# included by itself). Not counted: `@_spi` declarations (the `Transports` SPI) and `package`
# declarations, which 0.1.0 does not promise (see CHANGELOG.md), nor conformances to an SPI or
# `package` protocol.
#
# How: `swift-api-digester -dump-sdk` dumps each module's API as JSON, for the baseline (built
# once from `git archive` of the commit into .build/api-check/, and kept there per commit and
# toolchain, so later runs only dump the current tree) and for the current tree; both dumps lose
# their SPI and `package` declarations, then `swift-api-digester -diagnose-sdk` compares them and
# every "API breakage" it reports fails the check, each named.
#
# Why not `swift package diagnose-api-breaking-changes`: it compares the same dumps, but reports
# changes to `package` and `@_spi` declarations as breakages too and cannot be told otherwise
# (its allowlist takes exact messages, so every internal refactoring would have to be listed).
#
# Why the commit that last changed .api-baseline, not a hash written in it: a commit cannot name
# itself, and a deliberate break must move the baseline in the commit that makes it (that commit
# changes the file's line, saying why; CHANGELOG.md says why too). Rebased or squashed, the
# baseline follows. It needs the history: a shallow clone is refused, not checked against the
# wrong commit. See CONTRIBUTING.md, "The public API".
set -euo pipefail
cd "$(dirname "$0")/.."

fail() {
  printf 'check-api: %s\n' "$*" >&2
  exit 1
}

[ -f .api-baseline ] || fail ".api-baseline is missing"
git rev-parse --git-dir >/dev/null 2>&1 ||
  fail "not a git repository: the baseline is the commit that last changed .api-baseline"
# In a shallow clone the oldest commit present seems to add every file: it would pass for the
# baseline. Refuse instead.
if [ "$(git rev-parse --is-shallow-repository)" = true ]; then
  fail "this clone is shallow, so the commit that last changed .api-baseline may be missing;" \
    "fetch the history (git fetch --unshallow) or clone without --depth, then run this again"
fi
commit="$(git log -1 --format=%H -- .api-baseline)"
[ -n "$commit" ] || fail ".api-baseline is not committed: the commit that adds it is the baseline"
if ! git diff --quiet HEAD -- .api-baseline; then
  echo "note: .api-baseline has uncommitted changes; the baseline stays $commit until they are" \
    "committed, then it is that commit"
fi
reason="$(git show "$commit:.api-baseline" | { grep -vE '^[[:space:]]*(#|$)' || true; } | head -1)"
[ -n "$reason" ] || fail ".api-baseline must say why the baseline moved (a line not a comment)"
echo "baseline: $commit ($reason)"

if [ -n "${SWIFT_API_DIGESTER:-}" ]; then
  digester="$SWIFT_API_DIGESTER"
elif [ "$(uname)" = Darwin ]; then
  digester="$(xcrun --find swift-api-digester)"
else
  digester="$(dirname "$(readlink -f "$(command -v swift)")")/swift-api-digester"
fi
[ -x "$digester" ] || fail "swift-api-digester not found at $digester (set SWIFT_API_DIGESTER)"

# The Swift modules of the library products, one a line.
product_modules() {
  swift package --package-path "$1" describe --type json | python3 -c '
import json, sys
package = json.load(sys.stdin)
swift = {t["name"]: t["c99name"] for t in package["targets"] if t["module_type"] == "SwiftTarget"}
libraries = [p for p in package["products"] if "library" in p["type"]]
print("\n".join(sorted({swift[t] for p in libraries for t in p["targets"] if t in swift})))
'
}

# dump PACKAGE_DIR BIN_PATH OUT_DIR: each product module's API as OUT_DIR/<module>.json, without
# its SPI and `package` declarations.
dump() {
  local package="$1" bin="$2" out="$3" module dir
  local search=(-I "$bin/Modules")
  for dir in "$bin"/*.build "$package"/Sources/*/include; do
    if [ -d "$dir" ]; then search+=(-I "$dir"); fi
  done
  rm -rf "$out" && mkdir -p "$out/raw"
  product_modules "$package" >"$out/modules.txt"
  while read -r module; do
    "$digester" -dump-sdk -module "$module" "${search[@]}" -avoid-location -avoid-tool-args \
      -abort-on-module-fail -o "$out/raw/$module.json" >"$out/raw/$module.log" 2>&1 ||
      { cat "$out/raw/$module.log" >&2; fail "could not dump the API of $module"; }
  done <"$out/modules.txt"
  python3 - "$out" <<'PY'
import json, pathlib, platform, sys

# Declarations the promise leaves out: `package` ones (the digester marks them isInternal) and
# @_spi ones. Conformances to protocols left out go too: `extension X: SPIProtocol` is
# recorded on X without a mark of its own.
out = pathlib.Path(sys.argv[1])
dumps = {path.stem: json.loads(path.read_text()) for path in sorted((out / "raw").glob("*.json"))}

def hidden(node):
    return node.get("isInternal") or node.get("spi_group_names")

hidden_protocols = set()
def collect(node):
    for child in node.get("children", []):
        if child.get("declKind") == "Protocol" and hidden(child):
            hidden_protocols.add(child["usr"])
        collect(child)
for dump in dumps.values():
    collect(dump["ABIRoot"])

def strip(node):
    for key in ("children", "accessors"):
        if key in node:
            node[key] = [strip(child) for child in node[key] if not hidden(child)]
    if "conformances" in node:
        node["conformances"] = [
            c for c in node["conformances"] if c.get("usr") not in hidden_protocols
        ]
    return node

for module, dump in dumps.items():
    root = strip(dump["ABIRoot"])
    declarations = [c for c in root.get("children", []) if c.get("kind") != "Import"]
    # ErrandCurl is empty off Linux; anywhere else an empty dump means the module did not load.
    if not declarations and platform.system() == "Linux":
        sys.exit(f"check-api: the API dump of {module} has no public declarations")
    (out / f"{module}.json").write_text(json.dumps(dump, indent=1, sort_keys=True))
PY
}

# The baseline's API, once per baseline commit and toolchain (the dumps' format belongs to the
# toolchain): its source from `git archive`, built in .build/api-check/, dumped, then the source
# and build removed.
toolchain="$(swift --version 2>/dev/null | head -1 | cksum | cut -d' ' -f1)"
baseline_api=".build/api-check/$commit-$(uname -s)-$toolchain"
if [ ! -f "$baseline_api/done" ]; then
  work=".build/api-check/baseline-source"
  rm -rf "$work" "$baseline_api"
  mkdir -p "$work/package"
  started=$SECONDS
  echo "building the baseline $commit (once; its API is kept in $baseline_api)"
  git archive "$commit" | tar -x -C "$work/package"
  swift build --package-path "$work/package" --scratch-path "$work/build" >"$work/build.log" 2>&1 ||
    { tail -50 "$work/build.log" >&2; fail "the baseline $commit does not build"; }
  dump "$work/package" "$(swift build --package-path "$work/package" --scratch-path "$work/build" \
    --show-bin-path)" "$baseline_api"
  touch "$baseline_api/done"
  rm -rf "$work"
  echo "baseline built and dumped in $((SECONDS - started)) s"
fi

started=$SECONDS
swift build "$@"
dump . "$(swift build "$@" --show-bin-path)" .build/api-check/current

breaks=0
while read -r module; do
  if [ ! -f ".build/api-check/current/$module.json" ]; then
    echo "API breakage: module $module (a library product's) has been removed"
    breaks=$((breaks + 1))
    continue
  fi
  report=".build/api-check/current/$module.breakage.txt"
  "$digester" -diagnose-sdk -enable-remove-deprecated-check -compiler-style-diags \
    -input-paths "$baseline_api/$module.json" -input-paths ".build/api-check/current/$module.json" \
    -o "$report" >/dev/null 2>&1 || fail "swift-api-digester could not compare $module"
  found="$(grep -E '^API breakage: ' "$report" || true)"
  if [ -n "$found" ]; then
    printf '%s:\n%s\n' "$module" "$(sed 's/^/  /' <<<"$found")"
    breaks=$((breaks + $(wc -l <<<"$found")))
  else
    echo "$module: no breaking change"
  fi
done <"$baseline_api/modules.txt"
comm -13 "$baseline_api/modules.txt" .build/api-check/current/modules.txt |
  sed 's/$/: new since the baseline (nothing to compare)/'
echo "current tree built and compared in $((SECONDS - started)) s"

if ((breaks > 0)); then
  cat >&2 <<EOF

$breaks breaking change(s) to the public API since $commit.
If this is a mistake, restore what was removed or changed (a deprecated spelling keeps old code
compiling). If the break is deliberate, the commit that makes it moves the baseline to itself:
change the line in .api-baseline to say what broke and why, and say it in CHANGELOG.md too
(CONTRIBUTING.md, "The public API").
EOF
  exit 1
fi
echo "the public API keeps everything the baseline $commit has"
