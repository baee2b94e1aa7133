/**
 * The rin.control/v2 transport: the route set against the published OpenAPI document, bearer auth on
 * every route, strict request bodies, the response form, error codes, long-poll bounds, and the
 * loopback-only listener driven by the reference JavaScript SDK.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRinControl, serveRinControl } from '../../ts/rin/control/service.js';
import { silentLog } from '../../ts/server/log.js';
import {
  ALL_SCOPES,
  SHARED,
  TOKEN,
  dataPlace,
  fakeOps,
  harnessFor,
  VirtualTimers,
  openControl,
  publication,
  registration,
  type ControlHarness,
  type DataPlace,
  type HookCall,
} from './control-http-harness.js';

const OPENAPI = join(SHARED, 'reference/rin/api/control-openapi.json');
const FIXTURES = join(SHARED, 'reference/rin/api/control-v2-fixtures.json');
const SDK = join(SHARED, 'reference/rin-src/sdk/javascript/src/index.js');

function openApiRoutes(): Array<{ method: string; path: string; operationId: string }> {
  if (!existsSync(OPENAPI)) throw new Error(`the published Control OpenAPI document is missing: ${OPENAPI}`);
  const doc = JSON.parse(readFileSync(OPENAPI, 'utf8')) as { paths: Record<string, Record<string, { operationId: string }>> };
  return Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([m, op]) => ({ method: m.toUpperCase(), path, operationId: op.operationId })),
  );
}

/** A body each POST route decodes without complaint (the fixture shapes of the reference). */
function validBody(path: string): unknown {
  const f = JSON.parse(readFileSync(FIXTURES, 'utf8')) as Record<string, unknown>;
  const byPath: Record<string, unknown> = {
    '/control/v2/host/register': registration('test.host'),
    '/control/v2/host/renew': { host_id: 'test.host', lease_id: 'lease.x' },
    '/control/v2/host/unregister': { host_id: 'test.host', lease_id: 'lease.x' },
    '/control/v2/host/publish': { host_id: 'test.host', lease_id: 'lease.x', publication: publication(1) },
    '/control/v2/host/poll': { host_id: 'test.host', lease_id: 'lease.x', limit: 1, wait_millis: 0 },
    '/control/v2/worlds': {},
    '/control/v2/actors': f['world_target'],
    '/control/v2/actor': f['actor_target'],
    '/control/v2/wait-actor': { ...(f['wait_actor'] as object), wait_millis: 0 },
    '/control/v2/observe': f['actor_target'],
    '/control/v2/capabilities': f['actor_target'],
    '/control/v2/capability': f['describe_capability'],
    '/control/v2/controllers/acquire': f['acquire_controller'],
    '/control/v2/controllers/renew': f['renew_controller'],
    '/control/v2/controllers/release': f['release_controller'],
    '/control/v2/controllers/get': f['actor_target'],
    '/control/v2/emergency-stop': f['emergency_stop'],
  };
  return byPath[path] ?? {};
}

type Fault = [what: string, o: Parameters<ControlHarness['call']>[2]];

const TRANSPORT_FAULTS: Fault[] = [
  ['duplicate member', { raw: '{"host_id":"one","host_id":"two"}' }],
  ['escaped duplicate', { raw: '{"ab":1,"a\\u0062":2}' }],
  ['nested duplicate', { raw: '{"publication":{"actors":[{"x":1,"x":2}]}}' }],
  ['bad JSON', { raw: '{"host_id":' }],
  ['trailing value', { raw: '{} {}' }],
  ['empty body', { raw: '' }],
  ['lone surrogate', { raw: '{"host_id":"\\ud800"}' }],
  ['not UTF-8', { raw: new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]) }],
  ['wrong media type', { raw: '{}', contentType: 'text/plain' }],
  ['no media type', { raw: '{}', contentType: null }],
  ['malformed media type parameter', { raw: '{}', contentType: 'application/json; charset' }],
  ['oversize', { raw: `{"host_id":"${'a'.repeat(1 << 20)}"}` }],
];

const DECODE_FAULTS: Fault[] = [
  ['unknown member', { raw: '{"unknown":true}' }],
  ['member named in another case', { raw: '{"HOST_ID":"test.host"}' }],
  ['array body', { raw: '[]' }],
  ['string body', { raw: '"x"' }],
  ['number for a string', { raw: '{"host_id":7}' }],
];

