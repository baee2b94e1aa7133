/**
 * Persistence of the operations half on both database engines: every mutation is written before it
 * answers, and a new instance on the same database recovers the state with the restart rules (R96).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RawJson } from '../../ts/crypto/gojson.js';
import { decodeDoc, encodeDoc } from '../../ts/rin/control/store.js';
import { RinError } from '../../ts/rin/errors.js';
import { ACTOR, ALICE, actionRequest, describeOpsDbs, openOpsWorld, openTestDb, submitBody, TestClock, wire, type OpsWorld } from './control-ops-harness.js';
import { Operations } from '../../ts/rin/control/operations.js';

it('a document keeps raw sub-documents byte for byte through the store encoding', () => {
  const doc = { a: new RawJson('{"n":1.0,"big":123456789012345678901234567890,"e":1E+2}'), b: [new RawJson('')], c: 'plain' };
  const back = decodeDoc<typeof doc>(encodeDoc(doc));
  expect(back.a).toBeInstanceOf(RawJson);
  expect(back.a.text).toBe('{"n":1.0,"big":123456789012345678901234567890,"e":1E+2}');
  expect(back.b[0]!.text).toBe('');
  expect(back.c).toBe('plain');
});

describeOpsDbs('operation store restart', (kind) => {
  let opened: Awaited<ReturnType<typeof openTestDb>>;
  let w: OpsWorld;
  beforeAll(async () => {
    opened = await openTestDb(kind);
    w = await openOpsWorld(opened.db);
    w.state.acquire(ACTOR);
  });
  afterAll(async () => {
    await w.state.ops.close();
    await opened.close();
  });

  it('recovers every operation: unaccepted → stale, denied stays rejected, accepted without run stays, with run → outcome-unknown, finished unchanged', async () => {
    const spec = w.specs[0]!;
    w.host.plans.set('r.confirm', [{ risk: 'moderate' }]);
    w.host.plans.set('r.deny', [{ risk: 'critical' }]);
    const queued = await w.submit(ALICE, actionRequest(w.state, spec, 'r.queued'));
    const confirm = await w.submit(ALICE, actionRequest(w.state, spec, 'r.confirm'));
    const deny = await w.submit(ALICE, actionRequest(w.state, spec, 'r.deny'));
    const delivered = await w.submit(ALICE, actionRequest(w.state, spec, 'r.delivered'));
    const accepted = await w.submit(ALICE, actionRequest(w.state, spec, 'r.accepted'));
    const running = await w.submit(ALICE, actionRequest(w.state, spec, 'r.running'));
    const done = await w.submit(ALICE, actionRequest(w.state, spec, 'r.done'));
    const cancelled = await w.state.ops.cancel(ALICE, wire({ operation_id: queued.operation_id }));
    expect(cancelled.status).toBe('cancelled');
    const queued2 = await w.submit(ALICE, actionRequest(w.state, spec, 'r.queued2'));
    await w.host.pollOnce();
    for (const op of [accepted, running, done]) await w.host.ack(op.operation_id);
    await w.host.run(running.operation_id, 'running', 1, 30);
    await w.host.run(done.operation_id, 'running', 1, 30);
    await w.host.outcome(done.operation_id, 'succeeded', '{"moved":1.0}');
    const timelineBefore = await w.state.ops.timelineGet(ALICE, wire({ task_id: 'task.unload', limit: 256 }));
    // queued2 was delivered by the poll above; submit one more that stays queued.
    const lastQueued = await w.submit(ALICE, actionRequest(w.state, spec, 'r.queued3'));

    // A new instance on the same database, as after a restart.
    const clock = new TestClock(w.clock.now() + 1000);
    const state2 = w.state;
    (state2 as unknown as { clock: TestClock }).clock = clock;
    await w.state.ops.close();
    const ops = await Operations.open({ state: state2, db: opened.db, policy: undefined });
    state2.ops = ops;
    const get = (id: string) => ops.get(ALICE, wire({ operation_id: id }));
    expect((await get(lastQueued.operation_id)).status).toBe('stale');
    expect((await get(queued2.operation_id)).status).toBe('stale');
    expect((await get(delivered.operation_id)).status).toBe('stale');
    expect((await get(confirm.operation_id)).status).toBe('stale');
    expect((await get(cancelled.operation_id)).status).toBe('cancelled');
    const denied = await get(deny.operation_id);
    expect(denied.status).toBe('rejected');
    expect(denied.rejection_code).toBe('policy.profile_deny');
    expect((await get(accepted.operation_id)).status).toBe('accepted');
    const unknown = await get(running.operation_id);
    expect(unknown.status).toBe('outcome-unknown');
    expect(unknown.reconciliation_pending).toBe(true);
    const finished = await get(done.operation_id);
    expect(finished.status).toBe('succeeded');
    expect(finished.execution_confirmed).toBe(true);
    expect(finished.output?.text).toBe('{"moved":1.0}');
    // The raw arguments came back with their lexemes.
    expect(finished.action_request?.arguments.text).toBe('{"crate":"blue","weight":1.0}');
    // The timeline cursor issued before the restart is still valid and only newer events follow it.
    const after = await ops.timelineGet(ALICE, wire({ task_id: 'task.unload', after_cursor: timelineBefore.next_cursor, limit: 256 }));
    expect(after.events.length).toBeGreaterThan(0);
    for (const e of after.events) expect(parseInt(e.cursor.slice(4), 36)).toBeGreaterThan(parseInt(timelineBefore.next_cursor.slice(4), 36));
    // Idempotency survives: the same request is the same operation, a changed one conflicts.
    const again = await ops.submit(ALICE, submitBody(actionRequest(w.state, spec, 'r.done')), w.signal).catch((e: unknown) => e);
    expect(again instanceof RinError ? again.code : (again as { operation_id: string }).operation_id).toBe(done.operation_id);
    const changed = await ops
      .submit(ALICE, submitBody({ ...actionRequest(w.state, spec, 'r.done'), request_id: 'request.changed' }), w.signal)
      .catch((e: unknown) => e);
    expect((changed as RinError).code).toBe('conflict');
    // A late authoritative outcome still reconciles the outcome-unknown operation.
    await w.host.outcome(running.operation_id, 'failed');
    expect((await get(running.operation_id)).status).toBe('failed');
    await ops.close();
  });
});

it('a restart drops nothing that was answered: the row is written before submit returns', async () => {
  const opened = await openTestDb('pglite');
  try {
    const w = await openOpsWorld(opened.db);
    w.state.acquire(ACTOR);
    const view = await w.submit(ALICE, actionRequest(w.state, w.specs[0]!, 'w.through'));
    const rows = await opened.db.query<{ doc: string }>('SELECT doc FROM rin_operations WHERE operation_id = $1', [view.operation_id]);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.doc).toContain('"status":"queued"');
    await w.state.ops.close();
  } finally {
    await opened.close();
  }
});
