/**
 * The protocol registry: specs registered by content address (NOTES A2). The server recomputes
 * protocol_id with the project's own function from the spec as received, so no one can publish a
 * spec under an id it does not hash to, and a fetch returns the spec with its key order and number
 * literals as registered (the fetching client rehashes it and must get the same id).
 */
import type { Hono } from 'hono';
import { Entries, RawNumber, type JsonNode } from '../../crypto/jcs.js';
import { checkSpecText } from '../../spec/check.js';
import type { AppEnv, RouteModule, ServerContext } from '../context.js';
import { requireRegistered } from '../auth.js';
import { ApiError, badRequest } from '../errors.js';
import { bodyText, parseBodyJson, queryInt } from '../request.js';
import { hexParam, iso, pageCursor } from './input.js';

export interface ProtocolLimits {
  /** Largest spec accepted, in UTF-8 bytes of its JSON text. */
  maxSpecBytes: number;
}

export const DEFAULT_PROTOCOL_LIMITS: ProtocolLimits = { maxSpecBytes: 256 * 1024 };

const MAX_NAME = 200;
const MAX_DESCRIPTION = 2000;
const MAX_QUERY = 100;

/** JSON text of a parsed node, keeping entry order and number literals exactly as they were written. */
function nodeText(n: JsonNode): string {
  if (n instanceof RawNumber) return n.text;
  if (n instanceof Entries) return `{${n.entries.map(([k, v]) => `${JSON.stringify(k)}:${nodeText(v)}`).join(',')}}`;
  if (Array.isArray(n)) return `[${n.map(nodeText).join(',')}]`;
  return JSON.stringify(n);
}

const plain = (n: JsonNode | undefined): unknown => (n === undefined ? undefined : JSON.parse(nodeText(n)));

// Listed to other agents' terminals: no control characters, except line breaks and tabs in a description.
const CONTROL = /[\u0000-\u001f\u007f]/;
const CONTROL_BUT_LINES = /[\u0000-\u0008\u000b-\u001f\u007f]/;

function metaString(v: unknown, key: string, max: number, fallback: unknown, def: string, control = CONTROL): string {
  const chosen = v ?? (typeof fallback === 'string' ? fallback : def);
  if (typeof chosen !== 'string' || chosen.length > max) throw badRequest('FIELD_INVALID', `${key} must be a string of at most ${max} characters`);
  if (control.test(chosen)) throw badRequest('FIELD_INVALID', `${key} contains control characters`);
  return chosen;
}

interface Registration {
  protocolId: string;
  name: string;
  description: string;
  type: string;
  family: string | null;
  tags: string[];
  specText: string;
}

/** The registration a body describes, or the typed reason it is refused. */
export function readRegistration(ctx: ServerContext, text: string, limits: ProtocolLimits): Registration {
  if (Buffer.byteLength(text, 'utf8') > limits.maxSpecBytes + 16 * 1024)
    throw new ApiError(413, 'SPEC_TOO_LARGE', `the spec is over the ${limits.maxSpecBytes}-byte limit`);
  // Not readJsonObject: the spec is stored as the text received (a NUL is the escape `\u0000` there,
  // a number its literal), so only what the parser itself refuses is refused here.
  const root = parseBodyJson(text);
  if (!(root instanceof Entries)) throw badRequest('BODY_NOT_OBJECT', 'request body must be a JSON object');
  const field = (k: string) => root.entries.find(([key]) => key === k)?.[1];
  const specNode = field('spec_json');
  // The reference client posts the spec as an object; its fetch also reads a spec sent as JSON text.
  const specText = typeof specNode === 'string' ? specNode : specNode instanceof Entries ? nodeText(specNode) : undefined;
  if (specText === undefined) throw badRequest('FIELD_INVALID', 'spec_json must be the spec.json object');
  if (Buffer.byteLength(specText, 'utf8') > limits.maxSpecBytes)
    throw new ApiError(413, 'SPEC_TOO_LARGE', `the spec is over the ${limits.maxSpecBytes}-byte limit`);
  const checked = checkSpecText(ctx.crypto, specText);
  const firstError = checked.issues.find((i) => i.severity === 'error');
  if (!checked.ok || checked.protocolId === undefined)
    throw badRequest('SPEC_INVALID', firstError ? `${firstError.code} at ${firstError.pointer || '/'}: ${firstError.message}` : 'the spec is not valid');
  const claimed = plain(field('protocol_id'));
  if (claimed !== undefined && claimed !== checked.protocolId)
    throw badRequest('PROTOCOL_ID_MISMATCH', `protocol_id ${String(claimed).slice(0, 64)} is not the spec's; it hashes to ${checked.protocolId}`);
  const spec = checked.spec as unknown as Record<string, unknown>;
  const family = typeof spec['family'] === 'string' && spec['family'].length <= MAX_NAME && !CONTROL.test(spec['family']) ? spec['family'] : null;
  const tags = Array.isArray(spec['tags'])
    ? (spec['tags'] as unknown[]).filter((t): t is string => typeof t === 'string' && t.length <= MAX_NAME && !CONTROL.test(t)).slice(0, 64)
    : [];
  return {
    protocolId: checked.protocolId,
    name: metaString(plain(field('name')), 'name', MAX_NAME, spec['name'], checked.protocolId),
    description: metaString(plain(field('description')), 'description', MAX_DESCRIPTION, spec['description'], '', CONTROL_BUT_LINES),
    type: metaString(plain(field('type')), 'type', 64, spec['type'], 'protocol'),
    family,
    tags,
    specText,
  };
}

