/**
 * Our control server and the reference Go daemon (.cache/rin-control) answer the same script of
 * requests on the core routes — registration, publication, views, discovery, controller leases,
 * emergency stop, and the refusals — with the same status, code and body (ids and times aside).
 * Error texts are compared too, except the transport's decode texts, which name Go's decoder.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { serveRinControl, type ServedRinControl } from '../../ts/rin/control/service.js';
import { silentLog } from '../../ts/server/log.js';
import { describeWithReference, PRINCIPAL, RIN_TOKEN, SCOPES, startGoDaemon, type Daemon } from '../interop/rin-harness.js';
import { actor, fixtureCapability, manifest, observation, publication, registration } from './control-http-harness.js';

interface Ctx {
  lease: string;
  controller: string;
}

type Mode = 'exact' | 'status-and-code' | 'status';
interface Step {
  name: string;
  method?: 'GET' | 'POST';
  path: string;
  body?: (ctx: Ctx) => unknown;
  raw?: string;
  contentType?: string;
  token?: string;
  mode?: Mode;
  after?: (ctx: Ctx, body: Record<string, unknown>) => void;
}

const HOST = 'diff.host';
const T = { host_id: HOST, world_id: 'world.one', actor_id: 'actor.one' };
const lease = (ctx: Ctx) => ({ host_id: HOST, lease_id: ctx.lease });
const pub = (ctx: Ctx, p: Record<string, unknown>) => ({ ...lease(ctx), publication: p });
const rich = () =>
  publication(1, [
    actor('actor.one', { observation: observation(HOST, 'actor.one'), capabilities: { revision: 1, specs: [fixtureCapability()] } }),
    actor('actor.two', {
      owner_principal_id: PRINCIPAL,
      decision_authority: { source: 'external', controller_principal_id: PRINCIPAL, revision: 1, persona_mode: 'agent-avatar' },
    }),
  ]);
const owned = (p: Record<string, unknown>) => {
  // The Go daemon's principal is `alice`: the actors are hers.
  for (const a of p['actors'] as Array<Record<string, unknown>>) {
    a['owner_principal_id'] = PRINCIPAL;
    a['decision_authority'] = { source: 'external', controller_principal_id: PRINCIPAL, revision: 1, persona_mode: 'character-bound' };
  }
  return p;
};

const SCRIPT: Step[] = [
  { name: 'health', method: 'GET', path: '/control/v2/health' },
  { name: 'info', method: 'GET', path: '/control/v2/info' },
  { name: 'no token', path: '/control/v2/worlds', body: () => ({}), token: '' },
  { name: 'register', path: '/control/v2/host/register', body: () => registration(HOST), after: (ctx, b) => (ctx.lease = b['lease_id'] as string) },
  { name: 'register other instance', path: '/control/v2/host/register', body: () => registration(HOST, 'instance.two') },
  {
    name: 'register changed manifest',
    path: '/control/v2/host/register',
    body: () => ({ ...registration(HOST), manifest: manifest({ max_concurrent_actors: 9 }) }),
  },
  { name: 'register bad host id', path: '/control/v2/host/register', body: () => registration('Diff') },
  { name: 'register bad ttl', path: '/control/v2/host/register', body: () => registration('diff.other', 'instance.one', { lease_ttl_millis: 1 }) },
  { name: 'register bad contract', path: '/control/v2/host/register', body: () => ({ ...registration('diff.other'), contract_version: 'rin.control/v1' }) },
  { name: 'renew', path: '/control/v2/host/renew', body: (ctx) => lease(ctx) },
  { name: 'renew wrong lease', path: '/control/v2/host/renew', body: () => ({ host_id: HOST, lease_id: 'lease.nothing' }) },
  { name: 'publish', path: '/control/v2/host/publish', body: (ctx) => pub(ctx, owned(rich())) },
  { name: 'publish again', path: '/control/v2/host/publish', body: (ctx) => pub(ctx, owned(rich())) },
  { name: 'publish changed, same sequence', path: '/control/v2/host/publish', body: (ctx) => pub(ctx, owned(publication(1))) },
  { name: 'publish lower sequence', path: '/control/v2/host/publish', body: (ctx) => pub(ctx, owned(publication(0))) },
  { name: 'publish duplicate actors', path: '/control/v2/host/publish', body: (ctx) => pub(ctx, publication(2, [actor('actor.one'), actor('actor.one')])) },
  { name: 'publish blank name', path: '/control/v2/host/publish', body: (ctx) => pub(ctx, publication(2, [actor('actor.one')], { display_name: ' ' })) },
  {
    name: 'publish wrong epoch world',
    path: '/control/v2/host/publish',
    body: (ctx) => pub(ctx, publication(2, [actor('actor.one', { epoch: { session_id: 's.one', world_id: 'world.two', host: 1, world: 1, timeline: 1 } })])),
  },
  {
    name: 'publish no authority',
    path: '/control/v2/host/publish',
    body: (ctx) => pub(ctx, publication(2, [actor('actor.one', { decision_authority: null })])),
  },
  { name: 'publish array state', path: '/control/v2/host/publish', body: (ctx) => pub(ctx, publication(2, [actor('actor.one', { state: [1] })])) },
  {
    name: 'publish mismatched observation',
    path: '/control/v2/host/publish',
    body: (ctx) => pub(ctx, publication(2, [actor('actor.one', { observation: observation('other.host', 'actor.one') })])),
  },
  {
    name: 'publish too many actors',
    path: '/control/v2/host/publish',
    body: (ctx) =>
      pub(
        ctx,
        publication(
          2,
          ['a.1', 'a.2', 'a.3', 'a.4', 'a.5'].map((id) => actor(id)),
        ),
      ),
  },
  {
    name: 'publish internal with principal',
    path: '/control/v2/host/publish',
    body: (ctx) =>
      pub(
        ctx,
        publication(2, [
          actor('actor.one', { decision_authority: { source: 'internal', controller_principal_id: 'x.y', revision: 1, persona_mode: 'character-bound' } }),
        ]),
      ),
  },
  { name: 'worlds', path: '/control/v2/worlds', body: () => ({}) },
  { name: 'actors', path: '/control/v2/actors', body: () => ({ host_id: HOST, world_id: 'world.one' }) },
  { name: 'actors of a missing world', path: '/control/v2/actors', body: () => ({ host_id: HOST, world_id: 'world.none' }) },
  { name: 'actor', path: '/control/v2/actor', body: () => T },
  { name: 'actor missing', path: '/control/v2/actor', body: () => ({ ...T, actor_id: 'actor.none' }) },
  { name: 'wait-actor changed', path: '/control/v2/wait-actor', body: () => ({ ...T, after_observation_seq: 0, after_authority_revision: 1, wait_millis: 0 }) },
  {
    name: 'wait-actor unchanged',
    path: '/control/v2/wait-actor',
    body: () => ({ ...T, after_observation_seq: 1, after_authority_revision: 1, wait_millis: 0 }),
  },
  {
    name: 'wait-actor too long',
    path: '/control/v2/wait-actor',
    body: () => ({ ...T, after_observation_seq: 1, after_authority_revision: 1, wait_millis: 25_001 }),
  },
  { name: 'observe', path: '/control/v2/observe', body: () => T },
  { name: 'observe unpublished', path: '/control/v2/observe', body: () => ({ ...T, actor_id: 'actor.two' }) },
  { name: 'observe bad target', path: '/control/v2/observe', body: () => ({ ...T, world_id: 'World' }) },
  { name: 'capabilities', path: '/control/v2/capabilities', body: () => T },
  { name: 'capabilities unpublished', path: '/control/v2/capabilities', body: () => ({ ...T, actor_id: 'actor.two' }) },
  { name: 'capability', path: '/control/v2/capability', body: () => ({ ...T, capability: { id: 'rin.navigation.move-to', version: '2.0.0' } }) },
  { name: 'capability other version', path: '/control/v2/capability', body: () => ({ ...T, capability: { id: 'rin.navigation.move-to', version: '2.0.1' } }) },
  { name: 'capability bad ref', path: '/control/v2/capability', body: () => ({ ...T, capability: { id: 'move', version: '2' } }) },
  { name: 'controller get none', path: '/control/v2/controllers/get', body: () => T },
  {
    name: 'acquire',
    path: '/control/v2/controllers/acquire',
    body: () => ({ ...T, controller_id: 'controller.one', lease_ttl_millis: 60_000 }),
    after: (ctx, b) => (ctx.controller = b['lease_id'] as string),
  },
  { name: 'acquire again', path: '/control/v2/controllers/acquire', body: () => ({ ...T, controller_id: 'controller.one', lease_ttl_millis: 60_000 }) },
  {
    name: 'acquire other controller',
    path: '/control/v2/controllers/acquire',
    body: () => ({ ...T, controller_id: 'controller.two', lease_ttl_millis: 60_000 }),
  },
  { name: 'acquire bad ttl', path: '/control/v2/controllers/acquire', body: () => ({ ...T, controller_id: 'controller.one', lease_ttl_millis: 10 }) },
  { name: 'actor with controller', path: '/control/v2/actor', body: () => T },
  { name: 'controller get', path: '/control/v2/controllers/get', body: () => T },
  { name: 'controller renew', path: '/control/v2/controllers/renew', body: (ctx) => ({ ...T, lease_id: ctx.controller, lease_ttl_millis: 30_000 }) },
  {
    name: 'controller renew wrong',
    path: '/control/v2/controllers/renew',
    body: () => ({ ...T, lease_id: 'controller-lease.none', lease_ttl_millis: 30_000 }),
  },
  { name: 'controller release', path: '/control/v2/controllers/release', body: (ctx) => ({ ...T, lease_id: ctx.controller }) },
  { name: 'controller release again', path: '/control/v2/controllers/release', body: (ctx) => ({ ...T, lease_id: ctx.controller }) },
  { name: 'controller get released', path: '/control/v2/controllers/get', body: () => T },
  { name: 'emergency stop on', path: '/control/v2/emergency-stop', body: () => ({ ...T, active: true }) },
  { name: 'emergency stop on again', path: '/control/v2/emergency-stop', body: () => ({ ...T, active: true }) },
  { name: 'emergency stop off', path: '/control/v2/emergency-stop', body: () => ({ ...T, active: false }) },
  { name: 'emergency stop missing actor', path: '/control/v2/emergency-stop', body: () => ({ ...T, actor_id: 'actor.none', active: true }) },
  { name: 'actor after stops', path: '/control/v2/actor', body: () => T },
  { name: 'unknown member', path: '/control/v2/actor', raw: '{"host_id":"diff.host","extra":1}', mode: 'status-and-code' },
  { name: 'duplicate member', path: '/control/v2/actor', raw: '{"host_id":"a","host_id":"b"}', mode: 'status-and-code' },
  { name: 'wrong type', path: '/control/v2/actor', raw: '{"host_id":1}', mode: 'status-and-code' },
  { name: 'wrong media type', path: '/control/v2/actor', raw: '{}', contentType: 'text/plain', mode: 'status-and-code' },
  { name: 'bad JSON', path: '/control/v2/actor', raw: '{', mode: 'status-and-code' },
  { name: 'worlds with a member', path: '/control/v2/worlds', raw: '{"a":1}', mode: 'status-and-code' },
  { name: 'poll too long', path: '/control/v2/host/poll', body: (ctx) => ({ ...lease(ctx), limit: 1, wait_millis: 25_001 }) },
  { name: 'unknown route', path: '/control/v2/nothing', body: () => ({}), mode: 'status' },
  { name: 'v1 route', path: '/control/v1/health', body: () => ({}), mode: 'status' },
  { name: 'unregister', path: '/control/v2/host/unregister', body: (ctx) => lease(ctx) },
  { name: 'unregister again', path: '/control/v2/host/unregister', body: (ctx) => lease(ctx) },
  { name: 'worlds offline', path: '/control/v2/worlds', body: () => ({}) },
  { name: 'observe offline', path: '/control/v2/observe', body: () => T },
  { name: 'acquire offline', path: '/control/v2/controllers/acquire', body: () => ({ ...T, controller_id: 'controller.one', lease_ttl_millis: 60_000 }) },
  { name: 'emergency stop offline', path: '/control/v2/emergency-stop', body: () => ({ ...T, active: true }) },
];

interface Answer {
  status: number;
  body: unknown;
}

/** Ids become their order of first appearance, times become `<time>`: what is left must agree. */
function normalize(value: unknown, ids: Map<string, string>): unknown {
  if (Array.isArray(value)) return value.map((v) => normalize(v, ids));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, /_unix_millis$/.test(k) ? '<time>' : normalize(v, ids)]));
  }
  if (typeof value === 'string' && /^(lease|controller-lease)\.[0-9a-f]{32}$/.test(value)) {
    if (!ids.has(value)) ids.set(value, `<${value.split('.')[0]} ${ids.size + 1}>`);
    return ids.get(value);
  }
  return value;
}

