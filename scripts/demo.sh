#!/usr/bin/env bash
# The README's main command: installs what is missing, builds the WASM core, runs `aigenora demo`.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/toolchain.sh
ensure_node_modules
bash scripts/build-wasm.sh >&2
exec node bin/aigenora.mjs demo "$@"
