/**
 * A small registry for the client's tests, on a real socket: it checks every request the way a registry
 * must (signed headers over the exact bytes received, timestamp window, request ids not reused, proof of
 * work and registration signature, protocol_id recomputed), so a client that signs the wrong bytes fails
 * here. `lie` makes it answer as a hostile server would, to test what the client refuses.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Crypto } from '../../ts/crypto/backend.js';
import { fromHex, toHex, utf8 } from '../../ts/crypto/encoding.js';
import { Entries } from '../../ts/crypto/jcs.js';
import { sessionId } from '../../ts/engine/frame.js';
import { registrationProofString, restSignedBytes } from '../../ts/registry/auth.js';
import { compactJson, member, parseTree } from '../../ts/registry/json.js';
import { protocolId } from '../../ts/spec/protocol-id.js';

export interface Lies {
  /** GET /protocols/:id answers this spec text instead of the stored one. */
  protocolSpec?: string;
  /** POST /sessions answers this session_id. */
  sessionId?: string;
  /** GET /inbox/:id answers this ciphertext (base64). */
  ciphertext?: string;
  /** Every answer's body is this text, status 200. */
  body?: string;
  /** Never answer. */
  silent?: boolean;
}

interface Stored {
  recipient: string;
  ciphertext: string;
  created_at: string;
  expires_at: string;
}

export class FakeRegistry {
  url = '';
  lie: Lies = {};
  /** Every refusal it made, so a test can assert that none happened. */
  readonly refusals: string[] = [];
  readonly registered = new Map<string, string>();
  readonly invitations = new Map<string, Record<string, unknown>>();
  readonly inbox = new Map<string, Stored>();
  readonly protocols = new Map<string, string>();
  readonly sessions = new Map<string, Record<string, unknown>>();
  private readonly seen = new Set<string>();
  private readonly server: Server;
  private nextId = 1;

