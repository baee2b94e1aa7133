/**
 * TEST DOUBLE: a scripted Authority for the runtime's unit tests. It keeps a tiny revision chain so
 * the runtime's own bookkeeping (head, candidate, token) is exercised against real-looking ids, logs
 * every method the runtime calls, and lets a test script the next answer of any method (a diagnostic,
 * a stale CAS, a thrown AuthorityError, a malformed result).
 */
import { createHash } from 'node:crypto';
import {
  AuthorityError,
  type AssertionResult,
  type Authority,
  type AuthorityContext,
  type AuthorityManifest,
  type AuthorityResult,
  type CapabilityContract,
  type CapabilityHit,
  type TaskBranch,
  type ValidationData,
} from '../../ts/aira/authority.js';
import { staticEffectClass } from '../../ts/aira/contract.js';
import type { AcceptanceAssertion, Diagnostic, EffectClass, MetaCall, OpInput, Plan } from '../../ts/aira/schema.js';

export const h = (prefix: string, s: string): string => `${prefix}:sha256:${createHash('sha256').update(s).digest('hex')}`;

export const CAP = 'cap:test.set@1';
export const CONTRACT: CapabilityContract = {
  id: CAP,
  title: 'Set a value',
  effectClass: 'bufferable',
  risk: 'low',
  description: 'sets one named value',
  inputSchema: {
    type: 'object',
    properties: { name: { type: 'string' }, value: { type: 'number' } },
    required: ['name', 'value'],
    additionalProperties: false,
  },
  mode: 'authoring',
  reversible: true,
  preconditions: [],
};
export const CATALOG_HASH = h('disc', 'test-catalog');

type Method = 'openTask' | 'head' | 'manifest' | 'search' | 'describe' | 'read' | 'propose' | 'preview' | 'validate' | 'commit' | 'revert' | 'verify';
type Scripted = { kind: 'result'; value: unknown } | { kind: 'throw'; error: unknown };

export function diag(code: string, severity: Diagnostic['severity'] = 'error'): Diagnostic {
  return {
    code,
    phase: 'preview',
    severity,
    affected: [],
    cause: 'assertion',
    repairCapabilities: [],
    repairScope: [],
    approvalRequired: false,
    message: code,
  };
}

export class ScriptedAuthority implements Authority {
  readonly kind = 'test.scripted';
  readonly calls: Array<{ method: Method; requestId?: string }> = [];
  readonly revisions: string[] = [h('rev', 'r0')];
  head0 = this.revisions[0]!;
  branchHead = this.head0;
  verifyPasses = true;
  #candidates = 0;
  readonly #script = new Map<Method, Scripted[]>();
  /** Resolves in-flight reads in the order a test releases them (for concurrency tests). */
  gate: Promise<void> | null = null;

  /** The next call of `method` answers `value` (as is, possibly malformed) instead of the default. */
  answer(method: Method, value: unknown): this {
    this.#push(method, { kind: 'result', value });
    return this;
  }

  /** The next call of `method` throws `error`. */
  fail(method: Method, error: unknown): this {
    this.#push(method, { kind: 'throw', error });
    return this;
  }

  /** The next call of `method` returns its default data with these diagnostics. */
  diagnose(method: Method, ...diagnostics: Diagnostic[]): this {
    return this.answer(method, { observedRevision: this.branchHead, data: {}, diagnostics });
  }

  count(method: Method): number {
    return this.calls.filter((c) => c.method === method).length;
  }

