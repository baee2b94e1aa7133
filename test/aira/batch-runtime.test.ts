/**
 * Batch reduction through AiraTask (M38–M40) with the scripted authority: what is dispatched, in which
 * order, what the trace records, and how rounds interact.
 */
import { describe, expect, it } from 'vitest';
import { getCrypto } from '../../ts/crypto/index.js';
import { startTask, type AiraTask, type TaskInput } from '../../ts/aira/runtime.js';
import { INTENT, ScriptedAuthority, calls } from './runtime-double.js';

const crypto = getCrypto('js');

async function open(task: Partial<TaskInput> = {}): Promise<{ task: AiraTask; auth: ScriptedAuthority }> {
  const auth = new ScriptedAuthority();
  return { task: await startTask({ authority: auth, crypto, task: { intentFrame: INTENT, ...task } }), auth };
}

async function toValidate(task: AiraTask): Promise<{ candidateId: string; token: string }> {
  await task.call(calls.search('s'));
  await task.call(calls.describe('d'));
  const candidateId = (await task.call(calls.propose('p', task))).data['candidateId'] as string;
  await task.call(calls.preview('pv', candidateId));
  const token = (await task.call(calls.validate('v', candidateId))).data['validationToken'] as string;
  return { candidateId, token };
}

const methodsAfter = (auth: ScriptedAuthority, from: number) => auth.calls.slice(from).map((c) => `${c.method}:${c.requestId}`);

describe('aira batch reduction through the runtime', () => {
  it('reads are all in flight together before the one effect is dispatched; the effect listed first still runs last', async () => {
    const { task, auth } = await open();
    const { candidateId, token } = await toValidate(task);
    const from = auth.calls.length;
    let release!: () => void;
    auth.gate = new Promise<void>((r) => (release = r));
    const pending = task.batch([calls.commit('c', candidateId, token), calls.read('r1'), calls.manifest('m1'), calls.search('s2')]);
    await new Promise((r) => setTimeout(r, 0));
    // All three reads were dispatched while none had answered; the commit was not.
    expect(methodsAfter(auth, from)).toEqual(['read:r1', 'manifest:m1', 'search:s2']);
    release();
    const out = await pending;
    auth.gate = null;
    expect(methodsAfter(auth, from)).toEqual(['read:r1', 'manifest:m1', 'search:s2', 'commit:c']);
    expect(out.results.map((r) => r.decision)).toEqual(['scheduled', 'scheduled', 'scheduled', 'scheduled']);
    // The reads saw the pre-effect revision.
    expect(out.results[1]!.envelope.observedRevision).toBe(auth.head0);
    expect(out.results[0]!.envelope.data['revision']).toBe(auth.branchHead);
    const events = task.trace().events.slice(-4);
    expect(events.map((e) => e.requestId)).toEqual(['r1', 'm1', 's2', 'c']);
    expect(events.map((e) => e.batch)).toEqual([5, 5, 5, 5]);
    expect(events.at(-1)).toMatchObject({ fromState: 'validate', toState: 'commit', effectClass: 'reversible' });
  });

  it('a deferred call is not dispatched, its id is not consumed, and resent it is admitted against the new state', async () => {
    const { task, auth } = await open();
    await task.call(calls.search('s'));
    await task.call(calls.describe('d'));
    const out = await task.batch([calls.propose('p1', task, 45), calls.propose('p2', task, 46)]);
    expect(out.results.map((r) => r.decision)).toEqual(['scheduled', 'deferred']);
    expect(out.results[1]!.envelope).toMatchObject({
      status: 'blocked',
      diagnostics: [{ code: 'DEFERRED', severity: 'info' }],
      nextActions: [{ op: 'model.proposePatch', preconditions: [] }],
    });
    expect(auth.count('propose')).toBe(1);
    const again = await task.call(calls.propose('p2', task, 46));
    expect(again.status).toBe('success');
    expect(auth.count('propose')).toBe(2);
  });

  it('a read that ends the task in its round leaves the effect undispatched, refused TASK_TERMINAL in the effect slot', async () => {
    const { task, auth } = await open();
    const { candidateId, token } = await toValidate(task);
    await task.call(calls.commit('c', candidateId, token));
    const out = await task.batch([calls.revert('rv', auth.head0), calls.read('r')]);
    expect(out.results[1]!.envelope.task.terminal).toBe('completed');
    expect(out.results[0]).toMatchObject({ decision: 'rejected', envelope: { diagnostics: [{ code: 'TASK_TERMINAL' }] } });
    expect(auth.count('revert')).toBe(0);
    expect(
      task
        .trace()
        .events.slice(-2)
        .map((e) => [e.requestId, e.decision]),
    ).toEqual([
      ['r', 'scheduled'],
      ['rv', 'rejected'],
    ]);
  });

  it("a stale refusal in a round defers that round's effect; the state folds to observe", async () => {
    const { task, auth } = await open();
    await task.call(calls.search('s'));
    await task.call(calls.describe('d'));
    const out = await task.batch([calls.propose('old', task, 45, { observedRevision: 'rev:old' }), calls.propose('p', task), calls.read('r')]);
    expect(out.results.map((r) => [r.decision, r.envelope.status])).toEqual([
      ['rejected', 'stale'],
      ['deferred', 'blocked'],
      ['scheduled', 'success'],
    ]);
    expect(auth.count('propose')).toBe(0);
    expect(task.state).toBe('observe');
    expect(
      task
        .trace()
        .events.slice(-3)
        .map((e) => [e.requestId, e.fromState, e.toState]),
    ).toEqual([
      ['old', 'describe', 'observe'],
      ['r', 'observe', 'observe'],
      ['p', 'observe', 'observe'],
    ]);
  });

  it('calls beyond the budget are refused and the budget ends the task', async () => {
    const { task, auth } = await open({ budget: { calls: 2 } });
    const out = await task.batch([calls.search('a'), calls.manifest('b'), calls.read('c')]);
    expect(out.results.map((r) => r.decision)).toEqual(['scheduled', 'scheduled', 'rejected']);
    expect(out.results[2]!.envelope.diagnostics[0]!.code).toBe('BUDGET_EXHAUSTED');
    expect(auth.count('read')).toBe(0);
    expect(task.terminal).toMatchObject({ state: 'budgetExhausted' });
  });

  it('rounds of one task run one after another even when not awaited', async () => {
    const { task } = await open();
    const a = task.call(calls.search('s'));
    const b = task.call(calls.describe('d'));
    expect((await a).task.state).toBe('discover');
    expect((await b).task.state).toBe('describe');
    expect(task.trace().events.map((e) => e.batch)).toEqual([0, 1]);
  });

  it('a cancel while a round is in flight: the dispatched read is recorded, no transition, the terminal stays cancelled', async () => {
    const { task, auth } = await open();
    let release!: () => void;
    auth.gate = new Promise<void>((r) => (release = r));
    const pending = task.call(calls.search('s'));
    await new Promise((r) => setTimeout(r, 0));
    task.cancel('user');
    release();
    const e = await pending;
    expect(e.task).toMatchObject({ state: 'observe', terminal: 'cancelled' });
    expect(task.trace()).toMatchObject({
      terminal: { state: 'cancelled' },
      events: [{ requestId: 's', decision: 'scheduled', fromState: 'observe', toState: 'observe' }],
    });
  });
});
