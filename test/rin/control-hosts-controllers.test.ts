/**
 * Controller leases (R79–R80) and the emergency stop (R81): exclusivity, renewal, expiry and
 * takeover, fencing through the operations half's hooks, revisions, and both surviving a restart of
 * the server on the same database (PGlite directory or PostgreSQL).
 */
import { describe, expect, it } from 'vitest';
import { needPg, PG_SKIPPED } from '../server/harness.js';
import {
  actor,
  dataPlace,
  describeControlDbs,
  epoch,
  openControl,
  publication,
  registration,
  VirtualTimers,
  type ControlHarness,
  type DbKind,
} from './control-http-harness.js';

const TTL = 5_000;

async function hostWith(h: ControlHarness, hostId: string, actors: Array<Record<string, unknown>>, ttl = 300_000): Promise<string> {
  const reg = await h.call('/control/v2/host/register', registration(hostId, 'instance.one', { lease_ttl_millis: ttl }));
  expect(reg.status, reg.text).toBe(200);
  const leaseId = reg.body['lease_id'] as string;
  const pub = await h.call('/control/v2/host/publish', { host_id: hostId, lease_id: leaseId, publication: publication(1, actors) });
  expect(pub.status, pub.text).toBe(200);
  return leaseId;
}

const target = (hostId: string, actorId = 'actor.one') => ({ host_id: hostId, world_id: 'world.one', actor_id: actorId });
const acquire = (h: ControlHarness, hostId: string, controllerId = 'controller.one', actorId = 'actor.one', ttl = TTL) =>
  h.call('/control/v2/controllers/acquire', { ...target(hostId, actorId), controller_id: controllerId, lease_ttl_millis: ttl });

const internalActor = (id: string) => actor(id, { decision_authority: { source: 'internal', revision: 1, persona_mode: 'character-bound' } });

