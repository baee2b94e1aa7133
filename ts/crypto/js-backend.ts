/**
 * The pure-JS twin of the Rust core, on @noble/curves, @noble/hashes and @noble/ciphers. Strict
 * Ed25519 verification and its per-key cache are in ed25519-js.ts.
 */
import { chacha20poly1305, xchacha20poly1305 } from '@noble/ciphers/chacha.js';
import { ed25519, x25519 } from '@noble/curves/ed25519.js';
import { sha256, sha512 } from '@noble/hashes/sha2.js';
import type { AeadCipher, Crypto, SignatureItem } from './backend.js';
import { concatBytes, toHex, utf8, bytesEqual } from './encoding.js';
import { badLength, CryptoError, disposed } from './errors.js';
import { canonicalGoJsonBytes } from './gojson.js';
import { canonicalBytes, firstMemberValue, stringifyStrict, wellFormed } from './jcs.js';
import { isWellFormed } from './unicode.js';
import { jsDeck } from './js-deck.js';
import { jsOt } from './js-ot.js';
import { contractText } from './pyjson.js';
import { check, decode, verify } from './ed25519-js.js';
import { BOX_INFO, BOX_MAGIC, BOX_MIN_LEN, checkPowCounter, checkPowDifficulty, randomSeal } from './box.js';
import { hkdf } from '@noble/hashes/hkdf.js';

const Point = ed25519.Point;

function len(what: string, bytes: Uint8Array, want: number): void {
  if (bytes.length !== want) throw badLength(what, want, bytes.length);
}

function aead(cipher: AeadCipher, key: Uint8Array, nonce: Uint8Array, aad: Uint8Array) {
  len('AEAD key', key, 32);
  if (cipher === 'chacha20-poly1305') {
    len('ChaCha20-Poly1305 nonce', nonce, 12);
    return chacha20poly1305(key, nonce, aad);
  }
  len('XChaCha20-Poly1305 nonce', nonce, 24);
  return xchacha20poly1305(key, nonce, aad);
}

const EMPTY = new Uint8Array(0);

function x25519Shared(privateKey: Uint8Array, publicKey: Uint8Array): Uint8Array {
  len('X25519 private key', privateKey, 32);
  len('X25519 public key', publicKey, 32);
  try {
    return x25519.getSharedSecret(privateKey, publicKey);
  } catch {
    // noble refuses the small-order u values before running the ladder; lengths were checked above.
    throw new CryptoError('X25519_LOW_ORDER', 'X25519 shared secret is all zero: the peer public key has small order');
  }
}

function edPublicToX25519(publicKey: Uint8Array): Uint8Array {
  len('Ed25519 public key', publicKey, 32);
  const A = decode(publicKey);
  if (!A) throw new CryptoError('PUBLIC_KEY_INVALID', 'public key is not a canonical Ed25519 point encoding');
  const Fp = Point.Fp;
  const { y } = A.toAffine();
  const d = Fp.sub(Fp.ONE, y);
  // y = 1 (the neutral point) has no image; like curve25519-dalek, map it to u = 0, which X25519 then refuses.
  return Fp.toBytes(Fp.is0(d) ? Fp.ZERO : Fp.div(Fp.add(Fp.ONE, y), d));
}

function edSeedToX25519(seed: Uint8Array): Uint8Array {
  len('Ed25519 seed', seed, 32);
  const sk = sha512(seed).slice(0, 32);
  sk[0]! &= 248;
  sk[31]! &= 127;
  sk[31]! |= 64;
  return sk;
}

const boxKey = (shared: Uint8Array) => hkdf(sha256, shared, undefined, utf8(BOX_INFO), 32);
const MAGIC = utf8(BOX_MAGIC);

function boxSealWith(recipientPublicKey: Uint8Array, plaintext: Uint8Array, ephemeralPrivate: Uint8Array, nonce: Uint8Array): Uint8Array {
  const recipient = edPublicToX25519(recipientPublicKey);
  len('box nonce', nonce, 12);
  len('X25519 private key', ephemeralPrivate, 32);
  const ephemeralPublic = x25519.getPublicKey(ephemeralPrivate);
  const key = boxKey(x25519Shared(ephemeralPrivate, recipient));
  return concatBytes(MAGIC, ephemeralPublic, nonce, chacha20poly1305(key, nonce).encrypt(plaintext));
}

function boxOpen(recipientSeed: Uint8Array, boxed: Uint8Array): Uint8Array {
  const sk = edSeedToX25519(recipientSeed);
  if (boxed.length < BOX_MIN_LEN) throw new CryptoError('BOX_TOO_SHORT', `box of ${boxed.length} bytes is shorter than the ${BOX_MIN_LEN}-byte minimum`);
  if (!bytesEqual(boxed.subarray(0, 5), MAGIC)) throw new CryptoError('BOX_BAD_MAGIC', 'box does not start with AGBX1');
  const key = boxKey(x25519Shared(sk, boxed.subarray(5, 37)));
  try {
    return chacha20poly1305(key, boxed.subarray(37, 49)).decrypt(boxed.subarray(49));
  } catch {
    throw new CryptoError('AEAD_OPEN_FAILED', 'decryption failed: ciphertext, tag, nonce, key or associated data do not match');
  }
}