/** Routes whose bodies the operations half decodes. */
const OPS_ROUTES = new Set(
  [
    'host/ack',
    'host/run',
    'host/outcome',
    'host/gateway-result',
    'actions/submit',
    'actions/confirm',
    'operations/get',
    'operations/wait',
    'operations/cancel',
    'tasks/timeline/get',
    'tasks/timeline/wait',
  ].map((p) => `/control/v2/${p}`),
);

describe('rin control HTTP', () => {
  let place: DataPlace;
  let h: ControlHarness;
  beforeAll(async () => {
    place = await dataPlace('pglite');
    h = await openControl(place);
  });
  afterAll(async () => {
    await h?.control.close();
    await place?.drop();
  });

  it('serves exactly the 30 routes of the published OpenAPI document, with unique operation ids', () => {
    const published = openApiRoutes();
    expect(published).toHaveLength(30);
    expect(new Set(published.map((r) => r.operationId)).size).toBe(30);
    expect([...h.control.routes].sort()).toEqual(published.map((r) => `${r.method} ${r.path}`).sort());
  });

  it('answers every route with JSON and refuses it without the token, with a wrong token, or without the Bearer prefix', async () => {
    for (const r of openApiRoutes()) {
      const body = r.method === 'POST' ? validBody(r.path) : undefined;
      if (r.path === '/control/v2/health') {
        const open = await h.call(r.path, undefined, { token: null });
        expect(open.status).toBe(200);
        expect(open.text).toBe('{"status":"ok"}\n');
        continue;
      }
      for (const token of [null, 'f'.repeat(32), TOKEN.slice(0, 31), `${TOKEN}x`]) {
        const res = await h.call(r.path, body, { method: r.method, token });
        expect(res.status, `${r.method} ${r.path} token=${token}`).toBe(401);
        expect(res.text).toBe('{"error":"unauthorized"}\n');
        expect(res.headers.get('www-authenticate')).toBe('Bearer');
      }
      const bare = await h.call(r.path, body, { method: r.method, token: null, headers: { Authorization: TOKEN } });
      expect(bare.status).toBe(401);
      const ok = await h.call(r.path, body, { method: r.method });
      expect(ok.status, `${r.method} ${r.path}: ${ok.text}`).not.toBe(401);
      // A 404 here must be the service's (nothing published yet), never a missing route.
      if (ok.status === 404) expect(ok.body['code'], `${r.method} ${r.path}`).toBe('not_found');
      expect(ok.headers.get('content-type')).toBe('application/json');
    }
  });

  it('writes compact JSON and a newline, with no-store and nosniff, on success and on error', async () => {
    for (const res of [
      await h.call('/health', undefined, { token: null }),
      await h.call('/control/v2/worlds', {}),
      await h.call('/control/v2/actor', { host_id: 'nohost', world_id: 'w', actor_id: 'a' }),
    ]) {
      expect(res.headers.get('content-type')).toBe('application/json');
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.text.endsWith('\n')).toBe(true);
      expect(res.text.slice(0, -1)).toBe(JSON.stringify(JSON.parse(res.text)));
    }
    const info = await h.call('/control/v2/info');
    // Scopes sorted, as the reference keeps them.
    expect(info.text).toBe(
      `{"contract_version":"rin.control/v2","principal":{"id":"player.one","granted_scopes":["actor.control","actor.execute","actor.read","operation.cancel"]}}\n`,
    );
  });

  it('refuses a body that fails the transport checks on every POST route with 400 and no code', async () => {
    h.calls.length = 0;
    for (const r of openApiRoutes().filter((x) => x.method === 'POST')) {
      for (const [what, o] of TRANSPORT_FAULTS) {
        const res = await h.call(r.path, undefined, { method: 'POST', ...o });
        expect(res.status, `${r.path}: ${what}: ${res.text}`).toBe(400);
        expect(Object.keys(res.body), `${r.path}: ${what}`).toEqual(['error']);
      }
    }
    // Nothing reached the operations half.
    expect(h.calls).toEqual([]);
  });

  it('refuses unknown members and wrong JSON types in the bodies the core decodes', async () => {
    const core = openApiRoutes().filter((r) => r.method === 'POST' && !OPS_ROUTES.has(r.path));
    expect(core).toHaveLength(17);
    for (const r of core) {
      for (const [what, o] of DECODE_FAULTS) {
        const res = await h.call(r.path, undefined, { method: 'POST', ...o });
        expect(res.status, `${r.path}: ${what}: ${res.text}`).toBe(400);
        expect(Object.keys(res.body), `${r.path}: ${what}`).toEqual(['error']);
      }
      // A valid body with one extra member is refused too (not only a body of the wrong shape).
      const extra = await h.call(r.path, { ...(validBody(r.path) as object), smuggled: true });
      expect(extra.status, r.path).toBe(400);
      expect(extra.body, r.path).toEqual({ error: expect.stringContaining('unknown field "smuggled"') });
    }
  });

  it('accepts media type parameters and exact integers, and refuses integers beyond their Go type', async () => {
    const params = await h.call('/control/v2/worlds', undefined, { raw: '{}', contentType: 'Application/JSON; charset=utf-8' });
    expect(params.status).toBe(200);
    const worlds = await h.call('/control/v2/worlds', undefined, { raw: '{"x":1}' });
    expect(worlds.body).toEqual({ error: expect.stringContaining('unknown field') });
    for (const ttl of ['5000.0', '-5000', '4294967296', '"5000"', '5e3']) {
      const res = await h.call('/control/v2/host/register', undefined, {
        raw: JSON.stringify(registration('test.host')).replace('"lease_ttl_millis":5000', `"lease_ttl_millis":${ttl}`),
      });
      expect(res.status, ttl).toBe(400);
      expect(res.body['code'], ttl).toBeUndefined();
    }
  });

  it('maps service errors to status and stable code, with the reference texts', async () => {
    const expired = await h.call('/control/v2/host/renew', { host_id: 'test.host', lease_id: 'lease.none' });
    expect(expired.status).toBe(410);
    expect(expired.body).toEqual({ error: 'control plane lease expired', code: 'lease_expired' });
    const invalid = await h.call('/control/v2/host/register', registration('Bad Host'));
    expect(invalid.status).toBe(400);
    expect(invalid.body).toEqual({ error: 'invalid control plane value: host_id: must be a lowercase safe identifier of at most 96 bytes', code: 'invalid' });
    const missing = await h.call('/control/v2/actors', { host_id: 'nohost', world_id: 'world.one' });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ error: 'control plane value not found', code: 'not_found' });
    // An error thrown by the operations half keeps its code.
    const conflict = await h.call('/control/v2/tasks/timeline/get', { task_id: 'task.one' });
    expect(conflict.status).toBe(409);
    expect(conflict.body).toEqual({ error: 'control plane value conflict: timeline says no', code: 'conflict' });
  });

  it('routes the operation routes to the operations half, with the configured principal', async () => {
    h.calls.length = 0;
    for (const [path, name] of [
      ['actions/submit', 'submit'],
      ['actions/confirm', 'confirm'],
      ['operations/get', 'get'],
      ['operations/wait', 'wait'],
      ['operations/cancel', 'cancel'],
      ['tasks/timeline/wait', 'timelineWait'],
    ] as const) {
      const res = await h.call(`/control/v2/${path}`, { operation_id: 'operation.one' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ route: name });
    }
    expect(h.calls.map((c) => c[0])).toEqual(['submit', 'confirm', 'get', 'wait', 'cancel', 'timelineWait']);
    expect(h.calls.every((c) => (c[1] as { id: string }).id === 'player.one')).toBe(true);
    for (const [path, status] of [
      ['ack', 'acknowledged'],
      ['run', 'recorded'],
      ['outcome', 'recorded'],
      ['gateway-result', 'recorded'],
    ] as const) {
      const res = await h.call(`/control/v2/host/${path}`, { host_id: 'test.host' });
      expect(res.text).toBe(`{"status":"${status}"}\n`);
    }
  });

  it('bounds long polls at 25000 ms: poll with a plain 400, the other waits with code invalid', async () => {
    h.calls.length = 0;
    const poll = await h.call('/control/v2/host/poll', { host_id: 'test.host', lease_id: 'lease.x', limit: 1, wait_millis: 25_001 });
    expect(poll.status).toBe(400);
    expect(poll.body).toEqual({ error: 'wait_millis must not exceed 25000' });
    expect(h.calls).toEqual([]);
    const ok = await h.call('/control/v2/host/poll', { host_id: 'test.host', lease_id: 'lease.x', limit: 2, wait_millis: 25_000 });
    expect(ok.status).toBe(200);
    expect(h.calls).toEqual([['poll', 'test.host', 'lease.x', 2, 25_000]]);
    const wait = await h.call('/control/v2/wait-actor', {
      host_id: 'h.one',
      world_id: 'w',
      actor_id: 'a',
      after_observation_seq: 0,
      after_authority_revision: 0,
      wait_millis: 25_001,
    });
    expect(wait.status).toBe(400);
    expect(wait.body['code']).toBe('invalid');
  });

  it('has no v1 routes and no unknown routes; a known path with another method is 405', async () => {
    for (const path of ['/control/v1/health', '/control/v1/register', '/control/v1/client/info', '/control/v2/nothing', '/control/v2/host/']) {
      const res = await h.call(path, {});
      expect(res.status, path).toBe(404);
      expect(res.headers.get('content-type')).toBe('application/json');
    }
    const unauth = await h.call('/control/v2/nothing', {}, { token: null });
    expect(unauth.status).toBe(401);
    const wrongMethod = await h.call('/control/v2/worlds', undefined, { method: 'GET' });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('POST');
    const postHealth = await h.call('/health', {}, { token: null });
    expect(postHealth.status).toBe(405);
    expect(postHealth.headers.get('allow')).toBe('GET, HEAD');
    const head = await h.call('/control/v2/info', undefined, { method: 'HEAD' });
    expect([head.status, head.text, head.headers.get('content-type')]).toEqual([200, '', 'application/json']);
    expect((await h.call('/control/v2/info', undefined, { method: 'HEAD', token: null })).status).toBe(401);
  });
});

