/**
 * The mental-poker deck: a card's two bytes, the two ChaCha20-Poly1305 layers over it and the play
 * check. Both backends implement `Deck` (crates/core/src/deck.rs and its twin js-deck.ts) with the
 * same results and error codes.
 *
 * blob_A = nonce ‖ AEAD(k_inner, card ‖ pad) is 44 bytes, blob_B = nonce ‖ AEAD(k_outer, blob_A) is 72;
 * sealing takes only those exact sizes, so every blob of a layer has the same length. Opening accepts
 * any blob that can hold a nonce and a tag, so a peer's odd blob fails like any other bad blob. Nonces
 * and pads are the caller's: nothing here draws randomness.
 */
import { CryptoError } from './errors.js';
import { wellFormed } from './jcs.js';

export const CARD_LEN = 2;
export const PAD_LEN = 14;
export const PLAINTEXT_LEN = 16;
export const BLOB_A_LEN = 44;
export const BLOB_B_LEN = 72;
export const MIN_BLOB_LEN = 28;

/** The reasons a play fails the check, in the order they are checked. */
export const PLAY_REJECTIONS = ['card_not_in_hand', 'card_already_played', 'invalid_keys_or_blob', 'card_face_mismatch'] as const;
export type PlayRejection = (typeof PLAY_REJECTIONS)[number];

export type PlayVerdict = { ok: true; reason: null } | { ok: false; reason: PlayRejection };

export interface PlayCheck {
  /** id-B strings of the player's hand and of the cards already played. */
  hand: readonly string[];
  played: readonly string[];
  idB: string;
  /** The card the play declares, as deckEncodeCard gives it. */
  declaredCard: Uint8Array;
  kInner: Uint8Array;
  kOuter: Uint8Array;
  blobB: Uint8Array;
}

export interface Deck {
  /** The two bytes (rank index, suit index); DECK_CARD_RANGE unless both are integers in 0..255. */
  encodeCard(rank: number, suit: number): Uint8Array;
  /** card(2) ‖ pad(14). */
  packInner(card: Uint8Array, pad: Uint8Array): Uint8Array;
  /** blob_A (44 bytes) from the 16-byte plaintext, a 32-byte key and a 12-byte nonce. */
  sealInner(kInner: Uint8Array, nonce: Uint8Array, plaintext: Uint8Array): Uint8Array;
  /** blob_B (72 bytes) from a 44-byte blob_A. */
  sealOuter(kOuter: Uint8Array, nonce: Uint8Array, blobA: Uint8Array): Uint8Array;
  /**
   * Opens either layer: BAD_LENGTH for a key that is not 32 bytes, then DECK_BLOB_TOO_SHORT under 28
   * bytes, then AEAD_OPEN_FAILED.
   */
  openLayer(key: Uint8Array, blob: Uint8Array): Uint8Array;
  /** The first 32-byte candidate key that opens `blob` and the plaintext, or null (also for a blob under 28 bytes). */
  bruteForceOpen(blob: Uint8Array, candidates: readonly Uint8Array[]): { index: number; plaintext: Uint8Array } | null;
  /**
   * The nullifier rule: id-B in the hand, not yet played, blob_B opens with k_outer then k_inner, and the
   * plaintext starts with the declared card; the first failure is the verdict. Malformed input that gets
   * past the hand checks (a key not 32 bytes, a blob under 28 bytes) throws instead, as in the reference;
   * so does a lone surrogate in any id (JSON_LONE_SURROGATE), which could not be compared faithfully in UTF-8.
   */
  validatePlay(check: PlayCheck): PlayVerdict;
}

/** The ids of a play check, refused before anything else if one is not well-formed UTF-16. */
export function checkPlayIds(c: PlayCheck): void {
  wellFormed(c.idB);
  for (const s of c.hand) wellFormed(s);
  for (const s of c.played) wellFormed(s);
}

export function isPlayRejection(s: string): s is PlayRejection {
  return (PLAY_REJECTIONS as readonly string[]).includes(s);
}

export const cardRange = () => new CryptoError('DECK_CARD_RANGE', 'card indices must fit one byte each');
export const blobTooShort = (n: number) =>
  new CryptoError('DECK_BLOB_TOO_SHORT', `blob too short to contain nonce + tag (${n} bytes, at least ${MIN_BLOB_LEN} needed)`);