  #push(method: Method, s: Scripted): void {
    const q = this.#script.get(method) ?? [];
    q.push(s);
    this.#script.set(method, q);
  }

  async #run<T>(method: Method, ctx: AuthorityContext | null, dflt: () => T): Promise<T> {
    this.calls.push({ method, ...(ctx ? { requestId: ctx.requestId } : {}) });
    if (this.gate && (method === 'read' || method === 'search' || method === 'manifest' || method === 'describe')) await this.gate;
    const s = this.#script.get(method)?.shift();
    if (s?.kind === 'throw') throw s.error;
    if (s?.kind === 'result') return s.value as T;
    return dflt();
  }

  #ok<D>(data: D, extra: Partial<AuthorityResult<D>> = {}): AuthorityResult<D> {
    return { observedRevision: this.branchHead, data, diagnostics: [], ...extra };
  }

  openTask(taskId: string): Promise<TaskBranch> {
    return this.#run('openTask', null, () => ({ branch: `task/${taskId}`, baseRevision: this.head0, head: this.branchHead }));
  }
  head(ctx: AuthorityContext): Promise<string> {
    return this.#run('head', ctx, () => this.branchHead);
  }
  manifest(ctx: AuthorityContext): Promise<AuthorityResult<AuthorityManifest>> {
    return this.#run('manifest', ctx, () =>
      this.#ok({ authority: 'test', protocolVersion: '1', operationCatalog: 'test.ops/1', taxonomyRoot: 'test', validators: ['param.equals'], limits: {} }),
    );
  }
  search(ctx: AuthorityContext, _input: OpInput<'catalog.search'>): Promise<AuthorityResult<{ hits: CapabilityHit[]; catalogHash: string }>> {
    const hit: CapabilityHit = { id: CAP, title: CONTRACT.title, effectClass: CONTRACT.effectClass, risk: CONTRACT.risk };
    return this.#run('search', ctx, () => this.#ok({ hits: [hit], catalogHash: CATALOG_HASH }));
  }
  describe(ctx: AuthorityContext, capability: string): Promise<AuthorityResult<CapabilityContract>> {
    return this.#run('describe', ctx, () =>
      capability === CAP ? this.#ok(CONTRACT) : this.#ok({} as CapabilityContract, { diagnostics: [{ ...diag('CAPABILITY_UNKNOWN'), phase: 'read' }] }),
    );
  }
  read(ctx: AuthorityContext, _input: OpInput<'model.read'>): Promise<AuthorityResult<Record<string, unknown>>> {
    return this.#run('read', ctx, () => this.#ok({ head: this.branchHead }));
  }
  propose(ctx: AuthorityContext, plan: Plan): Promise<AuthorityResult<{ candidateId: string } & Record<string, unknown>>> {
    return this.#run('propose', ctx, () => this.#ok({ candidateId: h('cand', `${plan.baseRevision}/${++this.#candidates}`) }));
  }
  preview(ctx: AuthorityContext, candidateId: string): Promise<AuthorityResult<Record<string, unknown>>> {
    return this.#run('preview', ctx, () => this.#ok({ candidateId, diff: [] }));
  }
  validate(ctx: AuthorityContext, candidateId: string): Promise<AuthorityResult<ValidationData>> {
    return this.#run('validate', ctx, () => this.#ok({ passed: true, validationToken: h('vtok', candidateId), evidence: [] }));
  }
  commit(ctx: AuthorityContext, input: OpInput<'model.commit'>): Promise<AuthorityResult<{ revision: string }>> {
    return this.#run('commit', ctx, () => {
      if (input.target === 'publish') return this.#ok({ revision: this.branchHead });
      this.branchHead = h('rev', `r${this.revisions.length}`);
      this.revisions.push(this.branchHead);
      return this.#ok({ revision: this.branchHead });
    });
  }
  revert(ctx: AuthorityContext, _input: OpInput<'model.revert'>): Promise<AuthorityResult<{ revision: string }>> {
    return this.#run('revert', ctx, () => {
      this.branchHead = h('rev', `r${this.revisions.length}`);
      this.revisions.push(this.branchHead);
      return this.#ok({ revision: this.branchHead });
    });
  }
  verify(ctx: AuthorityContext, assertions: readonly AcceptanceAssertion[], _revision: string): Promise<AssertionResult> {
    return this.#run('verify', ctx, () => ({ passed: this.verifyPasses, results: assertions.map((a) => ({ assertion: a.id, passed: this.verifyPasses })) }));
  }
  effectClass(call: MetaCall): EffectClass {
    return staticEffectClass(call);
  }
  async close(): Promise<void> {}
}

export { AuthorityError };

// ---------------------------------------------------------------------------------------------
// Call builders for the tests

export const INTENT = {
  goal: 'Set width to 45',
  hardRequirements: [],
  softPreferences: [],
  scope: [],
  prohibitedEffects: [],
  assumptions: [],
  unknowns: [],
  acceptanceAssertions: [{ id: 'width-45', text: 'width is 45', validator: 'param.equals', args: { name: 'width', value: 45 } }],
};

export interface PlanSource {
  readonly head: string;
  readonly intentFrameHash: string;
  readonly runtimeSnapshot: string;
  readonly grantId: string;
}

export const calls = {
  manifest: (requestId: string) => ({ op: 'interface.manifest', input: { requestId } }),
  search: (requestId: string) => ({ op: 'catalog.search', input: { requestId } }),
  describe: (requestId: string, capability = CAP) => ({ op: 'catalog.describe', input: { requestId, capability } }),
  read: (requestId: string, extra: Record<string, unknown> = {}) => ({ op: 'model.read', input: { requestId, ...extra } }),
  propose: (requestId: string, task: PlanSource, value = 45, extra: Record<string, unknown> = {}) => {
    const plan = {
      baseRevision: task.head,
      intentFrameHash: task.intentFrameHash,
      bindings: { operationCatalog: 'test.ops/1', discoveryCatalogHash: CATALOG_HASH, runtimeSnapshot: task.runtimeSnapshot, grantId: task.grantId },
      steps: [{ id: 's1', capability: CAP, mode: 'authoring', args: { name: 'width', value } }],
      acceptanceAssertions: ['width-45'],
      estimatedEffects: [],
      estimatedRisk: 'low',
    };
    return { op: 'model.proposePatch', input: { requestId, plan, ...extra } };
  },
  preview: (requestId: string, candidateId: string) => ({ op: 'model.preview', input: { requestId, candidateId } }),
  validate: (requestId: string, candidateId: string) => ({ op: 'model.validate', input: { requestId, candidateId } }),
  commit: (requestId: string, candidateId: string, validationToken: string, target?: 'branch' | 'publish') => ({
    op: 'model.commit',
    input: { requestId, candidateId, validationToken, ...(target ? { target } : {}) },
  }),
  revert: (requestId: string, toRevision: string) => ({ op: 'model.revert', input: { requestId, toRevision } }),
};
