// The hand-written Aira corpus (M37): four legal and six illegal sequences, three batch reductions and
// nine terminal cases, driven through the runtime on the document authority with its memory store.
import { describe, expect, it } from 'vitest';
import { getCrypto } from '../../ts/crypto/index.js';
import { TERMINAL_STATES } from '../../ts/aira/schema.js';
import {
  checkEnvelope,
  checkTrace,
  CorpusTask,
  loadVectors,
  m30EffectClass,
  OP_METHOD,
  runCall,
  type CallEntry,
  type CallExpect,
  type DispatchMethod,
  type Fault,
  type TaskSpec,
} from './corpus-harness.js';

interface Sequence {
  name: string;
  task: TaskSpec;
  calls: CallEntry[];
  terminal: { state: string; code: string } | null;
}
interface Sequences {
  legal: Sequence[];
  illegal: Sequence[];
}
interface BatchCase {
  name: string;
  task: TaskSpec;
  prefix: CallEntry[];
  batch: CallEntry[];
  expect: {
    results: Array<{ requestId: string; decision: string; code?: string; status?: string; observedRevision?: string }>;
    trace: Array<{ requestId: string; decision: string; code?: string; effectClass?: string; fromState: string; toState: string }>;
    dispatched: Partial<Record<DispatchMethod, number>>;
    headMoved?: boolean;
    state: string;
  };
  after: CallEntry[];
}
type TerminalStep = CallEntry | { action: 'cancel' | 'abstain'; reason: string };
interface TerminalCase {
  name: string;
  task: TaskSpec;
  fault?: Fault;
  calls: TerminalStep[];
  terminal: { state: string; code: string };
  afterTerminal: CallEntry[];
}

const sequences = loadVectors<Sequences>('sequences.json');
const batches = loadVectors<{ cases: BatchCase[] }>('batches.json');
const terminals = loadVectors<{ cases: TerminalCase[] }>('terminals.json');

describe('corpus vectors', () => {
  it('hold the counts of M34/M37: 4 legal, 6 illegal, 3 batches, 9 terminal cases over all five terminal states', () => {
    expect(sequences.legal).toHaveLength(4);
    expect(sequences.illegal).toHaveLength(6);
    expect(batches.cases).toHaveLength(3);
    expect(terminals.cases).toHaveLength(9);
    expect(new Set(terminals.cases.map((c) => c.terminal.state))).toEqual(new Set(TERMINAL_STATES));
  });
});

/** Checks that the task ended as the file says and that every later call is refused TASK_TERMINAL. */
async function checkEnded(where: string, t: CorpusTask, want: { state: string; code: string }, later: CallEntry[]): Promise<void> {
  const rec = t.task.terminal;
  expect(rec, `${where}: terminal`).not.toBeNull();
  expect({ state: rec!.state, code: rec!.code }, `${where}: terminal record`).toEqual(want);
  expect(t.task.trace().terminal, `${where}: terminal in the trace`).toEqual(rec);
  for (const [i, entry] of later.entries()) {
    await runCall(`${where} after terminal ${i + 1}`, t, { ...entry, expect: { decision: 'rejected', code: 'TASK_TERMINAL' } });
    expect(t.task.terminal, `${where}: the terminal is set once`).toEqual(rec);
  }
}

