// Drives the hand-written Aira corpus (test-vectors/aira) through the runtime on the document authority.
// The vectors hold the expectations; this file only fills in the values a call needs that only the
// task can know ($head, $candidate, …) and compares what the runtime answers with what the file says.
import { readFileSync } from 'node:fs';
import { expect } from 'vitest';
import type { AssertionResult, Authority, AuthorityContext, AuthorityResult, TaskBranch } from '../../ts/aira/authority.js';
import { AuthorityError } from '../../ts/aira/authority.js';
import { bracketTask, openDocumentAuthority } from '../../ts/aira/doc/index.js';
import { startTask, type AiraTask } from '../../ts/aira/runtime.js';
import { Envelope, Trace, type IntentFrame, type MetaCall, type TraceEvent } from '../../ts/aira/schema.js';
import type { Crypto } from '../../ts/crypto/index.js';

/** A vector file; a missing or unreadable one throws, so the suite fails instead of passing empty. */
export function loadVectors<T>(name: string): T {
  const url = new URL(`../../test-vectors/aira/${name}`, import.meta.url);
  return JSON.parse(readFileSync(url, 'utf8')) as T;
}

export interface TaskSpec {
  protocol?: Record<string, unknown>;
  budget?: Record<string, unknown>;
  intentFrame?: Partial<IntentFrame>;
}

export interface Fault {
  method: string;
  kind: 'malformedDiagnostic' | 'throw';
  code?: 'AUTHORITY_UNAVAILABLE' | 'AUTHORITY_INTEGRITY' | 'AUTHORITY_INTERNAL';
}

export interface CallExpect {
  decision?: 'scheduled' | 'deferred' | 'rejected';
  state?: string;
  status?: string;
  code?: string;
  next?: string;
  completedPrefix?: string[];
  diagnostics?: string[];
  terminal?: { state: string; code: string } | null;
  callsConsumed?: number;
  callsRemaining?: number;
  effectsConsumed?: number;
  effectsRemaining?: number;
  repairsRemaining?: number;
  observedRevision?: string;
}

export interface CallEntry {
  op: string;
  requestId: string;
  in: Record<string, unknown>;
  expect?: CallExpect;
}

/** The authority methods that carry a meta-operation (plus verify): what "dispatched" counts. */
const DISPATCH = ['manifest', 'search', 'describe', 'read', 'propose', 'preview', 'validate', 'commit', 'revert', 'verify'] as const;
const EFFECT_METHODS: readonly DispatchMethod[] = ['propose', 'preview', 'validate', 'commit', 'revert'];
export type DispatchMethod = (typeof DISPATCH)[number];
export const OP_METHOD: Readonly<Record<string, DispatchMethod>> = {
  'interface.manifest': 'manifest',
  'catalog.search': 'search',
  'catalog.describe': 'describe',
  'model.read': 'read',
  'model.proposePatch': 'propose',
  'model.preview': 'preview',
  'model.validate': 'validate',
  'model.commit': 'commit',
  'model.revert': 'revert',
};

/**
 * Wraps an authority: counts every dispatch, remembers the branch the runtime opened, and injects a
 * fault when told to. Everything else is passed through unchanged.
 */
export class CountingAuthority implements Authority {
  readonly kind: string;
  readonly counts: Record<DispatchMethod, number> = Object.fromEntries(DISPATCH.map((m) => [m, 0])) as Record<DispatchMethod, number>;
  branch: TaskBranch | null = null;
  taskId = '';

  constructor(
    readonly inner: Authority,
    private readonly fault?: Fault,
  ) {
    this.kind = inner.kind;
  }

  total(): number {
    return DISPATCH.reduce((n, m) => n + this.counts[m], 0);
  }

  snapshot(): Record<DispatchMethod, number> {
    return { ...this.counts };
  }

  /** The task branch's head, asked of the wrapped authority directly (not counted). */
  async head(ctx?: AuthorityContext): Promise<string> {
    if (ctx !== undefined) return this.inner.head(ctx);
    if (this.branch === null) throw new Error('no task branch opened yet');
    return this.inner.head({ taskId: this.taskId, branch: this.branch.branch, requestId: 'corpus-probe' });
  }

  async openTask(taskId: string): Promise<TaskBranch> {
    const b = await this.inner.openTask(taskId);
    this.branch = b;
    this.taskId = taskId;
    return b;
  }

