/**
 * The registry's HTTP surface against a hostile client (issue 33): text PostgreSQL cannot store (NUL,
 * unpaired surrogates) in every string, key and JSON field of every POST route, JSON nested 10,000 deep,
 * numbers no double holds exactly, `%00` in every query parameter, garbage request lines and paths on a
 * real socket, a captured request replayed 150 times, and rate limits shared by two server processes on
 * one PostgreSQL. Throughout: never a 5xx, every refusal a 4xx with a stable code, the process still up
 * and a legitimate request still served afterwards.
 *
 * The sweeps collect every wrong answer before asserting, so one run lists all of them.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { BOX_MAGIC } from '../../ts/crypto/box.js';
import { toHex, utf8 } from '../../ts/crypto/encoding.js';
import { getCrypto } from '../../ts/crypto/index.js';
import { registrationBody, restHeaders, signRegistration } from '../../ts/registry/auth.js';
import { createApp } from '../../ts/server/app.js';
import { DEFAULT_CONFIG, type ServerConfig } from '../../ts/server/context.js';
import { invitationBody, postInvitation, randomProtocolId, sessionProof } from './fixtures.js';
import { describeDbs, freshPgDatabase, needPg, PG_SKIPPED, PG_URL, type Agent, type TestServer } from './harness.js';

const CODE = /^[A-Z][A-Z0-9_]{2,}$/;
const hex = (bytes: number): string => toHex(randomBytes(bytes));

interface Outcome {
  status: number;
  body: Record<string, unknown>;
}

async function outcome(res: Response): Promise<Outcome> {
  const text = await res.text();
  let body: Record<string, unknown> = {};
  try {
    const v: unknown = JSON.parse(text);
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) body = v as Record<string, unknown>;
  } catch {
    body = { text: text.slice(0, 80) };
  }
  return { status: res.status, body };
}

/** Every input tried and every wrong answer, so a failing run names all of them at once. */
class Tally {
  tried = 0;
  readonly wrong: string[] = [];
  /** `want`: the exact 4xx code; undefined: any answer below 500 whose 4xx carries a stable code. */
  check(label: string, r: Outcome, want?: string): void {
    this.tried++;
    const code = r.body['code'];
    const ok =
      want === undefined
        ? r.status < 500 && (r.status < 400 || (typeof code === 'string' && CODE.test(code) && typeof r.body['message'] === 'string'))
        : r.status >= 400 && r.status < 500 && code === want;
    if (!ok) this.wrong.push(`${label} → ${r.status} ${String(code ?? JSON.stringify(r.body).slice(0, 60))}${want === undefined ? '' : ` (want ${want})`}`);
  }
  report(name: string): void {
    console.log(`[hostile] ${name}: ${this.tried} inputs, ${this.wrong.length} wrong`);
  }
}

interface Poison {
  name: string;
  /** JSON text spliced in where the value (or, for keys, the member) was. */
  raw: string;
  code: string;
}

const STRING_POISONS: Poison[] = [
  { name: 'NUL', raw: JSON.stringify('a\u0000b'), code: 'BODY_NUL_CHARACTER' },
  { name: 'only NUL', raw: '"\\u0000"', code: 'BODY_NUL_CHARACTER' },
  { name: 'lone high surrogate', raw: '"a\\ud800b"', code: 'BODY_LONE_SURROGATE' },
  { name: 'lone low surrogate', raw: '"\\udc00"', code: 'BODY_LONE_SURROGATE' },
  { name: 'reversed pair', raw: '"\\udc00\\ud800"', code: 'BODY_LONE_SURROGATE' },
];
const DEEP_POISONS: Poison[] = [
  { name: 'array 10000 deep', raw: `${'['.repeat(10_000)}${']'.repeat(10_000)}`, code: 'BODY_TOO_DEEP' },
  { name: 'object 10000 deep', raw: `${'{"a":'.repeat(10_000)}0${'}'.repeat(10_000)}`, code: 'BODY_TOO_DEEP' },
];
// Each reads as a double other than the number written: stored, it would come back changed.
const INEXACT_NUMBERS = [
  '1e400',
  '-1e400',
  '1e-400',
  '9007199254740993',
  '-9007199254740993',
  '123456789012345678901234567890',
  '0.1000000000000000000001',
  '4.9406564584124654e-325',
];
const NUMBER_POISONS: Poison[] = INEXACT_NUMBERS.map((raw) => ({ name: `number ${raw}`, raw, code: 'BODY_NUMBER_INEXACT' }));
const VALUE_POISONS = [...STRING_POISONS, ...DEEP_POISONS, ...NUMBER_POISONS];
const KEY_POISONS: Poison[] = [
  { name: 'key with NUL', raw: '"k\\u0000":1', code: 'BODY_NUL_CHARACTER' },
  { name: 'key with lone surrogate', raw: '"k\\ud800":1', code: 'BODY_LONE_SURROGATE' },
  { name: 'key NUL only', raw: '"\\u0000":"x"', code: 'BODY_NUL_CHARACTER' },
];

