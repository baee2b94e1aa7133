/**
 * The game-neutral adapter contract suite (R60). A game supplies a scenario (its adapter, one actor, how
 * to build a request, and three game events); the suite owns every binding, delivery and lifecycle
 * check, so an adapter cannot replace them with rules of its own. It returns a report or throws a
 * ConformanceError naming the step that failed; it runs the same from vitest and from a command line.
 *
 * Policy evaluation belongs to the control plane: the suite checks every bound effect against the
 * adapter's PolicyFacts and the safety kernel's forbidden kinds, then delivers with an allow decision.
 */
import type { ActionHostSnapshot, ActionRequest, BoundAction, CapabilitySnapshot, HostControlDelivery, PolicyDecision, Principal } from '../types.js';
import { validatePrincipal } from '../validate.js';
import type { AdapterTarget, HostAdapter } from './adapter.js';
import { SerialDispatcher } from './authority.js';
import { AdapterCoordinator } from './coordinator.js';
import { goJsonEncode } from '../../crypto/gojson.js';

export type RequestBuilder = (catalog: CapabilitySnapshot, snapshot: ActionHostSnapshot, requestId: string, idempotencyKey: string) => ActionRequest;

export interface ConformanceScenario {
  adapter: HostAdapter;
  target: AdapterTarget;
  /** The principal the control plane would deliver (its scopes come from trusted host state). */
  principal: Principal;
  /** An immediate action that changes game state and succeeds. */
  buildAction: RequestBuilder;
  /** A cancellable action that stays running until cancelled. */
  buildCancellable: RequestBuilder;
  /** An unrelated game event after which a prepared binding must be refused. */
  advanceObservation: () => void;
  /** Replaces the authoritative host (new host epoch). */
  restartHost: () => void;
  /** A deterministic digest of the whole game state. */
  stateDigest: () => string;
}

export interface ConformanceReport {
  capability_count: number;
  effect_count: number;
  idempotent_replay: boolean;
  reused_id_refused: boolean;
  stale_rejected: boolean;
  restart_rejected: boolean;
  cancellation_works: boolean;
  dispatched: number;
}

export class ConformanceError extends Error {
  override readonly name = 'ConformanceError';
  constructor(
    readonly step: string,
    message: string,
  ) {
    super(`${step}: ${message}`);
  }
}

const KERNEL_FORBIDDEN = new Set(['system.arbitrary-code', 'system.file-access', 'system.native-call', 'authority.forge', 'secret.exposure']);

async function step<T>(name: string, work: () => T | Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (e) {
    if (e instanceof ConformanceError) throw e;
    throw new ConformanceError(name, e instanceof Error ? e.message : String(e));
  }
}

async function refused(name: string, work: () => Promise<unknown>): Promise<void> {
  let accepted = false;
  try {
    await work();
    accepted = true;
  } catch {
    // refused, as required
  }
  if (accepted) throw new ConformanceError(name, 'the adapter accepted it');
}

