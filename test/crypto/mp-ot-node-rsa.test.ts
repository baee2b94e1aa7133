// The wasm backend's RSA private operation through OpenSSL (ts/crypto/node-rsa.ts) against the WASM-only
// path and the js twin: the reference's OT vectors, edge and random operands on the vectors' keys and on
// fresh ones, and every refusal with the same code and message. A missing corpus fails, unless
// AIGENORA_SKIP_CORPORA=1 asks to skip it.
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { needShared } from '../shared/require.js';
import { getCrypto, type Crypto } from '../../ts/crypto/index.js';
import { CryptoError } from '../../ts/crypto/errors.js';
import { loadWasmNode } from '../../ts/crypto/node.js';
import { nodeKeyParts, withNodeRsa } from '../../ts/crypto/node-rsa.js';
import { intFromHex, type OtContextInput, type RsaKey, type RsaKeyParts } from '../../ts/crypto/ot.js';
import { checkOtVectors } from '../../ts/conformance/mp-ot.js';

// Counts OpenSSL's raw operations, to tell that the Node path is the one answering.
const openssl = vi.hoisted(() => ({ calls: 0, publicCalls: 0 }));
vi.mock('node:crypto', async (importOriginal) => {
  const m = await importOriginal<typeof import('node:crypto')>();
  return {
    ...m,
    privateDecrypt: (...a: Parameters<typeof m.privateDecrypt>) => {
      openssl.calls++;
      return m.privateDecrypt(...a);
    },
    publicEncrypt: (...a: Parameters<typeof m.publicEncrypt>) => {
      openssl.publicCalls++;
      return m.publicEncrypt(...a);
    },
  };
});

const CORPUS = new URL('../../../shared/conformance/aigenora-reference/aigenora-mp-ot-vectors.json', import.meta.url);
const skip = !needShared('conformance/aigenora-reference/aigenora-mp-ot-vectors.json', "the reference's mental-poker OT vectors");
const doc = skip ? undefined : JSON.parse(readFileSync(CORPUS, 'utf8'));

const wasmOnly = loadWasmNode();
const nodeRsa = withNodeRsa(wasmOnly);
const js = getCrypto('js');
const PATHS: Record<'node:crypto' | 'wasm' | 'js', Crypto> = { 'node:crypto': nodeRsa, wasm: wasmOnly, js };

const wide = (h: string) => Uint8Array.from(Buffer.from(h.length % 2 ? `0${h}` : h, 'hex'));
const big = (b: Uint8Array) => BigInt(`0x${Buffer.from(b).toString('hex') || '0'}`);
const int = (x: bigint) => intFromHex(x.toString(16));
const input: OtContextInput = { protocolId: 'Crazy Eights', sessionId: 'mp-session', senderRole: 1, payloadType: 1, label: 'h-0' };

function setParts(i: number): RsaKeyParts {
  const s = doc.rsa_sets[i];
  return { n: wide(s.n), e: 65537, d: wide(s.d), p: wide(s.p), q: wide(s.q), dp: wide(s.dmp1), dq: wide(s.dmq1), qi: wide(s.iqmp) };
}

/** What a call gives: its bytes (with their type), or the error's code and message. */
function outcome(f: () => unknown): unknown {
  try {
    const v = f();
    if (v instanceof Uint8Array) return { type: v.constructor.name, hex: Buffer.from(v).toString('hex') };
    if (v && typeof v === 'object' && 'token' in v && 'sealed' in v) return { token: outcome(() => v.token), sealed: outcome(() => v.sealed) };
    return v;
  } catch (e) {
    if (!(e instanceof CryptoError)) throw e;
    return { code: e.code, message: e.message };
  }
}

/** The same key on each path; `f` runs on all three, the outcomes must be equal and are returned. */
function agree(keys: Record<string, RsaKey>, f: (k: RsaKey) => unknown, what: string): unknown {
  const [first, ...rest] = Object.entries(keys).map(([name, k]) => [name, outcome(() => f(k))] as const);
  for (const [name, got] of rest) expect(got, `${what}: ${name} against ${first![0]}`).toEqual(first![1]);
  return first![1];
}