interface ProtocolRow {
  seq: number;
  protocol_id: string;
  name: string;
  description: string;
  type: string;
  family: string | null;
  tags: string[];
  publisher_public_key: string;
  created_at: number;
}

const COLUMNS = 'seq, protocol_id, name, description, type, family, tags, publisher_public_key, created_at';

const summary = (r: ProtocolRow) => ({
  protocol_id: r.protocol_id,
  name: r.name,
  description: r.description,
  type: r.type,
  family: r.family,
  tags: r.tags,
  publisher_public_key: r.publisher_public_key,
  created_at: iso(r.created_at),
});

export function protocolRoutesWith(overrides: Partial<ProtocolLimits> = {}): RouteModule {
  const limits: ProtocolLimits = { ...DEFAULT_PROTOCOL_LIMITS, ...overrides };
  return {
    name: 'protocols',
    migrations: [
      {
        id: 'protocols/001',
        sql: `CREATE TABLE protocols (
  seq BIGSERIAL PRIMARY KEY,
  protocol_id TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL,
  description TEXT NOT NULL,
  type TEXT NOT NULL,
  family TEXT,
  tags TEXT[] NOT NULL,
  spec_text TEXT NOT NULL,
  publisher_public_key TEXT NOT NULL,
  created_at BIGINT NOT NULL
);
CREATE INDEX protocols_family ON protocols (family, seq);`,
      },
    ],
    register(app: Hono<AppEnv>, ctx: ServerContext): void {
      app.post('/api/v1/protocols', requireRegistered(ctx), async (c) => {
        const r = readRegistration(ctx, bodyText(c.get('rawBody')), limits);
        const now = ctx.now();
        const rows = await ctx.db.query<ProtocolRow>(
          `INSERT INTO protocols (protocol_id, name, description, type, family, tags, spec_text, publisher_public_key, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (protocol_id) DO NOTHING RETURNING ${COLUMNS}`,
          [r.protocolId, r.name, r.description, r.type, r.family, r.tags, r.specText, c.get('publicKey'), now],
        );
        // Same id means the same contract; the first registration's name and description stay.
        if (rows.length === 0) throw new ApiError(409, 'PROTOCOL_EXISTS', `protocol ${r.protocolId} is already registered`);
        return c.json(summary(rows[0]!), 201);
      });

      app.get('/api/v1/protocols', async (c) => {
        const limit = queryInt(c.req.query('limit'), 'limit', 20, 1, 100);
        const where: string[] = [];
        const params: unknown[] = [];
        const add = (sql: (n: string) => string, v: unknown) => {
          params.push(v);
          where.push(sql(`$${params.length}`));
        };
        const before = pageCursor(c);
        if (before !== undefined) add((p) => `seq < ${p}`, before);
        const q = c.req.query('q');
        if (q) {
          if (q.length > MAX_QUERY) throw badRequest('QUERY_INVALID', `q must be at most ${MAX_QUERY} characters`);
          // strpos, not LIKE: the user's % and _ are plain characters.
          add((p) => `(strpos(lower(name), lower(${p})) > 0 OR strpos(lower(description), lower(${p})) > 0)`, q);
        }
        // A filter longer than any stored value is refused, not cut: cut, it would match another value.
        const filter = (key: string): string | undefined => {
          const v = c.req.query(key);
          if (v !== undefined && v.length > MAX_NAME) throw badRequest('QUERY_INVALID', `${key} must be at most ${MAX_NAME} characters`);
          return v;
        };
        for (const key of ['family', 'type'] as const) {
          const v = filter(key);
          if (v) add((p) => `${key} = ${p}`, v);
        }
        const tag = filter('tag');
        if (tag) add((p) => `${p} = ANY(tags)`, tag);
        params.push(limit + 1);
        const rows = await ctx.db.query<ProtocolRow>(
          `SELECT ${COLUMNS} FROM protocols ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY seq DESC LIMIT $${params.length}`,
          params,
        );
        const page = rows.slice(0, limit);
        return c.json({ results: page.map(summary), next_cursor: rows.length > limit ? String(page[page.length - 1]!.seq) : null });
      });

      app.get('/api/v1/protocols/:id', async (c) => {
        const id = hexParam(c, 'id');
        const [row] = await ctx.db.query<ProtocolRow & { spec_text: string }>(`SELECT ${COLUMNS}, spec_text FROM protocols WHERE protocol_id = $1`, [id]);
        if (!row) throw new ApiError(404, 'PROTOCOL_NOT_FOUND', `protocol ${id} is not registered here`);
        // Spliced as text so the spec's number literals (1.0 stays 1.0) and key order survive.
        const head = JSON.stringify(summary(row));
        return c.body(`${head.slice(0, -1)},"spec_json":${row.spec_text}}`, 200, { 'content-type': 'application/json; charset=utf-8' });
      });

      // The reference client asks for a bundle first and falls back to the plain spec on 404; this
      // server hosts no protocol UI, so it says so in the way that client understands.
      app.get('/api/v1/protocols/:id/bundle', (c) => {
        hexParam(c, 'id');
        throw new ApiError(404, 'BUNDLE_NOT_FOUND', 'this server hosts specs only, no protocol bundles');
      });
      for (const route of ['ui-batch', 'ui-finalize'])
        app.post(`/api/v1/protocols/:id/${route}`, () => {
          throw new ApiError(501, 'UI_NOT_SUPPORTED', 'this server does not host protocol UI bundles');
        });
    },
  };
}

export const protocolRoutes = protocolRoutesWith();
