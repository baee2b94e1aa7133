/**
 * An Aira authority over one actor of a rin world, through the rin.control/v2 API.
 *
 * The mapping (a rin world has no branches and no undo, so some meta-operations mean less here):
 * - catalog.search / describe: the actor's capability snapshot; ids `cap:<rin id>@<major>`.
 * - model.read: the actor's latest observation; its revision is a content id over host, world, actor,
 *   epoch, sequence and the payload's digest, so it moves whenever the world does.
 * - proposePatch: exactly one authoring step = one ActionRequest, its args checked against the
 *   capability's input schema. The candidate is bound to the observation it was planned on.
 * - preview: the capability's declared effects (kind, operation, ownership, scope, reversibility, risk)
 *   and its risk floor. The host authors the real effects only when it binds a submitted request, so
 *   without a declared profile the preview says `effectSource: "risk-floor"` and stays conservative.
 * - validate: the arguments again, the capability digest (unchanged since propose), and the daemon's
 *   policy computed locally over the declared effects when both are known (`policyMode: "local"`);
 *   otherwise `policyMode: "schema-only"` and the daemon alone decides at commit.
 * - commit: CAS on the observation (epoch and sequence: a moved world answers `status: "stale"` before
 *   anything is sent), then submit under this authority's controller lease and wait for the outcome.
 * - revert: a rin action cannot be undone: always a `REVERT_UNSUPPORTED` diagnostic.
 *
 * Confirmation rule: the authority confirms an operation the daemon holds for confirmation only when
 * its own validation predicted `require_confirmation` (local policy) AND the plan's grant
 * (`plan.bindings.grantId`, which plan.check binds to the task's grant) is one of `approvingGrants`.
 * Validation fails with `APPROVAL_REQUIRED` (approvalRequired: true) for a require_confirmation under
 * any other grant. Whatever the daemon asks to confirm that validation did not predict (schema-only
 * mode, or a policy that disagrees: `POLICY_MISMATCH` warning) is cancelled, never approved, and the
 * commit answers `APPROVAL_REQUIRED`.
 */
import type { Crypto } from '../../crypto/backend.js';
import { canonicalGoJson, RawJson } from '../../crypto/gojson.js';
import type { Plain, RinControlClient } from '../../rin/client.js';
import { RinError } from '../../rin/errors.js';
import { compileSchema, newSchema, parseInstance, type CompiledSchema } from '../../rin/schema.js';
import type {
  ActionRequest,
  CapabilitySnapshot,
  ClockMode,
  CapabilitySpec,
  ControllerLease,
  Effect,
  Epoch,
  ObservationEnvelope,
  OperationView,
  RiskLevel,
} from '../../rin/types.js';
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
import { staticEffectClass } from '../contract.js';
import { diagnostic } from '../diagnostics.js';
import { contentId } from '../ids.js';
import type { AcceptanceAssertion, CapabilityId, Diagnostic, EffectClass, EffectObserved, MetaCall, OpInput, Plan, Risk } from '../schema.js';
import type { DeclaredEffect, EffectProfile, PolicyVerdict, RinPolicy } from './types.js';
import { atPointer, evaluateAssertion, isMissing, RIN_VALIDATORS, type ObservedState } from './verify.js';

export const RIN_OPERATION_CATALOG = 'aira.rin.ops/1';
export const RIN_PROTOCOL_VERSION = 'rin.control/v2';

export interface RinAuthorityOptions {
  readonly client: RinControlClient;
  readonly crypto: Crypto;
  readonly world: { readonly host_id: string; readonly world_id: string };
  readonly actor: string;
  /** The controller this authority acts as; its lease is acquired on the first commit and renewed. */
  readonly controller?: { readonly id?: string; readonly leaseTtlMillis?: number };
  /** Declared effects by rin capability id (e.g. HARBOR_EFFECTS). */
  readonly effects?: EffectProfile;
  /** The daemon's policy, evaluated locally at validate (e.g. harborRinPolicy() from ./local-policy.js). */
  readonly policy?: RinPolicy;
  /**
   * Grant ids under which this authority confirms what its validation predicted to need confirmation
   * (see the confirmation rule above); default none, so nothing is ever confirmed.
   */
  readonly approvingGrants?: readonly string[];
  /** Called between waits for an outcome: a world on a step clock moves only when told to. */
  readonly advance?: () => Promise<void>;
  /** Longest wait for an operation's outcome; default 60 s. */
  readonly outcomeTimeoutMs?: number;
  /** One long poll's wait; default 1000 ms. */
  readonly waitMillis?: number;
  readonly now?: () => number;
}

interface Candidate {
  readonly id: string;
  readonly taskId: string;
  readonly stepId: string;
  readonly grantId: string;
  readonly baseRevision: string;
  readonly epoch: Plain<Epoch>;
  readonly sequence: number;
  readonly clock: ClockMode;
  readonly capability: CapabilityId;
  readonly spec: { readonly id: string; readonly version: string; readonly digest: string };
  readonly argsText: string;
  readonly args: Record<string, unknown>;
  readonly effects: readonly DeclaredEffect[] | null;
  readonly riskFloor: RiskLevel;
  validation?: { readonly token: string; readonly verdict: PolicyVerdict | null };
  committed?: AuthorityResult<{ revision: string }>;
}

