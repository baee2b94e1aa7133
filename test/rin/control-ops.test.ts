/**
 * The operations half driven directly (no HTTP): submit through the host gateway and policy,
 * idempotency, fencing, confirmation, delivery/ack/run/outcome, cancellation, expiry, waits.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { RawJson } from '../../ts/crypto/gojson.js';
import { Operations } from '../../ts/rin/control/operations.js';
import { type RinError } from '../../ts/rin/errors.js';
import type { OperationView } from '../../ts/rin/types.js';
import {
  ACTOR,
  ADMIN,
  ALICE,
  BOB,
  HOST,
  TEST_POLICY,
  actionRequest,
  rejects,
  settle,
  submitBody,
  useOpsWorld,
  wire,
  type OpsWorld,
} from './control-ops-harness.js';

const world = useOpsWorld();
let w: OpsWorld;
beforeEach(() => {
  w = world();
});

const spec = () => w.specs[0]!;

describe('submit', () => {
  it('binds through the host, lets policy allow a low-risk reversible effect and queues it', async () => {
    const view = await w.submit(ALICE, actionRequest(w.state, spec(), 'key.allow'));
    expect(view.status).toBe('queued');
    expect(view.policy_decision?.result).toBe('allow');
    expect(view.policy_decision?.matched_rule_ids).toEqual(['profile.guarded.low-risk']);
    expect(view.bound_action?.effect_preview).toHaveLength(1);
    expect(view.operation_id).toMatch(/^operation\.[0-9a-f]{32}$/);
    expect(view.cursor).toBe(`op2:queued:0:false:${w.clock.now()}::0:false:0`);
    expect(view.terminal).toBe(false);
  });

  it('keeps the arguments as submitted, compacted as the reference writes them back', async () => {
    const view = await w.submit(ALICE, actionRequest(w.state, spec(), 'key.spaced', { arguments: new RawJson('{ "weight" : 1.50 ,\n "crate":"a<b" }') }));
    expect(view.action_request?.arguments.text).toBe('{"weight":1.50,"crate":"a\\u003cb"}');
    expect(view.bound_action?.normalized_arguments.text).toBe('{"crate":"a\\u003cb","weight":1.50}');
  });

  it('stores require_confirmation as awaiting-confirmation and deny as rejected with the reason code', async () => {
    w.host.plans.set('key.confirm', [{ risk: 'moderate' }]);
    w.host.plans.set('key.deny', [{ risk: 'high' }]);
    const confirm = await w.submit(ALICE, actionRequest(w.state, spec(), 'key.confirm'));
    expect(confirm.status).toBe('awaiting-confirmation');
    expect(confirm.policy_decision?.confirmation_challenge?.challenge_id).toMatch(/^confirmation\./);
    const deny = await w.submit(ALICE, actionRequest(w.state, spec(), 'key.deny'));
    expect(deny.status).toBe('rejected');
    expect(deny.rejection_code).toBe('policy.profile_deny');
    expect(deny.terminal).toBe(true);
  });

  it('the kernel denies a forbidden effect kind even when known, and an unknown kind', async () => {
    w.host.plans.set('key.kernel', [{ risk: 'low', reversible: true, tags: ['secret.exposure'] }]);
    w.host.plans.set('key.unknown', [{ risk: 'low', reversible: true, kind: 'cargo.burn' }]);
    expect((await w.submit(ALICE, actionRequest(w.state, spec(), 'key.kernel'))).rejection_code).toBe('policy.secret_exposure_denied');
    expect((await w.submit(ALICE, actionRequest(w.state, spec(), 'key.unknown'))).rejection_code).toBe('policy.unknown_effect');
  });

  it('idempotency: the same request again is the same operation; a different one under the key conflicts; keys are per principal', async () => {
    const request = actionRequest(w.state, spec(), 'key.idem');
    const first = await w.submit(ALICE, request);
    const again = await w.state.ops.submit(ALICE, submitBody(request), w.signal);
    expect(again.operation_id).toBe(first.operation_id);
    await rejects(w.state.ops.submit(ALICE, submitBody({ ...request, request_id: 'request.other' }), w.signal), 'conflict');
    // Bob controls the other actor with his own lease; his key space is his own.
    w.state.actors.get('actor.other')!.publication.owner_principal_id = 'bob';
    w.state.actors.get('actor.other')!.publication.decision_authority = {
      source: 'external',
      controller_principal_id: 'bob',
      revision: 1,
      persona_mode: 'agent-avatar',
    };
    w.state.acquire('actor.other', 'bob');
    const bobs = await w.submit(BOB, actionRequest(w.state, spec(), 'key.idem', { actor_id: 'actor.other' }));
    expect(bobs.operation_id).not.toBe(first.operation_id);
  });

  it('concurrent identical submissions coalesce into one binding and one operation', async () => {
    const request = actionRequest(w.state, spec(), 'key.concurrent');
    const a = w.state.ops.submit(ALICE, submitBody(request), w.signal);
    const b = w.state.ops.submit(ALICE, submitBody(request), w.signal);
    const [va, vb] = await w.host.serve(Promise.all([a, b]));
    expect(va.operation_id).toBe(vb.operation_id);
    expect(w.host.bindingCounter).toBe(1);
    expect(w.state.ops.size).toBe(1);
  });

  it('fences the request: stale epoch, observation gap over 8, missing or foreign controller lease, missing scope', async () => {
    await rejects(
      w.state.ops.submit(ALICE, submitBody(actionRequest(w.state, spec(), 'k1', { expected_epoch: { ...w.state.epoch, timeline: 2 } })), w.signal),
      'stale',
    );
    const old = actionRequest(w.state, spec(), 'k2');
    w.state.observe(8);
    const within = await w.submit(ALICE, old);
    expect(within.status).toBe('queued');
    w.state.observe(1);
    await rejects(
      w.state.ops.submit(ALICE, submitBody(actionRequest(w.state, spec(), 'k3', { observation_sequence: old.observation_sequence })), w.signal),
      'stale',
    );
    await rejects(w.state.ops.submit(ALICE, submitBody(actionRequest(w.state, spec(), 'k4', { controller_id: 'controller.two' })), w.signal), 'forbidden');
    await rejects(w.state.ops.submit({ id: 'alice', granted_scopes: ['actor.read'] }, submitBody(actionRequest(w.state, spec(), 'k5')), w.signal), 'forbidden');
    w.state.actors.get(ACTOR)!.controller = undefined;
    await rejects(w.state.ops.submit(ALICE, submitBody(actionRequest(w.state, spec(), 'k6')), w.signal), 'lease_expired');
    expect(w.host.bindingCounter).toBe(1);
  });

  it('a binding that does not match the host snapshot is stale; the world moving on during the bind is stale', async () => {
    w.host.skewBoundAt = true;
    await rejects(w.submit(ALICE, actionRequest(w.state, spec(), 'key.skew')), 'stale');
    w.host.skewBoundAt = false;
    const pending = w.state.ops.submit(ALICE, submitBody(actionRequest(w.state, spec(), 'key.moved')), w.signal);
    await settle();
    // The control plane sees a world reload the host's binding (at the old epoch) does not reflect.
    for (const a of w.state.actors.values()) a.publication = { ...a.publication, epoch: { ...w.state.epoch, world: 2 } };
    await rejects(w.host.serve(pending), 'stale');
    expect(w.state.ops.size).toBe(0);
  });

  it('the host gateway times out after 25 s with unavailable; a host error answer keeps its code', async () => {
    const pending = w.state.ops.submit(ALICE, submitBody(actionRequest(w.state, spec(), 'key.timeout')), w.signal);
    const caught = pending.catch((e: unknown) => e);
    await settle();
    await w.clock.advance(24_999);
    await w.clock.advance(1);
    expect(((await caught) as RinError).code).toBe('unavailable');
    expect(((await caught) as RinError).message).toContain('timed out');
    const failing = w.state.ops.submit(ALICE, submitBody(actionRequest(w.state, spec(), 'key.hosterr')), w.signal);
    await settle();
    const batch = await w.state.ops.poll({ hostId: HOST, leaseId: w.state.lease.lease_id, limit: 4, waitMillis: 0, signal: w.signal });
    expect(batch.gateway_requests).toHaveLength(1);
    const id = batch.gateway_requests[0]!.request.gateway_request_id;
    await rejects(
      w.state.ops.gatewayResult(wire({ host_id: HOST, lease_id: w.state.lease.lease_id, result: { gateway_request_id: 'gateway.unknown' } })),
      'not_found',
    );
    await rejects(
      w.state.ops.gatewayResult(
        wire({ host_id: HOST, lease_id: w.state.lease.lease_id, result: { gateway_request_id: id, error_code: 'teapot', error_message: 'no' } }),
      ),
      'invalid',
    );
    await w.state.ops.gatewayResult(
      wire({ host_id: HOST, lease_id: w.state.lease.lease_id, result: { gateway_request_id: id, error_code: 'stale', error_message: 'the actor moved' } }),
    );
    await rejects(failing, 'stale');
  });

  it('a malformed gateway answer is refused and the request stays answerable; a host leaving fails it at once', async () => {
    const pending = w.state.ops.submit(ALICE, submitBody(actionRequest(w.state, spec(), 'key.malformed')), w.signal);
    const caught = pending.catch((e: unknown) => e);
    await settle();
    const batch = await w.state.ops.poll({ hostId: HOST, leaseId: w.state.lease.lease_id, limit: 4, waitMillis: 0, signal: w.signal });
    const id = batch.gateway_requests[0]!.request.gateway_request_id;
    const snapshot = { now: { clock: 'step', value: 1 }, epoch: w.state.epoch, observation_sequence: 10 };
    await rejects(
      w.state.ops.gatewayResult(wire({ host_id: HOST, lease_id: w.state.lease.lease_id, result: { gateway_request_id: id, snapshot } })),
      'invalid',
    );
    const again = await w.state.ops.poll({ hostId: HOST, leaseId: w.state.lease.lease_id, limit: 4, waitMillis: 0, signal: w.signal });
    expect(again.gateway_requests.map((g) => [g.request.gateway_request_id, g.delivery_attempt])).toEqual([[id, 2]]);
    await w.state.mutate(() => w.state.ops.onHostUnregistered(HOST, w.clock.now()));
    expect(((await caught) as RinError).code).toBe('unavailable');
  });

  it('a publication with a new authority revision fences unaccepted work: undelivered → stale, delivered → cancel requested', async () => {
    const delivered = await w.submit(ALICE, actionRequest(w.state, spec(), 'key.auth1'));
    await w.host.pollOnce();
    const queued = await w.submit(ALICE, actionRequest(w.state, spec(), 'key.auth2'));
    const actors = [...w.state.actors.values()].map((a) => ({ ...a.publication, decision_authority: { ...a.publication.decision_authority, revision: 2 } }));
    await w.state.mutate(() => w.state.ops.onWorldPublished(HOST, { world_id: 'world.harbor', display_name: 'Harbor', sequence: 2, actors }, w.clock.now()));
    expect((await w.state.ops.get(ALICE, wire({ operation_id: queued.operation_id }))).status).toBe('stale');
    expect((await w.state.ops.get(ALICE, wire({ operation_id: delivered.operation_id }))).cancel_requested).toBe(true);
  });

  it('an active emergency stop makes policy deny the submission', async () => {
    await w.state.stop(ACTOR);
    const view = await w.submit(ALICE, actionRequest(w.state, spec(), 'key.stopped'));
    expect(view.status).toBe('rejected');
    expect(view.rejection_code).toBe('policy.emergency_stop');
  });
});

describe('delivery, acknowledgement, run and outcome', () => {
  it('redelivers until acknowledged, counts attempts, records monotonic progress and the outcome exactly once', async () => {
    const view = await w.submit(ALICE, actionRequest(w.state, spec(), 'key.life'));
    const id = view.operation_id;
    const first = await w.host.pollOnce();
    expect(first.requests.map((r) => [r.request.operation_id, r.delivery_attempt])).toEqual([[id, 1]]);
    expect(first.requests[0]!.request.policy_decision.result).toBe('allow');
    const second = await w.host.pollOnce();
    expect(second.requests[0]!.delivery_attempt).toBe(2);
    await rejects(w.host.run(id, 'running', 1, 10), 'not_accepted');
    await w.host.ack(id);
    await w.host.ack(id);
    await rejects(w.host.ack(id, false, 'harbor.busy'), 'conflict');
    await w.host.run(id, 'running', 1, 10);
    await w.host.run(id, 'running', 1, 10);
    await rejects(w.host.run(id, 'running', 1, 20), 'stale');
    await w.host.run(id, 'running', 2, 40);
    await rejects(w.host.run(id, 'running', 3, 30), 'stale');
    expect((await w.host.pollOnce()).requests).toHaveLength(0);
    await w.host.outcome(id, 'succeeded', '{"note":"ok","moved":1.0}');
    await w.host.outcome(id, 'succeeded', '{"note":"ok","moved":1.0}');
    await rejects(w.host.outcome(id, 'succeeded', '{"moved":2}'), 'conflict');
    await rejects(w.host.run(id, 'running', 5, 50), 'conflict');
    const done = await w.state.ops.get(ALICE, wire({ operation_id: id }));
    expect(done.status).toBe('succeeded');
    expect(done.terminal).toBe(true);
    expect(done.execution_confirmed).toBe(true);
    expect(done.delivery_attempts).toBe(2);
    expect(done.output?.text).toBe('{"moved":1.0,"note":"ok"}');
  });

  it('a refused acknowledgement rejects; an operation of another host is forbidden to report', async () => {
    const view = await w.submit(ALICE, actionRequest(w.state, spec(), 'key.refuse'));
    await rejects(w.host.ack(view.operation_id), 'conflict');
    await w.host.pollOnce();
    await w.host.ack(view.operation_id, false, 'harbor.busy');
    const after = await w.state.ops.get(ALICE, wire({ operation_id: view.operation_id }));
    expect(after.status).toBe('rejected');
    expect(after.rejection_code).toBe('harbor.busy');
  });

  it('an outcome must carry the binding epoch and not predate its observation', async () => {
    const view = await w.submit(ALICE, actionRequest(w.state, spec(), 'key.epoch'));
    await w.host.pollOnce();
    await w.host.ack(view.operation_id);
    w.state.epoch = { ...w.state.epoch, timeline: 9 };
    await rejects(w.host.outcome(view.operation_id, 'succeeded'), 'invalid');
  });

  it('views are visible to the submitter and host.admin only', async () => {
    const view = await w.submit(ALICE, actionRequest(w.state, spec(), 'key.visible'));
    await rejects(w.state.ops.get(BOB, wire({ operation_id: view.operation_id })), 'forbidden');
    expect((await w.state.ops.get(ADMIN, wire({ operation_id: view.operation_id }))).operation_id).toBe(view.operation_id);
    await rejects(w.state.ops.get(ALICE, wire({ operation_id: 'operation.missing' })), 'not_found');
  });
});

describe('confirmation', () => {
  it('a confirm scope holder approves the exact challenge after a fresh host snapshot; the action is queued', async () => {
    w.host.plans.set('key.c', [{ risk: 'moderate' }]);
    const view = await w.submit(ALICE, actionRequest(w.state, spec(), 'key.c'));
    const confirmed = await w.host.serve(w.state.ops.confirm(ALICE, wire({ operation_id: view.operation_id }), w.signal));
    expect(confirmed.status).toBe('queued');
    expect(confirmed.policy_decision?.reason_code).toBe('policy.confirmed');
    expect(confirmed.policy_decision?.matched_rule_ids).toContain('confirmation.consumed');
    expect(confirmed.bound_action).toEqual(view.bound_action);
    // Confirming again: the operation is no longer awaiting and not complete.
    await rejects(w.state.ops.confirm(ALICE, wire({ operation_id: view.operation_id }), w.signal), 'conflict');
  });

  it('an approver without a confirmation scope is refused and the operation keeps waiting', async () => {
    w.host.plans.set('key.c2', [{ risk: 'moderate' }]);
    w.state.actors.get(ACTOR)!.publication.decision_authority = {
      source: 'external',
      controller_principal_id: 'alice',
      revision: 1,
      persona_mode: 'agent-avatar',
    };
    const view = await w.submit(ALICE, actionRequest(w.state, spec(), 'key.c2'));
    await rejects(
      w.host.serve(
        w.state.ops.confirm({ id: 'alice', granted_scopes: ['actor.control', 'actor.execute'] }, wire({ operation_id: view.operation_id }), w.signal),
      ),
      'forbidden',
    );
    expect((await w.state.ops.get(ALICE, wire({ operation_id: view.operation_id }))).status).toBe('awaiting-confirmation');
  });

  it('a fresh snapshot with another observation sequence makes the operation stale', async () => {
    w.host.plans.set('key.c3', [{ risk: 'moderate' }]);
    const view = await w.submit(ALICE, actionRequest(w.state, spec(), 'key.c3'));
    w.state.observe(1);
    await rejects(w.host.serve(w.state.ops.confirm(ALICE, wire({ operation_id: view.operation_id }), w.signal)), 'stale');
    expect((await w.state.ops.get(ALICE, wire({ operation_id: view.operation_id }))).status).toBe('stale');
  });

  it('the binding expiring before approval refuses the confirmation', async () => {
    w.host.plans.set('key.c4', [{ risk: 'moderate' }]);
    const view = await w.submit(ALICE, actionRequest(w.state, spec(), 'key.c4'));
    w.host.step += 60;
    await rejects(w.host.serve(w.state.ops.confirm(ALICE, wire({ operation_id: view.operation_id }), w.signal)), 'stale');
  });
});

describe('cancellation', () => {
  it('a queued operation is cancelled locally; a delivered one gets cancel_requested and the host hears it first', async () => {
    const queued = await w.submit(ALICE, actionRequest(w.state, spec(), 'key.q'));
    const cancelled = await w.state.ops.cancel(ALICE, wire({ operation_id: queued.operation_id }));
    expect(cancelled.status).toBe('cancelled');
    expect(cancelled.terminal).toBe(true);
    const delivered = await w.submit(ALICE, actionRequest(w.state, spec(), 'key.d'));
    await w.host.pollOnce();
    const requested = await w.state.ops.cancel(ALICE, wire({ operation_id: delivered.operation_id }));
    expect(requested.status).toBe('delivered');
    expect(requested.cancel_requested).toBe(true);
    const batch = await w.host.pollOnce();
    expect(batch.cancellations).toEqual([delivered.operation_id]);
    expect(batch.requests).toHaveLength(0);
    await rejects(w.state.ops.cancel(BOB, wire({ operation_id: delivered.operation_id })), 'forbidden');
  });

  it('an emergency stop cancels undelivered work and asks the host to stop delivered work', async () => {
    const queued = await w.submit(ALICE, actionRequest(w.state, spec(), 'key.e1'));
    const delivered = await w.submit(ALICE, actionRequest(w.state, spec(), 'key.e2'));
    await w.state.ops.cancel(ALICE, wire({ operation_id: queued.operation_id })).then(() => undefined);
    const third = await w.submit(ALICE, actionRequest(w.state, spec(), 'key.e3'));
    // deliver only e2 and e3, then queue one more that is never delivered
    await w.host.pollOnce();
    const fourth = await w.submit(ALICE, actionRequest(w.state, spec(), 'key.e4'));
    await w.state.stop(ACTOR);
    const get = (id: string): Promise<OperationView> => w.state.ops.get(ALICE, wire({ operation_id: id }));
    expect((await get(delivered.operation_id)).cancel_requested).toBe(true);
    expect((await get(third.operation_id)).cancel_requested).toBe(true);
    expect((await get(fourth.operation_id)).status).toBe('cancelled');
  });
});

describe('expiry', () => {
  it('host lease expiry: unaccepted → stale, accepted → outcome-unknown; a later authoritative outcome reconciles', async () => {
    const unaccepted = await w.submit(ALICE, actionRequest(w.state, spec(), 'key.x1'));
    const accepted = await w.submit(ALICE, actionRequest(w.state, spec(), 'key.x2'));
    await w.host.pollOnce();
    await w.host.ack(accepted.operation_id);
    await w.clock.advance(61_000);
    const u = await w.state.ops.get(ALICE, wire({ operation_id: unaccepted.operation_id }));
    const a = await w.state.ops.get(ALICE, wire({ operation_id: accepted.operation_id }));
    expect(u.status).toBe('stale');
    expect(u.terminal).toBe(true);
    expect(a.status).toBe('outcome-unknown');
    expect(a.reconciliation_pending).toBe(true);
    expect(a.terminal).toBe(false);
    // The host registers again and reports what really happened.
    w.state.lease = { ...w.state.lease, lease_id: 'lease.two', expires_at_unix_millis: w.clock.now() + 60_000 };
    await w.host.outcome(accepted.operation_id, 'succeeded', '{"moved":1}');
    const reconciled = await w.state.ops.get(ALICE, wire({ operation_id: accepted.operation_id }));
    expect(reconciled.status).toBe('succeeded');
    expect(reconciled.reconciliation_pending).toBe(false);
    expect(reconciled.execution_confirmed).toBe(true);
  });

  it('controller lease invalidation: never delivered → stale, delivered → cancel requested', async () => {
    const delivered = await w.submit(ALICE, actionRequest(w.state, spec(), 'key.l1'));
    await w.host.pollOnce();
    const queued = await w.submit(ALICE, actionRequest(w.state, spec(), 'key.l2'));
    const lease = w.state.actors.get(ACTOR)!.controller!;
    await w.state.mutate(() => w.state.ops.onControllerLeaseInvalidated(lease, w.clock.now()));
    expect((await w.state.ops.get(ALICE, wire({ operation_id: queued.operation_id }))).status).toBe('stale');
    expect((await w.state.ops.get(ALICE, wire({ operation_id: delivered.operation_id }))).cancel_requested).toBe(true);
  });

  it('more operations than the configured maximum are refused with capacity until old ones are pruned', async () => {
    await w.state.ops.close();
    w.state.ops = await Operations.open({ state: w.state, db: w.db, policy: TEST_POLICY, options: { maxOperations: 2, operationTtlMillis: 60_000 } });
    const first = await w.submit(ALICE, actionRequest(w.state, spec(), 'key.cap1'));
    await w.submit(ALICE, actionRequest(w.state, spec(), 'key.cap2'));
    await rejects(w.submit(ALICE, actionRequest(w.state, spec(), 'key.cap3')), 'capacity');
    await w.state.ops.cancel(ALICE, wire({ operation_id: first.operation_id }));
    w.state.lease = { ...w.state.lease, expires_at_unix_millis: w.clock.now() + 3_600_000 };
    w.state.acquire(ACTOR);
    await w.clock.advance(60_001);
    w.state.acquire(ACTOR);
    expect((await w.submit(ALICE, actionRequest(w.state, spec(), 'key.cap4'))).status).toBe('queued');
    await rejects(w.state.ops.get(ALICE, wire({ operation_id: first.operation_id })), 'not_found');
  });

  it('idle unfinished operations settle after the TTL and finished ones are pruned later', async () => {
    const view = await w.submit(ALICE, actionRequest(w.state, spec(), 'key.ttl'));
    w.state.lease = { ...w.state.lease, expires_at_unix_millis: w.clock.now() + 10 * 3_600_000 };
    await w.clock.advance(30 * 60_000 + 1);
    expect((await w.state.ops.get(ALICE, wire({ operation_id: view.operation_id }))).status).toBe('stale');
    await w.clock.advance(30 * 60_000 + 1);
    await w.host.pollOnce();
    await rejects(w.state.ops.get(ALICE, wire({ operation_id: view.operation_id })), 'not_found');
  });
});

describe('waits', () => {
  it('operations/wait returns at once for 0 ms or a different cursor, wakes on delivery, and times out unchanged', async () => {
    const view = await w.submit(ALICE, actionRequest(w.state, spec(), 'key.w'));
    const now = await w.state.ops.wait(ALICE, wire({ operation_id: view.operation_id, after_cursor: view.cursor, wait_millis: 0 }), w.signal);
    expect(now.changed).toBe(false);
    const differs = await w.state.ops.wait(ALICE, wire({ operation_id: view.operation_id, after_cursor: 'op2:other', wait_millis: 20_000 }), w.signal);
    expect(differs.changed).toBe(true);
    const waiting = w.state.ops.wait(ALICE, wire({ operation_id: view.operation_id, after_cursor: view.cursor, wait_millis: 20_000 }), w.signal);
    await settle();
    await w.host.pollOnce();
    const woken = await waiting;
    expect(woken.changed).toBe(true);
    expect(woken.operation.status).toBe('delivered');
    expect(woken.operation.execution_confirmed).toBe(false);
    const idle = w.state.ops.wait(ALICE, wire({ operation_id: view.operation_id, after_cursor: woken.operation.cursor, wait_millis: 5_000 }), w.signal);
    await settle();
    await w.clock.advance(5_000);
    const timedOut = await idle;
    expect(timedOut.changed).toBe(false);
    await rejects(w.state.ops.wait(ALICE, wire({ operation_id: view.operation_id, wait_millis: 25_001 }), w.signal), 'invalid');
    await rejects(w.state.ops.wait(ALICE, wire({ operation_id: view.operation_id, after_cursor: 'x'.repeat(257), wait_millis: 0 }), w.signal), 'invalid');
  });

  it('host/poll long-polls until work arrives and answers an empty batch at its deadline', async () => {
    const poll = w.state.ops.poll({ hostId: HOST, leaseId: w.state.lease.lease_id, limit: 8, waitMillis: 10_000, signal: w.signal });
    await settle();
    const submitted = w.state.ops.submit(ALICE, submitBody(actionRequest(w.state, spec(), 'key.p')), w.signal);
    const batch = await poll;
    expect(batch.gateway_requests).toHaveLength(1);
    expect(batch.gateway_requests[0]!.delivery_attempt).toBe(1);
    const view = await w.host.serve(submitted);
    await w.host.pollOnce();
    await w.host.ack(view.operation_id);
    await w.host.run(view.operation_id, 'running', 1, 5);
    const empty = w.state.ops.poll({ hostId: HOST, leaseId: w.state.lease.lease_id, limit: 8, waitMillis: 10_000, signal: w.signal });
    await settle();
    await w.clock.advance(10_000);
    expect(await empty).toEqual({ gateway_requests: [], requests: [], cancellations: [] });
    await rejects(w.state.ops.poll({ hostId: HOST, leaseId: w.state.lease.lease_id, limit: 65, waitMillis: 0, signal: w.signal }), 'invalid');
    await rejects(w.state.ops.poll({ hostId: HOST, leaseId: 'lease.wrong', limit: 1, waitMillis: 0, signal: w.signal }), 'lease_expired');
  });
});
