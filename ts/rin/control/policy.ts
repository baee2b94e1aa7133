/**
 * The gameplay policy engine: decides allow / deny / require_confirmation for one exact Host-bound
 * effect preview. Deterministic, no model or network. The safety kernel runs before any rule and
 * cannot be configured away; the most restrictive result over all effects wins.
 *
 * Without a configured policy the engine runs the reference daemon's built-in default: profile
 * `guarded`, no known effect kinds or scopes (so every effect is denied `policy.unknown_effect`
 * until an operator registers them), confirmation TTLs event 16 / step 600 / realtime 30000 and
 * confirmation scope `rin.policy.confirm`.
 */
import { createHash, randomBytes } from 'node:crypto';
import { RinError } from '../errors.js';
import { decodeWireText } from '../wire.js';
import type {
  BoundAction,
  ClockMode,
  ConfirmationChallenge,
  Effect,
  EffectiveLimit,
  EffectOperation,
  Epoch,
  OwnershipClass,
  PolicyDecision,
  PolicyResult,
  Principal,
  RiskLevel,
  Timepoint,
} from '../types.js';

export type PolicyProfile = 'guarded' | 'survival' | 'open' | 'privileged-custom';
export type PolicyLayer = 'server' | 'world' | 'owner' | 'actor' | 'task';

export interface PolicyRule {
  rule_id: string;
  layer: PolicyLayer;
  priority: number;
  result: PolicyResult;
  effect_kinds?: string[];
  operations?: EffectOperation[];
  ownership?: OwnershipClass[];
  scopes?: string[];
  tags_all?: string[];
  tags_any?: string[];
  risk_at_least?: RiskLevel;
  risk_at_most?: RiskLevel;
  reversible?: boolean;
  reason_code: string;
  human_summary: string;
}
export interface PolicyBudget {
  budget_id: string;
  layer: PolicyLayer;
  effect_kinds?: string[];
  operations?: EffectOperation[];
  tags_any?: string[];
  max_actions?: number;
  max_quantity?: number;
  window?: { clock: ClockMode | ''; value: number };
}
export interface ConfirmationDurations {
  event?: number;
  step?: number;
  realtime?: number;
}
export interface PolicyConfig {
  revision: number;
  profile: PolicyProfile;
  known_effect_kinds?: string[];
  known_scopes?: string[];
  rules?: PolicyRule[];
  budgets?: PolicyBudget[];
  confirmation_ttl: ConfirmationDurations;
  confirmation_scopes: string[];
}

export interface PolicyContext {
  now: Timepoint;
  current_epoch: Epoch;
  principal: Principal;
  server_id: string;
  owner_id?: string | undefined;
  emergency_stopped: boolean;
  confirmation_id?: string | undefined;
}

/** Restart checkpoint of budget usage and open reservations; confirmations never survive a restart. */
export interface PolicyState {
  version: 'rin.policy.state/v1';
  policy_revision: number;
  config_digest: string;
  usage?: Array<{ key: string; actions: number; quantity: number }>;
  reservations?: Array<{ decision_id: string; deltas: Array<{ key: string; actions: number; quantity: number }> }>;
}

export const DEFAULT_POLICY_CONFIG: PolicyConfig = {
  revision: 1,
  profile: 'guarded',
  known_effect_kinds: [],
  known_scopes: [],
  confirmation_ttl: { event: 16, step: 600, realtime: 30_000 },
  confirmation_scopes: ['rin.policy.confirm'],
};

const MAX_SAFE = Number.MAX_SAFE_INTEGER;
const MAX_CHALLENGES = 1024;
const MAX_AUTHORIZATIONS = 4096;
const SAFE_ID = /^[a-z][a-z0-9]*(?:[._-][a-z0-9]+)*$/;
const RISKS: readonly RiskLevel[] = ['low', 'moderate', 'high', 'critical'];
const OPERATIONS: readonly EffectOperation[] = ['read', 'create', 'update', 'delete', 'transfer', 'consume', 'execute', 'communicate'];
const OWNERSHIP: readonly OwnershipClass[] = ['unknown', 'system', 'actor', 'controller', 'player', 'shared', 'unowned'];
const LAYERS: readonly PolicyLayer[] = ['server', 'world', 'owner', 'actor', 'task'];
const PROFILES: readonly PolicyProfile[] = ['guarded', 'survival', 'open', 'privileged-custom'];
const RESULTS: readonly PolicyResult[] = ['allow', 'deny', 'require_confirmation'];

const KERNEL_FORBIDDEN: Readonly<Record<string, string>> = {
  'system.arbitrary-code': 'policy.arbitrary_code_denied',
  'system.file-access': 'policy.file_access_denied',
  'system.native-call': 'policy.native_call_denied',
  'authority.forge': 'policy.authority_forgery_denied',
  'secret.exposure': 'policy.secret_exposure_denied',
};

const riskRank = (r: RiskLevel | undefined): number => (r === undefined ? -1 : RISKS.indexOf(r));
const resultRank = (r: PolicyResult): number => RESULTS.indexOf(r);
const layerRank = (l: PolicyLayer): number => LAYERS.indexOf(l);
const byteCompare = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));