const VALUE_MARK = '@@poison-value@@';
const KEY_MARK = '@@poison-key@@';
type Path = (string | number)[];
type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** Every path to a value inside `v` (containers included), and every path to an object. */
function paths(v: Json, at: Path = []): { values: Path[]; objects: Path[] } {
  const values: Path[] = [];
  const objects: Path[] = [];
  if (Array.isArray(v)) v.forEach((x, i) => add(x, [...at, i]));
  else if (typeof v === 'object' && v !== null) {
    objects.push(at);
    for (const [k, x] of Object.entries(v)) add(x, [...at, k]);
  }
  function add(x: Json, p: Path): void {
    values.push(p);
    const inner = paths(x, p);
    values.push(...inner.values);
    objects.push(...inner.objects);
  }
  return { values, objects };
}

function withAt(base: Json, path: Path, f: (parent: Record<string | number, Json>, key: string | number) => void): Json {
  const copy = structuredClone(base);
  let node = copy as Record<string | number, Json>;
  for (const k of path.slice(0, -1)) node = node[k] as Record<string | number, Json>;
  f(node, path[path.length - 1]!);
  return copy;
}

/** `base` with the value at `path` replaced by the poison's JSON text. */
const poisonValue = (base: Json, path: Path, p: Poison): string =>
  JSON.stringify(withAt(base, path, (parent, k) => void (parent[k] = VALUE_MARK))).replace(JSON.stringify(VALUE_MARK), () => p.raw);

/** `base` with the poison's member added to the object at `path` (the body itself when empty). */
function poisonKey(base: Json, path: Path, p: Poison): string {
  const marked =
    path.length === 0 ? { ...(base as Record<string, Json>), [KEY_MARK]: 0 } : withAt(base, [...path, KEY_MARK], (parent, k) => void (parent[k] = 0));
  return JSON.stringify(marked).replace(`${JSON.stringify(KEY_MARK)}:0`, () => p.raw);
}

interface BodyRoute {
  path: string;
  as: Agent;
  base: Json;
  /** The route reads its body as a JSON object (request.ts): every poison must get its own code. */
  strict: boolean;
  method?: string;
}

/** A signed request to another app on the same database (a second server process, for the limits). */
async function via(
  app: ReturnType<typeof createApp>,
  a: Agent,
  method: string,
  path: string,
  o: { raw?: string; requestId?: string; headers?: Record<string, string> } = {},
): Promise<Response> {
  const body = utf8(o.raw ?? '');
  const headers = {
    ...restHeaders(a.t.crypto, a.seed, { timestamp: Math.floor(a.t.clock.now() / 1000), method, path, requestId: o.requestId ?? hex(16), body }),
    ...o.headers,
  };
  return app.request(`http://registry.test${path}`, { method, headers, body: body.length > 0 ? (body as Uint8Array<ArrayBuffer>) : undefined });
}

const UNLIMITED = { burst: 1_000_000, perSecond: 1_000_000 };

