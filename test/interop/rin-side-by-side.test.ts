/**
 * Our control daemon beside the reference one: the same requests through the reference JS SDK
 * (unmodified), each daemon with its own copy of our harbor attached, must get the same answers — the
 * same refusal code and HTTP status (and text, for the control plane's own refusals), and operation
 * views of the same shape with the same policy decisions, statuses and outcomes. Values that are
 * random or timed (ids, timestamps, cursors, lease ids) are compared by shape only.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RawJson } from '../../ts/crypto/gojson.js';
import { RinControlClient } from '../../ts/rin/client.js';
import type { ServedRinControl } from '../../ts/rin/control/service.js';
import { actionRequestDigest } from '../../ts/rin/digest.js';
import type { ActionRequest } from '../../ts/rin/types.js';
import { tempDir } from '../shared/tmp.js';
import {
  attachHarbor,
  describeWithReference,
  importReferenceSdk,
  RIN_TOKEN,
  serveOurDaemon,
  startGoDaemon,
  type AttachedHarbor,
  type Daemon,
} from './rin-harness.js';

type Json = any;
type Sdk = Record<string, (input?: unknown) => Promise<Json>>;

/** The structure of a JSON value: member names and value types, not values. */
function shape(v: Json): Json {
  if (Array.isArray(v)) return v.map(shape);
  if (v !== null && typeof v === 'object')
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, shape(v[k])]),
    );
  return v === null ? 'null' : typeof v;
}

/** What must agree between the two daemons in an operation view. */
function meaning(op: Json): Json {
  return {
    status: op.status,
    terminal: op.terminal,
    execution_confirmed: op.execution_confirmed,
    reconciliation_pending: op.reconciliation_pending,
    cancel_requested: op.cancel_requested,
    rejection_code: op.rejection_code,
    rejection_message: op.rejection_message,
    policy: op.policy_decision && {
      result: op.policy_decision.result,
      reason_code: op.policy_decision.reason_code,
      matched_rule_ids: op.policy_decision.matched_rule_ids,
      human_summary: op.policy_decision.human_summary,
      challenge: op.policy_decision.confirmation_challenge !== undefined,
    },
    effects: op.bound_action?.effect_preview,
    arguments: op.action_request?.arguments,
    outcome: op.outcome && { status: op.outcome.status, code: op.outcome.code, summary: op.outcome.summary, world_seq: op.outcome.world_seq },
    output: op.output,
  };
}

