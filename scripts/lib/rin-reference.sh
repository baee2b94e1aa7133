# Sourced by the test script: the reference Rin control daemon (Go, ../shared/reference/rin-src), built
# into .cache/rin-control for the rin interop test. Idempotent: a binary newer than every Go source and
# module file is reused without invoking Go.
#
# ensure_rin_reference exports
#   AIGENORA_RIN_CONTROL  the daemon binary
# and returns non-zero, saying why, when the source or Go is missing or the build fails; the interop test
# then fails (or skips loudly when ../shared is absent) naming what is missing.

ensure_rin_reference() {
  local repo src bin newer
  repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  src=$(cd "$repo/.." && pwd)/shared/reference/rin-src
  bin="$repo/.cache/rin-control"

  if [[ ! -f "$src/go.mod" || ! -d "$src/cmd/rin-control" ]]; then
    echo "rin-reference: the reference source is missing ($src/cmd/rin-control); the rin interop test cannot run" >&2
    return 1
  fi
  if [[ -x "$bin" ]]; then
    newer=$(find "$src" \( -name '*.go' -o -name go.mod -o -name go.sum \) -newer "$bin" -print -quit)
    if [[ -z "$newer" ]]; then
      export AIGENORA_RIN_CONTROL="$bin"
      return 0
    fi
  fi
  if ! command -v go >/dev/null 2>&1; then
    echo "rin-reference: Go is not installed (needed to build $src/cmd/rin-control into $bin)" >&2
    return 1
  fi
  echo "rin-reference: building $bin (go build ./cmd/rin-control)"
  mkdir -p "$(dirname "$bin")"
  # Build beside the target and rename, so an interrupted build never leaves a half-written binary that looks new.
  if ! (cd "$src" && go build -o "$bin.tmp" ./cmd/rin-control); then
    rm -f "$bin.tmp"
    echo "rin-reference: go build of $src/cmd/rin-control failed" >&2
    return 1
  fi
  mv -f "$bin.tmp" "$bin"
  export AIGENORA_RIN_CONTROL="$bin"
}

# By hand: bash scripts/lib/rin-reference.sh
if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  ensure_rin_reference && echo "$AIGENORA_RIN_CONTROL"
fi
