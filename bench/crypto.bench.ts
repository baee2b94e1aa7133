// `npm run bench`: the crypto core side by side in one run — the wasm backend, the js backend,
// node:crypto, libsodium-wrappers, @noble/* directly, and canonicalize + node:crypto for JCS. Each row
// measures its implementations interleaved (SAMPLES rounds of SAMPLE_MS ms each, FLOOR_SAMPLES in the rows
// whose floors sit close to their line, the order rotating),
// so every floor is the median of paired ratios from the same rounds, with their spread. Also the
// sizes of the .wasm modules (the core's a byte budget) and its compile + instantiate time (a figure: no anchor). In
// memory, nothing written. Prints a Markdown table; writes bench/results/crypto.md and crypto.floors.json.
import { chacha20poly1305 } from '@noble/ciphers/chacha.js';
import { ed25519 as nobleCurves, x25519 as nobleX25519 } from '@noble/curves/ed25519.js';
import * as nobleEd from '@noble/ed25519';
import { sha256 as nobleSha256, sha512 } from '@noble/hashes/sha2.js';
import canonicalize from 'canonicalize';
import sodium from 'libsodium-wrappers';
import * as nodeCrypto from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import os from 'node:os';
import { createRequire } from 'node:module';
import { getCrypto, type Crypto } from '../ts/crypto/index.js';
import {
  budgetFloor,
  FLOOR_SAMPLES,
  floorTable,
  fmt,
  interleaved,
  median,
  medians,
  ratioFloor,
  SAMPLE_MS,
  SAMPLES,
  versusWasmTable,
  writeFloors,
  type Floor,
} from './measure.js';

nobleEd.hashes.sha512 = sha512;
await sodium.ready;

const wasm = getCrypto('wasm');
const js = getCrypto('js');

// ---------------------------------------------------------------- inputs
const seed = new Uint8Array(32).fill(42);
const msg64 = new Uint8Array(64).fill(7);
const pk = wasm.ed25519PublicKey(seed);
const sig = wasm.ed25519Sign(seed, msg64);
const nodeKeys = {
  priv: nodeCrypto.createPrivateKey({ key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]), format: 'der', type: 'pkcs8' }),
  pub: nodeCrypto.createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), pk]), format: 'der', type: 'spki' }),
};
const sodiumSk = new Uint8Array([...seed, ...pk]);
const many = Array.from({ length: 64 }, (_, i) => {
  const s = new Uint8Array(32).fill(i + 1);
  const m = new Uint8Array(64).fill(i);
  return { publicKey: wasm.ed25519PublicKey(s), message: m, signature: wasm.ed25519Sign(s, m) };
});
const manyNodeKeys = many.map((m) =>
  nodeCrypto.createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), m.publicKey]), format: 'der', type: 'spki' }),
);
const bytes = (n: number) => Uint8Array.from({ length: n }, (_, i) => (i * 31) & 0xff);
const [b64, b1k, b1m, b64k] = [bytes(64), bytes(1024), bytes(1 << 20), bytes(64 << 10)];
const key = bytes(32);
const nonce = bytes(12);

function doc(targetBytes: number): unknown {
  const items = [];
  let size = 0;
  for (let i = 0; size < targetBytes; i++) {
    const item = {
      id: `item-${i}`,
      price: { amount: (i * 1.25).toFixed(2), currency: 'EUR' },
      qty: i % 17,
      ratio: i / 7,
      tags: ['a', 'ß', '🐦'],
      ok: i % 2 === 0,
      note: null,
    };
    items.push(item);
    size += JSON.stringify(item).length + 1;
  }
  return { protocol: 'agent-trade/0.2', object_type: 'DEAL', body: { items, seller: 'agent:alice', buyer: 'agent:bob' } };
}
const doc1k = doc(1000);
const doc100k = doc(100_000);
const text1k = JSON.stringify(doc1k, null, 1);
const text100k = JSON.stringify(doc100k, null, 1);
const nodeSha = (b: Uint8Array | string) => nodeCrypto.createHash('sha256').update(b).digest();
const canon = canonicalize as unknown as (v: unknown) => string;
const x25519Priv = bytes(32);
const sealed = (data: Uint8Array) => wasm.aeadSeal('chacha20-poly1305', key, nonce, data);
const [sealed1k, sealed64k] = [sealed(b1k), sealed(b64k)];

