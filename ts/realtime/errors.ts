/**
 * Typed errors of the authoritative_realtime layer. Where the reference raises a ValueError with a
 * fixed text that a peer or a report can observe, the message is that text.
 */
export const REALTIME_ERROR_CODES = [
  /** NaN or ±Infinity: the reference's canonical JSON refuses them (allow_nan=False). */
  'RT_JSON_NOT_FINITE',
  /** undefined, a function, a Map, a class instance…: nothing JSON carries. */
  'RT_JSON_UNSUPPORTED',
  /** A string with an unpaired UTF-16 surrogate, which UTF-8 cannot carry. */
  'RT_JSON_LONE_SURROGATE',
  /** Nesting deeper than MAX_RT_DEPTH (this also ends a cycle). */
  'RT_JSON_TOO_DEEP',
  /** Text that is not strict JSON. */
  'RT_JSON_SYNTAX',
  /** A protocol bundle with no file the ruleset hash covers. */
  'RT_RULESET_EMPTY',
  /** Two files of a bundle with the same path. */
  'RT_RULESET_DUPLICATE',
  /** A protocol folder that is missing, not a folder, unreadable or too large. */
  'RT_RULESET_UNREADABLE',
  /** spec.flow.realtime missing a field or holding one that is not an integer where one is needed. */
  'RT_CONFIG',
] as const;

export type RealtimeErrorCode = (typeof REALTIME_ERROR_CODES)[number];

export class RealtimeError extends Error {
  constructor(
    readonly code: RealtimeErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'RealtimeError';
  }
}