function configError(message: string): RinError {
  return new RinError('invalid', message);
}

function checkId(field: string, value: unknown, namespaced: boolean): void {
  if (typeof value !== 'string' || value.length === 0 || Buffer.byteLength(value) > 96 || !SAFE_ID.test(value)) {
    throw configError(`${field} must be a lowercase safe identifier of at most 96 bytes`);
  }
  if (namespaced && !value.includes('.')) throw configError(`${field} must be namespaced`);
}

function sortedUnique<T extends string>(field: string, values: readonly T[] | undefined, check: (field: string, v: T) => void): T[] {
  const out = [...(values ?? [])].sort(byteCompare);
  out.forEach((v, i) => {
    check(`${field}[${i}]`, v);
    if (i > 0 && out[i - 1] === v) throw configError(`${field} must not contain duplicates`);
  });
  return out;
}
const namespacedList = (field: string, v: readonly string[] | undefined): string[] => sortedUnique(field, v, (f, x) => checkId(f, x, true));
const enumList = <T extends string>(field: string, v: readonly T[] | undefined, allowed: readonly T[]): T[] =>
  sortedUnique(field, v, (f, x) => {
    if (!allowed.includes(x)) throw configError(`${f} is not supported`);
  });

function checkText(field: string, value: unknown, max: number): void {
  if (typeof value !== 'string' || value.trim() === '') throw configError(`${field} is required`);
  if (value.includes('\0') || [...value].length > max) throw configError(`${field} must contain at most ${max} characters`);
}

function safeCount(field: string, v: number | undefined, allowZero = true): number {
  const n = v ?? 0;
  if (!Number.isSafeInteger(n) || n < 0 || (!allowZero && n === 0)) throw configError(`${field} must be a JSON-safe integer`);
  return n;
}

