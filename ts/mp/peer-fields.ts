/**
 * Reading the fields of a peer's message. Whatever the game cannot go on with (a field of the wrong
 * type, JSON or hex that does not parse, a key the crypto refuses) is the peer's fault and ends the
 * game as `bad_peer_material`.
 */
import { fromHex } from '../crypto/encoding.js';
import { CryptoError } from '../crypto/errors.js';
import { intFromHex } from '../crypto/ot.js';
import type { Message } from '../hooks/types.js';
import { parseJsonExact, type JsonObject, type JsonValue } from './canonical.js';
import { Stop } from './game.js';

export const bad = (detail: string) => new Stop('bad_peer_material', detail);

export function str(m: Message, field: string): string {
  const v = m[field];
  if (typeof v !== 'string') throw bad(`${m.action}.${field} is not a string`);
  return v;
}

export function list(m: Message, field: string): readonly unknown[] {
  const v = m[field];
  if (!Array.isArray(v)) throw bad(`${m.action}.${field} is not a list`);
  return v;
}

export function int(m: Message, field: string): number {
  const v = m[field];
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw bad(`${m.action}.${field} is not an integer`);
  return v;
}

export function parse(text: unknown, what: string): JsonValue {
  if (typeof text !== 'string') throw bad(`${what} is not a string`);
  try {
    return parseJsonExact(text);
  } catch (e) {
    throw bad(`${what} is not JSON: ${(e as Error).message}`);
  }
}

export function object(v: JsonValue, what: string): JsonObject {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw bad(`${what} is not an object`);
  return v as JsonObject;
}

/** A 2048-bit integer as the wire writes it (hex, the reference reads it with int(s, 16)). */
export function wireInt(m: Message, field: string): Uint8Array {
  const s = str(m, field);
  try {
    return intFromHex(s);
  } catch {
    throw bad(`${m.action}.${field} is not a hex integer of at most 2048 bits`);
  }
}

export function hexBytes(s: string, what: string): Uint8Array {
  if (s.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(s)) throw bad(`${what} is not hex`);
  return fromHex(s.toLowerCase());
}

/** Runs crypto on peer material: a CryptoError is the peer's fault. */
export function peerCrypto<T>(what: string, f: () => T): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof CryptoError) throw bad(`${what}: ${e.message}`);
    throw e;
  }
}
