/**
 * The offline mailbox (NOTES A15): the server stores AGBX1 sealed boxes it cannot open, for their
 * recipient only. Listing, reading and deleting are scoped to the caller's own key; another key's
 * message answers 404 exactly like a missing one, so an id never confirms that mail exists.
 * Message ids are the table's sequence numbers because the reference client reads them as integers
 * (its `inbox read ID` refuses anything else); they reveal how much mail the server has stored, nothing more.
 */
import type { Hono } from 'hono';
import { BOX_MAGIC, BOX_MIN_LEN } from '../../crypto/box.js';
import { fromHex } from '../../crypto/encoding.js';
import type { AppEnv, RouteModule, ServerContext } from '../context.js';
import { requireRegistered } from '../auth.js';
import { ApiError, badRequest } from '../errors.js';
import { queryInt, readJsonObject } from '../request.js';
import { iso, pageCursor } from './input.js';

export interface InboxLimits {
  /** Largest ciphertext accepted, in bytes: the reference's ~2 KB (a 256-character message sealed). */
  maxCiphertextBytes: number;
  /** Unexpired messages one recipient may hold; a full mailbox refuses new mail rather than dropping old. */
  maxPerRecipient: number;
  /** How long a message is kept, in ms. */
  ttlMs: number;
}

export const DEFAULT_INBOX_LIMITS: InboxLimits = { maxCiphertextBytes: 2048, maxPerRecipient: 200, ttlMs: 7 * 24 * 3600_000 };

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const MESSAGE_ID = /^[1-9][0-9]{0,14}$/;
const MAGIC = new TextEncoder().encode(BOX_MAGIC);

const notFound = () => new ApiError(404, 'INBOX_NOT_FOUND', 'no such message in your inbox');

function messageId(raw: string | undefined): number {
  if (raw === undefined || !MESSAGE_ID.test(raw)) throw badRequest('ID_INVALID', 'a message id is a positive decimal integer');
  return Number(raw);
}

/** The ciphertext's bytes, refused before storage if it cannot be an AGBX1 box of an allowed size. */
export function decodeBox(value: unknown, maxBytes: number): Uint8Array {
  if (typeof value !== 'string') throw badRequest('FIELD_INVALID', 'ciphertext must be a standard base64 string');
  // Checked on the text first, so an oversize body is never decoded.
  if (value.length > 4 * Math.ceil(maxBytes / 3)) throw new ApiError(413, 'BOX_TOO_LARGE', `ciphertext is over the ${maxBytes}-byte limit`);
  if (!BASE64.test(value)) throw badRequest('BAD_BASE64', 'ciphertext is not standard base64 (RFC 4648, padded)');
  const bytes = new Uint8Array(Buffer.from(value, 'base64'));
  if (bytes.length < BOX_MIN_LEN) throw badRequest('BOX_TOO_SHORT', `ciphertext is ${bytes.length} bytes; an AGBX1 box has at least ${BOX_MIN_LEN}`);
  if (!MAGIC.every((b, i) => bytes[i] === b)) throw badRequest('BOX_BAD_MAGIC', `ciphertext does not start with ${BOX_MAGIC}`);
  if (bytes.length > maxBytes) throw new ApiError(413, 'BOX_TOO_LARGE', `ciphertext is over the ${maxBytes}-byte limit`);
  return bytes;
}

interface EntryRow {
  seq: number;
  size: number;
  created_at: number;
  expires_at: number;
}

const entry = (r: EntryRow) => ({ id: Number(r.seq), size: r.size, created_at: iso(r.created_at), expires_at: iso(r.expires_at) });