describe.each(['wasm', 'js'])('Aira corpus on the document authority (%s)', (backend) => {
  const crypto = getCrypto(backend);

  describe.each([
    ['legal', sequences.legal],
    ['illegal', sequences.illegal],
  ] as const)('%s sequences', (_kind, list) => {
    it.each(list.map((s) => [s.name, s] as const))('%s', async (name, s) => {
      const run = async (): Promise<{ t: CorpusTask; envelopes: unknown[] }> => {
        const t = await CorpusTask.start(crypto, s.task);
        const envelopes: unknown[] = [];
        for (const [i, entry] of s.calls.entries()) envelopes.push(await runCall(`${name} #${i + 1} ${entry.requestId}`, t, entry));
        return { t, envelopes };
      };
      const { t, envelopes } = await run();
      if (s.terminal === null) expect(t.task.terminal, `${name}: no terminal`).toBeNull();
      else await checkEnded(name, t, s.terminal, [{ op: 'interface.manifest', requestId: 'corpus-after-terminal', in: {} }]);
      checkTrace(name, t);
      // Deterministic: the same task on a fresh authority answers and traces byte for byte alike.
      const again = await run();
      expect(JSON.stringify(again.envelopes), `${name}: envelopes replay identically`).toBe(JSON.stringify(envelopes));
      expect(JSON.stringify(again.t.task.trace().events), `${name}: trace replays identically`).toBe(
        JSON.stringify(t.task.trace().events.slice(0, s.calls.length)),
      );
    });
  });

  it.each(batches.cases.map((c) => [c.name, c] as const))('batch %s', async (name, c) => {
    const t = await CorpusTask.start(crypto, c.task);
    for (const [i, entry] of c.prefix.entries()) await runCall(`${name} prefix ${i + 1}`, t, entry);
    t.batchStartHead = await t.auth.head();
    const calls = [];
    for (const entry of c.batch) calls.push(await t.call(entry));
    const before = t.auth.snapshot();
    const seen = t.events().length;
    const out = await t.task.batch(calls);

    // Results in input order.
    expect(
      out.results.map((r) => [r.requestId, r.op, r.decision]),
      `${name}: results`,
    ).toEqual(c.batch.map((b, i) => [b.requestId, b.op, c.expect.results[i]!.decision]));
    for (const [i, r] of out.results.entries()) {
      const x = c.expect.results[i]!;
      const cx: CallExpect = { decision: x.decision as CallExpect['decision'] };
      if (x.code !== undefined) cx.code = x.code;
      if (x.status !== undefined) cx.status = x.status;
      checkEnvelope(`${name} result ${i + 1} ${r.requestId}`, t, r.op, r.envelope, cx);
      if (x.code === 'DEFERRED') expect(r.envelope.diagnostics[0]!.severity, `${name}: DEFERRED is not an error`).not.toBe('error');
      if (x.observedRevision !== undefined) expect(r.envelope.observedRevision, `${name}: ${r.requestId} saw`).toBe(await t.resolve(x.observedRevision));
      if (r.decision === 'scheduled') t.learn(r.op, r.envelope);
    }

    // The trace records the round in the fixed order, one batch number, seq +1, states folded.
    const events = t.events().slice(seen);
    const shape = (e: { requestId: string; decision: string; code?: string | undefined; fromState: string; toState: string }) => ({
      requestId: e.requestId,
      decision: e.decision,
      code: e.code,
      fromState: e.fromState,
      toState: e.toState,
    });
    expect(events.map(shape), `${name}: trace`).toEqual(c.expect.trace.map(shape));
    for (const [i, e] of c.expect.trace.entries()) {
      if (e.effectClass !== undefined) expect(events[i]?.effectClass, `${name}: effect class of ${e.requestId}`).toBe(e.effectClass);
    }
    for (const e of events) expect(e.batch, `${name}: one batch number`).toBe(out.batch);
    for (const [i, r] of out.results.entries()) {
      if (r.decision !== 'scheduled') continue;
      const ev = events.find((e) => e.requestId === r.requestId && e.decision === 'scheduled');
      expect(ev?.effectClass, `${name}: effect class of ${r.requestId} (M30)`).toBe(m30EffectClass(c.batch[i]!.op, c.batch[i]!.in));
    }
    expect(new Set(events.map((e) => e.op))).toEqual(new Set(c.batch.map((b) => b.op)));

    // Exactly the scheduled calls reached the authority.
    // (Reads the runtime makes on its own, such as the manifest for a plan check, are not counted here.)
    const after = t.auth.snapshot();
    const checked = new Set<DispatchMethod>([...c.batch.map((b) => OP_METHOD[b.op]!), 'propose', 'preview', 'validate', 'commit', 'revert']);
    for (const m of checked) expect(after[m] - before[m], `${name}: ${m} dispatched`).toBe(c.expect.dispatched[m] ?? 0);
    for (const r of out.results) if (r.decision === 'scheduled') expect(c.expect.dispatched[OP_METHOD[r.op]!], `${name}: ${r.op} counted`).toBeGreaterThan(0);
    if (c.expect.headMoved !== undefined) expect((await t.auth.head()) !== t.batchStartHead, `${name}: head moved`).toBe(c.expect.headMoved);
    expect(t.task.state, `${name}: state after the round`).toBe(c.expect.state);

    for (const [i, entry] of c.after.entries()) await runCall(`${name} after ${i + 1} ${entry.requestId}`, t, entry);
    checkTrace(name, t);
  });

  it.each(terminals.cases.map((c) => [c.name, c] as const))('terminal %s', async (name, c) => {
    const t = await CorpusTask.start(crypto, c.task, c.fault);
    for (const [i, step] of c.calls.entries()) {
      if ('action' in step) {
        const calls = t.auth.total();
        const rec = step.action === 'cancel' ? t.task.cancel(step.reason) : t.task.abstain(step.reason);
        expect(rec, `${name}: ${step.action} returns the terminal`).toEqual(t.task.terminal);
        expect(t.auth.total(), `${name}: ${step.action} dispatches nothing`).toBe(calls);
      } else {
        await runCall(`${name} #${i + 1} ${step.requestId}`, t, step);
      }
    }
    await checkEnded(name, t, c.terminal, c.afterTerminal);
    checkTrace(name, t);
  });
});
