/**
 * What the code of this project's schema keywords calls at validation time. Each function names its
 * own expression (`code`), which is how ajv's standalone output refers to it: the generated validators
 * (ts/spec/precompiled/, the agent page's built-ins) import this module as `rt`, so the run-time and the ahead-of-time validators
 * call the very same functions, and neither the page nor a precompiled validator needs ajv's compiler.
 */
import { utf8Length } from '../crypto/unicode.js';
import { pyJsonLength, pyStrLength, WireFloat } from './wire.js';

type Named<F> = F & { code: string };
const named = <F>(f: F, name: string): Named<F> => Object.assign(f as F & object, { code: `rt.${name}` }) as Named<F>;

/** A JSON object or array, never a WireFloat (which ajv's `type: object` would take). */
export const jsonContainer = named(
  (c: string, data: unknown): boolean =>
    c === 'array' ? Array.isArray(data) : typeof data === 'object' && data !== null && !Array.isArray(data) && !(data instanceof WireFloat),
  'jsonContainer',
);

/** A string's length in UTF-8 bytes at most `max`. */
export const maxUtf8Bytes = named((max: number, data: string): boolean => utf8Length(data) <= max, 'maxUtf8Bytes');

/** The UTF-8 bytes of an array's items (as Python's str() writes them) at most `max`. */
export const maxTotalBytes = named((max: number, data: unknown[]): boolean => data.reduce<number>((n, x) => n + pyStrLength(x), 0) <= max, 'maxTotalBytes');

/** A JSON value's canonical length (as Python's json.dumps writes it) at most `max`. */
export const maxCanonicalBytes = named((max: number, data: unknown): boolean => {
  try {
    return pyJsonLength(data) <= max;
  } catch {
    return false;
  }
}, 'maxCanonicalBytes');

/**
 * A string's length in code points, as ajv's runtime/ucs2length counts it for minLength and maxLength
 * (a lone surrogate counts as one). Standalone code would `require` ajv's; an ES module cannot.
 */
export const ucs2length = named((str: string): number => {
  const len = str.length;
  let length = 0;
  let pos = 0;
  while (pos < len) {
    length++;
    const value = str.charCodeAt(pos++);
    if (value >= 0xd800 && value <= 0xdbff && pos < len && (str.charCodeAt(pos) & 0xfc00) === 0xdc00) pos++;
  }
  return length;
}, 'ucs2length');
