/**
 * The gameplay policy's configuration: its types, the reference daemon's built-in default, sealing
 * (validated, lists sorted and deduplicated, rules in evaluation order) and the policy file format.
 */
import { createHash } from 'node:crypto';
import { RinError } from '../errors.js';
import { decodeWireText } from '../wire.js';
import type { ClockMode, EffectOperation, OwnershipClass, PolicyResult, RiskLevel } from '../types.js';

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

export const DEFAULT_POLICY_CONFIG: PolicyConfig = {
  revision: 1,
  profile: 'guarded',
  known_effect_kinds: [],
  known_scopes: [],
  confirmation_ttl: { event: 16, step: 600, realtime: 30_000 },
  confirmation_scopes: ['rin.policy.confirm'],
};

const SAFE_ID = /^[a-z][a-z0-9]*(?:[._-][a-z0-9]+)*$/;
const RISKS: readonly RiskLevel[] = ['low', 'moderate', 'high', 'critical'];
const OPERATIONS: readonly EffectOperation[] = ['read', 'create', 'update', 'delete', 'transfer', 'consume', 'execute', 'communicate'];
const OWNERSHIP: readonly OwnershipClass[] = ['unknown', 'system', 'actor', 'controller', 'player', 'shared', 'unowned'];
const LAYERS: readonly PolicyLayer[] = ['server', 'world', 'owner', 'actor', 'task'];
const PROFILES: readonly PolicyProfile[] = ['guarded', 'survival', 'open', 'privileged-custom'];
const RESULTS: readonly PolicyResult[] = ['allow', 'deny', 'require_confirmation'];

export const riskRank = (r: RiskLevel | undefined): number => (r === undefined ? -1 : RISKS.indexOf(r));
export const resultRank = (r: PolicyResult): number => RESULTS.indexOf(r);
const layerRank = (l: PolicyLayer): number => LAYERS.indexOf(l);
export const byteCompare = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));

export function configError(message: string): RinError {
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

/** One rule: identifiers checked, match lists sorted and deduplicated. */
function sealRule(rule: PolicyRule, index: number): PolicyRule {
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
}

/** One budget: a limit on actions or quantity, over an optional window of one Host clock. */
function sealBudget(budget: PolicyBudget, index: number): PolicyBudget {
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
}

/** Validates and normalizes one policy revision (sorted lists, rules by layer, priority desc, id). */
export function sealPolicyConfig(config: PolicyConfig): PolicyConfig {
  const rules = (config.rules ?? []).map(sealRule);
  rules.sort((a, b) => layerRank(a.layer) - layerRank(b.layer) || b.priority - a.priority || byteCompare(a.rule_id, b.rule_id));
  const budgets = (config.budgets ?? []).map(sealBudget);
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

export function digestConfig(config: PolicyConfig): string {
  return createHash('sha256').update(JSON.stringify(config)).digest('hex');
}
