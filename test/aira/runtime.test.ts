import { describe, expect, it } from 'vitest';
import { getCrypto } from '../../ts/crypto/index.js';
import { AiraError, defaultContract, staticEffectClass } from '../../ts/aira/contract.js';
import { startTask, type AiraTask, type TaskInput } from '../../ts/aira/runtime.js';
import { Envelope, Trace, type MetaCall } from '../../ts/aira/schema.js';
import { AuthorityError, CAP, INTENT, ScriptedAuthority, calls, diag } from './runtime-double.js';

const crypto = getCrypto('js');

async function open(task: Partial<TaskInput> = {}, opts: { now?: () => number } = {}): Promise<{ task: AiraTask; auth: ScriptedAuthority }> {
  const auth = new ScriptedAuthority();
  const t = await startTask({ authority: auth, crypto, task: { intentFrame: INTENT, ...task }, ...opts });
  return { task: t, auth };
}

/** Drives a task to `validate` and returns the candidate and token it holds. */
async function toValidate(task: AiraTask, tag = ''): Promise<{ candidateId: string; token: string }> {
  expect((await task.call(calls.search(`s${tag}`))).status).toBe('success');
  expect((await task.call(calls.describe(`d${tag}`))).status).toBe('success');
  const p = await task.call(calls.propose(`p${tag}`, task));
  expect(p.status).toBe('success');
  const candidateId = p.data['candidateId'] as string;
  expect((await task.call(calls.preview(`pv${tag}`, candidateId))).status).toBe('success');
  const v = await task.call(calls.validate(`v${tag}`, candidateId));
  expect(v.status).toBe('success');
  return { candidateId, token: v.data['validationToken'] as string };
}

const META = [
  'interface.manifest',
  'catalog.search',
  'catalog.describe',
  'model.read',
  'model.proposePatch',
  'model.preview',
  'model.validate',
  'model.commit',
  'model.revert',
];

