// The per-key verification cache, on both backends: every project vector and every case of the public
// Ed25519 corpora (read in place from ../shared/conformance; a missing file fails unless
// AIGENORA_SKIP_CORPORA=1, then skipped) verified with the key unknown, then again once the key holds
// a table, always with the answer of the uncached path; and tampering, eviction and bounds. The wasm
// cache is also checked against ed25519-dalek's own verification built for WebAssembly from the same
// core (crates/wasm-reference's ed25519_verify_uncached) under the workloads whose tables did not pay
// back (crates/core/src/ed25519/cache.rs).
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { needShared } from '../shared/require.js';
import { BUILD_AFTER_USES, checkUncached, VerifyCache, verifyCache } from '../../ts/crypto/ed25519-js.js';
import { fromHex, getCrypto, type Crypto } from '../../ts/crypto/index.js';
import { fromWasmError } from '../../ts/crypto/errors.js';
import { errorCode } from '../shared/vector-checks.js';
import { loadReference } from './wasm-modules.js';

interface Case {
  what: string;
  pk: Uint8Array;
  msg: Uint8Array;
  sig: Uint8Array;
}

const wasm = getCrypto('wasm');
const js = getCrypto('js');
const utf8 = (s: string) => new TextEncoder().encode(s);

const corpusDir = new URL('../../../shared/conformance/', import.meta.url);
const skip = !needShared('conformance', 'the public Ed25519 corpora (speccheck, CCTV, Wycheproof)');
function corpus(rel: string): unknown {
  const file = new URL(rel, corpusDir);
  if (!existsSync(file)) throw new Error(`${file.pathname} is absent, so nothing can be checked; put the corpora there or set AIGENORA_SKIP_CORPORA=1 to skip`);
  return JSON.parse(readFileSync(file, 'utf8'));
}

type J = Record<string, string>;
function projectCases(): Case[] {
  const doc = JSON.parse(readFileSync(new URL('../../test-vectors/ed25519.json', import.meta.url), 'utf8')) as { cases: J[] };
  return doc.cases
    .filter((c) => c['name'] !== 'short-seed-sign')
    .map((c) => ({ what: `ed25519.json ${c['name']}`, pk: fromHex(c['public_key']!), msg: fromHex(c['message']!), sig: fromHex(c['signature']!) }));
}
function corpusCases(): Record<string, Case[]> {
  const sc = (corpus('ed25519-speccheck/cases.json') as J[]).map((c, i) => ({
    what: `speccheck ${i}`,
    pk: fromHex(c['pub_key']!),
    msg: fromHex(c['message']!),
    sig: fromHex(c['signature']!),
  }));
  const cctv = (corpus('cctv-ed25519/ed25519vectors.json') as J[]).map((v) => ({
    what: `cctv ${v['number']}`,
    pk: fromHex(v['key']!),
    msg: utf8(v['msg']!),
    sig: fromHex(v['sig']!),
  }));
  const wp = corpus('wycheproof/testvectors_v1/ed25519_test.json') as { testGroups: { publicKey: { pk: string }; tests: J[] }[] };
  const wycheproof = wp.testGroups.flatMap((g) =>
    g.tests.map((t) => ({ what: `wycheproof ${t['tcId']}`, pk: fromHex(g.publicKey.pk), msg: fromHex(t['msg']!), sig: fromHex(t['sig']!) })),
  );
  const rfc = (corpus('rfc8032/ed25519.json') as J[]).map((v, i) => ({
    what: `rfc8032 ${i}`,
    pk: fromHex(v['publicKey']!),
    msg: fromHex(v['message']!),
    sig: fromHex(v['signature']!),
  }));
  expect([sc.length, cctv.length, wycheproof.length, rfc.length]).toEqual([12, 914, 151, 5]);
  return { speccheck: sc, cctv, wycheproof, rfc8032: rfc };
}