/** Validates and normalizes one policy revision (sorted lists, rules by layer, priority desc, id). */
export function sealPolicyConfig(config: PolicyConfig): PolicyConfig {
  const rules = (config.rules ?? []).map((rule, index): PolicyRule => {
    const f = `rules[${index}]`;
    checkId(`${f}.rule_id`, rule.rule_id, true);
    if (!LAYERS.includes(rule.layer)) throw configError(`${f}.layer is not supported`);
    if (!Number.isInteger(rule.priority) || rule.priority < -10_000 || rule.priority > 10_000)
      throw configError(`${f}.priority must be between -10000 and 10000`);
    if (!RESULTS.includes(rule.result)) throw configError(`${f}.result is not supported`);
    const out: PolicyRule = {
      rule_id: rule.rule_id,
      layer: rule.layer,
      priority: rule.priority,
      result: rule.result,
      effect_kinds: namespacedList(`${f}.effect_kinds`, rule.effect_kinds),
      operations: enumList(`${f}.operations`, rule.operations, OPERATIONS),
      ownership: enumList(`${f}.ownership`, rule.ownership, OWNERSHIP),
      scopes: namespacedList(`${f}.scopes`, rule.scopes),
      tags_all: namespacedList(`${f}.tags_all`, rule.tags_all),
      tags_any: namespacedList(`${f}.tags_any`, rule.tags_any),
      reason_code: rule.reason_code,
      human_summary: rule.human_summary,
    };
    if (out.effect_kinds!.length > 64 || out.scopes!.length > 64 || out.tags_all!.length > 32 || out.tags_any!.length > 32) {
      throw configError(`${f} contains too many match values`);
    }
    if (rule.risk_at_least !== undefined) {
      if (!RISKS.includes(rule.risk_at_least)) throw configError(`${f}.risk_at_least is not supported`);
      out.risk_at_least = rule.risk_at_least;
    }
    if (rule.risk_at_most !== undefined) {
      if (!RISKS.includes(rule.risk_at_most)) throw configError(`${f}.risk_at_most is not supported`);
      out.risk_at_most = rule.risk_at_most;
    }
    if (riskRank(out.risk_at_least) > (out.risk_at_most === undefined ? 99 : riskRank(out.risk_at_most))) throw configError(`${f} risk range is empty`);
    if (rule.reversible !== undefined) out.reversible = rule.reversible;
    checkId(`${f}.reason_code`, rule.reason_code, true);
    checkText(`${f}.human_summary`, rule.human_summary, 300);
    return out;
  });
  rules.sort((a, b) => layerRank(a.layer) - layerRank(b.layer) || b.priority - a.priority || byteCompare(a.rule_id, b.rule_id));
  const budgets = (config.budgets ?? []).map((budget, index): PolicyBudget => {
    const f = `budgets[${index}]`;
    checkId(`${f}.budget_id`, budget.budget_id, true);
    if (!LAYERS.includes(budget.layer)) throw configError(`${f}.layer is not supported`);
    const out: PolicyBudget = {
      budget_id: budget.budget_id,
      layer: budget.layer,
      effect_kinds: namespacedList(`${f}.effect_kinds`, budget.effect_kinds),
      operations: enumList(`${f}.operations`, budget.operations, OPERATIONS),
      tags_any: namespacedList(`${f}.tags_any`, budget.tags_any),
      max_actions: safeCount(`${f}.max_actions`, budget.max_actions),
      max_quantity: safeCount(`${f}.max_quantity`, budget.max_quantity),
    };
    if (out.max_actions! > 0xffffffff) throw configError(`${f}.max_actions must fit 32 bits`);
    if (out.max_actions === 0 && out.max_quantity === 0) throw configError(`${f} must set max_actions or max_quantity`);
    const w = budget.window;
    if (w !== undefined && w.value !== 0) {
      if (!['event', 'step', 'realtime'].includes(w.clock) || !Number.isSafeInteger(w.value) || w.value < 1) throw configError(`${f}.window is invalid`);
      out.window = { clock: w.clock, value: w.value };
    } else if (w !== undefined && w.clock !== '') {
      throw configError(`${f}.window.clock must be empty when no window is configured`);
    }
    return out;
  });
  budgets.sort((a, b) => layerRank(a.layer) - layerRank(b.layer) || byteCompare(a.budget_id, b.budget_id));
  const sealed: PolicyConfig = {
    revision: config.revision,
    profile: config.profile,
    known_effect_kinds: namespacedList('known_effect_kinds', config.known_effect_kinds),
    known_scopes: namespacedList('known_scopes', config.known_scopes),
    rules,
    budgets,
    confirmation_ttl: { ...config.confirmation_ttl },
    confirmation_scopes: namespacedList('confirmation_scopes', config.confirmation_scopes),
  };
  if (!Number.isSafeInteger(sealed.revision) || sealed.revision < 1) throw configError('revision must be a positive JSON-safe integer');
  if (!PROFILES.includes(sealed.profile)) throw configError(`unsupported profile ${JSON.stringify(sealed.profile)}`);
  if (sealed.known_effect_kinds!.length > 512) throw configError('known_effect_kinds must contain at most 512 values');
  if (sealed.known_scopes!.length > 512) throw configError('known_scopes must contain at most 512 values');
  if (rules.length > 512) throw configError('rules must contain at most 512 values');
  if (budgets.length > 128) throw configError('budgets must contain at most 128 values');
  let enabled = 0;
  for (const clock of ['event', 'step', 'realtime'] as const) {
    const ttl = safeCount(`confirmation_ttl.${clock}`, sealed.confirmation_ttl[clock]);
    if (ttl > 0) enabled++;
  }
  if (enabled === 0) throw configError('confirmation_ttl must enable at least one Host clock');
  if (sealed.confirmation_scopes.length === 0 || sealed.confirmation_scopes.length > 16)
    throw configError('confirmation_scopes must contain between 1 and 16 values');
  const ruleIds = new Set<string>();
  for (const r of rules) {
    if (ruleIds.has(r.rule_id)) throw configError(`duplicate rule_id ${JSON.stringify(r.rule_id)}`);
    ruleIds.add(r.rule_id);
  }
  const budgetIds = new Set<string>();
  for (const b of budgets) {
    if (budgetIds.has(b.budget_id)) throw configError(`duplicate budget_id ${JSON.stringify(b.budget_id)}`);
    budgetIds.add(b.budget_id);
  }
  return sealed;
}

const names = { list: 'string' } as const;
const RuleShape = {
  fields: {
    rule_id: 'string',
    layer: 'string',
    priority: 'i64',
    result: 'string',
    'effect_kinds?': names,
    'operations?': names,
    'ownership?': names,
    'scopes?': names,
    'tags_all?': names,
    'tags_any?': names,
    'risk_at_least?': 'string',
    'risk_at_most?': 'string',
    'reversible?': { ptr: 'bool' },
    reason_code: 'string',
    human_summary: 'string',
  },
} as const;
const BudgetShape = {
  fields: {
    budget_id: 'string',
    layer: 'string',
    'effect_kinds?': names,
    'operations?': names,
    'tags_any?': names,
    'max_actions?': 'u32',
    'max_quantity?': 'u64',
    'window?': { ptr: { fields: { clock: 'string', value: 'u64' } } },
  },
} as const;
const PolicyConfigShape = {
  fields: {
    revision: 'u64',
    profile: 'string',
    'known_effect_kinds?': names,
    'known_scopes?': names,
    'rules?': { list: RuleShape },
    'budgets?': { list: BudgetShape },
    confirmation_ttl: { fields: { 'event?': 'u64', 'step?': 'u64', 'realtime?': 'u64' } },
    confirmation_scopes: names,
  },
} as const;

/**
 * Reads a policy file in the reference's format: strict JSON (no duplicate names), unknown members
 * refused at every depth, then sealed.
 */
export function parsePolicyConfig(text: string): PolicyConfig {
  return sealPolicyConfig(decodeWireText<PolicyConfig>(text, PolicyConfigShape));
}

interface EffectDecision {
  result: PolicyResult;
  ruleId: string;
  reason: string;
  summary: string;
}