// Strict verify as a session has it: many distinct messages signed by one peer key; the opposite case,
// a key never seen before on every call; and between them what a verifier of many agents' envelopes
// sees: each key used a few times then never again, and more peers in turn than the cache has tables.
// node:crypto gets its KeyObjects made once, outside the timed loop, as a verifier holding its peers'
// keys would. "wasm (no cache)" is ed25519-dalek's own verification (no cache, no lattice reduction)
// built for wasm from the same core (crates/wasm-reference): the baseline of ours, measured in the same rounds.
const REPEATED_MSGS = 1024;
const spki = (p: Uint8Array) =>
  nodeCrypto.createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), p]), format: 'der', type: 'spki' });
const oneSeed = new Uint8Array(32).fill(77);
const repeatedPk = wasm.ed25519PublicKey(oneSeed);
const repeated = Array.from({ length: REPEATED_MSGS }, (_, i) => {
  const m = Uint8Array.from({ length: 64 }, (_, j) => (i * 131 + j * 7) & 0xff);
  return { message: m, signature: wasm.ed25519Sign(oneSeed, m) };
});
const repeatedNodeKey = spki(repeatedPk);
// Built from the same core by scripts/build-wasm.sh into bindings/reference (not shipped): kept out of
// the core module, whose only verification is the cached one.
const rawWasm = createRequire(import.meta.url)(new URL('../bindings/reference/aigenora_wasm_reference.js', import.meta.url).pathname) as {
  ed25519_verify_uncached(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): void;
};
/** The uncached baseline as a boolean, like ed25519Verify. */
const verifyUncached = (publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean => {
  try {
    rawWasm.ed25519_verify_uncached(publicKey, message, signature);
    return true;
  } catch {
    return false;
  }
};

interface Signed {
  publicKey: Uint8Array;
  message: Uint8Array;
  signature: Uint8Array;
  node: nodeCrypto.KeyObject;
}
/** `uses` signatures (distinct messages) by each of `keys` key pairs, seeds in the namespace `tag`. */
function signers(tag: number, keys: number, uses: number): Signed[][] {
  return Array.from({ length: keys }, (_, i) => {
    const seed = new Uint8Array(32);
    new DataView(seed.buffer).setUint32(0, i + 1);
    seed[31] = tag;
    const kp = wasm.ed25519Keypair(seed);
    const node = spki(kp.publicKey);
    return Array.from({ length: uses }, (_, u) => {
      const message = Uint8Array.from({ length: 64 }, (_, j) => (i + u * 71 + j * 13) & 0xff);
      return { publicKey: kp.publicKey, message, signature: kp.sign(message), node };
    });
  });
}

// A fresh key must be fresh to every implementation in every sample, also on a machine several times
// faster than this one: each implementation walks the pool once and never wraps (it throws instead,
// which reports the bench as not run rather than measuring reused keys). The pool holds twice the calls
// that the fastest implementation makes in the row's rounds, at a rate measured here first, and at
// least BENCH_FRESH_KEYS.
const calibrate = (() => {
  let n = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < 100) {
    const r = repeated[n % REPEATED_MSGS]!;
    verifyUncached(repeatedPk, r.message, r.signature);
    n++;
  }
  return (n * 1000) / (performance.now() - t0);
})();
// rates() warms up for a quarter of a sample, then measures at least one; the first call checks answers.
const CALLS_PER_ROW = Math.ceil(calibrate * ((SAMPLE_MS * 1.25) / 1000) * FLOOR_SAMPLES) + 1;
const FRESH_KEYS = Math.max(Number(process.env['BENCH_FRESH_KEYS'] ?? 4096), 2 * CALLS_PER_ROW);
/** Each of these keys is used USES times, in blocks of BLOCK keys (BLOCK other verifications between two uses of a key). */
const [USES, BLOCK] = [4, 8];
const fresh = signers(0xa5, FRESH_KEYS, 1).map((k) => k[0]!);
const fewUses = signers(0xb6, Math.ceil(FRESH_KEYS / USES / BLOCK) * BLOCK, USES);
const fewUsesOrder = fewUses.flatMap((_, k) =>
  k % BLOCK === 0 ? Array.from({ length: BLOCK * USES }, (_, j) => fewUses[k + (j % BLOCK)]![Math.floor(j / BLOCK)]!) : [],
);
/** More peers than DEFAULT_TABLES (32), each signing many messages, verified in round robin. */
const PEERS = 128;
const peers = signers(0xc7, PEERS, 8);
const peersOrder = Array.from({ length: PEERS * 8 }, (_, n) => peers[n % PEERS]![Math.floor(n / PEERS)]!);

