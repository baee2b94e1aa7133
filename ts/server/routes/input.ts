/**
 * Input rules the inbox, protocols and groups routes share beyond request.ts: integers, booleans,
 * path ids, keyset cursors, and the ids and times they hand out. Every refusal is a typed 400.
 */
import { randomBytes } from 'node:crypto';
import type { Context } from 'hono';
import type { AppEnv } from '../context.js';
import { badRequest } from '../errors.js';
import { HEX64, type JsonObject } from '../request.js';

export function int(o: JsonObject, field: string, min: number, max: number): number {
  const v = o[field];
  if (v === undefined || v === null) throw badRequest('FIELD_MISSING', `${field} is required`);
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min || v > max)
    throw badRequest('FIELD_INVALID', `${field} must be an integer from ${min} to ${max}`);
  return v;
}

export function bool(o: JsonObject, field: string, fallback: boolean): boolean {
  const v = o[field];
  if (v === undefined || v === null) return fallback;
  if (typeof v !== 'boolean') throw badRequest('FIELD_INVALID', `${field} must be true or false`);
  return v;
}

/** A path parameter naming a row by a 64-hex id; anything else is refused before it reaches SQL. */
export function hexParam(c: Context<AppEnv>, name: string, pattern: RegExp = HEX64): string {
  const v = c.req.param(name) ?? '';
  if (!pattern.test(v)) throw badRequest('ID_INVALID', `${name} has an invalid format`);
  return v;
}

/**
 * A keyset cursor: the last row's sequence number, opaque to the client. Only a positive integer is
 * accepted, so a forged cursor can do no more than start a page elsewhere.
 */
export function pageCursor(c: Context<AppEnv>): number | undefined {
  const raw = c.req.query('cursor');
  if (raw === undefined || raw === '') return undefined;
  if (!/^[1-9][0-9]{0,14}$/.test(raw)) throw badRequest('QUERY_INVALID', 'cursor is not one this server issued');
  return Number(raw);
}

/** Server-issued ids: 16 random bytes as hex, so an id reveals neither a count nor an order. */
export const randomId = (): string => randomBytes(16).toString('hex');

/** Times on these routes are ISO 8601 UTC, which the reference client parses with fromisoformat. */
export const iso = (ms: number): string => new Date(ms).toISOString();
