/**
 * A pinned deal for the mental-poker cheat tests (cheats.ts): the sides' RSA keys from a fixture and
 * every other secret derived from a fixed seed, so that each game of the suite, on either backend, is
 * the same game up to what its cheat alters.
 *
 * What the suite used to spend its time on, per game (about 1.2 s on wasm, 1.5 s on js): drawing two
 * RSA-2048 keys (about 0.5 s), the 104 private operations that build the sealed tables (0.45 s wasm,
 * 0.8 s js) and the audit's 208 token checks. The first is gone with the pinned keys; the others are the
 * same operations on the same inputs in every game, so `memoCrypto` computes each once per backend and
 * hands out the same bytes after that.
 *
 * Live key generation is not tested here: test/crypto/mp-ot.test.ts plays an OT on a fresh key of each
 * backend and checks both against each other and node:crypto, and test/mp/mode.test.ts plays whole
 * games on fresh keys (randomSecrets) on both backends.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Crypto } from '../../ts/crypto/backend.js';
import { fromHex, toHex } from '../../ts/crypto/encoding.js';
import { disposed } from '../../ts/crypto/errors.js';
import { OT_NONCE_LEN, RSA_BYTES, RSA_E, type Ot, type RsaKey, type RsaKeyParts } from '../../ts/crypto/ot.js';
import { PAD_LEN } from '../../ts/crypto/deck.js';
import type { Role } from '../../ts/hooks/types.js';
import type { MpSecrets } from '../../ts/mp/secrets.js';

type Hex = { n: string; e: number; d: string; p: string; q: string; dp: string; dq: string; qi: string };
const fixture = JSON.parse(readFileSync(new URL('./fixtures/ot-keys.json', import.meta.url), 'utf8')) as { keys: Record<Role, Hex> };

/** The pinned key of a side (test/mp/fixtures/ot-keys.json, made by scripts/mp-test-keys.ts). */
export function pinnedKeyParts(role: Role): RsaKeyParts {
  const k = fixture.keys[role];
  if (k.e !== RSA_E) throw new Error('the pinned keys have e = 65537');
  return { n: fromHex(k.n), e: RSA_E, d: fromHex(k.d), p: fromHex(k.p), q: fromHex(k.q), dp: fromHex(k.dp), dq: fromHex(k.dq), qi: fromHex(k.qi) };
}

/** `length` bytes that stand for one secret of the pinned deal: SHAKE256 of its name. */
export function dealBytes(name: string, length: number): Uint8Array {
  return new Uint8Array(createHash('shake256', { outputLength: length }).update(`aigenora cheat-test deal|${name}`).digest());
}

const big = (b: Uint8Array) => BigInt(`0x${toHex(b) || '0'}`);
const gcd = (a: bigint, b: bigint): bigint => (b === 0n ? a : gcd(b, a % b));

/** A unit below n from the deal's seed: a zero top byte keeps it below any 2048-bit n. */
export function dealUnit(name: string, n: Uint8Array): Uint8Array {
  for (let i = 0; ; i++) {
    const r = new Uint8Array(RSA_BYTES);
    r.set(dealBytes(`${name}|${i}`, RSA_BYTES - 1), 1);
    if (big(r) > 0n && gcd(big(r), big(n)) === 1n) return r;
  }
}

/** A permutation of 0..n-1 from the deal's seed: Fisher–Yates over SHAKE256 of `name` (slightly biased; nothing here is secret). */
export function dealShuffle(name: string, n: number): number[] {
  const p = Array.from({ length: n }, (_, i) => i);
  const b = dealBytes(`${name}|shuffle`, 4 * n);
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  for (let i = n - 1; i > 0; i--) {
    const j = view.getUint32(4 * i) % (i + 1);
    [p[i], p[j]] = [p[j]!, p[i]!];
  }
  return p;
}

/**
 * The pinned deal's secrets of `role`: its fixture key (a fresh import per game, since a game disposes
 * its key), card keys, nonces, pads and blinding values from the seed, and the identity shuffle, or with
 * `shuffle` a permutation drawn from that number (dealShuffle). The Guest's shuffle decides who holds
 * which card; its card keys are those of id-B positions and the sealed tables are over labels, so games
 * that differ only in the shuffle share their sealed tables (and memoCrypto's work for them).
 */