interface Observed {
  readonly revision: string;
  readonly observation: Plain<ObservationEnvelope>;
}

const RISK: Readonly<Record<string, Risk>> = { low: 'low', moderate: 'medium', high: 'high', critical: 'critical' };
const RISK_ORDER: readonly Risk[] = ['low', 'medium', 'high', 'critical'];
const MAX_REMEMBERED = 256;

const remember = <K, V>(map: Map<K, V>, key: K, value: V): void => {
  map.delete(key);
  map.set(key, value);
  if (map.size > MAX_REMEMBERED) map.delete(map.keys().next().value as K);
};

function majorOf(version: string): string {
  return /^(0|[1-9][0-9]*)\./.exec(version)?.[1] ?? '0';
}

/** The Aira id of a rin capability, or undefined when its id cannot be one. */
export function capabilityIdOf(rinId: string, version: string): CapabilityId | undefined {
  const id = `cap:${rinId}@${majorOf(version)}`;
  return /^cap:[A-Za-z0-9._-]+@[0-9]+$/.test(id) && id.length <= 160 ? id : undefined;
}

/** Irreversible or critical effects make the action irreversible; unknown effects are taken as irreversible. */
export function effectClassOf(effects: readonly DeclaredEffect[] | null, riskFloor: string): EffectClass {
  if (effects === null || riskFloor === 'critical') return 'irreversible';
  return effects.every((e) => e.reversible && e.risk !== 'critical') ? 'reversible' : 'irreversible';
}

function hex(id: string): string {
  return id.slice(id.lastIndexOf(':') + 1);
}

function rinFailure(e: unknown, where: string): never {
  if (e instanceof AuthorityError) throw e;
  if (e instanceof RinError) {
    const code = e.code === 'unavailable' ? 'AUTHORITY_UNAVAILABLE' : e.code === 'internal' ? 'AUTHORITY_INTEGRITY' : 'AUTHORITY_INTERNAL';
    throw new AuthorityError(code, `${where}: ${e.message}`);
  }
  throw new AuthorityError('AUTHORITY_INTERNAL', `${where}: ${e instanceof Error ? e.message : String(e)}`);
}

class RinAuthority implements Authority {
  readonly kind = 'rin';
  readonly #o: RinAuthorityOptions;
  readonly #target: { host_id: string; world_id: string; actor_id: string };
  readonly #controllerId: string;
  readonly #leaseTtl: number;
  readonly #now: () => number;
  readonly #branches = new Map<string, string>();
  readonly #observations = new Map<string, Plain<ObservationEnvelope>>();
  readonly #candidates = new Map<string, Candidate>();
  readonly #schemas = new Map<string, CompiledSchema>();
  #lease: Plain<ControllerLease> | undefined;
  #principal: string | undefined;
  #closed = false;

  constructor(o: RinAuthorityOptions) {
    this.#o = o;
    this.#target = { host_id: o.world.host_id, world_id: o.world.world_id, actor_id: o.actor };
    this.#controllerId = o.controller?.id ?? 'aira.controller';
    this.#leaseTtl = o.controller?.leaseTtlMillis ?? 60_000;
    this.#now = o.now ?? Date.now;
  }

  // ---- reading the world ----

  async #observe(): Promise<Observed> {
    let o: Plain<ObservationEnvelope>;
    try {
      o = await this.#o.client.observe(this.#target);
    } catch (e) {
      rinFailure(e, 'observe');
    }
    if (o.host_id !== this.#target.host_id || o.world_id !== this.#target.world_id || o.actor_id !== this.#target.actor_id) {
      throw new AuthorityError('AUTHORITY_INTEGRITY', `observe: the daemon answered for ${o.host_id}/${o.world_id}/${o.actor_id}`);
    }
    const c = this.#o.crypto;
    const revision = contentId(
      'rev',
      {
        host: o.host_id,
        world: o.world_id,
        actor: o.actor_id,
        epoch: o.epoch,
        sequence: o.sequence,
        payload: contentId('payload', { payload: o.payload }, c),
      },
      c,
    );
    remember(this.#observations, revision, o);
    return { revision, observation: o };
  }