async function runScript(url: string): Promise<Answer[]> {
  const ctx: Ctx = { lease: '', controller: '' };
  const ids = new Map<string, string>();
  const answers: Answer[] = [];
  for (const step of SCRIPT) {
    const method = step.method ?? 'POST';
    const headers: Record<string, string> = {};
    if (step.token !== '') headers['Authorization'] = `Bearer ${step.token ?? RIN_TOKEN}`;
    if (method === 'POST') headers['Content-Type'] = step.contentType ?? 'application/json';
    const body = method === 'POST' ? (step.raw ?? JSON.stringify(step.body?.(ctx))) : undefined;
    const res = await fetch(`${url}${step.path}`, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    if ((res.headers.get('content-type') ?? '').startsWith('application/json')) parsed = JSON.parse(text) as unknown;
    if (res.status === 200 && step.after) step.after(ctx, parsed as Record<string, unknown>);
    answers.push({ status: res.status, body: normalize(parsed, ids) });
  }
  return answers;
}

describeWithReference('rin control core against the reference daemon', () => {
  let dir: string;
  let go: Daemon | undefined;
  let ours: ServedRinControl | undefined;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'aigenora-rin-diff-'));
    go = await startGoDaemon(dir, PRINCIPAL, SCOPES);
    ours = await serveRinControl({ token: RIN_TOKEN, principal: { id: PRINCIPAL, granted_scopes: SCOPES }, listen: '127.0.0.1:0', log: silentLog });
  });
  afterAll(async () => {
    await go?.stop();
    await ours?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers the script as the reference does', async () => {
    const reference = await runScript(go!.url);
    const mine = await runScript(ours!.url);
    const differences: string[] = [];
    SCRIPT.forEach((step, i) => {
      const g = reference[i]!;
      const o = mine[i]!;
      const mode = step.mode ?? 'exact';
      const code = (a: Answer) => (typeof a.body === 'object' && a.body !== null ? (a.body as Record<string, unknown>)['code'] : undefined);
      const same =
        mode === 'exact'
          ? JSON.stringify(g) === JSON.stringify(o)
          : mode === 'status-and-code'
            ? g.status === o.status && code(g) === code(o)
            : g.status === o.status;
      if (!same) differences.push(`${step.name}:\n  reference ${JSON.stringify(g)}\n  ours      ${JSON.stringify(o)}`);
    });
    expect(differences.join('\n')).toBe('');
    // The script did reach the interesting states on the reference too.
    expect(reference.filter((a) => a.status === 200).length).toBeGreaterThan(25);
  });
});
