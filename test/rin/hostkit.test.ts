import { describe, expect, it } from 'vitest';
import { RawJson } from '../../ts/crypto/gojson.js';
import { RinError } from '../../ts/rin/errors.js';
import type { AdapterOperation, AdapterResult, HostAdapter } from '../../ts/rin/hostkit/adapter.js';
import { SerialDispatcher } from '../../ts/rin/hostkit/authority.js';
import { allowedDelivery, runHostKitConformance } from '../../ts/rin/hostkit/conformance.js';
import { AdapterCoordinator } from '../../ts/rin/hostkit/coordinator.js';
import type { ActionRequest, HostControlDelivery, Principal } from '../../ts/rin/types.js';
import { CAPABILITY } from '../../ts/rin/world/catalog.js';
import { harborConformanceScenario, harborRequest } from '../../ts/rin/world/conformance.js';
import { HarborWorld } from '../../ts/rin/world/harbor.js';

const PRINCIPAL: Principal = { id: 'player.one', granted_scopes: ['actor.execute'] };
const TARGET = { host_id: 'harbor.host', world_id: 'harbor', actor_id: 'gull' };

/** Counts every adapter call and lets a test replace what execute/verify/cancel return. */
function instrument(
  world: HarborWorld,
  alter: Partial<Record<'execute' | 'verify' | 'cancel', (r: AdapterResult, op: AdapterOperation) => AdapterResult>> = {},
) {
  const calls: Record<string, number> = {};
  const count = (name: string) => {
    calls[name] = (calls[name] ?? 0) + 1;
  };
  const adapter: HostAdapter = {
    manifest: () => world.manifest(),
    listCapabilities: () => (count('listCapabilities'), world.listCapabilities()),
    policyFacts: () => (count('policyFacts'), world.policyFacts()),
    snapshot: (t) => (count('snapshot'), world.snapshot(t)),
    observe: (q) => (count('observe'), world.observe(q)),
    bind: (t, r) => (count('bind'), world.bind(t, r)),
    preview: (t, r, b) => (count('preview'), world.preview(t, r, b)),
    execute: (op) => {
      count('execute');
      const r = world.execute(op);
      return alter.execute ? alter.execute(r, op) : r;
    },
    verify: (op) => {
      count('verify');
      const r = world.verify(op);
      return alter.verify ? alter.verify(r, op) : r;
    },
    cancel: (op) => {
      count('cancel');
      const r = world.cancel(op);
      return alter.cancel ? alter.cancel(r, op) : r;
    },
  };
  return { adapter, calls };
}

async function setup(alter?: Parameters<typeof instrument>[1]) {
  const world = new HarborWorld({ owner: 'player.one' });
  const { adapter, calls } = instrument(world, alter);
  const dispatcher = new SerialDispatcher();
  const coordinator = await AdapterCoordinator.create(adapter, dispatcher);
  return { world, adapter, calls, dispatcher, coordinator };
}

type Setup = Awaited<ReturnType<typeof setup>>;

async function request(s: Setup, capability: string, args: Record<string, unknown>, n: number): Promise<ActionRequest> {
  const snapshot = await s.coordinator.snapshotAction(TARGET);
  return harborRequest(s.coordinator.capabilities(), capability, args, snapshot, `request.test.${n}`, `key.test.${n}`);
}

async function deliver(s: Setup, req: ActionRequest, operationId: string): Promise<HostControlDelivery> {
  const { bound_action: bound, snapshot } = await s.coordinator.bindRequest(TARGET, req);
  return allowedDelivery(TARGET, PRINCIPAL, req, bound, snapshot, operationId);
}

async function rejects(work: Promise<unknown>): Promise<RinError> {
  const e = await work.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e, 'expected a refusal').toBeInstanceOf(RinError);
  return e as RinError;
}

