/**
 * The engine-neutral rin.host/v2 boundary a game integration implements (R52). HostKit never calls these
 * methods directly: the coordinator calls every one of them inside `AuthorityDispatcher.dispatch` (R53),
 * and checks what they return before anything leaves the host.
 */
import type { RawJson } from '../../crypto/gojson.js';
import type {
  ActionOutcome,
  ActionRequest,
  ActionRun,
  BoundAction,
  CapabilitySpec,
  DecisionAuthority,
  Effect,
  Epoch,
  HostManifest,
  HostRef,
  ObservationEnvelope,
  ObservationQuery,
  Principal,
  Timepoint,
} from '../types.js';

/** One game-owned Actor, named without exposing an engine object. */
export interface AdapterTarget {
  host_id: string;
  world_id: string;
  actor_id: string;
}

/** The authoritative clock and timeline state used for binding and the final execution gate. */
export interface AdapterSnapshot {
  now: Timepoint;
  epoch: Epoch;
  observation_seq: number;
}

/**
 * Only the references the game resolved. Effects come separately from `preview`, so an adapter cannot
 * mistake a controller-authored field for an authorization decision.
 */
export interface AdapterBinding {
  binding_id: string;
  resolved_targets?: HostRef[];
  valid_until: Timepoint;
}

/** The exact policy-approved operation; the principal's scopes come from the delivery, never a model. */
export interface AdapterOperation {
  operation_id: string;
  target: AdapterTarget;
  principal: Principal;
  action: BoundAction;
}

/** One authoritative execution, cancellation or verification: terminal runs carry an outcome, successes an output. */
export interface AdapterResult {
  run: ActionRun;
  outcome?: ActionOutcome;
  /** A JSON object valid against the capability's output schema. */
  output?: RawJson;
}

/** The effect kinds and scopes the adapter can author: policy vocabulary, not an authorization. */
export interface AdapterPolicyFacts {
  known_effect_kinds: string[];
  known_scopes: string[];
}

export interface HostAdapter {
  manifest(): HostManifest;
  snapshot(target: AdapterTarget): AdapterSnapshot | Promise<AdapterSnapshot>;
  observe(query: ObservationQuery): ObservationEnvelope | Promise<ObservationEnvelope>;
  listCapabilities(): CapabilitySpec[] | Promise<CapabilitySpec[]>;
  bind(target: AdapterTarget, request: ActionRequest): AdapterBinding | Promise<AdapterBinding>;
  preview(target: AdapterTarget, request: ActionRequest, binding: AdapterBinding): Effect[] | Promise<Effect[]>;
  execute(operation: AdapterOperation): AdapterResult | Promise<AdapterResult>;
  cancel(operation: AdapterOperation): AdapterResult | Promise<AdapterResult>;
  verify(operation: AdapterOperation): AdapterResult | Promise<AdapterResult>;
  policyFacts(target: AdapterTarget): AdapterPolicyFacts | Promise<AdapterPolicyFacts>;
}

/** One actor as the game describes it for publication. */
export interface HostActorDescription {
  actor_id: string;
  owner_principal_id: string;
  display_name: string;
  decision_authority: DecisionAuthority;
}

export interface HostWorldDescription {
  world_id: string;
  display_name: string;
  /** Principals that may discover the world while no actor is present; never a grant of authority. */
  visible_principal_ids?: string[];
  actors: HostActorDescription[];
}

/** What a host publishes about its worlds, read on the authority thread. */
export interface HostWorldSource {
  describe(): HostWorldDescription[];
  /** The actor's public state, a JSON object. */
  actorState(actorId: string): Record<string, unknown>;
  /**
   * Optional change signal: a text that moves whenever `describe`, `actorState`, or the adapter's
   * `observe` or `snapshot` would answer differently. The host agent rebuilds its publications only
   * when it moved; without it they are rebuilt and compared after every poll.
   */
  publicationVersion?(): string;
}
