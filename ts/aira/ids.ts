/**
 * Content identifiers (M2): `<prefix>:sha256:<64 lowercase hex>` over the RFC 8785 (JCS) bytes of an
 * object with its own id member removed, so an object can carry its id and still be re-hashed to check
 * it. The bytes come from the project's one JCS implementation (ts/crypto), the same on both backends.
 */
import type { Crypto } from '../crypto/backend.js';
import { toHex } from '../crypto/encoding.js';

/** The lowercase-letter prefixes `HashId` in schema.ts accepts (`task`, `intent`, `plan`, …). */
const PREFIX = /^[a-z]+$/;
/** An id this module can have produced. */
export const CONTENT_ID = /^([a-z]+):sha256:([0-9a-f]{64})$/;

export class ContentIdError extends Error {
  override readonly name = 'ContentIdError';
  constructor(
    readonly code: 'ID_PREFIX_INVALID' | 'ID_VALUE_INVALID',
    message: string,
  ) {
    super(message);
  }
}

/**
 * The content id of `value` under `prefix`. `idMember`, if named, is left out of the hashed bytes
 * whatever it holds (absent, a stale id or the right one). Values JCS cannot encode (NaN, ±Infinity,
 * bigint, nesting deeper than JCS allows) throw the crypto layer's typed error.
 */
export function contentId(prefix: string, value: Record<string, unknown>, crypto: Crypto, idMember?: string): string {
  if (!PREFIX.test(prefix)) throw new ContentIdError('ID_PREFIX_INVALID', `id prefix must be lowercase letters, got ${JSON.stringify(prefix.slice(0, 40))}`);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new ContentIdError('ID_VALUE_INVALID', 'an id is computed over a JSON object');
  }
  let hashed: Record<string, unknown> = value;
  if (idMember !== undefined && Object.hasOwn(value, idMember)) {
    hashed = {};
    for (const [k, v] of Object.entries(value)) {
      // defineProperty: a member named __proto__ stays data.
      if (k !== idMember) Object.defineProperty(hashed, k, { value: v, enumerable: true, writable: true, configurable: true });
    }
  }
  return `${prefix}:sha256:${toHex(crypto.jcsValueSha256(hashed))}`;
}

/** Whether `id` is the content id of `value` (with `idMember` left out) under the id's own prefix. */
export function verifyContentId(id: string, value: Record<string, unknown>, crypto: Crypto, idMember?: string): boolean {
  const m = CONTENT_ID.exec(id);
  if (!m) return false;
  return contentId(m[1]!, value, crypto, idMember) === id;
}