describe('rin control HTTP with the real operations half', () => {
  it('refuses unknown members and wrong JSON types on the operation routes with 400 and no code', async () => {
    const place = await dataPlace('pglite');
    const control = await createRinControl({ token: TOKEN, principal: ALL_SCOPES, log: silentLog, ...place.options });
    const h = harnessFor(control, new VirtualTimers(), []);
    try {
      for (const path of OPS_ROUTES) {
        for (const [what, o] of [...DECODE_FAULTS, ...TRANSPORT_FAULTS]) {
          const res = await h.call(path, undefined, { method: 'POST', ...o });
          expect(res.status, `${path}: ${what}: ${res.text}`).toBe(400);
          expect(Object.keys(res.body), `${path}: ${what}`).toEqual(['error']);
        }
      }
    } finally {
      await control.close();
      await place.drop();
    }
  });
});

describe('rin control HTTP without a client principal', () => {
  it('serves only the host routes; the client routes are 404', async () => {
    const place = await dataPlace('pglite');
    const h = await openControl(place, { principal: null });
    try {
      expect(h.control.routes).toHaveLength(10);
      expect((await h.call('/control/v2/info')).status).toBe(404);
      expect((await h.call('/control/v2/worlds', {})).status).toBe(404);
      expect((await h.call('/control/v2/emergency-stop', {})).status).toBe(404);
      expect((await h.call('/control/v2/host/register', registration('test.host'))).status).toBe(200);
    } finally {
      await h.control.close();
      await place.drop();
    }
  });
});