describeDbs(
  'hostile registry',
  (server) => {
    /** Registered host and guest, a recorded session, a group, and one more active invitation. */
    async function scene(t: TestServer) {
      const host = await t.registered('host');
      const guest = await t.registered('guest');
      const pid = randomProtocolId();
      const inv = await postInvitation(host, { protocolId: pid });
      const { proof, id: sessionId } = sessionProof(host, guest, inv.postId, pid);
      expect((await guest.json('POST', '/api/v1/sessions', { body: proof })).status).toBe(201);
      const forGroup = await postInvitation(host);
      const group = await host.json('POST', '/api/v1/groups', {
        body: { post_id: forGroup.postId, min_participants: 2, max_participants: 4, allow_late_join: false, recovery_mode: 'exact' },
      });
      expect(group.status).toBe(201);
      const spare = await postInvitation(host);
      return { host, guest, pid, postId: inv.postId, proof, sessionId, groupId: group.body['group_id'] as string, spare: spare.postId };
    }

    it('refuses NUL, unpaired surrogates, deep nesting and inexact numbers in every field and key of every POST body, with typed 400s', async () => {
      const t = server();
      const s = await scene(t);
      const stranger = t.agent();
      const ch = await stranger.json('GET', '/api/v1/auth/challenge');
      const nonce = ch.body['nonce'] as string;
      const counter = t.crypto.powSolve(nonce, stranger.publicKey, ch.body['difficulty'] as number);
      const box = Buffer.concat([Buffer.from(BOX_MAGIC), randomBytes(120)]).toString('base64');
      const spec = {
        name: 'Hostile',
        description: 'a spec for the hostile suite',
        type: 'game',
        rules: { note: 'n', weight: 1 },
        choices: ['a', 'b'],
        messages: [{ name: 'pick', direction: 'both', fields: { choice: { type: 'enum', values: ['a', 'b'] } } }],
      };
      const g = `/api/v1/groups/${s.groupId}`;
      const routes: BodyRoute[] = [
        {
          path: '/api/v1/auth/register',
          as: stranger,
          base: JSON.parse(registrationBody(signRegistration(t.crypto, stranger.seed, nonce, 'nick', counter))) as Json,
          strict: true,
        },
        {
          path: '/api/v1/invitations',
          as: s.host,
          base: { ...invitationBody(s.host), options: { note: 'n', n: 1, list: [1, 'x', { deep: true }], nested: { k: 'v' } } } as Json,
          strict: true,
        },
        { path: '/api/v1/sessions', as: s.guest, base: { ...s.proof, session_id: s.sessionId } as unknown as Json, strict: true },
        { path: `/api/v1/sessions/${s.sessionId}/status`, as: s.host, base: { status: 'closed', winner: 'host' }, strict: true },
        { path: `/api/v1/sessions/${s.sessionId}/result`, as: s.host, base: { winner: 'draw' }, strict: true },
        { path: '/api/v1/inbox', as: s.host, base: { recipient_public_key: s.guest.publicKey, ciphertext: box }, strict: true },
        {
          path: '/api/v1/groups',
          as: s.host,
          base: { post_id: s.spare, min_participants: 2, max_participants: 4, allow_late_join: false, recovery_mode: 'exact' },
          strict: true,
        },
        {
          path: `${g}/members`,
          as: s.guest,
          base: { join_nonce: hex(16), leader_epoch: 0, leader_signature: hex(64), member_signature: hex(64) },
          strict: true,
        },
        {
          path: `${g}/heartbeat`,
          as: s.host,
          base: { leader_epoch: 0, checkpoint_seq: 0, checkpoint_hash: hex(32), iroh_ticket: 'ticket-x', transport_binding_signature: hex(64) },
          strict: true,
        },
        {
          path: `${g}/claim-leader`,
          as: s.host,
          base: {
            expected_epoch: 0,
            checkpoint_seq: 0,
            checkpoint_hash: hex(32),
            checkpoint_frame_hash: hex(32),
            checkpoint_membership_version: 1,
            checkpoint_signature: hex(64),
            iroh_ticket: 'ticket-y',
            transport_binding_signature: hex(64),
          },
          strict: true,
        },
        { path: `${g}/status`, as: s.host, base: { leader_epoch: 0, status: 'active' }, strict: true },
        // Protocols store the spec as the text received, so only what the parser itself refuses has a fixed code there.
        { path: '/api/v1/protocols', as: s.host, base: { name: 'x', description: 'd', type: 'game', spec_json: spec }, strict: false },
      ];
      const tally = new Tally();
      for (const route of routes) {
        const send = async (label: string, raw: string, want: string | undefined) => {
          const r = await outcome(await route.as.send(route.method ?? 'POST', route.path, { raw }));
          tally.check(`${route.path} ${label}`, r, want);
        };
        const { values, objects } = paths(route.base);
        const valuePaths = route.strict ? values : values.filter((p) => p.length === 1 || (p[0] === 'spec_json' && p.length === 2));
        for (const path of valuePaths) {
          for (const p of VALUE_POISONS) {
            const fixed = route.strict || p.code === 'BODY_TOO_DEEP' || p.code === 'BODY_LONE_SURROGATE';
            await send(`${path.join('.')} = ${p.name}`, poisonValue(route.base, path, p), fixed ? p.code : undefined);
          }
        }
        for (const path of [[], ...objects.filter((o) => o.length > 0)]) {
          for (const p of KEY_POISONS)
            await send(
              `key in {${path.join('.')}} ${p.name}`,
              poisonKey(route.base, path, p),
              route.strict || p.code === 'BODY_LONE_SURROGATE' ? p.code : undefined,
            );
        }
        // A repeated member: JSON.parse would keep the last one silently.
        const [firstKey, firstValue] = Object.entries(route.base as Record<string, Json>)[0]!;
        await send(
          `repeated ${firstKey}`,
          `{${JSON.stringify(firstKey)}:${JSON.stringify(firstValue)},${JSON.stringify(route.base).slice(1)}`,
          'BODY_NOT_JSON',
        );
        // A body that is nothing but the poison.
        for (const p of [...DEEP_POISONS, ...NUMBER_POISONS.slice(0, 2)]) await send(`whole body ${p.name}`, p.raw, undefined);
      }
      // Routes that take no body must not trip over one either.
      const bodiless: [string, string, Agent][] = [
        ['POST', `/api/v1/invitations/${s.spare}/renew`, s.host],
        ['POST', `${g}/members/heartbeat`, s.host],
        ['POST', `${g}/leave`, s.guest],
        ['DELETE', `/api/v1/invitations/${hex(16)}`, s.host],
        ['DELETE', '/api/v1/inbox', s.guest],
      ];
      for (const [method, path, as] of bodiless) {
        for (const p of [...DEEP_POISONS, ...STRING_POISONS.slice(0, 3)]) {
          tally.check(`${method} ${path} body ${p.name}`, await outcome(await as.send(method, path, { raw: `{"x":${p.raw}}` })));
        }
      }
      // The one deliberate 5xx: protocol UI bundles are not hosted here, whatever the body.
      for (const p of [...DEEP_POISONS, ...STRING_POISONS.slice(0, 3)]) {
        const r = await outcome(await s.host.send('POST', `/api/v1/protocols/${hex(32)}/ui-batch`, { raw: `{"x":${p.raw}}` }));
        tally.tried++;
        if (r.status !== 501 || r.body['code'] !== 'UI_NOT_SUPPORTED') tally.wrong.push(`ui-batch body ${p.name} → ${r.status} ${String(r.body['code'])}`);
      }
      // Bytes that are no UTF-8 at all: a surrogate encoded as UTF-8 (CESU-8), an overlong NUL, a lone continuation byte.
      for (const bytes of [[0xed, 0xa0, 0x80], [0xc0, 0x80], [0x80], [0xff]]) {
        const raw = new Uint8Array([...utf8('{"message":"'), ...bytes, ...utf8('"}')]);
        tally.check(
          `invitations raw bytes ${bytes.map((b) => b.toString(16)).join(' ')}`,
          await outcome(await s.host.send('POST', '/api/v1/invitations', { raw })),
          'BODY_NOT_UTF8',
        );
      }
      tally.report(`POST bodies [${t.kind}]`);
      expect(tally.wrong).toEqual([]);
      expect(tally.tried).toBeGreaterThan(1000);

      // Still serving: a legitimate invitation is posted and read back.
      const posted = await postInvitation(s.host);
      expect((await s.guest.json('GET', `/api/v1/invitations/${posted.postId}`)).status).toBe(200);
      expect((await t.fetch('/api/v1/version')).status).toBe(200);
    }, 600_000);

    it('stores numbers that a double holds exactly, as sent, and refuses the ones it would change', async () => {
      const t = server();
      const host = await t.registered('host');
      // Written differently, but each has exactly the value of the double it reads as.
      const options = '{"a":1.0,"b":1e2,"c":0.1,"d":-0,"e":9007199254740991,"f":1.5e-7,"g":123456789012345680000,"h":5e-324,"i":-2.50}';
      const text = JSON.stringify({ ...invitationBody(host), options: VALUE_MARK }).replace(JSON.stringify(VALUE_MARK), options);
      const posted = await host.json('POST', '/api/v1/invitations', { raw: text });
      expect(posted.status).toBe(201);
      const got = await host.json('GET', `/api/v1/invitations/${posted.body['post_id'] as string}`);
      expect(got.body['options']).toEqual({ a: 1, b: 100, c: 0.1, d: 0, e: 9007199254740991, f: 1.5e-7, g: 123456789012345680000, h: 5e-324, i: -2.5 });
      for (const n of INEXACT_NUMBERS) {
        const r = await host.json('POST', '/api/v1/invitations', {
          raw: JSON.stringify({ ...invitationBody(host), options: VALUE_MARK }).replace(JSON.stringify(VALUE_MARK), `{"n":${n}}`),
        });
        expect(r, n).toMatchObject({ status: 400, body: { code: 'BODY_NUMBER_INEXACT' } });
      }
    });

    it('refuses %00 in every query parameter of every route with QUERY_NUL_CHARACTER, and other bad escapes without a 5xx', async () => {
      const t = server();
      const s = await scene(t);
      const routes: [string, string, string[]][] = [
        ['GET', '/api/v1/invitations', ['protocol_id', 'type', 'tags', 'limit', 'cursor', 'x']],
        ['GET', '/api/v1/protocols', ['q', 'family', 'type', 'tag', 'limit', 'cursor', 'x']],
        ['GET', '/api/v1/inbox', ['limit', 'cursor', 'x']],
        ['DELETE', '/api/v1/inbox', ['x']],
        ['GET', `/api/v1/invitations/${s.postId}`, ['x']],
        ['GET', `/api/v1/sessions/${s.sessionId}`, ['x']],
        ['GET', `/api/v1/groups/${s.groupId}`, ['x']],
        ['GET', `/api/v1/groups/by-post/${s.postId}`, ['x']],
        ['GET', `/api/v1/protocols/${hex(32)}`, ['x']],
        ['GET', '/api/v1/inbox/1', ['x']],
        ['GET', '/api/v1/version', ['x']],
        ['GET', '/api/v1/auth/challenge', ['x']],
        ['POST', `/api/v1/invitations/${s.postId}/renew`, ['x']],
      ];
      const tally = new Tally();
      for (const [method, path, params] of routes) {
        for (const param of params) {
          for (const v of ['%00', 'a%00b', '%00%00', 'game%00'])
            tally.check(`${method} ${path}?${param}=${v}`, await outcome(await s.host.send(method, `${path}?${param}=${v}`)), 'QUERY_NUL_CHARACTER');
          // A NUL in one parameter among good ones, and in a parameter's name.
          tally.check(
            `${method} ${path}?limit=5&${param}=%00`,
            await outcome(await s.host.send(method, `${path}?limit=5&${param}=%00`)),
            'QUERY_NUL_CHARACTER',
          );
          tally.check(`${method} ${path}?${param}%00=1`, await outcome(await s.host.send(method, `${path}?${param}%00=1`)), 'QUERY_NUL_CHARACTER');
          for (const v of ['%FF', '%ED%A0%80', '%C0%80', '%', '%zz', '%E2%82', '%F0%9F%98', 'x'.repeat(5000), '%0A%0D%1B', '%EF%BF%BF']) {
            tally.check(`${method} ${path}?${param}=${v.slice(0, 20)}`, await outcome(await s.host.send(method, `${path}?${param}=${v}`)));
          }
        }
      }
      // NUL and broken escapes in path parameters reach no SQL either.
      for (const p of [
        '/api/v1/invitations/%00',
        '/api/v1/sessions/%00',
        '/api/v1/groups/%00',
        '/api/v1/groups/by-post/%00',
        '/api/v1/protocols/%00',
        '/api/v1/inbox/%00',
        '/api/v1/protocols/%ED%A0%80',
        '/api/v1/inbox/1%00',
      ]) {
        tally.check(`GET ${p}`, await outcome(await s.host.send('GET', p)));
        tally.check(`DELETE ${p}`, await outcome(await s.host.send('DELETE', p)));
      }
      tally.report(`query parameters [${t.kind}]`);
      expect(tally.wrong).toEqual([]);
      // Still serving, filters included.
      const found = await s.host.json('GET', `/api/v1/invitations?protocol_id=${s.pid}`);
      expect(found.status).toBe(200);
      expect((await s.host.json('GET', '/api/v1/protocols?q=rock&family=f&type=game&tag=t')).status).toBe(200);
    }, 300_000);

    it('refuses a captured request replayed 150 times without charging its owner, who is still served afterwards', async () => {
      const t = server();
      // The default per-key limit (a burst of 120): before the fix the replays alone emptied it.
      const app = createApp({ ...t.server.ctx, config: { ...t.server.ctx.config, ratePerKey: DEFAULT_CONFIG.ratePerKey } });
      const owner = await t.registered('owner');
      const requestId = hex(16);
      const body = JSON.stringify(invitationBody(owner));
      const headers = restHeaders(t.crypto, owner.seed, {
        timestamp: Math.floor(t.clock.now() / 1000),
        method: 'POST',
        path: '/api/v1/invitations',
        requestId,
        body: utf8(body),
      });
      const capture = () => app.request('http://registry.test/api/v1/invitations', { method: 'POST', headers, body });
      expect((await capture()).status).toBe(201);
      const answers = new Map<string, number>();
      for (let i = 0; i < 150; i++) {
        const r = await outcome(await capture());
        const key = `${r.status} ${String(r.body['code'])}`;
        answers.set(key, (answers.get(key) ?? 0) + 1);
      }
      expect(Object.fromEntries(answers)).toEqual({ '401 REQUEST_REPLAYED': 150 });
      // The owner's own requests still go through: the replays took nothing from its bucket.
      for (let i = 0; i < 5; i++) expect((await via(app, owner, 'GET', '/api/v1/invitations')).status).toBe(200);
      expect((await via(app, owner, 'POST', '/api/v1/invitations', { raw: JSON.stringify(invitationBody(owner)) })).status).toBe(201);
    });

    it('shares the per-key and per-address buckets between two server processes on one database', async () => {
      const t = server();
      const config: ServerConfig = { ...t.server.ctx.config, ratePerKey: { burst: 3, perSecond: 1 }, ratePerIp: { burst: 4, perSecond: 1 }, trustProxy: true };
      const a = createApp({ ...t.server.ctx, config });
      const b = createApp({ ...t.server.ctx, config });
      const caller = await t.registered('caller');
      // Each its own address, so only the per-key bucket is in play.
      const statuses: number[] = [];
      for (const app of [a, b, a, b, a, b])
        statuses.push((await via(app, caller, 'GET', '/api/v1/invitations', { headers: { 'X-Forwarded-For': `10.1.${statuses.length}.1` } })).status);
      expect(statuses).toEqual([200, 200, 200, 429, 429, 429]);
      const limited = await outcome(await via(b, caller, 'GET', '/api/v1/invitations', { headers: { 'X-Forwarded-For': '10.1.9.1' } }));
      expect(limited.body['code']).toBe('RATE_LIMITED');
      t.clock.advance(1);
      expect((await via(b, caller, 'GET', '/api/v1/invitations', { headers: { 'X-Forwarded-For': '10.1.10.1' } })).status).toBe(200);
      expect((await via(a, caller, 'GET', '/api/v1/invitations', { headers: { 'X-Forwarded-For': '10.1.11.1' } })).status).toBe(429);

      const address = `10.2.${randomBytes(1)[0]!}.${randomBytes(1)[0]!}`;
      const version = (app: typeof a) => app.request('http://registry.test/api/v1/version', { headers: { 'X-Forwarded-For': address } });
      const byAddress: number[] = [];
      for (const app of [a, b, a, b, a, b]) byAddress.push((await version(app)).status);
      expect(byAddress).toEqual([200, 200, 200, 200, 429, 429]);
    });
  },
  { config: { ratePerKey: UNLIMITED, ratePerIp: UNLIMITED } },
);

