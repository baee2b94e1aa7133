/**
 * The task timeline (rin.task-timeline/v1) and child operations, driven through the operations half.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { buildTimelinePage, formatTimelineCursor, normalizeTimelineQuery, parseTimelineCursor } from '../../ts/rin/control/timeline.js';
import { RinError } from '../../ts/rin/errors.js';
import type { TaskTimelineEvent } from '../../ts/rin/types.js';
import { ADMIN, ALICE, BOB, actionRequest, settle, useOpsWorld, wire, type OpsWorld } from './control-ops-harness.js';

const world = useOpsWorld();
let w: OpsWorld;
beforeEach(() => {
  w = world();
});

async function code(p: Promise<unknown>): Promise<string> {
  return p.then(
    () => 'resolved',
    (e: unknown) => (e instanceof RinError ? e.code : String(e)),
  );
}

describe('timeline cursors', () => {
  it('are tl1:<base36> and must round-trip exactly', () => {
    expect(formatTimelineCursor(0)).toBe('tl1:0');
    expect(formatTimelineCursor(36 * 36 + 1)).toBe('tl1:101');
    expect(parseTimelineCursor('tl1:101')).toBe(1297);
    expect(parseTimelineCursor('')).toBe(0);
    for (const bad of ['tl1:01', 'tl1:A', 'tl1:', 'tl2:1', 'op2:1', `tl1:${'1'.repeat(61)}`, 'tl1:-1', 'tl1:1 ']) {
      expect(() => parseTimelineCursor(bad), bad).toThrow(RinError);
    }
  });

  it('queries trim the task id, default the limit to 64 and refuse more than 256', () => {
    expect(normalizeTimelineQuery({ task_id: '  task.one ' })).toMatchObject({ taskId: 'task.one', limit: 64, after: 0 });
    expect(() => normalizeTimelineQuery({ task_id: '   ' })).toThrow(RinError);
    expect(() => normalizeTimelineQuery({ task_id: 'x'.repeat(129) })).toThrow(RinError);
    expect(() => normalizeTimelineQuery({ task_id: 't', limit: 257 })).toThrow(RinError);
  });

  it('a page after a cursor past the latest event is refused; truncation is reported only for unseen events', () => {
    const records = [1, 2, 3].map((sequence) => ({
      sequence,
      event: { event_id: `e.${sequence}`, occurred_at_unix_millis: 1, task_id: 't', event_kind: 'operation.queued' },
    }));
    const snapshot = { taskId: 't', status: 'queued', latestSequence: 3, truncatedBefore: 2, records };
    const first = buildTimelinePage(snapshot, normalizeTimelineQuery({ task_id: 't', limit: 2 }));
    expect(first.events.map((e: TaskTimelineEvent) => e.cursor)).toEqual(['tl1:1', 'tl1:2']);
    expect(first.next_cursor).toBe('tl1:2');
    expect(first.more).toBe(true);
    expect(first.truncated).toBe(true);
    const second = buildTimelinePage(snapshot, normalizeTimelineQuery({ task_id: 't', after_cursor: 'tl1:2' }));
    expect(second.events).toHaveLength(1);
    expect(second.truncated).toBe(false);
    const end = buildTimelinePage(snapshot, normalizeTimelineQuery({ task_id: 't', after_cursor: 'tl1:3' }));
    expect(end.events).toEqual([]);
    expect(end.next_cursor).toBe('tl1:3');
    expect(() => buildTimelinePage(snapshot, normalizeTimelineQuery({ task_id: 't', after_cursor: 'tl1:4' }))).toThrow('after_cursor exceeds task timeline');
  });
});

describe('task timeline of operations', () => {
  it('records each state change once, pages through it, and keeps principals and tasks apart', async () => {
    const view = await w.submit(ALICE, actionRequest(w.state, w.specs[0]!, 'tl.one'));
    await w.host.pollOnce();
    await w.host.ack(view.operation_id);
    await w.host.run(view.operation_id, 'running', 1, 20);
    await w.host.outcome(view.operation_id, 'succeeded', '{"moved":1}');
    await w.submit(ALICE, actionRequest(w.state, w.specs[0]!, 'tl.other', { task_id: 'task.other' }));
    const all = await w.state.ops.timelineGet(ALICE, wire({ task_id: 'task.unload' }));
    expect(all.contract_version).toBe('rin.task-timeline/v1');
    expect(all.events.map((e) => e.event_kind)).toEqual([
      'operation.queued',
      'operation.delivered',
      'operation.accepted',
      'operation.progress',
      'operation.succeeded',
    ]);
    expect(all.status).toBe('succeeded');
    const last = all.events[4]!;
    expect(last.operation).toMatchObject({
      operation_id: view.operation_id,
      status: 'succeeded',
      terminal: true,
      execution_confirmed: true,
      outcome_code: 'succeeded',
    });
    expect(last.policy).toMatchObject({ disposition: 'allow', reason_code: 'policy.profile_allow', effect_count: 1, confirmation_pending: false });
    expect(last.event_id).toBe(`${view.operation_id}.event.${parseTimelineCursor(last.cursor).toString(36)}`);
    // Pages of two follow one another without gaps or repeats.
    const seen: string[] = [];
    let cursor = '';
    for (let i = 0; i < 5; i++) {
      const page = await w.state.ops.timelineGet(ALICE, wire({ task_id: 'task.unload', after_cursor: cursor, limit: 2 }));
      seen.push(...page.events.map((e) => e.cursor));
      cursor = page.next_cursor;
      if (!page.more) break;
    }
    expect(seen).toEqual(all.events.map((e) => e.cursor));
    // Bob sees nothing of Alice's task; host.admin sees it all.
    expect(await code(w.state.ops.timelineGet(BOB, wire({ task_id: 'task.unload' })))).toBe('not_found');
    expect((await w.state.ops.timelineGet(ADMIN, wire({ task_id: 'task.unload' }))).events).toHaveLength(5);
    expect((await w.state.ops.timelineGet(ALICE, wire({ task_id: 'task.other' }))).events).toHaveLength(1);
    expect(await code(w.state.ops.timelineGet(ALICE, wire({ task_id: 'task.unload', after_cursor: 'tl1:zz' })))).toBe('invalid');
  });

  it('wait returns at once with 0 ms, wakes on a new event, times out unchanged', async () => {
    const view = await w.submit(ALICE, actionRequest(w.state, w.specs[0]!, 'tl.wait'));
    const now = await w.state.ops.timelineGet(ALICE, wire({ task_id: 'task.unload' }));
    const immediate = await w.state.ops.timelineWait(ALICE, wire({ task_id: 'task.unload', after_cursor: now.next_cursor, wait_millis: 0 }), w.signal);
    expect(immediate.changed).toBe(false);
    const waiting = w.state.ops.timelineWait(ALICE, wire({ task_id: 'task.unload', after_cursor: now.next_cursor, wait_millis: 10_000 }), w.signal);
    await settle();
    await w.state.ops.cancel(ALICE, wire({ operation_id: view.operation_id }));
    const woke = await waiting;
    expect(woke.changed).toBe(true);
    expect(woke.timeline.events.map((e) => e.event_kind)).toEqual(['operation.cancelled']);
    const idle = w.state.ops.timelineWait(ALICE, wire({ task_id: 'task.unload', after_cursor: woke.timeline.next_cursor, wait_millis: 3_000 }), w.signal);
    await settle();
    await w.clock.advance(3_000);
    expect((await idle).changed).toBe(false);
    expect(await code(w.state.ops.timelineWait(ALICE, wire({ task_id: 'task.unload', wait_millis: 25_001 }), w.signal))).toBe('invalid');
  });

  it('an operation keeps its last 64 events; the page says when older ones were dropped', async () => {
    const view = await w.submit(ALICE, actionRequest(w.state, w.specs[0]!, 'tl.long'));
    await w.host.pollOnce();
    await w.host.ack(view.operation_id);
    for (let seq = 1; seq <= 70; seq++) await w.host.run(view.operation_id, 'running', seq, Math.min(seq, 99));
    const page = await w.state.ops.timelineGet(ALICE, wire({ task_id: 'task.unload', limit: 256 }));
    expect(page.events).toHaveLength(64);
    expect(page.truncated).toBe(true);
    const newest = await w.state.ops.timelineGet(ALICE, wire({ task_id: 'task.unload', after_cursor: page.events[0]!.cursor, limit: 256 }));
    expect(newest.truncated).toBe(false);
  });
});

describe('child operations', () => {
  it('a child needs a running macro parent of the same principal, lease and task; the parent lists its children', async () => {
    const [atomic, macro] = w.specs;
    const parent = await w.submit(ALICE, actionRequest(w.state, macro!, 'ch.parent'));
    // Not yet accepted: no children.
    expect(await code(w.submit(ALICE, actionRequest(w.state, atomic!, 'ch.early'), parent.operation_id))).toBe('conflict');
    await w.host.pollOnce();
    await w.host.ack(parent.operation_id);
    const child = await w.submit(ALICE, actionRequest(w.state, atomic!, 'ch.child'), parent.operation_id);
    expect(child.parent_operation_id).toBe(parent.operation_id);
    const after = await w.state.ops.get(ALICE, wire({ operation_id: parent.operation_id }));
    expect(after.child_operation_ids).toEqual([child.operation_id]);
    expect(await code(w.submit(ALICE, actionRequest(w.state, atomic!, 'ch.task', { task_id: 'task.other' }), parent.operation_id))).toBe('conflict');
    expect(await code(w.submit(ALICE, actionRequest(w.state, atomic!, 'ch.none'), 'operation.missing'))).toBe('not_found');
    // An atomic parent never has children.
    const plain = await w.submit(ALICE, actionRequest(w.state, atomic!, 'ch.atomic'));
    await w.host.pollOnce();
    await w.host.ack(plain.operation_id);
    expect(await code(w.submit(ALICE, actionRequest(w.state, atomic!, 'ch.under-atomic'), plain.operation_id))).toBe('conflict');
  });
});