/** SHA-256 of prefix ‖ decimal(counter) starts with `zeros` zero bytes. */
function powMeets(prefix: Uint8Array, counter: number, zeros: number): boolean {
  const digest = sha256(concatBytes(prefix, utf8(String(counter))));
  for (let i = 0; i < zeros; i++) if (digest[i] !== 0) return false;
  return true;
}

function powSolve(nonce: string, publicKey: string, difficulty: number): number {
  const prefix = utf8(wellFormed(nonce) + wellFormed(publicKey));
  const zeros = checkPowDifficulty(difficulty);
  let counter = 0;
  while (!powMeets(prefix, counter, zeros)) counter++;
  return counter;
}

export const jsBackend: Crypto = {
  backend: 'js',
  sha256: (data) => sha256(data),
  sha256Shared(prefix, rests, restLengths) {
    const total = restLengths.reduce((a, n) => a + n, 0);
    if (total !== rests.length) throw badLength('the rests', rests.length, total);
    const base = sha256.create().update(prefix);
    const out = new Uint8Array(32 * restLengths.length);
    let at = 0;
    restLengths.forEach((n, i) => {
      out.set(
        base
          .clone()
          .update(rests.subarray(at, at + n))
          .digest(),
        32 * i,
      );
      at += n;
    });
    return out;
  },
  sha512: (data) => sha512(data),
  jcs: (text) => canonicalBytes(text),
  jcsSha256: (text) => sha256(canonicalBytes(text)),
  jcsFirstMemberSha256(text, name) {
    const value = firstMemberValue(canonicalBytes(text), name);
    return value && sha256(value);
  },
  jcsValue: (value) => canonicalBytes(stringifyStrict(value)),
  jcsValueSha256: (value) => sha256(canonicalBytes(stringifyStrict(value))),
  goCanonicalJson: (text) => canonicalGoJsonBytes(text),
  goCanonicalJsonSha256: (text) => sha256(canonicalGoJsonBytes(text)),
  protocolId: (specText) => toHex(sha256(utf8(contractText(specText)))),

  ed25519PublicKey(seed) {
    len('Ed25519 seed', seed, 32);
    return ed25519.getPublicKey(seed);
  },
  ed25519Keypair(seed) {
    len('Ed25519 seed', seed, 32);
    const secret = seed.slice();
    const publicKey = ed25519.getPublicKey(secret);
    let live = true;
    return {
      publicKey,
      sign(message) {
        if (!live) throw disposed();
        return ed25519.sign(message, secret);
      },
      signMany(messages) {
        if (!live) throw disposed();
        return messages.map((m) => ed25519.sign(m, secret));
      },
      dispose() {
        secret.fill(0);
        live = false;
      },
    };
  },
  ed25519Sign(seed, message) {
    len('Ed25519 seed', seed, 32);
    return ed25519.sign(message, seed);
  },
  ed25519Verify: verify,
  ed25519Check: check,
  ed25519VerifyMany: (items: readonly SignatureItem[]) => items.map((it) => verify(it.publicKey, it.message, it.signature)),

  aeadSeal: (cipher, key, nonce, plaintext, aad = EMPTY) => aead(cipher, key, nonce, aad).encrypt(plaintext),
  aeadOpen(cipher, key, nonce, sealed, aad = EMPTY) {
    const c = aead(cipher, key, nonce, aad);
    try {
      return c.decrypt(sealed);
    } catch {
      throw new CryptoError('AEAD_OPEN_FAILED', 'decryption failed: ciphertext, tag, nonce, key or associated data do not match');
    }
  },

  x25519PublicKey(privateKey) {
    len('X25519 private key', privateKey, 32);
    return x25519.getPublicKey(privateKey);
  },
  x25519SharedSecret: x25519Shared,

  ed25519PublicToX25519: edPublicToX25519,
  ed25519SeedToX25519: edSeedToX25519,
  boxSeal: randomSeal(boxSealWith),
  boxSealWith,
  boxOpen,
  powSolve,
  powCheck: (nonce, publicKey, counter, difficulty) =>
    powMeets(utf8(wellFormed(nonce) + wellFormed(publicKey)), checkPowCounter(counter), checkPowDifficulty(difficulty)),

  commit: (choice, nonce) => toHex(sha256(utf8(`${wellFormed(choice)}:${wellFormed(nonce)}`))),
  verifyReveal: (commitment, choice, nonce) =>
    isWellFormed(choice) && isWellFormed(nonce) && bytesEqual(utf8(toHex(sha256(utf8(`${choice}:${nonce}`)))), utf8(commitment)),

  deck: jsDeck,
  ot: jsOt,
};
