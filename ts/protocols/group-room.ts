/**
 * Small helpers the group rooms share. Text bounds and trimming follow the reference's rooms (Python
 * `str.strip()`, limits in UTF-8 bytes, prefixes in code points) so that both implementations compute
 * the same authority state from the same actions.
 */

/** What Python's str.isspace() counts as whitespace (JS trim() differs: no U+001C–U+001F or U+0085, adds U+FEFF). */
const PY_SPACE =
  /^[\t\n\v\f\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+|[\t\n\v\f\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+$/g;

export function pyStrip(s: string): string {
  return s.replace(PY_SPACE, '');
}

/** The first `n` code points, as Python's `s[:n]`. */
export function codePointPrefix(s: string, n: number): string {
  return Array.from(s).slice(0, n).join('');
}

const utf8 = new TextEncoder();

/** A required text field: stripped, 1..limit UTF-8 bytes; the refusal texts are the reference's. */
export function boundedText(value: unknown, limit: number, field: string): string {
  if (typeof value !== 'string') throw new Error(`${field} must be text`);
  const text = pyStrip(value);
  if (!text || utf8.encode(text).length > limit) throw new Error(`${field} must be 1-${limit} UTF-8 bytes`);
  return text;
}

/** Python int() of an option that the spec declares integer (strings of digits included). */
export function intOption(value: unknown, fallback: number): number {
  if (value === undefined || value === null) return fallback;
  const n = typeof value === 'string' ? Number(value.trim()) : Number(value);
  if (!Number.isInteger(n)) throw new Error(`invalid integer option: ${String(value)}`);
  return n;
}

export const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v);
