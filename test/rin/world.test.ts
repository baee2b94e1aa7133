import { describe, expect, it } from 'vitest';
import { goJsonEncode } from '../../ts/crypto/gojson.js';
import type { AdapterResult } from '../../ts/rin/hostkit/adapter.js';
import { SerialDispatcher } from '../../ts/rin/hostkit/authority.js';
import { AdapterCoordinator } from '../../ts/rin/hostkit/coordinator.js';
import { validateAgainstSchema } from '../../ts/rin/schema.js';
import { allowedDelivery } from '../../ts/rin/hostkit/conformance.js';
import type { ActionRequest } from '../../ts/rin/types.js';
import { SCHEMA_DIALECT } from '../../ts/rin/types.js';
import { CAPABILITY, EFFECT_KINDS, EFFECT_SCOPES, harborObservationSchema } from '../../ts/rin/world/catalog.js';
import { harborRequest } from '../../ts/rin/world/conformance.js';
import { HarborWorld } from '../../ts/rin/world/harbor.js';

const PRINCIPAL = { id: 'player.one', granted_scopes: ['actor.execute'] };

async function harbor() {
  const world = new HarborWorld({ owner: 'player.one' });
  const dispatcher = new SerialDispatcher();
  const coordinator = await AdapterCoordinator.create(world, dispatcher);
  let n = 0;
  const target = (actor: string) => ({ host_id: 'harbor.host', world_id: 'harbor', actor_id: actor });
  /** Binds and executes one request as an allowed delivery; returns the operation id and first result. */
  const run = async (actor: string, capability: string, args: Record<string, unknown>, targetRefs?: ActionRequest['target_refs']) => {
    n += 1;
    const snapshot = await coordinator.snapshotAction(target(actor));
    const req = harborRequest(coordinator.capabilities(), capability, args, snapshot, `request.${n}`, `key.${n}`, {
      actorId: actor,
      ...(targetRefs ? { targetRefs } : {}),
    });
    const { bound_action: bound } = await coordinator.bindRequest(target(actor), req);
    const delivery = allowedDelivery(target(actor), PRINCIPAL, req, bound, snapshot, `operation.${n}`);
    return { id: `operation.${n}`, bound, result: await coordinator.executeDelivery(delivery) };
  };
  const tick = () => dispatcher.dispatch(() => world.tick());
  const observe = async (actor: string) => {
    const s = await coordinator.snapshotAction(target(actor));
    return coordinator.observe({ query_id: 'query.test', ...target(actor), expected_epoch: s.epoch, limit: 64 });
  };
  return { world, coordinator, dispatcher, run, tick, observe, target };
}

