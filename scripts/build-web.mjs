// The self-contained browser module: aigenora/crypto (browser entry) with @noble/* inlined, for a
// <script type="module"> page without a bundler or an import map. It sits two folders below the
// package root like dist/crypto/browser.js, so its `new URL('../../bindings/web/…wasm', import.meta.url)`
// still names the web build of the WASM core.
import { build } from 'esbuild';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const common = { bundle: true, format: 'esm', platform: 'browser', target: 'es2022', minify: true, sourcemap: true, external: ['*.wasm'], logLevel: 'warning' };

/**
 * Modules the agent page bundles in place of the ones named: it validates messages with the precompiled
 * validators of the built-ins it plays and carries no JSON Schema compiler (so its CSP needs no
 * 'unsafe-eval'), and it leaves out the flow modes none of those built-ins has (ts/web/page-modes.ts) and
 * the pure-JS crypto backend (it runs on the WASM one).
 */
const PAGE_SWAPS = {
  'ts/spec/compile.ts': 'ts/web/no-compile.ts',
  'ts/spec/precompiled/index.ts': 'ts/web/page-validators.ts',
  'ts/engine/modes/mental-poker.ts': 'ts/web/page-modes.ts',
  'ts/engine/modes/realtime.ts': 'ts/web/page-modes.ts',
  'ts/crypto/js-backend.ts': 'ts/web/no-js-backend.ts',
};
const pageModules = {
  name: 'page-modules',
  setup(b) {
    const swap = Object.fromEntries(Object.entries(PAGE_SWAPS).map(([from, to]) => [`${ROOT}${from}`, `${ROOT}${to}`]));
    b.onResolve({ filter: /^\.\/(compile|precompiled\/index|mental-poker|realtime|js-backend)\.js$/ }, (a) => {
      const target = `${a.resolveDir}/${a.path.slice(2).replace(/\.js$/, '.ts')}`;
      return swap[target] ? { path: swap[target] } : undefined;
    });
  },
};

/**
 * One copy of each package version: npm leaves the same version of a package (uint8arraylist 3.0.2 under
 * seven libp2p packages, protons-runtime, uint8arrays, multiformats) nested wherever the hoisted copy is
 * another version, and each copy would be bundled. Every import of name@version goes to the first of its
 * copies by path; the files are the same, so the code is.
 */
const onePerVersion = {
  name: 'one-copy-per-version',
  setup(b) {
    const copies = new Map();
    const walk = (dir) => {
      if (!existsSync(dir)) return;
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        if (!e.isDirectory() || e.name.startsWith('.')) continue;
        if (e.name.startsWith('@')) {
          for (const s of readdirSync(`${dir}/${e.name}`, { withFileTypes: true })) if (s.isDirectory()) found(`${dir}/${e.name}/${s.name}`);
        } else found(`${dir}/${e.name}`);
      }
    };
    const found = (root) => {
      const pkg = `${root}/package.json`;
      if (existsSync(pkg)) {
        const { name, version } = JSON.parse(readFileSync(pkg, 'utf8'));
        const key = `${name}@${version}`;
        const first = copies.get(key);
        if (!first || root < first) copies.set(key, root);
      }
      walk(`${root}/node_modules`);
    };
    walk(`${ROOT}node_modules`);
    const versions = new Map();
    const keyOf = (root) => {
      if (!versions.has(root)) {
        const { name, version } = JSON.parse(readFileSync(`${root}/package.json`, 'utf8'));
        versions.set(root, `${name}@${version}`);
      }
      return versions.get(root);
    };
    b.onResolve({ filter: /^[^./]/ }, async (a) => {
      if (a.pluginData === onePerVersion) return undefined;
      const r = await b.resolve(a.path, { kind: a.kind, importer: a.importer, resolveDir: a.resolveDir, pluginData: onePerVersion });
      if (r.errors.length) return r;
      const m = /^(.*\/node_modules\/(?:@[^/]+\/)?[^/]+)(\/.*)$/.exec(r.path);
      const canonical = m && existsSync(`${m[1]}/package.json`) ? copies.get(keyOf(m[1])) : undefined;
      return { ...r, path: canonical && canonical !== m[1] ? canonical + m[2] : r.path };
    });
  },
};

/** The agent page (`aigenora web`): the engine, libp2p over WebSockets and the page's UI in one module. */
export const pageBuild = {
  ...common,
  entryPoints: [`${ROOT}ts/web/page.ts`],
  outfile: `${ROOT}dist/web/agent.js`,
  plugins: [pageModules, onePerVersion],
  // Noise's crypto subpath is exported without a browser condition; its browser build is named here.
  alias: { '@chainsafe/libp2p-noise/crypto': `${ROOT}node_modules/@chainsafe/libp2p-noise/dist/src/crypto/index.browser.js` },
};

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await build({ ...common, entryPoints: [`${ROOT}dist/crypto/browser.js`], outfile: `${ROOT}dist/web/aigenora-crypto.js` });
  await build(pageBuild);
}
