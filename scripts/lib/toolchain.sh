# Shared by the build and test scripts: makes sure the Rust→WASM toolchain, wasm-bindgen and Node
# packages are present, installing them idempotently (see ../shared/TOOLCHAIN.md for why this way).

export PATH="$HOME/.cargo/bin:$PATH"

# /dev/null must be the null device. On this workplace it was once found replaced by a regular file
# (a tool running as root renamed its output onto it), after which every "read from /dev/null" returned
# old error text: cargo's rustc probe then compiled that text and failed. Repair it when we can.
ensure_dev_null() {
  [[ -c /dev/null ]] && return 0
  if [[ $(id -u) -eq 0 ]]; then
    echo "toolchain: /dev/null is not a character device; recreating it" >&2
    rm -f /dev/null && mknod -m 666 /dev/null c 1 3
  else
    echo "toolchain: /dev/null is not a character device; ask an administrator to recreate it (mknod -m 666 /dev/null c 1 3)" >&2
    return 1
  fi
}
ensure_dev_null

apt_install() {
  local missing=()
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  ((${#missing[@]} == 0)) && return 0
  echo "toolchain: apt-get install ${missing[*]}"
  local sudo=""
  [[ $(id -u) -ne 0 ]] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
}

# Sets WASM_TOOLCHAIN_KIND and defines wasm_cargo.
ensure_wasm_toolchain() {
  if command -v rustup >/dev/null && rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
    WASM_TOOLCHAIN_KIND="rustup wasm32 target"
    wasm_cargo() { CARGO_TARGET_DIR=target/wasm cargo "$@"; }
  else
    apt_install rustc-web cargo-web rust-web-src lld-22
    WASM_TOOLCHAIN_KIND="Debian rustc-web, std built from source"
    wasm_cargo() {
      CARGO_TARGET_DIR=target/wasm RUSTC=/usr/bin/rustc RUSTC_BOOTSTRAP=1 \
        /usr/bin/cargo "$@" -Zbuild-std=std,panic_abort
    }
  fi
}

wasm_bindgen_version() {
  awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock
}

ensure_wasm_bindgen() {
  local want=$1
  if [[ $(wasm-bindgen --version 2>/dev/null) == "wasm-bindgen $want" ]]; then return 0; fi
  echo "toolchain: building wasm-bindgen-cli $want from crates.io (a few minutes, once)"
  # --locked can name a dependency version the registry no longer serves; fall back to resolving afresh.
  cargo install --quiet --locked wasm-bindgen-cli --version "$want" 2>/dev/null ||
    cargo install --quiet --force wasm-bindgen-cli --version "$want"
}

ensure_node_modules() {
  if [[ -d node_modules && node_modules/.package-lock.json -nt package-lock.json ]]; then return 0; fi
  echo "toolchain: npm ci"
  npm ci --no-audit --no-fund --loglevel=error
}

ensure_chromium() {
  [[ -x /usr/bin/chromium ]] || apt_install chromium
}