/** Each call of the result runs `f` on the next item, round and round: each call verifies another message. */
function cycling<T>(items: readonly T[], f: (x: T, i: number) => unknown): () => unknown {
  let i = 0;
  return () => {
    i = i + 1 === items.length ? 0 : i + 1;
    return f(items[i]!, i);
  };
}
/** Each call runs `f` on the next item, and throws when `items` are used up: no item is seen twice. */
function once<T>(what: string, items: readonly T[], f: (x: T) => unknown): () => unknown {
  let i = 0;
  return () => {
    const x = items[i++];
    if (x === undefined) throw new Error(`${what}: all ${items.length} pre-made keys used; a key would be reused (set BENCH_FRESH_KEYS higher)`);
    return f(x);
  };
}
const x25519Pub = wasm.x25519PublicKey(new Uint8Array(32).fill(9));

// ---------------------------------------------------------------- cases
type Impl = 'wasm' | 'wasm (no cache)' | 'js' | 'node:crypto' | 'libsodium' | 'noble' | 'canonicalize+node';
const IMPLS: Impl[] = ['wasm', 'wasm (no cache)', 'js', 'node:crypto', 'libsodium', 'noble', 'canonicalize+node'];
interface Bench {
  name: string;
  impls: Partial<Record<Impl, () => unknown>>;
  per?: number;
}
const both = (f: (c: Crypto) => () => unknown) => ({ wasm: f(wasm), js: f(js) });