function kernelDecision(config: PolicyConfig, effect: Effect): EffectDecision | undefined {
  const forbidden = KERNEL_FORBIDDEN[effect.kind] ?? (effect.tags ?? []).map((t) => KERNEL_FORBIDDEN[t]).find((r) => r !== undefined);
  if (forbidden !== undefined) {
    return { result: 'deny', ruleId: 'kernel.forbidden-effect', reason: forbidden, summary: 'The effect is forbidden by the Rin safety kernel.' };
  }
  if (effect.ownership === 'unknown') {
    return {
      result: 'deny',
      ruleId: 'kernel.unknown-ownership',
      reason: 'policy.unknown_ownership',
      summary: 'The Host could not establish ownership for this effect.',
    };
  }
  if (!(config.known_effect_kinds ?? []).includes(effect.kind)) {
    return {
      result: 'deny',
      ruleId: 'kernel.unknown-effect',
      reason: 'policy.unknown_effect',
      summary: 'The effect kind is not registered in the active gameplay policy.',
    };
  }
  if (!(config.known_scopes ?? []).includes(effect.scope)) {
    return {
      result: 'deny',
      ruleId: 'kernel.unknown-scope',
      reason: 'policy.unknown_scope',
      summary: 'The effect scope is not registered in the active gameplay policy.',
    };
  }
  return undefined;
}

function profileDecision(profile: PolicyProfile, e: Effect): EffectDecision {
  const risk = riskRank(e.risk);
  switch (profile) {
    case 'guarded':
      if ((e.operation === 'read' || e.operation === 'communicate') && risk <= riskRank('moderate')) {
        return {
          result: 'allow',
          ruleId: 'profile.guarded.safe-interaction',
          reason: 'policy.profile_allow',
          summary: 'The guarded profile allows this bounded interaction.',
        };
      }
      if (risk >= riskRank('high')) {
        return {
          result: 'deny',
          ruleId: 'profile.guarded.high-risk',
          reason: 'policy.profile_deny',
          summary: 'The guarded profile denies high-risk effects by default.',
        };
      }
      if (e.reversible && (e.ownership === 'actor' || e.ownership === 'controller' || e.ownership === 'unowned') && e.risk === 'low') {
        return {
          result: 'allow',
          ruleId: 'profile.guarded.low-risk',
          reason: 'policy.profile_allow',
          summary: 'The guarded profile allows this reversible low-risk effect.',
        };
      }
      return {
        result: 'require_confirmation',
        ruleId: 'profile.guarded.confirm',
        reason: 'policy.profile_confirmation',
        summary: 'The guarded profile requires confirmation for this effect.',
      };
    case 'survival':
      if (e.risk === 'critical') {
        return {
          result: 'deny',
          ruleId: 'profile.survival.critical-risk',
          reason: 'policy.profile_deny',
          summary: 'The survival profile denies critical-risk effects by default.',
        };
      }
      if (e.risk === 'high' || e.ownership === 'player' || e.ownership === 'shared' || e.ownership === 'system') {
        return {
          result: 'require_confirmation',
          ruleId: 'profile.survival.confirm',
          reason: 'policy.profile_confirmation',
          summary: 'The survival profile requires confirmation for protected or high-risk effects.',
        };
      }
      return {
        result: 'allow',
        ruleId: 'profile.survival.allow',
        reason: 'policy.profile_allow',
        summary: 'The survival profile allows this registered gameplay effect.',
      };
    case 'open':
    case 'privileged-custom':
      if (e.risk === 'critical') {
        return {
          result: 'require_confirmation',
          ruleId: 'profile.open.critical-confirm',
          reason: 'policy.profile_confirmation',
          summary: 'The open profile still requires confirmation for critical-risk effects.',
        };
      }
      return { result: 'allow', ruleId: 'profile.open.allow', reason: 'policy.profile_allow', summary: 'The open profile allows this registered effect.' };
    default:
      return { result: 'deny', ruleId: 'kernel.invalid-profile', reason: 'policy.invalid_profile', summary: 'The active gameplay profile is invalid.' };
  }
}

function layerApplies(layer: PolicyLayer, action: BoundAction, ctx: PolicyContext): boolean {
  if (layer === 'owner' && !ctx.owner_id) return false;
  if (layer === 'task' && !action.task_id) return false;
  return true;
}

function ruleMatches(rule: PolicyRule, e: Effect, action: BoundAction, ctx: PolicyContext): boolean {
  const tags = e.tags ?? [];
  const has = <T>(list: T[] | undefined, v: T): boolean => list === undefined || list.length === 0 || list.includes(v);
  return (
    layerApplies(rule.layer, action, ctx) &&
    has(rule.effect_kinds, e.kind) &&
    has(rule.operations, e.operation) &&
    has(rule.ownership, e.ownership) &&
    has(rule.scopes, e.scope) &&
    (rule.risk_at_least === undefined || riskRank(e.risk) >= riskRank(rule.risk_at_least)) &&
    (rule.risk_at_most === undefined || riskRank(e.risk) <= riskRank(rule.risk_at_most)) &&
    (rule.reversible === undefined || e.reversible === rule.reversible) &&
    (rule.tags_all ?? []).every((t) => tags.includes(t)) &&
    ((rule.tags_any ?? []).length === 0 || (rule.tags_any ?? []).some((t) => tags.includes(t)))
  );
}