  async #snapshot(): Promise<{ snapshot: Plain<CapabilitySnapshot>; byId: Map<CapabilityId, Plain<CapabilitySpec>>; hash: string }> {
    let snapshot: Plain<CapabilitySnapshot>;
    try {
      snapshot = await this.#o.client.listCapabilities(this.#target);
    } catch (e) {
      rinFailure(e, 'capabilities');
    }
    const byId = new Map<CapabilityId, Plain<CapabilitySpec>>();
    // Specs come sorted by (id, version): within a major the last listed is the newest.
    for (const spec of snapshot.specs) {
      const id = capabilityIdOf(spec.capability.id, spec.capability.version);
      if (id !== undefined) byId.set(id, spec);
    }
    const hash = contentId(
      'catalog',
      {
        operationCatalog: RIN_OPERATION_CATALOG,
        actor: this.#target,
        specs: snapshot.specs.map((s) => ({ id: s.capability.id, version: s.capability.version, digest: s.digest })),
      },
      this.#o.crypto,
    );
    return { snapshot, byId, hash };
  }

  #compiled(spec: Plain<CapabilitySpec>): CompiledSchema {
    const known = this.#schemas.get(spec.input.sha256);
    if (known) return known;
    let compiled: CompiledSchema;
    try {
      const schema = newSchema(JSON.stringify(spec.input.document), this.#o.crypto);
      if (schema.sha256 !== spec.input.sha256) throw new Error('the input schema does not match its sha256');
      compiled = compileSchema(schema, this.#o.crypto);
    } catch (e) {
      throw new AuthorityError('AUTHORITY_INTEGRITY', `capability ${spec.capability.id}: ${e instanceof Error ? e.message : String(e)}`);
    }
    remember(this.#schemas, spec.input.sha256, compiled);
    return compiled;
  }

  #declared(rinId: string): readonly DeclaredEffect[] | null {
    const effects = this.#o.effects;
    return effects !== undefined && Object.hasOwn(effects, rinId) ? effects[rinId]! : null;
  }

  #hit(id: CapabilityId, spec: Plain<CapabilitySpec>): CapabilityHit {
    return { id, title: spec.capability.id, effectClass: effectClassOf(this.#declared(spec.capability.id), spec.risk_floor), risk: this.#risk(spec) };
  }

  /** The higher of the risk floor and every declared effect's risk. */
  #risk(spec: Plain<CapabilitySpec>): Risk {
    let risk = RISK[spec.risk_floor] ?? 'critical';
    for (const e of this.#declared(spec.capability.id) ?? []) {
      const r = RISK[e.risk] ?? 'critical';
      if (RISK_ORDER.indexOf(r) > RISK_ORDER.indexOf(risk)) risk = r;
    }
    return risk;
  }

  // ---- Authority ----

  async openTask(taskId: string): Promise<TaskBranch> {
    const { revision } = await this.#observe();
    const base = this.#branches.get(taskId) ?? revision;
    remember(this.#branches, taskId, base);
    return { branch: `task/${taskId}`, baseRevision: base, head: revision };
  }

  async head(_ctx: AuthorityContext): Promise<string> {
    return (await this.#observe()).revision;
  }

  async manifest(_ctx: AuthorityContext): Promise<AuthorityResult<AuthorityManifest>> {
    const { revision } = await this.#observe();
    return {
      observedRevision: revision,
      diagnostics: [],
      data: {
        authority: 'rin',
        protocolVersion: RIN_PROTOCOL_VERSION,
        operationCatalog: RIN_OPERATION_CATALOG,
        taxonomyRoot: `rin:${this.#target.host_id}/${this.#target.world_id}/${this.#target.actor_id}`,
        validators: [...RIN_VALIDATORS],
        limits: { authoringStepsPerPlan: 1, searchLimit: 50 },
      },
    };
  }

  async search(_ctx: AuthorityContext, input: OpInput<'catalog.search'>): Promise<AuthorityResult<{ hits: CapabilityHit[]; catalogHash: string }>> {
    const [{ byId, hash }, { revision }] = await Promise.all([this.#snapshot(), this.#observe()]);
    const words = (input.query ?? '')
      .toLowerCase()
      .split(/[^a-z0-9]+/)
      .filter((w) => w !== '');
    const maxRisk = input.maxRisk === undefined ? 3 : RISK_ORDER.indexOf(input.maxRisk);
    const hits: CapabilityHit[] = [];
    for (const [id, spec] of [...byId].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      const text = `${spec.capability.id} ${spec.description}`.toLowerCase();
      if (!words.every((w) => text.includes(w))) continue;
      const hit = this.#hit(id, spec);
      if (input.effectClass !== undefined && hit.effectClass !== input.effectClass) continue;
      if (RISK_ORDER.indexOf(hit.risk) > maxRisk) continue;
      hits.push(hit);
    }
    return { observedRevision: revision, diagnostics: [], data: { hits: hits.slice(0, input.limit ?? 20), catalogHash: hash } };
  }

  async describe(_ctx: AuthorityContext, capability: CapabilityId): Promise<AuthorityResult<CapabilityContract>> {
    const [{ byId }, { revision }] = await Promise.all([this.#snapshot(), this.#observe()]);
    const spec = byId.get(capability);
    if (spec === undefined) {
      // The contract of nothing: no arguments are accepted and nothing can be planned with it.
      return {
        observedRevision: revision,
        diagnostics: [diagnostic('CAPABILITY_UNKNOWN', 'input', 'input', `the actor offers no capability ${capability}`, { affected: [capability] })],
        data: {
          id: capability,
          title: '',
          effectClass: 'irreversible',
          risk: 'critical',
          description: '',
          inputSchema: { not: {} },
          mode: 'authoring',
          reversible: false,
          preconditions: [],
        },
      };
    }
    const hit = this.#hit(capability, spec);
    const declared = this.#declared(spec.capability.id);
    return {
      observedRevision: revision,
      diagnostics: [],
      data: {
        ...hit,
        description: spec.description,
        inputSchema: spec.input.document as Record<string, unknown>,
        mode: 'authoring',
        reversible: declared !== null && declared.every((e) => e.reversible),
        preconditions: [
          `the actor ${this.#target.actor_id} is observed at the plan's base revision when the action is submitted`,
          `execution ${spec.execution}, cancellation ${spec.cancellation}, budget ${spec.execution_budget.value} ${spec.execution_budget.clock}`,
          ...(spec.required_scopes ?? []).map((s) => `scope ${s}`),
        ],
      },
    };
  }

  async read(_ctx: AuthorityContext, input: OpInput<'model.read'>): Promise<AuthorityResult<Record<string, unknown>>> {
    const { revision, observation: o } = await this.#observe();
    const diagnostics: Diagnostic[] = [];
    const whole: Record<string, unknown> = {
      revision,
      world: { host: o.host_id, world: o.world_id, actor: o.actor_id },
      epoch: o.epoch,
      sequence: o.sequence,
      observedAt: o.observed_at,
      schemaRef: o.schema_ref,
      payload: o.payload,
      facts: (o.facts ?? []).map((f) => ({ id: f.fact_id, kind: f.kind, value: f.value })),
      resources: (o.resources ?? []).map((r) => ({
        kind: r.kind,
        ref: r.ref.key,
        ownership: r.ownership,
        scope: r.scope,
        ...(r.quantity !== undefined ? { quantity: r.quantity, unit: r.unit } : {}),
        attributes: r.attributes,
      })),
    };
    if (input.query !== undefined) {
      diagnostics.push(
        diagnostic('QUERY_UNSUPPORTED', 'read', 'input', `a rin world answers no ${input.query.kind} query; read the observation instead`, {
          severity: 'warning',
          affected: [input.query.ref],
        }),
      );
    }
    let data = whole;
    if (input.select !== undefined) {
      const selected: Record<string, unknown> = {};
      for (const path of input.select) {
        const value = selectPath(o, path);
        if (value === undefined)
          diagnostics.push(
            diagnostic('SELECT_UNKNOWN', 'read', 'input', `nothing at ${path} (paths: payload/<pointer>, facts/<fact_id>)`, {
              severity: 'warning',
              affected: [path],
            }),
          );
        else selected[path] = value;
      }
      data = { revision, epoch: o.epoch, sequence: o.sequence, selected };
    }
    return { observedRevision: revision, diagnostics, data, ...(diagnostics.length > 0 ? { status: 'partial' as const } : {}) };
  }

  async propose(ctx: AuthorityContext, plan: Plan): Promise<AuthorityResult<{ candidateId: string } & Record<string, unknown>>> {
    const [{ byId }, { revision, observation }] = await Promise.all([this.#snapshot(), this.#observe()]);
    const refuse = (...diagnostics: Diagnostic[]) => ({ observedRevision: revision, diagnostics, data: { candidateId: '' } });
    const authoring = plan.steps.filter((s) => s.mode === 'authoring');
    if (authoring.length !== 1) {
      return refuse(
        diagnostic('ONE_ACTION_PER_PLAN', 'lower', 'input', `a rin plan lowers to exactly one action; this plan has ${authoring.length} authoring steps`, {
          affected: authoring.map((s) => s.id),
          expected: 1,
          actual: authoring.length,
        }),
      );
    }
    const step = authoring[0]!;
    if (plan.baseRevision !== revision) {
      return refuse(
        diagnostic('STALE_PLAN', 'lower', 'stale', 'the world moved since the plan was made: read it again', {
          affected: [step.id],
          expected: revision,
          actual: plan.baseRevision,
        }),
      );
    }
    const spec = byId.get(step.capability);
    if (spec === undefined) {
      return refuse(diagnostic('CAPABILITY_UNKNOWN', 'lower', 'input', `the actor offers no capability ${step.capability}`, { affected: [step.id] }));
    }
    let argsText: string;
    try {
      argsText = canonicalGoJson(JSON.stringify(step.args));
      if (new TextEncoder().encode(argsText).byteLength > spec.max_input_bytes)
        throw new RinError('invalid', `arguments: must contain at most ${spec.max_input_bytes} bytes`);
      this.#compiled(spec).check('arguments', parseInstance('arguments', argsText));
    } catch (e) {
      if (e instanceof AuthorityError) throw e;
      return refuse(
        diagnostic('ARGUMENTS_INVALID', 'lower', 'input', `${step.capability}: ${e instanceof Error ? e.message : String(e)}`, {
          affected: [step.id],
          expected: spec.input.document,
          actual: step.args,
          repairCapabilities: [step.capability],
          repairScope: [`steps/${step.id}/args`],
        }),
      );
    }
    const c = this.#o.crypto;
    const id = contentId(
      'cand',
      {
        taskId: ctx.taskId,
        baseRevision: revision,
        grantId: plan.bindings.grantId,
        step: { id: step.id, capability: step.capability, args: step.args },
        specDigest: spec.digest,
      },
      c,
    );
    const effects = this.#declared(spec.capability.id);
    const existing = this.#candidates.get(id);
    const candidate: Candidate = existing ?? {
      id,
      taskId: ctx.taskId,
      stepId: step.id,
      grantId: plan.bindings.grantId,
      baseRevision: revision,
      epoch: observation.epoch,
      sequence: observation.sequence,
      clock: observation.observed_at.clock as ClockMode,
      capability: step.capability,
      spec: { id: spec.capability.id, version: spec.capability.version, digest: spec.digest },
      argsText,
      args: step.args,
      effects,
      riskFloor: spec.risk_floor as RiskLevel,
    };
    remember(this.#candidates, id, candidate);
    return {
      observedRevision: revision,
      diagnostics: [],
      data: {
        candidateId: id,
        capability: step.capability,
        rinCapability: `${spec.capability.id}@${spec.capability.version}`,
        arguments: step.args,
        baseRevision: revision,
        observationSequence: observation.sequence,
      },
    };
  }

  #candidate(candidateId: string, phase: 'preview' | 'validate' | 'commit'): Candidate | Diagnostic {
    return (
      this.#candidates.get(candidateId) ??
      diagnostic('CANDIDATE_UNKNOWN', phase, 'input', `no candidate ${candidateId} was proposed here`, { affected: [candidateId] })
    );
  }

  async preview(_ctx: AuthorityContext, candidateId: string): Promise<AuthorityResult<Record<string, unknown>>> {
    const { revision } = await this.#observe();
    const cand = this.#candidate(candidateId, 'preview');
    if (!('id' in cand)) return { observedRevision: revision, diagnostics: [cand], data: {} };
    const diagnostics: Diagnostic[] = [];
    const effects = cand.effects;
    if (effects === null) {
      diagnostics.push(
        diagnostic(
          'EFFECTS_UNDECLARED',
          'preview',
          'authority',
          `${cand.spec.id} declares no effects: only its risk floor (${cand.riskFloor}) is known until the host binds it; taken as irreversible`,
          { severity: 'warning', affected: [cand.stepId] },
        ),
      );
    } else {
      for (const e of effects) {
        if (!e.reversible)
          diagnostics.push(
            diagnostic('IRREVERSIBLE_EFFECT', 'preview', 'precondition', `${e.kind} (${e.operation}) cannot be undone`, {
              severity: 'info',
              affected: [cand.stepId],
            }),
          );
      }
    }
    return {
      observedRevision: revision,
      diagnostics,
      data: {
        candidateId,
        capability: cand.capability,
        arguments: cand.args,
        effectSource: effects === null ? 'risk-floor' : 'declared',
        riskFloor: RISK[cand.riskFloor] ?? 'critical',
        effectClass: effectClassOf(effects, cand.riskFloor),
        effects: (effects ?? []).map((e) => ({
          kind: e.kind,
          operation: e.operation,
          ownership: e.ownership,
          scope: e.scope,
          reversible: e.reversible,
          risk: RISK[e.risk] ?? 'critical',
        })),
        baseRevision: cand.baseRevision,
        moved: revision !== cand.baseRevision,
      },
    };
  }

  async validate(_ctx: AuthorityContext, candidateId: string): Promise<AuthorityResult<ValidationData>> {
    const [{ byId }, { revision }] = await Promise.all([this.#snapshot(), this.#observe()]);
    const cand = this.#candidate(candidateId, 'validate');
    if (!('id' in cand)) return { observedRevision: revision, diagnostics: [cand], data: { passed: false, evidence: [] } };
    const diagnostics: Diagnostic[] = [];
    const evidence: Array<{ assertion: string; passed: boolean; detail?: unknown }> = [];
    const spec = byId.get(cand.capability);
    const specSame = spec !== undefined && spec.digest === cand.spec.digest;
    evidence.push({ assertion: 'capability.unchanged', passed: specSame, detail: { digest: cand.spec.digest } });
    if (!specSame) {
      diagnostics.push(
        diagnostic('CAPABILITY_CHANGED', 'validate', 'stale', `${cand.capability} changed or went away since the candidate was proposed: propose again`, {
          affected: [cand.stepId],
          repairCapabilities: [cand.capability],
        }),
      );
    } else {
      // Checked at propose; again here because validation is the authoritative step (M30).
      let argsOk = true;
      try {
        this.#compiled(spec).check('arguments', parseInstance('arguments', cand.argsText));
      } catch (e) {
        if (e instanceof AuthorityError) throw e;
        argsOk = false;
      }
      evidence.push({ assertion: 'arguments.schema', passed: argsOk });
      if (!argsOk)
        diagnostics.push(
          diagnostic('ARGUMENTS_INVALID', 'validate', 'input', `${cand.capability}: arguments no longer match the input schema`, { affected: [cand.stepId] }),
        );
    }
    const policy = this.#o.policy;
    let verdict: PolicyVerdict | null = null;
    if (policy !== undefined && cand.effects !== null) {
      verdict = policy.decide({
        actorId: this.#target.actor_id,
        controllerId: this.#controllerId,
        principalId: await this.#principalId(),
        effects: cand.effects,
        clock: cand.clock,
      });
      const approvable = (this.#o.approvingGrants ?? []).includes(cand.grantId);
      const passed = verdict.result === 'allow' || (verdict.result === 'require_confirmation' && approvable);
      evidence.push({
        assertion: 'policy',
        passed,
        detail: {
          policyMode: 'local',
          policy: policy.name,
          result: verdict.result,
          reasonCode: verdict.reasonCode,
          matchedRuleIds: verdict.matchedRuleIds,
          summary: verdict.summary,
          confirm: verdict.result === 'require_confirmation' && approvable,
        },
      });
      if (verdict.result === 'deny') {
        diagnostics.push(
          diagnostic(
            'POLICY_DENIED',
            'validate',
            'precondition',
            `the ${policy.name} policy denies ${cand.capability}: ${verdict.summary} (${verdict.reasonCode})`,
            { affected: [cand.stepId], actual: verdict.result },
          ),
        );
      } else if (verdict.result === 'require_confirmation' && !approvable) {
        diagnostics.push(
          diagnostic(
            'APPROVAL_REQUIRED',
            'validate',
            'scope',
            `the ${policy.name} policy asks to confirm ${cand.capability}, and grant ${cand.grantId} may not approve`,
            { affected: [cand.stepId], approvalRequired: true, actual: verdict.result },
          ),
        );
      }
    } else {
      const why = policy === undefined ? 'the daemon policy is not known here' : `${cand.spec.id} declares no effects`;
      evidence.push({ assertion: 'policy', passed: true, detail: { policyMode: 'schema-only', why, decidedBy: 'the daemon, at commit' } });
    }
    const passed = evidence.every((e) => e.passed) && diagnostics.every((d) => d.severity !== 'error');
    if (!passed) {
      delete cand.validation;
      return { observedRevision: revision, diagnostics, data: { passed, evidence } };
    }
    const token = contentId('vtok', { candidateId, baseRevision: cand.baseRevision, evidence }, this.#o.crypto);
    cand.validation = { token, verdict };
    return { observedRevision: revision, diagnostics, data: { passed, validationToken: token, evidence } };
  }

  async #principalId(): Promise<string> {
    if (this.#principal === undefined) {
      try {
        this.#principal = (await this.#o.client.info()).principal.id;
      } catch (e) {
        rinFailure(e, 'info');
      }
    }
    return this.#principal;
  }

  /** A live controller lease: acquired once, renewed when a third of its time is left. */
  async #ensureLease(): Promise<void> {
    const lease = this.#lease;
    if (lease !== undefined && lease.expires_at_unix_millis - this.#now() > this.#leaseTtl / 3) return;
    if (lease !== undefined) {
      try {
        this.#lease = await this.#o.client.renewController({ ...this.#target, lease_id: lease.lease_id, lease_ttl_millis: this.#leaseTtl });
        return;
      } catch (e) {
        if (!(e instanceof RinError) || (e.code !== 'lease_expired' && e.code !== 'not_found' && e.code !== 'lease_conflict')) throw e;
        this.#lease = undefined;
      }
    }
    this.#lease = await this.#o.client.acquireController({ ...this.#target, controller_id: this.#controllerId, lease_ttl_millis: this.#leaseTtl });
  }

  async commit(ctx: AuthorityContext, input: OpInput<'model.commit'>): Promise<AuthorityResult<{ revision: string }>> {
    const { revision } = await this.#observe();
    const refuse = (d: Diagnostic, status?: 'stale') => ({ observedRevision: revision, diagnostics: [d], data: { revision }, ...(status ? { status } : {}) });
    const cand = this.#candidate(input.candidateId, 'commit');
    if (!('id' in cand)) return refuse(cand);
    if (cand.committed) return cand.committed;
    if (input.target === 'publish') {
      return refuse(
        diagnostic('PUBLISH_UNSUPPORTED', 'commit', 'precondition', 'a rin world has no task branch to publish: every commit already acts on the live world', {
          affected: [cand.stepId],
        }),
      );
    }
    if (cand.validation === undefined || cand.validation.token !== input.validationToken) {
      return refuse(
        diagnostic('VALIDATION_TOKEN_INVALID', 'commit', 'integrity', "the validation token does not belong to this candidate's last passing validation", {
          affected: [cand.stepId],
        }),
      );
    }
    if (revision !== cand.baseRevision) {
      return refuse(
        diagnostic('REVISION_MOVED', 'commit', 'stale', 'the world moved since the candidate was proposed: nothing was submitted; read it again', {
          severity: 'warning',
          expected: cand.baseRevision,
          actual: revision,
        }),
        'stale',
      );
    }
    let op: Plain<OperationView>;
    try {
      await this.#ensureLease();
      const request: ActionRequest = {
        request_id: `aira.request.${hex(cand.id).slice(0, 40)}`,
        controller_id: this.#controllerId,
        actor_id: this.#target.actor_id,
        capability: { id: cand.spec.id, version: cand.spec.version },
        spec_digest: cand.spec.digest,
        arguments: new RawJson(cand.argsText),
        expected_epoch: cand.epoch as Epoch,
        observation_sequence: cand.sequence,
        // The task id may be any string; rin wants a lowercase identifier.
        task_id: `aira.task.${hex(contentId('task', { taskId: ctx.taskId }, this.#o.crypto)).slice(0, 40)}`,
        idempotency_key: `aira.${hex(cand.id).slice(0, 48)}`,
      };
      op = await this.#o.client.submitAction({ host_id: this.#target.host_id, world_id: this.#target.world_id, action_request: request });
    } catch (e) {
      if (!(e instanceof RinError) || e.code === 'unavailable' || e.code === 'internal') rinFailure(e, 'submit');
      if (e.code === 'stale')
        return refuse(diagnostic('REVISION_MOVED', 'commit', 'stale', `the host refused the action as stale: ${e.message}`, { severity: 'warning' }), 'stale');
      const cause =
        e.code === 'forbidden' ? 'scope' : e.code === 'conflict' || e.code === 'lease_conflict' ? 'conflict' : e.code === 'invalid' ? 'input' : 'precondition';
      return refuse(
        diagnostic('ACTION_REFUSED', 'commit', cause, `the daemon or host refused the action (${e.code}): ${e.message}`, {
          affected: [cand.stepId],
          actual: e.code,
        }),
      );
    }
    return this.#finish(cand, op);
  }

  /** Confirms when the rule allows, waits for the outcome, then reads the world after it. */
  async #finish(cand: Candidate, submitted: Plain<OperationView>): Promise<AuthorityResult<{ revision: string }>> {
    const diagnostics: Diagnostic[] = [];
    const artifacts = [{ kind: 'rin.operation', id: submitted.operation_id }];
    const predicted = cand.validation?.verdict ?? null;
    const decided = submitted.policy_decision?.result;
    if (predicted !== null && decided !== undefined && decided !== predicted.result) {
      diagnostics.push(
        diagnostic('POLICY_MISMATCH', 'commit', 'authority', `validation predicted ${predicted.result} and the daemon decided ${decided}`, {
          severity: 'warning',
          expected: predicted.result,
          actual: decided,
        }),
      );
    }
    const bound = (submitted.bound_action?.effect_preview ?? []) as Plain<Effect>[];
    if (cand.effects !== null && !sameEffects(cand.effects, bound)) {
      diagnostics.push(
        diagnostic('EFFECTS_DIFFER', 'commit', 'authority', 'the host bound other effects than the capability declares', {
          severity: 'warning',
          expected: cand.effects,
          actual: bound.map(policyFacts),
        }),
      );
    }
    let op = submitted;
    try {
      if (op.status === 'awaiting-confirmation') {
        const approvable = predicted?.result === 'require_confirmation' && (this.#o.approvingGrants ?? []).includes(cand.grantId);
        if (!approvable) {
          op = await this.#o.client.cancelOperation({ operation_id: op.operation_id });
          diagnostics.push(
            diagnostic('APPROVAL_REQUIRED', 'commit', 'scope', 'the daemon asks to confirm an action this authority may not approve: it was cancelled', {
              affected: [cand.stepId],
              approvalRequired: true,
            }),
          );
          return this.#settle(cand, op, diagnostics, artifacts);
        }
        op = await this.#o.client.confirmAction({ operation_id: op.operation_id });
      }
      const deadline = this.#now() + (this.#o.outcomeTimeoutMs ?? 60_000);
      while (!op.terminal && this.#now() < deadline) {
        if (this.#o.advance) await this.#o.advance();
        op = (await this.#o.client.waitOperation({ operation_id: op.operation_id, after_cursor: op.cursor, wait_millis: this.#o.waitMillis ?? 1000 }))
          .operation;
      }
    } catch (e) {
      if (e instanceof RinError && e.code === 'stale') {
        const { revision } = await this.#observe();
        return {
          observedRevision: revision,
          diagnostics: [
            ...diagnostics,
            diagnostic('REVISION_MOVED', 'commit', 'stale', `the action went stale before it ran: ${e.message}`, { severity: 'warning' }),
          ],
          data: { revision },
          artifacts,
          status: 'stale',
        };
      }
      rinFailure(e, 'operation');
    }
    return this.#settle(cand, op, diagnostics, artifacts);
  }

  async #settle(
    cand: Candidate,
    op: Plain<OperationView>,
    diagnostics: Diagnostic[],
    artifacts: Array<{ kind: string; id: string }>,
  ): Promise<AuthorityResult<{ revision: string }>> {
    if (op.status === 'succeeded' && op.outcome) await this.#catchUp(op.outcome.world_seq);
    const { revision } = await this.#observe();
    const result = (
      status: 'success' | 'stale' | undefined,
      more: Diagnostic[] = [],
      effects: EffectObserved[] = [],
    ): AuthorityResult<{ revision: string }> => ({
      observedRevision: revision,
      diagnostics: [...diagnostics, ...more],
      data: { revision },
      effectsObserved: effects,
      artifacts,
      ...(status ? { status } : {}),
    });
    if (op.status === 'succeeded') {
      const effectClass = effectClassOf(cand.effects, cand.riskFloor);
      const effects = ((op.bound_action?.effect_preview ?? []) as Plain<Effect>[]).map((e) => ({
        kind: e.kind,
        target: e.target_ref?.key ?? e.subject_ref?.key ?? this.#target.actor_id,
        effectClass: e.reversible && e.risk !== 'critical' ? effectClass : ('irreversible' as const),
        revision,
      }));
      cand.committed = result('success', [], effects);
      return cand.committed;
    }
    if (op.status === 'stale' || op.rejection_code === 'stale') {
      return result('stale', [
        diagnostic('REVISION_MOVED', 'commit', 'stale', 'the host found the world moved before the action ran', { severity: 'warning' }),
      ]);
    }
    if (!op.terminal) {
      return result(undefined, [
        diagnostic('OUTCOME_PENDING', 'commit', 'authority', `operation ${op.operation_id} is still ${op.status}; its outcome is not known yet`, {
          affected: [cand.stepId],
          actual: op.status,
        }),
      ]);
    }
    if (op.status === 'rejected' && op.policy_decision?.result === 'deny') {
      return result(undefined, [
        diagnostic(
          'POLICY_DENIED',
          'commit',
          'precondition',
          `the daemon's policy denied the action: ${op.rejection_message ?? ''} (${op.rejection_code ?? ''})`,
          { affected: [cand.stepId], actual: op.rejection_code },
        ),
      ]);
    }
    if (diagnostics.some((d) => d.code === 'APPROVAL_REQUIRED')) return result(undefined);
    const why = op.outcome
      ? `${op.outcome.code ?? op.outcome.status}: ${op.outcome.summary}`
      : `${op.rejection_code ?? op.status}: ${op.rejection_message ?? ''}`;
    return result(undefined, [
      diagnostic('ACTION_FAILED', 'commit', 'authority', `operation ${op.operation_id} ended ${op.status} (${why})`, {
        affected: [cand.stepId],
        actual: op.status,
      }),
    ]);
  }

  /** Waits (bounded) until the daemon's view of the actor includes the outcome's world sequence. */
  async #catchUp(worldSeq: number): Promise<void> {
    const deadline = this.#now() + 5_000;
    let actor = await this.#o.client.getActor(this.#target);
    while (actor.observation_seq < worldSeq && this.#now() < deadline) {
      if (this.#o.advance) await this.#o.advance();
      const update = await this.#o.client.waitActor({
        ...this.#target,
        after_observation_seq: actor.observation_seq,
        after_authority_revision: actor.decision_authority.revision,
        wait_millis: Math.min(this.#o.waitMillis ?? 1000, Math.max(1, deadline - this.#now())),
      });
      actor = update.actor;
    }
  }

  async revert(_ctx: AuthorityContext, input: OpInput<'model.revert'>): Promise<AuthorityResult<{ revision: string }>> {
    const { revision } = await this.#observe();
    return {
      observedRevision: revision,
      diagnostics: [
        diagnostic(
          'REVERT_UNSUPPORTED',
          'commit',
          'precondition',
          'a rin action cannot be undone and no capability here declares a compensating one; plan a new action instead',
          { affected: [input.toRevision] },
        ),
      ],
      data: { revision },
    };
  }

  async verify(_ctx: AuthorityContext, assertions: readonly AcceptanceAssertion[], revision: string): Promise<AssertionResult> {
    // The observation read at that revision, or the world now if it is still the same revision.
    let o = this.#observations.get(revision);
    if (o === undefined) {
      const now = await this.#observe();
      if (now.revision === revision) o = now.observation;
    }
    if (o === undefined) {
      return {
        passed: false,
        results: assertions.map((a) => ({ assertion: a.id, passed: false, detail: { why: `revision ${revision} was never observed here` } })),
      };
    }
    const state: ObservedState = { payload: o.payload, facts: (o.facts ?? []).map((f) => ({ fact_id: f.fact_id, value: f.value })) };
    const results = assertions.map((a) => evaluateAssertion(a, state));
    return { passed: results.every((r) => r.passed), results };
  }

  effectClass(call: MetaCall): EffectClass {
    if (call.op !== 'model.commit' || call.input.target === 'publish') return staticEffectClass(call);
    // A branch commit submits the candidate's action: as reversible as its declared effects, and an
    // unknown candidate is taken at its worst.
    const cand = this.#candidates.get(call.input.candidateId);
    return cand === undefined ? 'irreversible' : effectClassOf(cand.effects, cand.riskFloor);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const lease = this.#lease;
    this.#lease = undefined;
    if (lease !== undefined) await this.#o.client.releaseController({ ...this.#target, lease_id: lease.lease_id }).catch(() => undefined);
  }
}

function policyFacts(e: Plain<Effect> | DeclaredEffect): Record<string, unknown> {
  return { kind: e.kind, operation: e.operation, ownership: e.ownership, scope: e.scope, reversible: e.reversible, risk: e.risk };
}

function sameEffects(declared: readonly DeclaredEffect[], bound: readonly Plain<Effect>[]): boolean {
  const key = (e: Plain<Effect> | DeclaredEffect) => JSON.stringify(policyFacts(e));
  const a = declared.map(key).sort();
  const b = bound.map(key).sort();
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** `payload/<RFC 6901 pointer>` or `facts/<fact_id>`; undefined when nothing is there. */
function selectPath(o: Plain<ObservationEnvelope>, path: string): unknown {
  if (path === 'payload') return o.payload;
  if (path.startsWith('payload/')) {
    const v = atPointer(o.payload, path.slice('payload'.length));
    return isMissing(v) ? undefined : v;
  }
  if (path.startsWith('facts/')) return o.facts?.find((f) => f.fact_id === path.slice('facts/'.length))?.value;
  return undefined;
}

/**
 * An Authority over `actor` in `world` through the rin control daemon `client` talks to. Nothing is
 * sent until the runtime calls it; the controller lease is taken on the first commit and released by
 * `close()`.
 */
export function openRinAuthority(options: RinAuthorityOptions): Authority {
  return new RinAuthority(options);
}