// ---- real processes -------------------------------------------------------------------------------

const CHILD = fileURLToPath(new URL('./hostile-child.ts', import.meta.url));
const crypto = getCrypto();
const children: ChildProcess[] = [];
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Child {
  url: string;
  child: ChildProcess;
  stderr(): string;
  stop(): Promise<number | null>;
}

async function startChild(opts: { dbUrl?: string; dataDir?: string; config?: Partial<ServerConfig> }): Promise<Child> {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, JSON.stringify(opts)], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => void (stderr += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /\{"url":"(http:\/\/127\.0\.0\.1:\d+)"\}/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once('close', (code) => reject(new Error(`server exited ${code} before listening: ${stderr.slice(-2000)}`)));
  });
  return {
    url,
    child,
    stderr: () => stderr,
    stop: () =>
      new Promise<number | null>((resolve) => {
        if (child.exitCode !== null) return resolve(child.exitCode);
        child.once('exit', (code) => resolve(code));
        child.kill('SIGTERM');
      }),
  };
}

async function call(url: string, seed: Uint8Array, method: string, path: string, o: { body?: string; requestId?: string } = {}): Promise<Outcome> {
  const raw = utf8(o.body ?? '');
  const headers = restHeaders(crypto, seed, { timestamp: Math.floor(Date.now() / 1000), method, path, requestId: o.requestId ?? hex(16), body: raw });
  return outcome(await fetch(url + path, { method, headers, body: raw.length > 0 ? (raw as Uint8Array<ArrayBuffer>) : undefined }));
}