function importAll(parts: RsaKeyParts): Record<string, RsaKey> {
  return Object.fromEntries(Object.entries(PATHS).map(([name, c]) => [name, c.ot.importKey(parts)]));
}

/** Operands around the edges of Z_n, the factors and their multiples, and random ones below n. */
function operands(parts: RsaKeyParts, random: number): bigint[] {
  const [n, p, q] = [big(parts.n), big(parts.p), big(parts.q)];
  const xs = [0n, 1n, 2n, 3n, n - 1n, n - 2n, p, q, 2n * p, 3n * q, p - 1n, q + 1n, (n - 1n) / 2n];
  for (let i = 0; i < random; i++) xs.push(big(crypto.getRandomValues(new Uint8Array(256))) % n);
  return xs;
}

/** Everything a key does, compared across the paths; then the refusals, then after dispose. */
function compareKey(parts: RsaKeyParts, random: number): void {
  const keys = importAll(parts);
  const n = big(parts.n);
  const before = openssl.calls;
  for (const x of operands(parts, random)) agree(keys, (k) => k.privateOp(int(x)), `x^d for x = ${x.toString(16).slice(0, 12)}`);
  expect(agree(keys, (k) => k.privateOp(int(0n)), 'zero')).toEqual(outcome(() => int(0n)));
  expect(agree(keys, (k) => k.privateOp(int(1n)), 'one')).toEqual(outcome(() => int(1n)));
  // A Buffer in: the same bytes out, as a plain Uint8Array.
  agree(keys, (k) => k.privateOp(Buffer.from(int(n - 5n))), 'a Buffer operand');
  expect(openssl.calls - before).toBeGreaterThanOrEqual(operands(parts, 0).length + random);
  for (let i = 0; i < 4; i++) {
    const ctx = nodeRsa.ot.context({ ...input, senderRole: (1 + (i % 2)) as 1 | 2, label: `g-${i}` });
    agree(keys, (k) => k.token(ctx), `token ${i}`);
    const payload = crypto.getRandomValues(new Uint8Array(32 + i));
    const nonce = crypto.getRandomValues(new Uint8Array(12));
    agree(keys, (k) => k.sealLabel(ctx, payload, nonce), `sealLabel ${i}`);
  }
  agree(keys, (k) => k.exportParts(), 'exportParts');
  expect(new Set(Object.values(keys).map((k) => k.rsaPub)).size).toBe(1);
  // Refusals: out of range (n and above), the wrong length, a bad nonce.
  const refused = [
    () => int(n),
    () => int(n + 1n),
    () => new Uint8Array(256).fill(255),
    () => new Uint8Array(0),
    () => new Uint8Array(255),
    () => new Uint8Array(257),
    () => Uint8Array.of(0, ...int(1n)),
  ];
  for (const [i, x] of refused.entries()) {
    const got = agree(keys, (k) => k.privateOp(x()), `refused operand ${i}`) as { code?: string };
    expect(got.code, `refused operand ${i}`).toMatch(/^(OT_INT_RANGE|BAD_LENGTH)$/);
  }
  const ctx = nodeRsa.ot.context(input);
  for (const nonce of [new Uint8Array(11), new Uint8Array(13)]) agree(keys, (k) => k.sealLabel(ctx, Uint8Array.of(1), nonce), 'a bad nonce');
  // Disposed: every method refuses, the disposal first, whatever the operand.
  for (const k of Object.values(keys)) k.dispose();
  for (const [what, f] of [
    ['privateOp', (k: RsaKey) => k.privateOp(int(2n))],
    ['token', (k: RsaKey) => k.token(ctx)],
    ['sealLabel', (k: RsaKey) => k.sealLabel(ctx, Uint8Array.of(1), new Uint8Array(2))],
    ['exportParts', (k: RsaKey) => k.exportParts()],
  ] as const) {
    expect(agree(keys, f, `${what} after dispose`)).toMatchObject({ code: 'KEY_DISPOSED' });
  }
  // A bad operand on a disposed key: the disposal is reported first, on every path.
  for (const x of [int(n), new Uint8Array(3)])
    expect(agree(keys, (k) => k.privateOp(x), 'a bad operand after dispose')).toMatchObject({ code: 'KEY_DISPOSED' });
  for (const k of Object.values(keys)) k.dispose();
}

