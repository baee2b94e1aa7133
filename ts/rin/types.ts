/**
 * The wire types of rin.host/v2 and rin.control/v2, named as the components of the Control API's
 * OpenAPI document (../shared/reference/rin/api/control-openapi.json) with the wire's snake_case
 * members. Members are declared in the Go reference's struct order, so an object built member by
 * member in this order and written with `goJsonEncode` is byte-identical to Go's `json.Marshal`.
 *
 * Raw sub-documents (request arguments, effect attributes, schema documents, observation payloads,
 * fact values, actor state, outputs) are `RawJson`: their text is kept as sent, number lexemes and
 * all, because the digests are computed from that text.
 *
 * A decoded value is shaped like this but not yet trusted: enum members may hold any string and
 * integers may exceed 2^53−1 until the matching validator (validate.ts) has accepted it.
 */
import type { RawJson } from '../crypto/gojson.js';

export type { RawJson };

export const HOST_CONTRACT_VERSION = 'rin.host/v2';
export const CONTROL_CONTRACT_VERSION = 'rin.control/v2';
export const TASK_TIMELINE_CONTRACT_VERSION = 'rin.task-timeline/v1';
export const SCHEMA_DIALECT = 'https://json-schema.org/draft/2020-12/schema';

export type ClockMode = 'event' | 'step' | 'realtime';
export type DecisionMode = 'sequential' | 'simultaneous' | 'asynchronous';
export type AuthorityMode = 'standalone' | 'server' | 'client-advisory';
export type DeploymentMode = 'loopback-sidecar' | 'dedicated-server' | 'remote-https' | 'embedded-offline' | 'computer-control';
export type ControlMode = 'semantic' | 'accessibility' | 'computer-control';
export type DurabilityProfile = 'advisory' | 'idempotent-action' | 'transactional-action';
export type CapabilityKind = 'atomic' | 'macro';
export type ExecutionMode = 'immediate' | 'queued' | 'long-running';
export type CancellationMode = 'unsupported' | 'cooperative' | 'preemptive';
export type RiskLevel = 'low' | 'moderate' | 'high' | 'critical';
export type OwnershipClass = 'unknown' | 'system' | 'actor' | 'controller' | 'player' | 'shared' | 'unowned';
export type EffectOperation = 'read' | 'create' | 'update' | 'delete' | 'transfer' | 'consume' | 'execute' | 'communicate';
export type ActionRunStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled' | 'interrupted' | 'stale' | 'outcome-unknown';
export type OperationStatus =
  | 'queued'
  | 'awaiting-confirmation'
  | 'delivered'
  | 'accepted'
  | 'running'
  | 'succeeded'
  | 'failed'
  | 'cancelled'
  | 'interrupted'
  | 'stale'
  | 'outcome-unknown'
  | 'rejected';
export type PolicyResult = 'allow' | 'deny' | 'require_confirmation';
export type AuthoritySource = 'internal' | 'external';
export type PersonaMode = 'character-bound' | 'agent-avatar';
export type GatewayRequestKind = 'bind' | 'snapshot';
/** The union of Go's and the OpenAPI's gateway error codes (R94). */
export type GatewayErrorCode = 'invalid' | 'forbidden' | 'not_found' | 'unavailable' | 'stale' | 'conflict' | 'capacity' | 'internal';

// ---- rin.host/v2 (host package) ----

export interface Durability {
  profile: DurabilityProfile;
  stable_identity: boolean;
  durable_before_network: boolean;
  durable_outbox: boolean;
  idempotent_apply: boolean;
  atomic_apply_and_outbox: boolean;
}

export interface HostManifest {
  contract_version: string;
  adapter_id: string;
  adapter_version: string;
  engine_id: string;
  engine_version: string;
  runtime: string;
  platform: string;
  headless: boolean;
  authority: AuthorityMode;
  deployment: DeploymentMode;
  control: ControlMode;
  clock_modes: ClockMode[];
  decision_modes: DecisionMode[];
  max_concurrent_actors: number;
  durability: Durability;
}

/** Scopes come from trusted host state, never from a request body or model output (R47). */
export interface Principal {
  id: string;
  granted_scopes?: string[];
}