export function dealSecrets(ot: Pick<Ot, 'importKey'>, role: Role, options: { shuffle?: number } = {}): MpSecrets {
  const at = (what: string, i: number | string, length: number) => dealBytes(`${role}|${what}|${i}`, length);
  return {
    rsaKey: async () => ot.importKey(pinnedKeyParts(role)),
    cardKey: (i) => at('card-key', i, 32),
    blobNonce: (i) => at('blob-nonce', i, OT_NONCE_LEN),
    pad: (i) => at('pad', i, PAD_LEN),
    sealNonce: (label) => at('seal-nonce', label, OT_NONCE_LEN),
    shuffle: (n) => (options.shuffle === undefined ? Array.from({ length: n }, (_, i) => i) : dealShuffle(`${role}|${options.shuffle}`, n)),
    blinding: (otId, n) => dealUnit(`${role}|blinding|${otId}`, n),
  };
}

/**
 * `crypto` with its costly deterministic OT operations computed once per distinct input: the private
 * operations of a key (sealLabel, token, privateOp, keyed by the key's modulus) and blind, unblind,
 * checkToken and checkWitness. Each answer is what this backend computed for those very inputs (one
 * memo per backend: never another backend's bytes), handed out as a fresh copy; a throw is never
 * remembered, so an input the backend refuses is refused every time. A disposed key still refuses
 * (KEY_DISPOSED) as the backends' keys do. Everything else, and anything random, goes to the backend.
 */
export function memoCrypto(crypto: Crypto): Crypto & { ot: Ot } {
  const memo = new Map<string, unknown>();
  const copy = <T>(v: T): T =>
    v instanceof Uint8Array
      ? (v.slice() as T)
      : typeof v === 'object' && v !== null
        ? (Object.fromEntries(Object.entries(v).map(([k, x]) => [k, copy(x)])) as T)
        : v;
  const once =
    <A extends Uint8Array[], R>(name: string, f: (...a: A) => R) =>
    (...a: A): R => {
      const key = `${name}|${a.map((x) => toHex(x)).join('|')}`;
      if (!memo.has(key)) memo.set(key, f(...a));
      return copy(memo.get(key) as R);
    };
  const wrapKey = (k: RsaKey): RsaKey => {
    let live = true;
    const n = toHex(k.n);
    const alive = () => {
      if (!live) throw disposed();
    };
    const sealLabel = once(`sealLabel|${n}`, (c: Uint8Array, p: Uint8Array, nonce: Uint8Array) => k.sealLabel(c, p, nonce));
    const token = once(`token|${n}`, (c: Uint8Array) => k.token(c));
    const privateOp = once(`privateOp|${n}`, (x: Uint8Array) => k.privateOp(x));
    return {
      n: k.n,
      rsaPub: k.rsaPub,
      privateOp: (x) => (alive(), privateOp(x)),
      token: (c) => (alive(), token(c)),
      sealLabel: (c, p, nonce) => (alive(), sealLabel(c, p, nonce)),
      exportParts: () => k.exportParts(),
      dispose() {
        live = false;
        k.dispose();
      },
    };
  };
  const ot = crypto.ot;
  return {
    ...crypto,
    ot: {
      ...ot,
      importKey: (parts) => wrapKey(ot.importKey(parts)),
      generateKey: async (options) => wrapKey(await ot.generateKey(options)),
      blind: once('blind', (n: Uint8Array, c: Uint8Array, r: Uint8Array) => ot.blind(n, c, r)),
      unblind: once('unblind', (n: Uint8Array, y: Uint8Array, r: Uint8Array) => ot.unblind(n, y, r)),
      checkToken: once('checkToken', (n: Uint8Array, c: Uint8Array, t: Uint8Array) => ot.checkToken(n, c, t)),
      checkWitness: once('checkWitness', (n: Uint8Array, c: Uint8Array, z: Uint8Array, r: Uint8Array) => ot.checkWitness(n, c, z, r)),
    },
  };
}
