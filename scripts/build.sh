#!/usr/bin/env bash
# `npm run build` (also run by prepack and by the test and demo scripts): the WASM bindings
# (scripts/build-wasm.sh, skipped when up to date), the agent page's built-ins' message validators compiled
# ahead of time (scripts/build-validators.mjs, into ts/spec/precompiled/), then ts/ compiled to ES modules, .d.ts and source
# maps in dist/, the built-in protocols' spec.json files beside their compiled hooks, the light package
# packages/core (scripts/build-core.mjs), and one
# self-contained browser module (dist/web/aigenora-crypto.js) for pages that use no bundler.
# --clean starts dist/ afresh so that nothing stale is packed (prepack uses it).
set -euo pipefail
cd "$(dirname "$0")/.."
exec </dev/null

[[ ${1:-} == --clean ]] && rm -rf dist
bash scripts/build-wasm.sh
# The agent page's built-ins' message validators compiled ahead of time (ts/spec/precompiled/, rewritten only when stale).
node scripts/build-validators.mjs
node node_modules/typescript/bin/tsc -p tsconfig.build.json
for dir in ts/protocols/*/; do
  [[ -f $dir/spec.json ]] && cp "$dir/spec.json" "dist/protocols/$(basename "$dir")/spec.json"
done
node scripts/build-web.mjs
node scripts/build-core.mjs
echo "build: dist/ ($(find dist -type f -not -name .tsbuildinfo | wc -l) files)"
