/**
 * agent-trade/0.2 signed envelopes (seed 003 §1–2): body_hash, signing_input, object_id, creation and
 * co-signing. Co-signatures are independent: each signs the same signing_input, so adding one never
 * invalidates the others, and object_id does not depend on the signatures.
 */
import type { Crypto, Ed25519Keypair } from '../crypto/backend.js';
import { toBase64Url, toHex, utf8 } from '../crypto/encoding.js';
import { plainCanonicalText } from '../crypto/jcs.js';

export const PROTOCOL = 'agent-trade/0.2';
export const OBJECT_TYPES = ['LISTING_REF', 'DEAL', 'TRADE_EVENT', 'TRADE_RECEIPT'] as const;
export type ObjectType = (typeof OBJECT_TYPES)[number];

export interface EnvelopeSignature {
  signer: string;
  algorithm: 'Ed25519';
  /** base64url, no padding: 86 characters. */
  signature: string;
  /** RFC 3339. */
  issued_at: string;
}

export interface Envelope<B = Record<string, unknown>> {
  protocol: string;
  object_type: ObjectType;
  body: B;
  body_hash: string;
  signatures: EnvelopeSignature[];
}

export function isObjectType(s: unknown): s is ObjectType {
  return (OBJECT_TYPES as readonly unknown[]).includes(s);
}

/** `"sha256:" + lowerhex(SHA-256(JCS(body)))`. Throws CryptoError if the body is not I-JSON. */
export function bodyHash(crypto: Crypto, body: unknown): string {
  const text = plainCanonicalText(body);
  return `sha256:${toHex(text === undefined ? crypto.jcsValueSha256(body) : crypto.sha256(utf8(text)))}`;
}

/** utf8(protocol) ‖ 0x00 ‖ utf8(object_type) ‖ 0x00 ‖ utf8(body_hash). */
export function signingInput(protocol: string, objectType: string, hash: string): Uint8Array {
  // U+0000 is the byte 0x00 in UTF-8, and no surrogate pairs across it: one encoding gives the same bytes as three.
  return utf8(`${protocol}\u0000${objectType}\u0000${hash}`);
}

/** The object_id of a signing input (see objectId). */
export function objectIdOf(crypto: Crypto, input: Uint8Array): string {
  return `sha256:${toHex(crypto.sha256(input))}`;
}

/** `"sha256:" + lowerhex(SHA-256(signing_input))`; the signatures are not part of it. */
export function objectId(crypto: Crypto, env: Pick<Envelope, 'protocol' | 'object_type' | 'body_hash'>): string {
  return objectIdOf(crypto, signingInput(env.protocol, env.object_type, env.body_hash));
}

/**
 * An unsigned envelope for `body` (sign it with addSignature before it is valid).
 *
 * @param crypto - computes body_hash; throws CryptoError if the body is not I-JSON
 * @param objectType - DEAL, LISTING_REF, TRADE_EVENT or TRADE_RECEIPT; verifyEnvelope checks the body against its schema
 * @param body - the agreed body, hashed as RFC 8785 JSON
 * @example
 * ```ts
 * const c = getCrypto();
 * const deal = addSignature(createEnvelope(c, 'DEAL', body), c.ed25519Keypair(seed), 'agent_alice');
 * ```
 */
export function createEnvelope<B>(crypto: Crypto, objectType: ObjectType, body: B): Envelope<B> {
  return { protocol: PROTOCOL, object_type: objectType, body, body_hash: bodyHash(crypto, body), signatures: [] };
}

/** RFC 3339 UTC to the second, the form the reference's vectors use. */
export function nowRfc3339(date = new Date()): string {
  return `${date.toISOString().slice(0, 19)}Z`;
}

/**
 * A copy of `env` with one more signature by `signer`. The signature covers the envelope's own
 * body_hash, so callers must check that hash first (verifyEnvelope does); `signEnvelope` in cli/
 * refuses to sign a file whose body_hash is stale.
 *
 * @param env - the envelope; its earlier signatures stay valid, since they cover the same signing input
 * @param keypair - the signer's key, e.g. `crypto.ed25519Keypair(seed)`
 * @param signer - the id verifiers look the public key up by (a KeyMap key)
 * @param issuedAt - RFC 3339 UTC; now by default
 * @example
 * ```ts
 * const cosigned = addSignature(deal, c.ed25519Keypair(bobSeed), 'agent_bob');
 * ```
 */
export function addSignature<B>(env: Envelope<B>, keypair: Ed25519Keypair, signer: string, issuedAt = nowRfc3339()): Envelope<B> {
  const signature = keypair.sign(signingInput(env.protocol, env.object_type, env.body_hash));
  return { ...env, signatures: [...env.signatures, { signer, algorithm: 'Ed25519', signature: toBase64Url(signature), issued_at: issuedAt }] };
}