describe('SerialDispatcher', () => {
  it('runs asynchronous work strictly one at a time, in order, and survives a failure', async () => {
    const d = new SerialDispatcher();
    const log: string[] = [];
    const slow = d.dispatch(async () => {
      log.push('a start');
      await new Promise((r) => setTimeout(r, 20));
      log.push('a end');
      return 1;
    });
    const failing = d.dispatch(() => {
      log.push('b');
      throw new Error('boom');
    });
    const fast = d.dispatch(() => {
      log.push('c');
      return 3;
    });
    expect(await slow).toBe(1);
    await expect(failing).rejects.toThrow('boom');
    expect(await fast).toBe(3);
    expect(log).toEqual(['a start', 'a end', 'b', 'c']);
    expect(d.dispatched).toBe(3);
  });
});

describe('HostKit conformance suite over the harbor', () => {
  it('passes every check of the contract', async () => {
    const report = await runHostKitConformance(harborConformanceScenario());
    expect(report).toMatchObject({
      capability_count: 7,
      effect_count: 1,
      idempotent_replay: true,
      reused_id_refused: true,
      stale_rejected: true,
      restart_rejected: true,
      cancellation_works: true,
    });
    expect(report.dispatched).toBeGreaterThan(10);
  });

  it('fails, naming the step, for an adapter whose action changes nothing', async () => {
    const scenario = harborConformanceScenario();
    await expect(runHostKitConformance({ ...scenario, stateDigest: () => 'constant' })).rejects.toThrow(
      /^execute: the action produced no observable game change/,
    );
  });

  it('fails for an adapter that does not refuse a stale binding', async () => {
    const scenario = harborConformanceScenario();
    // An "event" that changes nothing the adapter checks: the prepared delivery still executes.
    await expect(runHostKitConformance({ ...scenario, advanceObservation: () => scenario.world.tick() })).rejects.toThrow(
      /^stale binding: the adapter accepted it/,
    );
  });
});