const benches: Bench[] = [
  {
    name: 'Ed25519 strict verify (64 B)',
    impls: {
      ...both((c) => () => c.ed25519Verify(pk, msg64, sig)),
      'node:crypto': () => nodeCrypto.verify(null, msg64, nodeKeys.pub, sig),
      libsodium: () => sodium.crypto_sign_verify_detached(sig, msg64, pk),
      // Strict (RFC 8032) like the others: @noble/ed25519's default is the lenient ZIP-215 rule.
      noble: () => nobleEd.verify(sig, msg64, pk, { zip215: false }),
    },
  },
  {
    name: 'Ed25519 verify, @noble/curves zip215:false',
    impls: { noble: () => nobleCurves.verify(sig, msg64, pk, { zip215: false }) },
  },
  {
    // Like libsodium's crypto_sign_detached (64-byte secret key) and a node:crypto KeyObject: the key
    // pair is expanded once; the row below signs from the bare seed each time. noble has no
    // sign from an expanded key, so it is only in the row below.
    name: 'Ed25519 sign (64 B)',
    impls: {
      ...both((c) => {
        const kp = c.ed25519Keypair(seed);
        return () => kp.sign(msg64);
      }),
      'node:crypto': () => nodeCrypto.sign(null, msg64, nodeKeys.priv),
      libsodium: () => sodium.crypto_sign_detached(msg64, sodiumSk),
    },
  },
  {
    name: 'Ed25519 sign (64 B) from the seed',
    impls: { ...both((c) => () => c.ed25519Sign(seed, msg64)), noble: () => nobleCurves.sign(msg64, seed) },
  },
  {
    name: 'Ed25519 verify 64 signatures in one call (per signature)',
    per: 64,
    impls: {
      ...both((c) => () => c.ed25519VerifyMany(many)),
      // Key objects are made once, outside the timed loop, as a verifier holding its peers' keys would.
      'node:crypto': () => many.map((m, i) => nodeCrypto.verify(null, m.message, manyNodeKeys[i]!, m.signature)),
      libsodium: () => many.map((m) => sodium.crypto_sign_verify_detached(m.signature, m.message, m.publicKey)),
    },
  },
  {
    name: `Ed25519 strict verify, one key repeated (${REPEATED_MSGS} distinct messages)`,
    impls: {
      ...both((c) => cycling(repeated, (r) => c.ed25519Verify(repeatedPk, r.message, r.signature))),
      'wasm (no cache)': cycling(repeated, (r) => verifyUncached(repeatedPk, r.message, r.signature)),
      'node:crypto': cycling(repeated, (r) => nodeCrypto.verify(null, r.message, repeatedNodeKey, r.signature)),
      libsodium: cycling(repeated, (r) => sodium.crypto_sign_verify_detached(r.signature, r.message, repeatedPk)),
      noble: cycling(repeated, (r) => nobleEd.verify(r.signature, r.message, repeatedPk, { zip215: false })),
    },
  },
  {
    name: `Ed25519 strict verify, a fresh key each call (never reused: ${FRESH_KEYS} keys, each implementation sees each at most once)`,
    impls: {
      ...both((c) => once('fresh keys', fresh, (f) => c.ed25519Verify(f.publicKey, f.message, f.signature))),
      'wasm (no cache)': once('fresh keys', fresh, (f) => verifyUncached(f.publicKey, f.message, f.signature)),
      'node:crypto': once('fresh keys', fresh, (f) => nodeCrypto.verify(null, f.message, f.node, f.signature)),
      libsodium: once('fresh keys', fresh, (f) => sodium.crypto_sign_verify_detached(f.signature, f.message, f.publicKey)),
      noble: once('fresh keys', fresh, (f) => nobleEd.verify(f.signature, f.message, f.publicKey, { zip215: false })),
    },
  },
  {
    name: `Ed25519 strict verify, each key used ${USES} times then never again (${BLOCK} keys interleaved)`,
    impls: {
      ...both((c) => once('keys used a few times', fewUsesOrder, (f) => c.ed25519Verify(f.publicKey, f.message, f.signature))),
      'wasm (no cache)': once('keys used a few times', fewUsesOrder, (f) => verifyUncached(f.publicKey, f.message, f.signature)),
      'node:crypto': once('keys used a few times', fewUsesOrder, (f) => nodeCrypto.verify(null, f.message, f.node, f.signature)),
      libsodium: once('keys used a few times', fewUsesOrder, (f) => sodium.crypto_sign_verify_detached(f.signature, f.message, f.publicKey)),
    },
  },
  {
    name: `Ed25519 strict verify, ${PEERS} peer keys in turn (more than the cache's tables)`,
    impls: {
      wasm: cycling(peersOrder, (f) => wasm.ed25519Verify(f.publicKey, f.message, f.signature)),
      'wasm (no cache)': cycling(peersOrder, (f) => verifyUncached(f.publicKey, f.message, f.signature)),
      'node:crypto': cycling(peersOrder, (f) => nodeCrypto.verify(null, f.message, f.node, f.signature)),
      libsodium: cycling(peersOrder, (f) => sodium.crypto_sign_verify_detached(f.signature, f.message, f.publicKey)),
    },
  },
  ...(
    [
      ['64 B', b64],
      ['1 KiB', b1k],
      ['1 MiB', b1m],
    ] as const
  ).map(([label, data]) => ({
    name: `SHA-256 ${label}`,
    impls: { ...both((c) => () => c.sha256(data)), 'node:crypto': () => nodeSha(data), noble: () => nobleSha256(data) },
  })),
  ...(
    [
      ['~1 KiB', doc1k, text1k],
      ['~100 KiB', doc100k, text100k],
    ] as const
  ).flatMap(([label, value, text]) => [
    {
      name: `JCS+SHA-256 ${label}, from a JS value`,
      impls: { ...both((c) => () => c.jcsValueSha256(value)), 'canonicalize+node': () => nodeSha(canon(value)) },
    },
    {
      name: `JCS+SHA-256 ${label}, from JSON text`,
      impls: { ...both((c) => () => c.jcsSha256(text)), 'canonicalize+node': () => nodeSha(canon(JSON.parse(text))) },
    },
  ]),
  ...(
    [
      ['1 KiB', b1k],
      ['64 KiB', b64k],
    ] as const
  ).map(([label, data]) => ({
    name: `ChaCha20-Poly1305 seal ${label}`,
    impls: {
      ...both((c) => () => c.aeadSeal('chacha20-poly1305', key, nonce, data)),
      'node:crypto': () => {
        const ci = nodeCrypto.createCipheriv('chacha20-poly1305', key, nonce, { authTagLength: 16 });
        return [ci.update(data), ci.final(), ci.getAuthTag()];
      },
      libsodium: () => sodium.crypto_aead_chacha20poly1305_ietf_encrypt(data, null, null, nonce, key),
      noble: () => chacha20poly1305(key, nonce).encrypt(data),
    },
  })),
  ...(
    [
      ['1 KiB', sealed1k],
      ['64 KiB', sealed64k],
    ] as const
  ).map(([label, data]) => ({
    name: `ChaCha20-Poly1305 open ${label}`,
    impls: {
      ...both((c) => () => c.aeadOpen('chacha20-poly1305', key, nonce, data)),
      'node:crypto': () => {
        const de = nodeCrypto.createDecipheriv('chacha20-poly1305', key, nonce, { authTagLength: 16 });
        de.setAuthTag(data.subarray(data.length - 16));
        return [de.update(data.subarray(0, data.length - 16)), de.final()];
      },
      libsodium: () => sodium.crypto_aead_chacha20poly1305_ietf_decrypt(null, data, null, nonce, key),
      noble: () => chacha20poly1305(key, nonce).decrypt(data),
    },
  })),
  {
    name: 'X25519 shared secret',
    impls: {
      ...both((c) => () => c.x25519SharedSecret(x25519Priv, x25519Pub)),
      'node:crypto': (() => {
        const priv = nodeCrypto.createPrivateKey({
          key: Buffer.concat([Buffer.from('302e020100300506032b656e04220420', 'hex'), x25519Priv]),
          format: 'der',
          type: 'pkcs8',
        });
        const pub = nodeCrypto.createPublicKey({
          key: Buffer.concat([Buffer.from('302a300506032b656e032100', 'hex'), x25519Pub]),
          format: 'der',
          type: 'spki',
        });
        return () => nodeCrypto.diffieHellman({ privateKey: priv, publicKey: pub });
      })(),
      libsodium: () => sodium.crypto_scalarmult(x25519Priv, x25519Pub),
      noble: () => nobleX25519.getSharedSecret(x25519Priv, x25519Pub),
    },
  },
];

