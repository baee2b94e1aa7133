/**
 * What the rin authority is told beyond the control API: the effects each capability declares and the
 * daemon's policy, both optional. A rin capability spec names a risk floor but not its effects (the host
 * authors them when it binds a request, after submission), so a preview before submitting can only show
 * what the world's author declared; without a declaration the authority says so and stays conservative.
 */
import type { ClockMode, EffectOperation, OwnershipClass, PolicyResult, RiskLevel } from '../../rin/types.js';

/** One effect a capability declares it has: the policy-relevant members of a rin Effect. */
export interface DeclaredEffect {
  readonly kind: string;
  readonly operation: EffectOperation;
  readonly ownership: OwnershipClass;
  readonly scope: string;
  readonly reversible: boolean;
  readonly risk: RiskLevel;
  readonly tags?: readonly string[];
}

/** Declared effects by rin capability id (e.g. `harbor.load-cargo`). */
export type EffectProfile = Readonly<Record<string, readonly DeclaredEffect[]>>;

export interface PolicyVerdict {
  readonly result: PolicyResult;
  readonly matchedRuleIds: readonly string[];
  readonly reasonCode: string;
  readonly summary: string;
}

export interface PolicyQuestion {
  readonly actorId: string;
  readonly controllerId: string;
  readonly principalId: string;
  readonly effects: readonly DeclaredEffect[];
  /** The world's clock (its observations'): confirmation lifetimes are configured per clock. */
  readonly clock: ClockMode;
}

/**
 * The daemon's policy, evaluated locally (a prediction: the daemon decides again on the host's real
 * effects at submission). Kept an interface so the authority itself needs nothing but fetch; the
 * engine-backed implementation is Node-only (`./local-policy.js`).
 */
export interface RinPolicy {
  /** Names the policy in validation evidence (e.g. `harbor`). */
  readonly name: string;
  decide(question: PolicyQuestion): PolicyVerdict;
}