describe('AdapterCoordinator', () => {
  it('executes a replayed delivery exactly once, also when the replays arrive together', async () => {
    const s = await setup();
    const d = await deliver(s, await request(s, CAPABILITY.load, { crates: 3 }, 1), 'operation.one');
    const crates = s.world.crates;
    const results = await Promise.all([s.coordinator.executeDelivery(d), s.coordinator.executeDelivery(d), s.coordinator.executeDelivery(d)]);
    expect(s.calls.execute).toBe(1);
    expect(s.world.crates).toBe(crates - 3);
    expect(s.world.boat('gull').cargo).toBe(3);
    expect(new Set(results.map((r) => JSON.stringify(r))).size).toBe(1);
    expect(results[0]?.run.status).toBe('succeeded');
    expect(results[0]?.output?.text).toBe('{"cargo":3,"crates_on_dock":37}');
    // Later redelivery (a new attempt number) is still the same operation.
    const again = await s.coordinator.executeDelivery({ ...d, delivery_attempt: 2 });
    expect(again).toEqual(results[0]);
    expect(s.calls.execute).toBe(1);
  });

  it('refuses the same operation id with a different bound action', async () => {
    const s = await setup();
    const first = await deliver(s, await request(s, CAPABILITY.load, { crates: 1 }, 1), 'operation.one');
    await s.coordinator.executeDelivery(first);
    const other = await deliver(s, await request(s, CAPABILITY.load, { crates: 2 }, 2), 'operation.one');
    const digest = s.world.stateDigest();
    const e = await rejects(s.coordinator.executeDelivery(other));
    expect(e.code).toBe('conflict');
    expect(e.message).toMatch(/reused for a different bound action/);
    expect(s.world.stateDigest()).toBe(digest);
    expect(s.calls.execute).toBe(1);
  });

  it('refuses before execution a binding the harbor changed under (one event)', async () => {
    const s = await setup();
    const d = await deliver(s, await request(s, CAPABILITY.load, { crates: 1 }, 1), 'operation.one');
    await s.dispatcher.dispatch(() => s.world.squall());
    const before = s.world.stateDigest();
    const e = await rejects(s.coordinator.executeDelivery(d));
    expect(e.code).toBe('stale');
    expect(s.world.stateDigest()).toBe(before);
    expect(s.world.boat('gull').cargo).toBe(0);
  });

  it('refuses an observation more than 8 behind, a new host epoch and an expired binding without calling execute', async () => {
    const s = await setup();
    const behind = await deliver(s, await request(s, CAPABILITY.load, { crates: 1 }, 1), 'operation.behind');
    for (let i = 0; i < 9; i++) await s.dispatcher.dispatch(() => s.world.squall());
    expect((await rejects(s.coordinator.executeDelivery(behind))).message).toMatch(/observation_sequence/);

    const old = await deliver(s, await request(s, CAPABILITY.load, { crates: 1 }, 2), 'operation.old');
    await s.dispatcher.dispatch(() => s.world.restart());
    expect((await rejects(s.coordinator.executeDelivery(old))).message).toMatch(/stale host epoch/);

    const late = await deliver(s, await request(s, CAPABILITY.load, { crates: 1 }, 3), 'operation.late');
    // Ticks move the step clock past valid_until (now + the 30-step budget) without touching the boat.
    for (let i = 0; i < 30; i++) await s.dispatcher.dispatch(() => s.world.tick());
    expect((await rejects(s.coordinator.executeDelivery(late))).message).toMatch(/valid_until/);
    expect(s.calls.execute ?? 0).toBe(0);
    expect(s.world.boat('gull').cargo).toBe(0);
  });

  it('validates the request before the adapter binds it', async () => {
    const s = await setup();
    const req = await request(s, CAPABILITY.load, { crates: 1 }, 1);
    await rejects(s.coordinator.bindRequest(TARGET, { ...req, spec_digest: 'f'.repeat(64) }));
    await rejects(s.coordinator.bindRequest(TARGET, { ...req, arguments: new RawJson('{"crates":1,"safe":true}') }));
    await rejects(s.coordinator.bindRequest(TARGET, { ...req, expected_epoch: { ...req.expected_epoch, host: 2 } }));
    await rejects(s.coordinator.bindRequest({ ...TARGET, actor_id: 'tern' }, req));
    expect(s.calls.bind ?? 0).toBe(0);
    const ok = await s.coordinator.bindRequest(TARGET, req);
    expect(ok.bound_action.effect_preview.map((e) => e.kind)).toEqual(['harbor.cargo']);
    expect(ok.snapshot.observation_sequence).toBe(req.observation_sequence);
  });

  it('refuses deliveries that are not one allowed, matching tuple', async () => {
    const s = await setup();
    const d = await deliver(s, await request(s, CAPABILITY.load, { crates: 1 }, 1), 'operation.one');
    const deny = { ...d, request: { ...d.request, policy_decision: { ...d.request.policy_decision, result: 'require_confirmation' as const } } };
    expect((await rejects(s.coordinator.executeDelivery(deny))).message).toMatch(/allow policy decision/);
    const noScope = {
      ...d,
      request: { ...d.request, principal: { id: 'player.one', granted_scopes: ['actor.read'] }, policy_decision: d.request.policy_decision },
    };
    expect((await rejects(s.coordinator.executeDelivery(noScope))).message).toMatch(/actor.execute/);
    const otherDigest = { ...d, request: { ...d.request, policy_decision: { ...d.request.policy_decision, effect_digest: '0'.repeat(64) } } };
    expect((await rejects(s.coordinator.executeDelivery(otherDigest))).message).toMatch(/does not match bound action/);
    expect(s.calls.execute ?? 0).toBe(0);
  });

  const lies: Array<[string, (r: AdapterResult, op: AdapterOperation) => AdapterResult, RegExp]> = [
    ['success without output', (r) => ({ run: r.run, ...(r.outcome ? { outcome: r.outcome } : {}) }), /no structured Output/],
    ['output outside the schema', (r) => ({ ...r, output: new RawJson('{"cargo":"lots","crates_on_dock":1}') }), /Output/],
    ['output with an extra member', (r) => ({ ...r, output: new RawJson('{"cargo":1,"crates_on_dock":1,"bonus":1}') }), /Output/],
    ['a run for another operation', (r) => ({ ...r, run: { ...r.run, operation_id: 'operation.other' } }), /does not match delivery/],
    ['a terminal run without outcome', (r) => ({ run: r.run, ...(r.output ? { output: r.output } : {}) }), /Outcome presence/],
    [
      'an outcome at another epoch',
      (r) => ({ ...r, ...(r.outcome ? { outcome: { ...r.outcome, epoch: { ...r.outcome.epoch, timeline: 9 } } } : {}) }),
      /bound timeline/,
    ],
    ['an outcome before the bound observation', (r) => ({ ...r, ...(r.outcome ? { outcome: { ...r.outcome, world_seq: 1 } } : {}) }), /bound timeline/],
    ['progress above 100', (r) => ({ ...r, run: { ...r.run, progress: 101 } }), /progress/],
  ];
  for (const [what, lie, message] of lies) {
    it(`refuses an adapter result with ${what}`, async () => {
      const s = await setup({ execute: lie });
      // One unrelated event first, so the bound observation is above the first sequence.
      await s.dispatcher.dispatch(() => s.world.squall());
      const d = await deliver(s, await request(s, CAPABILITY.load, { crates: 1 }, 1), 'operation.one');
      const e = await rejects(s.coordinator.executeDelivery(d));
      expect(e.message).toMatch(message);
      expect(s.coordinator.result('operation.one')).toBeUndefined();
    });
  }

  it('refuses output on a running operation and progress that moves backwards', async () => {
    const s = await setup({
      verify: (r) => (r.run.progress_seq > 2 ? { ...r, run: { ...r.run, progress: 0, progress_seq: r.run.progress_seq } } : r),
    });
    const d = await deliver(s, await request(s, CAPABILITY.sail, { distance: 4 }, 1), 'operation.sail');
    const running = await s.coordinator.executeDelivery(d);
    expect(running.run.status).toBe('running');
    await s.dispatcher.dispatch(() => s.world.tick());
    expect((await s.coordinator.verify('operation.sail')).run.progress).toBe(25);
    await s.dispatcher.dispatch(() => s.world.tick());
    const e = await rejects(s.coordinator.verify('operation.sail'));
    expect(e.message).toMatch(/moved backwards/);

    const t = await setup({ execute: (r) => ({ ...r, output: new RawJson('{"miles_sailed":1,"total_miles":1}') }) });
    const d2 = await deliver(t, await request(t, CAPABILITY.sail, { distance: 4 }, 1), 'operation.sail');
    expect((await rejects(t.coordinator.executeDelivery(d2))).message).toMatch(/non-terminal adapter result contains Output/);
  });

  it('refuses to cancel a capability without cancellation, before the adapter is asked', async () => {
    const s = await setup();
    const d = await deliver(s, await request(s, CAPABILITY.load, { crates: 1 }, 1), 'operation.one');
    await s.coordinator.executeDelivery(d);
    const e = await rejects(s.coordinator.cancel('operation.one'));
    expect(e.message).toMatch(/does not support cancellation/);
    expect(s.calls.cancel ?? 0).toBe(0);
    expect((await rejects(s.coordinator.cancel('operation.unknown'))).code).toBe('not_found');
  });

  it('reports a long voyage through verify and honours a cooperative cancel', async () => {
    const s = await setup();
    const d = await deliver(s, await request(s, CAPABILITY.sail, { distance: 4 }, 1), 'operation.sail');
    const first = await s.coordinator.executeDelivery(d);
    expect(first.run).toMatchObject({ status: 'running', progress: 0 });
    await s.dispatcher.dispatch(() => s.world.tick());
    const half = await s.coordinator.verify('operation.sail');
    expect(half.run).toMatchObject({ status: 'running', progress: 25 });
    expect(half.run.progress_seq).toBeGreaterThan(first.run.progress_seq);
    expect(s.coordinator.unfinished()).toEqual(['operation.sail']);
    expect(s.coordinator.forgetOperation('operation.sail')).toBe(false);
    const cancelled = await s.coordinator.cancel('operation.sail');
    expect(cancelled.run.status).toBe('cancelled');
    expect(cancelled.outcome).toMatchObject({ status: 'cancelled', code: 'harbor.cancelled' });
    expect(s.world.boat('gull')).toMatchObject({ berth: 'dock', miles: 1 });
    expect(s.coordinator.unfinished()).toEqual([]);
    expect(s.coordinator.forgetOperation('operation.sail')).toBe(true);
  });

  it('checks observations against the query and normalizes policy facts', async () => {
    const s = await setup();
    const snapshot = await s.coordinator.snapshotAction(TARGET);
    const query = { query_id: 'query.one', ...TARGET, expected_epoch: snapshot.epoch, limit: 16 };
    const envelope = await s.coordinator.observe(query);
    expect(envelope).toMatchObject({ actor_id: 'gull', sequence: snapshot.observation_sequence });
    await rejects(s.coordinator.observe({ ...query, expected_epoch: { ...snapshot.epoch, world: 2 } }));
    await rejects(s.coordinator.observe({ ...query, after_sequence: snapshot.observation_sequence + 1 }));

    const facts = await s.coordinator.policyFacts(TARGET);
    expect(facts.known_scopes).toEqual(['harbor.public', 'harbor.slipway']);
    const world = new HarborWorld({ owner: 'player.one' });
    const make = (kinds: string[]) =>
      AdapterCoordinator.create(
        { ...instrument(world).adapter, policyFacts: () => ({ known_effect_kinds: kinds, known_scopes: ['b.scope', 'a.scope'] }) },
        new SerialDispatcher(),
      );
    expect(await (await make(['z.kind', 'a.kind'])).policyFacts(TARGET)).toEqual({
      known_effect_kinds: ['a.kind', 'z.kind'],
      known_scopes: ['a.scope', 'b.scope'],
    });
    await rejects((await make(['a.kind', 'a.kind'])).policyFacts(TARGET));
    await rejects((await make([])).policyFacts(TARGET));
    await rejects((await make(['x'.repeat(129)])).policyFacts(TARGET));
  });

  it('types a game exception as internal, naming the adapter call, and caches nothing', async () => {
    const s = await setup({
      execute: () => {
        throw new TypeError('the crane broke');
      },
    });
    const d = await deliver(s, await request(s, CAPABILITY.load, { crates: 1 }, 1), 'operation.one');
    const e = await rejects(s.coordinator.executeDelivery(d));
    expect(e).toMatchObject({ code: 'internal', message: 'adapter execute: the crane broke' });
    expect(s.coordinator.result('operation.one')).toBeUndefined();
  });

  it('refuses an adapter with an invalid manifest or no capabilities', async () => {
    const world = new HarborWorld({ owner: 'player.one' });
    const adapter = instrument(world).adapter;
    await rejects(
      AdapterCoordinator.create({ ...adapter, manifest: () => ({ ...world.manifest(), contract_version: 'rin.host/v1' }) }, new SerialDispatcher()),
    );
    await rejects(AdapterCoordinator.create({ ...adapter, listCapabilities: () => [] }, new SerialDispatcher()));
    const client = {
      ...world.manifest(),
      authority: 'client-advisory' as const,
      durability: {
        ...world.manifest().durability,
        profile: 'idempotent-action' as const,
        stable_identity: true,
        durable_before_network: true,
        durable_outbox: true,
        idempotent_apply: true,
      },
    };
    await rejects(AdapterCoordinator.create({ ...adapter, manifest: () => client }, new SerialDispatcher()));
  });
});
