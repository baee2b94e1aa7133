/**
 * How the gameplay policy decides one effect: the safety kernel first (it cannot be configured away),
 * then the configured rules, else the profile; an action's result is the most restrictive over its effects.
 */
import type { BoundAction, Effect, Epoch, PolicyResult, Principal, Timepoint } from '../types.js';
import { resultRank, riskRank, type PolicyBudget, type PolicyConfig, type PolicyLayer, type PolicyProfile, type PolicyRule } from './policy-config.js';

/** What an action is evaluated in: the Host's now and epoch, who asks, for which server and owner. */
export interface PolicyContext {
  now: Timepoint;
  current_epoch: Epoch;
  principal: Principal;
  server_id: string;
  owner_id?: string | undefined;
  emergency_stopped: boolean;
  confirmation_id?: string | undefined;
}

const KERNEL_FORBIDDEN: Readonly<Record<string, string>> = {
  'system.arbitrary-code': 'policy.arbitrary_code_denied',
  'system.file-access': 'policy.file_access_denied',
  'system.native-call': 'policy.native_call_denied',
  'authority.forge': 'policy.authority_forgery_denied',
  'secret.exposure': 'policy.secret_exposure_denied',
};

interface EffectDecision {
  result: PolicyResult;
  ruleId: string;
  reason: string;
  summary: string;
}

/** The most restrictive decision over the action's effects, and every rule that matched, in order. */
export function decideEffects(
  config: PolicyConfig,
  action: BoundAction,
  ctx: PolicyContext,
): { result: PolicyResult; matched_rule_ids: string[]; reason_code: string; human_summary: string } {
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
  return { result, matched_rule_ids: matched, reason_code: reason, human_summary: summary };
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

export function budgetMatches(b: PolicyBudget, e: Effect, action: BoundAction, ctx: PolicyContext): boolean {
  const tags = e.tags ?? [];
  return (
    layerApplies(b.layer, action, ctx) &&
    ((b.effect_kinds ?? []).length === 0 || b.effect_kinds!.includes(e.kind)) &&
    ((b.operations ?? []).length === 0 || b.operations!.includes(e.operation)) &&
    ((b.tags_any ?? []).length === 0 || b.tags_any!.some((t) => tags.includes(t)))
  );
}

export function appendUnique(list: string[], v: string): string[] {
  return list.includes(v) ? [...list] : [...list, v];
}
