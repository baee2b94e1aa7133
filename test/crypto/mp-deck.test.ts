// The mental-poker deck (ts/crypto/deck.ts) on both backends: every case of the reference's deck
// vectors, read in place from ../shared/conformance. A missing file fails, unless AIGENORA_SKIP_CORPORA=1
// asks to skip it, which vitest then reports as skipped.
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { needShared } from '../shared/require.js';
import { getCrypto, type Crypto } from '../../ts/crypto/index.js';
import { checkDeckVectors } from '../shared/mp-deck-checks.js';
import { errorCode as code } from '../shared/vector-checks.js';

const CORPUS = new URL('../../../shared/conformance/aigenora-reference/aigenora-mp-deck-vectors.json', import.meta.url);
const skip = !needShared('conformance/aigenora-reference/aigenora-mp-deck-vectors.json', "the reference's mental-poker deck vectors");

describe.each(['wasm', 'js'])('%s backend', (name) => {
  const c: Crypto = getCrypto(name);
  const d = c.deck;

  it.skipIf(skip)('passes every case of aigenora-mp-deck-vectors.json', () => {
    if (!existsSync(CORPUS)) {
      throw new Error(`${CORPUS.pathname} is absent, so nothing can be checked; put the corpora there or set AIGENORA_SKIP_CORPORA=1 to skip`);
    }
    const counts = checkDeckVectors(c, JSON.parse(readFileSync(CORPUS, 'utf8')));
    expect(counts).toEqual({ layers: 10, encode_card: 2, validate_play: 6, brute_force_open: 2 });
  });

  const kInner = new Uint8Array(32).fill(1);
  const kOuter = new Uint8Array(32).fill(2);
  const card = d.encodeCard(3, 1);
  const blobA = d.sealInner(kInner, new Uint8Array(12).fill(7), d.packInner(card, new Uint8Array(14).fill(9)));
  const blobB = d.sealOuter(kOuter, new Uint8Array(12).fill(8), blobA);
  const play = { hand: ['5'], played: [] as string[], idB: '5', declaredCard: card, kInner, kOuter, blobB };

  it('seals only the exact sizes, so every blob of a layer has the same length', () => {
    expect([blobA.length, blobB.length]).toEqual([44, 72]);
    expect(code(() => d.sealInner(kInner, new Uint8Array(12), new Uint8Array(17)))).toBe('BAD_LENGTH');
    expect(code(() => d.sealInner(kInner.subarray(1), new Uint8Array(12), new Uint8Array(16)))).toBe('BAD_LENGTH');
    expect(code(() => d.sealInner(kInner, new Uint8Array(11), new Uint8Array(16)))).toBe('BAD_LENGTH');
    expect(code(() => d.sealOuter(kOuter, new Uint8Array(12), blobB))).toBe('BAD_LENGTH');
    expect(code(() => d.packInner(card, new Uint8Array(13)))).toBe('BAD_LENGTH');
    expect(code(() => d.packInner(new Uint8Array(3), new Uint8Array(14)))).toBe('BAD_LENGTH');
  });

  it('refuses card indices that are not integers in 0..255', () => {
    for (const [r, s] of [
      [1.5, 0],
      [NaN, 0],
      [0, Infinity],
      [256, 0],
      [0, -1],
      [2 ** 53, 0],
    ] as const) {
      expect(
        code(() => d.encodeCard(r, s)),
        `${r} ${s}`,
      ).toBe('DECK_CARD_RANGE');
    }
    expect([...d.encodeCard(255, -0)]).toEqual([255, 0]);
  });

  it('opens with typed errors: key length, then blob length, then the tag', () => {
    expect(code(() => d.openLayer(kOuter.subarray(1), new Uint8Array(3)))).toBe('BAD_LENGTH');
    expect(code(() => d.openLayer(kOuter, blobB.subarray(0, 27)))).toBe('DECK_BLOB_TOO_SHORT');
    expect(code(() => d.openLayer(kOuter, blobB.subarray(0, 28)))).toBe('AEAD_OPEN_FAILED');
    expect(code(() => d.openLayer(kInner, blobB))).toBe('AEAD_OPEN_FAILED');
    expect(d.bruteForceOpen(blobB.subarray(0, 27), [kOuter])).toBeNull();
    expect(d.bruteForceOpen(blobB, [])).toBeNull();
    // A 31- and a 33-byte key are refused even though they would pack into two 32-byte slots.
    expect(code(() => d.bruteForceOpen(blobB, [new Uint8Array(31), new Uint8Array(33)]))).toBe('BAD_LENGTH');
    const found = d.bruteForceOpen(blobB, [kInner, kOuter, kOuter]);
    expect(found?.index).toBe(1);
    expect(found?.plaintext).toEqual(blobA);
  });

  it('checks a play in the reference order, and throws only for malformed input past the hand checks', () => {
    const v = (over: Partial<typeof play>) => d.validatePlay({ ...play, ...over });
    expect(v({})).toEqual({ ok: true, reason: null });
    expect(v({ played: ['6'], idB: '6', kOuter: new Uint8Array(3) })).toEqual({ ok: false, reason: 'card_not_in_hand' });
    expect(v({ played: ['5'], kOuter: new Uint8Array(3) })).toEqual({ ok: false, reason: 'card_already_played' });
    expect(code(() => v({ kOuter: new Uint8Array(31) }))).toBe('BAD_LENGTH');
    expect(code(() => v({ blobB: blobB.subarray(0, 27) }))).toBe('DECK_BLOB_TOO_SHORT');
    expect(v({ kInner: kOuter, kOuter: kInner })).toEqual({ ok: false, reason: 'invalid_keys_or_blob' });
    expect(v({ blobB: blobA })).toEqual({ ok: false, reason: 'invalid_keys_or_blob' });
    expect(v({ declaredCard: Uint8Array.of(3, 2) })).toEqual({ ok: false, reason: 'card_face_mismatch' });
    expect(v({ declaredCard: Uint8Array.of(3) })).toEqual({ ok: false, reason: 'card_face_mismatch' });
    // Lone surrogates would collapse to U+FFFD in UTF-8 and compare equal; both backends refuse them.
    expect(code(() => v({ hand: ['\ud800'], idB: '\udc00' }))).toBe('JSON_LONE_SURROGATE');
    expect(code(() => v({ played: ['\ud800'] }))).toBe('JSON_LONE_SURROGATE');
  });
});

