/**
 * What the configured principal's scopes allow (R76, R79, R81): host.admin sees and may steer every
 * actor; actor.read alone reads but cannot take control; actor.control alone controls its own actor
 * but cannot read it. Each principal gets its own server over one shared in-memory database.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRinControl } from '../../ts/rin/control/service.js';
import type { Principal } from '../../ts/rin/types.js';
import { openDb, type Db } from '../../ts/server/db.js';
import { silentLog } from '../../ts/server/log.js';
import { actor, counterRandom, fakeOps, harnessFor, publication, registration, TOKEN, VirtualTimers, type ControlHarness } from './control-http-harness.js';

const internal = actor('actor.npc', {
  owner_principal_id: 'player.two',
  decision_authority: { source: 'internal', revision: 1, persona_mode: 'character-bound' },
});
const theirs = actor('actor.theirs', {
  owner_principal_id: 'player.two',
  decision_authority: { source: 'external', controller_principal_id: 'player.two', revision: 1, persona_mode: 'character-bound' },
});
const mine = actor('actor.mine');
const target = (actorId: string) => ({ host_id: 'p.host', world_id: 'world.one', actor_id: actorId });

describe('rin control principals', () => {
  let db: Db;
  const opened: ControlHarness[] = [];

  beforeAll(async () => {
    db = await openDb({});
  });
  afterAll(async () => {
    for (const h of opened) await h.control.close();
    await db?.close();
  });

  /** A server for `principal` with one host publishing the three actors. */
  async function serverFor(principal: Principal): Promise<ControlHarness> {
    const clock = new VirtualTimers();
    const control = await createRinControl({ token: TOKEN, principal, db, clock, ops: fakeOps([]), random: counterRandom(), log: silentLog });
    const h = harnessFor(control, clock, []);
    opened.push(h);
    const reg = await h.call('/control/v2/host/register', registration('p.host'));
    const pub = await h.call('/control/v2/host/publish', {
      host_id: 'p.host',
      lease_id: reg.body['lease_id'],
      publication: publication(1, [internal, theirs, mine]),
    });
    expect(pub.status, pub.text).toBe(200);
    return h;
  }

  it('host.admin sees every actor, takes internal control, and may stop an actor it does not own', async () => {
    const h = await serverFor({ id: 'admin.one', granted_scopes: ['host.admin'] });
    expect(((await h.call('/control/v2/worlds', {})).body as unknown as unknown[]).length).toBe(1);
    const actors = (await h.call('/control/v2/actors', { host_id: 'p.host', world_id: 'world.one' })).body as unknown as Array<Record<string, unknown>>;
    expect(actors.map((a) => a['actor_id'])).toEqual(['actor.mine', 'actor.npc', 'actor.theirs']);
    const lease = await h.call('/control/v2/controllers/acquire', { ...target('actor.npc'), controller_id: 'controller.admin', lease_ttl_millis: 5_000 });
    expect(lease.status, lease.text).toBe(200);
    expect(lease.body['principal_id']).toBe('admin.one');
    // External authority names its controller; host.admin is not it.
    expect(
      (await h.call('/control/v2/controllers/acquire', { ...target('actor.theirs'), controller_id: 'controller.admin', lease_ttl_millis: 5_000 })).status,
    ).toBe(403);
    const stop = await h.call('/control/v2/emergency-stop', { ...target('actor.theirs'), active: true });
    expect(stop.status).toBe(200);
    expect(stop.body['updated_by_principal_id']).toBe('admin.one');
  });

  it('actor.read alone reads its actor but can neither take control nor stop it', async () => {
    const h = await serverFor({ id: 'player.one', granted_scopes: ['actor.read'] });
    expect((await h.call('/control/v2/actor', target('actor.mine'))).status).toBe(200);
    expect((await h.call('/control/v2/actor', target('actor.npc'))).status).toBe(403);
    expect(
      (await h.call('/control/v2/controllers/acquire', { ...target('actor.mine'), controller_id: 'controller.one', lease_ttl_millis: 5_000 })).status,
    ).toBe(403);
    expect((await h.call('/control/v2/emergency-stop', { ...target('actor.mine'), active: true })).status).toBe(403);
  });

  it('actor.control alone controls and stops its actor but cannot read it', async () => {
    const h = await serverFor({ id: 'player.one', granted_scopes: ['actor.control'] });
    expect((await h.call('/control/v2/actor', target('actor.mine'))).status).toBe(403);
    expect((await h.call('/control/v2/worlds', {})).body).toEqual([]);
    const lease = await h.call('/control/v2/controllers/acquire', { ...target('actor.mine'), controller_id: 'controller.one', lease_ttl_millis: 5_000 });
    expect(lease.status, lease.text).toBe(200);
    // controllers/get needs actor.read.
    expect((await h.call('/control/v2/controllers/get', target('actor.mine'))).status).toBe(403);
    expect((await h.call('/control/v2/emergency-stop', { ...target('actor.mine'), active: true })).status).toBe(200);
  });
});