// The eight canonical encodings of the points of small order (RFC 8032 keys never have a table).
const SMALL_ORDER = new Set([
  '0000000000000000000000000000000000000000000000000000000000000000',
  '0000000000000000000000000000000000000000000000000000000000000080',
  '0100000000000000000000000000000000000000000000000000000000000000',
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05',
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85',
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a',
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa',
  'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
]);
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const codeOf = errorCode;

/** The uncached JS answer is the reference; a table exists exactly when the key got that far and is
 *  neither invalid nor of small order. */
function checkAll(name: string, cases: Case[]): number {
  const want = cases.map((c) => codeOf(() => checkUncached(c.pk, c.msg, c.sig)));
  // Cold: each case in an empty cache, and the wasm backend agrees.
  cases.forEach((c, i) => {
    expect(
      codeOf(() => new VerifyCache(4, 2).check(c.pk, c.msg, c.sig)),
      `${c.what} cold`,
    ).toBe(want[i]);
    expect(
      codeOf(() => wasm.ed25519Check(c.pk, c.msg, c.sig)),
      `${c.what} wasm`,
    ).toBe(want[i]);
    expect(wasm.ed25519Verify(c.pk, c.msg, c.sig), `${c.what} wasm verify`).toBe(want[i] === 'ok');
  });
  // Warm: per key, used until it has a table, then every case of that key again, on both backends.
  const byKey = new Map<string, number[]>();
  cases.forEach((c, i) => byKey.set(hex(c.pk), [...(byKey.get(hex(c.pk)) ?? []), i]));
  let tables = 0;
  for (const idx of byKey.values()) {
    const cache = new VerifyCache(4, 2);
    const first = cases[idx[0]!]!;
    for (let u = 0; u < BUILD_AFTER_USES; u++) {
      expect(codeOf(() => cache.check(first.pk, first.msg, first.sig))).toBe(want[idx[0]!]);
      expect(codeOf(() => wasm.ed25519Check(first.pk, first.msg, first.sig))).toBe(want[idx[0]!]);
    }
    const eligible = first.pk.length === 32 && first.sig.length === 64 && want[idx[0]!] !== 'PUBLIC_KEY_INVALID' && !SMALL_ORDER.has(hex(first.pk));
    expect(cache.hasTable(first.pk), `${first.what}: table exactly for a valid, non-weak key`).toBe(eligible);
    tables += Number(eligible);
    for (const i of idx) {
      const c = cases[i]!;
      expect(
        codeOf(() => cache.check(c.pk, c.msg, c.sig)),
        `${c.what} warm`,
      ).toBe(want[i]);
      expect(
        codeOf(() => wasm.ed25519Check(c.pk, c.msg, c.sig)),
        `${c.what} wasm warm`,
      ).toBe(want[i]);
      expect(
        codeOf(() => js.ed25519Check(c.pk, c.msg, c.sig)),
        `${c.what} js backend`,
      ).toBe(want[i]);
    }
  }
  expect(tables, name).toBeGreaterThan(0);
  return tables;
}

