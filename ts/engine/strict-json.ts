/** JSON read and compared the way the offline checks need it: strictly, and by canonical (JCS) text. */
import type { Crypto } from '../crypto/backend.js';

/** Strict JSON (duplicate keys, lone surrogates, out-of-range numbers refused), or undefined. */
export function strictParse(crypto: Crypto, text: string): { value: unknown } | undefined {
  try {
    crypto.jcs(text);
    return { value: JSON.parse(text) as unknown };
  } catch {
    return undefined;
  }
}

/** Canonical (JCS) text of a parsed JSON value, for comparing two values for equality. */
export function canonical(crypto: Crypto, value: unknown): string {
  return new TextDecoder().decode(crypto.jcs(JSON.stringify(value)));
}
