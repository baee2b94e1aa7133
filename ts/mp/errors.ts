/**
 * Typed errors of the mental-poker transcript and audit. Where the reference raises a ValueError with a
 * fixed text, the message after the code is that text.
 */
export const MP_ERROR_CODES = [
  /** A number that is not an integer (or is -0, NaN, ±Infinity): the reference refuses floats. */
  'MP_JSON_FLOAT',
  /** Bytes (a typed array or ArrayBuffer) or a Set. */
  'MP_JSON_BYTES_OR_SET',
  /** A Map with a key that is not a string, or an object with symbol keys. */
  'MP_JSON_KEY_NOT_STRING',
  /** A transcript payload that is not an object. */
  'MP_JSON_NOT_OBJECT',
  /** Any other value JSON cannot carry (undefined, a function, a Date, a class instance, …). */
  'MP_JSON_UNSUPPORTED',
  /** An integer given as a number beyond ±(2^53 − 1), which may already have been rounded: use a bigint. */
  'MP_JSON_UNSAFE_INTEGER',
  /** A string (value, key or event type) with an unpaired UTF-16 surrogate, which UTF-8 cannot carry. */
  'MP_JSON_LONE_SURROGATE',
  /** Arrays and objects nested deeper than MAX_JSON_DEPTH (this also ends a cycle). */
  'MP_JSON_TOO_DEEP',
  /**
   * Audit material the reference cannot audit either: it raises there (a missing key, hex that does not
   * parse, a card that does not open) and the game ends without a verdict. The audit has not passed.
   */
  'MP_AUDIT_INPUT',
] as const;

export type MpErrorCode = (typeof MP_ERROR_CODES)[number];

export class MpError extends Error {
  override readonly name = 'MpError';
  constructor(
    readonly code: MpErrorCode,
    /** The message without its code. */
    readonly detail: string,
  ) {
    super(`${code}: ${detail}`);
  }
}