export function inboxRoutesWith(overrides: Partial<InboxLimits> = {}): RouteModule {
  const limits: InboxLimits = { ...DEFAULT_INBOX_LIMITS, ...overrides };
  return {
    name: 'inbox',
    migrations: [
      {
        id: 'inbox/001',
        sql: `CREATE TABLE inbox_messages (
  seq BIGSERIAL PRIMARY KEY,
  recipient_public_key TEXT NOT NULL,
  sender_public_key TEXT NOT NULL,
  ciphertext BYTEA NOT NULL,
  size INTEGER NOT NULL,
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL
);
CREATE INDEX inbox_messages_recipient ON inbox_messages (recipient_public_key, seq);
CREATE INDEX inbox_messages_expiry ON inbox_messages (expires_at);`,
      },
    ],
    register(app: Hono<AppEnv>, ctx: ServerContext): void {
      app.post('/api/v1/inbox', requireRegistered(ctx), async (c) => {
        const body = await readJsonObject(c);
        const rawRecipient = body['recipient_public_key'];
        if (typeof rawRecipient !== 'string' || !/^[0-9a-fA-F]{64}$/.test(rawRecipient))
          throw badRequest('FIELD_INVALID', 'recipient_public_key must be 64 hex characters');
        const recipient = rawRecipient.toLowerCase();
        try {
          // Mail to a key that is not an Ed25519 point could never be opened by anyone.
          ctx.crypto.ed25519PublicToX25519(fromHex(recipient));
        } catch {
          throw badRequest('RECIPIENT_INVALID', 'recipient_public_key is not an Ed25519 public key');
        }
        const box = decodeBox(body['ciphertext'], limits.maxCiphertextBytes);
        const now = ctx.now();
        const expiresAt = now + limits.ttlMs;
        // Outside the recipient's lock: sweeping other mailboxes must not hold it.
        await ctx.db.query('DELETE FROM inbox_messages WHERE expires_at <= $1', [now]);
        const id = await ctx.db.transaction(async (tx) => {
          // The cap is a count then an insert; the lock makes the pair atomic per recipient across server processes.
          await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`inbox:${recipient}`]);
          const [row] = await tx.query<{ n: number }>('SELECT count(*) AS n FROM inbox_messages WHERE recipient_public_key = $1 AND expires_at > $2', [
            recipient,
            now,
          ]);
          if (Number(row?.n ?? 0) >= limits.maxPerRecipient)
            throw new ApiError(409, 'MAILBOX_FULL', `the recipient's inbox holds ${limits.maxPerRecipient} messages; try again after they read some`);
          const [inserted] = await tx.query<{ seq: number }>(
            'INSERT INTO inbox_messages (recipient_public_key, sender_public_key, ciphertext, size, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING seq',
            [recipient, c.get('publicKey'), box, box.length, now, expiresAt],
          );
          return Number(inserted?.seq);
        });
        return c.json({ id, recipient_public_key: recipient, size: box.length, created_at: iso(now), expires_at: iso(expiresAt) }, 201);
      });

      app.get('/api/v1/inbox', async (c) => {
        const limit = queryInt(c.req.query('limit'), 'limit', 50, 1, 100);
        const after = pageCursor(c) ?? 0;
        const rows = await ctx.db.query<EntryRow>(
          'SELECT seq, size, created_at, expires_at FROM inbox_messages WHERE recipient_public_key = $1 AND expires_at > $2 AND seq > $3 ORDER BY seq LIMIT $4',
          [c.get('publicKey'), ctx.now(), after, limit + 1],
        );
        const page = rows.slice(0, limit);
        const next = rows.length > limit ? String(page[page.length - 1]!.seq) : null;
        return c.json({ entries: page.map(entry), next_cursor: next });
      });

      app.delete('/api/v1/inbox', async (c) => {
        const [row] = await ctx.db.query<{ n: number }>(
          'WITH gone AS (DELETE FROM inbox_messages WHERE recipient_public_key = $1 RETURNING expires_at) SELECT count(*) FILTER (WHERE expires_at > $2) AS n FROM gone',
          [c.get('publicKey'), ctx.now()],
        );
        return c.json({ deleted: Number(row?.n ?? 0) });
      });

      app.get('/api/v1/inbox/:id', async (c) => {
        const id = messageId(c.req.param('id'));
        const [row] = await ctx.db.query<EntryRow & { ciphertext: Uint8Array }>(
          'SELECT seq, size, created_at, expires_at, ciphertext FROM inbox_messages WHERE seq = $1 AND recipient_public_key = $2 AND expires_at > $3',
          [id, c.get('publicKey'), ctx.now()],
        );
        if (!row) throw notFound();
        return c.json({ ...entry(row), ciphertext: Buffer.from(row.ciphertext).toString('base64') });
      });

      app.delete('/api/v1/inbox/:id', async (c) => {
        const id = messageId(c.req.param('id'));
        const rows = await ctx.db.query('DELETE FROM inbox_messages WHERE seq = $1 AND recipient_public_key = $2 AND expires_at > $3 RETURNING seq', [
          id,
          c.get('publicKey'),
          ctx.now(),
        ]);
        if (rows.length === 0) throw notFound();
        return c.json({ id, deleted: true });
      });
    },
  };
}

export const inboxRoutes = inboxRoutesWith();