export async function runHostKitConformance(scenario: ConformanceScenario): Promise<ConformanceReport> {
  await step('principal', () => validatePrincipal(scenario.principal));
  const dispatcher = new SerialDispatcher();
  const coordinator = await step('coordinator', () => AdapterCoordinator.create(scenario.adapter, dispatcher));
  const catalog = coordinator.capabilities();
  if (catalog.revision === 0 || catalog.specs.length === 0) throw new ConformanceError('catalog', 'adapter returned an empty sealed catalog');
  const target = { ...scenario.target };
  const snapshot = await step('snapshot', () => coordinator.snapshotAction(target));
  const observation = await step('observe', () =>
    coordinator.observe({
      query_id: 'query.conformance.initial',
      host_id: target.host_id,
      world_id: target.world_id,
      actor_id: target.actor_id,
      expected_epoch: snapshot.epoch,
      limit: 128,
    }),
  );
  if (observation.sequence !== snapshot.observation_sequence) throw new ConformanceError('observe', 'observation and execution snapshot sequences differ');
  const facts = await step('policy facts', () => coordinator.policyFacts(target));

  const prepare = (name: string, request: ActionRequest, operationId: string) =>
    step(name, async () => {
      const binding = await coordinator.bindRequest(target, request);
      for (const effect of binding.bound_action.effect_preview) {
        if (!facts.known_effect_kinds.includes(effect.kind) || !facts.known_scopes.includes(effect.scope)) {
          throw new ConformanceError(name, `effect ${effect.effect_id} is absent from the adapter's PolicyFacts`);
        }
        if (KERNEL_FORBIDDEN.has(effect.kind) || (effect.tags ?? []).some((t) => KERNEL_FORBIDDEN.has(t))) {
          throw new ConformanceError(name, `effect ${effect.effect_id} is forbidden by the safety kernel`);
        }
      }
      return { binding, delivery: allowedDelivery(target, scenario.principal, request, binding.bound_action, binding.snapshot, operationId) };
    });

  const report: ConformanceReport = {
    capability_count: catalog.specs.length,
    effect_count: 0,
    idempotent_replay: false,
    reused_id_refused: false,
    stale_rejected: false,
    restart_rejected: false,
    cancellation_works: false,
    dispatched: 0,
  };

  const request = await step('build action', () => scenario.buildAction(catalog, snapshot, 'request.conformance.execute', 'action.conformance.execute'));
  const { binding, delivery: first } = await prepare('bind action', request, 'operation.conformance.execute');
  report.effect_count = binding.bound_action.effect_preview.length;
  const before = scenario.stateDigest();
  const result = await step('execute', () => coordinator.executeDelivery(first));
  if (result.run.status !== 'succeeded' || !result.outcome) throw new ConformanceError('execute', `the action did not succeed (${result.run.status})`);
  const after = scenario.stateDigest();
  if (before === after) throw new ConformanceError('execute', 'the action produced no observable game change');
  const replayed = await step('replay', () => coordinator.executeDelivery(first));
  if (goJsonEncode(result) !== goJsonEncode(replayed) || scenario.stateDigest() !== after) {
    throw new ConformanceError('replay', 'replaying the delivery changed the result or the game state');
  }
  report.idempotent_replay = true;
  const reused: HostControlDelivery = {
    ...first,
    request: { ...first.request, bound_action: { ...first.request.bound_action, binding_id: `${first.request.bound_action.binding_id}.other` } },
  };
  await refused('reused operation id', () => coordinator.executeDelivery(reused));
  if (scenario.stateDigest() !== after) throw new ConformanceError('reused operation id', 'the refused delivery changed the game state');
  report.reused_id_refused = true;
  coordinator.forgetOperation(first.request.operation_id);

  let current = await step('snapshot', () => coordinator.snapshotAction(target));
  const staleRequest = await step('build action', () => scenario.buildAction(catalog, current, 'request.conformance.stale', 'action.conformance.stale'));
  const { delivery: stale } = await prepare('bind stale action', staleRequest, 'operation.conformance.stale');
  const staleState = scenario.stateDigest();
  await step('advance observation', () => dispatcher.dispatch(() => scenario.advanceObservation()));
  const advanced = scenario.stateDigest();
  if (advanced === staleState) throw new ConformanceError('advance observation', 'the event did not change the game state');
  await refused('stale binding', () => coordinator.executeDelivery(stale));
  if (scenario.stateDigest() !== advanced) throw new ConformanceError('stale binding', 'the refused delivery changed the game state');
  report.stale_rejected = true;

  current = await step('snapshot', () => coordinator.snapshotAction(target));
  const restartRequest = await step('build action', () => scenario.buildAction(catalog, current, 'request.conformance.restart', 'action.conformance.restart'));
  const { delivery: old } = await prepare('bind before restart', restartRequest, 'operation.conformance.restart');
  await step('restart host', () => dispatcher.dispatch(() => scenario.restartHost()));
  const restarted = scenario.stateDigest();
  await refused('previous host epoch', () => coordinator.executeDelivery(old));
  if (scenario.stateDigest() !== restarted) throw new ConformanceError('previous host epoch', 'the refused delivery changed the game state');
  report.restart_rejected = true;

  current = await step('snapshot', () => coordinator.snapshotAction(target));
  const cancelRequest = await step('build cancellable', () =>
    scenario.buildCancellable(catalog, current, 'request.conformance.cancel', 'action.conformance.cancel'),
  );
  const { delivery: cancellable } = await prepare('bind cancellable', cancelRequest, 'operation.conformance.cancel');
  const running = await step('execute cancellable', () => coordinator.executeDelivery(cancellable));
  if (running.run.status !== 'running' || running.outcome)
    throw new ConformanceError('execute cancellable', `the action did not remain running (${running.run.status})`);
  const verified = await step('verify', () => coordinator.verify(cancellable.request.operation_id));
  if (verified.run.status !== 'running' || verified.run.progress_seq < running.run.progress_seq) {
    throw new ConformanceError('verify', 'verification returned invalid progress');
  }
  const cancelled = await step('cancel', () => coordinator.cancel(cancellable.request.operation_id));
  if (cancelled.run.status !== 'cancelled' || !cancelled.outcome) throw new ConformanceError('cancel', 'the cancellation is not authoritative');
  report.cancellation_works = true;
  coordinator.forgetOperation(cancellable.request.operation_id);

  report.dispatched = dispatcher.dispatched;
  if (report.dispatched === 0) throw new ConformanceError('dispatcher', 'the adapter was never reached through the authority dispatcher');
  return report;
}

/**
 * A delivery as the control plane would send it after an allow decision for exactly this binding
 * (the decision itself is a fixture: policy evaluation is the control plane's job).
 */
export function allowedDelivery(
  target: AdapterTarget,
  principal: Principal,
  request: ActionRequest,
  bound: BoundAction,
  snapshot: ActionHostSnapshot,
  operationId: string,
): HostControlDelivery {
  const decision: PolicyDecision = {
    decision_id: `decision.${operationId}`,
    result: 'allow',
    controller_id: bound.controller_id,
    actor_id: bound.actor_id,
    principal_id: principal.id,
    effect_digest: bound.effect_digest,
    policy_revision: 1,
    matched_rule_ids: ['conformance.allow'],
    reason_code: 'policy.profile_allow',
    human_summary: 'The conformance suite allows the bound effects.',
    evaluated_at: snapshot.now,
  };
  return {
    delivery_attempt: 1,
    request: {
      operation_id: operationId,
      request_id: request.request_id,
      principal,
      host_id: target.host_id,
      world_id: target.world_id,
      actor_id: target.actor_id,
      kind: 'action',
      binding: {
        epoch: request.expected_epoch,
        observation_seq: request.observation_sequence,
        authority_revision: 1,
        controller_lease_id: 'lease.conformance.one',
      },
      action_request: request,
      bound_action: bound,
      policy_decision: decision,
      submitted_at_unix_millis: 1,
    },
  };
}
