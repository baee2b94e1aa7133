/**
 * Registration (NOTES A9): GET /api/v1/auth/challenge hands out a random nonce and the difficulty;
 * POST /api/v1/auth/register proves work on it (leading zero bytes of SHA-256(nonce + public_key +
 * counter)) and signs `nonce:public_key:nickname`. A challenge expires and is consumed by the first
 * registration that answers it, so one solved proof cannot register twice.
 */
import { randomBytes } from 'node:crypto';
import type { Hono } from 'hono';
import { registrationProofString } from '../../registry/auth.js';
import { fromHex, utf8 } from '../../crypto/encoding.js';
import { AUTH_MIGRATION_SQL } from '../auth.js';
import { RATE_LIMIT_MIGRATION_SQL } from '../limits.js';
import type { AppEnv, RouteModule, ServerContext } from '../context.js';
import { badRequest, conflict } from '../errors.js';
import { HEX128, HEX64, optStr, readJsonObject, str } from '../request.js';

const SWEEP_EVERY = 200;

function register(app: Hono<AppEnv>, ctx: ServerContext): void {
  let issued = 0;
  app.get('/api/v1/auth/challenge', async (c) => {
    const nonce = randomBytes(16).toString('hex');
    const now = ctx.now();
    const expiresAt = now + ctx.config.challengeTtlSeconds * 1000;
    await ctx.db.query('INSERT INTO auth_challenges (nonce, difficulty, expires_at) VALUES ($1, $2, $3)', [nonce, ctx.config.powDifficulty, expiresAt]);
    if (++issued % SWEEP_EVERY === 0) await ctx.db.query('DELETE FROM auth_challenges WHERE expires_at < $1', [now]);
    return c.json({ nonce, challenge: nonce, difficulty: ctx.config.powDifficulty, expires_at: Math.floor(expiresAt / 1000) });
  });

  app.post('/api/v1/auth/register', async (c) => {
    const b = await readJsonObject(c);
    const publicKey = str(b, 'public_key', { max: 64, pattern: HEX64 });
    const nickname = str(b, 'nickname', { min: 1, max: 64 });
    const bio = optStr(b, 'bio', { max: 500 }, '');
    const nonce = str(b, 'nonce', { min: 1, max: 128 });
    const signature = str(b, 'signature', { max: 128, pattern: HEX128 });
    const counter = b['counter'];
    if (typeof counter !== 'number' || !Number.isSafeInteger(counter) || counter < 0)
      throw badRequest('FIELD_INVALID', 'counter must be a non-negative integer');

    const now = ctx.now();
    const [challenge] = await ctx.db.query<{ difficulty: number; expires_at: number }>('SELECT difficulty, expires_at FROM auth_challenges WHERE nonce = $1', [
      nonce,
    ]);
    if (challenge === undefined) throw badRequest('CHALLENGE_UNKNOWN', 'unknown or already used challenge nonce');
    if (challenge.expires_at < now) throw badRequest('CHALLENGE_EXPIRED', 'the challenge expired; ask for a new one');
    if (!ctx.crypto.powCheck(nonce, publicKey, counter, challenge.difficulty))
      throw badRequest('POW_INVALID', `the proof of work does not reach ${challenge.difficulty} zero bytes`);
    if (!ctx.crypto.ed25519Verify(fromHex(publicKey), utf8(registrationProofString(nonce, publicKey, nickname)), fromHex(signature))) {
      throw badRequest('SIGNATURE_INVALID', 'signature over nonce:public_key:nickname does not verify');
    }

    return ctx.db.transaction(async (tx) => {
      const used = await tx.query('DELETE FROM auth_challenges WHERE nonce = $1 RETURNING nonce', [nonce]);
      if (used.length === 0) throw badRequest('CHALLENGE_UNKNOWN', 'unknown or already used challenge nonce');
      const agentId = `agt_${randomBytes(8).toString('hex')}`;
      const rows = await tx.query(
        'INSERT INTO agents (public_key, agent_id, nickname, bio, registered_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (public_key) DO NOTHING RETURNING agent_id',
        [publicKey, agentId, nickname, bio, now],
      );
      if (rows.length === 0) throw conflict('ALREADY_REGISTERED', 'this public key is already registered');
      ctx.log.info('agent_registered', { public_key: publicKey, agent_id: agentId });
      return c.json({ agent_id: agentId, public_key: publicKey, nickname, bio, registered_at: Math.floor(now / 1000) }, 201);
    });
  });
}

export const authRoutes: RouteModule = {
  name: 'auth',
  migrations: [
    {
      id: 'auth/001',
      sql: `
CREATE TABLE agents (
  public_key text PRIMARY KEY,
  agent_id text NOT NULL UNIQUE,
  nickname text NOT NULL,
  bio text NOT NULL DEFAULT '',
  registered_at bigint NOT NULL
);
CREATE TABLE auth_challenges (
  nonce text PRIMARY KEY,
  difficulty integer NOT NULL,
  expires_at bigint NOT NULL
);
CREATE INDEX auth_challenges_expires ON auth_challenges (expires_at);
${AUTH_MIGRATION_SQL}`,
    },
    // Rate limits apply to every route, but like seen_requests they are the core's: they come with auth.
    { id: 'auth/002', sql: RATE_LIMIT_MIGRATION_SQL },
  ],
  register,
};