// ---------------------------------------------------------------- run
// Every implementation of an AEAD or verify row gives the same answer before any is timed.
const answer = (x: unknown): string =>
  x instanceof Uint8Array ? Buffer.from(x).toString('hex') : Array.isArray(x) ? Buffer.concat(x as Uint8Array[]).toString('hex') : String(x);
const closeToFloor = (b: Bench) => b.name.startsWith('ChaCha20') || b.name.startsWith('Ed25519 strict verify');
for (const b of benches.filter(closeToFloor)) {
  const answers = new Set(Object.values(b.impls).map((f) => answer((f as () => unknown)())));
  if (answers.size !== 1) throw new Error(`${b.name}: the implementations disagree: ${[...answers].map((x) => x.slice(0, 16)).join(' ')}`);
}
const t0 = performance.now();
const samples = new Map<string, Partial<Record<Impl, number[]>>>();
for (const b of benches) {
  const s = interleaved(b.impls as Record<string, () => unknown>, b.per, SAMPLE_MS, closeToFloor(b) ? FLOOR_SAMPLES : SAMPLES) as Partial<
    Record<Impl, number[]>
  >;
  samples.set(b.name, s);
  process.stderr.write(
    `  ${b.name}: ${Object.entries(s)
      .map(([k, v]) => `${k} ${fmt(median(v!))}`)
      .join(', ')}\n`,
  );
}
const results = medians(samples);
const seconds = (performance.now() - t0) / 1000;

