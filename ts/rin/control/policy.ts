/**
 * The gameplay policy engine: decides allow / deny / require_confirmation for one exact Host-bound
 * effect preview. Deterministic, no model or network. The safety kernel runs before any rule and
 * cannot be configured away; the most restrictive result over all effects wins.
 *
 * Without a configured policy the engine runs the reference daemon's built-in default: profile
 * `guarded`, no known effect kinds or scopes (so every effect is denied `policy.unknown_effect`
 * until an operator registers them), confirmation TTLs event 16 / step 600 / realtime 30000 and
 * confirmation scope `rin.policy.confirm`.
 *
 * Its configuration is policy-config.ts; how one effect is decided, policy-rules.ts.
 */
import { createHash, randomBytes } from 'node:crypto';
import { RinError } from '../errors.js';
import type { BoundAction, ConfirmationChallenge, EffectiveLimit, Epoch, PolicyDecision, Principal, Timepoint } from '../types.js';
import { byteCompare, configError, DEFAULT_POLICY_CONFIG, digestConfig, sealPolicyConfig, type PolicyConfig } from './policy-config.js';
import { appendUnique, budgetMatches, decideEffects, type PolicyContext } from './policy-rules.js';

export {
  DEFAULT_POLICY_CONFIG,
  parsePolicyConfig,
  sealPolicyConfig,
  type ConfirmationDurations,
  type PolicyBudget,
  type PolicyConfig,
  type PolicyLayer,
  type PolicyProfile,
  type PolicyRule,
} from './policy-config.js';
export type { PolicyContext } from './policy-rules.js';

const MAX_SAFE = Number.MAX_SAFE_INTEGER;
const MAX_CHALLENGES = 1024;
const MAX_AUTHORIZATIONS = 4096;

/** Restart checkpoint of budget usage and open reservations; confirmations never survive a restart. */
export interface PolicyState {
  version: 'rin.policy.state/v1';
  policy_revision: number;
  config_digest: string;
  usage?: Array<{ key: string; actions: number; quantity: number }>;
  reservations?: Array<{ decision_id: string; deltas: Array<{ key: string; actions: number; quantity: number }> }>;
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

    const decided: PolicyDecision = { ...base, ...decideEffects(config, action, ctx) };
    if (decided.result === 'deny') return ordered(decided);
    const confirmed = this.confirmation(action, ctx, config, decided, confirmationId);
    if (confirmed !== undefined) return confirmed;
    return this.authorize(action, ctx, config, decided, authKey, confirmationId);
  }

  /**
   * An action that requires confirmation consumes its approved challenge (and is then allowed), or gets
   * a challenge; a confirmation attached to any other action is refused. Undefined: evaluation goes on.
   */
  private confirmation(
    action: BoundAction,
    ctx: PolicyContext,
    config: PolicyConfig,
    decided: PolicyDecision,
    confirmationId: string,
  ): PolicyDecision | undefined {
    if (decided.result === 'require_confirmation') {
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
    return undefined;
  }

  /** Reserves the action's budgets and records the authorization, so a replay of the same binding gets the same decision. */
  private authorize(
    action: BoundAction,
    ctx: PolicyContext,
    config: PolicyConfig,
    decided: PolicyDecision,
    authKey: string,
    confirmationId: string,
  ): PolicyDecision {
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