/** What each path's Ot answers, compared: the node path against the WASM-only path in full, the js twin on the outcome's code or bytes. */
function agreeOt(f: (ot: Crypto['ot']) => unknown, what: string): unknown {
  const [n, w, j] = [outcome(() => f(nodeRsa.ot)), outcome(() => f(wasmOnly.ot)), outcome(() => f(js.ot))];
  expect(n, `${what}: node:crypto against wasm`).toEqual(w);
  const gist = (o: unknown) => (o && typeof o === 'object' && 'code' in o ? (o as { code: string }).code : o);
  expect(gist(j), `${what}: js against wasm`).toEqual(gist(w));
  return w;
}

/** blind, unblind, checkWitness and checkToken on one modulus (valid or not), over edge, random and malformed operands. */
function comparePublic(n: Uint8Array, factors: bigint[], key?: RsaKey): void {
  const nv = big(n);
  const lead = (b: Uint8Array) => Uint8Array.of(0, 0, ...b);
  const rs: Uint8Array[] = [int(1n), int(2n), new Uint8Array(256), new Uint8Array(255).fill(1), new Uint8Array(257), new Uint8Array(0)];
  if (n.length === 256) rs.push(n, ...[nv - 1n, nv + 1n, ...factors, ...factors.map((f) => 3n * f)].filter((x) => x > 0n && x < 1n << 2048n).map(int));
  for (let i = 0; i < 6; i++)
    rs.push(n.length === 256 && nv > 0n ? int(big(crypto.getRandomValues(new Uint8Array(256))) % nv) : crypto.getRandomValues(new Uint8Array(256)));
  for (const [i, label] of ['h-0', 'g-1', 'ß'].entries()) {
    const ctx = nodeRsa.ot.context({ ...input, senderRole: (1 + (i % 2)) as 1 | 2, label });
    for (const [k, r] of rs.entries()) {
      const z = agreeOt((ot) => ot.blind(n, ctx, r), `blind r${k}`) as { hex?: string };
      const zb = z.hex ? Uint8Array.from(Buffer.from(z.hex, 'hex')) : int(5n);
      const bad = zb.slice();
      bad[200]! ^= 1;
      for (const zz of [zb, bad, lead(zb), new Uint8Array(0)]) agreeOt((ot) => ot.checkWitness(n, ctx, zz, r), `checkWitness r${k}`);
      agreeOt((ot) => ot.checkWitness(n, ctx, zb, lead(r)), `checkWitness wide r${k}`);
      for (const y of [zb, int(0n), int(1n), n, new Uint8Array(3)]) agreeOt((ot) => ot.unblind(n, y, r), `unblind r${k}`);
    }
    if (key) {
      const r = rs[1]!;
      const z = nodeRsa.ot.blind(n, ctx, r);
      expect([nodeRsa.ot.checkWitness(n, ctx, z, r), nodeRsa.ot.checkToken(n, ctx, nodeRsa.ot.unblind(n, key.privateOp(z), r))]).toEqual([true, true]);
    }
    const token = key ? key.token(ctx) : int(7n);
    const forged = token.slice();
    forged[9]! ^= 2;
    for (const t of [token, forged, lead(token), int(0n), int(1n), n, new Uint8Array(0), new Uint8Array(300).fill(255)])
      agreeOt((ot) => ot.checkToken(n, ctx, t), `checkToken ${label}`);
  }
}