// .wasm sizes, and compile + instantiate time of the core module: V8 caches compiled modules per
// process, so each sample is a fresh Node process timing WebAssembly.Module + Instance once (imports
// are stubs: nothing is called while instantiating). Median of 7. The budget is the core module's, the
// one every consumer loads; the feature modules (loaded when used) are figures.
const MODULES = ['aigenora_wasm', 'aigenora_wasm_mp', 'aigenora_wasm_gojson', 'aigenora_wasm_pyjson'] as const;
const moduleSizes = MODULES.map((name) => {
  const bytes = readFileSync(new URL(`../bindings/web/${name}_bg.wasm`, import.meta.url));
  return { name, raw: bytes.length, gz: gzipSync(bytes, { level: 9 }).length };
});
const wasmPath = fileURLToPath(new URL('../bindings/web/aigenora_wasm_bg.wasm', import.meta.url));
const gz = moduleSizes[0]!.gz;
const probe = `
const bytes = require('fs').readFileSync(${JSON.stringify(wasmPath)});
const t0 = performance.now();
const m = new WebAssembly.Module(bytes);
const imports = {};
for (const i of WebAssembly.Module.imports(m)) (imports[i.module] ??= {})[i.name] = () => undefined;
new WebAssembly.Instance(m, imports);
process.stdout.write(String(performance.now() - t0));`;
const times = Array.from({ length: 7 }, () => Number(execFileSync(process.execPath, ['-e', probe], { encoding: 'utf8' }))).sort((a, b) => a - b);
const instantiateMs = times[3]!;

// ---------------------------------------------------------------- floors
const ratio = (label: string, row: string, num: Impl, den: Impl, required: number): Floor => {
  const s = samples.get(row);
  if (!s?.[num] || !s[den]) throw new Error(`no samples for ${row}: ${num} / ${den}`);
  return ratioFloor(label, s[num], s[den], required);
};
const rowName = (prefix: string) => benches.find((b) => b.name.startsWith(prefix))!.name;
const floors: Floor[] = [
  ...(['seal', 'open'] as const).flatMap((op) => [
    ratio(`wasm ChaCha20-Poly1305 ${op} 64 KiB ÷ libsodium-wrappers`, `ChaCha20-Poly1305 ${op} 64 KiB`, 'wasm', 'libsodium', 1.3),
    ratio(`wasm ChaCha20-Poly1305 ${op} 1 KiB ÷ libsodium-wrappers`, `ChaCha20-Poly1305 ${op} 1 KiB`, 'wasm', 'libsodium', 1.2),
  ]),
  ratio('wasm strict verify, one key repeated ÷ libsodium-wrappers', rowName('Ed25519 strict verify, one key repeated'), 'wasm', 'libsodium', 1.5),
  ratio('wasm strict verify, a fresh key each call ÷ libsodium-wrappers', rowName('Ed25519 strict verify, a fresh key'), 'wasm', 'libsodium', 1.0),
  ratio('wasm strict verify, a fresh key each call ÷ wasm without the cache', rowName('Ed25519 strict verify, a fresh key'), 'wasm', 'wasm (no cache)', 1.0),
  ratio(`wasm strict verify, each key used ${USES} times ÷ libsodium-wrappers`, rowName('Ed25519 strict verify, each key used'), 'wasm', 'libsodium', 1.0),
  ratio(
    `wasm strict verify, each key used ${USES} times ÷ wasm without the cache`,
    rowName('Ed25519 strict verify, each key used'),
    'wasm',
    'wasm (no cache)',
    1.0,
  ),
  ratio(
    `wasm strict verify, ${PEERS} peer keys in turn ÷ wasm without the cache`,
    rowName(`Ed25519 strict verify, ${PEERS} peer keys`),
    'wasm',
    'wasm (no cache)',
    1.0,
  ),
  ratio('wasm strict verify, one message ÷ libsodium-wrappers', 'Ed25519 strict verify (64 B)', 'wasm', 'libsodium', 1.0),
  ratio('wasm strict verify, one message ÷ @noble/ed25519 (zip215: false)', 'Ed25519 strict verify (64 B)', 'wasm', 'noble', 10),
  ratio('wasm sign (expanded key) ÷ libsodium-wrappers', 'Ed25519 sign (64 B)', 'wasm', 'libsodium', 1.0),
  ratio('js strict verify, one message ÷ @noble/ed25519 (zip215: false)', 'Ed25519 strict verify (64 B)', 'js', 'noble', 0.9),
  ratio('wasm JCS+SHA-256 ~100 KiB from a JS value ÷ canonicalize + node:crypto', 'JCS+SHA-256 ~100 KiB, from a JS value', 'wasm', 'canonicalize+node', 1.0),
  ratio('wasm JCS+SHA-256 ~100 KiB from JSON text ÷ canonicalize + node:crypto', 'JCS+SHA-256 ~100 KiB, from JSON text', 'wasm', 'canonicalize+node', 1.5),
  budgetFloor('core .wasm gzipped size (aigenora_wasm)', gz / 1024, 120, 'KiB'),
];
writeFloors('crypto', floors);

