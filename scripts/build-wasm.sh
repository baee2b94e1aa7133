#!/usr/bin/env bash
# Builds crates/wasm* to WebAssembly and generates the JS bindings in bindings/node and bindings/web:
# one module per feature (aigenora_wasm, the core crypto every consumer loads; aigenora_wasm_mp, mental
# poker; aigenora_wasm_gojson, rin's Go JSON; aigenora_wasm_pyjson, protocol_id), so that a page fetches
# the code it uses only (ts/crypto/browser.ts loads the feature modules on request, node.ts on first use).
#
# Toolchain (../shared/TOOLCHAIN.md): rustup's wasm32 target when it is installed; otherwise Debian's
# rustc-web with the standard library built from source (-Zbuild-std), since no rustup target can be
# downloaded on these machines. wasm-bindgen-cli is built from crates.io at exactly the version of the
# wasm-bindgen crate in Cargo.lock. Idempotent: a second run with nothing changed takes about a second.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/toolchain.sh # also checks that /dev/null is the null device
# Tools here (cargo's rustc probe among them) may read standard input; never let them see the caller's.
exec </dev/null
# One build at a time per checkout: two at once would race on target/ and on bindings/ (removed and
# regenerated below).
mkdir -p target
exec 9>target/.build-wasm.lock
flock 9

OUT_DIR=target/wasm/wasm32-unknown-unknown/release
# The crates and their modules, in the same order.
CRATES=(aigenora-wasm aigenora-wasm-mp aigenora-wasm-gojson aigenora-wasm-pyjson)
MODULES=(aigenora_wasm aigenora_wasm_mp aigenora_wasm_gojson aigenora_wasm_pyjson)
# ed25519-dalek's own verification, the baseline and oracle of the core's (crates/wasm-reference), for
# the tests and the bench only: Node bindings in bindings/reference, which the package does not ship.
REFERENCE_CRATE=aigenora-wasm-reference
REFERENCE=aigenora_wasm_reference
STAMP=bindings/.build-stamp
# --no-simd: the core crate without WebAssembly SIMD (the AEAD's portable path, for runtimes that lack
# SIMD), for Node only, into target/wasm-nosimd/node: under target/, so it is never committed nor
# shipped; test/crypto/aead-simd.test.ts runs the AEAD vectors through it and the shipped module.
NOSIMD_DIR=target/wasm-nosimd
[[ ${1:-} == --no-simd ]] && NOSIMD=1 || NOSIMD=0

# Skip everything when the sources, the lock file and this script are unchanged since the last build.
fingerprint() {
  { git ls-files -s crates Cargo.toml Cargo.lock .cargo scripts/build-wasm.sh scripts/lib/toolchain.sh 2>/dev/null
    cat .cargo/config.toml Cargo.toml Cargo.lock scripts/build-wasm.sh scripts/lib/toolchain.sh
    find crates -name '*.rs' -o -name Cargo.toml | sort | xargs sha256sum; } | sha256sum | cut -c1-64
}
want=$(fingerprint)

