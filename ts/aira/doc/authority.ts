/**
 * The built-in document authority: an `aira.doc/1` document under immutable revisions, one branch per
 * task cut from the user head. proposePatch lowers a plan's authoring steps to a task-local candidate
 * (no revision, no ref but the task's own candidate pointer); validate binds candidate, base and
 * evidence into a token; commit compare-and-swaps the task branch; publish compare-and-swaps the user
 * head (the one irreversible step); revert writes a new revision with an ancestor's document.
 *
 * Everything the store hands back is checked: a revision, candidate or token whose content id does
 * not recompute is an integrity fault (AuthorityError), never trusted. Anything the caller can repair
 * is a typed Diagnostic with a stable code.
 */
import { z } from 'zod';
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
} from '../authority.js';
import type { Crypto } from '../../crypto/backend.js';
import { staticEffectClass } from '../contract.js';
import { diagnostic } from '../diagnostics.js';
import { contentId } from '../ids.js';
import {
  Plan,
  type AcceptanceAssertion,
  type CapabilityId,
  type Diagnostic,
  type EffectClass,
  type EffectObserved,
  type MetaCall,
  type OpInput,
  type PlanStep,
} from '../schema.js';
import { capability, checkArgs, DOC_CAPABILITIES, OPERATION_CATALOG, searchCatalog } from './catalog.js';
import { AiraDoc, bracketDoc, cloneDoc, DOC_SCHEMA, getParam, LIMITS, RESERVED_NAMES, setMember, type Parameter } from './model.js';
import {
  MemoryDocStore,
  refs,
  VOID_TOKEN,
  type CandidateRecord,
  type DocStore,
  type Evidence,
  type RevisionOp,
  type RevisionRecord,
  type TokenRecord,
} from './store.js';
import { checkValidatorArgs, evaluate, VALIDATORS } from './validators.js';

export const DOC_AUTHORITY = 'aira.doc';
export const DOC_PROTOCOL_VERSION = '1.0.0';
/** Ancestors followed at most when checking a revert target; deeper history is refused, not walked. */
export const MAX_ANCESTRY = 10_000;
/** Revisions a lineage query returns at most. */
export const MAX_LINEAGE = 32;

export interface DocumentAuthorityOptions {
  crypto: Crypto;
  /** Default: a fresh MemoryDocStore. */
  store?: DocStore;
  /** The document a store without a user head starts from (default: the bracket). A store that has one keeps it. */
  seed?: AiraDoc;
  seedName?: string;
}

const TASK_ID = /^[A-Za-z0-9._:-]{1,200}$/;
const USED = 'used:';

const RevisionShape = z.strictObject({
  id: z.string(),
  parent: z.string().nullable(),
  seq: z.number().int().nonnegative(),
  doc: AiraDoc,
  op: z.union([
    z.strictObject({ kind: z.literal('seed'), name: z.string() }),
    z.strictObject({ kind: z.literal('commit'), candidateId: z.string() }),
    z.strictObject({ kind: z.literal('revert'), toRevision: z.string() }),
  ]),
});

const quote = (s: string): string => JSON.stringify(s.length > 64 ? `${s.slice(0, 64)}…` : s);

/** An own `__proto__` member in args or one level below (an assertion's args). */
function hasProtoMember(v: unknown, depth = 2): boolean {
  if (v === null || typeof v !== 'object' || depth === 0) return false;
  if (Object.hasOwn(v, '__proto__')) return true;
  return Object.values(v).some((x) => hasProtoMember(x, depth - 1));
}

/** What a lowering of a plan's steps on a base document gives. */
interface Lowered {
  readonly doc: AiraDoc;
  readonly authoring: PlanStep[];
  readonly diagnostics: Diagnostic[];
  readonly patch: Array<{ step: string; op: string; target: string }>;
}

