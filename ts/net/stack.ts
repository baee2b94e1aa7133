/**
 * What every libp2p node of ours shares, on Node and in a browser: the session protocol's name, Noise
 * with its transport messages sealed by our own backend, and Yamux's per-stream bounds.
 */
import type { ICryptoInterface } from '@chainsafe/libp2p-noise';
import { defaultCrypto } from '@chainsafe/libp2p-noise/crypto';
import type { Crypto } from '../crypto/backend.js';
import { toHex } from '../crypto/encoding.js';

export const SESSION_PROTOCOL = '/aigenora/session/1.0.0';

/**
 * Yamux's per-stream bounds. The line transport pauses a stream whose peer sends faster than the
 * engine reads; what the peer may still send then is its window, which must stay below what a paused
 * stream may hold before libp2p aborts it (the read buffer), or a fast but honest peer would be cut off
 * instead of slowed down. The pinned defaults let the window grow to 16 MiB against a 4 MiB read
 * buffer. Unsent data is bounded too (Infinity by default); the line transport gives up on a peer long
 * before this, at its own send backlog limit.
 */
export const STREAM_LIMITS = {
  maxStreamWindowSize: 2 << 20,
  maxReadBufferLength: 4 << 20,
  maxWriteBufferLength: 64 << 20,
};

/**
 * Noise's transport messages sealed and opened by one of our backends. Only the AEAD changes (the same
 * IETF ChaCha20-Poly1305, so the same bytes on the wire); the handshake's X25519, HKDF and SHA-256 stay
 * Noise's defaults. A frame of a session is a few hundred bytes, where the default AEAD (about 10 µs to
 * seal and 15 µs to open one on this machine class) costs more than ours by several times.
 */
export function noiseCrypto(c: Crypto): ICryptoInterface {
  return {
    ...defaultCrypto,
    // Noise hands over a Uint8Array or a Uint8ArrayList: subarray() of either is the whole message
    // (a view of the array, or the list joined).
    chaCha20Poly1305Encrypt: (plaintext, nonce, ad, k) => c.aeadSeal('chacha20-poly1305', k, nonce, plaintext.subarray(), ad),
    chaCha20Poly1305Decrypt: (ciphertext, nonce, ad, k) => c.aeadOpen('chacha20-poly1305', k, nonce, ciphertext.subarray(), ad),
  };
}

/** The raw 32-byte Ed25519 public key behind a libp2p peer id, as lowercase hex. */
export function peerKeyHex(peer: { publicKey?: { raw: Uint8Array } }): string | undefined {
  const raw = peer.publicKey?.raw;
  return raw ? toHex(raw) : undefined;
}
