/**
 * Anyone holding the token can send anything: every member of every core route's valid body is
 * replaced, in turn, by values of the wrong type, out of range, empty, huge, nested, or removed. The
 * server must answer each with a JSON error of a known status (never 500, never a stack trace), and
 * stay usable afterwards.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  actor,
  dataPlace,
  fixtureCapability,
  observation,
  openControl,
  publication,
  registration,
  type ControlHarness,
  type DataPlace,
} from './control-http-harness.js';

const HOST = 'hostile.host';
const T = { host_id: HOST, world_id: 'world.one', actor_id: 'actor.one' };

/** JSON values a hostile client might put where another was expected. */
const REPLACEMENTS: unknown[] = [
  null,
  true,
  -1,
  0,
  1.5,
  9007199254740993,
  1e21,
  '',
  'x'.repeat(300),
  'A B',
  '\u0000',
  '\ud83d\ude00',
  {},
  [],
  [null],
  { nested: { deeper: [1, { a: 'b' }] } },
];
const REMOVE = Symbol('remove');

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** Every path to a value in `v` (members and items), the root excluded. */
function paths(v: Json, prefix: Array<string | number> = []): Array<Array<string | number>> {
  if (Array.isArray(v)) return v.flatMap((item, i) => [[...prefix, i], ...paths(item, [...prefix, i])]);
  if (v !== null && typeof v === 'object') return Object.entries(v).flatMap(([k, item]) => [[...prefix, k], ...paths(item, [...prefix, k])]);
  return [];
}

function replaced(v: Json, path: Array<string | number>, value: unknown): Json {
  const copy = structuredClone(v);
  let at: Json = copy;
  for (const seg of path.slice(0, -1)) at = (at as Record<string | number, Json>)[seg] as Json;
  const last = path[path.length - 1]!;
  if (value === REMOVE) {
    if (Array.isArray(at)) at.splice(last as number, 1);
    else delete (at as Record<string, Json>)[last as string];
  } else (at as Record<string | number, unknown>)[last] = value;
  return copy;
}

describe('rin control under hostile bodies', () => {
  let place: DataPlace;
  let h: ControlHarness;
  let leaseId = '';
  beforeAll(async () => {
    place = await dataPlace('pglite');
    h = await openControl(place);
    const reg = await h.call('/control/v2/host/register', registration(HOST, 'instance.one', { lease_ttl_millis: 300_000 }));
    leaseId = reg.body['lease_id'] as string;
  });
  afterAll(async () => {
    await h?.control.close();
    await place?.drop();
  });

  it('answers every mutation of every core body with a JSON error of a known status', async () => {
    const rich = publication(1, [
      actor('actor.one', { observation: observation(HOST, 'actor.one'), capabilities: { revision: 1, specs: [fixtureCapability()] } }),
    ]);
    const bodies: Array<[string, Json]> = [
      ['/control/v2/host/register', registration(HOST) as unknown as Json],
      ['/control/v2/host/renew', { host_id: HOST, lease_id: leaseId }],
      ['/control/v2/host/publish', { host_id: HOST, lease_id: leaseId, publication: rich } as Json],
      ['/control/v2/host/poll', { host_id: HOST, lease_id: leaseId, limit: 1, wait_millis: 0 }],
      ['/control/v2/worlds', {}],
      ['/control/v2/actors', { host_id: HOST, world_id: 'world.one' }],
      ['/control/v2/actor', T],
      [
        '/control/v2/wait-actor',
        {
          ...T,
          after_observation_seq: 1,
          after_authority_revision: 1,
          after_controller_lease_id: 'controller-lease.x',
          after_emergency_stop_revision: 1,
          wait_millis: 0,
        },
      ],
      ['/control/v2/observe', T],
      ['/control/v2/capabilities', T],
      ['/control/v2/capability', { ...T, capability: { id: 'rin.navigation.move-to', version: '2.0.0' } }],
      ['/control/v2/controllers/acquire', { ...T, controller_id: 'controller.one', lease_ttl_millis: 5_000 }],
      ['/control/v2/controllers/renew', { ...T, lease_id: 'controller-lease.x', lease_ttl_millis: 5_000 }],
      ['/control/v2/controllers/release', { ...T, lease_id: 'controller-lease.x' }],
      ['/control/v2/controllers/get', T],
      ['/control/v2/emergency-stop', { ...T, active: true }],
    ];
    const known = new Set([200, 400, 403, 404, 409, 410, 429]);
    const seen = new Map<number, number>();
    let sent = 0;
    for (const [path, body] of bodies) {
      // No replacement is a wait_millis in 1..25000, so no wait-actor mutation waits on the virtual clock.
      for (const p of paths(body)) {
        for (const value of [...REPLACEMENTS, REMOVE]) {
          const res = await h.call(path, replaced(body, p, value));
          sent++;
          seen.set(res.status, (seen.get(res.status) ?? 0) + 1);
          expect(known.has(res.status), `${path} ${p.join('.')} = ${String(value)}: ${res.status} ${res.text}`).toBe(true);
          expect(res.headers.get('content-type')).toBe('application/json');
          if (res.status !== 200) {
            expect(typeof res.body['error'], `${path} ${p.join('.')}: ${res.text}`).toBe('string');
            expect(res.text).not.toMatch(/\n\s+at /);
          }
        }
      }
    }
    expect(sent).toBeGreaterThan(1000);
    // Most mutations are refused.
    expect(seen.get(400)! > sent / 2).toBe(true);
    // Still serving: the original host renews.
    expect((await h.call('/control/v2/host/renew', { host_id: HOST, lease_id: leaseId })).status).toBe(200);
  });
});
