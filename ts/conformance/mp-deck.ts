/**
 * The reference's mental-poker deck vectors (../shared/conformance/aigenora-reference/
 * aigenora-mp-deck-vectors.json, format in that folder's README) against one backend: the test suite
 * and `aigenora conformance` both run them through here.
 */
import type { Crypto } from '../crypto/backend.js';
import { CryptoError } from '../crypto/errors.js';
import { fromHex, toHex } from '../crypto/encoding.js';
import type { Suite } from './formats.js';
import { vectorSuite, type Vec } from './mp-vectors.js';

type Case = Vec;

function eq(got: unknown, want: unknown, what: string): void {
  const [g, w] = [JSON.stringify(got), JSON.stringify(want)];
  if (g !== w) throw new Error(`${what}: got ${g?.slice(0, 160)}, want ${w?.slice(0, 160)}`);
}

/** The reference's exception class for each of our codes in the deck's failure cases. */
const CLASS: Partial<Record<string, string>> = { AEAD_OPEN_FAILED: 'InvalidTag', DECK_BLOB_TOO_SHORT: 'ValueError', BAD_LENGTH: 'ValueError' };

function failure(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    if (!(e instanceof CryptoError)) throw e;
    return CLASS[e.code] ?? `unexpected ${e.code}`;
  }
  return 'no error';
}

function layers(c: Crypto, v: Case): void {
  const d = c.deck;
  const id = v.id as string;
  const card = d.encodeCard(v.rank_index, v.suit_index);
  eq(toHex(card), v.card, `${id} card`);
  const pt = d.packInner(card, fromHex(v.pad));
  eq(toHex(pt), v.plaintext, `${id} plaintext`);
  const blobA = d.sealInner(fromHex(v.k_inner), fromHex(v.nonce_a), pt);
  eq(toHex(blobA), v.blob_a, `${id} blob_a`);
  const blobB = d.sealOuter(fromHex(v.k_outer), fromHex(v.nonce_b), blobA);
  eq(toHex(blobB), v.blob_b, `${id} blob_b`);

  const openedA = d.openLayer(fromHex(v.k_outer), blobB);
  eq(toHex(openedA), v.open.blob_a, `${id} open blob_a`);
  const openedPt = d.openLayer(fromHex(v.k_inner), openedA);
  eq(toHex(openedPt), v.open.plaintext, `${id} open plaintext`);
  eq(toHex(openedPt.subarray(0, 2)), v.open.card, `${id} open card`);
  eq([openedPt[0], openedPt[1]], v.open.decoded, `${id} decoded`);

  eq(v.tampered.length, 8, `${id} tampered count`);
  for (const t of v.tampered as Case[]) {
    const what = `${id} ${t.name}`;
    const [kOuter, kInner, blob] = [fromHex(t.k_outer), fromHex(t.k_inner), fromHex(t.blob_b)];
    eq(t.expect.ok, false, what);
    let inner: Uint8Array | undefined;
    const outerFail = failure(() => (inner = d.openLayer(kOuter, blob)));
    if (t.expect.stage === 'outer') {
      eq(outerFail, t.expect.error, `${what} outer`);
      continue;
    }
    eq([t.expect.stage, outerFail], ['inner', 'no error'], `${what} stage`);
    eq(toHex(inner!), t.expect.blob_a, `${what} blob_a under the outer layer`);
    eq(
      failure(() => d.openLayer(kInner, inner!)),
      t.expect.error,
      `${what} inner`,
    );
    if (t.name === 'inner_tampered_outer_resealed') {
      eq(toHex(d.sealOuter(fromHex(v.k_outer), fromHex(v.tampered_inner_reseal_nonce), inner!)), t.blob_b, `${what} reseal`);
    }
  }
}

/** Checks one case of the deck vectors against one backend; throws on the first mismatch. */
export function checkDeckCase(c: Crypto, v: Case): void {
  switch (v['kind']) {
    case 'layers':
      layers(c, v);
      break;
    case 'encode_card': {
      let got: unknown = 'no error';
      try {
        c.deck.encodeCard(v['rank_index'], v['suit_index']);
      } catch (e) {
        got = e instanceof CryptoError ? [e.code, e.message] : e;
      }
      eq(v['expect'].ok, false, v['id']);
      eq(got, ['DECK_CARD_RANGE', `DECK_CARD_RANGE: ${v['expect'].message}`], v['id']);
      break;
    }
    case 'validate_play': {
      const got = c.deck.validatePlay({
        hand: v['hand'],
        played: v['played'],
        idB: v['id_b'],
        declaredCard: fromHex(v['declared_card']),
        kInner: fromHex(v['k_inner']),
        kOuter: fromHex(v['k_outer']),
        blobB: fromHex(v['blob_b']),
      });
      eq(got, v['expect'], v['id']);
      break;
    }
    case 'brute_force_open': {
      const got = c.deck.bruteForceOpen(fromHex(v['blob']), (v['candidates'] as string[]).map(fromHex));
      eq(got && { key_index: got.index, plaintext: toHex(got.plaintext) }, v['expect'], v['id']);
      break;
    }
    default:
      throw new Error(`unknown case kind ${String(v['kind'])}`);
  }
}

export const DECK_FORMAT = 'aigenora-mp-deck-vectors/1';

/** Every case of a deck vector file; answers how many cases of each kind it checked. */
export function checkDeckVectors(c: Crypto, doc: { format: string; cases: Case[] }): Record<string, number> {
  eq(doc.format, DECK_FORMAT, 'format');
  const counts: Record<string, number> = {};
  for (const v of doc.cases) {
    checkDeckCase(c, v);
    counts[v['kind']] = (counts[v['kind']] ?? 0) + 1;
  }
  return counts;
}

/** The file as a conformance suite: one case per vector, counted once whatever the backends. */
export function deckSuite(doc: { cases: Case[] }): Suite {
  return vectorSuite(DECK_FORMAT, doc.cases, checkDeckCase);
}
