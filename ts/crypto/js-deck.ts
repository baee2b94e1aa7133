/** The pure-JS twin of crates/core/src/deck.rs on @noble/ciphers; same checks in the same order. */
import { chacha20poly1305 } from '@noble/ciphers/chacha.js';
import { blobTooShort, cardRange, checkPlayIds, CARD_LEN, MIN_BLOB_LEN, type Deck } from './deck.js';
import { bytesEqual, concatBytes } from './encoding.js';
import { badLength, CryptoError } from './errors.js';

function len(what: string, bytes: Uint8Array, want: number): void {
  if (bytes.length !== want) throw badLength(what, want, bytes.length);
}

const index = (x: number) => Number.isInteger(x) && x >= 0 && x <= 255;

function seal(key: Uint8Array, nonce: Uint8Array, inner: Uint8Array): Uint8Array {
  len('deck nonce', nonce, 12);
  return concatBytes(nonce, chacha20poly1305(key, nonce).encrypt(inner));
}

const openFailed = () => new CryptoError('AEAD_OPEN_FAILED', 'decryption failed: ciphertext, tag, nonce, key or associated data do not match');

function openLayer(key: Uint8Array, blob: Uint8Array): Uint8Array {
  len('deck key', key, 32);
  if (blob.length < MIN_BLOB_LEN) throw blobTooShort(blob.length);
  try {
    return chacha20poly1305(key, blob.subarray(0, 12)).decrypt(blob.subarray(12));
  } catch {
    throw openFailed();
  }
}

export const jsDeck: Deck = {
  encodeCard(rank, suit) {
    if (!index(rank) || !index(suit)) throw cardRange();
    return Uint8Array.of(rank, suit);
  },
  packInner(card, pad) {
    len('card', card, 2);
    len('card pad', pad, 14);
    return concatBytes(card, pad);
  },
  sealInner(kInner, nonce, plaintext) {
    len('inner plaintext (card ‖ pad)', plaintext, 16);
    len('k_inner', kInner, 32);
    return seal(kInner, nonce, plaintext);
  },
  sealOuter(kOuter, nonce, blobA) {
    len('blob_A', blobA, 44);
    len('k_outer', kOuter, 32);
    return seal(kOuter, nonce, blobA);
  },
  openLayer,
  bruteForceOpen(blob, candidates) {
    for (const k of candidates) len('candidate key', k, 32);
    if (blob.length < MIN_BLOB_LEN) return null;
    for (let i = 0; i < candidates.length; i++) {
      try {
        return { index: i, plaintext: openLayer(candidates[i]!, blob) };
      } catch (e) {
        if (!(e instanceof CryptoError && e.code === 'AEAD_OPEN_FAILED')) throw e;
      }
    }
    return null;
  },
  validatePlay(c) {
    checkPlayIds(c);
    if (!c.hand.includes(c.idB)) return { ok: false, reason: 'card_not_in_hand' };
    if (c.played.includes(c.idB)) return { ok: false, reason: 'card_already_played' };
    let plaintext: Uint8Array;
    try {
      plaintext = openLayer(c.kInner, openLayer(c.kOuter, c.blobB));
    } catch (e) {
      if (e instanceof CryptoError && e.code === 'AEAD_OPEN_FAILED') return { ok: false, reason: 'invalid_keys_or_blob' };
      throw e;
    }
    if (!bytesEqual(plaintext.subarray(0, CARD_LEN), c.declaredCard)) return { ok: false, reason: 'card_face_mismatch' };
    return { ok: true, reason: null };
  },
};
