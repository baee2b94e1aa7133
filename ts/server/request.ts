/**
 * Reading what a client sent: the raw path it signed, its address, and JSON bodies checked field by
 * field into typed values, each failure a 400 with a stable code naming the field.
 */
import type { Context } from 'hono';
import type { IncomingMessage } from 'node:http';
import type { AppEnv } from './context.js';
import { badRequest } from './errors.js';

/** The Node request behind a Hono context, when served by @hono/node-server (absent under app.request). */
function incoming(c: Context<AppEnv>): IncomingMessage | undefined {
  const env: unknown = c.env;
  if (typeof env !== 'object' || env === null || !('incoming' in env)) return undefined;
  return (env as { incoming: IncomingMessage }).incoming;
}

/** Path and query exactly as the client sent them (that is what it signed), not as URL parsing re-encodes them. */
export function signedPath(c: Context<AppEnv>): string {
  const raw = incoming(c)?.url;
  if (raw !== undefined && raw.startsWith('/')) return raw;
  const u = new URL(c.req.url);
  return u.pathname + u.search;
}

export function clientIp(c: Context<AppEnv>, trustProxy = false): string {
  if (trustProxy) {
    const last = c.req.header('x-forwarded-for')?.split(',').pop()?.trim();
    if (last) return last;
  }
  return incoming(c)?.socket.remoteAddress ?? 'local';
}

export type JsonObject = Record<string, unknown>;

const utf8Strict = new TextDecoder('utf-8', { fatal: true });

/** The request body as a JSON object (an empty body counts as `{}`). */
export async function readJsonObject(c: Context<AppEnv>): Promise<JsonObject> {
  const raw = c.get('rawBody') ?? new Uint8Array(await c.req.arrayBuffer());
  if (raw.length === 0) return {};
  let text: string;
  try {
    text = utf8Strict.decode(raw);
  } catch {
    throw badRequest('BODY_NOT_UTF8', 'request body is not UTF-8');
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw badRequest('BODY_NOT_JSON', 'request body is not JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw badRequest('BODY_NOT_OBJECT', 'request body must be a JSON object');
  return value as JsonObject;
}

export const HEX64 = /^[0-9a-f]{64}$/;
export const HEX128 = /^[0-9a-f]{128}$/;
// Control characters in display text are refused: they end up in other agents' terminals.
const CONTROL = /[\u0000-\u001f\u007f]/;

export interface StringRule {
  max: number;
  min?: number;
  pattern?: RegExp;
  /** Refuse control characters (default true). */
  plain?: boolean;
}

function checkString(field: string, v: unknown, rule: StringRule): string {
  if (typeof v !== 'string') throw badRequest('FIELD_INVALID', `${field} must be a string`);
  if (v.length < (rule.min ?? 0) || v.length > rule.max) throw badRequest('FIELD_INVALID', `${field} must be ${rule.min ?? 0}..${rule.max} characters`);
  if (rule.pattern && !rule.pattern.test(v)) throw badRequest('FIELD_INVALID', `${field} has an invalid format`);
  if (rule.plain !== false && CONTROL.test(v)) throw badRequest('FIELD_INVALID', `${field} contains control characters`);
  return v;
}

export function str(o: JsonObject, field: string, rule: StringRule): string {
  if (!(field in o) || o[field] === undefined) throw badRequest('FIELD_MISSING', `${field} is required`);
  return checkString(field, o[field], rule);
}

export function optStr(o: JsonObject, field: string, rule: StringRule, fallback: string): string {
  const v = o[field];
  if (v === undefined || v === null) return fallback;
  return checkString(field, v, rule);
}

export function oneOf<T extends string>(o: JsonObject, field: string, allowed: readonly T[], fallback?: T): T {
  const v = o[field];
  if ((v === undefined || v === null) && fallback !== undefined) return fallback;
  if (typeof v !== 'string' || !(allowed as readonly string[]).includes(v)) throw badRequest('FIELD_INVALID', `${field} must be one of ${allowed.join(', ')}`);
  return v as T;
}

export function optObject(o: JsonObject, field: string, maxJsonBytes: number): JsonObject | null {
  const v = o[field];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'object' || Array.isArray(v)) throw badRequest('FIELD_INVALID', `${field} must be an object`);
  if (Buffer.byteLength(JSON.stringify(v)) > maxJsonBytes) throw badRequest('FIELD_TOO_LARGE', `${field} is larger than ${maxJsonBytes} bytes`);
  return v as JsonObject;
}

/** A non-negative integer query parameter, with bounds. */
export function queryInt(v: string | undefined, field: string, fallback: number, min: number, max: number): number {
  if (v === undefined || v === '') return fallback;
  if (!/^\d{1,9}$/.test(v)) throw badRequest('QUERY_INVALID', `${field} must be an integer`);
  const n = Number(v);
  if (n < min || n > max) throw badRequest('QUERY_INVALID', `${field} must be ${min}..${max}`);
  return n;
}
