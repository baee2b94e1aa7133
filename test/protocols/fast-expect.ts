// Assertions for the checks that run at every step of a played game or at every step of a reference
// comparison, thousands of times per file: a plain comparison first, and the vitest assertion (with its
// message and diff) only where that comparison does not already show that the assertion passes. Each is
// the assertion it names, never a weaker one.
import { expect } from 'vitest';
import { MAX_RT_DEPTH, rtCanonical } from '../../ts/realtime/json.js';

/**
 * True only when `a` and `b` are one JSON value (null, booleans, strings, numbers equal by Object.is, arrays
 * and plain objects with the same members, no undefined member on one side only, no symbol keys). Where it
 * holds, `expect(a).toEqual(b)` passes; where it does not, the caller runs the real assertion, so this only
 * skips the work of assertions that pass.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  return same(a, b, Infinity);
}

/**
 * sameJson, and also writable by rtCanonical (no array or object nested 127 deep, no string or key with a
 * surrogate): where it holds, rtCanonical writes `a` and `b` without an error and to the same text.
 */
export function sameCanonicalJson(a: unknown, b: unknown): boolean {
  return same(a, b, MAX_RT_DEPTH);
}

const SURROGATE = /[\ud800-\udfff]/;

/** The walk of both: `room` is how many more levels of arrays and objects rtCanonical writes (Infinity: no such limit, for sameJson). */
function same(a: unknown, b: unknown, room: number): boolean {
  if (typeof a === 'string') return a === b && (room === Infinity || !SURROGATE.test(a));
  if (typeof a !== 'object' || a === null) {
    if (!Object.is(a, b)) return false;
    // One primitive (or function): toEqual passes; rtCanonical writes only null, booleans, finite numbers and bigints.
    return room === Infinity || a === null || typeof a === 'boolean' || typeof a === 'bigint' || (typeof a === 'number' && Number.isFinite(a));
  }
  if (room === Infinity && a === b) return true;
  if (typeof b !== 'object' || b === null || room < 1) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    if (Object.keys(a).length !== a.length || Object.keys(b).length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!same(a[i], b[i], room - 1)) return false;
    return symbolFree(a) && symbolFree(b);
  }
  if (Array.isArray(b)) return false;
  if (Object.getPrototypeOf(a) !== Object.prototype || Object.getPrototypeOf(b) !== Object.prototype) return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) {
    if (!Object.hasOwn(b, k)) return false;
    if (room !== Infinity && SURROGATE.test(k)) return false;
    if (!same((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], room - 1)) return false;
  }
  return symbolFree(a) && symbolFree(b);
}
const symbolFree = (o: object): boolean => Object.getOwnPropertySymbols(o).length === 0;

/** expect(actual, message).toEqual(expected), skipping the assertion's own deep walk when the two are one JSON value. */
export function expectEqual(actual: unknown, expected: unknown, message?: string): void {
  if (!sameJson(actual, expected)) expect(actual, message).toEqual(expected);
}

type Message = string | (() => string) | undefined;
const say = (m: Message): string | undefined => (typeof m === 'function' ? m() : m);

/**
 * expect(rtCanonical(ours), message).toBe(rtCanonical(theirs)), written out only when the two are not one
 * JSON value that rtCanonical writes (one such value has one canonical text); a message given as a
 * function is made only when the assertion runs.
 */
export function expectOursCanonical(ours: unknown, theirs: unknown, message?: Message): void {
  if (!sameCanonicalJson(ours, theirs)) expect(rtCanonical(ours), say(message)).toBe(rtCanonical(theirs));
}

/** expect(rtCanonical(theirs), message).toBe(rtCanonical(ours)), the same way as expectOursCanonical. */
export function expectTheirsCanonical(theirs: unknown, ours: unknown, message?: Message): void {
  if (!sameCanonicalJson(theirs, ours)) expect(rtCanonical(theirs), say(message)).toBe(rtCanonical(ours));
}
