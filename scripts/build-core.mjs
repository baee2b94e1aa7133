// The light package, packages/core (npm name "aigenora-core"): the entries a crypto, spec or trade
// consumer imports (crypto, spec, trade, hooks, and all four at once), without the network, server,
// MCP and CLI dependencies of "aigenora". Built from the same sources as dist/:
//
// - ES modules bundled per platform (dist/node, dist/browser) with code splitting, so the entries share
//   one copy of each module (an error class is the same class from every entry);
// - @noble/* (the pure-JS twin) inlined, tree-shaken to what the twin uses: about a tenth of the 2.8 MB
//   the three packages install; ajv and ajv-formats stay dependencies (shared with the consumer's own);
// - the WASM core's two builds copied to bindings/, two folders above every module as in "aigenora",
//   so `new URL('../../bindings/web/…', import.meta.url)` and the Node loader find them unchanged;
// - the .d.ts files of those entries copied from dist/ (run after tsc).
import { build } from 'esbuild';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';

const OUT = 'packages/core';
const root = JSON.parse(readFileSync('package.json', 'utf8'));
const pkg = JSON.parse(readFileSync(`${OUT}/package.json`, 'utf8'));
if (pkg.version !== root.version) throw new Error(`${OUT}/package.json is at ${pkg.version}, the root package at ${root.version}: keep them equal`);
for (const dep of Object.keys(pkg.dependencies ?? {}))
  if (!root.dependencies?.[dep]) throw new Error(`${OUT} depends on ${dep}, which the root package does not: the light package takes its versions from there`);

for (const d of ['dist', 'bindings']) rmSync(join(OUT, d), { recursive: true, force: true });

const entries = { index: 'ts/index.ts', crypto: 'ts/crypto/index.ts', spec: 'ts/spec/index.ts', trade: 'ts/trade/index.ts', hooks: 'ts/hooks/types.ts' };
const browserEntries = { ...entries, index: 'ts/browser.ts', crypto: 'ts/crypto/browser.ts', spec: 'ts/spec/browser.ts', trade: 'ts/trade/browser.ts' };
const common = {
  bundle: true,
  splitting: true,
  format: 'esm',
  target: 'es2022',
  // Dependencies stay imports; the WASM bindings stay files beside the package's modules.
  external: ['ajv', 'ajv/*', 'ajv-formats', '../../bindings/*'],
  chunkNames: 'shared-[hash]',
  logLevel: 'warning',
};
await build({ ...common, entryPoints: entries, outdir: `${OUT}/dist/node`, platform: 'node' });
await build({ ...common, entryPoints: browserEntries, outdir: `${OUT}/dist/browser`, platform: 'browser' });

for (const b of ['node', 'web']) {
  mkdirSync(`${OUT}/bindings/${b}`, { recursive: true });
  // Every module's glue, types and .wasm (the core and the feature modules, scripts/build-wasm.sh).
  const files = existsSync(`bindings/${b}`)
    ? readdirSync(`bindings/${b}`).filter((f) => /^aigenora_wasm\w*(\.js|\.d\.ts|_bg\.wasm|_bg\.wasm\.d\.ts)$/.test(f))
    : [];
  for (const f of [...files, 'package.json']) if (existsSync(`bindings/${b}/${f}`)) cpSync(`bindings/${b}/${f}`, `${OUT}/bindings/${b}/${f}`);
}

// The declarations the entries reach, by their relative imports, in dist/'s layout under dist/types.
const seen = new Set();
const queue = [
  'index.d.ts',
  'browser.d.ts',
  'crypto/index.d.ts',
  'crypto/browser.d.ts',
  'spec/index.d.ts',
  'spec/browser.d.ts',
  'trade/index.d.ts',
  'trade/browser.d.ts',
  'hooks/types.d.ts',
];
while (queue.length) {
  const rel = queue.pop();
  if (seen.has(rel)) continue;
  seen.add(rel);
  const text = readFileSync(join('dist', rel), 'utf8');
  for (const m of text.matchAll(/(?:from|import\()\s*['"](\.{1,2}\/[^'"]+)['"]/g)) {
    const target = normalize(join(dirname(rel), m[1].replace(/\.js$/, '.d.ts')));
    if (target.startsWith('..')) throw new Error(`dist/${rel} reaches outside dist/: ${m[1]}`);
    queue.push(target);
  }
}
for (const rel of seen) {
  mkdirSync(dirname(join(OUT, 'dist/types', rel)), { recursive: true });
  cpSync(join('dist', rel), join(OUT, 'dist/types', rel));
}
for (const f of ['LICENSE', 'NOTICE.md']) cpSync(f, join(OUT, f));
console.log(`build-core: ${OUT} (${seen.size} declaration files)`);