  private async run<R>(m: DispatchMethod, f: () => Promise<R>): Promise<R> {
    this.counts[m]++;
    if (this.fault?.method === m && this.fault.kind === 'throw') throw new AuthorityError(this.fault.code ?? 'AUTHORITY_INTERNAL', 'injected by the corpus');
    const r = await f();
    if (this.fault?.method === m && this.fault.kind === 'malformedDiagnostic') {
      const bad = {
        code: 'ASSERTION_FAILED',
        phase: 'preview',
        severity: 'fatal',
        affected: [],
        cause: 'assertion',
        repairCapabilities: [],
        repairScope: [],
        approvalRequired: false,
        message: 'injected',
      };
      return { ...(r as AuthorityResult<unknown>), diagnostics: [bad] } as R;
    }
    return r;
  }

  manifest: Authority['manifest'] = (ctx) => this.run('manifest', () => this.inner.manifest(ctx));
  search: Authority['search'] = (ctx, input) => this.run('search', () => this.inner.search(ctx, input));
  describe: Authority['describe'] = (ctx, cap) => this.run('describe', () => this.inner.describe(ctx, cap));
  read: Authority['read'] = (ctx, input) => this.run('read', () => this.inner.read(ctx, input));
  propose: Authority['propose'] = (ctx, plan) => this.run('propose', () => this.inner.propose(ctx, plan));
  preview: Authority['preview'] = (ctx, c) => this.run('preview', () => this.inner.preview(ctx, c));
  validate: Authority['validate'] = (ctx, c) => this.run('validate', () => this.inner.validate(ctx, c));
  commit: Authority['commit'] = (ctx, input) => this.run('commit', () => this.inner.commit(ctx, input));
  revert: Authority['revert'] = (ctx, input) => this.run('revert', () => this.inner.revert(ctx, input));
  verify = (ctx: AuthorityContext, a: Parameters<Authority['verify']>[1], rev: string): Promise<AssertionResult> =>
    this.run('verify', () => this.inner.verify(ctx, a, rev));
  effectClass: Authority['effectClass'] = (call) => this.inner.effectClass(call);
  close(): Promise<void> {
    return this.inner.close();
  }
}

const ZERO = '0'.repeat(64);

/** One task under test plus what the corpus learned from its answers (to fill in $-values). */
export class CorpusTask {
  candidate = `cand:sha256:${ZERO}`;
  token = `vtok:sha256:${ZERO}`;
  catalogHash = `disc:sha256:${ZERO}`;
  batchStartHead = '';
  /** Every candidate id / validation token learned, in order: `$candidate#1` is the first. */
  readonly candidates: string[] = [];
  readonly tokens: string[] = [];

  private constructor(
    readonly task: AiraTask,
    readonly auth: CountingAuthority,
    readonly intentFrame: IntentFrame,
  ) {}

  /** `shared`: run on the same authority as another task (a second session of the same task). */
  static async start(crypto: Crypto, spec: TaskSpec = {}, fault?: Fault, shared?: Authority): Promise<CorpusTask> {
    const auth = new CountingAuthority(shared ?? openDocumentAuthority({ crypto }), fault);
    const intentFrame: IntentFrame = { ...bracketTask().intentFrame, ...(spec.intentFrame ?? {}) };
    const task = await startTask({
      authority: auth,
      crypto,
      task: { intentFrame, ...(spec.protocol ? { protocol: spec.protocol } : {}), ...(spec.budget ? { budget: spec.budget } : {}) },
    });
    expect(auth.branch, 'startTask opened the task branch').not.toBeNull();
    return new CorpusTask(task, auth, intentFrame);
  }

  get base(): string {
    return this.auth.branch!.baseRevision;
  }

