/**
 * What the JSON readers and writers need to know about a JS string as Unicode text: its code-point
 * order, its UTF-8 length and whether it has a UTF-8 form at all (no unpaired surrogate).
 */

/**
 * Orders strings by code point: Python's str order and the order of their UTF-8 bytes (JavaScript's
 * `<` compares UTF-16 units). The two differ only where a surrogate (half of a code point above
 * U+FFFF) meets a unit in U+E000..U+FFFF: the surrogate sorts first by unit but last by code point. An
 * unpaired surrogate sorts as the astral character it is half of would; it has no UTF-8 form.
 */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800 && y >= 0xd800) {
      x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
      y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
    }
    return x - y;
  }
  return a.length - b.length;
}

/** UTF-8 length of `s`, an unpaired surrogate counting as the 3 bytes of the U+FFFD an encoder makes of it. */
export function utf8Length(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) n += 1;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 2; // the pair is 2 units and 4 bytes
      i++;
    } else n += 2;
  }
  return n;
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
// String.prototype.isWellFormed is in Node 20 and current browsers; the pattern covers older engines.
const nativeWellFormed = (String.prototype as { isWellFormed?: (this: string) => boolean }).isWellFormed;

/**
 * Whether `s` is well-formed UTF-16, with no unpaired surrogate. Only such text has a UTF-8 form: an
 * encoder silently turns a lone surrogate into U+FFFD, so text is checked before it is hashed, signed or
 * copied into WebAssembly.
 */
export const isWellFormed: (s: string) => boolean = nativeWellFormed ? (s) => nativeWellFormed.call(s) : (s) => !LONE_SURROGATE.test(s);