  constructor(readonly crypto: Crypto) {
    this.server = createServer((req, res) => void this.handle(req, res));
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    if (this.lie.silent) return;
    const body = new Uint8Array(Buffer.concat(chunks));
    const send = (status: number, v?: unknown) => {
      if (this.lie.body !== undefined) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(this.lie.body);
        return;
      }
      if (status >= 400) this.refusals.push(`${req.method} ${req.url} ${status} ${JSON.stringify(v)}`);
      if (v === undefined) res.writeHead(status).end();
      else res.writeHead(status, { 'content-type': 'application/json' }).end(v instanceof RawBody ? v.text : JSON.stringify(v));
    };
    const caller = this.authenticate(req, body);
    if (typeof caller !== 'string') return send(401, { error: { code: caller.code, message: caller.code } });
    try {
      this.route(req.method ?? '', req.url ?? '', caller, body, send);
    } catch (e) {
      send(400, { error: { code: 'BAD_REQUEST', message: (e as Error).message } });
    }
  }

  private authenticate(req: IncomingMessage, body: Uint8Array): string | { code: string } {
    const h = (n: string) => req.headers[n.toLowerCase()] as string | undefined;
    const pk = h('X-Public-Key');
    const sig = h('X-Signature');
    const ts = Number(h('X-Timestamp'));
    const rid = h('X-Request-Id');
    if (!pk || !/^[0-9a-f]{64}$/.test(pk) || !sig || !/^[0-9a-f]{128}$/.test(sig) || !rid || !/^[0-9a-f]{32}$/.test(rid)) return { code: 'AUTH_HEADERS' };
    if (h('Content-Type') !== 'application/json') return { code: 'CONTENT_TYPE' };
    if (!(Math.abs(ts - Date.now() / 1000) <= 300)) return { code: 'STALE_TIMESTAMP' };
    if (this.seen.has(rid)) return { code: 'REPLAYED_REQUEST_ID' };
    const signed = restSignedBytes(ts, req.method ?? '', req.url ?? '', rid, body);
    if (!this.crypto.ed25519Verify(fromHex(pk), signed, fromHex(sig))) return { code: 'BAD_SIGNATURE' };
    this.seen.add(rid);
    return pk;
  }

  private route(method: string, url: string, caller: string, raw: Uint8Array, send: (s: number, v?: unknown) => void): void {
    const [path, qs = ''] = url.split('?') as [string, string?];
    const q = new URLSearchParams(qs);
    const text = new TextDecoder().decode(raw);
    const body = () => JSON.parse(text) as Record<string, unknown>;
    const parts = path.split('/').slice(3); // after /api/v1
    const key = `${method} /${parts.map((p, i) => (i === 0 || ['renew', 'status', 'result', 'challenge', 'register'].includes(p) ? p : ':id')).join('/')}`;
    const id = parts[1] ?? '';
    const registeredOnly = () => {
      if (!this.registered.has(caller)) throw new Error('not registered');
    };
    switch (key) {
      case 'GET /auth/challenge':
        return send(200, { nonce: toHex(globalThis.crypto.getRandomValues(new Uint8Array(16))), difficulty: 1 });
      case 'POST /auth/register': {
        const b = body();
        if (b['public_key'] !== caller) return send(400, { error: { code: 'KEY_MISMATCH' } });
        if (!this.crypto.powCheck(String(b['nonce']), caller, Number(b['counter']), 1)) return send(400, { error: { code: 'BAD_POW' } });
        const proof = utf8(registrationProofString(String(b['nonce']), caller, String(b['nickname'])));
        if (!this.crypto.ed25519Verify(fromHex(caller), proof, fromHex(String(b['signature']))))
          return send(400, { error: { code: 'BAD_REGISTRATION_SIGNATURE' } });
        if (this.registered.has(caller)) return send(409, { error: { code: 'ALREADY_REGISTERED' } });
        this.registered.set(caller, String(b['nickname']));
        return send(201, { public_key: caller, nickname: b['nickname'] });
      }
      case 'POST /invitations': {
        registeredOnly();
        const postId = `p${this.nextId++}`;
        this.invitations.set(postId, { post_id: postId, public_key: caller, ...body() });
        return send(201, { post_id: postId });
      }
      case 'GET /invitations': {
        const tags = q.get('tags')?.split(',') ?? [];
        const results = [...this.invitations.values()].filter(
          (i) =>
            (!q.get('protocol_id') || i['protocol_id'] === q.get('protocol_id')) &&
            (!q.get('type') || i['type'] === q.get('type')) &&
            tags.every((t) => (i['tags'] as string[]).includes(t)),
        );
        return send(200, { results: results.slice(0, Number(q.get('limit') ?? 50)), total: results.length });
      }
      case 'GET /invitations/:id':
        return this.invitations.has(id) ? send(200, this.invitations.get(id)) : send(404, { error: { code: 'NOT_FOUND' } });
      case 'DELETE /invitations/:id':
        if (this.invitations.get(id)?.['public_key'] !== caller) return send(404, { error: { code: 'NOT_FOUND' } });
        this.invitations.delete(id);
        return send(204);
      case 'POST /invitations/:id/renew':
        if (text !== '{}') return send(400, { error: { code: 'BAD_BODY' } });
        return this.invitations.get(id)?.['public_key'] === caller ? send(200, { post_id: id }) : send(404, { error: { code: 'NOT_FOUND' } });
      case 'POST /sessions': {
        const b = body() as Record<string, string>;
        const sid = sessionId(this.crypto, b['post_id']!, b['protocol_id']!, b['host_public_key']!, b['guest_public_key']!, b['session_nonce']!);
        this.sessions.set(sid, b);
        return send(201, { session_id: this.lie.sessionId ?? sid });
      }
      case 'POST /sessions/:id/status':
      case 'POST /sessions/:id/result':
        if (!this.sessions.has(id)) return send(404, { error: { code: 'NOT_FOUND' } });
        Object.assign(this.sessions.get(id)!, { [parts[2]!]: body() });
        return send(200, { ok: true });
      case 'POST /inbox': {
        registeredOnly();
        const b = body() as Record<string, string>;
        const msgId = `m${this.nextId++}`;
        this.inbox.set(msgId, {
          recipient: b['recipient_public_key']!,
          ciphertext: b['ciphertext']!,
          created_at: new Date().toISOString(),
          expires_at: new Date(Date.now() + 7 * 86400_000).toISOString(),
        });
        return send(201, { id: msgId, expires_at: this.inbox.get(msgId)!.expires_at });
      }
      case 'GET /inbox': {
        const entries = [...this.inbox.entries()]
          .filter(([, m]) => m.recipient === caller)
          .map(([mid, m]) => ({ id: mid, size: Buffer.from(m.ciphertext, 'base64').length, created_at: m.created_at, expires_at: m.expires_at }));
        return send(200, { entries, next_cursor: null });
      }
      case 'GET /inbox/:id': {
        const m = this.inbox.get(id);
        if (!m || m.recipient !== caller) return send(404, { error: { code: 'NOT_FOUND' } });
        return send(200, { id, ciphertext: this.lie.ciphertext ?? m.ciphertext });
      }
      case 'DELETE /inbox/:id': {
        const m = this.inbox.get(id);
        if (!m || m.recipient !== caller) return send(404, { error: { code: 'NOT_FOUND' } });
        this.inbox.delete(id);
        return send(200, { deleted: true });
      }
      case 'POST /protocols': {
        registeredOnly();
        const tree = parseTree(text);
        const spec = member(tree, 'spec_json');
        if (!(spec instanceof Entries)) return send(400, { error: { code: 'NO_SPEC' } });
        const specText = compactJson(spec);
        const pid = protocolId(this.crypto, specText);
        if (member(tree, 'protocol_id') !== pid) return send(400, { error: { code: 'PROTOCOL_ID_MISMATCH' } });
        if (this.protocols.has(pid)) return send(409, { error: { code: 'ALREADY_REGISTERED' } });
        this.protocols.set(pid, specText);
        return send(201, { protocol_id: pid });
      }
      case 'GET /protocols': {
        const results = [...this.protocols.entries()].reverse().map(([pid, s]) => {
          const spec = JSON.parse(s) as Record<string, unknown>;
          return { protocol_id: pid, name: spec['name'], description: spec['description'] };
        });
        return send(200, { results, next_cursor: null });
      }
      case 'GET /protocols/:id': {
        const s = this.protocols.get(id);
        if (s === undefined) return send(404, { error: { code: 'NOT_FOUND' } });
        // The spec is spliced in as stored so its number literals reach the client unchanged.
        return send(200, new RawBody(`{"protocol_id":${JSON.stringify(id)},"spec_json":${this.lie.protocolSpec ?? s}}`));
      }
      default:
        return send(404, { error: { code: 'NO_ROUTE', message: key } });
    }
  }
}

/** A body already serialised, sent verbatim. */
class RawBody {
  constructor(readonly text: string) {}
}