describe('the RSA private operation through node:crypto', () => {
  afterEach(() => vi.unstubAllEnvs());

  it('is what getCrypto("wasm") gives on Node, and AIGENORA_RSA=wasm keeps the WASM-only path', () => {
    vi.stubEnv('AIGENORA_RSA', '');
    const wired = getCrypto('wasm');
    expect(wired).not.toBe(wasmOnly);
    expect(wired.backend).toBe('wasm');
    expect(getCrypto()).toBe(wired);
    // Only the OT keys differ; every other member is the WASM backend's own.
    for (const [k, v] of Object.entries(wasmOnly)) if (k !== 'ot') expect(wired[k as keyof Crypto], k).toBe(v);
    vi.stubEnv('AIGENORA_RSA', 'wasm');
    expect(getCrypto('wasm')).toBe(wasmOnly);
    expect(getCrypto('js')).toBe(js);
  });

  // getCrypto('wasm') is the Node path, so the other suites run the vectors on it; the WASM-only path runs them here.
  it.skipIf(skip)('passes every case of aigenora-mp-ot-vectors.json, as the WASM-only path and the js twin do', () => {
    for (const [name, c] of Object.entries(PATHS)) {
      const before = openssl.calls;
      expect(checkOtVectors(c, doc), name).toEqual({ label: 13, rsa_pub_decode: 2 });
      expect(openssl.calls > before, name).toBe(name === 'node:crypto');
    }
  });

  it.skipIf(skip)("gives the same bytes and the same refusals on the vectors' keys", () => {
    for (let i = 0; i < doc.rsa_sets.length; i++) compareKey(setParts(i), 20);
  });

  it('gives the same bytes and the same refusals on fresh keys, made on either path', async () => {
    for (const maker of [nodeRsa, wasmOnly]) {
      const made = await maker.ot.generateKey();
      compareKey(made.exportParts(), 20);
      made.dispose();
    }
  });

  it.skipIf(skip)("blind, unblind and the checks agree on the vectors' keys, on fresh keys and on moduli the core refuses", async () => {
    for (let i = 0; i < doc.rsa_sets.length; i++) {
      const parts = setParts(i);
      const key = nodeRsa.ot.importKey(parts);
      comparePublic(parts.n, [big(parts.p), big(parts.q)], key);
      key.dispose();
    }
    const made = await nodeRsa.ot.generateKey();
    const parts = made.exportParts();
    comparePublic(parts.n, [big(parts.p), big(parts.q)], made);
    made.dispose();
    // Refused moduli (the core's OT_MODULUS_INVALID, before any operand), and one with small factors that the core accepts.
    const n = parts.n;
    const even = n.slice();
    even[255]! &= 0xfe;
    const low = n.slice();
    low[0] = 0x7f;
    for (const bad of [even, low, n.subarray(1), new Uint8Array(256), Uint8Array.of(1, ...n)]) comparePublic(bad, []);
    const base = (1n << 2047n) / 210n + 1n;
    const smooth = 105n * (2n * base + 1n);
    expect([smooth % 2n, smooth >> 2047n]).toEqual([1n, 1n]);
    const before = openssl.publicCalls;
    comparePublic(int(smooth), [3n, 5n, 7n]);
    expect(openssl.publicCalls).toBeGreaterThan(before);
  });

  it.skipIf(skip)('refuses a bad key with the WASM path’s errors, and has no key generator of its own', async () => {
    const good = setParts(0);
    for (const bad of [{ e: 3 }, { dp: good.dq }, { qi: good.dp }, { q: good.p }, { n: new Uint8Array(257).fill(1) }, { d: good.dp }]) {
      const all = Object.values(PATHS).map((c) => outcome(() => c.ot.importKey({ ...good, ...bad } as RsaKeyParts)));
      expect(all[0]).toMatchObject({ code: 'OT_KEY_INVALID' });
      for (const o of all.slice(1)) expect(o).toEqual(all[0]);
    }
    const backend = async (c: Crypto) =>
      c.ot.generateKey({ via: 'backend' }).then(
        () => 'made',
        (e: CryptoError) => e.message,
      );
    expect(await backend(nodeRsa)).toBe(await backend(wasmOnly));
    expect(await backend(nodeRsa)).toMatch(/^OT_KEYGEN_FAILED: /);
  });

  it('answers the whole OT of a fresh key with the WASM-only Receiver', async () => {
    const key = await nodeRsa.ot.generateKey();
    const ot = wasmOnly.ot;
    const n = key.n;
    const ctx = ot.context({ ...input, senderRole: 2, payloadType: 2, label: 'g-7' });
    const payload = crypto.getRandomValues(new Uint8Array(32));
    const { token, sealed } = key.sealLabel(ctx, payload, crypto.getRandomValues(new Uint8Array(12)));
    const r = ot.randomUnit(n);
    const z = ot.blind(n, ctx, r);
    const t = ot.unblind(n, key.privateOp(z), r);
    expect(t).toEqual(token);
    expect(ot.openSealed(t, ctx, sealed)).toEqual(payload);
    expect([ot.checkToken(n, ctx, t), ot.checkWitness(n, ctx, z, r)]).toEqual([true, true]);
    key.dispose();
  });

  it("makes keys from OpenSSL's primes that every path imports and that meet the FIPS 186-5 conditions", async () => {
    const [e, parts] = [65537n, await Promise.all([nodeKeyParts(), nodeKeyParts()])];
    expect(parts[0]!.n).not.toEqual(parts[1]!.n);
    for (const k of parts) {
      const [n, d, p, q] = [big(k.n), big(k.d), big(k.p), big(k.q)];
      expect([k.n.length, n >> 2047n, p * q === n, p !== q]).toEqual([256, 1n, true, true]);
      expect(p > q ? p - q : q - p).toBeGreaterThan(1n << 924n);
      expect(d).toBeGreaterThan(1n << 1024n);
      // e·d ≡ 1 mod p − 1 and mod q − 1 (so mod lcm), and the CRT numbers are d's.
      expect([(e * d) % (p - 1n), (e * d) % (q - 1n), big(k.dp), big(k.dq), (big(k.qi) * q) % p]).toEqual([1n, 1n, d % (p - 1n), d % (q - 1n), 1n]);
      compareKey(k, 4);
    }
    const made = await nodeRsa.ot.generateKey();
    expect(made.exportParts().n.length).toBe(256);
    made.dispose();
  });

  it('keeps FDH results by modulus and context, and a caller changing one changes nothing kept', () => {
    const key = wasmOnly.ot.importKey(setParts(0));
    const ctxs = Array.from({ length: 1100 }, (_, i) => nodeRsa.ot.context({ ...input, label: `h-${i}` }));
    const first = nodeRsa.ot.fdh(key.n, ctxs[0]!);
    expect(first).toEqual(wasmOnly.ot.fdh(key.n, ctxs[0]!));
    first.h.fill(0);
    expect(nodeRsa.ot.fdh(key.n, ctxs[0]!)).toEqual(wasmOnly.ot.fdh(key.n, ctxs[0]!));
    // More contexts than are kept: the oldest are dropped and computed again, never confused.
    for (const ctx of ctxs) nodeRsa.ot.fdh(key.n, ctx);
    for (const i of [0, 1, 500, 1099]) expect(nodeRsa.ot.fdh(key.n, ctxs[i]!), `label ${i}`).toEqual(wasmOnly.ot.fdh(key.n, ctxs[i]!));
    const other = wasmOnly.ot.importKey(setParts(1));
    expect(nodeRsa.ot.fdh(other.n, ctxs[0]!)).toEqual(wasmOnly.ot.fdh(other.n, ctxs[0]!));
    key.dispose();
    other.dispose();
  });
});