describe('aira runtime: a whole task', () => {
  it('L1 manifest, search, describe, propose, preview, validate, commit, read → completed, each envelope valid', async () => {
    const { task, auth } = await open();
    expect(task.state).toBe('observe');
    const envs = [await task.call(calls.manifest('m'))];
    const { candidateId, token } = await toValidate(task);
    envs.push(await task.call(calls.commit('c', candidateId, token)));
    expect(task.state).toBe('commit');
    expect(task.head).toBe(auth.branchHead);
    const read = await task.call(calls.read('r'));
    envs.push(read);
    for (const e of envs) expect(Envelope.safeParse(e).success).toBe(true);
    expect(read.task).toMatchObject({ state: 'readBack', terminal: 'completed', taskId: task.taskId, contractVersion: '1.0.0' });
    expect(read.certificateSummary).toMatchObject({ passed: true, assertions: 1 });
    expect(task.terminal).toMatchObject({ state: 'completed', code: 'COMPLETED', seq: 7 });
    const trace = task.trace();
    expect(Trace.safeParse(trace).success).toBe(true);
    expect(trace.events.map((e) => [e.op, e.fromState, e.toState])).toEqual([
      ['interface.manifest', 'observe', 'observe'],
      ['catalog.search', 'observe', 'discover'],
      ['catalog.describe', 'discover', 'describe'],
      ['model.proposePatch', 'describe', 'propose'],
      ['model.preview', 'propose', 'preview'],
      ['model.validate', 'preview', 'validate'],
      ['model.commit', 'validate', 'commit'],
      ['model.read', 'commit', 'readBack'],
    ]);
    expect(trace.events.map((e) => e.seq)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(trace.events.every((e) => e.decision === 'scheduled')).toBe(true);
    expect(trace.matrixDigest).toBe(defaultContract(crypto).matrixDigest);
    expect(read.budgets).toEqual({ consumed: { calls: 8, effects: 4, repairs: 0 }, remaining: { calls: 192, effects: 46, repairs: 3 } });
    expect(auth.count('verify')).toBe(1);
  });

  it('task id is the content id of the resolved input: defaults filled, nonce separates otherwise equal tasks', async () => {
    const a = await open();
    const b = await open({ protocol: { repairCap: 3 }, budget: { calls: 200 } });
    const c = await open({ nonce: 'n1' });
    expect(a.task.taskId).toMatch(/^task:sha256:[0-9a-f]{64}$/);
    expect(b.task.taskId).toBe(a.task.taskId);
    expect(c.task.taskId).not.toBe(a.task.taskId);
  });

  it('the same calls give identical envelopes and traces on both crypto backends', async () => {
    const run = async (name: 'js' | 'wasm') => {
      const auth = new ScriptedAuthority();
      const task = await startTask({ authority: auth, crypto: getCrypto(name), task: { intentFrame: INTENT } });
      const out = [await task.call(calls.propose('early', task))];
      const { candidateId, token } = await toValidate(task);
      out.push(await task.call(calls.commit('c', candidateId, token)));
      out.push(await task.call(calls.read('r')));
      return { out, trace: task.trace() };
    };
    const js = await run('js');
    const wasm = await run('wasm');
    expect(JSON.stringify(wasm)).toBe(JSON.stringify(js));
  });
});

describe('aira runtime: admission refuses before any dispatch (M33, M26)', () => {
  it('proposePatch first → DISCOVERY_REQUIRED with completed prefix and next operation; nothing dispatched', async () => {
    const { task, auth } = await open();
    const before = auth.calls.length;
    const e = await task.call(calls.propose('p', task));
    expect(auth.calls.length).toBe(before);
    expect(e.status).toBe('blocked');
    expect(e.diagnostics).toHaveLength(1);
    expect(e.diagnostics[0]).toMatchObject({ code: 'DISCOVERY_REQUIRED', phase: 'admission', cause: 'protocol', severity: 'error' });
    expect(e.data).toEqual({ completedPrefix: [], nextOperation: 'catalog.search' });
    expect(e.nextActions).toEqual([{ op: 'catalog.search', preconditions: [] }]);
    expect(e.observedRevision).toBe(auth.head0);
    expect(task.state).toBe('observe');
    expect(task.trace().events[0]).toMatchObject({ decision: 'rejected', code: 'DISCOVERY_REQUIRED', fromState: 'observe', toState: 'observe' });
  });

  it('in discover the next operation is catalog.describe, and the completed prefix shows the search', async () => {
    const { task } = await open();
    await task.call(calls.search('s'));
    const e = await task.call(calls.propose('p', task));
    expect(e.data).toEqual({ completedPrefix: ['catalog.search'], nextOperation: 'catalog.describe' });
  });

  it('the protocol sequences are matched in order, as subsequences of the cycle, after thousands of other calls', async () => {
    const { task, auth } = await open({
      protocol: { requiredDiscoverySequence: ['interface.manifest', 'catalog.search', 'catalog.describe'] },
      budget: { calls: 10_000 },
    });
    for (let b = 0; b < 8; b++) {
      const out = await task.batch(Array.from({ length: 250 }, (_, i) => calls.read(`r${b}-${i}`)));
      expect(out.results.every((r) => r.decision === 'scheduled')).toBe(true);
    }
    await task.call(calls.search('s1'));
    await task.call(calls.manifest('m'));
    await task.call(calls.describe('d1'));
    // The manifest came after the search, so the discovery sequence still needs a search after it.
    const first = await task.call(calls.propose('p1', task));
    expect(first.diagnostics[0]!.code).toBe('DISCOVERY_REQUIRED');
    expect(first.data).toEqual({ completedPrefix: ['catalog.search', 'catalog.describe'], nextOperation: 'catalog.search' });
    await task.call(calls.search('s2'));
    const second = await task.call(calls.propose('p2', task));
    expect(second.data).toEqual({ completedPrefix: ['catalog.search', 'catalog.describe'], nextOperation: 'catalog.describe' });
    await task.call(calls.describe('d2'));
    const ok = await task.call(calls.propose('p3', task));
    expect(ok.status).toBe('success');
    expect(ok.nextActions).toEqual([{ op: 'model.preview', preconditions: [] }]);
    expect(auth.count('propose')).toBe(1);
  });

  it('describe of a capability no search returned → DISCOVERY_REQUIRED (M14), not dispatched', async () => {
    const { task, auth } = await open();
    await task.call(calls.search('s'));
    const e = await task.call(calls.describe('d', 'cap:test.other@1'));
    expect(e.diagnostics[0]!.code).toBe('DISCOVERY_REQUIRED');
    expect(e.data['nextOperation']).toBe('catalog.search');
    expect(auth.count('describe')).toBe(0);
    expect(task.state).toBe('discover');
  });

  it('validate after proposePatch → PREVIEW_REQUIRED; commit after preview → VALIDATION_REQUIRED (next validate)', async () => {
    const { task, auth } = await open();
    await task.call(calls.search('s'));
    await task.call(calls.describe('d'));
    const p = await task.call(calls.propose('p', task));
    const cand = p.data['candidateId'] as string;
    const v = await task.call(calls.validate('v', cand));
    expect(v.diagnostics[0]!.code).toBe('PREVIEW_REQUIRED');
    expect(v.data['nextOperation']).toBe('model.preview');
    await task.call(calls.preview('pv', cand));
    const c = await task.call(calls.commit('c', cand, `vtok:sha256:${'0'.repeat(64)}`));
    expect(c.diagnostics[0]!.code).toBe('VALIDATION_REQUIRED');
    expect(c.data).toEqual({ completedPrefix: ['catalog.search', 'catalog.describe', 'model.proposePatch', 'model.preview'], nextOperation: 'model.validate' });
    expect(auth.count('validate') + auth.count('commit')).toBe(0);
  });

  it('preview of a candidate that is not the current one → CANDIDATE_REQUIRED; commit with a wrong token → VALIDATION_REQUIRED', async () => {
    const { task, auth } = await open();
    await task.call(calls.search('s'));
    await task.call(calls.describe('d'));
    await task.call(calls.propose('p', task));
    const e = await task.call(calls.preview('pv', `cand:sha256:${'1'.repeat(64)}`));
    expect(e.diagnostics[0]!.code).toBe('CANDIDATE_REQUIRED');
    const { candidateId } = await toValidate(task, '2');
    const c = await task.call(calls.commit('c', candidateId, `vtok:sha256:${'2'.repeat(64)}`));
    expect(c.diagnostics[0]!.code).toBe('VALIDATION_REQUIRED');
    expect(auth.count('commit')).toBe(0);
    expect(task.state).toBe('validate');
  });

  it('revert with nothing committed → NOTHING_TO_REVERT (next model.commit); after commit, revert → commit state and a new head', async () => {
    const { task, auth } = await open();
    const e = await task.call(calls.revert('rv0', auth.head0));
    expect(e.diagnostics[0]!.code).toBe('NOTHING_TO_REVERT');
    expect(e.nextActions).toEqual([{ op: 'model.commit', preconditions: [] }]);
    const { candidateId, token } = await toValidate(task);
    await task.call(calls.commit('c', candidateId, token));
    const committed = task.head;
    const rv = await task.call(calls.revert('rv1', auth.head0));
    expect(rv.status).toBe('success');
    expect(task.state).toBe('commit');
    expect(task.head).not.toBe(committed);
    expect(task.head).toBe(auth.branchHead);
  });

  it('a duplicate requestId is refused and not dispatched; a rejected call consumes its id too', async () => {
    const { task, auth } = await open();
    await task.call(calls.search('x'));
    const e = await task.call(calls.search('x'));
    expect(e.diagnostics[0]!.code).toBe('DUPLICATE_REQUEST_ID');
    expect(auth.count('search')).toBe(1);
    await task.call(calls.propose('y', task));
    expect((await task.call(calls.describe('y'))).diagnostics[0]!.code).toBe('DUPLICATE_REQUEST_ID');
  });

  it('malformed calls: not an object, unknown op, bad input, extra member → typed refusal, nothing dispatched, state kept', async () => {
    const { task, auth } = await open();
    const out = await task.batch([
      'search',
      null,
      { op: 'model.delete', input: { requestId: 'a' } },
      { op: 'catalog.search', input: { requestId: 'bad id with spaces' } },
      { op: 'catalog.search', input: { requestId: 'b', limit: 0 } },
      { op: 'catalog.search', input: { requestId: 'c' }, extra: 1 },
      { op: 'catalog.search', input: { requestId: 'd', unknown: true } },
    ]);
    expect(out.results.map((r) => r.envelope.diagnostics[0]!.code)).toEqual([
      'INVALID_INPUT',
      'INVALID_INPUT',
      'UNKNOWN_OPERATION',
      'INVALID_INPUT',
      'INVALID_INPUT',
      'INVALID_INPUT',
      'INVALID_INPUT',
    ]);
    expect(out.results[4]!.envelope.diagnostics[0]!.phase).toBe('input');
    expect(out.results.every((r) => r.decision === 'rejected' && r.envelope.status === 'blocked')).toBe(true);
    expect(auth.calls.filter((c) => c.method !== 'openTask')).toEqual([]);
    expect(task.state).toBe('observe');
    // An invalid call's request id is not consumed: the same id with valid input runs.
    expect((await task.call(calls.search('b'))).status).toBe('success');
  });

  it('input that is not plain JSON (NaN, bigint, a function, a cycle, a class instance) is INVALID_INPUT, nothing dispatched', async () => {
    const { task, auth } = await open();
    await task.call(calls.search('s'));
    await task.call(calls.describe('d'));
    const cyclic: Record<string, unknown> = {};
    cyclic['self'] = cyclic;
    const odd = [Number.NaN, 10n, () => 1, cyclic, new Date(0)];
    const out = await task.batch(
      odd.map((v, i) => {
        const c = calls.propose(`j${i}`, task) as { input: { plan: { steps: Array<{ args: Record<string, unknown> }> } } };
        c.input.plan.steps[0]!.args['value'] = v;
        return c;
      }),
    );
    expect(out.results.map((r) => r.envelope.diagnostics[0]!.code)).toEqual(odd.map(() => 'INVALID_INPUT'));
    expect(auth.count('propose') + auth.count('manifest')).toBe(0);
    expect(task.terminal).toBeNull();
  });

  it('a batch that is not an array or holds more than 256 calls is refused whole with a typed error', async () => {
    const { task } = await open();
    await expect(task.batch('x' as unknown as unknown[])).rejects.toMatchObject({ name: 'AiraError', code: 'BATCH_INVALID' });
    await expect(task.batch(Array.from({ length: 257 }, (_, i) => calls.search(`s${i}`)))).rejects.toMatchObject({ code: 'BATCH_TOO_LARGE' });
    expect(task.trace().events).toEqual([]);
    expect((await task.call(calls.search('ok'))).status).toBe('success');
  });

  it('an effect naming an old observedRevision → STALE_REVISION, status stale, state observe, not dispatched', async () => {
    const { task, auth } = await open();
    await task.call(calls.search('s'));
    await task.call(calls.describe('d'));
    const e = await task.call(calls.propose('p', task, 45, { observedRevision: 'rev:old' }));
    expect(e.status).toBe('stale');
    expect(e.diagnostics[0]).toMatchObject({ code: 'STALE_REVISION', cause: 'stale' });
    expect(task.state).toBe('observe');
    expect(auth.count('propose')).toBe(0);
    expect(task.trace().events.at(-1)).toMatchObject({ decision: 'rejected', fromState: 'describe', toState: 'observe' });
    // A read naming an old revision is not refused.
    expect((await task.call({ op: 'model.read', input: { requestId: 'r', observedRevision: 'rev:old' } })).status).toBe('success');
  });

  it('a model.query (read with a query) extends the capsule with its query and the revision it was answered at (M7, M3)', async () => {
    const { task, auth } = await open();
    expect(task.capsule().extensions).toEqual([]);
    const q = await task.call(calls.read('q1', { query: { kind: 'resolve', ref: 'parameters/width' } }));
    expect(q.status).toBe('success');
    // A plain read extends nothing.
    await task.call(calls.read('r1', { select: ['parameters/width'] }));
    expect(task.capsule().extensions).toEqual([{ requestId: 'q1', query: { kind: 'resolve', ref: 'parameters/width' }, revision: auth.head0 }]);
    // The binding is the revision answered at, and it stays that revision when the head moves on.
    const { candidateId, token } = await toValidate(task);
    await task.call(calls.commit('c', candidateId, token));
    expect(task.head).not.toBe(auth.head0);
    await task.call(calls.read('q2', { query: { kind: 'impact', ref: 'width' } }));
    expect(task.capsule().extensions).toEqual([
      { requestId: 'q1', query: { kind: 'resolve', ref: 'parameters/width' }, revision: auth.head0 },
      { requestId: 'q2', query: { kind: 'impact', ref: 'width' }, revision: task.head },
    ]);
  });

  it('a query naming an old observedRevision → STALE_REVISION like a stale effect: status stale, state observe, not dispatched, nothing recorded', async () => {
    const { task, auth } = await open();
    await task.call(calls.search('s'));
    await task.call(calls.describe('d'));
    const reads = auth.count('read');
    const e = await task.call(calls.read('q', { observedRevision: 'rev:old', query: { kind: 'lineage', ref: 'head' } }));
    expect(e.status).toBe('stale');
    expect(e.diagnostics.map((d) => d.code)).toEqual(['STALE_REVISION']);
    expect(e.data).toEqual({ completedPrefix: [], nextOperation: 'model.read' });
    expect(task.state).toBe('observe');
    expect(auth.count('read')).toBe(reads);
    expect(task.trace().events.at(-1)).toMatchObject({
      op: 'model.read',
      decision: 'rejected',
      code: 'STALE_REVISION',
      fromState: 'describe',
      toState: 'observe',
    });
    expect(task.capsule().extensions).toEqual([]);
    // At the head it is answered and recorded.
    expect((await task.call(calls.read('q2', { observedRevision: task.head, query: { kind: 'lineage', ref: 'head' } }))).status).toBe('success');
    expect(task.capsule().extensions).toEqual([{ requestId: 'q2', query: { kind: 'lineage', ref: 'head' }, revision: task.head }]);
  });

  it('a query answered stale by the authority is not recorded; a query answer with no revision is AUTHORITY_INTEGRITY', async () => {
    const { task, auth } = await open();
    auth.answer('read', { observedRevision: 'rev:moved', data: {}, diagnostics: [], status: 'stale' });
    expect((await task.call(calls.read('q1', { query: { kind: 'resolve', ref: 'x' } }))).status).toBe('stale');
    expect(task.capsule().extensions).toEqual([]);
    auth.answer('read', { observedRevision: '', data: {}, diagnostics: [] });
    await task.call(calls.read('q2', { query: { kind: 'resolve', ref: 'x' } }));
    expect(task.terminal).toMatchObject({ state: 'failed', code: 'AUTHORITY_INTEGRITY' });
  });

  it('the capsule keeps the most recent 32 extensions', async () => {
    const { task } = await open();
    const out = await task.batch(Array.from({ length: 40 }, (_, i) => calls.read(`q${i}`, { query: { kind: 'resolve', ref: `r${i}` } })));
    expect(out.results.every((r) => r.decision === 'scheduled')).toBe(true);
    const ext = task.capsule().extensions;
    expect(ext).toHaveLength(32);
    expect(ext[0]!.requestId).toBe('q8');
    expect(ext.at(-1)!.requestId).toBe('q39');
  });
});

describe('aira runtime: repair (M41, M42)', () => {
  it('a preview Diagnostic opens repair; repair needs rediscovery; cap 3 allows three rounds, the fourth ends cannotProceed', async () => {
    const { task, auth } = await open();
    for (let round = 1; round <= 4; round++) {
      await task.call(calls.search(`s${round}`));
      await task.call(calls.describe(`d${round}`));
      const p = await task.call(calls.propose(`p${round}`, task));
      auth.diagnose('preview', diag('ASSERTION_FAILED'));
      const e = await task.call(calls.preview(`pv${round}`, p.data['candidateId'] as string));
      expect(e.status).toBe('failed');
      if (round <= 3) {
        expect(task.state).toBe('repair');
        expect(e.budgets.consumed['repairs']).toBe(round);
        expect(e.budgets.remaining['repairs']).toBe(3 - round);
        expect(e.task.terminal).toBeNull();
        // In repair every effect needs rediscovery.
        const blocked = await task.call(calls.propose(`pr${round}`, task));
        expect(blocked.diagnostics[0]!.code).toBe('DISCOVERY_REQUIRED');
        expect(blocked.data['completedPrefix']).toEqual([]);
      } else {
        expect(e.task.terminal).toBe('cannotProceed');
        expect(task.terminal).toMatchObject({ state: 'cannotProceed', code: 'REPAIR_CAP_REACHED' });
      }
    }
    const after = await task.call(calls.search('late'));
    expect(after.diagnostics[0]!.code).toBe('TASK_TERMINAL');
  });

  it('plan.check runs inside proposePatch: its diagnostics open repair and the authority never sees the plan', async () => {
    const { task, auth } = await open();
    await task.call(calls.search('s'));
    await task.call(calls.describe('d'));
    const good = calls.propose('p', task) as { op: string; input: { requestId: string; plan: { steps: Array<Record<string, unknown>> } } };
    good.input.plan.steps[0]!['args'] = { name: 'width', value: 'wide' };
    const e = await task.call(good);
    expect(e.status).toBe('failed');
    expect(e.diagnostics.length).toBeGreaterThan(0);
    expect(e.diagnostics.every((d) => d.phase === 'plan')).toBe(true);
    expect(auth.count('propose')).toBe(0);
    expect(auth.count('manifest')).toBe(1);
    expect(task.state).toBe('repair');
    expect(e.budgets.consumed).toMatchObject({ calls: 3, effects: 1, repairs: 1 });
  });

  it('a stale plan (baseRevision not the head) returns to observe: status stale, no repair round spent (M3, M36 footnote 5)', async () => {
    const { task, auth } = await open({ protocol: { repairCap: 0 } });
    await task.call(calls.search('s'));
    await task.call(calls.describe('d'));
    const old = calls.propose('p', task) as { op: string; input: { requestId: string; plan: { baseRevision: string } } };
    old.input.plan.baseRevision = 'rev:old';
    const e = await task.call(old);
    expect(e.status).toBe('stale');
    expect(e.diagnostics.map((d) => d.code)).toEqual(['STALE_PLAN']);
    expect(e.observedRevision).toBe(task.head);
    expect(auth.count('propose')).toBe(0);
    // repairCap 0: a repair round would have ended the task.
    expect(task.terminal).toBeNull();
    expect(task.state).toBe('observe');
    expect(e.task).toMatchObject({ state: 'observe', terminal: null });
    expect(e.budgets.consumed['repairs']).toBe(0);
    expect(e.budgets.remaining['repairs']).toBe(0);
    expect(task.trace().events.at(-1)).toMatchObject({
      op: 'model.proposePatch',
      decision: 'scheduled',
      status: 'stale',
      fromState: 'describe',
      toState: 'observe',
    });
    // Back in observe the plan must be rebased and re-checked after discovery again.
    const again = await task.call(calls.propose('p2', task));
    expect(again.diagnostics[0]!.code).toBe('DISCOVERY_REQUIRED');
    expect(again.data).toEqual({ completedPrefix: [], nextOperation: 'catalog.search' });
    await task.call(calls.search('s2'));
    await task.call(calls.describe('d2'));
    expect((await task.call(calls.propose('p3', task))).status).toBe('success');
    expect(task.state).toBe('propose');
  });

  it('a plan the authority answers stale returns to observe too, and spends no repair round', async () => {
    const { task, auth } = await open({ protocol: { repairCap: 0 } });
    await task.call(calls.search('s'));
    await task.call(calls.describe('d'));
    const staleDiag = { ...diag('STALE_PLAN'), phase: 'plan' as const, cause: 'stale' as const };
    auth.answer('propose', { observedRevision: 'rev:moved', data: { candidateId: '' }, diagnostics: [staleDiag], status: 'stale' });
    const e = await task.call(calls.propose('p', task));
    expect(e.status).toBe('stale');
    expect(task.terminal).toBeNull();
    expect(task.state).toBe('observe');
    expect(task.head).toBe('rev:moved');
    expect(e.budgets.consumed['repairs']).toBe(0);
  });

  it('repairCap 0: the first diagnostic ends the task', async () => {
    const { task, auth } = await open({ protocol: { repairCap: 0 } });
    await task.call(calls.search('s'));
    await task.call(calls.describe('d'));
    auth.diagnose('propose', { ...diag('PARAMETER_UNKNOWN'), phase: 'lower' });
    await task.call(calls.propose('p', task));
    expect(task.terminal).toMatchObject({ state: 'cannotProceed', code: 'REPAIR_CAP_REACHED' });
  });

  it('a warning-severity diagnostic does not open repair; a validate with passed:false and an error diagnostic does', async () => {
    const { task, auth } = await open();
    await task.call(calls.search('s'));
    await task.call(calls.describe('d'));
    const p = await task.call(calls.propose('p', task));
    const cand = p.data['candidateId'] as string;
    auth.answer('preview', { observedRevision: auth.branchHead, data: {}, diagnostics: [diag('STYLE', 'warning')] });
    const pv = await task.call(calls.preview('pv', cand));
    expect(pv.status).toBe('success');
    expect(task.state).toBe('preview');
    auth.answer('validate', {
      observedRevision: auth.branchHead,
      data: { passed: false, evidence: [] },
      diagnostics: [{ ...diag('ASSERTION_FAILED'), phase: 'validate' }],
    });
    await task.call(calls.validate('v', cand));
    expect(task.state).toBe('repair');
  });

  it('a diagnostic on a call whose cell has no repair edge leaves the state unchanged and opens no round', async () => {
    const { task, auth } = await open();
    await task.call(calls.search('s'));
    auth.diagnose('describe', { ...diag('CAPABILITY_WITHDRAWN'), phase: 'read' });
    const e = await task.call(calls.describe('d'));
    expect(e.status).toBe('failed');
    expect(task.state).toBe('discover');
    expect(e.budgets.consumed['repairs']).toBe(0);
    // The failed describe does not count as discovery: propose is still refused.
    expect((await task.call(calls.propose('p', task))).diagnostics[0]!.code).toBe('DISCOVERY_REQUIRED');
  });

  it('a malformed diagnostic from the authority ends the task failed (AUTHORITY_INTEGRITY), never repair', async () => {
    const { task, auth } = await open();
    await task.call(calls.search('s'));
    await task.call(calls.describe('d'));
    const p = await task.call(calls.propose('p', task));
    auth.answer('preview', { observedRevision: auth.branchHead, data: {}, diagnostics: [{ code: 'lower-case', severity: 'error' }] });
    const e = await task.call(calls.preview('pv', p.data['candidateId'] as string));
    expect(e.status).toBe('failed');
    expect(e.diagnostics[0]!.code).toBe('AUTHORITY_INTEGRITY');
    expect(task.terminal).toMatchObject({ state: 'failed', code: 'AUTHORITY_INTEGRITY' });
    expect(task.state).toBe('propose');
  });
});

describe('aira runtime: authority faults and stale CAS', () => {
  it('an AuthorityError ends the task failed with its code', async () => {
    const { task, auth } = await open();
    auth.fail('search', new AuthorityError('AUTHORITY_UNAVAILABLE', 'down'));
    const e = await task.call(calls.search('s'));
    expect(e.status).toBe('failed');
    expect(task.terminal).toMatchObject({ state: 'failed', code: 'AUTHORITY_UNAVAILABLE', seq: 0 });
    expect((await task.call(calls.search('s2'))).diagnostics[0]!.code).toBe('TASK_TERMINAL');
  });

  it('any other throw is AUTHORITY_INTERNAL, with a one-line reason', async () => {
    const { task, auth } = await open();
    auth.fail('search', new TypeError('boom\n    at somewhere'));
    await task.call(calls.search('s'));
    expect(task.terminal).toMatchObject({ state: 'failed', code: 'AUTHORITY_INTERNAL', reason: 'boom' });
  });

  it('a result without what the runtime needs (propose with no candidate id) is AUTHORITY_INTEGRITY', async () => {
    const { task, auth } = await open();
    await task.call(calls.search('s'));
    await task.call(calls.describe('d'));
    auth.answer('propose', { observedRevision: auth.branchHead, data: { candidate: 'x' }, diagnostics: [] });
    await task.call(calls.propose('p', task));
    expect(task.terminal).toMatchObject({ state: 'failed', code: 'AUTHORITY_INTEGRITY' });
  });

  it("a describe answered with another capability's contract is AUTHORITY_INTEGRITY", async () => {
    const { task, auth } = await open();
    await task.call(calls.search('s'));
    auth.answer('describe', { observedRevision: auth.branchHead, data: { id: 'cap:test.other@1' }, diagnostics: [] });
    await task.call(calls.describe('d'));
    expect(task.terminal).toMatchObject({ state: 'failed', code: 'AUTHORITY_INTEGRITY' });
  });

  it('an authority classing a commit as a read fails the task before anything runs', async () => {
    const { task, auth } = await open();
    const { candidateId, token } = await toValidate(task);
    auth.effectClass = () => 'read';
    const e = await task.call(calls.commit('c', candidateId, token));
    expect(e.diagnostics[0]!.code).toBe('TASK_TERMINAL');
    expect(task.terminal).toMatchObject({ state: 'failed', code: 'AUTHORITY_INTEGRITY' });
    expect(auth.count('commit')).toBe(0);
  });

  it('commit answered stale → envelope stale, state observe, prefix reset, new head known', async () => {
    const { task, auth } = await open();
    const { candidateId, token } = await toValidate(task);
    auth.answer('commit', { observedRevision: 'rev:moved', data: {}, diagnostics: [], status: 'stale' });
    const e = await task.call(calls.commit('c', candidateId, token));
    expect(e.status).toBe('stale');
    expect(task.state).toBe('observe');
    expect(task.head).toBe('rev:moved');
    const again = await task.call(calls.propose('p2', task));
    expect(again.data).toEqual({ completedPrefix: [], nextOperation: 'catalog.search' });
  });
});

describe('aira runtime: completion (M43) and publishing', () => {
  it('read-back whose acceptance assertions fail: ACCEPTANCE_FAILED, stays readBack; a later passing read completes', async () => {
    const { task, auth } = await open();
    const { candidateId, token } = await toValidate(task);
    await task.call(calls.commit('c', candidateId, token));
    auth.verifyPasses = false;
    const r1 = await task.call(calls.read('r1'));
    expect(r1.diagnostics.map((d) => d.code)).toEqual(['ACCEPTANCE_FAILED']);
    expect(r1.diagnostics[0]).toMatchObject({ phase: 'completion', affected: ['width-45'] });
    expect(r1.certificateSummary).toMatchObject({ passed: false });
    expect(task.state).toBe('readBack');
    expect(task.terminal).toBeNull();
    auth.verifyPasses = true;
    const r2 = await task.call(calls.read('r2'));
    expect(r2.task.terminal).toBe('completed');
  });

  it('a verifier answering passed:true without a result for every declared assertion does not complete (ACCEPTANCE_UNVERIFIED)', async () => {
    const intent = {
      ...INTENT,
      acceptanceAssertions: [...INTENT.acceptanceAssertions, { id: 'wall-2', text: 'wall is 2', validator: 'param.equals', args: { name: 'wall', value: 2 } }],
    };
    const { task, auth } = await open({ intentFrame: intent });
    const { candidateId, token } = await toValidate(task);
    await task.call(calls.commit('c', candidateId, token));
    auth.answer('verify', { passed: true, results: [] });
    const r1 = await task.call(calls.read('r1'));
    expect(r1.diagnostics.map((d) => d.code)).toEqual(['ACCEPTANCE_UNVERIFIED']);
    expect(r1.diagnostics[0]).toMatchObject({ phase: 'completion', severity: 'error', affected: ['width-45', 'wall-2'] });
    expect(r1.certificateSummary).toMatchObject({ passed: false, assertions: 2 });
    expect(r1.task).toMatchObject({ state: 'readBack', terminal: null });
    // One assertion covered, the other not: still unverified, naming only the missing one.
    auth.answer('verify', {
      passed: true,
      results: [
        { assertion: 'width-45', passed: true },
        { assertion: 'other', passed: true },
      ],
    });
    const r2 = await task.call(calls.read('r2'));
    expect(r2.diagnostics.map((d) => d.code)).toEqual(['ACCEPTANCE_UNVERIFIED']);
    expect(r2.diagnostics[0]!.affected).toEqual(['wall-2']);
    expect(task.terminal).toBeNull();
    // Not verified, so not publishable either.
    const pub = await task.call(calls.commit('pub', candidateId, token, 'publish'));
    expect(pub.diagnostics[0]!.code).toBe('READBACK_REQUIRED');
    // Every declared assertion covered and passed: completed.
    const r3 = await task.call(calls.read('r3'));
    expect(r3.task.terminal).toBe('completed');
  });

  it('a stricter completion sequence (manifest required) is enforced at read-back', async () => {
    const seq = [
      'interface.manifest',
      'catalog.search',
      'catalog.describe',
      'model.proposePatch',
      'model.preview',
      'model.validate',
      'model.commit',
      'model.read',
    ] as const;
    const { task } = await open({ protocol: { requiredCompletionSequence: [...seq] } });
    const { candidateId, token } = await toValidate(task);
    await task.call(calls.commit('c', candidateId, token));
    const r = await task.call(calls.read('r'));
    expect(r.diagnostics.map((d) => d.code)).toEqual(['COMPLETION_SEQUENCE_INCOMPLETE']);
    expect(task.terminal).toBeNull();
  });

  it('completionAuthority model: a plain read-back does not complete; complete:true does; complete:true before commit → READBACK_REQUIRED', async () => {
    const { task, auth } = await open({ protocol: { completionAuthority: 'model' } });
    const early = await task.call(calls.read('r0', { complete: true }));
    expect(early.diagnostics[0]!.code).toBe('READBACK_REQUIRED');
    expect(auth.count('read')).toBe(0);
    const { candidateId, token } = await toValidate(task);
    await task.call(calls.commit('c', candidateId, token));
    const r1 = await task.call(calls.read('r1'));
    expect(r1.task.terminal).toBeNull();
    expect(r1.certificateSummary?.passed).toBe(true);
    const rv = await task.call(calls.revert('rv', auth.head0));
    expect(rv.task.state).toBe('commit');
    // L3: commit, read, revert, read(complete) → completed.
    const r2 = await task.call(calls.read('r2', { complete: true }));
    expect(r2.task.terminal).toBe('completed');
    expect(task.trace().events.at(-1)).toMatchObject({ op: 'model.read', fromState: 'commit', toState: 'readBack' });
  });

  it('publish: refused outside readBack and before a verified read-back; admitted after one, as an irreversible effect', async () => {
    const { task, auth } = await open({ protocol: { completionAuthority: 'model' } });
    const { candidateId, token } = await toValidate(task);
    const p0 = await task.call(calls.commit('pub0', candidateId, token, 'publish'));
    expect(p0.diagnostics[0]!.code).toBe('READBACK_REQUIRED');
    expect(p0.data['nextOperation']).toBe('model.read');
    await task.call(calls.commit('c', candidateId, token));
    auth.verifyPasses = false;
    await task.call(calls.read('r1'));
    const p1 = await task.call(calls.commit('pub1', candidateId, token, 'publish'));
    expect(p1.diagnostics[0]!.code).toBe('READBACK_REQUIRED');
    auth.verifyPasses = true;
    await task.call(calls.read('r2'));
    const p2 = await task.call(calls.commit('pub2', candidateId, token, 'publish'));
    expect(p2.status).toBe('success');
    expect(auth.count('commit')).toBe(2);
    expect(task.trace().events.at(-1)).toMatchObject({ op: 'model.commit', effectClass: 'irreversible', fromState: 'readBack', toState: 'readBack' });
    expect((await task.call(calls.read('r3', { complete: true }))).task.terminal).toBe('completed');
  });
});

describe('aira runtime: budgets, cancel, abstain', () => {
  it('calls budget: the call that spends it ends the task budgetExhausted', async () => {
    const { task } = await open({ budget: { calls: 3 } });
    await task.call(calls.search('a'));
    await task.call(calls.search('b'));
    const e = await task.call(calls.search('c'));
    expect(e.budgets.remaining['calls']).toBe(0);
    expect(task.terminal).toMatchObject({ state: 'budgetExhausted', code: 'BUDGET_EXHAUSTED', seq: 2 });
  });

  it('effects budget counts non-read calls only; rejected calls spend nothing', async () => {
    const { task } = await open({ budget: { effects: 2 } });
    await task.call(calls.propose('x', task));
    await task.call(calls.search('s'));
    await task.call(calls.describe('d'));
    const p = await task.call(calls.propose('p', task));
    expect(p.budgets.consumed).toMatchObject({ calls: 3, effects: 1 });
    await task.call(calls.preview('pv', p.data['candidateId'] as string));
    expect(task.terminal).toMatchObject({ state: 'budgetExhausted' });
  });

  it('millis budget on a virtual clock: a round after it is spent is refused TASK_TERMINAL', async () => {
    let t = 1000;
    const { task, auth } = await open({ budget: { millis: 50 } }, { now: () => t });
    const e = await task.call(calls.search('a'));
    expect(e.budgets).toMatchObject({ consumed: { millis: 0 }, remaining: { millis: 50 } });
    t += 50;
    const late = await task.call(calls.search('b'));
    expect(late.diagnostics[0]!.code).toBe('TASK_TERMINAL');
    expect(auth.count('search')).toBe(1);
    expect(task.terminal).toMatchObject({ state: 'budgetExhausted', seq: 1 });
  });

  it('cancel and abstain are terminal once; later calls are TASK_TERMINAL', async () => {
    const { task } = await open();
    await task.call(calls.search('a'));
    const c = task.cancel('user closed the session');
    expect(c).toEqual({ state: 'cancelled', code: 'CANCELLED', reason: 'user closed the session', seq: 1 });
    expect(task.abstain('too late')).toEqual(c);
    expect((await task.call(calls.search('b'))).task.terminal).toBe('cancelled');
    const other = (await open()).task;
    expect(other.abstain('no legal action reaches the goal')).toMatchObject({ state: 'cannotProceed', code: 'ABSTAINED', seq: 0 });
    expect(other.trace().terminal).toMatchObject({ state: 'cannotProceed' });
  });
});

describe('aira runtime: a refusal decided outside admission (refuse)', () => {
  const stale = (requestId: string) => ({
    requestId,
    op: 'model.proposePatch' as const,
    code: 'BOUND_CAPABILITY_STALE' as const,
    message: 'the binding is stale',
    next: { op: 'catalog.describe' as const, capability: CAP },
    details: { affected: [CAP], expected: { revision: 'rev:old' }, actual: { revision: 'rev:new' } },
  });

  it("is one rejected event of its own round, with an admission refusal's envelope; nothing dispatched, nothing spent", async () => {
    const { task, auth } = await open();
    await task.call(calls.search('s'));
    const before = await task.call(calls.describe('d'));
    const dispatched = auth.calls.length;
    const e = await task.refuse(stale('b1'));
    expect(Envelope.safeParse(e).success).toBe(true);
    expect(e).toMatchObject({ requestId: 'b1', status: 'blocked', observedRevision: task.head, effectsObserved: [], artifacts: [], certificateSummary: null });
    expect(e.diagnostics).toEqual([
      {
        code: 'BOUND_CAPABILITY_STALE',
        phase: 'binding',
        severity: 'error',
        cause: 'stale',
        message: 'the binding is stale',
        affected: [CAP],
        expected: { revision: 'rev:old' },
        actual: { revision: 'rev:new' },
        repairCapabilities: [],
        repairScope: [],
        approvalRequired: false,
      },
    ]);
    expect(e.data).toEqual({ completedPrefix: ['catalog.search', 'catalog.describe'], nextOperation: 'catalog.describe' });
    expect(e.nextActions).toEqual([{ op: 'catalog.describe', capability: CAP, preconditions: [] }]);
    expect(e.budgets).toEqual(before.budgets);
    expect(e.task).toEqual(before.task);
    expect(auth.calls.length).toBe(dispatched);
    // The same members as the runtime's own refusal of a call.
    const admission = await task.call(calls.preview('pv', 'cand:sha256:' + '0'.repeat(64)));
    expect(admission.diagnostics[0]!.code).toBe('CANDIDATE_REQUIRED');
    expect(Object.keys(e).sort()).toEqual(Object.keys(admission).sort());
    expect(Object.keys(e.data).sort()).toEqual(Object.keys(admission.data).sort());
    const events = task.trace().events;
    expect(events.at(-2)).toEqual({
      seq: 2,
      batch: 2,
      requestId: 'b1',
      op: 'model.proposePatch',
      fromState: 'describe',
      decision: 'rejected',
      code: 'BOUND_CAPABILITY_STALE',
      status: 'blocked',
      toState: 'describe',
    });
    expect(events.at(-1)).toMatchObject({ seq: 3, batch: 3, requestId: 'pv', code: 'CANDIDATE_REQUIRED' });
    expect(task.state).toBe('describe');
  });

  it('follows the request id rules of any refused call: it consumes its id, a reused id is DUPLICATE_REQUEST_ID, after the end TASK_TERMINAL', async () => {
    const { task, auth } = await open();
    await task.call(calls.search('s'));
    expect((await task.refuse(stale('s'))).diagnostics[0]!.code).toBe('DUPLICATE_REQUEST_ID');
    await task.refuse(stale('b1'));
    expect((await task.call(calls.describe('b1'))).diagnostics[0]!.code).toBe('DUPLICATE_REQUEST_ID');
    expect((await task.refuse(stale('b1'))).diagnostics[0]!.code).toBe('DUPLICATE_REQUEST_ID');
    expect(auth.count('describe')).toBe(0);
    const end = task.cancel('done');
    const late = await task.refuse(stale('b2'));
    expect(late.diagnostics[0]!.code).toBe('TASK_TERMINAL');
    expect(late.task.terminal).toBe('cancelled');
    expect(late.nextActions).toEqual([]);
    expect(task.terminal).toEqual(end);
    expect(task.trace().events.map((ev) => [ev.requestId, ev.code ?? ev.decision])).toEqual([
      ['s', 'scheduled'],
      ['s', 'DUPLICATE_REQUEST_ID'],
      ['b1', 'BOUND_CAPABILITY_STALE'],
      ['b1', 'DUPLICATE_REQUEST_ID'],
      ['b1', 'DUPLICATE_REQUEST_ID'],
      ['b2', 'TASK_TERMINAL'],
    ]);
  });

  it('a malformed refusal is REFUSAL_INVALID and records nothing', async () => {
    const { task } = await open();
    const bad: unknown[] = [
      { ...stale('x'), code: 'STALE_REVISION' },
      { ...stale('x'), code: 'TASK_TERMINAL' },
      { ...stale('x'), op: 'model.delete' },
      { ...stale('bad id') },
      { ...stale('x'), next: { op: 'catalog.describe', capability: 'not-a-capability' } },
      { ...stale('x'), details: { expected: Number.NaN } },
      { ...stale('x'), details: { approvalRequired: true } },
      null,
    ];
    for (const r of bad) await expect(task.refuse(r as never)).rejects.toMatchObject({ name: 'AiraError', code: 'REFUSAL_INVALID' });
    expect(task.trace().events).toEqual([]);
    expect((await task.refuse(stale('x'))).diagnostics[0]!.code).toBe('BOUND_CAPABILITY_STALE');
    expect(task.trace().events).toHaveLength(1);
  });
});

describe('aira runtime: startTask refuses bad input with typed errors', () => {
  const auth = new ScriptedAuthority();
  const start = (task: unknown, extra: Record<string, unknown> = {}) => startTask({ authority: auth, crypto, task: task as TaskInput, ...extra });
  const code = async (p: Promise<unknown>) => {
    try {
      await p;
      return 'resolved';
    } catch (e) {
      expect(e).toBeInstanceOf(AiraError);
      return (e as AiraError).code;
    }
  };

  it('malformed task input, loosened protocol, broken contract, failing openTask', async () => {
    expect(await code(start(null))).toBe('TASK_INPUT_INVALID');
    expect(await code(start({ intentFrame: { goal: 'x' } }))).toBe('TASK_INPUT_INVALID');
    expect(await code(start({ intentFrame: INTENT, extra: 1 }))).toBe('TASK_INPUT_INVALID');
    expect(await code(start({ intentFrame: INTENT, protocol: { requiredDiscoverySequence: ['catalog.search'] } }))).toBe('PROTOCOL_LOOSENED');
    expect(await code(start({ intentFrame: INTENT, protocol: { requiredDiscoverySequence: ['catalog.describe', 'catalog.search'] } }))).toBe(
      'PROTOCOL_LOOSENED',
    );
    expect(await code(start({ intentFrame: INTENT, protocol: { repairCap: 4 } }))).toBe('PROTOCOL_LOOSENED');
    expect(await code(start({ intentFrame: INTENT, protocol: { repairCap: 16 } }))).toBe('PROTOCOL_LOOSENED');
    const good = defaultContract(crypto);
    expect(await code(start({ intentFrame: INTENT }, { contract: { ...good, matrixDigest: `matrix:sha256:${'0'.repeat(64)}` } }))).toBe('CONTRACT_INVALID');
    const broken = structuredClone(good.descriptor) as { cells: Record<string, Record<string, unknown>> };
    delete broken.cells['observe']!['model.read'];
    expect(await code(start({ intentFrame: INTENT }, { contract: { ...good, descriptor: broken } }))).toBe('CONTRACT_INVALID');
    expect(await code(start({ intentFrame: INTENT }, { contract: 'matrix' }))).toBe('CONTRACT_INVALID');
    expect(await code(startTask({ authority: {} as never, crypto, task: { intentFrame: INTENT } }))).toBe('RUNTIME_OPTIONS_INVALID');
    expect(await code(startTask({ authority: auth, crypto: undefined as never, task: { intentFrame: INTENT } }))).toBe('RUNTIME_OPTIONS_INVALID');
    const nan = { ...INTENT, hardRequirements: [{ id: 'h', text: 't', payload: Number.NaN }] };
    expect(await code(start({ intentFrame: nan }))).toBe('TASK_INPUT_INVALID');
    const down = new ScriptedAuthority().fail('openTask', new AuthorityError('AUTHORITY_UNAVAILABLE', 'no store'));
    expect(await code(startTask({ authority: down, crypto, task: { intentFrame: INTENT } }))).toBe('AUTHORITY_UNAVAILABLE');
    const bad = new ScriptedAuthority().answer('openTask', { branch: '' });
    expect(await code(startTask({ authority: bad, crypto, task: { intentFrame: INTENT } }))).toBe('AUTHORITY_INTEGRITY');
  });

  it('every meta-op is known to the runtime (the nine of M28)', () => {
    expect(Object.keys(defaultContract(crypto).descriptor.cells.observe)).toEqual(META);
  });

  it("the static effect class of each meta-operation is M30's table", () => {
    const r = { requestId: 'r' };
    const cand = { ...r, candidateId: 'cand:sha256:' + '1'.repeat(64), validationToken: 'vtok:sha256:' + '2'.repeat(64) };
    const table: Array<[unknown, string]> = [
      [{ op: 'interface.manifest', input: r }, 'read'],
      [{ op: 'catalog.search', input: r }, 'read'],
      [{ op: 'catalog.describe', input: { ...r, capability: CAP } }, 'read'],
      [{ op: 'model.read', input: r }, 'read'],
      [{ op: 'model.read', input: { ...r, complete: true } }, 'read'],
      [{ op: 'model.proposePatch', input: r }, 'bufferable'],
      [{ op: 'model.preview', input: cand }, 'bufferable'],
      [{ op: 'model.validate', input: cand }, 'bufferable'],
      [{ op: 'model.commit', input: cand }, 'reversible'],
      [{ op: 'model.commit', input: { ...cand, target: 'branch' } }, 'reversible'],
      [{ op: 'model.commit', input: { ...cand, target: 'publish' } }, 'irreversible'],
      [{ op: 'model.revert', input: { ...r, toRevision: 'rev:x' } }, 'reversible'],
      [{ op: 'model.delete', input: r }, 'irreversible'],
    ];
    expect(table.map(([call]) => staticEffectClass(call as MetaCall))).toEqual(table.map(([, ec]) => ec));
  });
});