// ---------------------------------------------------------------- report
const lines: string[] = [];
lines.push(`# aigenora crypto benchmarks`, '');
lines.push(
  `${new Date().toISOString()} · Node ${process.version} · ${os.cpus()[0]?.model ?? 'cpu'} × ${os.cpus().length} · load average ${os.loadavg()[0]!.toFixed(2)} · ${SAMPLES} interleaved samples of ${SAMPLE_MS} ms per cell (${FLOOR_SAMPLES} in the AEAD and strict-verify rows), ${seconds.toFixed(0)} s in all · in memory, nothing written`,
  '',
);
lines.push('ops/s, the median of the samples (higher is better); in brackets, the ratio of the wasm backend to that column (ratio of medians).', '');
lines.push(...versusWasmTable(IMPLS, results));
lines.push(
  '',
  `.wasm modules (bindings/web): the core every consumer loads, then the feature modules loaded when used (mp: Crypto.deck and Crypto.ot; gojson: goCanonicalJson; pyjson: protocolId).`,
  '',
  '| module | raw | gzip -9 |',
  '| --- | ---: | ---: |',
  ...moduleSizes.map((m) => `| ${m.name} | ${m.raw} B | ${m.gz} B (${(m.gz / 1024).toFixed(1)} KiB) |`),
  '',
  `Core module compile + instantiate in a fresh process: ${instantiateMs.toFixed(2)} ms (median of 7). The compile time is a figure, not a floor: nothing measured here has a module of its own to compare it with.`,
  '',
);
lines.push('## Floors, from this run', '');
lines.push(
  `Each ratio divides the first implementation's ops/s by the anchor's ops/s measured in the same round (paired samples); the floor is judged on the median of those ratios. The strict-verify rows: one message is the same (key, message, signature) every call; one key repeated cycles through distinct messages signed by one key; a fresh key gives each implementation a key pair it has never seen on every call; each key used ${USES} times gives it ${USES} distinct messages per key pair, ${BLOCK} key pairs interleaved, never seen again; ${PEERS} peer keys cycles through ${PEERS} key pairs, 8 messages each. wasm (no cache) is ed25519-dalek's own verification (no per-key cache, no lattice reduction) built for wasm from the same core, a module of its own (crates/wasm-reference). The core .wasm size is a byte budget, the same on any machine.`,
  '',
);
lines.push(...floorTable(floors));
const report = `${lines.join('\n')}\n`;
process.stdout.write(report);
writeFileSync(new URL('results/crypto.md', import.meta.url), report);