export interface Epoch {
  session_id: string;
  world_id: string;
  host: number;
  world: number;
  timeline: number;
}

export interface Timepoint {
  clock: ClockMode;
  value: number;
}

export interface Duration {
  clock: ClockMode;
  value: number;
}

/** Opaque: controllers copy it from observations; only the owning adapter resolves `key` (R27). */
export interface HostRef {
  namespace: string;
  type: string;
  key: string;
  ephemeral: boolean;
  epoch: Epoch;
}

export interface CapabilityRef {
  id: string;
  version: string;
}

/** A closed JSON Schema 2020-12 document stored canonically; build it with `newSchema` (schema.ts). */
export interface Schema {
  dialect: string;
  document: RawJson;
  sha256: string;
}

export interface SchemaRef {
  id: string;
  version: string;
  sha256: string;
}

export interface ObservationFact {
  fact_id: string;
  kind: string;
  subject?: HostRef;
  tags?: string[];
  value: RawJson;
}

export interface ObservationResource {
  ref: HostRef;
  kind: string;
  tags?: string[];
  ownership: OwnershipClass;
  scope: string;
  quantity?: number;
  unit?: string;
  attributes: RawJson;
}

export interface ObservationArtifact {
  artifact_id: string;
  kind: string;
  media_type: string;
  size_bytes: number;
  sha256: string;
}

export interface ObservationEnvelope {
  observation_id: string;
  host_id: string;
  world_id: string;
  actor_id: string;
  epoch: Epoch;
  sequence: number;
  observed_at: Timepoint;
  schema_ref: SchemaRef;
  payload: RawJson;
  facts?: ObservationFact[];
  resources?: ObservationResource[];
  artifacts?: ObservationArtifact[];
  continuation_token?: string;
}

export interface ObservationQuery {
  query_id: string;
  host_id: string;
  world_id: string;
  actor_id: string;
  expected_epoch: Epoch;
  after_sequence?: number;
  kinds?: string[];
  limit: number;
  continuation_token?: string;
}

export interface CapabilitySpec {
  capability: CapabilityRef;
  description: string;
  input: Schema;
  output: Schema;
  /** Validates each Effect's `attributes`; core effect fields are validated by the contract itself. */
  effect_schema: Schema;
  kind: CapabilityKind;
  execution: ExecutionMode;
  cancellation: CancellationMode;
  risk_floor: RiskLevel;
  required_durability: DurabilityProfile;
  required_scopes?: string[];
  execution_budget: Duration;
  max_input_bytes: number;
  max_output_bytes: number;
  max_effects: number;
  produces_child_operations: boolean;
  /** "" until sealed. */
  digest: string;
}

/** `specs` sorted by (id, version) in byte order; `revision` bumps on each change (R97). */
export interface CapabilitySnapshot {
  revision: number;
  specs: CapabilitySpec[];
}

/** Host-authored: controllers cannot declare ownership, reversibility or risk. */
export interface Effect {
  effect_id: string;
  kind: string;
  operation: EffectOperation;
  subject_ref?: HostRef;
  target_ref?: HostRef;
  tags?: string[];
  ownership: OwnershipClass;
  scope: string;
  quantity?: number;
  unit?: string;
  reversible: boolean;
  risk: RiskLevel;
  attributes: RawJson;
}

export interface PlanStepRef {
  plan_id: string;
  plan_revision: number;
  step_id: string;
}

/** The only action intent a controller may author: it never carries effects, risk or ownership. */
export interface ActionRequest {
  request_id: string;
  controller_id: string;
  actor_id: string;
  capability: CapabilityRef;
  spec_digest: string;
  arguments: RawJson;
  target_refs?: HostRef[];
  expected_epoch: Epoch;
  observation_sequence: number;
  task_id?: string;
  plan_step_ref?: PlanStepRef;
  idempotency_key: string;
}

/** An authoritative adapter's resolution and effect preview, sealed by the registry into a BoundAction. */
export interface BindingDraft {
  binding_id: string;
  resolved_targets?: HostRef[];
  effect_preview: Effect[];
  valid_until: Timepoint;
}