function lower(base: AiraDoc, steps: readonly PlanStep[]): Lowered {
  const doc = cloneDoc(base);
  const diagnostics: Diagnostic[] = [];
  const authoring: PlanStep[] = [];
  const patch: Array<{ step: string; op: string; target: string }> = [];
  const seen = new Set<string>();
  const lowerDiag = (code: string, cause: Diagnostic['cause'], step: PlanStep, message: string, extra?: Partial<Diagnostic>): void => {
    diagnostics.push(diagnostic(code, 'lower', cause, `step ${quote(step.id)}: ${message}`, { affected: [step.id], ...extra }));
  };
  for (const step of steps) {
    if (seen.has(step.id)) {
      lowerDiag('STEP_DUPLICATE', 'input', step, 'a step id appears twice');
      continue;
    }
    const deps = (step.dependsOn ?? []).filter((d) => !seen.has(d));
    seen.add(step.id);
    const c = capability(step.capability);
    if (c === undefined) {
      lowerDiag('CAPABILITY_UNKNOWN', 'input', step, `no capability ${quote(step.capability)} in ${OPERATION_CATALOG}`, { repairScope: ['catalog.search'] });
      continue;
    }
    if (deps.length > 0) {
      lowerDiag('STEP_DEPENDENCY', 'input', step, `depends on ${deps.slice(0, 4).map(quote).join(', ')}, which is not an earlier step`);
      continue;
    }
    if (step.mode !== c.mode) {
      lowerDiag('STEP_MODE', 'input', step, `${c.id} is a ${c.mode} capability, the step says ${step.mode}`, { expected: c.mode, actual: step.mode });
      continue;
    }
    const name = step.args['name'];
    if (typeof name === 'string' && RESERVED_NAMES.has(name)) {
      lowerDiag('NAME_RESERVED', 'input', step, `${quote(name)} cannot name a parameter`);
      continue;
    }
    const bad = checkArgs(c.id, step.args);
    if (bad !== null) {
      lowerDiag('ARGS_INVALID', 'input', step, `${c.id} ${bad}`, { repairCapabilities: [c.id as CapabilityId] });
      continue;
    }
    if (c.mode === 'query') continue;
    const d = apply(doc, c.id, step);
    if (d !== null) {
      diagnostics.push(d);
      continue;
    }
    authoring.push(step);
    patch.push({ step: step.id, op: c.id, target: String(step.args['name'] ?? step.args['id']) });
  }
  if (diagnostics.length === 0) {
    if (authoring.length === 0) {
      diagnostics.push(diagnostic('PATCH_EMPTY', 'lower', 'precondition', 'the plan has no authoring step: nothing to propose'));
    } else {
      const r = AiraDoc.safeParse(doc);
      if (!r.success)
        diagnostics.push(
          diagnostic('DOC_LIMIT', 'lower', 'input', `the patched document exceeds a limit: ${r.error.issues[0]?.message ?? 'invalid'}`, {
            affected: authoring.map((s) => s.id),
          }),
        );
    }
  }
  return { doc, authoring, diagnostics, patch };
}

/** Applies one checked authoring step to `doc` in place, or says why it cannot. */
function apply(doc: AiraDoc, cap: string, step: PlanStep): Diagnostic | null {
  const a = step.args;
  const d = (code: string, cause: Diagnostic['cause'], message: string, extra: Partial<Diagnostic> = {}): Diagnostic =>
    diagnostic(code, 'lower', cause, `step ${quote(step.id)}: ${message}`, { ...extra, affected: [step.id, ...(extra.affected ?? [])] });
  switch (cap) {
    case 'cap:doc.setParameter@1': {
      const name = a['name'] as string;
      const value = a['value'] as Parameter['value'];
      const p = getParam(doc, name);
      if (p === undefined)
        return d('PARAMETER_UNKNOWN', 'precondition', `no parameter ${quote(name)}`, {
          affected: [name],
          expected: 'an existing parameter',
          actual: name,
          repairCapabilities: ['cap:doc.addParameter@1'],
        });
      if (typeof p.value !== typeof value)
        return d('PARAMETER_TYPE', 'input', `${quote(name)} holds a ${typeof p.value}`, { affected: [name], expected: typeof p.value, actual: typeof value });
      setMember(doc.parameters, name, p.unit === undefined ? { value } : { value, unit: p.unit });
      return null;
    }
    case 'cap:doc.addParameter@1': {
      const name = a['name'] as string;
      if (getParam(doc, name) !== undefined)
        return d('PARAMETER_EXISTS', 'precondition', `parameter ${quote(name)} exists`, { affected: [name], repairCapabilities: ['cap:doc.setParameter@1'] });
      const unit = a['unit'] as string | undefined;
      const value = a['value'] as Parameter['value'];
      setMember(doc.parameters, name, unit === undefined ? { value } : { value, unit });
      return null;
    }
    case 'cap:doc.removeParameter@1': {
      const name = a['name'] as string;
      if (getParam(doc, name) === undefined) return d('PARAMETER_UNKNOWN', 'precondition', `no parameter ${quote(name)}`, { affected: [name] });
      delete doc.parameters[name];
      return null;
    }
    case 'cap:doc.addAssertion@1': {
      const id = a['id'] as string;
      if (doc.assertions.some((x) => x.id === id)) return d('ASSERTION_EXISTS', 'precondition', `assertion ${quote(id)} exists`, { affected: [id] });
      const bad = checkValidatorArgs(a['validator'] as string, a['args']);
      if (bad !== null) return d(bad.code, 'input', bad.message, { affected: [id] });
      doc.assertions.push({ id, validator: a['validator'] as string, args: a['args'] as Record<string, unknown> });
      return null;
    }
    default: {
      // cap:doc.removeAssertion@1
      const id = a['id'] as string;
      if (!doc.assertions.some((x) => x.id === id)) return d('ASSERTION_UNKNOWN', 'precondition', `no assertion ${quote(id)}`, { affected: [id] });
      doc.assertions = doc.assertions.filter((x) => x.id !== id);
      return null;
    }
  }
}

/** Active assertions of `doc`, each evaluated on it. */
function checkActive(doc: AiraDoc): Evidence[] {
  return doc.assertions.map((x) => {
    const e = evaluate(doc, x.validator, x.args);
    return { assertion: x.id, passed: e.passed, detail: e.detail };
  });
}

