/**
 * Invitations (NOTES A8): a registered host posts one with its transport binding signed; anyone signed
 * can read and browse; only the host renews or cancels. A post whose binding does not verify under the
 * caller's key is refused here, so a guest never reads an invitation that names a ticket its host did
 * not sign. An invitation leaves browse when it expires (not renewed in time), is cancelled, or is
 * paired by a recorded session.
 */
import { randomBytes } from 'node:crypto';
import type { Context, Hono } from 'hono';
import { fromHex, fromUtf8, toBase64Url, fromBase64Url, utf8 } from '../../crypto/encoding.js';
import { transportBindingCanonical } from '../../group/wire.js';
import { requireRegistered } from '../auth.js';
import type { AppEnv, RouteModule, ServerContext } from '../context.js';
import type { Db } from '../db.js';
import { badRequest, conflict, forbidden, notFound } from '../errors.js';
import { HEX128, HEX64, oneOf, optObject, optStr, queryInt, readJsonObject, str, type JsonObject } from '../request.js';

export const INVITATION_TYPES = ['supply', 'demand', 'chat'] as const;
const CONTROL_MODES = ['autonomous', 'hybrid', 'human'] as const;
const MAX_TAGS = 10;
/** What browse accepts as a tag filter (the reference client's own check). */
const TAG_FILTER = /^[A-Za-z0-9_.:-]{1,64}$/;
const POST_ID = /^[0-9a-f]{32}$/;
const MAX_TICKET = 4096;
const MAX_OPTIONS_BYTES = 8192;
const MAX_BROWSE = 100;

export interface InvitationRow {
  post_id: string;
  public_key: string;
  type: string;
  message: string;
  tags: string[];
  protocol_id: string;
  host_control_mode: string;
  transport: string;
  iroh_ticket: string;
  transport_info: JsonObject;
  transport_binding_signature: string;
  options: JsonObject | null;
  status: string;
  created_at: number;
  expires_at: number;
  nickname: string | null;
  agent_id: string | null;
}

const SELECT = `SELECT i.*, a.nickname, a.agent_id FROM invitations i LEFT JOIN agents a ON a.public_key = i.public_key`;

export async function loadInvitation(db: Db, postId: string): Promise<InvitationRow | undefined> {
  if (!POST_ID.test(postId)) return undefined;
  const [row] = await db.query<InvitationRow>(`${SELECT} WHERE i.post_id = $1`, [postId]);
  return row;
}

/** `active` turns into `expired` once its time is up; the stored status changes only on events. */
export function effectiveStatus(row: Pick<InvitationRow, 'status' | 'expires_at'>, now: number): string {
  return row.status === 'active' && row.expires_at <= now ? 'expired' : row.status;
}

function project(row: InvitationRow, now: number): JsonObject {
  const out: JsonObject = {
    post_id: row.post_id,
    public_key: row.public_key,
    nickname: row.nickname ?? '',
    agent_id: row.agent_id ?? '',
    registered: row.agent_id !== null,
    type: row.type,
    message: row.message,
    tags: row.tags,
    protocol_id: row.protocol_id,
    host_control_mode: row.host_control_mode,
    transport: row.transport,
    iroh_ticket: row.iroh_ticket,
    transport_info: row.transport_info,
    transport_binding_signature: row.transport_binding_signature,
    status: effectiveStatus(row, now),
    created_at: Math.floor(row.created_at / 1000),
    expires_at: Math.floor(row.expires_at / 1000),
  };
  if (row.options !== null) out['options'] = row.options;
  return out;
}

function parseTags(v: unknown): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw badRequest('FIELD_INVALID', 'tags must be an array of strings');
  const tags: string[] = [];
  for (const t of v) {
    if (typeof t !== 'string') throw badRequest('FIELD_INVALID', 'tags must be an array of strings');
    const tag = t.trim();
    if (tag === '') continue;
    if (tag.length > 64 || tag.includes(',') || /[\u0000-\u001f\u007f]/.test(tag))
      throw badRequest('FIELD_INVALID', 'a tag is at most 64 characters, without commas or control characters');
    if (!tags.includes(tag)) tags.push(tag);
  }
  if (tags.length > MAX_TAGS) throw badRequest('FIELD_INVALID', `at most ${MAX_TAGS} tags`);
  return tags;
}

function parseTagFilter(v: string | undefined): string[] {
  if (v === undefined) return [];
  const tags = [
    ...new Set(
      v
        .split(',')
        .map((t) => t.trim())
        .filter((t) => t !== ''),
    ),
  ];
  if (tags.length === 0 || tags.length > MAX_TAGS || !tags.every((t) => TAG_FILTER.test(t))) {
    throw badRequest('QUERY_INVALID', `tags must be 1..${MAX_TAGS} comma-separated tags of A-Za-z0-9_.:-`);
  }
  return tags;
}

interface Cursor {
  createdAt: number;
  postId: string;
}