async function registerAt(url: string, seed: Uint8Array, nickname: string): Promise<void> {
  const ch = await call(url, seed, 'GET', '/api/v1/auth/challenge');
  const nonce = ch.body['nonce'] as string;
  const counter = crypto.powSolve(nonce, toHex(crypto.ed25519PublicKey(seed)), ch.body['difficulty'] as number);
  const r = await call(url, seed, 'POST', '/api/v1/auth/register', { body: registrationBody(signRegistration(crypto, seed, nonce, nickname, counter)) });
  if (r.status !== 201) throw new Error(`registration failed: ${r.status} ${JSON.stringify(r.body)}`);
}

/** Writes `bytes` on a fresh connection and returns the status line's code, or null when the server just closes. */
function rawHttp(url: string, bytes: Uint8Array | string, end = false): Promise<{ status: number | null; head: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    let got = '';
    const done = () => {
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(got);
      resolve({ status: m ? Number(m[1]) : null, head: got.split('\r\n\r\n')[0]!.slice(0, 200) });
      socket.destroy();
    };
    const timer = setTimeout(done, 5000);
    socket.on('data', (d: Buffer) => {
      got += d.toString('latin1');
      // One response is enough: a kept-alive connection would otherwise wait for the timer.
      if (/\r\n\r\n/.test(got) && /^HTTP\/1\.[01] \d{3}/.test(got)) {
        const len = /content-length: (\d+)/i.exec(got);
        const bodyStart = got.indexOf('\r\n\r\n') + 4;
        if (!len || got.length - bodyStart >= Number(len[1])) {
          clearTimeout(timer);
          done();
        }
      }
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      done();
    });
    socket.write(typeof bytes === 'string' ? Buffer.from(bytes, 'latin1') : bytes);
    // Half-closing mid-body: the server's read of it fails while the handler waits.
    if (end) socket.end();
  });
}