describeControlDbs('rin control controller leases', (server) => {
  it('acquires an epoch-bound lease shown on the actor; the same controller renews it, another is refused', async () => {
    const h = server();
    await hostWith(h, 'ctl.host', [actor('actor.one')]);
    const t0 = h.clock.now();
    const first = await acquire(h, 'ctl.host');
    expect(first.status, first.text).toBe(200);
    expect(first.body).toEqual({
      lease_id: expect.stringMatching(/^controller-lease\.[0-9a-f]{32}$/),
      controller_id: 'controller.one',
      principal_id: 'player.one',
      ...target('ctl.host'),
      source: 'external',
      persona_mode: 'character-bound',
      authority_revision: 1,
      epoch: epoch(),
      acquired_at_unix_millis: t0,
      expires_at_unix_millis: t0 + TTL,
    });
    expect((await h.call('/control/v2/actor', target('ctl.host'))).body['controller_lease']).toEqual(first.body);
    expect((await h.call('/control/v2/controllers/get', target('ctl.host'))).body).toEqual(first.body);

    await h.clock.advance(1_000);
    const again = await acquire(h, 'ctl.host', 'controller.one', 'actor.one', 9_000);
    expect(again.body).toEqual({ ...first.body, expires_at_unix_millis: t0 + 1_000 + 9_000 });
    const other = await acquire(h, 'ctl.host', 'controller.two');
    expect(other.status).toBe(409);
    expect(other.body).toEqual({ error: 'control plane lease conflict', code: 'lease_conflict' });
  });

  it('expires by the clock: the lease is fenced and another controller takes over', async () => {
    const h = server();
    await hostWith(h, 'exp.host', [actor('actor.one')]);
    const first = await acquire(h, 'exp.host');
    await h.clock.advance(TTL);
    h.calls.length = 0;
    const gone = await h.call('/control/v2/controllers/get', target('exp.host'));
    expect(gone.status).toBe(404);
    expect(h.calls).toEqual([['onControllerLeaseInvalidated', first.body['lease_id'], h.clock.now()]]);
    expect((await h.call('/control/v2/actor', target('exp.host'))).body['controller_lease']).toBeUndefined();
    const takeover = await acquire(h, 'exp.host', 'controller.two');
    expect(takeover.status).toBe(200);
    expect(takeover.body['lease_id']).not.toBe(first.body['lease_id']);
    const renewOld = await h.call('/control/v2/controllers/renew', { ...target('exp.host'), lease_id: first.body['lease_id'], lease_ttl_millis: TTL });
    expect(renewOld.status).toBe(410);
    expect(renewOld.body['code']).toBe('lease_expired');
  });

  it('renew needs the exact live lease; release ends it, then get is 404 and release 410', async () => {
    const h = server();
    await hostWith(h, 'rel.host', [actor('actor.one')]);
    const lease = await acquire(h, 'rel.host');
    const leaseId = lease.body['lease_id'] as string;
    await h.clock.advance(4_000);
    const renewed = await h.call('/control/v2/controllers/renew', { ...target('rel.host'), lease_id: leaseId, lease_ttl_millis: 6_000 });
    expect(renewed.body).toEqual({ ...lease.body, expires_at_unix_millis: h.clock.now() + 6_000 });
    expect((await h.call('/control/v2/controllers/renew', { ...target('rel.host'), lease_id: 'controller-lease.other', lease_ttl_millis: TTL })).status).toBe(
      410,
    );
    const badTtl = await h.call('/control/v2/controllers/renew', { ...target('rel.host'), lease_id: leaseId, lease_ttl_millis: 300_001 });
    expect(badTtl.body).toEqual({ error: 'invalid control plane value: lease_ttl_millis: must be between 5000 and 300000', code: 'invalid' });
    h.calls.length = 0;
    const released = await h.call('/control/v2/controllers/release', { ...target('rel.host'), lease_id: leaseId });
    expect(released.text).toBe('{"status":"released"}\n');
    expect(h.calls).toEqual([['onControllerLeaseInvalidated', leaseId, h.clock.now()]]);
    expect((await h.call('/control/v2/controllers/get', target('rel.host'))).status).toBe(404);
    expect((await h.call('/control/v2/controllers/release', { ...target('rel.host'), lease_id: leaseId })).status).toBe(410);
  });

  it('a publication that changes the actor\u2019s epoch or authority revision, or drops the actor, ends its lease', async () => {
    const h = server();
    const hostLease = await hostWith(h, 'pub.host', [actor('actor.one'), actor('actor.two')]);
    const one = await acquire(h, 'pub.host', 'controller.one', 'actor.one', 60_000);
    const two = await acquire(h, 'pub.host', 'controller.two', 'actor.two', 60_000);
    h.calls.length = 0;
    const authority = { source: 'external', controller_principal_id: 'player.one', revision: 2, persona_mode: 'character-bound' };
    const next = publication(2, [actor('actor.one', { decision_authority: authority }), actor('actor.two')]);
    expect((await h.call('/control/v2/host/publish', { host_id: 'pub.host', lease_id: hostLease, publication: next })).status).toBe(200);
    expect(h.calls.filter((c) => c[0] === 'onControllerLeaseInvalidated')).toEqual([['onControllerLeaseInvalidated', one.body['lease_id'], h.clock.now()]]);
    expect((await h.call('/control/v2/controllers/get', target('pub.host', 'actor.two'))).body['lease_id']).toBe(two.body['lease_id']);
    const renew = await h.call('/control/v2/controllers/renew', { ...target('pub.host'), lease_id: one.body['lease_id'], lease_ttl_millis: TTL });
    expect(renew.status).toBe(410);
    h.calls.length = 0;
    const newEpoch = publication(3, [actor('actor.one', { decision_authority: authority }), actor('actor.two', { epoch: { ...epoch(), host: 2 } })]);
    expect((await h.call('/control/v2/host/publish', { host_id: 'pub.host', lease_id: hostLease, publication: newEpoch })).status).toBe(200);
    expect(h.calls.filter((c) => c[0] === 'onControllerLeaseInvalidated')).toEqual([['onControllerLeaseInvalidated', two.body['lease_id'], h.clock.now()]]);
    const three = await acquire(h, 'pub.host', 'controller.three', 'actor.one', 60_000);
    h.calls.length = 0;
    expect((await h.call('/control/v2/host/publish', { host_id: 'pub.host', lease_id: hostLease, publication: publication(4, []) })).status).toBe(200);
    expect(h.calls.filter((c) => c[0] === 'onControllerLeaseInvalidated')).toEqual([['onControllerLeaseInvalidated', three.body['lease_id'], h.clock.now()]]);
  });

  it('only the authority\u2019s principal may acquire: internal needs host.admin, external its named principal', async () => {
    const h = server();
    const other = actor('actor.other', {
      owner_principal_id: 'player.one',
      decision_authority: { source: 'external', controller_principal_id: 'player.two', revision: 1, persona_mode: 'agent-avatar' },
    });
    await hostWith(h, 'auth.host', [internalActor('actor.one'), other]);
    const internal = await acquire(h, 'auth.host');
    expect(internal.status).toBe(403);
    expect(internal.body).toEqual({ error: 'control plane access forbidden', code: 'forbidden' });
    expect((await acquire(h, 'auth.host', 'controller.one', 'actor.other')).status).toBe(403);
    expect((await acquire(h, 'auth.host', 'controller.one', 'actor.none')).status).toBe(404);
    expect((await h.call('/control/v2/controllers/acquire', { ...target('auth.host'), controller_id: 'Controller', lease_ttl_millis: TTL })).body['code']).toBe(
      'invalid',
    );
    expect(
      (await h.call('/control/v2/controllers/acquire', { ...target('auth.host'), controller_id: 'controller.one', lease_ttl_millis: 4_999 })).body['code'],
    ).toBe('invalid');
  });

  it('an offline host\u2019s actors cannot be taken (410), and its operations are settled', async () => {
    const h = server();
    await hostWith(h, 'off.host', [actor('actor.one')], 5_000);
    await h.clock.advance(5_000);
    h.calls.length = 0;
    const res = await acquire(h, 'off.host');
    expect(res.status).toBe(410);
    expect(res.body).toEqual({ error: 'control plane host unavailable', code: 'unavailable' });
    expect(h.calls).toEqual([['onHostExpired', 'off.host', h.clock.now()]]);
  });

  it('wait-actor wakes when a controller lease is taken', async () => {
    const h = server();
    await hostWith(h, 'wk.host', [actor('actor.one')]);
    // The lease is taken once the wait is registered on the clock (whose deadline never comes by
    // itself), so only the lease can end it.
    const idle = h.clock.pending;
    const waiting = h.call('/control/v2/wait-actor', { ...target('wk.host'), after_observation_seq: 1, after_authority_revision: 1, wait_millis: 25_000 });
    await h.clock.pendingAbove(idle, 'the wait');
    const lease = await acquire(h, 'wk.host');
    const update = await waiting;
    expect(update.body['changed']).toBe(true);
    expect((update.body['actor'] as Record<string, unknown>)['controller_lease']).toEqual(lease.body);
    const same = await h.call('/control/v2/wait-actor', {
      ...target('wk.host'),
      after_observation_seq: 1,
      after_authority_revision: 1,
      after_controller_lease_id: lease.body['lease_id'],
      wait_millis: 0,
    });
    expect(same.body['changed']).toBe(false);
  });
});

