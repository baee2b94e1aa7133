/** Identifiers and amounts of agent-trade/0.2 §4–5: UUID v7 trade ids and decimal amount strings. */

/** A UUID v7 (RFC 9562): 48-bit Unix milliseconds, version 7, variant 10, 74 random bits. */
export function uuidv7(now = Date.now(), random: Uint8Array = crypto.getRandomValues(new Uint8Array(10))): string {
  const b = new Uint8Array(16);
  let ms = now;
  for (let i = 5; i >= 0; i--) {
    b[i] = ms % 256;
    ms = Math.floor(ms / 256);
  }
  b.set(random.subarray(0, 10), 6);
  b[6] = 0x70 | (b[6]! & 0x0f);
  b[8] = 0x80 | (b[8]! & 0x3f);
  const h = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

export const DECIMAL = /^(0|[1-9][0-9]*)(\.[0-9]{1,8})?$/;

/**
 * The canonical decimal string of an amount: no sign, no exponent, no leading zeros, at most 8
 * fraction digits, trailing fraction zeros dropped. Accepts a bigint, a safe integer, or a decimal
 * string; binary fractions (0.1 as a number) are refused because they are not exact.
 */
export function decimalAmount(value: string | number | bigint): string {
  let s: string;
  if (typeof value === 'bigint') s = value.toString();
  else if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new RangeError(`amount ${value} is not an exact integer; pass a decimal string`);
    s = String(value);
  } else s = value.trim();
  const m = /^([0-9]+)(?:\.([0-9]+))?$/.exec(s);
  if (!m) throw new RangeError(`amount ${JSON.stringify(value)} is not a non-negative decimal`);
  const int = m[1]!.replace(/^0+(?=[0-9])/, '');
  const frac = (m[2] ?? '').replace(/0+$/, '');
  if (frac.length > 8) throw new RangeError(`amount ${JSON.stringify(value)} has more than 8 fraction digits`);
  return frac ? `${int}.${frac}` : int;
}