function failures(doc: AiraDoc, evidence: readonly Evidence[], phase: 'preview' | 'validate'): Diagnostic[] {
  return evidence
    .filter((e) => !e.passed)
    .map((e) => {
      const a = doc.assertions.find((x) => x.id === e.assertion);
      const detail = (e.detail ?? {}) as { code?: string; expected?: unknown; actual?: unknown };
      const param = typeof a?.args['name'] === 'string' ? [a.args['name']] : [];
      return diagnostic(
        'ASSERTION_FAILED',
        phase,
        'assertion',
        `assertion ${quote(e.assertion)} (${a?.validator ?? '?'}) fails${detail.code ? `: ${detail.code}` : ''}`,
        {
          affected: [e.assertion, ...param],
          expected: detail.expected,
          actual: detail.actual,
          repairCapabilities: ['cap:doc.setParameter@1'],
        },
      );
    });
}

function diffDocs(from: AiraDoc, to: AiraDoc): Record<string, unknown> {
  const parameters: Array<{ name: string; from?: unknown; to?: unknown }> = [];
  const names = new Set([...Object.keys(from.parameters), ...Object.keys(to.parameters)]);
  for (const n of [...names].sort()) {
    const a = getParam(from, n);
    const b = getParam(to, n);
    if (JSON.stringify(a) === JSON.stringify(b)) continue;
    parameters.push({ name: n, ...(a !== undefined ? { from: a } : {}), ...(b !== undefined ? { to: b } : {}) });
  }
  const ids = (d: AiraDoc): Set<string> => new Set(d.assertions.map((x) => x.id));
  const fromIds = ids(from);
  const toIds = ids(to);
  return {
    parameters,
    assertionsAdded: [...toIds].filter((i) => !fromIds.has(i)),
    assertionsRemoved: [...fromIds].filter((i) => !toIds.has(i)),
  };
}

type Refuse = (
  code: string,
  cause: Diagnostic['cause'],
  message: string,
  extra?: Partial<Diagnostic>,
  status?: 'success' | 'stale',
) => AuthorityResult<{ revision: string }>;

/** A commit or revert that changed nothing: the branch head stays, one diagnostic says why. */
function refusal(
  head: string,
  code: string,
  cause: Diagnostic['cause'],
  message: string,
  extra?: Partial<Diagnostic>,
  status: 'success' | 'stale' = 'success',
): AuthorityResult<{ revision: string }> {
  return { observedRevision: head, data: { revision: head }, diagnostics: [diagnostic(code, 'commit', cause, message, extra)], status };
}

/** `openDocumentAuthority` returns at once; the store is seeded on first use. */
export function openDocumentAuthority(opts: DocumentAuthorityOptions): Authority {
  return new DocumentAuthority(opts);
}

class DocumentAuthority implements Authority {
  readonly kind = DOC_AUTHORITY;
  private readonly crypto: Crypto;
  private readonly store: DocStore;
  private readonly seed: AiraDoc;
  private readonly seedName: string;
  private seeded: Promise<void> | undefined;
  private catalogHashMemo: string | undefined;

  constructor(opts: DocumentAuthorityOptions) {
    this.crypto = opts.crypto;
    this.store = opts.store ?? new MemoryDocStore();
    const seed = AiraDoc.safeParse(opts.seed ?? bracketDoc());
    if (!seed.success) throw new AuthorityError('AUTHORITY_INTEGRITY', `seed document is not ${DOC_SCHEMA}: ${seed.error.issues[0]?.message ?? 'invalid'}`);
    this.seed = seed.data;
    this.seedName = opts.seedName ?? 'bracket';
  }

  // ------------------------------------------------------------------ plumbing

