/**
 * Typed errors of the authoritative_group wire layer. Where the reference raises with a fixed text a
 * peer can observe (an `{_group: "error", reason}` frame, a replica's refusal), the message is that text.
 */
export const GROUP_ERROR_CODES = [
  /** A non-integer number, NaN or ±Infinity: group state is integers only. */
  'GROUP_JSON_FLOAT',
  /** An integer given as a number beyond ±(2^53 − 1), which may already have been rounded; give it as a bigint. */
  'GROUP_JSON_UNSAFE_INTEGER',
  /** Nesting deeper than MAX_GROUP_JSON_DEPTH (this also ends a cycle). */
  'GROUP_JSON_TOO_DEEP',
  /** An array or object with more than MAX_GROUP_CONTAINER_ITEMS items. */
  'GROUP_JSON_TOO_MANY_ITEMS',
  /** A string (value or key) longer than MAX_GROUP_STRING_BYTES of UTF-8. */
  'GROUP_JSON_STRING_TOO_LONG',
  /** A mapping with a key that is not a string. */
  'GROUP_JSON_KEY_NOT_STRING',
  /** A string with an unpaired UTF-16 surrogate, which UTF-8 cannot carry. */
  'GROUP_JSON_LONE_SURROGATE',
  /** undefined, a function, a class instance…: nothing JSON carries. */
  'GROUP_JSON_UNSUPPORTED',
  /** Text that is not strict JSON. */
  'GROUP_JSON_SYNTAX',
  /** A JSON delta that is not an array, or has more than MAX_DELTA_OPS operations. */
  'DELTA_NOT_ARRAY',
  'DELTA_TOO_MANY_OPS',
  /** An operation that is not an object, or whose `op` is none of set / remove / splice. */
  'DELTA_OP_NOT_OBJECT',
  'DELTA_OP_UNKNOWN',
  /** An operation with fields other than its kind's (or, for remove, one on the root). */
  'DELTA_SET_FIELDS',
  'DELTA_REMOVE_INVALID',
  'DELTA_SPLICE_FIELDS',
  /** A path that is not an array or is deeper than MAX_DELTA_PATH_DEPTH; a token neither a string nor an index. */
  'DELTA_PATH_INVALID',
  'DELTA_PATH_TOKEN',
  /** A path through a missing key, past an array's end, or through the wrong kind of container. */
  'DELTA_PATH_MISSING',
  'DELTA_PATH_OUT_OF_BOUNDS',
  'DELTA_PATH_TYPE',
  /** The last step of a set / remove names nothing that can be set or removed. */
  'DELTA_SET_TARGET',
  'DELTA_REMOVE_TARGET',
  /** A splice on something other than an array, or with an index / delete count outside it. */
  'DELTA_SPLICE_TARGET',
  'DELTA_SPLICE_BOUNDS',
  /** A member record that is not an object, or has a bad key or seat, or repeats a key or seat. */
  'GROUP_MEMBER_NOT_OBJECT',
  'GROUP_MEMBER_KEY',
  'GROUP_MEMBER_SEAT',
  'GROUP_MEMBER_DUPLICATE',
  /** A wire field missing or of the wrong type (the message names it). */
  'GROUP_FIELD',
  /** A join nonce empty or longer than 64 characters; a channel challenge not 32 lowercase hex. */
  'GROUP_JOIN_NONCE',
  'GROUP_CHALLENGE',
  /** A checkpoint's state fields missing, extra or of the wrong kind. */
  'GROUP_CHECKPOINT_STATE',
] as const;

export type GroupErrorCode = (typeof GROUP_ERROR_CODES)[number];

export class GroupError extends Error {
  constructor(
    readonly code: GroupErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'GroupError';
  }
}