export interface BoundAction {
  binding_id: string;
  request_id: string;
  request_digest: string;
  controller_id: string;
  actor_id: string;
  capability: CapabilityRef;
  spec_digest: string;
  normalized_arguments: RawJson;
  requested_targets?: HostRef[];
  resolved_targets?: HostRef[];
  expected_epoch: Epoch;
  observation_sequence: number;
  task_id?: string;
  plan_step_ref?: PlanStepRef;
  idempotency_key: string;
  effect_preview: Effect[];
  effect_digest: string;
  bound_at: Timepoint;
  valid_until: Timepoint;
}

export interface ActionRun {
  operation_id: string;
  status: ActionRunStatus;
  progress_seq: number;
  progress: number;
  updated_at: Timepoint;
  message?: string;
}

/** The sole terminal fact of an operation (R50). */
export interface ActionOutcome {
  operation_id: string;
  status: ActionRunStatus;
  code?: string;
  summary: string;
  evidence?: HostRef[];
  epoch: Epoch;
  world_seq: number;
  occurred_at: Timepoint;
}

// ---- rin.control/v2 (control plane) ----

export interface StatusResponse {
  status: string;
}

export interface ErrorResponse {
  error: string;
  code?: string;
}

/** `POST worlds` takes exactly `{}`. */
export type EmptyRequest = Record<string, never>;

export interface HostRegistration {
  contract_version: string;
  host_id: string;
  instance_id: string;
  manifest: HostManifest;
  lease_ttl_millis: number;
}

export interface HostLease {
  host_id: string;
  instance_id: string;
  lease_id: string;
  expires_at_unix_millis: number;
}

export interface LeaseRequest {
  host_id: string;
  lease_id: string;
}

export interface ActionPlanMetadata {
  intent: string;
  plan_id: string;
  step_index: number;
  plan_revision: number;
  preconditions?: string[];
  postconditions?: string[];
  blocked_reason?: string;
  risk: RiskLevel;
}

export interface DecisionAuthority {
  source: AuthoritySource;
  controller_principal_id?: string;
  revision: number;
  persona_mode: PersonaMode;
}

export interface ActorPublication {
  actor_id: string;
  owner_principal_id: string;
  display_name: string;
  observation_seq: number;
  epoch: Epoch;
  decision_authority: DecisionAuthority;
  state: RawJson;
  observation?: ObservationEnvelope;
  capabilities?: CapabilitySnapshot;
}

export interface WorldPublication {
  world_id: string;
  display_name: string;
  sequence: number;
  visible_principal_ids?: string[];
  actors: ActorPublication[];
}

export interface PublishRequest {
  host_id: string;
  lease_id: string;
  publication: WorldPublication;
}

export interface PollRequest {
  host_id: string;
  lease_id: string;
  limit: number;
  wait_millis: number;
}

export interface ActorTarget {
  host_id: string;
  world_id: string;
  actor_id: string;
}

export interface WorldTarget {
  host_id: string;
  world_id: string;
}

export interface ActionHostSnapshot {
  now: Timepoint;
  epoch: Epoch;
  observation_sequence: number;
}

export interface ActionBindingResult {
  bound_action: BoundAction;
  snapshot: ActionHostSnapshot;
}

export interface ControlBinding {
  epoch: Epoch;
  observation_seq: number;
  authority_revision: number;
  controller_lease_id?: string;
}

export interface ConfirmationChallenge {
  challenge_id: string;
  controller_id: string;
  actor_id: string;
  principal_id: string;
  effect_digest: string;
  epoch: Epoch;
  expires_at: Timepoint;
  policy_revision: number;
  single_use: boolean;
}

export interface EffectiveLimit {
  budget_id: string;
  usage_key: string;
  max_actions: number;
  actions_used: number;
  actions_remaining: number;
  max_quantity: number;
  quantity_used: number;
  quantity_remaining: number;
}