describe('hostile registry, a real server process [pglite]', () => {
  it('answers garbage request lines, paths and headers without a 5xx and stays up', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'aigenora-hostile-'));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    const srv = await startChild({ dataDir: dir, config: { powDifficulty: 1 } });
    const seed = randomBytes(32);
    await registerAt(srv.url, seed, 'still-here');
    const h = 'Host: 127.0.0.1\r\n';
    /** A signed request as raw bytes; `cut` sends only that much of the body its Content-Length announces. */
    const signed = (method: string, path: string, body = '', cut = body.length): string => {
      const headers = restHeaders(crypto, seed, { timestamp: Math.floor(Date.now() / 1000), method, path, requestId: hex(16), body: utf8(body) });
      const lines = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`);
      return `${method} ${path} HTTP/1.1\r\n${h}${lines.join('')}Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body.slice(0, cut)}`;
    };
    const inputs: [string, string | Uint8Array, boolean?][] = [
      ['garbage', 'GARBAGE\r\n\r\n'],
      ['empty lines', '\r\n\r\n\r\n'],
      ['method only', 'GET\r\n\r\n'],
      ['binary', new Uint8Array(randomBytes(512))],
      ['HTTP/9.9', `GET /api/v1/version HTTP/9.9\r\n${h}\r\n`],
      ['asterisk', `GET * HTTP/1.1\r\n${h}\r\n`],
      ['OPTIONS *', `OPTIONS * HTTP/1.1\r\n${h}\r\n`],
      ['absolute-form', `GET http://evil.example/api/v1/version HTTP/1.1\r\n${h}\r\n`],
      ['broken absolute-form', `GET http://[::1/api/v1/version HTTP/1.1\r\n${h}\r\n`],
      ['double slash', `GET //api/v1/version HTTP/1.1\r\n${h}\r\n`],
      ['dot segments', `GET /api/v1/../../../../etc/passwd HTTP/1.1\r\n${h}\r\n`],
      ['encoded dot segments', `GET /api/v1/%2e%2e/%2e%2e/etc/passwd HTTP/1.1\r\n${h}\r\n`],
      ['%00 in path', `GET /api/v1/%00 HTTP/1.1\r\n${h}\r\n`],
      ['%zz in path', `GET /api/v1/invitations/%zz HTTP/1.1\r\n${h}\r\n`],
      ['%00 in query', `GET /api/v1/version?%00=%00 HTTP/1.1\r\n${h}\r\n`],
      ['raw NUL in path', `GET /\u0000 HTTP/1.1\r\n${h}\r\n`],
      ['raw 0xff in path', `GET /api/v1/\u00ff HTTP/1.1\r\n${h}\r\n`],
      ['no Host', 'GET /api/v1/version HTTP/1.1\r\n\r\n'],
      ['bad Host', 'GET /api/v1/version HTTP/1.1\r\nHost: [\r\n\r\n'],
      ['Host with space', 'GET /api/v1/version HTTP/1.1\r\nHost: a b\r\n\r\n'],
      ['Host with userinfo', 'GET /api/v1/version HTTP/1.1\r\nHost: user@evil\r\n\r\n'],
      ['two Hosts', `GET /api/v1/version HTTP/1.1\r\n${h}Host: other\r\n\r\n`],
      ['20k path', `GET /${'a'.repeat(20_000)} HTTP/1.1\r\n${h}\r\n`],
      ['40k header', `GET /api/v1/version HTTP/1.1\r\n${h}X-Big: ${'b'.repeat(40_000)}\r\n\r\n`],
      ['CL and TE', `POST /api/v1/invitations HTTP/1.1\r\n${h}Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`],
      ['bad chunk', `POST /api/v1/invitations HTTP/1.1\r\n${h}Transfer-Encoding: chunked\r\n\r\nZZZ\r\n`],
      ['huge Content-Length', `POST /api/v1/auth/register HTTP/1.1\r\n${h}Content-Length: 99999999999\r\n\r\n{`],
      ['negative Content-Length', `POST /api/v1/auth/register HTTP/1.1\r\n${h}Content-Length: -1\r\n\r\n`],
      ['unknown method', `FOO /api/v1/version HTTP/1.1\r\n${h}\r\n`],
      ['PROPFIND', `PROPFIND /api/v1/version HTTP/1.1\r\n${h}\r\n`],
      ['CONNECT', `CONNECT 127.0.0.1:1 HTTP/1.1\r\n${h}\r\n`],
      [
        'latin1 key header',
        `GET /api/v1/invitations HTTP/1.1\r\n${h}X-Public-Key: \u00ff\u00fe\r\nX-Signature: x\r\nX-Timestamp: 1\r\nX-Request-Id: y\r\n\r\n`,
      ],
      [
        'X-Timestamp 1e400',
        `GET /api/v1/invitations HTTP/1.1\r\n${h}X-Public-Key: ${hex(32)}\r\nX-Signature: ${hex(64)}\r\nX-Timestamp: 1e400\r\nX-Request-Id: ${hex(16)}\r\n\r\n`,
      ],
      ['X-Forwarded-For junk', `GET /api/v1/version HTTP/1.1\r\n${h}X-Forwarded-For: ${'\u00ff'.repeat(3000)}\r\n\r\n`],
      ['huge inbox id', `DELETE /api/v1/inbox/99999999999999999999 HTTP/1.1\r\n${h}\r\n`],
      ['signed %00 query', signed('GET', '/api/v1/protocols?q=%00&family=%00&type=%00&tag=%00')],
      ['signed %00 tags', signed('GET', '/api/v1/invitations?tags=%00')],
      ['signed bad escapes', signed('GET', '/api/v1/protocols?q=%ED%A0%80&family=%C0%80')],
      ['signed raw path junk', signed('GET', '/api/v1/invitations/..%2f..%2f')],
      ['signed deep body', signed('POST', '/api/v1/invitations', `{"options":${'['.repeat(10_000)}${']'.repeat(10_000)}}`)],
      ['signed NUL body', signed('POST', '/api/v1/invitations', '{"message":"\\u0000","tags":["\\ud800"]}')],
      ['short body, signed route', signed('POST', '/api/v1/invitations', JSON.stringify({ message: 'm'.repeat(100) }), 20), true],
      ['short body, public route', `POST /api/v1/auth/register HTTP/1.1\r\n${h}Content-Length: 100\r\n\r\n{"nickname":`, true],
      ['short chunked body', `POST /api/v1/invitations HTTP/1.1\r\n${h}Transfer-Encoding: chunked\r\n\r\n5\r\n{"a":\r\n`, true],
      ['short chunked body, public route', `POST /api/v1/auth/register HTTP/1.1\r\n${h}Transfer-Encoding: chunked\r\n\r\n5\r\n{"a":\r\n`, true],
    ];
    const tally = new Tally();
    for (const [label, bytes, end] of inputs) {
      const r = await rawHttp(srv.url, bytes, end);
      tally.tried++;
      if (r.status !== null && r.status >= 500) tally.wrong.push(`${label} → ${r.head}`);
      if (srv.child.exitCode !== null) tally.wrong.push(`${label} → the server exited ${srv.child.exitCode}`);
    }
    tally.report('raw HTTP [pglite]');
    expect(tally.wrong).toEqual([]);
    expect(srv.child.exitCode).toBeNull();
    expect((await fetch(`${srv.url}/api/v1/version`)).status).toBe(200);
    expect((await call(srv.url, seed, 'GET', '/api/v1/invitations')).status).toBe(200);
    expect(srv.stderr()).not.toContain('internal_error');
    expect(await srv.stop()).toBe(0);
  }, 300_000);
});

