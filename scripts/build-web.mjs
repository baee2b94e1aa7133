// The self-contained browser module: aigenora/crypto (browser entry) with @noble/* inlined, for a
// <script type="module"> page without a bundler or an import map. It sits two folders below the
// package root like dist/crypto/browser.js, so its `new URL('../../bindings/web/…wasm', import.meta.url)`
// still names the web build of the WASM core.
import { build } from 'esbuild';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
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
  'ts/spec/precompiled-validators.ts': 'ts/web/page-validators.ts',
  'ts/engine/modes/mental-poker.ts': 'ts/web/page-modes.ts',
  'ts/engine/modes/realtime.ts': 'ts/web/page-modes.ts',
  'ts/crypto/js-backend.ts': 'ts/web/no-js-backend.ts',
};
const pageModules = {
  name: 'page-modules',
  setup(b) {
    const swap = Object.fromEntries(Object.entries(PAGE_SWAPS).map(([from, to]) => [`${ROOT}${from}`, `${ROOT}${to}`]));
    b.onResolve({ filter: /^\.\/(compile|precompiled-validators|mental-poker|realtime|js-backend)\.js$/ }, (a) => {
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

/**
 * libp2p modules the page bundles cut down to what it runs (each as the module it stands for, so every
 * importer is served). @libp2p/crypto/keys (imported by libp2p, Noise, peer-id, the peer store and the
 * record envelope) with Ed25519 keys only: the page's own identity is Ed25519 (ts/net/browser-node.ts)
 * and it dials only the host its invitation names, whose identity is Ed25519 too, so the secp256k1, RSA
 * and ECDSA code (their curves and DER parsing) is left out; a key of another type is refused with the
 * error libp2p gives a type it does not know (UnsupportedKeyTypeError). Noise's pure-JS crypto without
 * ChaCha20-Poly1305: the page's Noise seals and opens frames with the WASM core (ts/net/stack.ts
 * noiseCrypto replaces those two functions), so @noble/ciphers is left out.
 */
const KEYS_DIR = `${ROOT}node_modules/@libp2p/crypto/dist/src/keys`;
const NOISE_JS = `${ROOT}node_modules/@chainsafe/libp2p-noise/dist/src/crypto/js.js`;
const TRIMMED = {
  [`${KEYS_DIR}/index.js`]: `import { UnsupportedKeyTypeError } from '@libp2p/interface';
import { generateEd25519KeyPair, generateEd25519KeyPairFromSeed, unmarshalEd25519PublicKey } from './ed25519/utils.js';
import * as pb from './keys.js';
export async function generateKeyPair(type) {
  if (type === 'Ed25519') return generateEd25519KeyPair();
  throw new UnsupportedKeyTypeError();
}
export async function generateKeyPairFromSeed(type, seed) {
  if (type !== 'Ed25519') throw new UnsupportedKeyTypeError('Seed key derivation only supported for Ed25519 keys');
  return generateEd25519KeyPairFromSeed(seed);
}
const ed25519 = ({ Type, Data }) => {
  if (Type !== pb.KeyType.Ed25519) throw new UnsupportedKeyTypeError();
  return unmarshalEd25519PublicKey(Data ?? new Uint8Array());
};
export const publicKeyFromProtobuf = (buf) => ed25519(pb.PublicKey.decode(buf));
export const publicKeyFromMultihash = (digest) => ed25519(pb.PublicKey.decode(digest.digest));
export const publicKeyToProtobuf = (key) => pb.PublicKey.encode({ Type: pb.KeyType[key.type], Data: key.raw });
`,
  [NOISE_JS]: `import { x25519 } from '@noble/curves/ed25519.js';
import { extract, expand } from '@noble/hashes/hkdf.js';
import { sha256 } from '@noble/hashes/sha2.js';
const wasmOnly = () => {
  throw new Error('the agent page seals Noise frames with the WASM core (noiseCrypto)');
};
export const pureJsCrypto = {
  hashSHA256: (data) => sha256(data.subarray()),
  getHKDF(ck, ikm) {
    const okm = expand(sha256, extract(sha256, ikm, ck), undefined, 96);
    return [okm.subarray(0, 32), okm.subarray(32, 64), okm.subarray(64, 96)];
  },
  generateX25519KeyPair() {
    const secretKey = x25519.utils.randomSecretKey();
    return { publicKey: x25519.getPublicKey(secretKey), privateKey: secretKey };
  },
  generateX25519KeyPairFromSeed: (seed) => ({ publicKey: x25519.getPublicKey(seed), privateKey: seed }),
  generateX25519SharedKey: (privateKey, publicKey) => x25519.getSharedSecret(privateKey.subarray(), publicKey.subarray()),
  chaCha20Poly1305Encrypt: wasmOnly,
  chaCha20Poly1305Decrypt: wasmOnly,
};
`,
};
export const trimmedLibp2p = {
  name: 'trimmed-libp2p',
  setup(b) {
    const KEYS = `${KEYS_DIR}/index.js`;
    b.onResolve({ filter: /^@libp2p\/crypto\/keys$|\/(index|js)\.js$/ }, (a) => {
      const path = a.path === '@libp2p/crypto/keys' ? KEYS : a.path.startsWith('.') ? resolve(a.resolveDir, a.path) : undefined;
      return path && TRIMMED[path] ? { path, namespace: 'trimmed-libp2p' } : undefined;
    });
    b.onLoad({ filter: /.*/, namespace: 'trimmed-libp2p' }, (a) => ({ contents: TRIMMED[a.path], resolveDir: dirname(a.path), loader: 'js' }));
  },
};

/** The agent page (`aigenora web`): the engine, libp2p over WebSockets and the page's UI in one module. */
export const pageBuild = {
  ...common,
  entryPoints: [`${ROOT}ts/web/page.ts`],
  outfile: `${ROOT}dist/web/agent.js`,
  plugins: [pageModules, trimmedLibp2p, onePerVersion],
  // Noise's crypto subpath is exported without a browser condition; its browser build is named here.
  alias: { '@chainsafe/libp2p-noise/crypto': `${ROOT}node_modules/@chainsafe/libp2p-noise/dist/src/crypto/index.browser.js` },
};

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await build({ ...common, entryPoints: [`${ROOT}dist/crypto/browser.js`], outfile: `${ROOT}dist/web/aigenora-crypto.js` });
  await build(pageBuild);
}