describe('Ed25519 verification cache', () => {
  it('agrees with the uncached path on the project vectors, cold and warm, on both backends', () => {
    checkAll('ed25519.json', projectCases());
  });

  it.skipIf(skip)(
    'agrees with the uncached path on every corpus case, cold and warm, on both backends',
    () => {
      const all = corpusCases();
      for (const [name, cases] of Object.entries(all)) checkAll(name, cases);
    },
    120_000,
  );

  function keypair(c: Crypto, i: number) {
    const seed = new Uint8Array(32).fill(0x5a);
    new DataView(seed.buffer).setUint32(0, i, true);
    const pk = c.ed25519PublicKey(seed);
    return { pk, sign: (m: Uint8Array) => c.ed25519Sign(seed, m) };
  }

  it.each([
    ['wasm', wasm],
    ['js', js],
  ] as const)('%s: refuses tampering under a hot key, and the key verifies after a failure', (_, c) => {
    const kp = keypair(c, 1);
    for (let i = 0; i < BUILD_AFTER_USES + 2; i++) expect(c.ed25519Verify(kp.pk, utf8(`warm ${i}`), kp.sign(utf8(`warm ${i}`)))).toBe(true);
    if (c === js) expect(verifyCache.hasTable(kp.pk)).toBe(true);
    const msg = utf8('frame 42 of the session');
    const sig = kp.sign(msg);
    for (let byte = 0; byte < 64; byte += 7) {
      for (const bit of [0, 5]) {
        const bad = sig.slice();
        bad[byte]! ^= 1 << bit;
        expect(c.ed25519Verify(kp.pk, msg, bad), `signature byte ${byte} bit ${bit}`).toBe(false);
        expect(errorCode(() => c.ed25519Check(kp.pk, msg, bad))).toBe('SIGNATURE_INVALID');
        expect(c.ed25519Verify(kp.pk, msg, sig)).toBe(true);
      }
    }
    for (let at = 0; at < msg.length; at += 3) {
      const m = msg.slice();
      m[at]! ^= 0x80;
      expect(c.ed25519Verify(kp.pk, m, sig), `message byte ${at}`).toBe(false);
      expect(c.ed25519Verify(kp.pk, msg, sig)).toBe(true);
    }
    const other = keypair(c, 2);
    expect(c.ed25519Verify(kp.pk, msg, other.sign(msg))).toBe(false);
    expect(c.ed25519Verify(other.pk, msg, sig)).toBe(false);
    // Many keys used once each (more than the cache remembers) leave the hot key's answers unchanged.
    for (let i = 100; i < 400; i++) {
      const k = keypair(c, i);
      expect(c.ed25519Verify(k.pk, msg, k.sign(msg))).toBe(true);
    }
    if (c === js) expect(verifyCache.hasTable(kp.pk)).toBe(true);
    expect(c.ed25519Verify(kp.pk, msg, sig)).toBe(true);
    const bad = sig.slice();
    bad[63]! ^= 0x10;
    expect(c.ed25519Verify(kp.pk, msg, bad)).toBe(false);
    // Batch verification goes through the same cache.
    expect(
      c.ed25519VerifyMany([
        { publicKey: kp.pk, message: msg, signature: sig },
        { publicKey: kp.pk, message: msg, signature: bad },
      ]),
    ).toEqual([true, false]);
  });

  it('wasm: the same verdicts as ed25519-dalek built for wasm, for fresh keys, keys used a few times, more peers than tables, a hot key, and tampering', () => {
    const raw = loadReference();
    const uncached = (pk: Uint8Array, m: Uint8Array, s: Uint8Array) =>
      errorCode(() => {
        try {
          raw.ed25519_verify_uncached(pk, m, s);
        } catch (e) {
          throw fromWasmError(e);
        }
      });
    let checked = 0;
    /** The good signature and four tampered ones (R, S, message, another key), cached vs uncached. */
    const agree = (kp: ReturnType<typeof keypair>, other: Uint8Array, what: string) => {
      const msg = utf8(`${what} ${checked}`);
      const sig = kp.sign(msg);
      const [badR, badS, badM] = [sig.slice(), sig.slice(), msg.slice()];
      badR[3]! ^= 0x20;
      badS[40]! ^= 0x01;
      badM[0]! ^= 0x80;
      for (const [pk, m, s, want] of [
        [kp.pk, msg, sig, 'ok'],
        [kp.pk, msg, badR, 'SIGNATURE_INVALID'],
        [kp.pk, msg, badS, 'SIGNATURE_INVALID'],
        [kp.pk, badM, sig, 'SIGNATURE_INVALID'],
        [other, msg, sig, 'SIGNATURE_INVALID'],
      ] as const) {
        expect(uncached(pk, m, s), `${what}: uncached`).toBe(want);
        expect(
          codeOf(() => wasm.ed25519Check(pk, m, s)),
          `${what}: cached`,
        ).toBe(want);
        expect(wasm.ed25519Verify(pk, m, s)).toBe(want === 'ok');
        checked++;
      }
    };
    const other = keypair(wasm, 7).pk;
    // Fresh keys, each seen once.
    for (let i = 0; i < 40; i++) agree(keypair(wasm, 20_000 + i), other, 'fresh');
    // Keys used BUILD_AFTER_USES times each (one agree() is four uses of the key: the good signature,
    // bad R, bad S, bad message), then never again; 80 keys, more than the cache's 32 tables: tables
    // built at the last use are evicted unpaid, which raises the threshold.
    for (let i = 0; i < 80; i++) agree(keypair(wasm, 21_000 + i), other, 'few uses');
    // More peers than tables, in turn: twelve uses each.
    const peers = Array.from({ length: 40 }, (_, i) => keypair(wasm, 22_000 + i));
    for (let round = 0; round < 3; round++) for (const k of peers) agree(k, other, `peer round ${round}`);
    // One hot key: used until long past any threshold, then tampered.
    const hot = keypair(wasm, 23_000);
    for (let i = 0; i < 60; i++) agree(hot, other, 'hot');
    expect(checked).toBe(5 * (40 + 80 + 120 + 60));
    // Batches mixing the hot key with peers, each signature good and then tampered: the items under
    // keys with tables share their last step, and each answer is still the uncached one.
    for (let round = 0; round < 5; round++) {
      const items: { publicKey: Uint8Array; message: Uint8Array; signature: Uint8Array }[] = [];
      for (const k of [hot, peers[round]!, hot, peers[round + 5]!]) {
        const m = utf8(`batch ${round} ${items.length}`);
        const s = k.sign(m);
        const bad = s.slice();
        bad[40]! ^= 1 + items.length;
        items.push({ publicKey: k.pk, message: m, signature: s }, { publicKey: k.pk, message: m, signature: bad });
      }
      const want = items.map((it) => uncached(it.publicKey, it.message, it.signature) === 'ok');
      expect(want).toEqual([true, false, true, false, true, false, true, false]);
      expect(wasm.ed25519VerifyMany(items), `round ${round}`).toEqual(want);
    }
  }, 60_000);

  it('js: fresh keys never evict a table; the least recently used table goes; bounds hold', () => {
    const cache = new VerifyCache(8, 2);
    const [a, b, d] = [keypair(js, 10), keypair(js, 11), keypair(js, 12)];
    const use = (k: typeof a, m: string) => cache.verify(k.pk, utf8(m), k.sign(utf8(m)));
    const hot = (k: typeof a) => {
      for (let i = 0; i < BUILD_AFTER_USES; i++) expect(use(k, `w${i}`)).toBe(true);
      expect(cache.hasTable(k.pk)).toBe(true);
    };
    hot(a);
    hot(b);
    for (let i = 100; i < 150; i++) {
      const k = keypair(js, i);
      expect(use(k, 'once')).toBe(true);
      expect(cache.hasTable(k.pk)).toBe(false);
      expect(cache.size.entries).toBeLessThanOrEqual(8);
      expect(cache.size.tables).toBe(2);
    }
    expect(cache.hasTable(a.pk) && cache.hasTable(b.pk)).toBe(true);
    expect(use(a, 'x')).toBe(true);
    expect(use(b, 'y')).toBe(true);
    hot(d);
    expect([cache.hasTable(a.pk), cache.hasTable(b.pk), cache.hasTable(d.pk)]).toEqual([false, true, true]);
    expect(use(a, 'after eviction')).toBe(true);
    const none = new VerifyCache(0, 0);
    for (let i = 0; i < BUILD_AFTER_USES + 1; i++) expect(none.verify(a.pk, utf8('x'), a.sign(utf8('x')))).toBe(true);
    expect(none.size).toEqual({ entries: 0, tables: 0 });
  });
});
