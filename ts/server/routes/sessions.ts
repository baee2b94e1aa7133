/**
 * Session records (NOTES A7). A participant posts the SessionProof; the server recomputes
 * session_id = sha256(post_id:host:guest:protocol_id:nonce), checks both Ed25519 signatures over that
 * canonical and that the host is the invitation's host, then pairs the invitation. Posting the same
 * proof again answers the same record (201), so a retried request is harmless. Afterwards only the two
 * participants may close the session (once: 409 when already final) and each may report the result
 * once.
 */
import type { Context, Hono } from 'hono';
import { fromHex, utf8 } from '../../crypto/encoding.js';
import type { SessionProof } from '../../registry/client.js';
import { sessionCanonical, sessionId } from '../../engine/frame.js';
import { requireRegistered } from '../auth.js';
import type { AppEnv, RouteModule, ServerContext } from '../context.js';
import { badRequest, conflict, forbidden, notFound } from '../errors.js';
import { HEX128, HEX64, oneOf, optStr, readJsonObject, str, type JsonObject } from '../request.js';
import { loadInvitation } from './invitations.js';

const FINAL_STATUSES = ['closed', 'failed', 'cancelled'] as const;
const WINNERS = ['host', 'guest', 'draw'] as const;

/** The stored proof (the wire type) and what happened to the session since. */
interface SessionRow extends SessionProof {
  session_id: string;
  status: string;
  winner: string | null;
  host_result: string | null;
  guest_result: string | null;
  created_at: number;
  closed_at: number | null;
}

function project(s: SessionRow): JsonObject {
  const agreed = s.host_result !== null && s.host_result === s.guest_result ? s.host_result : null;
  return {
    session_id: s.session_id,
    post_id: s.post_id,
    host_public_key: s.host_public_key,
    guest_public_key: s.guest_public_key,
    protocol_id: s.protocol_id,
    session_nonce: s.session_nonce,
    host_signature: s.host_signature,
    guest_signature: s.guest_signature,
    status: s.status,
    winner: s.winner,
    host_result: s.host_result,
    guest_result: s.guest_result,
    result: agreed,
    created_at: Math.floor(s.created_at / 1000),
    closed_at: s.closed_at === null ? null : Math.floor(s.closed_at / 1000),
  };
}

async function participantSession(ctx: ServerContext, c: Context<AppEnv>): Promise<{ session: SessionRow; role: 'host' | 'guest' }> {
  const id = c.req.param('session_id') ?? '';
  const [session] = HEX64.test(id) ? await ctx.db.query<SessionRow>('SELECT * FROM sessions WHERE session_id = $1', [id]) : [];
  if (session === undefined) throw notFound('SESSION_NOT_FOUND', 'no such session');
  const caller = c.get('publicKey');
  if (caller === session.host_public_key) return { session, role: 'host' };
  if (caller === session.guest_public_key) return { session, role: 'guest' };
  throw forbidden('NOT_PARTICIPANT', 'only the host and the guest of this session may do this');
}