const pgUrl = PG_URL;
if (!needPg() || pgUrl === undefined) {
  describe.skip(`hostile registry, two server processes [postgres]${PG_SKIPPED}`, () => {
    it('share replay protection and rate limits', () => {});
  });
} else {
  describe('hostile registry, two server processes [postgres]', () => {
    it('share replay protection and rate limits: 150 replays across both cost the owner nothing, a burst is one burst across both', async () => {
      const fresh = await freshPgDatabase(pgUrl);
      cleanups.push(fresh.drop);
      // A bucket of 4 that refills once in 1000 s: the test never waits for a token.
      const config: Partial<ServerConfig> = { powDifficulty: 1, ratePerKey: { burst: 4, perSecond: 0.001 } };
      const [a, b] = await Promise.all([startChild({ dbUrl: fresh.url, config }), startChild({ dbUrl: fresh.url, config })]);
      const owner = randomBytes(32);
      await registerAt(a.url, owner, 'owner');

      const requestId = hex(16);
      expect((await call(a.url, owner, 'GET', '/api/v1/invitations', { requestId })).status).toBe(200);
      const answers = new Map<string, number>();
      for (let i = 0; i < 150; i++) {
        const r = await call(i % 2 === 0 ? b.url : a.url, owner, 'GET', '/api/v1/invitations', { requestId });
        const key = `${r.status} ${String(r.body['code'])}`;
        answers.set(key, (answers.get(key) ?? 0) + 1);
      }
      expect(Object.fromEntries(answers)).toEqual({ '401 REQUEST_REPLAYED': 150 });
      expect((await call(b.url, owner, 'GET', '/api/v1/invitations')).status).toBe(200);

      // A fresh key: four requests in all, whichever process serves them.
      const busy = randomBytes(32);
      await registerAt(b.url, busy, 'busy');
      const statuses: number[] = [];
      for (let i = 0; i < 8; i++) statuses.push((await call(i % 2 === 0 ? a.url : b.url, busy, 'GET', '/api/v1/invitations')).status);
      expect(statuses).toEqual([200, 200, 200, 200, 429, 429, 429, 429]);
      const limited = await fetch(`${a.url}/api/v1/invitations`, {
        headers: restHeaders(crypto, busy, {
          timestamp: Math.floor(Date.now() / 1000),
          method: 'GET',
          path: '/api/v1/invitations',
          requestId: hex(16),
          body: new Uint8Array(),
        }),
      });
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(((await limited.json()) as { code: string }).code).toBe('RATE_LIMITED');
      // At once, from both sides: the row lock lets exactly four through.
      const racer = randomBytes(32);
      await registerAt(a.url, racer, 'racer');
      const raced = await Promise.all(Array.from({ length: 20 }, (_, i) => call(i % 2 === 0 ? a.url : b.url, racer, 'GET', '/api/v1/invitations')));
      expect(raced.filter((r) => r.status === 200)).toHaveLength(4);
      expect(raced.filter((r) => r.status === 429)).toHaveLength(16);
      // The owner, untouched by all of this, is still served by both.
      expect((await call(a.url, owner, 'GET', '/api/v1/invitations')).status).toBe(200);
      expect((await call(b.url, owner, 'GET', '/api/v1/invitations')).status).toBe(200);
      for (const s of [a, b]) expect(s.stderr()).not.toContain('internal_error');
      expect(await a.stop()).toBe(0);
      expect(await b.stop()).toBe(0);
    }, 300_000);
  });
}
