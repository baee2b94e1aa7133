import { randomBytes } from 'node:crypto';
import type { Hono } from 'hono';
import { expect, it } from 'vitest';
import { toHex, utf8 } from '../../ts/crypto/encoding.js';
import { registrationBody, signRegistration } from '../../ts/registry/auth.js';
import { createApp } from '../../ts/server/app.js';
import type { AppEnv, RouteModule } from '../../ts/server/context.js';
import { authRoutes } from '../../ts/server/routes/auth.js';
import { invitationRoutes } from '../../ts/server/routes/invitations.js';
import { miscRoutes } from '../../ts/server/routes/misc.js';
import { describeDbs, type Agent, type TestServer } from './harness.js';

async function challenge(a: Agent): Promise<{ nonce: string; difficulty: number }> {
  const r = await a.json('GET', '/api/v1/auth/challenge');
  expect(r.status).toBe(200);
  return { nonce: r.body['nonce'] as string, difficulty: r.body['difficulty'] as number };
}

function registerRaw(t: TestServer, a: Agent, nonce: string, counter: number, nickname = 'n', signAs = a.seed) {
  const reg = signRegistration(t.crypto, signAs, nonce, nickname, counter);
  return a.json('POST', '/api/v1/auth/register', { raw: registrationBody({ ...reg, publicKey: a.publicKey }) });
}