describe('rin control configuration', () => {
  it('refuses a short token, a principal without control scopes, an invalid principal and a body limit over 8 MiB', async () => {
    const calls: HookCall[] = [];
    const base = { token: TOKEN, ops: fakeOps(calls), log: silentLog, dataDir: undefined };
    await expect(serveRinControl({ ...base, token: 'x'.repeat(31), listen: '127.0.0.1:0' })).rejects.toThrow('token must contain at least 32 bytes');
    await expect(serveRinControl({ ...base, principal: { id: 'p', granted_scopes: ['world.read'] }, listen: '127.0.0.1:0' })).rejects.toThrow(
      'no Control Plane scope',
    );
    await expect(serveRinControl({ ...base, principal: { id: 'Bad' }, listen: '127.0.0.1:0' })).rejects.toThrow('client principal');
    await expect(serveRinControl({ ...base, maxBodyBytes: (8 << 20) + 1, listen: '127.0.0.1:0' })).rejects.toThrow('8 MiB');
  });

  it('listens only on loopback', async () => {
    const calls: HookCall[] = [];
    for (const listen of ['0.0.0.0:7375', '192.168.1.2:7375', 'example.com:7375', '[::]:7375', '127.0.0.1', '127.0.0.1:99999']) {
      await expect(serveRinControl({ token: TOKEN, ops: fakeOps(calls), log: silentLog, listen }), listen).rejects.toThrow();
    }
  });
});