function register(app: Hono<AppEnv>, ctx: ServerContext): void {
  app.post('/api/v1/sessions', requireRegistered(ctx), async (c) => {
    const b = await readJsonObject(c);
    const postId = str(b, 'post_id', { min: 1, max: 128 });
    const host = str(b, 'host_public_key', { max: 64, pattern: HEX64 });
    const guest = str(b, 'guest_public_key', { max: 64, pattern: HEX64 });
    const protocolId = optStr(b, 'protocol_id', { max: 64, pattern: /^(|[0-9a-f]{64})$/ }, '');
    const nonce = str(b, 'session_nonce', { max: 64, pattern: /^[0-9a-f]{16,64}$/ });
    const hostSig = str(b, 'host_signature', { max: 128, pattern: HEX128 });
    const guestSig = str(b, 'guest_signature', { max: 128, pattern: HEX128 });
    if (host === guest) throw badRequest('SAME_PARTICIPANT', 'host and guest must be different keys');
    const caller = c.get('publicKey');
    if (caller !== host && caller !== guest) throw forbidden('NOT_PARTICIPANT', 'only the host or the guest may record their session');

    const id = sessionId(ctx.crypto, postId, protocolId, host, guest, nonce);
    const claimed = b['session_id'];
    if (claimed !== undefined && claimed !== id) throw badRequest('SESSION_ID_MISMATCH', 'session_id is not sha256 of post_id:host:guest:protocol_id:nonce');
    const canonical = utf8(sessionCanonical(postId, protocolId, host, guest, nonce));
    if (!ctx.crypto.ed25519Verify(fromHex(host), canonical, fromHex(hostSig)))
      throw badRequest('HOST_SIGNATURE_INVALID', 'host_signature does not verify over the session canonical');
    if (!ctx.crypto.ed25519Verify(fromHex(guest), canonical, fromHex(guestSig)))
      throw badRequest('GUEST_SIGNATURE_INVALID', 'guest_signature does not verify over the session canonical');

    const inv = await loadInvitation(ctx.db, postId);
    if (inv === undefined) throw notFound('INVITATION_NOT_FOUND', 'no such invitation');
    if (inv.public_key !== host) throw badRequest('HOST_MISMATCH', "host_public_key is not the invitation's host");
    if (inv.protocol_id !== protocolId) throw badRequest('PROTOCOL_MISMATCH', "protocol_id is not the invitation's protocol");

    const now = ctx.now();
    const session = await ctx.db.transaction(async (tx) => {
      // The row lock orders concurrent proofs for one invitation: exactly one pairs it.
      const [locked] = await tx.query<{ status: string }>('SELECT status FROM invitations WHERE post_id = $1 FOR UPDATE', [postId]);
      const [existing] = await tx.query<SessionRow>('SELECT * FROM sessions WHERE session_id = $1', [id]);
      if (existing !== undefined) return existing;
      if (locked?.status === 'paired' || locked?.status === 'closed')
        throw conflict('INVITATION_ALREADY_PAIRED', 'another session already took this invitation');
      if (locked?.status !== 'active') throw conflict('INVITATION_NOT_ACTIVE', `the invitation is ${locked?.status ?? 'gone'}`);
      const [row] = await tx.query<SessionRow>(
        `INSERT INTO sessions (session_id, post_id, host_public_key, guest_public_key, protocol_id, session_nonce, host_signature, guest_signature, status, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'matched', $9) RETURNING *`,
        [id, postId, host, guest, protocolId, nonce, hostSig, guestSig, now],
      );
      await tx.query(`UPDATE invitations SET status = 'paired' WHERE post_id = $1`, [postId]);
      ctx.log.info('session_recorded', { session_id: id, post_id: postId });
      return row!;
    });
    return c.json(project(session), 201);
  });

  app.get('/api/v1/sessions/:session_id', async (c) => {
    const id = c.req.param('session_id');
    const [session] = HEX64.test(id) ? await ctx.db.query<SessionRow>('SELECT * FROM sessions WHERE session_id = $1', [id]) : [];
    if (session === undefined) throw notFound('SESSION_NOT_FOUND', 'no such session');
    return c.json(project(session));
  });

  app.post('/api/v1/sessions/:session_id/status', requireRegistered(ctx), async (c) => {
    const { session } = await participantSession(ctx, c);
    const b = await readJsonObject(c);
    const status = oneOf(b, 'status', FINAL_STATUSES);
    const winner = b['winner'] === undefined || b['winner'] === null ? null : oneOf(b, 'winner', WINNERS);
    const now = ctx.now();
    const updated = await ctx.db.transaction(async (tx) => {
      const [row] = await tx.query<SessionRow>(
        `UPDATE sessions SET status = $2, winner = $3, closed_at = $4 WHERE session_id = $1 AND status = 'matched' RETURNING *`,
        [session.session_id, status, winner, now],
      );
      if (row === undefined) return undefined;
      await tx.query(`UPDATE invitations SET status = 'closed' WHERE post_id = $1 AND status = 'paired'`, [session.post_id]);
      return row;
    });
    if (updated === undefined) throw conflict('SESSION_FINAL', 'the session is already closed');
    return c.json(project(updated));
  });

  app.post('/api/v1/sessions/:session_id/result', requireRegistered(ctx), async (c) => {
    const { session, role } = await participantSession(ctx, c);
    const b = await readJsonObject(c);
    const winner = oneOf(b, 'winner', WINNERS);
    const column = role === 'host' ? 'host_result' : 'guest_result';
    const [row] = await ctx.db.query<SessionRow>(`UPDATE sessions SET ${column} = $2 WHERE session_id = $1 AND ${column} IS NULL RETURNING *`, [
      session.session_id,
      winner,
    ]);
    if (row === undefined) throw conflict('RESULT_ALREADY_REPORTED', `the ${role} already reported this session's result`);
    return c.json(project(row));
  });
}

export const sessionRoutes: RouteModule = {
  name: 'sessions',
  migrations: [
    {
      id: 'sessions/001',
      sql: `
CREATE TABLE sessions (
  session_id text PRIMARY KEY,
  post_id text NOT NULL REFERENCES invitations (post_id),
  host_public_key text NOT NULL,
  guest_public_key text NOT NULL,
  protocol_id text NOT NULL,
  session_nonce text NOT NULL,
  host_signature text NOT NULL,
  guest_signature text NOT NULL,
  status text NOT NULL,
  winner text,
  host_result text,
  guest_result text,
  created_at bigint NOT NULL,
  closed_at bigint
);
CREATE INDEX sessions_post ON sessions (post_id);
CREATE INDEX sessions_host ON sessions (host_public_key);
CREATE INDEX sessions_guest ON sessions (guest_public_key);
`,
    },
  ],
  register,
};