describeControlDbs('rin control emergency stop', (server) => {
  it('owner sets and clears it; each change bumps the revision, the same state changes nothing', async () => {
    const h = server();
    await hostWith(h, 'stop.host', [actor('actor.one')]);
    h.calls.length = 0;
    const t0 = h.clock.now();
    const on = await h.call('/control/v2/emergency-stop', { ...target('stop.host'), active: true });
    expect(on.text).toBe(
      `{"host_id":"stop.host","world_id":"world.one","actor_id":"actor.one","active":true,"revision":1,"updated_by_principal_id":"player.one","updated_at_unix_millis":${t0}}\n`,
    );
    expect(h.calls).toEqual([['onEmergencyStop', 'stop.host', 'world.one', 'actor.one', t0]]);
    await h.clock.advance(10);
    const again = await h.call('/control/v2/emergency-stop', { ...target('stop.host'), active: true });
    expect(again.body).toEqual(on.body);
    const view = (await h.call('/control/v2/actor', target('stop.host'))).body;
    expect([view['emergency_stopped'], view['emergency_stop_revision']]).toEqual([true, 1]);
    h.calls.length = 0;
    const off = await h.call('/control/v2/emergency-stop', { ...target('stop.host'), active: false });
    expect(off.body).toEqual({ ...on.body, active: false, revision: 2, updated_at_unix_millis: t0 + 10 });
    expect(h.calls).toEqual([]);
    const cleared = (await h.call('/control/v2/actor', target('stop.host'))).body;
    expect([cleared['emergency_stopped'], cleared['emergency_stop_revision']]).toEqual([false, 2]);
  });

  it('clearing a never-set stop records revision 1; a controller that is not the owner is refused; it works while the host is offline', async () => {
    const h = server();
    const lent = actor('actor.lent', { owner_principal_id: 'player.two' });
    await hostWith(h, 'stop2.host', [actor('actor.one'), lent], 5_000);
    expect((await h.call('/control/v2/emergency-stop', { ...target('stop2.host'), active: false })).body['revision']).toBe(1);
    const notOwner = await h.call('/control/v2/emergency-stop', { ...target('stop2.host', 'actor.lent'), active: true });
    expect(notOwner.status).toBe(403);
    expect((await h.call('/control/v2/emergency-stop', { ...target('stop2.host', 'actor.none'), active: true })).status).toBe(404);
    expect((await h.call('/control/v2/emergency-stop', { ...target('stop2.host'), world_id: 'World', active: true })).body['code']).toBe('invalid');
    await h.clock.advance(5_000);
    const offline = await h.call('/control/v2/emergency-stop', { ...target('stop2.host'), active: true });
    expect(offline.status).toBe(200);
    expect(offline.body['revision']).toBe(2);
  });

  it('wait-actor wakes on an emergency stop change', async () => {
    const h = server();
    await hostWith(h, 'stop3.host', [actor('actor.one')]);
    // The stop is set once the wait is registered on the clock (whose deadline never comes by itself),
    // so only the stop can end it.
    const idle = h.clock.pending;
    const waiting = h.call('/control/v2/wait-actor', { ...target('stop3.host'), after_observation_seq: 1, after_authority_revision: 1, wait_millis: 25_000 });
    await h.clock.pendingAbove(idle, 'the wait');
    await h.call('/control/v2/emergency-stop', { ...target('stop3.host'), active: true });
    const update = await waiting;
    expect(update.body['changed']).toBe(true);
    expect((update.body['actor'] as Record<string, unknown>)['emergency_stop_revision']).toBe(1);
  });
});