function encodeCursor(c: Cursor): string {
  return toBase64Url(utf8(`${c.createdAt}.${c.postId}`));
}

function decodeCursor(s: string | undefined): Cursor | undefined {
  if (s === undefined || s === '') return undefined;
  let text: string;
  try {
    text = fromUtf8(fromBase64Url(s));
  } catch {
    throw badRequest('QUERY_INVALID', 'cursor is not one this server issued');
  }
  const m = /^(\d{1,15})\.([0-9a-f]{32})$/.exec(text);
  if (m === null) throw badRequest('QUERY_INVALID', 'cursor is not one this server issued');
  return { createdAt: Number(m[1]), postId: m[2]! };
}

async function ownInvitation(ctx: ServerContext, c: Context<AppEnv>): Promise<InvitationRow> {
  const row = await loadInvitation(ctx.db, c.req.param('post_id') ?? '');
  if (row === undefined) throw notFound('INVITATION_NOT_FOUND', 'no such invitation');
  if (row.public_key !== c.get('publicKey')) throw forbidden('NOT_OWNER', 'only the host that posted this invitation may change it');
  return row;
}

function register(app: Hono<AppEnv>, ctx: ServerContext): void {
  const ttlMs = () => ctx.config.invitationTtlSeconds * 1000;

  app.post('/api/v1/invitations', requireRegistered(ctx), async (c) => {
    const b = await readJsonObject(c);
    const publicKey = c.get('publicKey');
    const type = oneOf(b, 'type', INVITATION_TYPES, 'supply');
    const message = optStr(b, 'message', { max: 512 }, '');
    const tags = parseTags(b['tags']);
    const protocolId = str(b, 'protocol_id', { max: 64, pattern: HEX64 });
    const controlMode = oneOf(b, 'host_control_mode', CONTROL_MODES, 'hybrid');
    const transport = optStr(b, 'transport', { min: 1, max: 32, pattern: /^[a-z0-9_-]+$/ }, 'iroh');
    const info = optObject(b, 'transport_info', MAX_TICKET * 2) ?? {};
    const infoTicket = info['ticket'];
    if (infoTicket !== undefined && (typeof infoTicket !== 'string' || infoTicket.length > MAX_TICKET))
      throw badRequest('FIELD_INVALID', 'transport_info.ticket must be a string');
    const ticket = optStr(b, 'iroh_ticket', { max: MAX_TICKET }, typeof infoTicket === 'string' ? infoTicket : '');
    if (ticket === '') throw badRequest('FIELD_MISSING', 'iroh_ticket (or transport_info.ticket) is required');
    // Guests read transport_info.ticket first: both must name the ticket the binding signs.
    if (typeof infoTicket === 'string' && infoTicket !== ticket) throw badRequest('TICKET_MISMATCH', 'transport_info.ticket differs from iroh_ticket');
    const bindingSig = str(b, 'transport_binding_signature', { max: 128, pattern: HEX128 });
    const binding = transportBindingCanonical(publicKey, transport, ticket, protocolId);
    if (!ctx.crypto.ed25519Verify(fromHex(publicKey), utf8(binding), fromHex(bindingSig))) {
      throw badRequest('BINDING_INVALID', 'transport_binding_signature does not verify for this key, transport, ticket and protocol_id');
    }
    const options = optObject(b, 'options', MAX_OPTIONS_BYTES);
    // Refused when too long rather than cut: a cut can split a surrogate pair, and it changes the client's value.
    const endpointId = typeof info['endpoint_id'] === 'string' ? optStr(info, 'endpoint_id', { min: 1, max: 128 }, publicKey) : publicKey;
    const transportInfo = { version: 1, endpoint_id: endpointId, ticket };

    const postId = randomBytes(16).toString('hex');
    const now = ctx.now();
    const expiresAt = now + ttlMs();
    await ctx.db.query(
      `INSERT INTO invitations (post_id, public_key, type, message, tags, protocol_id, host_control_mode, transport, iroh_ticket,
         transport_info, transport_binding_signature, options, status, created_at, expires_at)
       VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7, $8, $9, $10::jsonb, $11, $12::jsonb, 'active', $13, $14)`,
      [
        postId,
        publicKey,
        type,
        message,
        JSON.stringify(tags),
        protocolId,
        controlMode,
        transport,
        ticket,
        JSON.stringify(transportInfo),
        bindingSig,
        options === null ? null : JSON.stringify(options),
        now,
        expiresAt,
      ],
    );
    ctx.log.info('invitation_posted', { post_id: postId, public_key: publicKey, protocol_id: protocolId });
    return c.json({ post_id: postId, status: 'active', expires_at: Math.floor(expiresAt / 1000) }, 201);
  });

  app.get('/api/v1/invitations', async (c) => {
    const protocolId = c.req.query('protocol_id');
    if (protocolId !== undefined && !HEX64.test(protocolId)) throw badRequest('QUERY_INVALID', 'protocol_id must be 64 lowercase hex characters');
    const type = c.req.query('type');
    if (type !== undefined && !(INVITATION_TYPES as readonly string[]).includes(type))
      throw badRequest('QUERY_INVALID', `type must be one of ${INVITATION_TYPES.join(', ')}`);
    const tags = parseTagFilter(c.req.query('tags'));
    const limit = queryInt(c.req.query('limit'), 'limit', 20, 1, MAX_BROWSE);
    const cursor = decodeCursor(c.req.query('cursor'));

    const now = ctx.now();
    const where = [`i.status = 'active'`, 'i.expires_at > $1'];
    const params: unknown[] = [now];
    const add = (sql: (n: string) => string, v: unknown) => {
      params.push(v);
      where.push(sql(`$${params.length}`));
    };
    if (protocolId !== undefined) add((p) => `i.protocol_id = ${p}`, protocolId);
    if (type !== undefined) add((p) => `i.type = ${p}`, type);
    if (tags.length > 0) add((p) => `i.tags @> ${p}::jsonb`, JSON.stringify(tags));
    const filtered = where.join(' AND ');
    const countParams = [...params];
    if (cursor !== undefined) {
      params.push(cursor.createdAt, cursor.postId);
      where.push(`(i.created_at, i.post_id) < ($${params.length - 1}, $${params.length})`);
    }
    params.push(limit + 1);
    const rows = await ctx.db.query<InvitationRow>(
      `${SELECT} WHERE ${where.join(' AND ')} ORDER BY i.created_at DESC, i.post_id DESC LIMIT $${params.length}`,
      params,
    );
    const [count] = await ctx.db.query<{ n: number }>(`SELECT count(*) AS n FROM invitations i WHERE ${filtered}`, countParams);
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return c.json({
      results: page.map((r) => project(r, now)),
      total: count?.n ?? page.length,
      next_cursor: rows.length > limit && last !== undefined ? encodeCursor({ createdAt: last.created_at, postId: last.post_id }) : null,
    });
  });

  app.get('/api/v1/invitations/:post_id', async (c) => {
    const row = await loadInvitation(ctx.db, c.req.param('post_id'));
    if (row === undefined) throw notFound('INVITATION_NOT_FOUND', 'no such invitation');
    return c.json(project(row, ctx.now()));
  });

  app.post('/api/v1/invitations/:post_id/renew', requireRegistered(ctx), async (c) => {
    const row = await ownInvitation(ctx, c);
    const now = ctx.now();
    const status = effectiveStatus(row, now);
    if (status !== 'active') throw conflict('INVITATION_NOT_ACTIVE', `the invitation is ${status}; post a new one`);
    const expiresAt = now + ttlMs();
    // Guarded on the stored state, so a renew racing a cancel or a pairing never revives it.
    const updated = await ctx.db.query(
      `UPDATE invitations SET expires_at = $2 WHERE post_id = $1 AND status = 'active' AND expires_at > $3 RETURNING post_id`,
      [row.post_id, expiresAt, now],
    );
    if (updated.length === 0) throw conflict('INVITATION_NOT_ACTIVE', 'the invitation is no longer active');
    return c.json({ post_id: row.post_id, status: 'active', expires_at: Math.floor(expiresAt / 1000) });
  });

  app.delete('/api/v1/invitations/:post_id', requireRegistered(ctx), async (c) => {
    const row = await ownInvitation(ctx, c);
    if (row.status !== 'active' && row.status !== 'cancelled') throw conflict('INVITATION_NOT_ACTIVE', `the invitation is ${row.status}`);
    await ctx.db.query(`UPDATE invitations SET status = 'cancelled' WHERE post_id = $1 AND status = 'active'`, [row.post_id]);
    ctx.log.info('invitation_cancelled', { post_id: row.post_id });
    return c.body(null, 204);
  });
}

export const invitationRoutes: RouteModule = {
  name: 'invitations',
  migrations: [
    {
      id: 'invitations/001',
      sql: `
CREATE TABLE invitations (
  post_id text PRIMARY KEY,
  public_key text NOT NULL REFERENCES agents (public_key),
  type text NOT NULL,
  message text NOT NULL,
  tags jsonb NOT NULL,
  protocol_id text NOT NULL,
  host_control_mode text NOT NULL,
  transport text NOT NULL,
  iroh_ticket text NOT NULL,
  transport_info jsonb NOT NULL,
  transport_binding_signature text NOT NULL,
  options jsonb,
  status text NOT NULL,
  created_at bigint NOT NULL,
  expires_at bigint NOT NULL
);
CREATE INDEX invitations_browse ON invitations (created_at DESC, post_id DESC) WHERE status = 'active';
CREATE INDEX invitations_protocol ON invitations (protocol_id, type, created_at DESC) WHERE status = 'active';
CREATE INDEX invitations_expires ON invitations (expires_at);
CREATE INDEX invitations_tags ON invitations USING gin (tags jsonb_path_ops);
CREATE INDEX invitations_owner ON invitations (public_key);
`,
    },
  ],
  register,
};