  /** Replaces $-values in a call input with what this task knows now. */
  async resolve(v: unknown): Promise<unknown> {
    if (typeof v === 'string') {
      switch (v) {
        case '$head':
          return this.auth.head();
        case '$base':
          return this.base;
        case '$candidate':
          return this.candidate;
        case '$token':
          return this.token;
        case '$batchStartHead':
          return this.batchStartHead;
        default: {
          const nth = /^\$(candidate|token)#([1-9][0-9]?)$/.exec(v);
          if (nth !== null) {
            const got = (nth[1] === 'candidate' ? this.candidates : this.tokens)[Number(nth[2]) - 1];
            if (got === undefined) throw new Error(`corpus value ${v}: not learned yet`);
            return got;
          }
          if (v.startsWith('$')) throw new Error(`unknown corpus value ${v}`);
          return v;
        }
      }
    }
    if (Array.isArray(v)) return Promise.all(v.map((x) => this.resolve(x)));
    if (v !== null && typeof v === 'object') {
      const o = v as Record<string, unknown>;
      if ('$plan' in o) return this.plan(o['$plan'] as Array<{ capability: string; args: Record<string, unknown> }>);
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(o)) out[k] = await this.resolve(x);
      return out;
    }
    return v;
  }

  /** A whole plan around the given authoring steps, bound to what the task's capsule says. */
  private async plan(steps: Array<{ capability: string; args: Record<string, unknown> }>): Promise<Record<string, unknown>> {
    const capsule = this.task.capsule() as unknown as Record<string, unknown>;
    return {
      baseRevision: await this.auth.head(),
      intentFrameHash: capsule['intentFrameHash'],
      bindings: {
        operationCatalog: 'aira.doc.ops/1',
        discoveryCatalogHash: this.catalogHash,
        runtimeSnapshot: snapshotId(capsule['runtimeSnapshot']),
        grantId: 'grant:local',
      },
      steps: steps.map((s, i) => ({ id: `s${i + 1}`, capability: s.capability, mode: 'authoring', args: s.args })),
      acceptanceAssertions: this.intentFrame.acceptanceAssertions.map((a) => a.id),
      estimatedEffects: [],
      estimatedRisk: 'low',
    };
  }

  async call(entry: CallEntry): Promise<MetaCall> {
    return { op: entry.op, input: { requestId: entry.requestId, ...((await this.resolve(entry.in)) as Record<string, unknown>) } } as MetaCall;
  }

  /** Learns candidate, token and catalog hash from a scheduled call's envelope. */
  learn(op: string, env: Envelope): void {
    const d = env.data;
    if (op === 'model.proposePatch' && typeof d['candidateId'] === 'string') this.candidates.push((this.candidate = d['candidateId']));
    if (op === 'model.validate' && typeof d['validationToken'] === 'string') this.tokens.push((this.token = d['validationToken']));
    if (op === 'catalog.search' && typeof d['catalogHash'] === 'string') this.catalogHash = d['catalogHash'];
  }

  events(): TraceEvent[] {
    return this.task.trace().events;
  }
}

function snapshotId(s: unknown): unknown {
  if (typeof s === 'string') return s;
  if (s !== null && typeof s === 'object') {
    const o = s as Record<string, unknown>;
    for (const k of ['id', 'snapshotId', 'hash']) if (typeof o[k] === 'string') return o[k];
  }
  return s;
}

const errorCodes = (env: Envelope): string[] => env.diagnostics.filter((d) => d.severity === 'error').map((d) => d.code);

/** Checks an envelope (and its trace event, when given) against a hand-written expectation. */
export function checkEnvelope(where: string, t: CorpusTask, op: string, env: Envelope, x: CallExpect, ev?: TraceEvent): void {
  expect(Envelope.safeParse(env).success, `${where}: envelope parses`).toBe(true);
  if (x.decision !== undefined && ev !== undefined) expect(ev.decision, `${where}: decision`).toBe(x.decision);
  if (x.decision === 'rejected' || x.decision === 'deferred') {
    expect(env.status, `${where}: status of a refused call`).toBe(x.code === 'STALE_REVISION' ? 'stale' : 'blocked');
  }
  if (x.code !== undefined) {
    expect(
      env.diagnostics.map((d) => d.code),
      `${where}: diagnostic code`,
    ).toContain(x.code);
    if (x.decision === 'rejected' || x.decision === 'deferred') {
      expect(env.diagnostics[0]?.code, `${where}: the refusal's diagnostic`).toBe(x.code);
      if (ev !== undefined) expect(ev.code, `${where}: trace code`).toBe(x.code);
    }
  }
  if (x.next !== undefined) {
    expect(env.data['nextOperation'], `${where}: nextOperation`).toBe(x.next);
    expect(
      env.nextActions.map((a) => a.op),
      `${where}: nextActions`,
    ).toContain(x.next);
  }
  if (x.completedPrefix !== undefined) expect(env.data['completedPrefix'], `${where}: completedPrefix`).toEqual(x.completedPrefix);
  if (x.status !== undefined) expect(env.status, `${where}: status`).toBe(x.status);
  if (x.diagnostics !== undefined) {
    if (x.diagnostics.length === 0) expect(errorCodes(env), `${where}: no error diagnostic`).toEqual([]);
    for (const c of x.diagnostics) expect(errorCodes(env), `${where}: error diagnostics`).toContain(c);
  }
  if (x.state !== undefined) {
    expect(env.task.state, `${where}: envelope task.state`).toBe(x.state);
    expect(t.task.state, `${where}: task.state`).toBe(x.state);
    if (ev !== undefined) expect(ev.toState, `${where}: trace toState`).toBe(x.state);
  }
  if (x.terminal !== undefined) {
    if (x.terminal === null) {
      expect(env.task.terminal, `${where}: no terminal yet (envelope)`).toBeNull();
      expect(t.task.terminal, `${where}: no terminal yet (task)`).toBeNull();
    } else {
      expect(env.task.terminal, `${where}: envelope terminal`).toBe(x.terminal.state);
      expect(t.task.terminal?.state, `${where}: terminal state`).toBe(x.terminal.state);
      expect(t.task.terminal?.code, `${where}: terminal code`).toBe(x.terminal.code);
    }
  }
  const b = env.budgets;
  if (x.callsConsumed !== undefined) expect(b.consumed['calls'], `${where}: calls consumed`).toBe(x.callsConsumed);
  if (x.callsRemaining !== undefined) expect(b.remaining['calls'], `${where}: calls remaining`).toBe(x.callsRemaining);
  if (x.effectsConsumed !== undefined) expect(b.consumed['effects'], `${where}: effects consumed`).toBe(x.effectsConsumed);
  if (x.effectsRemaining !== undefined) expect(b.remaining['effects'], `${where}: effects remaining`).toBe(x.effectsRemaining);
  if (x.repairsRemaining !== undefined) expect(b.remaining['repairs'], `${where}: repairs remaining`).toBe(x.repairsRemaining);
}