describe('wasm and js decks', () => {
  it('seal the same bytes and open each other, including tampered blobs, for random inputs', () => {
    const [w, j] = [getCrypto('wasm').deck, getCrypto('js').deck];
    const rnd = (n: number) => crypto.getRandomValues(new Uint8Array(n));
    for (let i = 0; i < 200; i++) {
      const [ki, ko, na, nb, pad] = [rnd(32), rnd(32), rnd(12), rnd(12), rnd(14)];
      const card = w.encodeCard(i % 256, (i * 7) % 256);
      expect(j.encodeCard(i % 256, (i * 7) % 256)).toEqual(card);
      const a = w.sealInner(ki, na, w.packInner(card, pad));
      expect(j.sealInner(ki, na, j.packInner(card, pad))).toEqual(a);
      const b = w.sealOuter(ko, nb, a);
      expect(j.sealOuter(ko, nb, a)).toEqual(b);
      const bad = b.slice();
      bad[i % bad.length]! ^= 1 << (i % 8);
      for (const blob of [b, bad, b.subarray(0, 28 + (i % 45))]) {
        const check = { hand: ['0', String(i)], played: [], idB: String(i), declaredCard: card, kInner: ki, kOuter: ko, blobB: blob };
        expect(w.validatePlay(check)).toEqual(j.validatePlay(check));
      }
    }
  });
});
