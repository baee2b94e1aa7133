// `npm run bench`: the crypto core side by side in one run — the wasm backend, the js backend,
// node:crypto, libsodium-wrappers, @noble/* directly, and canonicalize + node:crypto for JCS — with
// each case's ratio to the anchors, the issue's floors checked from the same run, the .wasm size and
// its compile + instantiate time. Prints a Markdown table and writes bench/results/crypto.md.
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
import { getCrypto, type Crypto } from '../ts/crypto/index.js';
import { fmt, measure, MS } from './measure.js';

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
const manyNodeKeys = many.map((m) => nodeCrypto.createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), m.publicKey]), format: 'der', type: 'spki' }));
const bytes = (n: number) => Uint8Array.from({ length: n }, (_, i) => (i * 31) & 0xff);
const [b64, b1k, b1m, b64k] = [bytes(64), bytes(1024), bytes(1 << 20), bytes(64 << 10)];
const key = bytes(32);
const nonce = bytes(12);

function doc(targetBytes: number): unknown {
  const items = [];
  let size = 0;
  for (let i = 0; size < targetBytes; i++) {
    const item = { id: `item-${i}`, price: { amount: (i * 1.25).toFixed(2), currency: 'EUR' }, qty: i % 17, ratio: i / 7, tags: ['a', 'ß', '🐦'], ok: i % 2 === 0, note: null };
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
const x25519Pub = wasm.x25519PublicKey(new Uint8Array(32).fill(9));

// ---------------------------------------------------------------- cases
type Impl = 'wasm' | 'js' | 'node:crypto' | 'libsodium' | 'noble' | 'canonicalize+node';
const IMPLS: Impl[] = ['wasm', 'js', 'node:crypto', 'libsodium', 'noble', 'canonicalize+node'];
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
  ...([['64 B', b64], ['1 KiB', b1k], ['1 MiB', b1m]] as const).map(([label, data]) => ({
    name: `SHA-256 ${label}`,
    impls: { ...both((c) => () => c.sha256(data)), 'node:crypto': () => nodeSha(data), noble: () => nobleSha256(data) },
  })),
  ...([['~1 KiB', doc1k, text1k], ['~100 KiB', doc100k, text100k]] as const).flatMap(([label, value, text]) => [
    {
      name: `JCS+SHA-256 ${label}, from a JS value`,
      impls: { ...both((c) => () => c.jcsValueSha256(value)), 'canonicalize+node': () => nodeSha(canon(value)) },
    },
    {
      name: `JCS+SHA-256 ${label}, from JSON text`,
      impls: { ...both((c) => () => c.jcsSha256(text)), 'canonicalize+node': () => nodeSha(canon(JSON.parse(text))) },
    },
  ]),
  ...([['1 KiB', b1k], ['64 KiB', b64k]] as const).map(([label, data]) => ({
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
  {
    name: 'X25519 shared secret',
    impls: {
      ...both((c) => () => c.x25519SharedSecret(x25519Priv, x25519Pub)),
      'node:crypto': (() => {
        const priv = nodeCrypto.createPrivateKey({ key: Buffer.concat([Buffer.from('302e020100300506032b656e04220420', 'hex'), x25519Priv]), format: 'der', type: 'pkcs8' });
        const pub = nodeCrypto.createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b656e032100', 'hex'), x25519Pub]), format: 'der', type: 'spki' });
        return () => nodeCrypto.diffieHellman({ privateKey: priv, publicKey: pub });
      })(),
      libsodium: () => sodium.crypto_scalarmult(x25519Priv, x25519Pub),
      noble: () => nobleX25519.getSharedSecret(x25519Priv, x25519Pub),
    },
  },
];

// ---------------------------------------------------------------- run
const results = new Map<string, Partial<Record<Impl, number>>>();
for (const b of benches) {
  const row: Partial<Record<Impl, number>> = {};
  for (const impl of IMPLS) {
    const f = b.impls[impl];
    if (f) row[impl] = measure(f, b.per);
  }
  results.set(b.name, row);
  process.stderr.write(`  ${b.name}: ${Object.entries(row).map(([k, v]) => `${k} ${fmt(v!)}`).join(', ')}\n`);
}

// .wasm size, and compile + instantiate time: V8 caches compiled modules per process, so each sample
// is a fresh Node process timing WebAssembly.Module + Instance once (imports are stubs: nothing is
// called while instantiating). Median of 7.
const wasmPath = fileURLToPath(new URL('../bindings/web/aigenora_wasm_bg.wasm', import.meta.url));
const wasmBytes = readFileSync(wasmPath);
const gz = gzipSync(wasmBytes, { level: 9 }).length;
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

// ---------------------------------------------------------------- floors (issue 2)
const r = (name: string, impl: Impl) => results.get(name)?.[impl] ?? NaN;
const floors: [string, number, number][] = [
  ['wasm strict verify vs libsodium-wrappers', r('Ed25519 strict verify (64 B)', 'wasm') / r('Ed25519 strict verify (64 B)', 'libsodium'), 1.0],
  ['wasm strict verify vs @noble/ed25519', r('Ed25519 strict verify (64 B)', 'wasm') / r('Ed25519 strict verify (64 B)', 'noble'), 10],
  ['wasm sign vs libsodium-wrappers', r('Ed25519 sign (64 B)', 'wasm') / r('Ed25519 sign (64 B)', 'libsodium'), 1.0],
  ['js strict verify vs @noble/ed25519', r('Ed25519 strict verify (64 B)', 'js') / r('Ed25519 strict verify (64 B)', 'noble'), 0.9],
  ['wasm JCS+SHA-256 ~100 KiB from value vs canonicalize+node:crypto', r('JCS+SHA-256 ~100 KiB, from a JS value', 'wasm') / r('JCS+SHA-256 ~100 KiB, from a JS value', 'canonicalize+node'), 1.0],
  ['wasm JCS+SHA-256 ~100 KiB from text vs canonicalize+node:crypto', r('JCS+SHA-256 ~100 KiB, from JSON text', 'wasm') / r('JCS+SHA-256 ~100 KiB, from JSON text', 'canonicalize+node'), 1.5],
  ['wasm ChaCha20-Poly1305 64 KiB vs libsodium-wrappers', r('ChaCha20-Poly1305 seal 64 KiB', 'wasm') / r('ChaCha20-Poly1305 seal 64 KiB', 'libsodium'), 1.0],
  ['.wasm gzipped KiB (at most)', gz / 1024, 250],
  ['compile + instantiate ms (at most)', instantiateMs, 30],
];

// ---------------------------------------------------------------- report
const lines: string[] = [];
lines.push(`# aigenora crypto benchmarks`, '');
lines.push(`${new Date().toISOString()} · Node ${process.version} · ${os.cpus()[0]?.model ?? 'cpu'} × ${os.cpus().length} · ${MS} ms per cell`, '');
lines.push('ops/s (higher is better); in brackets, the ratio of the wasm backend to that column.', '');
lines.push(`| case | ${IMPLS.join(' | ')} |`, `|---|${IMPLS.map(() => '---:').join('|')}|`);
for (const [name, row] of results) {
  const w = row.wasm;
  const cells = IMPLS.map((i) => {
    const v = row[i];
    if (v === undefined) return '–';
    return i === 'wasm' || w === undefined ? fmt(v) : `${fmt(v)} (${(w / v).toFixed(2)}×)`;
  });
  lines.push(`| ${name} | ${cells.join(' | ')} |`);
}
lines.push('', `.wasm: ${wasmBytes.length} bytes raw, ${gz} bytes gzipped (${(gz / 1024).toFixed(1)} KiB); compile + instantiate in a fresh process: ${instantiateMs.toFixed(2)} ms (median of 7)`, '');
lines.push('## Floors (issue 2), from this run', '', '| floor | measured | required | |', '|---|---:|---:|---|');
for (const [name, got, want] of floors) {
  const atMost = name.includes('at most');
  const ok = atMost ? got <= want : got >= want;
  lines.push(`| ${name} | ${got.toFixed(2)}${atMost ? '' : '×'} | ${atMost ? '≤' : '≥'} ${want}${atMost ? '' : '×'} | ${ok ? 'met' : 'MISSED'} |`);
}
const report = `${lines.join('\n')}\n`;
process.stdout.write(report);
writeFileSync(new URL('results/crypto.md', import.meta.url), report);