/**
 * Sends one call, checks it against its expectation: one new trace event for it, the decision, the
 * state before and after, and that a refused call reached no authority method while a scheduled one
 * reached exactly its own.
 */
export async function runCall(where: string, t: CorpusTask, entry: CallEntry): Promise<Envelope> {
  const x = entry.expect ?? {};
  const before = t.auth.snapshot();
  const fromState = t.task.state;
  const seen = t.events().length;
  const env = await t.task.call(await t.call(entry));
  const events = t.events().slice(seen);
  expect(events.length, `${where}: one trace event per call`).toBe(1);
  const ev = events[0]!;
  expect(ev.requestId, `${where}: event requestId`).toBe(entry.requestId);
  expect(ev.op, `${where}: event op`).toBe(entry.op);
  expect(ev.fromState, `${where}: event fromState`).toBe(fromState);
  expect(env.requestId, `${where}: envelope requestId`).toBe(entry.requestId);
  const after = t.auth.snapshot();
  if (ev.decision === 'scheduled') {
    expect(ev.effectClass, `${where}: effect class in the trace (M30)`).toBe(m30EffectClass(entry.op, entry.in));
    const m = OP_METHOD[entry.op]!;
    expect(after[m] - before[m], `${where}: ${entry.op} dispatched once`).toBe(1);
    // The runtime may read (the manifest for a plan check, verify at read-back); it never writes for another op.
    for (const k of EFFECT_METHODS) if (k !== m) expect(after[k] - before[k], `${where}: no other effect dispatched (${k})`).toBe(0);
  } else {
    expect(after, `${where}: a refused call reaches no authority method`).toEqual(before);
    if (x.code !== 'STALE_REVISION') expect(env.observedRevision, `${where}: a refusal names the branch head`).toBe(await t.auth.head());
    expect(ev.toState, `${where}: a refused call keeps the state`).toBe(x.code === 'STALE_REVISION' ? 'observe' : fromState);
  }
  checkEnvelope(where, t, entry.op, env, x, ev);
  if (ev.decision === 'scheduled') t.learn(entry.op, env);
  return env;
}

/** M30's effect class of a meta-operation call, written out here rather than asked of the authority. */
export function m30EffectClass(op: string, input: Record<string, unknown>): string {
  if (op === 'interface.manifest' || op === 'catalog.search' || op === 'catalog.describe' || op === 'model.read') return 'read';
  if (op === 'model.proposePatch' || op === 'model.preview' || op === 'model.validate') return 'bufferable';
  if (op === 'model.commit') return input['target'] === 'publish' ? 'irreversible' : 'reversible';
  return 'reversible';
}

/** The trace as a whole: schema-valid, versions bound, seq strictly +1, states chained. */
export function checkTrace(where: string, t: CorpusTask): void {
  const tr = t.task.trace();
  expect(Trace.safeParse(tr).success, `${where}: trace parses`).toBe(true);
  expect(tr.contractVersion, `${where}: contractVersion`).toBe('1.0.0');
  expect(tr.traceVersion, `${where}: traceVersion`).toBe('0.5.0');
  expect(tr.taskId, `${where}: trace taskId`).toBe(t.task.taskId);
  tr.events.forEach((e, i) => {
    if (i > 0) {
      expect(e.seq, `${where}: seq of event ${i}`).toBe(tr.events[i - 1]!.seq + 1);
      expect(e.fromState, `${where}: event ${i} starts where ${i - 1} ended`).toBe(tr.events[i - 1]!.toState);
    }
  });
  expect(tr.terminal, `${where}: trace terminal is the task's`).toEqual(t.task.terminal);
}