function budgetMatches(b: PolicyBudget, e: Effect, action: BoundAction, ctx: PolicyContext): boolean {
  const tags = e.tags ?? [];
  return (
    layerApplies(b.layer, action, ctx) &&
    ((b.effect_kinds ?? []).length === 0 || b.effect_kinds!.includes(e.kind)) &&
    ((b.operations ?? []).length === 0 || b.operations!.includes(e.operation)) &&
    ((b.tags_any ?? []).length === 0 || b.tags_any!.some((t) => tags.includes(t)))
  );
}

const epochKey = (e: Epoch): string => `${e.session_id}\0${e.world_id}\0${e.host}\0${e.world}\0${e.timeline}`;
const sameEpoch = (a: Epoch, b: Epoch): boolean => epochKey(a) === epochKey(b);

function authorizationKey(action: BoundAction, ctx: PolicyContext, revision: number): string {
  const e = action.expected_epoch;
  return [
    action.binding_id,
    action.request_digest,
    action.effect_digest,
    ctx.principal.id,
    ctx.server_id,
    ctx.owner_id ?? '',
    e.session_id,
    e.host,
    e.world,
    e.timeline,
    revision,
  ].join('\0');
}

const newId = (prefix: string): string => `${prefix}.${randomBytes(16).toString('hex')}`;

interface ChallengeState {
  challenge: ConfirmationChallenge;
  approved: boolean;
  key: string;
  clockScope: string;
}
interface Delta {
  key: string;
  actions: number;
  quantity: number;
}

function deny(base: PolicyDecision, ruleId: string, reason: string, summary: string): PolicyDecision {
  const out: PolicyDecision = {
    ...base,
    result: 'deny',
    matched_rule_ids: appendUnique(base.matched_rule_ids, ruleId),
    reason_code: reason,
    human_summary: summary,
  };
  delete out.confirmation_challenge;
  delete out.effective_limits;
  return ordered(out);
}

function appendUnique(list: string[], v: string): string[] {
  return list.includes(v) ? [...list] : [...list, v];
}

/** Rebuilds a decision in wire member order (goJsonEncode writes insertion order). */
function ordered(d: PolicyDecision): PolicyDecision {
  const out: Partial<PolicyDecision> = {
    decision_id: d.decision_id,
    result: d.result,
    controller_id: d.controller_id,
    actor_id: d.actor_id,
    principal_id: d.principal_id,
    effect_digest: d.effect_digest,
    policy_revision: d.policy_revision,
    matched_rule_ids: [...d.matched_rule_ids],
    reason_code: d.reason_code,
    human_summary: d.human_summary,
  };
  if (d.effective_limits !== undefined && d.effective_limits.length > 0) out.effective_limits = d.effective_limits.map((l) => ({ ...l }));
  const c = d.confirmation_challenge;
  if (c !== undefined) out.confirmation_challenge = { ...c, epoch: { ...c.epoch }, expires_at: { ...c.expires_at } };
  out.evaluated_at = { clock: d.evaluated_at.clock, value: d.evaluated_at.value };
  return out as PolicyDecision;
}

export function clonePolicyDecision(d: PolicyDecision): PolicyDecision {
  return ordered(d);
}

/** One sealed policy revision plus its short-lived confirmation challenges and budget reservations. */
export class PolicyEngine {
  private config: PolicyConfig;
  private configDigest: string;
  private readonly challenges = new Map<string, ChallengeState>();
  private readonly challengeKeys = new Map<string, string>();
  private readonly usage = new Map<string, { actions: number; quantity: number }>();
  private readonly reservations = new Map<string, Delta[]>();
  private readonly authorizations = new Map<string, { decision: PolicyDecision; confirmationId: string; finalized: boolean }>();
  private readonly decisionKeys = new Map<string, string>();

  constructor(config: PolicyConfig = DEFAULT_POLICY_CONFIG) {
    this.config = sealPolicyConfig(config);
    this.configDigest = digestConfig(this.config);
  }

  get revision(): number {
    return this.config.revision;
  }

  activeConfig(): PolicyConfig {
    return structuredClone(this.config);
  }

  /** Installs a newer revision; open challenges and cached authorizations are dropped, usage stays. */
  update(config: PolicyConfig): void {
    const sealed = sealPolicyConfig(config);
    if (sealed.revision <= this.config.revision) throw configError('policy revision must increase');
    this.config = sealed;
    this.configDigest = digestConfig(sealed);
    this.challenges.clear();
    this.challengeKeys.clear();
    this.authorizations.clear();
  }

