// The self-contained browser module: aigenora/crypto (browser entry) with @noble/* inlined, for a
// <script type="module"> page without a bundler or an import map. It sits two folders below the
// package root like dist/crypto/browser.js, so its `new URL('../../bindings/web/…wasm', import.meta.url)`
// still names the web build of the WASM core.
import { build } from 'esbuild';

const common = { bundle: true, format: 'esm', platform: 'browser', target: 'es2022', minify: true, sourcemap: true, external: ['*.wasm'], logLevel: 'warning' };

await build({ ...common, entryPoints: ['dist/crypto/browser.js'], outfile: 'dist/web/aigenora-crypto.js' });

// The agent page (`aigenora web`): the engine, libp2p over WebSockets and the page's UI in one module.
// Noise's crypto subpath is exported without a browser condition; its browser build is named here.
await build({
  ...common,
  entryPoints: ['ts/web/page.ts'],
  outfile: 'dist/web/agent.js',
  alias: { '@chainsafe/libp2p-noise/crypto': './node_modules/@chainsafe/libp2p-noise/dist/src/crypto/index.browser.js' },
});
