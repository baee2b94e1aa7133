/**
 * JSON number lexemes as exact decimals, judged the way the reference's schema library judges them
 * (santhosh-tekuri/jsonschema v6: `new(big.Rat).SetString(lexeme)` for minimum, maximum,
 * exclusiveMinimum, exclusiveMaximum, multipleOf, `type: integer`, const, enum and uniqueItems).
 * A float would round: `8.0000000000000001` is not above 8 as a float, `19.99 / 0.01` is not whole.
 *
 * Go's big.Rat refuses some lexemes the JSON grammar allows: an exponent outside int64, or (for a
 * non-zero mantissa) a power of ten beyond 10^±1e6 once the fraction digits are counted in
 * (math/big/ratconv.go: "avoid excessively large exponents"). Such a number is `exact: false` here:
 * the reference then equals nothing (not even itself), is not an integer, and panics when a bound
 * or multipleOf is checked against it; callers refuse it instead.
 */

export interface Decimal {
  /** The lexeme as written. */
  readonly text: string;
  /** False when Go's big.Rat cannot hold the lexeme (see above); the fields below are then 0. */
  readonly exact: boolean;
  readonly sign: -1 | 0 | 1;
  /** |value| = coef × 10^exp, coef without trailing zeros (0 for zero). */
  readonly coef: bigint;
  readonly exp: number;
  /** Decimal digits of coef (0 for zero). */
  readonly digits: number;
}

const LEXEME = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;
const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;
/** ratconv.go: a decimal scale beyond this makes SetString fail. */
const MAX_SCALE = 1_000_000n;

const inexact = (text: string): Decimal => ({ text, exact: false, sign: 0, coef: 0n, exp: 0, digits: 0 });

/** The exact value of a JSON number lexeme (the strict parser's; anything else is a programming error). */
export function parseDecimal(text: string): Decimal {
  const m = LEXEME.exec(text);
  if (!m) throw new TypeError(`not a JSON number lexeme: ${JSON.stringify(text.slice(0, 40))}`);
  const [, minus, int, frac = '', expText] = m;
  // The exponent is read into an int64 before anything else, so even 0e99999999999999999999 fails.
  const exponent = expText === undefined ? 0n : BigInt(expText);
  if (exponent < INT64_MIN || exponent > INT64_MAX) return inexact(text);
  const all = (int! + frac).replace(/^0+/, '');
  if (all === '') return { text, exact: true, sign: 0, coef: 0n, exp: 0, digits: 0 };
  const scale = exponent - BigInt(frac.length);
  if (scale > MAX_SCALE || scale < -MAX_SCALE) return inexact(text);
  const trimmed = all.replace(/0+$/, '');
  return {
    text,
    exact: true,
    sign: minus ? -1 : 1,
    coef: BigInt(trimmed),
    exp: Number(scale) + (all.length - trimmed.length),
    digits: trimmed.length,
  };
}

/** −1, 0 or 1 as a < b, a = b, a > b; both exact. */
export function compareDecimal(a: Decimal, b: Decimal): -1 | 0 | 1 {
  if (a.sign !== b.sign) return a.sign < b.sign ? -1 : 1;
  if (a.sign === 0) return 0;
  const magnitude = compareMagnitude(a, b);
  return a.sign > 0 || magnitude === 0 ? magnitude : magnitude < 0 ? 1 : -1;
}

function compareMagnitude(a: Decimal, b: Decimal): -1 | 0 | 1 {
  // The place of the leading digit decides unless it is the same; only then are the digits aligned,
  // so the power of ten built is never longer than the longer coefficient (1e999999 vs 8 costs nothing).
  const lead = a.digits + a.exp - (b.digits + b.exp);
  if (lead !== 0) return lead < 0 ? -1 : 1;
  const low = Math.min(a.exp, b.exp);
  const x = a.coef * 10n ** BigInt(a.exp - low);
  const y = b.coef * 10n ** BigInt(b.exp - low);
  return x === y ? 0 : x < y ? -1 : 1;
}

/** Whether a / m is a whole number (m > 0); both exact. */
export function isMultipleOf(a: Decimal, m: Decimal): boolean {
  if (a.sign === 0) return true;
  const shift = a.exp - m.exp;
  // a / m = (a.coef / m.coef) × 10^shift. With shift < 0 the quotient is whole only if 10 divided
  // a.coef, which has no trailing zero.
  if (shift < 0) return false;
  return ((a.coef % m.coef) * powMod(10n, BigInt(shift), m.coef)) % m.coef === 0n;
}

function powMod(base: bigint, exponent: bigint, modulus: bigint): bigint {
  if (modulus === 1n) return 0n;
  let result = 1n;
  base %= modulus;
  while (exponent > 0n) {
    if (exponent & 1n) result = (result * base) % modulus;
    base = (base * base) % modulus;
    exponent >>= 1n;
  }
  return result;
}

/** Go's isInteger: the lexeme holds a whole number (1.0, 1e400 yes; 1.0000000000000001 no). */
export function isIntegerDecimal(a: Decimal): boolean {
  return a.exact && (a.sign === 0 || a.exp >= 0);
}

let unequal = 0;

/**
 * A text equal for two lexemes exactly when Go's equals holds (1, 1.0 and 1e0 share one); an inexact
 * lexeme gets a text no other number has, since the reference finds it equal to nothing.
 */
export function decimalKey(a: Decimal): string {
  if (!a.exact) return `?${unequal++}`;
  if (a.sign === 0) return '0';
  return `${a.sign < 0 ? '-' : ''}${a.coef}e${a.exp}`;
}
