/**
 * Reading what a client sent: the raw path it signed, its address, and JSON bodies checked field by
 * field into typed values, each failure a 400 with a stable code naming the field.
 *
 * Whatever a body or a query carries may end up in PostgreSQL, whose text and jsonb refuse NUL (an
 * error, which used to surface as a 500) and which would store an unpaired surrogate as U+FFFD, and in
 * jsonb, where a number that is not exactly a double would come back as another number. So that no route
 * has to remember this, the readers here refuse all of it for every field at once, before any route
 * sees the value:
 *   BODY_INCOMPLETE                  the body stopped short (the client went away while sending it)
 *   BODY_NOT_UTF8 / BODY_NOT_JSON    the bytes are not UTF-8 / not strict JSON (a repeated key included)
 *   BODY_TOO_DEEP                    arrays and objects nested deeper than MAX_DEPTH (127)
 *   BODY_LONE_SURROGATE              a string or key with an unpaired \ud800-\udfff escape
 *   BODY_NUL_CHARACTER               a string or key containing U+0000
 *   BODY_NUMBER_INEXACT              a number that would come back as another (1e400, 2^53+1, 0.1000000000000000000001)
 *   QUERY_NUL_CHARACTER              a query parameter's name or value containing U+0000 (%00)
 */
import type { Context } from 'hono';
import type { IncomingMessage } from 'node:http';
import { CryptoError } from '../crypto/errors.js';
import { Entries, MAX_DEPTH, parseJson, RawNumber, type JsonNode } from '../crypto/jcs.js';
import type { AppEnv } from './context.js';
import { badRequest, type ApiError } from './errors.js';

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

/**
 * A body that stopped short: the client closed the connection (or broke the chunked encoding) while
 * sending it. Nobody will read the answer; it is a client's failure all the same, not an internal error.
 */
export const bodyIncomplete = (): ApiError => badRequest('BODY_INCOMPLETE', 'the request body ended before it was complete');

/** The request body's bytes, read once (Hono caches them for later readers). */
export async function readBody(c: Context<AppEnv>): Promise<Uint8Array> {
  try {
    return new Uint8Array(await c.req.arrayBuffer());
  } catch {
    throw bodyIncomplete();
  }
}

/** Body bytes as text; bytes that are not UTF-8 are refused rather than replaced. */
export function bodyText(raw: Uint8Array): string {
  try {
    return utf8Strict.decode(raw);
  } catch {
    throw badRequest('BODY_NOT_UTF8', 'request body is not UTF-8');
  }
}

/**
 * Strict parse (the project's one JSON reader, ts/crypto/jcs.ts): number literals kept as written, its
 * refusals turned into typed 400s. Its depth limit keeps every later recursion (ours, JSON.stringify,
 * PostgreSQL's jsonb input) far from a stack overflow.
 */
export function parseBodyJson(text: string): JsonNode {
  try {
    return parseJson(text, { rawNumbers: true });
  } catch (e) {
    if (!(e instanceof CryptoError)) throw e;
    switch (e.code) {
      case 'JSON_TOO_DEEP':
        throw badRequest('BODY_TOO_DEEP', `request body nests arrays and objects deeper than ${MAX_DEPTH} levels`);
      case 'JSON_LONE_SURROGATE':
        throw badRequest('BODY_LONE_SURROGATE', 'request body has a string with an unpaired UTF-16 surrogate');
      case 'JSON_NUMBER_RANGE':
        throw badRequest('BODY_NUMBER_INEXACT', 'request body has a number beyond the range of a double');
      default:
        throw badRequest('BODY_NOT_JSON', `request body is not strict JSON: ${e.message}`);
    }
  }
}

const SIMPLE_KEY = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
/** Where in the body, for messages: `options.list[2]`; odd keys JSON-quoted and cut short. */
const member = (at: string, key: string): string =>
  SIMPLE_KEY.test(key) ? `${at === '' ? '' : `${at}.`}${key}` : `${at}[${JSON.stringify(key.slice(0, 32))}]`;

function plainText(s: string, at: string): string {
  if (s.includes('\u0000')) throw badRequest('BODY_NUL_CHARACTER', `${at} contains a NUL character (U+0000), which the database cannot store`);
  return s;
}

/**
 * A number literal's value in one spelling: significant digits without leading or trailing zeros and a
 * power of ten (`1.50e1` and `15` both give `15e0`), so two literals are equal numbers exactly when
 * their spellings are equal.
 */
function decimalValue(literal: string): string {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(literal);
  if (m === null) return literal;
  const fraction = m[3] ?? '';
  const digits = (m[2]! + fraction).replace(/^0+/, '');
  if (digits === '') return '0';
  const significant = digits.replace(/0+$/, '');
  const exponent = BigInt(m[4] ?? '0') - BigInt(fraction.length) + BigInt(digits.length - significant.length);
  return `${m[1]}${significant}e${exponent}`;
}

/**
 * The literal as a number, if that number is what will be stored and handed back: a double is written
 * out in its shortest spelling (0.1 stays 0.1, 1.0 becomes the same number 1), and that must be the
 * number the client wrote. Anything else would come back as another value: 1e400 as null, 2^53+1 as
 * 2^53, 0.1000000000000000000001 as 0.1.
 */
function exactNumber(literal: string, at: string): number {
  const n = Number(literal);
  if (!Number.isFinite(n) || decimalValue(literal) !== decimalValue(String(n))) {
    throw badRequest(
      'BODY_NUMBER_INEXACT',
      `${at}: ${literal.slice(0, 40)}${literal.length > 40 ? '…' : ''} would be stored as another number (it has no exact double)`,
    );
  }
  return n;
}

/** The parsed tree as plain values, every string, key and number checked on the way. */
function plainValue(n: JsonNode, at: string): unknown {
  if (n instanceof RawNumber) return exactNumber(n.text, at);
  if (typeof n === 'string') return plainText(n, at);
  if (Array.isArray(n)) return n.map((v, i) => plainValue(v, `${at}[${i}]`));
  // fromEntries defines own properties, so a "__proto__" key stays data, as with JSON.parse.
  if (n instanceof Entries) return Object.fromEntries(n.entries.map(([k, v]) => [plainText(k, member(at, k)), plainValue(v, member(at, k))]));
  return n;
}

/** The request body as a JSON object (an empty body counts as `{}`), refused as listed at the top of this file. */
export async function readJsonObject(c: Context<AppEnv>): Promise<JsonObject> {
  const raw = c.get('rawBody') ?? (await readBody(c));
  if (raw.length === 0) return {};
  const root = parseBodyJson(bodyText(raw));
  if (!(root instanceof Entries)) throw badRequest('BODY_NOT_OBJECT', 'request body must be a JSON object');
  return plainValue(root, '') as JsonObject;
}

/** Every query parameter goes to SQL as text or is refused; a NUL anywhere in one is refused for all routes here. */
export function checkQuery(c: Context<AppEnv>): void {
  for (const [name, values] of Object.entries(c.req.queries())) {
    if (name.includes('\u0000') || values.some((v) => v.includes('\u0000'))) {
      throw badRequest('QUERY_NUL_CHARACTER', `query parameter ${JSON.stringify(name.slice(0, 32))} contains a NUL character (%00)`);
    }
  }
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
