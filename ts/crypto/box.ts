/**
 * What both backends share for the reference's AGBX1 offline box and registration proof of work
 * (crates/core/src/sealed_box.rs, pow.rs): the layout constants, the argument checks that come before
 * any call into a backend, and the random variant of boxSeal.
 *
 * The cores take the ephemeral key and nonce as arguments (the Rust core carries no generator); the
 * random variant draws both from the platform's CSPRNG for every message.
 */
import { CryptoError } from './errors.js';
import { randomBytes } from './ot.js';

export const BOX_MAGIC = 'AGBX1';
export const BOX_INFO = 'aigenora-inbox-v1';
/** Magic (5) + ephemeral X25519 key (32) + nonce (12) + tag (16): an empty plaintext's box. */
export const BOX_MIN_LEN = 65;
/** At most this many leading zero bytes: 4 already takes about 2^32 hashes. */
export const POW_MAX_DIFFICULTY = 4;

export function checkPowDifficulty(difficulty: number): number {
  if (!Number.isInteger(difficulty) || difficulty < 0 || difficulty > POW_MAX_DIFFICULTY) {
    throw new CryptoError('POW_DIFFICULTY_RANGE', `proof-of-work difficulty ${difficulty} is not an integer from 0 to ${POW_MAX_DIFFICULTY}`);
  }
  return difficulty;
}

export function checkPowCounter(counter: number): number {
  if (!Number.isSafeInteger(counter) || counter < 0) {
    throw new CryptoError('POW_COUNTER_INVALID', `proof-of-work counter ${counter} is not a safe integer >= 0`);
  }
  return counter;
}

export type BoxSealWith = (recipientPublicKey: Uint8Array, plaintext: Uint8Array, ephemeralPrivate: Uint8Array, nonce: Uint8Array) => Uint8Array;

/** boxSeal on top of a backend's boxSealWith: a fresh ephemeral X25519 key and nonce per message. */
export function randomSeal(sealWith: BoxSealWith): (recipientPublicKey: Uint8Array, plaintext: Uint8Array) => Uint8Array {
  return (recipientPublicKey, plaintext) => {
    const ephemeral = randomBytes(32);
    try {
      return sealWith(recipientPublicKey, plaintext, ephemeral, randomBytes(12));
    } finally {
      ephemeral.fill(0);
    }
  };
}
