// The 81 cells of the runtime matrix, each from a fresh task on the document authority: the prefix
// reaches the state, then the cell's call is admitted into the hand-written target state or refused
// with the hand-written code, next operation and completed prefix, without reaching the authority.
import { describe, expect, it } from 'vitest';
import { getCrypto } from '../../ts/crypto/index.js';
import { defaultContract } from '../../ts/aira/contract.js';
import { META_OPS, RUNTIME_STATES } from '../../ts/aira/schema.js';
import { checkTrace, CorpusTask, loadVectors, runCall, type CallEntry, type CallExpect, type TaskSpec } from './corpus-harness.js';

interface CellExpect {
  admit: boolean;
  to?: string;
  code?: string;
  next?: string;
}
type FootnoteCall = CallEntry & { session?: 'twin' };
interface MatrixVectors {
  footnotes: { cases: Array<{ name: string; task: TaskSpec; calls: FootnoteCall[] }> };
  contractVersion: string;
  task: TaskSpec & { why?: string };
  cellCalls: Record<string, Record<string, unknown>>;
  states: Record<string, { prefix: CallEntry[] }>;
  completedPrefix: Record<string, string[]>;
  cells: Array<{ state: string; op: string; expect: CellExpect }>;
}

const v = loadVectors<MatrixVectors>('matrix-cells.json');
const spec: TaskSpec = { ...(v.task.protocol ? { protocol: v.task.protocol } : {}) };

describe('matrix vectors', () => {
  it('cover every state x op exactly once, each state with a prefix', () => {
    expect(v.contractVersion).toBe('1.0.0');
    const keys = v.cells.map((c) => `${c.state} ${c.op}`);
    expect(new Set(keys).size).toBe(81);
    for (const s of RUNTIME_STATES) {
      expect(v.states[s], `prefix for ${s}`).toBeDefined();
      expect(v.completedPrefix[s], `completed prefix for ${s}`).toBeDefined();
      for (const op of META_OPS) expect(keys, `${s} x ${op}`).toContain(`${s} ${op}`);
    }
    for (const op of META_OPS) expect(v.cellCalls[op], `call for ${op}`).toBeDefined();
  });

  it('agree with the descriptor the runtime ships (matrix-1.0.0.json), cell by cell', () => {
    const d = defaultContract(getCrypto()).descriptor;
    expect(d.contractVersion).toBe(v.contractVersion);
    for (const c of v.cells) {
      const cell = d.cells[c.state as (typeof RUNTIME_STATES)[number]][c.op as (typeof META_OPS)[number]];
      const got = cell.admit ? { admit: true, to: cell.to === '=' ? c.state : cell.to } : { admit: false, code: cell.code, next: cell.next };
      expect(got, `${c.state} x ${c.op}`).toEqual(c.expect);
    }
  });
});

describe.each(['wasm', 'js'])('runtime matrix 1.0.0 on the document authority (%s)', (backend) => {
  const crypto = getCrypto(backend);

  it.each(v.cells.map((c) => [`${c.state} x ${c.op}`, c] as const))('%s', async (name, cell) => {
    const t = await CorpusTask.start(crypto, spec);
    for (const [i, entry] of v.states[cell.state]!.prefix.entries()) await runCall(`${name} prefix ${i + 1} ${entry.op}`, t, entry);
    expect(t.task.state, `${name}: prefix reaches the state`).toBe(cell.state);
    const x: CallExpect = cell.expect.admit
      ? { decision: 'scheduled', state: cell.expect.to!, status: 'success', diagnostics: [] }
      : { decision: 'rejected', state: cell.state, code: cell.expect.code!, next: cell.expect.next!, completedPrefix: v.completedPrefix[cell.state]! };
    const entry: CallEntry = { op: cell.op, requestId: 'cell', in: v.cellCalls[cell.op]!, expect: x };
    const env = await runCall(name, t, entry);
    if (!cell.expect.admit) {
      expect(env.diagnostics, `${name}: one admission diagnostic`).toHaveLength(1);
      expect(env.diagnostics[0]!.phase).toBe('admission');
      expect(env.diagnostics[0]!.cause).toBe('protocol');
      expect(env.diagnostics[0]!.severity).toBe('error');
      expect(env.nextActions).toEqual([{ op: cell.expect.next, preconditions: [] }]);
    }
    expect(t.task.terminal, `${name}: no terminal`).toBeNull();
    checkTrace(name, t);
  });
});

describe.each(['wasm', 'js'])('matrix footnotes on the document authority (%s)', (backend) => {
  const crypto = getCrypto(backend);

  it.each(v.footnotes.cases.map((c) => [c.name, c] as const))('footnote %s', async (name, c) => {
    const main = await CorpusTask.start(crypto, c.task);
    let twin: CorpusTask | null = null;
    for (const [i, entry] of c.calls.entries()) {
      if (entry.session === 'twin') twin ??= await CorpusTask.start(crypto, c.task, undefined, main.auth.inner);
      const t = entry.session === 'twin' ? twin! : main;
      await runCall(`${name} #${i + 1} ${entry.requestId}`, t, entry);
    }
    if (twin !== null) expect(twin.task.taskId, `${name}: the twin is the same task`).toBe(main.task.taskId);
    checkTrace(name, main);
  });
});