describeDbs('registry auth', (server) => {
  it('issues a challenge the reference client can read (nonce, challenge, difficulty)', async () => {
    const t = server();
    const r = await t.agent().json('GET', '/api/v1/auth/challenge');
    expect(r.status).toBe(200);
    expect(r.body['nonce']).toMatch(/^[0-9a-f]{32}$/);
    expect(r.body['challenge']).toBe(r.body['nonce']);
    expect(r.body['difficulty']).toBe(1);
  });

  it('registers with a real proof of work and refuses the same key twice (409)', async () => {
    const t = server();
    const a = t.agent();
    const { nonce, difficulty } = await challenge(a);
    const ok = await registerRaw(t, a, nonce, t.crypto.powSolve(nonce, a.publicKey, difficulty), 'alice');
    expect(ok.status).toBe(201);
    expect(ok.body).toMatchObject({ public_key: a.publicKey, nickname: 'alice' });
    const again = await challenge(a);
    const dup = await registerRaw(t, a, again.nonce, t.crypto.powSolve(again.nonce, a.publicKey, again.difficulty));
    expect(dup.status).toBe(409);
    expect(dup.body).toEqual({ code: 'ALREADY_REGISTERED', message: expect.any(String) });
  });

  it('refuses a counter that does not reach the difficulty', async () => {
    const t = server();
    const a = t.agent();
    const { nonce, difficulty } = await challenge(a);
    let bad = 0;
    while (t.crypto.powCheck(nonce, a.publicKey, bad, difficulty)) bad++;
    const r = await registerRaw(t, a, nonce, bad);
    expect(r.status).toBe(400);
    expect(r.body['code']).toBe('POW_INVALID');
  });

  it('refuses a reused challenge, an unknown one and an expired one', async () => {
    const t = server();
    const a = t.agent();
    const b = t.agent();
    const { nonce, difficulty } = await challenge(a);
    expect((await registerRaw(t, a, nonce, t.crypto.powSolve(nonce, a.publicKey, difficulty))).status).toBe(201);
    const reused = await registerRaw(t, b, nonce, t.crypto.powSolve(nonce, b.publicKey, difficulty));
    expect(reused.status).toBe(400);
    expect(reused.body['code']).toBe('CHALLENGE_UNKNOWN');
    const unknown = await registerRaw(t, b, 'f'.repeat(32), t.crypto.powSolve('f'.repeat(32), b.publicKey, 1));
    expect(unknown.body['code']).toBe('CHALLENGE_UNKNOWN');
    const late = await challenge(b);
    t.clock.advance(t.server.ctx.config.challengeTtlSeconds + 1);
    const expired = await registerRaw(t, b, late.nonce, t.crypto.powSolve(late.nonce, b.publicKey, late.difficulty));
    expect(expired.status).toBe(400);
    expect(expired.body['code']).toBe('CHALLENGE_EXPIRED');
  });

  it('refuses a registration signed by another key or over another nickname', async () => {
    const t = server();
    const a = t.agent();
    const { nonce, difficulty } = await challenge(a);
    const counter = t.crypto.powSolve(nonce, a.publicKey, difficulty);
    const foreign = await registerRaw(t, a, nonce, counter, 'n', randomBytes(32));
    expect(foreign.status).toBe(400);
    expect(foreign.body['code']).toBe('SIGNATURE_INVALID');
    const reg = signRegistration(t.crypto, a.seed, nonce, 'alice', counter);
    const renamed = await a.json('POST', '/api/v1/auth/register', { raw: registrationBody({ ...reg, nickname: 'mallory' }) });
    expect(renamed.body['code']).toBe('SIGNATURE_INVALID');
    // The challenge survives refused attempts, so the honest registration still goes through.
    expect((await registerRaw(t, a, nonce, counter)).status).toBe(201);
  });

  it('refuses malformed registration bodies with a typed 400', async () => {
    const t = server();
    const a = t.agent();
    for (const raw of [
      'not json',
      '[1]',
      '{"public_key":"zz"}',
      JSON.stringify({ public_key: a.publicKey, nickname: 'x', nonce: 'n', counter: -1, signature: '0'.repeat(128) }),
    ]) {
      const r = await a.json('POST', '/api/v1/auth/register', { raw });
      expect(r.status).toBe(400);
      expect(Object.keys(r.body).sort()).toEqual(['code', 'message']);
    }
    const notUtf8 = await a.json('POST', '/api/v1/auth/register', { raw: new Uint8Array([0x7b, 0xff, 0x7d]) });
    expect(notUtf8.body['code']).toBe('BODY_NOT_UTF8');
  });

  it('accepts a signed request and refuses each broken part of the signed headers', async () => {
    const t = server();
    const a = await t.registered();
    expect((await a.send('GET', '/api/v1/invitations')).status).toBe(200);
    const codeOf = async (r: Promise<{ status: number; body: Record<string, unknown> }>) => {
      const { status, body } = await r;
      expect(status).toBe(401);
      return body['code'];
    };
    const flipped = (hex: string) => (hex[0] === '0' ? '1' : '0') + hex.slice(1);
    // Re-sign a valid request, then tamper with one header.
    const sig = async (o: object) => codeOf(a.json('GET', '/api/v1/invitations', o));
    expect(await codeOf(t.fetch('/api/v1/invitations').then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> })))).toBe(
      'AUTH_MISSING',
    );
    expect(await sig({ headers: { 'X-Signature': flipped('0'.repeat(128)) } })).toBe('SIGNATURE_INVALID');
    expect(await sig({ headers: { 'X-Public-Key': t.agent().publicKey } })).toBe('SIGNATURE_INVALID');
    expect(await sig({ signedPath: '/api/v1/invitations?limit=1' })).toBe('SIGNATURE_INVALID');
    expect(await sig({ headers: { 'X-Request-Id': 'abc' } })).toBe('AUTH_MALFORMED');
    expect(await sig({ headers: { 'X-Public-Key': 'A'.repeat(64) } })).toBe('AUTH_MALFORMED');
    expect(await sig({ headers: { 'X-Timestamp': '12.5' } })).toBe('AUTH_MALFORMED');
    const now = Math.floor(t.clock.now() / 1000);
    const window = t.server.ctx.config.timestampWindowSeconds;
    expect(await sig({ timestamp: now - window - 1 })).toBe('TIMESTAMP_OUT_OF_WINDOW');
    expect(await sig({ timestamp: now + window + 1 })).toBe('TIMESTAMP_OUT_OF_WINDOW');
    expect((await a.send('GET', '/api/v1/invitations', { timestamp: now - window + 1 })).status).toBe(200);
  });

  it('checks the signature over the exact body bytes', async () => {
    const t = server();
    const a = await t.registered();
    const body = JSON.stringify({ post_id: 'x' });
    // Signed over one body, sent with another: sign with a raw body, then swap the payload in fetch.
    const headers = (await import('../../ts/registry/auth.js')).restHeaders(t.crypto, a.seed, {
      timestamp: Math.floor(t.clock.now() / 1000),
      method: 'POST',
      path: '/api/v1/sessions',
      requestId: toHex(randomBytes(16)),
      body: utf8(body),
    });
    const r = await t.fetch('/api/v1/sessions', { method: 'POST', headers, body: body.replace('x', 'y') });
    expect(r.status).toBe(401);
    expect(((await r.json()) as { code: string }).code).toBe('SIGNATURE_INVALID');
  });

  it('refuses a replayed request id, also on another app instance sharing the database', async () => {
    const t = server();
    const a = await t.registered();
    const requestId = toHex(randomBytes(16));
    expect((await a.send('GET', '/api/v1/invitations', { requestId })).status).toBe(200);
    const again = await a.json('GET', '/api/v1/invitations', { requestId });
    expect(again.status).toBe(401);
    expect(again.body['code']).toBe('REQUEST_REPLAYED');
    // A second server process is a second app on the same database.
    const other = createApp(t.server.ctx);
    const sent = await a.send('GET', '/api/v1/invitations', { requestId: toHex(randomBytes(16)) });
    expect(sent.status).toBe(200);
    const { restHeaders } = await import('../../ts/registry/auth.js');
    const headers = restHeaders(t.crypto, a.seed, {
      timestamp: Math.floor(t.clock.now() / 1000),
      method: 'GET',
      path: '/api/v1/invitations',
      requestId,
      body: new Uint8Array(),
    });
    const replayedElsewhere = await other.request('http://registry.test/api/v1/invitations', { headers });
    expect(replayedElsewhere.status).toBe(401);
    // Another key may use the same id: ids are remembered per key.
    const b = await t.registered();
    expect((await b.send('GET', '/api/v1/invitations', { requestId })).status).toBe(200);
  });

  it('answers an oversize body with a typed 413 before reading it', async () => {
    const t = server();
    const a = await t.registered();
    const big = 'x'.repeat(t.server.ctx.config.maxBodyBytes + 1);
    const r = await a.json('POST', '/api/v1/invitations', { raw: big });
    expect(r.status).toBe(413);
    expect(r.body['code']).toBe('BODY_TOO_LARGE');
    const reg = await a.json('POST', '/api/v1/auth/register', { raw: big });
    expect(reg.status).toBe(413);
  });

  it('refuses writes from a key that never registered (403), but lets it read', async () => {
    const t = server();
    const stranger = t.agent();
    expect((await stranger.send('GET', '/api/v1/invitations')).status).toBe(200);
    const r = await stranger.json('POST', '/api/v1/invitations', { body: {} });
    expect(r.status).toBe(403);
    expect(r.body['code']).toBe('NOT_REGISTERED');
  });

  it('rate-limits per key with 429 and Retry-After, refilling as the clock moves', async () => {
    const t = server();
    const ctx = { ...t.server.ctx, config: { ...t.server.ctx.config, ratePerKey: { burst: 2, perSecond: 1 } } };
    const app = createApp(ctx);
    const a = await t.registered();
    const send = async (agent = a) => {
      const { restHeaders } = await import('../../ts/registry/auth.js');
      const headers = restHeaders(t.crypto, agent.seed, {
        timestamp: Math.floor(t.clock.now() / 1000),
        method: 'GET',
        path: '/api/v1/invitations',
        requestId: toHex(randomBytes(16)),
        body: new Uint8Array(),
      });
      return app.request('http://registry.test/api/v1/invitations', { headers });
    };
    expect((await send()).status).toBe(200);
    expect((await send()).status).toBe(200);
    const limited = await send();
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('1');
    expect(((await limited.json()) as { code: string }).code).toBe('RATE_LIMITED');
    expect((await send(await t.registered())).status).toBe(200);
    t.clock.advance(1);
    expect((await send()).status).toBe(200);
  });

  it('rate-limits per address, by the last X-Forwarded-For entry only when told to trust a proxy', async () => {
    const t = server();
    const version = (app: ReturnType<typeof createApp>, forwarded: string) =>
      app.request('http://registry.test/api/v1/version', { headers: { 'X-Forwarded-For': forwarded } });
    const limited = { ratePerIp: { burst: 1, perSecond: 1 } };
    const direct = createApp({ ...t.server.ctx, config: { ...t.server.ctx.config, ...limited } });
    expect((await version(direct, '10.0.0.1')).status).toBe(200);
    // The header is the client's own word here: a new value does not buy a new bucket.
    expect((await version(direct, '10.0.0.2')).status).toBe(429);
    const proxied = createApp({ ...t.server.ctx, config: { ...t.server.ctx.config, ...limited, trustProxy: true } });
    expect((await version(proxied, 'spoofed, 10.0.0.1')).status).toBe(200);
    expect((await version(proxied, 'other, 10.0.0.1')).status).toBe(429);
    expect((await version(proxied, '10.0.0.2')).status).toBe(200);
    // Buckets live in the database, shared by every app on it: the tests after this one send from this
    // address again, so let its bucket refill.
    t.clock.advance(60);
  });

  it('turns an unexpected failure into a 500 without internals, and unknown routes into 404', async () => {
    const t = server();
    const boom: RouteModule = {
      name: 'boom',
      migrations: [],
      register(app: Hono<AppEnv>) {
        app.get('/api/v1/version', () => {
          throw new Error('secret detail at /home/x/db.ts:12');
        });
      },
    };
    const app = createApp(t.server.ctx, [boom]);
    const r = await app.request('http://registry.test/api/v1/version');
    expect(r.status).toBe(500);
    const text = await r.text();
    expect(JSON.parse(text)).toEqual({ code: 'INTERNAL', message: 'internal server error' });
    expect(text).not.toContain('secret');
    const missing = await createApp(t.server.ctx, [authRoutes, miscRoutes, invitationRoutes]).request('http://registry.test/nope');
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { code: string }).code).toBe('ROUTE_NOT_FOUND');
  });

  it('serves /api/v1/version without a signature', async () => {
    const t = server();
    const r = await t.fetch('/api/v1/version');
    expect(r.status).toBe(200);
    const body = (await r.json()) as Record<string, unknown>;
    expect(body['version']).toMatch(/^\d+\.\d+\.\d+/);
    expect(body).toHaveProperty('min_client_version');
    expect(body).toHaveProperty('latest_version');
  });
});