  evaluate(action: BoundAction, ctx: PolicyContext): PolicyDecision {
    const config = this.config;
    this.pruneChallenges(action, ctx);
    const base: PolicyDecision = {
      decision_id: newId('decision'),
      result: 'deny',
      controller_id: action.controller_id,
      actor_id: action.actor_id,
      principal_id: ctx.principal.id,
      effect_digest: action.effect_digest,
      policy_revision: config.revision,
      matched_rule_ids: [],
      reason_code: '',
      human_summary: '',
      evaluated_at: { ...ctx.now },
    };
    if (ctx.emergency_stopped) return deny(base, 'kernel.emergency-stop', 'policy.emergency_stop', 'The emergency stop is active for this Host.');
    if (!sameEpoch(ctx.current_epoch, action.expected_epoch))
      return deny(base, 'kernel.stale-epoch', 'policy.stale_epoch', 'The action belongs to a stale Host epoch.');
    if (ctx.now.clock !== action.valid_until.clock || ctx.now.value >= action.valid_until.value) {
      return deny(base, 'kernel.expired-binding', 'policy.expired_binding', 'The Host binding is expired or uses a different clock.');
    }
    const confirmationId = ctx.confirmation_id ?? '';
    const authKey = authorizationKey(action, ctx, config.revision);
    const existing = this.authorizations.get(authKey);
    if (existing !== undefined) {
      if (existing.confirmationId === confirmationId) return ordered(existing.decision);
      return deny(
        base,
        'kernel.invalid-confirmation',
        'policy.invalid_confirmation',
        'The confirmation does not match the existing authorization for this binding.',
      );
    }

    let result = 'allow' as PolicyResult;
    let reason = 'policy.allowed';
    let summary = 'All Host-bound effects are allowed by the active gameplay policy.';
    let selected = false;
    let matched: string[] = [];
    const consider = (d: { result: PolicyResult; ruleId: string; reason: string; summary: string }): void => {
      matched = appendUnique(matched, d.ruleId);
      if (!selected || resultRank(d.result) > resultRank(result)) {
        result = d.result;
        reason = d.reason;
        summary = d.summary;
        selected = true;
      }
    };
    for (const effect of action.effect_preview) {
      const kernel = kernelDecision(config, effect);
      if (kernel !== undefined) {
        consider(kernel);
        continue;
      }
      let ruleMatched = false;
      for (const rule of config.rules ?? []) {
        if (!ruleMatches(rule, effect, action, ctx)) continue;
        ruleMatched = true;
        consider({ result: rule.result, ruleId: rule.rule_id, reason: rule.reason_code, summary: rule.human_summary });
      }
      if (!ruleMatched) consider(profileDecision(config.profile, effect));
    }
    const decided: PolicyDecision = { ...base, result, matched_rule_ids: matched, reason_code: reason, human_summary: summary };
    if (result === 'deny') return ordered(decided);
    if (result === 'require_confirmation') {
      const consumed = this.consumeConfirmation(action, ctx, config, decided);
      if (consumed !== true && consumed !== false) return consumed;
      if (!consumed) {
        const ttl = config.confirmation_ttl[ctx.now.clock] ?? 0;
        if (ttl === 0) {
          return deny(
            decided,
            'kernel.confirmation-clock-disabled',
            'policy.confirmation_clock_disabled',
            'Gameplay confirmation is disabled for this Host clock.',
          );
        }
        decided.confirmation_challenge = this.issueConfirmation(action, ctx, config, ttl);
        return ordered(decided);
      }
      decided.result = 'allow';
      decided.matched_rule_ids = appendUnique(decided.matched_rule_ids, 'confirmation.consumed');
      decided.reason_code = 'policy.confirmed';
      decided.human_summary = 'The approved single-use confirmation matches this exact effect preview.';
    } else if (confirmationId !== '') {
      return deny(
        decided,
        'kernel.unexpected-confirmation',
        'policy.confirmation_not_required',
        'A confirmation cannot be attached to an action that does not require one.',
      );
    }

    const reserved = this.reserveBudgets(action, ctx, config, decided);
    if ('denied' in reserved) return reserved.denied;
    if (reserved.limits.length > 0) decided.effective_limits = reserved.limits;
    if (this.authorizations.size >= MAX_AUTHORIZATIONS) {
      for (const [k, s] of this.authorizations) if (s.finalized) this.authorizations.delete(k);
    }
    if (this.authorizations.size >= MAX_AUTHORIZATIONS) {
      this.rollback(reserved.deltas);
      return deny(decided, 'kernel.authorization-capacity', 'policy.authorization_capacity', 'The policy authorization capacity is temporarily exhausted.');
    }
    const final = ordered(decided);
    this.authorizations.set(authKey, { decision: final, confirmationId, finalized: false });
    this.decisionKeys.set(final.decision_id, authKey);
    if (reserved.deltas.length > 0) this.reservations.set(final.decision_id, reserved.deltas);
    return ordered(final);
  }

