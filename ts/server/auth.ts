/**
 * Request authentication (NOTES A9). Every /api/v1 call except the public ones below carries
 * X-Public-Key, X-Signature, X-Timestamp and X-Request-Id; the signature covers
 * `"{ts}\n{METHOD}\n{path}\n{request_id}\n"` + the raw body bytes. The timestamp must be within the
 * configured window, and a request id is accepted once per key: seen ids live in the database (not in
 * memory) so every server process on one PostgreSQL refuses a replay another one served.
 *
 * Only then is the key's rate limit charged (limits.ts, shared by those processes too): a captured
 * request replayed any number of times is refused as a replay and costs its owner nothing. A request
 * refused with 429 has spent its request id; clients sign every attempt afresh, with a new id.
 *
 * Public (no signature needed): GET /api/v1/version, GET /api/v1/auth/challenge, POST
 * /api/v1/auth/register (the registration carries its own signature and proof of work). The reference
 * client signs those too; the headers are then simply not checked.
 *
 * Signed routes only prove who is calling. Writes that create or change shared state also need the key
 * to be registered (`requireRegistered`); reads need only a valid signature:
 *   signed:              GET /invitations, GET /invitations/{post_id}, GET /sessions/{id}
 *   signed + registered: POST /invitations, POST /invitations/{post_id}/renew (host only),
 *                        DELETE /invitations/{post_id} (host only), POST /sessions (host or guest),
 *                        POST /sessions/{id}/status and /result (participants only)
 * (inbox, protocols and groups say their own rules in their modules).
 */
import type { Context, MiddlewareHandler, Next } from 'hono';
import { restSignedBytes } from '../registry/auth.js';
import { fromHex } from '../crypto/encoding.js';
import type { AppEnv, ServerContext } from './context.js';
import { ApiError, forbidden, unauthorized } from './errors.js';
import { RateLimiter } from './limits.js';
import { HEX128, HEX64, readBody, signedPath } from './request.js';

export const PUBLIC_PATHS: ReadonlySet<string> = new Set(['/api/v1/version', '/api/v1/auth/challenge', '/api/v1/auth/register']);

const REQUEST_ID = /^[0-9a-f]{32}$/;
const TIMESTAMP = /^\d{1,12}$/;
/** Forget expired request ids after this many accepted requests (per process). */
const SWEEP_EVERY = 500;

export function rateLimited(retryAfterSeconds: number, what: string): ApiError {
  return new ApiError(429, 'RATE_LIMITED', `too many requests from this ${what}`, { 'Retry-After': String(retryAfterSeconds) });
}

export function signedHeaders(ctx: ServerContext): MiddlewareHandler<AppEnv> {
  const perKey = new RateLimiter(ctx.db, ctx.config.ratePerKey, ctx.now, 'key');
  let accepted = 0;
  return async (c: Context<AppEnv>, next: Next) => {
    if (PUBLIC_PATHS.has(c.req.path)) return next();
    const publicKey = c.req.header('x-public-key');
    const signature = c.req.header('x-signature');
    const timestamp = c.req.header('x-timestamp');
    const requestId = c.req.header('x-request-id');
    if (publicKey === undefined || signature === undefined || timestamp === undefined || requestId === undefined) {
      throw unauthorized('AUTH_MISSING', 'X-Public-Key, X-Signature, X-Timestamp and X-Request-Id are required');
    }
    if (!HEX64.test(publicKey)) throw unauthorized('AUTH_MALFORMED', 'X-Public-Key must be 64 lowercase hex characters');
    if (!HEX128.test(signature)) throw unauthorized('AUTH_MALFORMED', 'X-Signature must be 128 lowercase hex characters');
    if (!REQUEST_ID.test(requestId)) throw unauthorized('AUTH_MALFORMED', 'X-Request-Id must be 32 lowercase hex characters');
    if (!TIMESTAMP.test(timestamp)) throw unauthorized('AUTH_MALFORMED', 'X-Timestamp must be unix seconds');
    const ts = Number(timestamp);
    const nowMs = ctx.now();
    const windowMs = ctx.config.timestampWindowSeconds * 1000;
    if (Math.abs(ts * 1000 - nowMs) > windowMs)
      throw unauthorized('TIMESTAMP_OUT_OF_WINDOW', `X-Timestamp is more than ${ctx.config.timestampWindowSeconds} s from the server clock`);

    const body = await readBody(c);
    const signed = restSignedBytes(ts, c.req.method, signedPath(c), requestId, body);
    if (!ctx.crypto.ed25519Verify(fromHex(publicKey), signed, fromHex(signature)))
      throw unauthorized('SIGNATURE_INVALID', 'X-Signature does not verify for this request');

    // An id stays remembered until its timestamp could no longer pass the window check.
    const rows = await ctx.db.query(
      'INSERT INTO seen_requests (public_key, request_id, expires_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING 1 AS ok',
      [publicKey, requestId, ts * 1000 + windowMs + 1000],
    );
    if (rows.length === 0) throw unauthorized('REQUEST_REPLAYED', 'this X-Request-Id was already used');
    if (++accepted % SWEEP_EVERY === 0) await ctx.db.query('DELETE FROM seen_requests WHERE expires_at < $1', [nowMs]);

    // Charged only for a request its key signed and never sent before, so nobody else can drain the
    // bucket: not with forged signatures, not by replaying what the key did send.
    const wait = await perKey.take(publicKey);
    if (wait > 0) throw rateLimited(wait, 'key');

    c.set('publicKey', publicKey);
    c.set('requestId', requestId);
    c.set('rawBody', body);
    return next();
  };
}

/** For routes that change shared state: the signed caller must have registered. */
export function requireRegistered(ctx: ServerContext): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const rows = await ctx.db.query('SELECT 1 AS ok FROM agents WHERE public_key = $1', [c.get('publicKey')]);
    if (rows.length === 0) throw forbidden('NOT_REGISTERED', 'register this public key first (POST /api/v1/auth/register)');
    return next();
  };
}

export const AUTH_MIGRATION_SQL = `
CREATE TABLE seen_requests (
  public_key text NOT NULL,
  request_id text NOT NULL,
  expires_at bigint NOT NULL,
  PRIMARY KEY (public_key, request_id)
);
CREATE INDEX seen_requests_expires ON seen_requests (expires_at);
`;
