/**
 * Typed errors of the crypto layer. Each `code` is stable and identical across the `wasm` and `js`
 * backends and the Rust core (crates/core/src/error.rs), so callers and tests branch on the code, never
 * on the message.
 */
export const CRYPTO_ERROR_CODES = [
  'JSON_SYNTAX',
  'JSON_DUPLICATE_KEY',
  'JSON_LONE_SURROGATE',
  'JSON_NUMBER_RANGE',
  'JSON_TOO_DEEP',
  'JSON_TOO_LARGE',
  'JSON_UNSUPPORTED_VALUE',
  'UTF8_INVALID',
  'BAD_LENGTH',
  'SIGNATURE_INVALID',
  'PUBLIC_KEY_INVALID',
  'AEAD_OPEN_FAILED',
  'X25519_LOW_ORDER',
  'DECK_CARD_RANGE',
  'DECK_BLOB_TOO_SHORT',
  'OT_CONTEXT_INVALID',
  'OT_MODULUS_INVALID',
  'OT_INT_RANGE',
  'OT_INT_ENCODING',
  'OT_NOT_UNIT',
  'OT_KEY_INVALID',
  'OT_KEYGEN_FAILED',
  'OT_RSA_PUB_MALFORMED',
  'OT_RSA_PUB_EXPONENT',
  'OT_FDH_EXHAUSTED',
  'BOX_TOO_SHORT',
  'BOX_BAD_MAGIC',
  'POW_DIFFICULTY_RANGE',
  'POW_COUNTER_INVALID',
  'OUT_OF_MEMORY',
  'KEY_DISPOSED',
  'WASM_UNAVAILABLE',
  'WASM_TRAP',
  'WASM_FEATURE_NOT_LOADED',
] as const;

export type CryptoErrorCode = (typeof CRYPTO_ERROR_CODES)[number];

export class CryptoError extends Error {
  override readonly name = 'CryptoError';
  constructor(
    readonly code: CryptoErrorCode,
    message: string,
  ) {
    super(`${code}: ${message}`);
  }
}

const KNOWN = new Set<string>(CRYPTO_ERROR_CODES);

/** Turns an error thrown by the WASM layer (`"CODE: message"`) into a CryptoError. */
export function fromWasmError(e: unknown): CryptoError {
  const message = e instanceof Error ? e.message : String(e);
  const sep = message.indexOf(': ');
  const code = sep > 0 ? message.slice(0, sep) : '';
  if (KNOWN.has(code)) return new CryptoError(code as CryptoErrorCode, message.slice(sep + 2));
  // Not the core's: a JS error from the bindings' glue, such as a TypeError for a wrong argument.
  throw e;
}

export function badLength(what: string, want: number, got: number): CryptoError {
  return new CryptoError('BAD_LENGTH', `${what} must be ${want} bytes, got ${got}`);
}

export function disposed(): CryptoError {
  return new CryptoError('KEY_DISPOSED', 'this key pair was disposed');
}