  /** Store and programming faults become AuthorityError; AuthorityError passes through. */
  private async guard<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      if (e instanceof AuthorityError) throw e;
      throw new AuthorityError('AUTHORITY_INTERNAL', `document authority ${what}: ${e instanceof Error ? e.message : String(e)}`.slice(0, 1000));
    }
  }

  private ensureSeeded(): Promise<void> {
    this.seeded ??= (async () => {
      if ((await this.store.getRef(refs.head)) !== null) return;
      const rev = this.revision(null, 0, this.seed, { kind: 'seed', name: this.seedName });
      // A concurrent opener may have seeded first; either way there is a head now.
      await this.store.swap([{ name: refs.head, expected: null, next: rev.id }], rev);
    })().catch((e: unknown) => {
      this.seeded = undefined;
      throw e;
    });
    return this.seeded;
  }

  private revision(parent: string | null, seq: number, doc: AiraDoc, op: RevisionOp): RevisionRecord {
    const body = { parent, seq, doc, op };
    return { id: contentId('rev', body, this.crypto), ...body };
  }

  private async loadRevision(id: string): Promise<RevisionRecord> {
    const r = await this.store.getRevision(id);
    if (r === null) throw new AuthorityError('AUTHORITY_INTEGRITY', `revision ${quote(id)} is referenced but not stored`);
    return this.checkRevision(id, r);
  }

  private checkRevision(id: string, r: RevisionRecord): RevisionRecord {
    const p = RevisionShape.safeParse(r);
    if (!p.success || p.data.id !== id || contentId('rev', { parent: p.data.parent, seq: p.data.seq, doc: p.data.doc, op: p.data.op }, this.crypto) !== id) {
      throw new AuthorityError('AUTHORITY_INTEGRITY', `stored revision ${quote(id)} does not match its id`);
    }
    return p.data;
  }

  /** A known revision, or null when none has that id. */
  private async findRevision(id: string): Promise<RevisionRecord | null> {
    if (typeof id !== 'string' || id.length > 200) return null;
    const r = await this.store.getRevision(id);
    return r === null ? null : this.checkRevision(id, r);
  }

  private async branchHead(ctx: AuthorityContext): Promise<string> {
    if (typeof ctx.taskId !== 'string' || !TASK_ID.test(ctx.taskId) || ctx.branch !== refs.branch(ctx.taskId))
      throw new AuthorityError('AUTHORITY_INTEGRITY', `branch ${quote(String(ctx.branch))} is not the branch of task ${quote(String(ctx.taskId))}`);
    const head = await this.store.getRef(ctx.branch);
    if (head === null) throw new AuthorityError('AUTHORITY_INTEGRITY', `task branch ${quote(ctx.branch)} is not open`);
    return head;
  }

  private candidateIdOf(taskId: string, baseRevision: string, steps: readonly PlanStep[]): string {
    return contentId('cand', { taskId, baseRevision, steps }, this.crypto);
  }

  /** The task's stored candidate, checked, or null when this task has none with that id. */
  private async findCandidate(ctx: AuthorityContext, id: unknown): Promise<CandidateRecord | null> {
    if (typeof id !== 'string' || id.length > 200) return null;
    const c = await this.store.getCandidate(id);
    if (c === null || c.taskId !== ctx.taskId) return null;
    if (this.candidateIdOf(c.taskId, c.baseRevision, c.steps) !== id)
      throw new AuthorityError('AUTHORITY_INTEGRITY', `stored candidate ${quote(id)} does not match its id`);
    return c;
  }

  /** The candidate's document, lowered again from its base; a stored candidate that no longer lowers is an integrity fault. */
  private async candidateDoc(c: CandidateRecord): Promise<{ base: RevisionRecord; doc: AiraDoc }> {
    const base = await this.loadRevision(c.baseRevision);
    const l = lower(base.doc, c.steps);
    if (l.diagnostics.length > 0) throw new AuthorityError('AUTHORITY_INTEGRITY', `stored candidate ${quote(c.id)} does not lower on its base`);
    return { base, doc: l.doc };
  }

  private tokenIdOf(t: { candidateId: string; baseRevision: string; evidence: readonly Evidence[] }): string {
    return contentId('vtok', { candidateId: t.candidateId, baseRevision: t.baseRevision, evidence: t.evidence }, this.crypto);
  }

  private catalogHash(): string {
    this.catalogHashMemo ??= contentId('disc', { operationCatalog: OPERATION_CATALOG, capabilities: DOC_CAPABILITIES }, this.crypto);
    return this.catalogHashMemo;
  }

  // ------------------------------------------------------------------ Authority

  openTask(taskId: string): Promise<TaskBranch> {
    return this.guard('openTask', async () => {
      if (typeof taskId !== 'string' || !TASK_ID.test(taskId))
        throw new AuthorityError('AUTHORITY_INTEGRITY', 'task id must be 1–200 characters of [A-Za-z0-9._:-]');
      await this.ensureSeeded();
      const branch = refs.branch(taskId);
      for (let attempt = 0; attempt < 3; attempt++) {
        const head = await this.store.getRef(branch);
        if (head !== null) {
          const base = await this.store.getRef(refs.base(taskId));
          if (base === null) throw new AuthorityError('AUTHORITY_INTEGRITY', `task ${quote(taskId)} has a branch but no base`);
          return { branch, baseRevision: base, head };
        }
        const user = await this.store.getRef(refs.head);
        if (user === null) throw new AuthorityError('AUTHORITY_INTEGRITY', 'the store has no user head');
        const ok = await this.store.swap([
          { name: branch, expected: null, next: user },
          { name: refs.base(taskId), expected: null, next: user },
          { name: refs.token(taskId), expected: null, next: VOID_TOKEN },
        ]);
        if (ok) return { branch, baseRevision: user, head: user };
      }
      throw new AuthorityError('AUTHORITY_INTERNAL', `task ${quote(taskId)}: could not open its branch`);
    });
  }

  head(ctx: AuthorityContext): Promise<string> {
    return this.guard('head', () => this.branchHead(ctx));
  }

  manifest(ctx: AuthorityContext): Promise<AuthorityResult<AuthorityManifest>> {
    return this.guard('manifest', async () => ({
      observedRevision: await this.branchHead(ctx),
      data: {
        authority: DOC_AUTHORITY,
        protocolVersion: DOC_PROTOCOL_VERSION,
        operationCatalog: OPERATION_CATALOG,
        taxonomyRoot: 'doc',
        validators: [...VALIDATORS],
        limits: { parameters: LIMITS.parameters, assertions: LIMITS.assertions, stringValue: LIMITS.stringValue, planSteps: 64, lineage: MAX_LINEAGE },
      },
      diagnostics: [],
    }));
  }

  search(ctx: AuthorityContext, input: OpInput<'catalog.search'>): Promise<AuthorityResult<{ hits: CapabilityHit[]; catalogHash: string }>> {
    return this.guard('search', async () => {
      const head = await this.branchHead(ctx);
      const q = typeof input?.query === 'string' ? input.query.slice(0, 500) : undefined;
      const limit = typeof input?.limit === 'number' && Number.isInteger(input.limit) ? Math.min(Math.max(input.limit, 1), 50) : undefined;
      const hits = searchCatalog({ query: q, effectClass: input?.effectClass, maxRisk: input?.maxRisk, limit }).map((c) => ({
        id: c.id,
        title: c.title,
        effectClass: c.effectClass,
        risk: c.risk,
      }));
      return { observedRevision: head, data: { hits, catalogHash: this.catalogHash() }, diagnostics: [] };
    });
  }

  describe(ctx: AuthorityContext, id: CapabilityId): Promise<AuthorityResult<CapabilityContract>> {
    return this.guard('describe', async () => {
      const head = await this.branchHead(ctx);
      const c = typeof id === 'string' ? capability(id) : undefined;
      if (c === undefined) {
        return {
          observedRevision: head,
          // No contract to give: the data is empty and the diagnostic says why.
          data: {} as CapabilityContract,
          diagnostics: [
            diagnostic('CAPABILITY_UNKNOWN', 'input', 'input', `no capability ${quote(String(id))} in ${OPERATION_CATALOG}`, {
              affected: [String(id).slice(0, 160)],
              repairScope: ['catalog.search'],
            }),
          ],
        };
      }
      return { observedRevision: head, data: JSON.parse(JSON.stringify(c)) as CapabilityContract, diagnostics: [] };
    });
  }

  read(ctx: AuthorityContext, input: OpInput<'model.read'>): Promise<AuthorityResult<Record<string, unknown>>> {
    return this.guard('read', async () => {
      const head = await this.branchHead(ctx);
      const rev = await this.loadRevision(head);
      const doc = rev.doc;
      const data: Record<string, unknown> = {
        revision: head,
        seq: rev.seq,
        branch: ctx.branch,
        userHead: await this.store.getRef(refs.head),
        schema: doc.schema,
      };
      const diagnostics: Diagnostic[] = [];
      const missing = (what: string, ref: string): void => {
        diagnostics.push(
          diagnostic('SELECT_UNKNOWN', 'read', 'input', `${what} ${quote(ref)} names nothing in the document`, {
            severity: 'warning',
            affected: [ref.slice(0, 200)],
          }),
        );
      };
      const resolve = (path: string): { found: boolean; value?: unknown } => {
        if (path === 'parameters') return { found: true, value: doc.parameters };
        if (path === 'assertions') return { found: true, value: doc.assertions };
        if (path === 'revision') return { found: true, value: head };
        if (path.startsWith('parameters/')) {
          const p = getParam(doc, path.slice('parameters/'.length));
          return p === undefined ? { found: false } : { found: true, value: p };
        }
        if (path.startsWith('assertions/')) {
          const a = doc.assertions.find((x) => x.id === path.slice('assertions/'.length));
          return a === undefined ? { found: false } : { found: true, value: a };
        }
        return { found: false };
      };
      const select = Array.isArray(input?.select) ? input.select.slice(0, 64) : undefined;
      if (select === undefined && input?.query === undefined) {
        data['parameters'] = doc.parameters;
        data['assertions'] = doc.assertions;
      }
      if (select !== undefined) {
        const selected: Record<string, unknown> = {};
        for (const path of select) {
          if (typeof path !== 'string') continue;
          const r = resolve(path);
          if (r.found) setMember(selected, path, r.value);
          else missing('selection', path);
        }
        data['selected'] = selected;
      }
      const q = input?.query;
      if (q !== undefined && typeof q.ref === 'string') {
        if (q.kind === 'resolve') {
          const r = resolve(q.ref);
          if (r.found) data['query'] = { kind: q.kind, ref: q.ref, value: r.value };
          else missing('reference', q.ref);
        } else if (q.kind === 'impact') {
          if (getParam(doc, q.ref) === undefined) missing('parameter', q.ref);
          else data['query'] = { kind: q.kind, ref: q.ref, assertions: doc.assertions.filter((a) => a.args['name'] === q.ref).map((a) => a.id) };
        } else {
          const start = q.ref === 'head' ? rev : await this.findRevision(q.ref);
          if (start === null) missing('revision', q.ref);
          else {
            const lineage: Array<{ id: string; seq: number; op: RevisionOp }> = [];
            let r: RevisionRecord | null = start;
            while (r !== null && lineage.length < MAX_LINEAGE) {
              lineage.push({ id: r.id, seq: r.seq, op: r.op });
              r = r.parent === null ? null : await this.loadRevision(r.parent);
            }
            data['query'] = { kind: q.kind, ref: q.ref, lineage, truncated: r !== null };
          }
        }
      }
      return {
        observedRevision: head,
        data: JSON.parse(JSON.stringify(data)) as Record<string, unknown>,
        diagnostics,
        status: diagnostics.length > 0 ? 'partial' : 'success',
      };
    });
  }

  propose(ctx: AuthorityContext, planIn: Plan): Promise<AuthorityResult<{ candidateId: string } & Record<string, unknown>>> {
    return this.guard('propose', async () => {
      const head = await this.branchHead(ctx);
      const refused = (
        d: Diagnostic,
        extra: Record<string, unknown> = {},
        status: 'success' | 'stale' = 'success',
      ): AuthorityResult<{ candidateId: string } & Record<string, unknown>> => ({
        observedRevision: head,
        // No candidate was made: the empty id names none, and the diagnostics say why.
        data: { candidateId: '', ...extra },
        diagnostics: [d],
        status,
      });
      // Schema parsing would drop an own `__proto__` member silently; a step that carries one is refused instead.
      const rawSteps: unknown = (planIn as { steps?: unknown } | null)?.steps;
      if (Array.isArray(rawSteps)) {
        const bad = rawSteps.find((s: unknown) => s !== null && typeof s === 'object' && hasProtoMember((s as { args?: unknown }).args)) as
          { id?: unknown } | undefined;
        if (bad !== undefined) {
          const id = typeof bad.id === 'string' ? bad.id.slice(0, 128) : '?';
          return refused(diagnostic('ARGS_INVALID', 'lower', 'input', `step ${quote(id)}: args carry a __proto__ member`, { affected: [id] }));
        }
      }
      const parsed = Plan.safeParse(planIn);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        return refused(
          diagnostic(
            'PLAN_INVALID',
            'plan',
            'input',
            `plan${issue?.path.length ? `.${issue.path.join('.')}` : ''}: ${issue?.message ?? 'invalid'}`.slice(0, 300),
          ),
        );
      }
      const plan = parsed.data;
      if (plan.bindings.operationCatalog !== OPERATION_CATALOG) {
        return refused(
          diagnostic(
            'CATALOG_MISMATCH',
            'plan',
            'input',
            `the plan binds ${quote(plan.bindings.operationCatalog)}, this authority serves ${OPERATION_CATALOG}`,
            { expected: OPERATION_CATALOG, actual: plan.bindings.operationCatalog.slice(0, 64) },
          ),
        );
      }
      if (plan.baseRevision !== head) {
        return refused(
          diagnostic('STALE_PLAN', 'plan', 'stale', 'the plan is based on a revision that is no longer the branch head', {
            expected: head,
            actual: plan.baseRevision.slice(0, 200),
            repairScope: ['model.read'],
          }),
          {},
          'stale',
        );
      }
      const base = await this.loadRevision(head);
      const l = lower(base.doc, plan.steps);
      if (l.diagnostics.length > 0) {
        return { observedRevision: head, data: { candidateId: '', failedStep: l.diagnostics[0]!.affected[0] ?? null }, diagnostics: l.diagnostics };
      }
      // All steps, query ones included: a dependsOn may name them, and lowering again must see them.
      let id: string;
      try {
        id = this.candidateIdOf(ctx.taskId, head, plan.steps);
      } catch (e) {
        // Args the checks above let through but canonical JSON refuses: the plan's fault, not the authority's.
        return refused(
          diagnostic('ARGS_INVALID', 'lower', 'input', `the steps cannot be canonicalised: ${e instanceof Error ? e.message : String(e)}`.slice(0, 300)),
        );
      }
      await this.store.putCandidate({ id, taskId: ctx.taskId, baseRevision: head, steps: plan.steps });
      return { observedRevision: head, data: { candidateId: id, baseRevision: head, patch: l.patch }, diagnostics: [] };
    });
  }

  /** The live candidate of the task with its document, or the diagnostic that says why there is none. */
  private async liveCandidate(
    ctx: AuthorityContext,
    candidateId: unknown,
    phase: 'preview' | 'validate' | 'commit',
  ): Promise<{ c: CandidateRecord; base: RevisionRecord; doc: AiraDoc } | Diagnostic> {
    const c = await this.findCandidate(ctx, candidateId);
    if (c === null)
      return diagnostic('CANDIDATE_UNKNOWN', phase, 'precondition', `task has no candidate ${quote(String(candidateId))}`, {
        repairScope: ['model.proposePatch'],
      });
    if ((await this.store.getRef(refs.candidate(ctx.taskId))) !== c.id) {
      return diagnostic('CANDIDATE_SUPERSEDED', phase, 'precondition', 'a newer candidate replaced this one', {
        affected: [c.id],
        repairScope: ['model.proposePatch'],
      });
    }
    return { c, ...(await this.candidateDoc(c)) };
  }

  private staleCandidate(phase: 'preview' | 'validate', c: CandidateRecord, head: string): Diagnostic {
    return diagnostic('CANDIDATE_STALE', phase, 'stale', 'the candidate is based on a revision that is no longer the branch head', {
      affected: [c.id],
      expected: head,
      actual: c.baseRevision,
      repairScope: ['model.read', 'model.proposePatch'],
    });
  }

  preview(ctx: AuthorityContext, candidateId: string): Promise<AuthorityResult<Record<string, unknown>>> {
    return this.guard('preview', async () => {
      const head = await this.branchHead(ctx);
      const live = await this.liveCandidate(ctx, candidateId, 'preview');
      if (!('c' in live)) return { observedRevision: head, data: {}, diagnostics: [live] };
      const evidence = checkActive(live.doc);
      const diagnostics = failures(live.doc, evidence, 'preview');
      const stale = live.c.baseRevision !== head;
      if (stale) diagnostics.push(this.staleCandidate('preview', live.c, head));
      return {
        observedRevision: head,
        data: { candidateId: live.c.id, baseRevision: live.c.baseRevision, diff: diffDocs(live.base.doc, live.doc), assertions: evidence },
        diagnostics,
        status: stale ? 'stale' : 'success',
      };
    });
  }

  validate(ctx: AuthorityContext, candidateId: string): Promise<AuthorityResult<ValidationData>> {
    return this.guard('validate', async () => {
      const head = await this.branchHead(ctx);
      const live = await this.liveCandidate(ctx, candidateId, 'validate');
      if (!('c' in live)) return { observedRevision: head, data: { passed: false, evidence: [] }, diagnostics: [live] };
      const { c, doc } = live;
      // Active assertions only: acceptance assertions are the runtime's, checked by verify at read-back.
      const evidence = checkActive(doc);
      const diagnostics = failures(doc, evidence, 'validate');
      const stale = c.baseRevision !== head;
      if (stale) diagnostics.push(this.staleCandidate('validate', c, head));
      if (diagnostics.length > 0) return { observedRevision: head, data: { passed: false, evidence }, diagnostics, status: stale ? 'stale' : 'success' };
      const token: TokenRecord = {
        id: this.tokenIdOf({ candidateId: c.id, baseRevision: c.baseRevision, evidence }),
        taskId: ctx.taskId,
        candidateId: c.id,
        baseRevision: c.baseRevision,
        evidence,
      };
      await this.store.putToken(token);
      const tokenRef = refs.token(ctx.taskId);
      const current = await this.store.getRef(tokenRef);
      const ok = await this.store.swap([
        { name: refs.candidate(ctx.taskId), expected: c.id, next: c.id },
        { name: tokenRef, expected: current, next: token.id },
      ]);
      if (!ok)
        return {
          observedRevision: head,
          data: { passed: false, evidence },
          diagnostics: [
            diagnostic('CANDIDATE_SUPERSEDED', 'validate', 'precondition', 'a newer candidate replaced this one while it was validated', { affected: [c.id] }),
          ],
        };
      return { observedRevision: head, data: { passed: true, validationToken: token.id, evidence }, diagnostics: [] };
    });
  }

  commit(ctx: AuthorityContext, input: OpInput<'model.commit'>): Promise<AuthorityResult<{ revision: string }>> {
    return this.guard('commit', async () => {
      const head = await this.branchHead(ctx);
      const no: Refuse = (...args) => refusal(head, ...args);
      const tokenId = input?.validationToken;
      const tok = typeof tokenId === 'string' && tokenId.length <= 200 ? await this.store.getToken(tokenId) : null;
      if (tok === null || tok.taskId !== ctx.taskId)
        return no('TOKEN_UNKNOWN', 'precondition', 'no validation token of this task has that id', { repairScope: ['model.validate'] });
      if (this.tokenIdOf(tok) !== tok.id || tok.id !== tokenId || !tok.evidence.every((e) => e.passed)) {
        throw new AuthorityError('AUTHORITY_INTEGRITY', `stored validation token ${quote(String(tokenId))} does not match its binding`);
      }
      if (tok.candidateId !== input.candidateId) {
        return no('TOKEN_MISMATCH', 'precondition', 'the validation token was issued for another candidate', {
          expected: tok.candidateId,
          actual: String(input.candidateId).slice(0, 200),
          repairScope: ['model.validate'],
        });
      }
      const c = await this.findCandidate(ctx, input.candidateId);
      if (c === null || c.baseRevision !== tok.baseRevision)
        throw new AuthorityError('AUTHORITY_INTEGRITY', 'a validation token names a candidate the task does not hold');
      const tokenRef = refs.token(ctx.taskId);
      const live = await this.store.getRef(tokenRef);
      if (input.target === 'publish') return this.publish(ctx, tok, live, head, no);

      // A used token means its candidate was committed, so the branch moved past the candidate's base:
      // a second commit of it, raced or retried, is stale like any commit on a moved head.
      if (c.baseRevision !== head || live === USED + tok.id) {
        const now = await this.branchHead(ctx);
        return {
          ...no(
            'COMMIT_STALE',
            'stale',
            'the task branch moved since the candidate was proposed',
            { expected: c.baseRevision, actual: now, repairScope: ['model.read', 'model.proposePatch'] },
            'stale',
          ),
          observedRevision: now,
          data: { revision: now },
        };
      }
      if (live !== tok.id)
        return no('TOKEN_VOID', 'precondition', 'the validation token was voided by a newer candidate', {
          repairScope: ['model.proposePatch', 'model.validate'],
        });
      const { base, doc } = await this.candidateDoc(c);
      const rev = this.revision(base.id, base.seq + 1, doc, { kind: 'commit', candidateId: c.id });
      const ok = await this.store.swap(
        [
          { name: ctx.branch, expected: base.id, next: rev.id },
          { name: tokenRef, expected: tok.id, next: USED + tok.id },
        ],
        rev,
      );
      if (!ok) {
        const now = await this.branchHead(ctx);
        if (now !== base.id) {
          return {
            ...no(
              'COMMIT_STALE',
              'stale',
              'the task branch moved while committing',
              { expected: base.id, actual: now, repairScope: ['model.read', 'model.proposePatch'] },
              'stale',
            ),
            observedRevision: now,
            data: { revision: now },
          };
        }
        return no('TOKEN_VOID', 'precondition', 'the validation token was voided while committing', { repairScope: ['model.proposePatch', 'model.validate'] });
      }
      const effect: EffectObserved = { kind: 'commit', target: ctx.branch, effectClass: 'reversible', revision: rev.id };
      return { observedRevision: rev.id, data: { revision: rev.id }, diagnostics: [], effectsObserved: [effect] };
    });
  }

  /** The task branch head onto the user head: only from the base the branch was cut from (or last published). */
  private async publish(
    ctx: AuthorityContext,
    tok: TokenRecord,
    live: string | null,
    head: string,
    no: Refuse,
  ): Promise<AuthorityResult<{ revision: string }>> {
    if (live !== USED + tok.id)
      return no('PUBLISH_REQUIRES_COMMIT', 'precondition', 'publish takes the token of the candidate last committed to the task branch', {
        repairScope: ['model.commit'],
      });
    const user = await this.store.getRef(refs.head);
    const baseRef = refs.base(ctx.taskId);
    const base = await this.store.getRef(baseRef);
    if (user === head) return { observedRevision: head, data: { revision: head }, diagnostics: [] };
    if (user === null || base === null || user !== base) {
      return no(
        'PUBLISH_STALE',
        'stale',
        'the user head moved since the task branch was cut',
        { expected: base, actual: user, repairScope: ['model.read'] },
        'stale',
      );
    }
    const ok = await this.store.swap([
      { name: refs.head, expected: base, next: head },
      { name: baseRef, expected: base, next: head },
    ]);
    if (!ok) return no('PUBLISH_STALE', 'stale', 'the user head moved while publishing', { expected: base, repairScope: ['model.read'] }, 'stale');
    const effect: EffectObserved = { kind: 'publish', target: refs.head, effectClass: 'irreversible', revision: head };
    return { observedRevision: head, data: { revision: head }, diagnostics: [], effectsObserved: [effect] };
  }

  revert(ctx: AuthorityContext, input: OpInput<'model.revert'>): Promise<AuthorityResult<{ revision: string }>> {
    return this.guard('revert', async () => {
      const head = await this.branchHead(ctx);
      const no: Refuse = (...args) => refusal(head, ...args);
      const to = input?.toRevision;
      const target = typeof to === 'string' ? await this.findRevision(to) : null;
      if (target === null) return no('REVISION_UNKNOWN', 'precondition', `no revision ${quote(String(to))}`, { repairScope: ['model.read'] });
      if (target.id === head) return no('REVERT_TO_HEAD', 'precondition', 'the revision is the branch head already: nothing to revert');
      const current = await this.loadRevision(head);
      let r: RevisionRecord = current;
      let found = false;
      for (let i = 0; i < MAX_ANCESTRY && r.parent !== null; i++) {
        r = await this.loadRevision(r.parent);
        if (r.id === target.id) {
          found = true;
          break;
        }
      }
      if (!found)
        return no('REVISION_NOT_ANCESTOR', 'precondition', `revision ${quote(target.id)} is not an ancestor of the task branch head`, {
          expected: 'an ancestor of the branch head',
          actual: target.id,
          repairScope: ['model.read'],
        });
      const rev = this.revision(current.id, current.seq + 1, target.doc, { kind: 'revert', toRevision: target.id });
      const ok = await this.store.swap([{ name: ctx.branch, expected: current.id, next: rev.id }], rev);
      if (!ok) {
        const now = await this.branchHead(ctx);
        return {
          ...no('REVERT_STALE', 'stale', 'the task branch moved while reverting', { expected: current.id, actual: now }, 'stale'),
          observedRevision: now,
          data: { revision: now },
        };
      }
      const effect: EffectObserved = { kind: 'revert', target: ctx.branch, effectClass: 'reversible', revision: rev.id };
      return { observedRevision: rev.id, data: { revision: rev.id }, diagnostics: [], effectsObserved: [effect] };
    });
  }

  verify(_ctx: AuthorityContext, assertions: readonly AcceptanceAssertion[], revision: string): Promise<AssertionResult> {
    return this.guard('verify', async () => {
      const list = Array.isArray(assertions) ? assertions.slice(0, LIMITS.assertions) : [];
      const rev = await this.findRevision(revision);
      if (rev === null) {
        return { passed: false, results: list.map((a) => ({ assertion: String(a?.id), passed: false, detail: { code: 'REVISION_UNKNOWN' } })) };
      }
      const results = list.map((a) => {
        const args = a !== null && typeof a === 'object' && a.args !== null && typeof a.args === 'object' ? a.args : {};
        const e = evaluate(rev.doc, typeof a?.validator === 'string' ? a.validator : '', args);
        return { assertion: String(a?.id), passed: e.passed, detail: e.detail };
      });
      const complete = Array.isArray(assertions) && assertions.length <= LIMITS.assertions;
      return { passed: complete && results.every((x) => x.passed), results };
    });
  }

  effectClass(call: MetaCall): EffectClass {
    return staticEffectClass(call);
  }

  close(): Promise<void> {
    return this.guard('close', () => this.store.close());
  }
}