  /**
   * Marks a challenge approved by a trusted principal holding one of the confirmation scopes.
   * Approval alone authorizes nothing: evaluate() must then consume the exact challenge.
   */
  approve(challengeId: string, approver: Principal, now: Timepoint): ConfirmationChallenge {
    const state = this.challenges.get(challengeId);
    if (state === undefined) throw new RinError('stale', 'confirmation challenge is missing or expired');
    if (state.challenge.expires_at.clock !== now.clock) throw new RinError('stale', 'confirmation approval clock does not match the challenge');
    if (now.value >= state.challenge.expires_at.value) {
      this.challenges.delete(challengeId);
      this.challengeKeys.delete(state.key);
      throw new RinError('stale', 'confirmation challenge is missing or expired');
    }
    if (state.challenge.policy_revision !== this.config.revision) throw new RinError('stale', 'confirmation challenge belongs to an old policy revision');
    if (!(approver.granted_scopes ?? []).some((s) => this.config.confirmation_scopes.includes(s))) {
      throw new RinError('forbidden', 'principal cannot approve gameplay confirmations');
    }
    state.approved = true;
    return { ...state.challenge };
  }

  /** Commits or rolls back a decision's budget reservation; a rollback allows a fresh evaluation. */
  finalize(decisionId: string, committed: boolean): boolean {
    const key = this.decisionKeys.get(decisionId);
    if (key === undefined) return false;
    const deltas = this.reservations.get(decisionId);
    if (deltas !== undefined) {
      if (!committed) this.rollback(deltas);
      this.reservations.delete(decisionId);
    }
    const state = this.authorizations.get(key);
    if (state !== undefined) {
      if (committed) state.finalized = true;
      else this.authorizations.delete(key);
    }
    this.decisionKeys.delete(decisionId);
    return true;
  }

  /** Drops one exact, still-open challenge when its operation is abandoned before approval. */
  discardConfirmation(challenge: ConfirmationChallenge): boolean {
    const state = this.challenges.get(challenge.challenge_id);
    if (state === undefined || JSON.stringify(state.challenge) !== JSON.stringify(challenge)) return false;
    this.challenges.delete(challenge.challenge_id);
    this.challengeKeys.delete(state.key);
    return true;
  }

  snapshotState(): PolicyState {
    const state: PolicyState = { version: 'rin.policy.state/v1', policy_revision: this.config.revision, config_digest: this.configDigest };
    const usage = [...this.usage].map(([key, u]) => ({ key, actions: u.actions, quantity: u.quantity })).sort((a, b) => byteCompare(a.key, b.key));
    if (usage.length > 0) state.usage = usage;
    const reservations = [...this.reservations].map(([decision_id, deltas]) => ({ decision_id, deltas: deltas.map((d) => ({ ...d })) }));
    if (reservations.length > 0) state.reservations = reservations.sort((a, b) => byteCompare(a.decision_id, b.decision_id));
    return state;
  }

  /**
   * Restores usage and open reservations written by snapshotState. A checkpoint of another policy
   * revision keeps nothing: budgets are defined by the configuration they were counted under.
   */
  restoreState(state: PolicyState, allowDecisionIds: ReadonlySet<string>): void {
    if (state.version !== 'rin.policy.state/v1') throw new RinError('internal', 'policy state version is not supported');
    if (state.policy_revision !== this.config.revision || state.config_digest !== this.configDigest) return;
    for (const u of state.usage ?? []) this.usage.set(u.key, { actions: u.actions, quantity: u.quantity });
    for (const r of state.reservations ?? []) {
      if (!allowDecisionIds.has(r.decision_id)) throw new RinError('internal', `policy reservation ${r.decision_id} has no matching allowed action`);
      this.reservations.set(
        r.decision_id,
        r.deltas.map((d) => ({ ...d })),
      );
      this.decisionKeys.set(r.decision_id, `restored\0${r.decision_id}`);
    }
  }

  private consumeConfirmation(action: BoundAction, ctx: PolicyContext, config: PolicyConfig, base: PolicyDecision): boolean | PolicyDecision {
    const id = ctx.confirmation_id ?? '';
    if (id === '') return false;
    const invalid: PolicyDecision = ordered({
      ...base,
      result: 'deny',
      matched_rule_ids: ['kernel.invalid-confirmation'],
      reason_code: 'policy.invalid_confirmation',
      human_summary: 'The confirmation is missing, unapproved, expired, consumed, or bound to another action.',
    });
    delete invalid.confirmation_challenge;
    const state = this.challenges.get(id);
    if (state === undefined || !state.approved) return invalid;
    const c = state.challenge;
    if (
      state.key !== authorizationKey(action, ctx, config.revision) ||
      c.controller_id !== action.controller_id ||
      c.actor_id !== action.actor_id ||
      c.principal_id !== ctx.principal.id ||
      c.effect_digest !== action.effect_digest ||
      !sameEpoch(c.epoch, action.expected_epoch) ||
      c.policy_revision !== config.revision ||
      c.expires_at.clock !== ctx.now.clock ||
      ctx.now.value >= c.expires_at.value
    ) {
      return invalid;
    }
    this.challenges.delete(id);
    this.challengeKeys.delete(state.key);
    return true;
  }

