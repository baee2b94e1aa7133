/**
 * Discovery (R77): the latest observation and capability catalog a live host published for an
 * actor. Reading them neither acquires control nor authorizes an action.
 */
import { RinError, invalid } from '../errors.js';
import type { ActorPublication, ActorTarget, CapabilitySnapshot, CapabilitySpec, DescribeCapabilityInput, ObservationEnvelope, Principal } from '../types.js';
import { validateCapabilityRef } from '../validate.js';
import { SCOPE_ACTOR_READ } from './contracts.js';
import { validateActorTarget } from './controllers.js';
import type { ControlCore } from './service.js';

/** The actor of a live host readable by `principal`; an offline host is unavailable (410). */
function readableActor(core: ControlCore, principal: Principal, target: ActorTarget): ActorPublication {
  validateActorTarget(target);
  const { entry, world } = core.hosts.findWorld(target.host_id, target.world_id);
  if (!core.hosts.live(entry)) throw new RinError('unavailable', '');
  const actor = world.actors.find((a) => a.actor_id === target.actor_id);
  if (actor === undefined) throw new RinError('not_found', '');
  if (!core.canAccessActor(principal, actor, SCOPE_ACTOR_READ)) throw new RinError('forbidden', '');
  return actor;
}

export function getObservation(core: ControlCore, principal: Principal, target: ActorTarget): ObservationEnvelope {
  const actor = readableActor(core, principal, target);
  if (actor.observation === undefined) throw new RinError('unavailable', 'Host has not published a V2 observation');
  return actor.observation;
}

export function listCapabilities(core: ControlCore, principal: Principal, target: ActorTarget): CapabilitySnapshot {
  const actor = readableActor(core, principal, target);
  if (actor.capabilities === undefined) throw new RinError('unavailable', 'Host has not published a V2 capability catalog');
  return { revision: actor.capabilities.revision, specs: [...actor.capabilities.specs] };
}

/** The exact (id, version) from the actor's current catalog, or 404. */
export function describeCapability(core: ControlCore, principal: Principal, input: DescribeCapabilityInput): CapabilitySpec {
  try {
    validateCapabilityRef(input.capability, 'capability');
  } catch (e) {
    if (e instanceof RinError && e.code === 'invalid') throw invalid('capability', e.message);
    throw e;
  }
  const snapshot = listCapabilities(core, principal, input);
  const spec = snapshot.specs.find((s) => s.capability.id === input.capability.id && s.capability.version === input.capability.version);
  if (spec === undefined) throw new RinError('not_found', '');
  return spec;
}
