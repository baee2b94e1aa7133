/**
 * Host leases, world publication and the read models built from them (R71–R78), over HTTP on both
 * database engines, on a virtual clock.
 */
import { expect, it } from 'vitest';
import {
  actor,
  describeControlDbs,
  epoch,
  fixtureCapability,
  flush,
  observation,
  publication,
  registration,
  type ControlHarness,
} from './control-http-harness.js';

async function register(h: ControlHarness, hostId: string, instanceId = 'instance.one', ttl = 5_000): Promise<string> {
  const res = await h.call('/control/v2/host/register', registration(hostId, instanceId, { lease_ttl_millis: ttl }));
  expect(res.status, res.text).toBe(200);
  return res.body['lease_id'] as string;
}

async function publish(h: ControlHarness, hostId: string, leaseId: string, pub: Record<string, unknown>) {
  return h.call('/control/v2/host/publish', { host_id: hostId, lease_id: leaseId, publication: pub });
}

const target = (hostId: string, actorId = 'actor.one') => ({ host_id: hostId, world_id: 'world.one', actor_id: actorId });

describeControlDbs('rin control hosts', (server) => {
  it('registers with a fresh lease that ends after its TTL; renew extends it by the registered TTL', async () => {
    const h = server();
    const t0 = h.clock.now();
    const res = await h.call('/control/v2/host/register', registration('lease.host', 'instance.one', { lease_ttl_millis: 7_000 }));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      host_id: 'lease.host',
      instance_id: 'instance.one',
      lease_id: expect.stringMatching(/^lease\.[0-9a-f]{32}$/),
      expires_at_unix_millis: t0 + 7_000,
    });
    const leaseId = res.body['lease_id'] as string;
    await h.clock.advance(6_000);
    const renewed = await h.call('/control/v2/host/renew', { host_id: 'lease.host', lease_id: leaseId });
    expect(renewed.body).toEqual({ ...res.body, expires_at_unix_millis: t0 + 6_000 + 7_000 });
    await h.clock.advance(7_000);
    const late = await h.call('/control/v2/host/renew', { host_id: 'lease.host', lease_id: leaseId });
    expect(late.status).toBe(410);
    expect(late.body['code']).toBe('lease_expired');
    const wrong = await h.call('/control/v2/host/renew', { host_id: 'lease.host', lease_id: 'lease.other' });
    expect(wrong.status).toBe(410);
  });

  it('refuses a second live instance (lease_conflict), renews the same instance, and refuses a changed manifest while live', async () => {
    const h = server();
    const first = await h.call('/control/v2/host/register', registration('conflict.host', 'instance.one'));
    const other = await h.call('/control/v2/host/register', registration('conflict.host', 'instance.two'));
    expect(other.status).toBe(409);
    expect(other.body).toEqual({ error: 'control plane lease conflict: host conflict.host is already live', code: 'lease_conflict' });
    await h.clock.advance(1_000);
    const again = await h.call('/control/v2/host/register', registration('conflict.host', 'instance.one', { lease_ttl_millis: 9_000 }));
    expect(again.body['lease_id']).toBe(first.body['lease_id']);
    expect(again.body['expires_at_unix_millis']).toBe(h.clock.now() + 9_000);
    const changed = registration('conflict.host', 'instance.one');
    changed.manifest.max_concurrent_actors = 5;
    const res = await h.call('/control/v2/host/register', changed);
    expect(res.status).toBe(409);
    expect(res.body['code']).toBe('lease_conflict');
  });

  it('lets another instance take over an expired registration, settling the old one', async () => {
    const h = server();
    const old = await register(h, 'takeover.host', 'instance.one');
    await h.clock.advance(5_000);
    h.calls.length = 0;
    const now = h.clock.now();
    const fresh = await register(h, 'takeover.host', 'instance.two');
    expect(fresh).not.toBe(old);
    expect(h.calls).toContainEqual(['onHostUnregistered', 'takeover.host', now]);
    expect((await h.call('/control/v2/host/renew', { host_id: 'takeover.host', lease_id: old })).status).toBe(410);
    expect((await h.call('/control/v2/host/renew', { host_id: 'takeover.host', lease_id: fresh })).status).toBe(200);
  });

  it('refuses registrations that do not validate, with the field', async () => {
    const h = server();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...registration('v.host'), contract_version: 'rin.control/v1' }, 'contract_version: must equal rin.control/v2'],
      [{ ...registration('v.host'), instance_id: '' }, 'instance_id: must be a lowercase safe identifier of at most 96 bytes'],
      [{ ...registration('v.host'), lease_ttl_millis: 4_999 }, 'lease_ttl_millis: must be between 5000 and 300000'],
      [{ ...registration('v.host'), lease_ttl_millis: 300_001 }, 'lease_ttl_millis: must be between 5000 and 300000'],
      [{ ...registration('v.host'), manifest: { ...registration('v.host').manifest, contract_version: 'rin.host/v1' } }, 'manifest: '],
    ];
    for (const [body, message] of cases) {
      const res = await h.call('/control/v2/host/register', body);
      expect(res.status, message).toBe(400);
      expect(res.body['code']).toBe('invalid');
      expect(res.body['error']).toContain(message);
    }
  });

  it('unregister ends the lease now and keeps the world read model, shown offline', async () => {
    const h = server();
    const leaseId = await register(h, 'offline.host');
    expect((await publish(h, 'offline.host', leaseId, publication(1))).status).toBe(200);
    h.calls.length = 0;
    const res = await h.call('/control/v2/host/unregister', { host_id: 'offline.host', lease_id: leaseId });
    expect(res.text).toBe('{"status":"offline"}\n');
    expect(h.calls).toEqual([['onHostUnregistered', 'offline.host', h.clock.now()]]);
    const worlds = (await h.call('/control/v2/worlds', {})).body as unknown as Array<Record<string, unknown>>;
    expect(worlds.find((w) => w['host_id'] === 'offline.host')).toEqual({
      host_id: 'offline.host',
      world_id: 'world.one',
      display_name: 'Test World',
      sequence: 1,
      online: false,
      lease_expires_at_unix_millis: h.clock.now(),
    });
    expect((await h.call('/control/v2/actor', target('offline.host'))).body['online']).toBe(false);
    expect((await h.call('/control/v2/host/unregister', { host_id: 'offline.host', lease_id: leaseId })).status).toBe(410);
    expect((await publish(h, 'offline.host', leaseId, publication(2))).status).toBe(410);
  });

  it('publication sequences: equal and identical is idempotent, equal and changed or lower is stale, higher replaces', async () => {
    const h = server();
    const leaseId = await register(h, 'seq.host');
    h.calls.length = 0;
    expect((await publish(h, 'seq.host', leaseId, publication(2))).text).toBe('{"status":"published"}\n');
    expect(h.calls.filter((c) => c[0] === 'onWorldPublished')).toHaveLength(1);
    expect((await publish(h, 'seq.host', leaseId, publication(2))).status).toBe(200);
    expect(h.calls.filter((c) => c[0] === 'onWorldPublished')).toHaveLength(1);
    const changed = await publish(h, 'seq.host', leaseId, publication(2, [actor('actor.one', { state: { status: 'moved' } })]));
    expect(changed.status).toBe(409);
    expect(changed.body).toEqual({ error: 'stale control plane value: publication changed without a new sequence', code: 'stale' });
    const lower = await publish(h, 'seq.host', leaseId, publication(1));
    expect(lower.body).toEqual({ error: 'stale control plane value: publication sequence moved backwards', code: 'stale' });
    const higher = await publish(h, 'seq.host', leaseId, publication(3, [actor('actor.one', { state: { status: 'moved' } })]));
    expect(higher.status).toBe(200);
    const view = await h.call('/control/v2/actor', target('seq.host'));
    expect(view.text).toContain('"state":{"status":"moved"}');
  });

  it('keeps the actor state text as published (number lexemes, member order)', async () => {
    const h = server();
    const leaseId = await register(h, 'raw.host');
    const body = JSON.stringify({ host_id: 'raw.host', lease_id: leaseId, publication: publication(1) }).replace(
      '{"status":"ready"}',
      '{"z":1.0,"a":-0,"big":123456789012345678901234567890}',
    );
    expect((await h.call('/control/v2/host/publish', undefined, { raw: body })).status).toBe(200);
    const view = await h.call('/control/v2/actor', target('raw.host'));
    expect(view.text).toContain('"state":{"z":1.0,"a":-0,"big":123456789012345678901234567890}');
  });

  it('answers compact JSON even when a host published its documents with whitespace, as Go marshals raw JSON', async () => {
    const h = server();
    const leaseId = await register(h, 'pretty.host');
    const pub = publication(1, [actor('actor.one', { observation: observation('pretty.host', 'actor.one') })]);
    const body = JSON.stringify({ host_id: 'pretty.host', lease_id: leaseId, publication: pub })
      .replace('{"status":"ready"}', '{ "tag" : "<b>&",\n  "n": 1.50 }')
      .replace('{"position":{"x":1,"y":2}}', '{\t"position" : { "y" : 2 , "x" : 1 } }');
    expect((await h.call('/control/v2/host/publish', undefined, { raw: body })).status).toBe(200);
    const view = await h.call('/control/v2/actor', target('pretty.host'));
    expect(view.text).toContain('"state":{"tag":"\\u003cb\\u003e\\u0026","n":1.50}');
    const obs = await h.call('/control/v2/observe', target('pretty.host'));
    expect(obs.text).toContain('"payload":{"position":{"y":2,"x":1}}');
    // The same text again is the same publication.
    expect((await h.call('/control/v2/host/publish', undefined, { raw: body })).status).toBe(200);
  });

  it('refuses publications that do not validate, with the field', async () => {
    const h = server();
    const leaseId = await register(h, 'pv.host');
    const cases: Array<[Record<string, unknown>, string]> = [
      [publication(1, [actor('actor.one')], { display_name: ' \t' }), 'display_name: must be valid UTF-8 text of at most 128 bytes'],
      [publication(1, [actor('actor.one')], { display_name: 'é'.repeat(65) }), 'display_name: must be valid UTF-8 text of at most 128 bytes'],
      [publication(0), 'sequence: must be a positive JSON-safe integer'],
      [publication(2 ** 53), 'sequence: must be a positive JSON-safe integer'],
      [publication(1, [actor('actor.one'), actor('actor.one')]), 'actors: must not contain duplicate actor_id values'],
      [
        publication(
          1,
          ['a.1', 'a.2', 'a.3', 'a.4', 'a.5'].map((id) => actor(id)),
        ),
        'actors: must contain at most 4 values',
      ],
      [publication(1, [actor('actor.one')], { visible_principal_ids: ['p.one', 'p.one'] }), 'visible_principal_ids: must not contain duplicate values'],
      [publication(1, [actor('actor.one', { epoch: epoch('world.two') })]), 'actors[0].epoch.world_id: must equal publication world_id'],
      [publication(1, [actor('actor.one', { decision_authority: null })]), 'actors[0].decision_authority: is required'],
      [
        publication(1, [
          actor('actor.one', { decision_authority: { source: 'internal', controller_principal_id: 'p.one', revision: 1, persona_mode: 'character-bound' } }),
        ]),
        'actors[0].decision_authority.controller_principal_id: must be empty for internal authority',
      ],
      [
        publication(1, [actor('actor.one', { decision_authority: { source: 'external', revision: 1, persona_mode: 'agent-avatar' } })]),
        'actors[0].decision_authority.controller_principal_id',
      ],
      [
        publication(1, [actor('actor.one', { decision_authority: { source: 'host', revision: 1, persona_mode: 'character-bound' } })]),
        'actors[0].decision_authority.source: must be internal or external',
      ],
      [publication(1, [actor('actor.one', { state: [] })]), 'actors[0].state: must be a JSON object'],
      [publication(1, [actor('actor.one', { state: null })]), 'actors[0].state: must be a JSON object'],
      [publication(1, [actor('actor.one', { state: undefined })]), 'actors[0].state: must be a bounded JSON object'],
      [
        publication(1, [actor('actor.one', { observation: observation('other.host', 'actor.one') })]),
        'actors[0].observation: must match the enclosing Host, world, Actor, Epoch, and sequence',
      ],
      [publication(1, [actor('actor.one', { observation: observation('pv.host', 'actor.one', 2) })]), 'actors[0].observation: must match'],
      [
        publication(1, [actor('actor.one', { capabilities: { revision: 1, specs: [{ ...fixtureCapability(), digest: 'b'.repeat(64) }] } })]),
        'actors[0].capabilities.specs[0]',
      ],
      [
        publication(1, [actor('actor.one', { capabilities: { revision: 1, specs: [fixtureCapability(), fixtureCapability()] } })]),
        'actors[0].capabilities.specs: must be sorted by capability ID and version without duplicates',
      ],
    ];
    for (const [pub, message] of cases) {
      const res = await publish(h, 'pv.host', leaseId, pub);
      expect(res.status, `${message}: ${res.text}`).toBe(400);
      expect(res.body['code']).toBe('invalid');
      expect(res.body['error']).toContain(message);
    }
  });

  it('observe, capabilities and capability: 410 until published and while offline, the exact spec or 404', async () => {
    const h = server();
    const leaseId = await register(h, 'disc.host');
    expect((await publish(h, 'disc.host', leaseId, publication(1))).status).toBe(200);
    const none = await h.call('/control/v2/observe', target('disc.host'));
    expect(none.body).toEqual({ error: 'control plane host unavailable: Host has not published a V2 observation', code: 'unavailable' });
    expect((await h.call('/control/v2/capabilities', target('disc.host'))).status).toBe(410);
    const spec = fixtureCapability();
    const pub = publication(2, [actor('actor.one', { observation: observation('disc.host', 'actor.one'), capabilities: { revision: 3, specs: [spec] } })]);
    const published = await publish(h, 'disc.host', leaseId, pub);
    expect(published.status, published.text).toBe(200);
    const obs = await h.call('/control/v2/observe', target('disc.host'));
    expect(obs.body).toEqual(observation('disc.host', 'actor.one'));
    expect(obs.text).toContain('"payload":{"position":{"x":1,"y":2}}');
    const caps = await h.call('/control/v2/capabilities', target('disc.host'));
    expect(caps.body).toEqual({ revision: 3, specs: [spec] });
    const one = await h.call('/control/v2/capability', { ...target('disc.host'), capability: { id: 'rin.navigation.move-to', version: '2.0.0' } });
    expect(one.body).toEqual(spec);
    const other = await h.call('/control/v2/capability', { ...target('disc.host'), capability: { id: 'rin.navigation.move-to', version: '2.0.1' } });
    expect(other.status).toBe(404);
    const bad = await h.call('/control/v2/capability', { ...target('disc.host'), capability: { id: 'nonamespace', version: '2.0.0' } });
    expect(bad.status).toBe(400);
    expect(bad.body['error']).toContain('capability: ');
    expect((await h.call('/control/v2/observe', target('disc.host', 'actor.none'))).status).toBe(404);
    await h.clock.advance(5_000);
    expect((await h.call('/control/v2/observe', target('disc.host'))).body['code']).toBe('unavailable');
    expect((await h.call('/control/v2/capability', { ...target('disc.host'), capability: { id: 'rin.navigation.move-to', version: '2.0.0' } })).status).toBe(
      410,
    );
  });

  it('visibility: other principals\u2019 actors are 403 to read and hidden from lists; visible_principal_ids lists the world only', async () => {
    const h = server();
    const leaseId = await register(h, 'vis.host');
    const mine = actor('actor.mine');
    const theirs = actor('actor.theirs', {
      owner_principal_id: 'player.two',
      decision_authority: { source: 'external', controller_principal_id: 'player.two', revision: 1, persona_mode: 'character-bound' },
    });
    const controlled = actor('actor.lent', { owner_principal_id: 'player.two' });
    expect((await publish(h, 'vis.host', leaseId, publication(1, [theirs, mine, controlled]))).status).toBe(200);
    const actors = (await h.call('/control/v2/actors', { host_id: 'vis.host', world_id: 'world.one' })).body as unknown as Array<Record<string, unknown>>;
    expect(actors.map((a) => a['actor_id'])).toEqual(['actor.lent', 'actor.mine']);
    const forbidden = await h.call('/control/v2/actor', target('vis.host', 'actor.theirs'));
    expect(forbidden.status).toBe(403);
    expect(forbidden.body).toEqual({ error: 'control plane access forbidden', code: 'forbidden' });
    expect((await h.call('/control/v2/observe', target('vis.host', 'actor.theirs'))).status).toBe(403);
    expect((await h.call('/control/v2/capabilities', target('vis.host', 'actor.theirs'))).status).toBe(403);
    expect((await h.call('/control/v2/actor', target('vis.host', 'actor.nobody'))).status).toBe(404);

    // A world whose actors are all someone else's is listed only when it names the principal.
    const lease2 = await register(h, 'vis2.host');
    expect((await publish(h, 'vis2.host', lease2, publication(1, [theirs]))).status).toBe(200);
    const listed = async () =>
      ((await h.call('/control/v2/worlds', {})).body as unknown as Array<Record<string, unknown>>).some((w) => w['host_id'] === 'vis2.host');
    expect(await listed()).toBe(false);
    expect((await publish(h, 'vis2.host', lease2, publication(2, [theirs], { visible_principal_ids: ['player.one'] }))).status).toBe(200);
    expect(await listed()).toBe(true);
    expect((await h.call('/control/v2/actors', { host_id: 'vis2.host', world_id: 'world.one' })).body).toEqual([]);
    expect((await h.call('/control/v2/actor', target('vis2.host', 'actor.theirs'))).status).toBe(403);
    // An empty world named for the principal is listed too.
    expect((await publish(h, 'vis2.host', lease2, publication(3, [], { visible_principal_ids: ['player.one'] }))).status).toBe(200);
    expect(await listed()).toBe(true);
  });

  it('holds at most 64 worlds per host', async () => {
    const h = server();
    const leaseId = await register(h, 'many.host', 'instance.one', 300_000);
    const world = (n: number) => publication(1, [actor('actor.one', { epoch: epoch(`world.${n}`) })], { world_id: `world.${n}` });
    for (let n = 0; n < 64; n++) expect((await publish(h, 'many.host', leaseId, world(n))).status).toBe(200);
    const over = await publish(h, 'many.host', leaseId, world(64));
    expect(over.body).toEqual({ error: 'invalid control plane value: world_id: host already contains 64 worlds', code: 'invalid' });
    // A known world may still be replaced.
    expect((await publish(h, 'many.host', leaseId, { ...world(3), sequence: 2 })).status).toBe(200);
  });

  it('lists worlds sorted by host then world', async () => {
    const h = server();
    for (const hostId of ['sort.b', 'sort.a']) {
      const leaseId = await register(h, hostId);
      for (const worldId of ['world.z', 'world.m']) {
        const pub = publication(1, [actor('actor.one', { epoch: epoch(worldId) })], { world_id: worldId });
        expect((await publish(h, hostId, leaseId, pub)).status).toBe(200);
      }
    }
    const worlds = ((await h.call('/control/v2/worlds', {})).body as unknown as Array<Record<string, string>>).filter((w) => w['host_id']!.startsWith('sort.'));
    expect(worlds.map((w) => `${w['host_id']}/${w['world_id']}`)).toEqual(['sort.a/world.m', 'sort.a/world.z', 'sort.b/world.m', 'sort.b/world.z']);
  });

  it('wait-actor: answers at once when a cursor differs or wait_millis is 0, wakes on a publication, and times out unchanged', async () => {
    const h = server();
    const leaseId = await register(h, 'wait.host', 'instance.one', 300_000);
    expect((await publish(h, 'wait.host', leaseId, publication(1))).status).toBe(200);
    const base = { ...target('wait.host'), after_observation_seq: 1, after_authority_revision: 1 };
    const differs = await h.call('/control/v2/wait-actor', { ...base, after_observation_seq: 0, wait_millis: 25_000 });
    expect(differs.body['changed']).toBe(true);
    expect((differs.body['actor'] as Record<string, unknown>)['observation_seq']).toBe(1);
    const zero = await h.call('/control/v2/wait-actor', { ...base, wait_millis: 0 });
    expect(zero.body['changed']).toBe(false);
    expect(zero.text.startsWith('{"actor":{"host_id":"wait.host","adapter_id":"test.adapter","world_id":"world.one","actor_id":"actor.one"')).toBe(true);

    // The publication comes once the wait is registered on the clock (whose deadline never comes by
    // itself), so only the publication can end it.
    const idle = h.clock.pending;
    const woken = h.call('/control/v2/wait-actor', { ...base, wait_millis: 20_000 });
    await h.clock.pendingAbove(idle, 'the first wait');
    expect((await publish(h, 'wait.host', leaseId, publication(2, [actor('actor.one', { observation_seq: 2 })]))).status).toBe(200);
    const update = await woken;
    expect(update.body['changed']).toBe(true);
    expect((update.body['actor'] as Record<string, unknown>)['observation_seq']).toBe(2);

    // A publication that leaves the cursor alone does not end the wait; the clock does.
    const timed = h.call('/control/v2/wait-actor', { ...base, after_observation_seq: 2, wait_millis: 10_000 });
    await h.clock.pendingAbove(idle, 'the second wait');
    expect((await publish(h, 'wait.host', leaseId, publication(3, [actor('actor.one', { observation_seq: 2, state: { status: 'idle' } })]))).status).toBe(200);
    await h.clock.advance(9_999);
    let done = false;
    void timed.then(() => (done = true));
    await flush();
    // 1 ms before its deadline the wait still holds its timer (it neither ended at the publication nor
    // timed out early) and has not answered.
    expect(h.clock.pending).toBe(idle + 1);
    expect(done).toBe(false);
    await h.clock.advance(1);
    const timeout = await timed;
    expect(timeout.body['changed']).toBe(false);
    expect(((timeout.body['actor'] as Record<string, unknown>)['state'] as Record<string, unknown>)['status']).toBe('idle');

    const forbidden = await h.call('/control/v2/wait-actor', { ...base, actor_id: 'actor.none', wait_millis: 0 });
    expect(forbidden.status).toBe(404);
  });
});