export interface PolicyDecision {
  decision_id: string;
  result: PolicyResult;
  controller_id: string;
  actor_id: string;
  principal_id: string;
  effect_digest: string;
  policy_revision: number;
  matched_rule_ids: string[];
  reason_code: string;
  human_summary: string;
  effective_limits?: EffectiveLimit[];
  confirmation_challenge?: ConfirmationChallenge;
  evaluated_at: Timepoint;
}

export interface HostControlRequest {
  operation_id: string;
  request_id: string;
  principal: Principal;
  host_id: string;
  world_id: string;
  actor_id: string;
  kind: 'action';
  binding: ControlBinding;
  action_request: ActionRequest;
  bound_action: BoundAction;
  policy_decision: PolicyDecision;
  parent_operation_id?: string;
  submitted_at_unix_millis: number;
}

export interface HostControlDelivery {
  request: HostControlRequest;
  delivery_attempt: number;
}

export interface HostGatewayRequest {
  gateway_request_id: string;
  kind: GatewayRequestKind;
  target: ActorTarget;
  action_request?: ActionRequest;
  submitted_at_unix_millis: number;
}

export interface HostGatewayDelivery {
  request: HostGatewayRequest;
  delivery_attempt: number;
}

/** Arrays are never null on the wire (R87). */
export interface HostControlBatch {
  gateway_requests: HostGatewayDelivery[];
  requests: HostControlDelivery[];
  cancellations: string[];
}

/** Exactly one of binding, snapshot, or error_code (+ error_message). */
export interface HostGatewayResult {
  gateway_request_id: string;
  binding?: ActionBindingResult;
  snapshot?: ActionHostSnapshot;
  error_code?: GatewayErrorCode;
  error_message?: string;
}

export interface GatewayResultRequest {
  host_id: string;
  lease_id: string;
  result: HostGatewayResult;
}

export interface HostAcknowledgement {
  operation_id: string;
  accepted: boolean;
  code?: string;
  message?: string;
}

export interface AcknowledgementRequest {
  host_id: string;
  lease_id: string;
  acknowledgement: HostAcknowledgement;
}

export interface RunRequest {
  host_id: string;
  lease_id: string;
  run: ActionRun;
}

export interface OutcomeRequest {
  host_id: string;
  lease_id: string;
  outcome: ActionOutcome;
  output?: RawJson;
}

export interface ClientInfo {
  contract_version: string;
  principal: Principal;
}

export interface WorldView {
  host_id: string;
  world_id: string;
  display_name: string;
  sequence: number;
  online: boolean;
  lease_expires_at_unix_millis: number;
}

export interface ControllerLease {
  lease_id: string;
  controller_id: string;
  principal_id: string;
  host_id: string;
  world_id: string;
  actor_id: string;
  source: AuthoritySource;
  persona_mode: PersonaMode;
  authority_revision: number;
  epoch: Epoch;
  acquired_at_unix_millis: number;
  expires_at_unix_millis: number;
}

export interface ActorView {
  host_id: string;
  adapter_id: string;
  world_id: string;
  actor_id: string;
  owner_principal_id: string;
  display_name: string;
  observation_seq: number;
  epoch: Epoch;
  decision_authority: DecisionAuthority;
  controller_lease?: ControllerLease;
  emergency_stopped: boolean;
  emergency_stop_revision?: number;
  state: RawJson;
  online: boolean;
  lease_expires_at_unix_millis: number;
}

export interface WaitActorInput {
  host_id: string;
  world_id: string;
  actor_id: string;
  after_observation_seq: number;
  after_authority_revision: number;
  after_controller_lease_id?: string;
  after_emergency_stop_revision?: number;
  wait_millis: number;
}

export interface ActorUpdate {
  actor: ActorView;
  changed: boolean;
}

export interface DescribeCapabilityInput {
  host_id: string;
  world_id: string;
  actor_id: string;
  capability: CapabilityRef;
}

export interface AcquireControllerInput {
  host_id: string;
  world_id: string;
  actor_id: string;
  controller_id: string;
  lease_ttl_millis: number;
}

export interface RenewControllerInput {
  host_id: string;
  world_id: string;
  actor_id: string;
  lease_id: string;
  lease_ttl_millis: number;
}

