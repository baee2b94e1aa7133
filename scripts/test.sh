#!/usr/bin/env bash
# The one test command (README, .ci/run): installs what is missing, builds the package (the WASM core
# and dist/), then runs cargo's tests, the TypeScript type check, vitest on both backends (headless
# Chromium and the packed package among its suites) and `aigenora conformance` on ../shared/conformance
# (when present), and totals them on the last line, with the time each phase took.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/toolchain.sh # also checks that /dev/null is the null device
# Tools here (cargo's rustc probe among them) may read standard input; never let them see the caller's.
exec </dev/null
export NO_COLOR=1 FORCE_COLOR=0 CARGO_TERM_COLOR=never

logs=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$logs"' EXIT
started=$SECONDS
phase_start=$SECONDS
phase_name=""
phases=()
step() {
  [[ -n $phase_name ]] && phases+=("$phase_name $((SECONDS - phase_start))s")
  phase_name=$1
  phase_start=$SECONDS
  echo
  echo "== $*"
}

step "toolchain and build"
ensure_node_modules
ensure_chromium
# The README's trade walkthrough builds its key map with jq, and test/docs runs every README sample.
command -v jq >/dev/null || apt_install jq
source scripts/lib/reference-peer.sh # the interop test's peer: the reference's Python CLI in a virtualenv
ensure_reference_peer || echo "reference peer not set up: the interop test will fail and say what is missing"
source scripts/lib/rin-reference.sh # the rin interop test's peer: the reference Go control daemon
ensure_rin_reference || echo "rin reference daemon not built: the rin interop test will fail and say what is missing"
bash scripts/build-wasm.sh
# The type check of ts/ and test/ needs only the WASM bindings' types; it is one thread, like the build's
# own tsc, so the two run side by side on two cores. Then the formatter's check (npm run format:check;
# npm run format mends) and the linter (npm run lint; eslint.config.js). Their output is shown at their step below.
tsc_started=$SECONDS
{ rc=0; { npx tsc --noEmit -p . && npm run --silent format:check && npm run --silent lint; } > "$logs/tsc" 2>&1 || rc=$?; echo "$rc $((SECONDS - tsc_started))" > "$logs/tsc.status"; } &
tsc_pid=$!
bash scripts/build.sh
bash scripts/build-wasm.sh --no-simd # the AEAD without WebAssembly SIMD, for test/crypto/aead-simd.test.ts (never shipped)

# Without the corpora the corpus tests (cargo's and vitest's) fail, unless told to report themselves
# skipped, which the totals below then count and name.
[[ -d ../shared/conformance ]] || export AIGENORA_SKIP_CORPORA=1
step "cargo test (Rust core, native)"
# The native test build lives beside the WASM cache (scripts/build-wasm.sh), outside the checkout, so a
# fresh clone reuses the compiled dependencies; AIGENORA_BUILD_CACHE=none keeps it in target/.
cache_root=${AIGENORA_BUILD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/aigenora}
if [[ $cache_root != none ]]; then
  export CARGO_TARGET_DIR="$cache_root/cargo-target"
  # Each checkout adds its own build of our crates; start over past a few gigabytes.
  if [[ -d $CARGO_TARGET_DIR ]] && (( $(du -sm "$CARGO_TARGET_DIR" | cut -f1) > 4096 )); then rm -rf "$CARGO_TARGET_DIR"; fi
fi
cargo test --workspace --quiet 2>&1 | tee "$logs/cargo"
unset CARGO_TARGET_DIR

step "tsc --noEmit, prettier --check and eslint (started beside the build)"
wait "$tsc_pid" || true
cat "$logs/tsc"
read -r tsc_status tsc_seconds < "$logs/tsc.status"
echo "tsc --noEmit, prettier --check and eslint: exit $tsc_status after ${tsc_seconds}s"
(( tsc_status == 0 ))

step "vitest (both backends, headless Chromium)"
source scripts/lib/postgres.sh; start_test_postgres # the registry suites also run on PostgreSQL
npx vitest run 2>&1 | tee "$logs/vitest"

skipped_suites=()
if [[ -d ../shared/conformance ]]; then
  step "aigenora conformance ../shared/conformance --backend both"
  node bin/aigenora.mjs conformance ../shared/conformance --backend both 2>&1 | tee "$logs/conformance"
else
  echo "SKIPPED: ../shared/conformance is absent, so the conformance corpora were not run" | tee "$logs/conformance"
  skipped_suites+=("conformance corpora")
fi

# Every step above fails the script on its own (set -e, pipefail); what is left is to count, and to say
# loudly what did not run.
sum() { { grep -Eo "$1" "$2" || true; } | { grep -Eo '[0-9]+' || true; } | awk '{ s += $1 } END { print s + 0 }'; }
passed=$(( $(sum '[0-9]+ passed;' "$logs/cargo") + $(sum 'Tests +[0-9]+ passed' "$logs/vitest") \
  + $(sum "^[0-9]+ passed" "$logs/conformance") ))
skipped=$(( $(sum '[0-9]+ ignored;' "$logs/cargo") + $({ grep -E '^ *Tests ' "$logs/vitest" || true; } | sum '[0-9]+ skipped' /dev/stdin) ))
phases+=("$phase_name $((SECONDS - phase_start))s")
echo
summary=$(printf '%s; ' "${phases[@]}")
echo "time: $((SECONDS - started))s in all (${summary%; })"
if (( skipped > 0 || ${#skipped_suites[@]} > 0 )); then
  echo "green, but NOT everything ran: $skipped skipped test(s)${skipped_suites[*]:+; suites skipped: ${skipped_suites[*]}} (see the SKIPPED lines above)"
else
  echo "all suites green (cargo, tsc, vitest with chromium, conformance), nothing skipped"
fi
echo "total: $passed passed, 0 failed, $skipped skipped"