# Built modules are also kept outside the checkout, under the fingerprint and the compilers' versions,
# so a fresh clone of the same sources (CI's, a second worktree) copies them instead of compiling the
# standard library and the crates again. AIGENORA_BUILD_CACHE=none turns this off.
CACHE_ROOT=${AIGENORA_BUILD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/aigenora}
cache_dir() {
  [[ $CACHE_ROOT == none ]] && return 1
  local key
  key=$({ echo "$want"; /usr/bin/rustc -V 2>/dev/null || true; rustc -V 2>/dev/null || true; } | sha256sum | cut -c1-32)
  echo "$CACHE_ROOT/$1/$key"
}
# cache_restore KIND DEST...: copies the cached folders into place; fails when there is no complete entry.
cache_restore() {
  local dir
  dir=$(cache_dir "$1") && [[ -f $dir/.complete ]] || return 1
  shift
  for dest in "$@"; do
    rm -rf "$dest" && mkdir -p "$(dirname "$dest")" && cp -r "$dir/$(basename "$dest")" "$dest" || return 1
  done
}
# cache_save KIND SRC...: stores the folders (written aside and renamed, so a reader never sees half of
# an entry), then keeps only the newest eight entries of that kind.
cache_save() {
  local dir tmp
  dir=$(cache_dir "$1") || return 0
  shift
  [[ -f $dir/.complete ]] && return 0
  tmp="$dir.tmp.$$"
  rm -rf "$tmp" && mkdir -p "$tmp" || return 0
  for src in "$@"; do cp -r "$src" "$tmp/" || { rm -rf "$tmp"; return 0; }; done
  touch "$tmp/.complete"
  rm -rf "$dir" && mv "$tmp" "$dir" || rm -rf "$tmp"
  ls -1dt "$(dirname "$dir")"/*/ 2>/dev/null | tail -n +9 | xargs -r rm -rf
}
if ((NOSIMD)); then
  if [[ -f $NOSIMD_DIR/.build-stamp && $(cat "$NOSIMD_DIR/.build-stamp") == "$want" && -f $NOSIMD_DIR/node/aigenora_wasm_bg.wasm ]]; then
    echo "build-wasm --no-simd: up to date"
    exit 0
  fi
  if cache_restore wasm-nosimd "$NOSIMD_DIR/node"; then
    echo "$want" > "$NOSIMD_DIR/.build-stamp"
    echo "build-wasm --no-simd: copied from $(cache_dir wasm-nosimd)"
    exit 0
  fi
  ensure_wasm_toolchain
  ensure_wasm_bindgen "$(wasm_bindgen_version)"
  echo "build-wasm: compiling crates/wasm for wasm32 without SIMD ($WASM_TOOLCHAIN_KIND)"
  # Cargo appends a --config array to the rustflags of .cargo/config.toml, and the last target-feature
  # flag wins, so this is that configuration less simd128 (the standard library included, with build-std).
  # It is built to be tested, not shipped: no LTO and light optimisation keep its build short.
  wasm_cargo build --release --target wasm32-unknown-unknown -p aigenora-wasm --target-dir "$NOSIMD_DIR" \
    --config 'target.wasm32-unknown-unknown.rustflags=["-C", "target-feature=-simd128"]' \
    --config profile.release.lto=false --config profile.release.codegen-units=16 --config profile.release.opt-level=1
  rm -rf "$NOSIMD_DIR/node"
  wasm-bindgen --target nodejs --out-dir "$NOSIMD_DIR/node" "$NOSIMD_DIR/wasm32-unknown-unknown/release/aigenora_wasm.wasm"
  echo '{ "type": "commonjs" }' > "$NOSIMD_DIR/node/package.json"
  echo "$want" > "$NOSIMD_DIR/.build-stamp"
  cache_save wasm-nosimd "$NOSIMD_DIR/node"
  echo "build-wasm --no-simd: $(wc -c < "$NOSIMD_DIR/node/aigenora_wasm_bg.wasm") bytes"
  exit 0
fi
built() {
  local m
  for m in "${MODULES[@]}"; do [[ -f bindings/node/${m}_bg.wasm && -f bindings/web/${m}_bg.wasm ]] || return 1; done
  [[ -f bindings/reference/${REFERENCE}_bg.wasm ]]
}
if [[ -f $STAMP && $(cat "$STAMP") == "$want" ]] && built; then
  echo "build-wasm: up to date"
  exit 0
fi

if cache_restore wasm bindings/node bindings/web bindings/reference && built; then
  echo "$want" > "$STAMP"
  echo "build-wasm: copied from $(cache_dir wasm)"
  exit 0
fi

ensure_wasm_toolchain
ensure_wasm_bindgen "$(wasm_bindgen_version)"

echo "build-wasm: compiling crates/wasm* for wasm32 ($WASM_TOOLCHAIN_KIND)"
packages=(-p "$REFERENCE_CRATE")
for c in "${CRATES[@]}"; do packages+=(-p "$c"); done
wasm_cargo build --release --target wasm32-unknown-unknown "${packages[@]}"

rm -rf bindings/node bindings/web bindings/reference
# The name and producers sections are debugging aids only (a trap is reported as WASM_TRAP either
# way) and were about a tenth of the shipped module: leave them out.
strip=(--remove-name-section --remove-producers-section)
for m in "${MODULES[@]}"; do
  wasm-bindgen "${strip[@]}" --target nodejs --out-dir bindings/node "$OUT_DIR/$m.wasm"
  wasm-bindgen "${strip[@]}" --target web --out-dir bindings/web "$OUT_DIR/$m.wasm"
done
wasm-bindgen "${strip[@]}" --target nodejs --out-dir bindings/reference "$OUT_DIR/$REFERENCE.wasm"
# The Node glue is CommonJS, but the package is "type": "module".
echo '{ "type": "commonjs" }' > bindings/node/package.json
echo '{ "type": "commonjs" }' > bindings/reference/package.json
echo "$want" > "$STAMP"
cache_save wasm bindings/node bindings/web bindings/reference
for m in "${MODULES[@]}"; do
  echo "build-wasm: $m $(wc -c < "bindings/web/${m}_bg.wasm") bytes, $(gzip -9 -c "bindings/web/${m}_bg.wasm" | wc -c) gzipped"
done
