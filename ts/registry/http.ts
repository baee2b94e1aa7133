/**
 * One signed request to the registry and its answer, treating the server as untrusted: a deadline that
 * covers the whole answer, a cap on its size, strict JSON, no redirects followed (a signed request is
 * for this server only), and every failure a RegistryError with a stable code.
 */
import type { Crypto } from '../crypto/backend.js';
import { toHex } from '../crypto/encoding.js';
import { CryptoError } from '../crypto/errors.js';
import { parseJson } from '../crypto/jcs.js';
import { restHeaders } from './auth.js';
import { RegistryError, sanitize } from './errors.js';

export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;

export interface HttpOptions {
  /** Deadline for one request, connection to last byte. Default 30 s, as the reference. */
  timeoutMs?: number;
  /** Largest answer read, in bytes. Default 1 MiB. */
  maxResponseBytes?: number;
  fetch?: FetchLike;
  /** Unix milliseconds (injectable for tests and vectors). */
  now?: () => number;
  /** 32 lowercase hex; random by default. */
  requestId?: () => string;
}

export interface Answer {
  status: number;
  /** The parsed JSON body, or null for an empty one. */
  body: unknown;
  /** The body as text (empty for none), for callers that must re-read numbers losslessly. */
  text: string;
}

export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_MAX_RESPONSE_BYTES = 1 << 20;

/** The base URL as the reference uses it: http(s), no trailing slash, no query or fragment. */
export function normalizeBaseUrl(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new RegistryError('REGISTRY_BAD_URL', `${JSON.stringify(sanitize(raw, 100))} is not a URL (e.g. http://127.0.0.1:8080)`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new RegistryError('REGISTRY_BAD_URL', `${u.protocol} is not http: or https:`);
  if (u.username || u.password || u.search || u.hash) throw new RegistryError('REGISTRY_BAD_URL', 'the server URL takes no credentials, query or fragment');
  return `${u.origin}${u.pathname}`.replace(/\/+$/, '');
}

const randomRequestId = () => toHex(globalThis.crypto.getRandomValues(new Uint8Array(16)));

async function readCapped(res: Response, max: number): Promise<Uint8Array> {
  const declared = Number(res.headers.get('content-length') ?? NaN);
  if (declared > max) {
    await res.body?.cancel().catch(() => undefined);
    throw new RegistryError('REGISTRY_RESPONSE_TOO_LARGE', `the answer declares ${declared} bytes, more than ${max}`, res.status);
  }
  if (!res.body) return new Uint8Array();
  const reader = res.body.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => undefined);
      throw new RegistryError('REGISTRY_RESPONSE_TOO_LARGE', `the answer exceeds ${max} bytes`, res.status);
    }
    parts.push(value);
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

/** Strict JSON (no duplicate keys, no lone surrogates, bounded depth) or a typed refusal. */
export function parseAnswer(bytes: Uint8Array, status: number): { body: unknown; text: string } {
  if (bytes.byteLength === 0) return { body: null, text: '' };
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new RegistryError('REGISTRY_BAD_RESPONSE', 'the answer is not UTF-8', status);
  }
  try {
    parseJson(text);
  } catch (e) {
    if (e instanceof CryptoError) throw new RegistryError('REGISTRY_BAD_RESPONSE', `the answer is not strict JSON (${e.code})`, status);
    throw e;
  }
  return { body: JSON.parse(text) as unknown, text };
}

/** The server's own words about a refusal, whatever shape its error body has, made safe to print. */
function serverReason(body: unknown): { code?: string; message?: string } {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return {};
  const o = body as Record<string, unknown>;
  const err = o['error'];
  const inner = err !== null && typeof err === 'object' && !Array.isArray(err) ? (err as Record<string, unknown>) : o;
  const code = typeof inner['code'] === 'string' ? sanitize(inner['code'], 64) : undefined;
  const msg = [inner['message'], typeof err === 'string' ? err : undefined, o['detail']].find((v): v is string => typeof v === 'string');
  return { ...(code && { code }), ...(msg !== undefined && { message: sanitize(msg) }) };
}

export interface SignedRequest {
  baseUrl: string;
  seed: Uint8Array;
  crypto: Crypto;
  method: string;
  /** The path as signed, query string included. */
  path: string;
  /** The exact body bytes (empty for none). */
  body: Uint8Array;
  expected: readonly number[];
  opts: HttpOptions;
  maxResponseBytes?: number;
}

export async function signedRequest(r: SignedRequest): Promise<Answer> {
  const { opts } = r;
  const method = r.method.toUpperCase();
  const headers = restHeaders(r.crypto, r.seed, {
    timestamp: Math.floor((opts.now ?? Date.now)() / 1000),
    method,
    path: r.path,
    requestId: (opts.requestId ?? randomRequestId)(),
    body: r.body,
  });
  const doFetch: FetchLike = opts.fetch ?? ((url, init) => fetch(url, init));
  const signal = AbortSignal.timeout(opts.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  const where = `${method} ${r.path.split('?')[0]}`;
  let res: Response;
  let bytes: Uint8Array;
  try {
    res = await doFetch(`${r.baseUrl}${r.path}`, {
      method,
      headers,
      ...(r.body.byteLength > 0 || !['GET', 'HEAD'].includes(method) ? { body: new Uint8Array(r.body) } : {}),
      redirect: 'manual',
      signal,
    });
    bytes = await readCapped(res, r.maxResponseBytes ?? opts.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES);
  } catch (e) {
    if (e instanceof RegistryError) throw e;
    if (signal.aborted)
      throw new RegistryError('REGISTRY_TIMEOUT', `${where}: no complete answer from ${r.baseUrl} within ${opts.timeoutMs ?? DEFAULT_TIMEOUT_MS} ms`);
    const cause = (e as { cause?: { code?: unknown } }).cause;
    const why = typeof cause?.code === 'string' ? cause.code : e instanceof Error ? e.message : String(e);
    throw new RegistryError('REGISTRY_UNREACHABLE', `${where}: cannot reach ${r.baseUrl} (${sanitize(why, 80)})`);
  }
  if (!r.expected.includes(res.status)) {
    let reason: { code?: string; message?: string } = {};
    try {
      reason = serverReason(parseAnswer(bytes, res.status).body);
    } catch {
      // An error page that is not JSON says nothing more than its status.
    }
    const said = reason.code || reason.message ? `: ${[reason.code, reason.message].filter(Boolean).join(' ')}` : '';
    throw new RegistryError(`REGISTRY_HTTP_${res.status}`, `${where} answered HTTP ${res.status}${said}`, res.status, reason.code);
  }
  return { status: res.status, ...parseAnswer(bytes, res.status) };
}
