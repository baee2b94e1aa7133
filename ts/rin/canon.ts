/**
 * The two byte-level operations every rin digest rests on, taken from a crypto backend so that the
 * WASM core does the byte work when it is the backend: Go's canonical JSON of a text, and lowercase
 * hex SHA-256. Functions of the model take the backend as an optional last argument; without one
 * they use the process default (getCrypto()).
 */
import type { Crypto } from '../crypto/backend.js';
import { fromUtf8, toHex, utf8 } from '../crypto/encoding.js';
import { getCrypto } from '../crypto/index.js';

let fallback: Crypto | undefined;

/** The backend to use: the one given, or the process default. */
export function backend(c?: Crypto): Crypto {
  return c ?? (fallback ??= getCrypto());
}

/** Go `encoding/json` canonical form of a strict JSON text the caller has already validated. */
export function goCanonical(c: Crypto, text: string): string {
  return fromUtf8(c.goCanonicalJson(text));
}

/** Lowercase hex SHA-256 of the UTF-8 bytes of `text` (or of those bytes, written already). */
export function sha256Hex(c: Crypto, text: string | Uint8Array): string {
  return toHex(c.sha256(typeof text === 'string' ? utf8(text) : text));
}

const COMPACTED = /[ \t\n\r<>&\u2028\u2029]/;
const COMPACT_ESCAPES: Record<string, string> = { '<': '\\u003c', '>': '\\u003e', '&': '\\u0026', '\u2028': '\\u2028', '\u2029': '\\u2029' };

/**
 * What Go's json.Marshal writes for a json.RawMessage: the text without insignificant whitespace and
 * with `<` `>` `&` U+2028 U+2029 escaped, members and lexemes untouched. The text must be valid JSON.
 */
export function goCompact(text: string): string {
  // Nothing to drop or escape (the common case: canonical attributes) leaves the text as it is.
  if (typeof text === 'string' && !COMPACTED.test(text)) return text;
  let out = '';
  let inString = false;
  let escaped = false;
  for (const ch of text) {
    if (inString) {
      if (escaped) escaped = false;
      else if (ch === '\\') escaped = true;
      else if (ch === '"') inString = false;
    } else if (ch === ' ' || ch === '\t' || ch === '\n' || ch === '\r') continue;
    else if (ch === '"') inString = true;
    out += COMPACT_ESCAPES[ch] ?? ch;
  }
  return out;
}