describe('the harbor catalog', () => {
  it('covers every kind of capability, each schema a closed 2020-12 object, and seals in the registry', async () => {
    const { coordinator } = await harbor();
    const specs = coordinator.capabilities().specs;
    expect(specs.map((s) => s.capability.id)).toEqual([
      'harbor.inspect',
      'harbor.load-cargo',
      'harbor.repair',
      'harbor.sail',
      'harbor.scuttle',
      'harbor.shift',
      'harbor.tow',
    ]);
    expect(new Set(specs.map((s) => s.kind))).toEqual(new Set(['atomic', 'macro']));
    expect(new Set(specs.map((s) => s.execution))).toEqual(new Set(['immediate', 'queued', 'long-running']));
    expect(new Set(specs.map((s) => s.cancellation))).toEqual(new Set(['unsupported', 'cooperative']));
    expect(new Set(specs.map((s) => s.risk_floor))).toEqual(new Set(['low', 'moderate', 'high', 'critical']));
    const macro = specs.filter((s) => s.kind === 'macro');
    expect(macro.map((s) => [s.capability.id, s.produces_child_operations])).toEqual([['harbor.shift', true]]);
    for (const spec of specs) {
      expect(spec.digest).toMatch(/^[0-9a-f]{64}$/);
      for (const schema of [spec.input, spec.output, spec.effect_schema]) {
        const doc = JSON.parse(schema.document.text) as Record<string, unknown>;
        expect(schema.dialect).toBe(SCHEMA_DIALECT);
        expect(doc).toMatchObject({ $schema: SCHEMA_DIALECT, type: 'object', additionalProperties: false });
      }
    }
  });

  it('derives effects only from the harbor, never from the request', async () => {
    const { coordinator, world, target } = await harbor();
    const snapshot = await coordinator.snapshotAction(target('gull'));
    const effectsOf = async (capability: string, args: Record<string, unknown>) =>
      (await coordinator.bindRequest(target('gull'), harborRequest(coordinator.capabilities(), capability, args, snapshot, 'request.x', 'key.x'))).bound_action
        .effect_preview;
    const [load] = await effectsOf(CAPABILITY.load, { crates: 2 });
    expect(load).toMatchObject({ kind: 'harbor.cargo', operation: 'transfer', ownership: 'actor', reversible: true, risk: 'low', quantity: 2, unit: 'crate' });
    expect(load?.attributes.text).toBe(`{"crates_on_dock":${world.crates}}`);
    const [repair] = await effectsOf(CAPABILITY.repair, {});
    expect(repair).toMatchObject({ kind: 'harbor.repair', ownership: 'shared', reversible: false, risk: 'moderate' });
    const [scuttle] = await effectsOf(CAPABILITY.scuttle, {});
    expect(scuttle).toMatchObject({ kind: 'harbor.vessel', operation: 'delete', risk: 'critical' });
    const facts = await coordinator.policyFacts(target('gull'));
    expect(facts).toEqual({ known_effect_kinds: EFFECT_KINDS, known_scopes: EFFECT_SCOPES });
  });
});

