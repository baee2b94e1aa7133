/**
 * The harbor as a HostKit conformance scenario: loading crates is the state-changing action, a voyage
 * the cancellable one, a squall the unrelated event that makes prepared bindings stale.
 */
import type { ConformanceScenario, RequestBuilder } from '../hostkit/conformance.js';
import type { ActionRequest, CapabilitySnapshot } from '../types.js';
import { CAPABILITY, raw } from './catalog.js';
import { HarborWorld } from './harbor.js';

export interface HarborRequestOptions {
  controllerId?: string;
  actorId?: string;
  targetRefs?: ActionRequest['target_refs'];
  taskId?: string;
}

/** A controller's request for one harbor capability, built from the published catalog and a snapshot. */
export function harborRequest(
  catalog: CapabilitySnapshot,
  capabilityId: string,
  args: Record<string, unknown>,
  at: { epoch: ActionRequest['expected_epoch']; observation_sequence: number },
  requestId: string,
  idempotencyKey: string,
  options: HarborRequestOptions = {},
): ActionRequest {
  const spec = catalog.specs.find((s) => s.capability.id === capabilityId);
  if (!spec) throw new Error(`the catalog has no ${capabilityId}`);
  return {
    request_id: requestId,
    controller_id: options.controllerId ?? 'controller.conformance',
    actor_id: options.actorId ?? 'gull',
    capability: { ...spec.capability },
    spec_digest: spec.digest,
    arguments: raw(args),
    ...(options.targetRefs && options.targetRefs.length > 0 ? { target_refs: options.targetRefs } : {}),
    expected_epoch: { ...at.epoch },
    observation_sequence: at.observation_sequence,
    ...(options.taskId ? { task_id: options.taskId } : {}),
    idempotency_key: idempotencyKey,
  };
}

export function harborConformanceScenario(world = new HarborWorld({ owner: 'player.one' })): ConformanceScenario & { world: HarborWorld } {
  const build =
    (capabilityId: string, args: Record<string, unknown>): RequestBuilder =>
    (catalog, snapshot, requestId, key) =>
      harborRequest(catalog, capabilityId, args, snapshot, requestId, key);
  return {
    world,
    adapter: world,
    target: { host_id: 'harbor.host', world_id: world.worldId, actor_id: 'gull' },
    principal: { id: 'player.one', granted_scopes: ['actor.execute'] },
    buildAction: build(CAPABILITY.load, { crates: 2 }),
    buildCancellable: build(CAPABILITY.sail, { distance: 5 }),
    advanceObservation: () => world.squall(),
    restartHost: () => world.restart(),
    stateDigest: () => world.stateDigest(),
  };
}