describe('rin control served on loopback, driven by the reference JavaScript SDK', () => {
  it('the unmodified SDK reads info and worlds, and gets the server codes back', async () => {
    if (!existsSync(SDK)) throw new Error(`the reference JavaScript SDK is missing: ${SDK}`);
    const sdk = (await import(pathToFileURL(SDK).href)) as {
      RinControlClient: new (
        base: string,
        o: { token: string },
      ) => {
        info(): Promise<Record<string, unknown>>;
        listWorlds(): Promise<unknown[]>;
        getActor(i: object): Promise<unknown>;
        post(path: string, input: object): Promise<unknown>;
      };
    };
    const calls: HookCall[] = [];
    // A virtual clock the test never advances: no wait can reach its deadline.
    const clock = new VirtualTimers();
    const served = await serveRinControl({ token: TOKEN, principal: ALL_SCOPES, ops: fakeOps(calls), log: silentLog, listen: '127.0.0.1:0', clock });
    try {
      expect(served.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const client = new sdk.RinControlClient(served.url, { token: TOKEN });
      expect(await client.info()).toEqual({
        contract_version: 'rin.control/v2',
        principal: { ...ALL_SCOPES, granted_scopes: [...ALL_SCOPES.granted_scopes!].sort() },
      });
      expect(await client.listWorlds()).toEqual([]);
      await expect(client.getActor({ host_id: 'h.one', world_id: 'w.one', actor_id: 'a.one' })).rejects.toMatchObject({ code: 'not_found', status: 404 });
      const lease = (await client.post('/control/v2/host/register', registration('sdk.host'))) as { lease_id: string };
      expect(lease.lease_id).toMatch(/^lease\.[0-9a-f]{32}$/);
      const wrong = new sdk.RinControlClient(served.url, { token: 'z'.repeat(32) });
      await expect(wrong.listWorlds()).rejects.toMatchObject({ status: 401 });

      // Closing the server ends a long poll at once (410), then the socket closes.
      await client.post('/control/v2/host/publish', { host_id: 'sdk.host', lease_id: lease.lease_id, publication: publication(1) });
      const target = { host_id: 'sdk.host', world_id: 'world.one', actor_id: 'actor.one' };
      const waiting = client.post('/control/v2/wait-actor', { ...target, after_observation_seq: 1, after_authority_revision: 1, wait_millis: 25_000 });
      const settled = waiting.then(
        () => 'answered',
        (e: { code?: string }) => e.code,
      );
      // Closed once the poll waits on the clock; its 25 s deadline never comes, so only the close can
      // end it, and the close (which waits for the socket) returns only once it has.
      await clock.pendingAbove(0, 'the long poll');
      await served.close();
      expect(await settled).toBe('unavailable');
      expect(clock.pending).toBe(0);
    } finally {
      await served.close();
    }
  });

  it('a client that hangs up during a long poll frees its wait at once', async () => {
    const clock = new VirtualTimers();
    const served = await serveRinControl({ token: TOKEN, principal: ALL_SCOPES, ops: fakeOps([]), log: silentLog, listen: '127.0.0.1:0', clock });
    try {
      const post = (path: string, body: unknown, signal?: AbortSignal) =>
        fetch(`${served.url}${path}`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
          body: JSON.stringify(body),
          signal,
        });
      const lease = (await (await post('/control/v2/host/register', registration('hangup.host'))).json()) as { lease_id: string };
      expect((await post('/control/v2/host/publish', { host_id: 'hangup.host', lease_id: lease.lease_id, publication: publication(1) })).status).toBe(200);
      const hangUp = new AbortController();
      const wait = post(
        '/control/v2/wait-actor',
        { host_id: 'hangup.host', world_id: 'world.one', actor_id: 'actor.one', after_observation_seq: 1, after_authority_revision: 1, wait_millis: 20_000 },
        hangUp.signal,
      ).catch(() => 'hung up');
      for (let i = 0; i < 100 && clock.pending === 0; i++) await new Promise((r) => setTimeout(r, 10));
      expect(clock.pending).toBe(1);
      hangUp.abort();
      expect(await wait).toBe('hung up');
      for (let i = 0; i < 100 && clock.pending > 0; i++) await new Promise((r) => setTimeout(r, 10));
      expect(clock.pending).toBe(0);
    } finally {
      await served.close();
    }
  });
});