describe('the harbor world', () => {
  it('refuses, when given its authority thread, any call made outside it', async () => {
    const dispatcher = new SerialDispatcher();
    const world = new HarborWorld({ owner: 'player.one', authority: dispatcher });
    const coordinator = await AdapterCoordinator.create(world, dispatcher);
    expect(() => world.tick()).toThrow(/tick ran outside the authority thread/);
    expect(() => world.snapshot({ host_id: 'h', world_id: 'harbor', actor_id: 'gull' })).toThrow(/outside the authority thread/);
    await dispatcher.dispatch(() => world.tick());
    expect((await coordinator.snapshotAction({ host_id: 'h', world_id: 'harbor', actor_id: 'gull' })).now.value).toBe(2);
  });

  it('is deterministic: the same actions give the same states, observations and results', async () => {
    const play = async () => {
      const h = await harbor();
      const out: unknown[] = [];
      out.push((await h.run('gull', CAPABILITY.load, { crates: 5 })).result);
      out.push((await h.run('tern', CAPABILITY.sail, { distance: 2 })).result);
      await h.tick();
      await h.tick();
      out.push(await h.coordinator.verify('operation.2'));
      out.push(await h.observe('gull'));
      return { digest: h.world.stateDigest(), out: goJsonEncode(out) };
    };
    const a = await play();
    const b = await play();
    expect(a).toEqual(b);
    expect(a.out).toContain('"status":"succeeded"');
  });

  it('publishes observations valid against their payload schema, sequence counting state changes', async () => {
    const h = await harbor();
    const before = await h.observe('gull');
    expect(before.sequence).toBe(1);
    expect(before.schema_ref.sha256).toBe(harborObservationSchema().sha256);
    validateAgainstSchema(harborObservationSchema(), before.payload.text);
    await h.run('gull', CAPABILITY.load, { crates: 4 });
    const after = await h.observe('gull');
    expect(after.sequence).toBe(2);
    validateAgainstSchema(harborObservationSchema(), after.payload.text);
    expect(JSON.parse(after.payload.text)).toMatchObject({ boat: { cargo: 4 }, dock: { crates: 36 } });
    expect(after.resources?.map((r) => [r.ref.key, r.ownership])).toEqual([
      ['gull', 'actor'],
      ['tern', 'player'],
      ['puffin', 'player'],
    ]);
    expect(after.facts?.find((f) => f.fact_id === 'cargo')?.value.text).toBe('4');
  });

  it('sails a long-running voyage one mile per tick, its output valid against the output schema', async () => {
    const h = await harbor();
    const { result } = await h.run('gull', CAPABILITY.sail, { distance: 3 });
    expect(result.run).toMatchObject({ status: 'running', progress: 0 });
    expect(h.world.boat('gull').berth).toBe('sea');
    const seen: AdapterResult[] = [];
    for (let i = 0; i < 3; i++) {
      await h.tick();
      seen.push(await h.coordinator.verify('operation.1'));
    }
    expect(seen.map((r) => [r.run.status, r.run.progress])).toEqual([
      ['running', 33],
      ['running', 66],
      ['succeeded', 100],
    ]);
    expect(seen[2]?.output?.text).toBe('{"miles_sailed":3,"total_miles":3}');
    expect(seen[2]?.outcome).toMatchObject({ status: 'succeeded', world_seq: h.world.sequence });
    expect(h.world.boat('gull')).toMatchObject({ berth: 'dock', miles: 3 });
  });

  it('queues repairs on the one slipway, in order, and lets a queued repair be cancelled', async () => {
    const h = await harbor();
    await h.dispatcher.dispatch(() => h.world.squall());
    const first = await h.run('gull', CAPABILITY.repair, {});
    const second = await h.run('tern', CAPABILITY.repair, {});
    const third = await h.run('puffin', CAPABILITY.repair, {});
    expect([first, second, third].map((r) => r.result.run.status)).toEqual(['queued', 'queued', 'queued']);
    const cancelled = await h.coordinator.cancel(third.id);
    expect(cancelled.outcome).toMatchObject({ status: 'cancelled' });
    const statuses: string[] = [];
    for (let i = 0; i < 6; i++) {
      await h.tick();
      statuses.push(`${(await h.coordinator.verify(first.id)).run.status}/${(await h.coordinator.verify(second.id)).run.status}`);
    }
    expect(statuses).toEqual(['running/queued', 'running/queued', 'succeeded/queued', 'succeeded/running', 'succeeded/running', 'succeeded/succeeded']);
    expect(h.world.boat('gull').hull).toBe(100);
    expect(h.world.boat('puffin')).toMatchObject({ hull: 90, berth: 'dock' });
  });

  it('runs a macro shift until its steps are done, and refuses what the harbor cannot do', async () => {
    const h = await harbor();
    const shift = await h.run('gull', CAPABILITY.shift, { steps: 2 });
    expect(shift.result.run.status).toBe('running');
    await h.tick();
    await h.tick();
    expect((await h.coordinator.verify(shift.id)).output?.text).toBe('{"steps":2}');

    // Bind refuses: too many crates, a boat at sea, towing a boat at the dock.
    await expect(h.run('tern', CAPABILITY.load, { crates: 13 })).rejects.toThrow(/holds at most 12/);
    await h.run('tern', CAPABILITY.sail, { distance: 5 });
    await expect(h.run('tern', CAPABILITY.load, { crates: 1 })).rejects.toThrow(/not at the dock/);
    const ternRef = (await h.observe('gull')).resources?.find((r) => r.ref.key === 'tern')?.ref;
    const puffinRef = (await h.observe('gull')).resources?.find((r) => r.ref.key === 'puffin')?.ref;
    await expect(h.run('gull', CAPABILITY.tow, {}, puffinRef ? [puffinRef] : [])).rejects.toThrow(/not at sea/);
    const tow = await h.run('gull', CAPABILITY.tow, {}, ternRef ? [ternRef] : []);
    expect(tow.bound.resolved_targets?.map((r) => r.key)).toEqual(['tern']);
    expect(tow.result.output?.text).toBe('{"towed":"tern"}');
    // The towed voyage was interrupted by the environment.
    expect((await h.coordinator.verify('operation.3')).outcome).toMatchObject({ status: 'interrupted', code: 'harbor.towed' });
    const scuttle = await h.run('puffin', CAPABILITY.scuttle, {});
    expect(scuttle.result.output?.text).toBe('{"sunk":true}');
    expect(h.world.describe()[0]?.actors.map((a) => a.actor_id)).toEqual(['gull', 'tern']);
  });
});