describeWithReference('our control daemon answers as the reference one does', () => {
  let go: Daemon;
  let ours: ServedRinControl;
  const attached: AttachedHarbor[] = [];
  const log: string[] = [];
  let Client: new (base: string, o: { token: string }) => Sdk;
  const target = { host_id: 'harbor-host', world_id: 'harbor', actor_id: 'gull' };

  beforeAll(async () => {
    Client = (await importReferenceSdk())['RinControlClient'] as typeof Client;
    go = await startGoDaemon(tempDir('rin-side-go'));
    ours = await serveOurDaemon(log);
    attached.push(await attachHarbor(go.url), await attachHarbor(ours.url));
    // Every test submits as this controller (the discovery test's acquire then renews the lease).
    for (const url of [go.url, ours.url])
      await new Client(url, { token: RIN_TOKEN })['acquireController']!({ ...target, controller_id: 'controller.side', lease_ttl_millis: 300_000 });
  });
  afterAll(async () => {
    for (const a of attached) await a.stop();
    await ours?.close();
    await go?.stop();
  });

  /** Runs `script` against both daemons (reference first) and returns both transcripts. */
  async function both(script: (c: Sdk, world: AttachedHarbor) => Promise<Json[]>): Promise<[Json[], Json[]]> {
    const ref = await script(new Client(go.url, { token: RIN_TOKEN }), attached[0]!);
    const mine = await script(new Client(ours.url, { token: RIN_TOKEN }), attached[1]!);
    return [ref, mine];
  }

  /** Our transcript equals the reference's; a difference carries our daemon's recent log. */
  function same(mine: Json[], ref: Json[]): void {
    try {
      expect(mine).toEqual(ref);
    } catch (e) {
      throw new Error(`${e instanceof Error ? e.message : String(e)}\n--- our daemon's log:\n${log.slice(-40).join('\n')}`);
    }
  }

  /** The answer, or the refusal as [code, status, message]. */
  async function attempt(f: () => Promise<Json>): Promise<Json> {
    try {
      return { ok: await f() };
    } catch (e) {
      const err = e as { code?: string; status?: number; message?: string };
      return { refused: [err.code, err.status, err.message] };
    }
  }

  async function request(c: Sdk, capability: string, args: Json, tag: string, change: (r: Json) => void = () => undefined): Promise<Json> {
    const obs = await c['observeActor']!(target);
    const spec = (await c['listCapabilities']!(target)).specs.find((s: Json) => s.capability.id === capability);
    const action_request = {
      request_id: `request.${tag}`,
      controller_id: 'controller.side',
      actor_id: target.actor_id,
      capability: spec.capability,
      spec_digest: spec.digest,
      arguments: args,
      expected_epoch: obs.epoch,
      observation_sequence: obs.sequence,
      task_id: `task.${tag}`,
      idempotency_key: `key.${tag}`,
    };
    change(action_request);
    return { host_id: target.host_id, world_id: target.world_id, action_request };
  }

  async function untilTerminal(c: Sdk, world: AttachedHarbor, op: Json): Promise<Json> {
    const end = Date.now() + 30_000;
    while (!op.terminal && Date.now() < end) {
      await world.tick();
      op = (await c['waitOperation']!({ operation_id: op.operation_id, after_cursor: op.cursor, wait_millis: 200 })).operation;
    }
    return op;
  }

  it('discovery and controller leases', async () => {
    const [ref, mine] = await both(async (c) => [
      // The configured scopes were not sorted: the reference lists them sorted.
      await attempt(() => c['info']!()),
      shape((await attempt(() => c['listWorlds']!())).ok),
      await attempt(() => c['observeActor']!({ ...target, actor_id: 'nobody' })),
      await attempt(() => c['acquireController']!({ ...target, controller_id: 'controller.side', lease_ttl_millis: 10 })),
      shape(await attempt(() => c['acquireController']!({ ...target, controller_id: 'controller.side', lease_ttl_millis: 60_000 }))),
      await attempt(() => c['acquireController']!({ ...target, controller_id: 'controller.other', lease_ttl_millis: 60_000 })),
      await attempt(() => c['releaseController']!({ ...target, lease_id: 'controller-lease.00' })),
      shape(await attempt(() => c['getActor']!(target))),
      shape(await attempt(() => c['observeActor']!(target))),
      await attempt(async () => (await c['listCapabilities']!(target)).specs.map((s: Json) => [s.capability, s.digest])),
      await attempt(() => c['describeCapability']!({ ...target, capability: { id: 'harbor.repair', version: '9.9.9' } })),
    ]);
    same(mine, ref);
  });

  it('refusals of a submission', async () => {
    const [ref, mine] = await both(async (c) => [
      await attempt(async () => c['submitAction']!(await request(c, 'harbor.inspect', {}, 'digest', (r) => (r.spec_digest = '0'.repeat(64))))),
      await attempt(async () => c['submitAction']!(await request(c, 'harbor.load-cargo', { crates: 999 }, 'args'))),
      await attempt(async () =>
        c['submitAction']!(await request(c, 'harbor.inspect', {}, 'epoch', (r) => (r.expected_epoch = { ...r.expected_epoch, world: 2 }))),
      ),
      await attempt(async () => c['submitAction']!(await request(c, 'harbor.inspect', {}, 'ahead', (r) => (r.observation_sequence += 5)))),
      await attempt(async () => c['submitAction']!(await request(c, 'harbor.inspect', {}, 'controller', (r) => (r.controller_id = 'controller.other')))),
      await attempt(() => c['waitOperation']!({ operation_id: 'operation.0123456789abcdef0123456789abcdef', wait_millis: 30_000 })),
      await attempt(() => c['getOperation']!({ operation_id: 'operation.0123456789abcdef0123456789abcdef' })),
      await attempt(() => c['getTaskTimeline']!({ task_id: 'task.none' })),
    ]);
    same(mine, ref);
  });

  it('a body with an unknown member is refused with the same code and status', async () => {
    const [ref, mine] = await both(async (c) => [
      (await attempt(async () => c['submitAction']!({ ...(await request(c, 'harbor.inspect', {}, 'member')), smuggled: true }))).refused.slice(0, 2),
    ]);
    same(mine, ref);
    expect(ref).toEqual([['invalid', 400]]);
  });

  it('allowed, denied, confirmed and cancelled operations', async () => {
    const [ref, mine] = await both(async (c, world) => {
      const out: Json[] = [];
      const allowed = await c['submitAction']!(await request(c, 'harbor.load-cargo', { crates: 2 }, 'load'));
      out.push(meaning(allowed));
      const done = await untilTerminal(c, world, allowed);
      out.push(meaning(done), shape(done));
      const denied = await c['submitAction']!(await request(c, 'harbor.scuttle', {}, 'scuttle'));
      out.push(meaning(denied), shape(denied), meaning(await c['confirmAction']!({ operation_id: denied.operation_id })));
      const asked = await c['submitAction']!(await request(c, 'harbor.repair', {}, 'repair'));
      out.push(meaning(asked), shape(asked));
      const confirmed = await c['confirmAction']!({ operation_id: asked.operation_id });
      const repaired = await untilTerminal(c, world, confirmed);
      out.push(meaning(repaired), shape(repaired));
      const sail = await c['submitAction']!(await request(c, 'harbor.sail', { distance: 40 }, 'sail'));
      let running = sail;
      for (let i = 0; i < 50 && running.status !== 'running'; i++) {
        await world.tick();
        running = (await c['waitOperation']!({ operation_id: sail.operation_id, after_cursor: running.cursor, wait_millis: 200 })).operation;
      }
      out.push(running.status);
      const cancelling = await c['cancelOperation']!({ operation_id: sail.operation_id });
      out.push(cancelling.cancel_requested);
      const cancelled = await untilTerminal(c, world, cancelling);
      out.push(meaning(cancelled).status, meaning(cancelled).outcome?.code);
      const timeline = await c['getTaskTimeline']!({ task_id: 'task.repair' });
      out.push(shape({ ...timeline, events: [] }), [...new Set(timeline.events.map((e: Json) => e.event_kind))].sort());
      return out;
    });
    same(mine, ref);
  });

  it('carries raw argument lexemes byte for byte, to the same request digest', async () => {
    // Sent through our client (the SDK's JSON.stringify would turn 2.0 into 2): Go keeps the lexeme and
    // re-derives the digest our host sealed, so a difference in canonical JSON would be refused there.
    const texts: Json[] = [];
    for (const [i, url] of [go.url, ours.url].entries()) {
      const c = new RinControlClient({ baseUrl: url, token: RIN_TOKEN });
      const actor = await c.getActor(target);
      const spec = await c.describeCapability({ ...target, capability: { id: 'harbor.load-cargo', version: '1.0.0' } });
      const request: ActionRequest = {
        request_id: 'request.lexeme',
        controller_id: 'controller.side',
        actor_id: target.actor_id,
        capability: spec.capability,
        spec_digest: spec.digest,
        arguments: new RawJson('{ "crates" : 2.0 }'),
        expected_epoch: actor.epoch,
        observation_sequence: actor.observation_seq,
        idempotency_key: 'key.lexeme',
      };
      const op = await c.submitAction({ host_id: target.host_id, world_id: target.world_id, action_request: request });
      const done = await untilTerminal(new Client(url, { token: RIN_TOKEN }), attached[i]!, op);
      const text = (await c.call('POST', '/control/v2/operations/get', { operation_id: op.operation_id })).text;
      texts.push({
        status: done.status,
        output: done.output,
        arguments: /"arguments":(\{[^}]*\})/.exec(text)?.[1],
        normalized: /"normalized_arguments":(\{[^}]*\})/.exec(text)?.[1],
      });
      // The digest depends on the world's observation sequence, which the two harbors need not share.
      expect(/"request_digest":"([0-9a-f]{64})"/.exec(text)?.[1]).toBe(actionRequestDigest(request));
    }
    same(texts.slice(1), texts.slice(0, 1));
    expect(texts[0]).toMatchObject({ status: 'succeeded', arguments: '{"crates":2.0}', normalized: '{"crates":2.0}' });
  });

  it('emergency stop revisions and the policy refusal while stopped', async () => {
    const [ref, mine] = await both(async (c) => {
      const on = await c['setEmergencyStop']!({ ...target, actor_id: 'tern', active: true });
      const again = await c['setEmergencyStop']!({ ...target, actor_id: 'tern', active: true });
      const off = await c['setEmergencyStop']!({ ...target, actor_id: 'tern', active: false });
      return [
        [on.active, on.revision, again.revision, off.active, off.revision],
        await attempt(() => c['setEmergencyStop']!({ ...target, actor_id: 'nobody', active: true })),
      ];
    });
    same(mine, ref);
  });
});