  private issueConfirmation(action: BoundAction, ctx: PolicyContext, config: PolicyConfig, ttl: number): ConfirmationChallenge {
    const key = authorizationKey(action, ctx, config.revision);
    const existingId = this.challengeKeys.get(key);
    if (existingId !== undefined) {
      const existing = this.challenges.get(existingId);
      if (existing !== undefined) return { ...existing.challenge };
      this.challengeKeys.delete(key);
    }
    if (this.challenges.size >= MAX_CHALLENGES) throw new RinError('capacity', 'confirmation challenge capacity is exhausted');
    let expires = action.valid_until.value;
    if (ctx.now.value <= MAX_SAFE - ttl) expires = Math.min(expires, ctx.now.value + ttl);
    const challenge: ConfirmationChallenge = {
      challenge_id: newId('confirmation'),
      controller_id: action.controller_id,
      actor_id: action.actor_id,
      principal_id: ctx.principal.id,
      effect_digest: action.effect_digest,
      epoch: { ...action.expected_epoch },
      expires_at: { clock: ctx.now.clock, value: expires },
      policy_revision: config.revision,
      single_use: true,
    };
    this.challenges.set(challenge.challenge_id, {
      challenge,
      approved: false,
      key,
      clockScope: `${ctx.server_id}\0${action.expected_epoch.world_id}\0${ctx.now.clock}`,
    });
    this.challengeKeys.set(key, challenge.challenge_id);
    return { ...challenge };
  }

  private pruneChallenges(action: BoundAction, ctx: PolicyContext): void {
    const scope = `${ctx.server_id}\0${action.expected_epoch.world_id}\0${ctx.now.clock}`;
    for (const [id, s] of this.challenges) {
      if (s.clockScope === scope && ctx.now.value >= s.challenge.expires_at.value) {
        this.challenges.delete(id);
        this.challengeKeys.delete(s.key);
      }
    }
  }

  private reserveBudgets(
    action: BoundAction,
    ctx: PolicyContext,
    config: PolicyConfig,
    base: PolicyDecision,
  ): { limits: EffectiveLimit[]; deltas: Delta[] } | { denied: PolicyDecision } {
    const limits: EffectiveLimit[] = [];
    const deltas: Delta[] = [];
    for (const budget of config.budgets ?? []) {
      const matching = action.effect_preview.filter((e) => budgetMatches(budget, e, action, ctx));
      if (matching.length === 0) continue;
      const quantity = matching.reduce((sum, e) => sum + (e.quantity ?? 0), 0);
      let scope = ctx.server_id;
      if (budget.layer === 'world') scope = action.expected_epoch.world_id;
      else if (budget.layer === 'owner') scope = ctx.owner_id ?? '';
      else if (budget.layer === 'actor') scope = action.actor_id;
      else if (budget.layer === 'task') scope = action.task_id ?? '';
      let bucket = 'epoch';
      if (budget.window !== undefined && budget.window.value > 0) {
        if (budget.window.clock !== ctx.now.clock) {
          this.rollback(deltas);
          throw new RinError('internal', 'budget window clock does not match the Host clock');
        }
        bucket = String(Math.floor(ctx.now.value / budget.window.value));
      }
      const key = [budget.budget_id, scope, epochKey(action.expected_epoch), bucket].join('\0');
      const current = this.usage.get(key) ?? { actions: 0, quantity: 0 };
      const next = { actions: current.actions + 1, quantity: current.quantity + quantity };
      const maxActions = budget.max_actions ?? 0;
      const maxQuantity = budget.max_quantity ?? 0;
      if (!Number.isSafeInteger(next.quantity) || (maxActions > 0 && next.actions > maxActions) || (maxQuantity > 0 && next.quantity > maxQuantity)) {
        this.rollback(deltas);
        return { denied: deny(base, budget.budget_id, 'policy.budget_exceeded', 'The action would exceed an active gameplay budget.') };
      }
      this.usage.set(key, next);
      deltas.push({ key, actions: 1, quantity });
      limits.push({
        budget_id: budget.budget_id,
        usage_key: `${budget.budget_id}.${createHash('sha256').update(key).digest('hex').slice(0, 16)}`,
        max_actions: maxActions,
        actions_used: next.actions,
        actions_remaining: maxActions > 0 ? maxActions - next.actions : 0,
        max_quantity: maxQuantity,
        quantity_used: next.quantity,
        quantity_remaining: maxQuantity > 0 ? maxQuantity - next.quantity : 0,
      });
    }
    return { limits, deltas };
  }

  private rollback(deltas: Delta[]): void {
    for (let i = deltas.length - 1; i >= 0; i--) {
      const d = deltas[i]!;
      const cur = this.usage.get(d.key);
      if (cur === undefined || cur.actions < d.actions || cur.quantity < d.quantity) {
        this.usage.delete(d.key);
        continue;
      }
      const next = { actions: cur.actions - d.actions, quantity: cur.quantity - d.quantity };
      if (next.actions === 0 && next.quantity === 0) this.usage.delete(d.key);
      else this.usage.set(d.key, next);
    }
  }
}

function digestConfig(config: PolicyConfig): string {
  return createHash('sha256').update(JSON.stringify(config)).digest('hex');
}