export interface ReleaseControllerInput {
  host_id: string;
  world_id: string;
  actor_id: string;
  lease_id: string;
}

export interface SubmitActionInput {
  host_id: string;
  world_id: string;
  action_request: ActionRequest;
  parent_operation_id?: string;
}

export interface OperationTarget {
  operation_id: string;
}

export interface WaitOperationInput {
  operation_id: string;
  after_cursor?: string;
  wait_millis: number;
}

export interface SetEmergencyStopInput {
  host_id: string;
  world_id: string;
  actor_id: string;
  active: boolean;
}

export interface ActorEmergencyStop {
  host_id: string;
  world_id: string;
  actor_id: string;
  active: boolean;
  revision: number;
  updated_by_principal_id: string;
  updated_at_unix_millis: number;
}

export interface OperationView {
  operation_id: string;
  request_id: string;
  host_id: string;
  world_id: string;
  actor_id: string;
  kind: 'action';
  controller_lease_id?: string;
  parent_operation_id?: string;
  child_operation_ids?: string[];
  action_request?: ActionRequest;
  bound_action?: BoundAction;
  policy_decision?: PolicyDecision;
  status: OperationStatus;
  cursor: string;
  terminal: boolean;
  reconciliation_pending: boolean;
  execution_confirmed: boolean;
  cancel_requested: boolean;
  delivery_attempts: number;
  run?: ActionRun;
  outcome?: ActionOutcome;
  output?: RawJson;
  rejection_code?: string;
  rejection_message?: string;
  created_at_unix_millis: number;
  updated_at_unix_millis: number;
}

export interface OperationUpdate {
  operation: OperationView;
  changed: boolean;
}

export interface TaskTimelineQuery {
  task_id: string;
  after_cursor?: string;
  limit?: number;
}

export interface WaitTaskTimelineInput {
  task_id: string;
  after_cursor?: string;
  limit?: number;
  wait_millis: number;
}

export interface MemoryContextRef {
  memory_id: string;
  domain: string;
  source: string;
  rank: number;
  digest: string;
}

export interface SkillContextRef {
  skill_id: string;
  version: string;
  digest: string;
}

export interface SignalContextRef {
  signal_id: string;
  kind: string;
  cursor: number;
}

export interface ModelUsage {
  model?: string;
  latency_ms?: number;
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
  cache_hit_tokens?: number;
  cache_miss_tokens?: number;
  cache_write_tokens?: number;
}

export interface PolicySummary {
  disposition: PolicyResult;
  reason_code: string;
  human_summary: string;
  matched_rule_ids?: string[];
  confirmation_pending: boolean;
  effect_count: number;
}

export interface OperationSummary {
  operation_id: string;
  status: OperationStatus;
  terminal: boolean;
  execution_confirmed: boolean;
  reconciliation_pending: boolean;
  outcome_code?: string;
  delivery_attempts?: number;
  progress_sequence?: number;
  progress?: number;
  cancel_requested?: boolean;
}

export interface TaskTimelineEvent {
  event_id: string;
  cursor: string;
  occurred_at_unix_millis: number;
  task_id: string;
  session_id?: string;
  host_id?: string;
  world_id?: string;
  actor_id?: string;
  controller_id?: string;
  step?: number;
  plan_id?: string;
  plan_revision?: number;
  plan_step_id?: string;
  signal?: SignalContextRef;
  event_kind: string;
  public_summary?: string;
  reason_code?: string;
  goal_digest?: string;
  observation_id?: string;
  observation_sequence?: number;
  epoch?: Epoch;
  capability?: CapabilityRef;
  skill_refs?: SkillContextRef[];
  memory_context_refs?: MemoryContextRef[];
  model_usage?: ModelUsage;
  policy?: PolicySummary;
  operation?: OperationSummary;
}

export interface TaskTimelinePage {
  contract_version: string;
  task_id: string;
  goal?: string;
  goal_digest?: string;
  status?: string;
  events: TaskTimelineEvent[];
  next_cursor: string;
  more: boolean;
  truncated: boolean;
}

export interface TaskTimelineUpdate {
  timeline: TaskTimelinePage;
  changed: boolean;
}