describe('rin control core state across a restart', () => {
  for (const kind of ['pglite', 'postgres'] as DbKind[]) {
    const skip = kind === 'postgres' && !needPg();
    it.skipIf(skip)(`controller leases and emergency stops survive; expired leases are dropped [${kind}]${skip ? PG_SKIPPED : ''}`, async () => {
      const place = await dataPlace(kind);
      const clock = new VirtualTimers();
      try {
        const first = await openControl(place, { clock });
        await hostWith(first, 'rs.host', [actor('actor.one'), actor('actor.two')]);
        const kept = await acquire(first, 'rs.host', 'controller.one', 'actor.one', 60_000);
        const short = await acquire(first, 'rs.host', 'controller.two', 'actor.two', TTL);
        const stop = await first.call('/control/v2/emergency-stop', { ...target('rs.host'), active: true });
        await first.control.close();

        await clock.advance(TTL);
        const second = await openControl(place, { clock });
        try {
          const rows = await second.control.service.db.query<{ lease_id: string }>('SELECT lease_id FROM rin_controller_leases ORDER BY lease_id');
          expect(rows.map((r) => r.lease_id)).toEqual([kept.body['lease_id']]);
          expect(short.status).toBe(200);
          // Hosts are not stored: until the host registers and publishes again nothing is visible.
          expect((await second.call('/control/v2/controllers/get', target('rs.host'))).status).toBe(404);
          await hostWith(second, 'rs.host', [actor('actor.one'), actor('actor.two')]);
          expect((await second.call('/control/v2/controllers/get', target('rs.host'))).body).toEqual(kept.body);
          expect((await second.call('/control/v2/controllers/get', target('rs.host', 'actor.two'))).status).toBe(404);
          const view = (await second.call('/control/v2/actor', target('rs.host'))).body;
          expect([view['emergency_stopped'], view['emergency_stop_revision']]).toEqual([true, stop.body['revision']]);
          const off = await second.call('/control/v2/emergency-stop', { ...target('rs.host'), active: false });
          expect(off.body['revision']).toBe(2);
        } finally {
          await second.control.close();
        }
      } finally {
        await place.drop();
      }
    });
  }

  const noPg = !needPg();
  it.skipIf(noPg)(`a second server on the same PostgreSQL database is refused while the first runs${noPg ? PG_SKIPPED : ''}`, async () => {
    const place = await dataPlace('postgres');
    try {
      const first = await openControl(place);
      await expect(openControl(place)).rejects.toThrow('in use by another server');
      await first.control.close();
      const after = await openControl(place);
      await after.control.close();
    } finally {
      await place.drop();
    }
  });
});
