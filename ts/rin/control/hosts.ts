/**
 * Host leases and world read models (R71–R76, R78): registration, renewal, unregistration,
 * publication, and the principal-filtered views built from them. Leases expire by the clock and
 * are noticed when touched; nothing here is stored, hosts register and publish again after a
 * restart (R96).
 */
import { RawJson, goJsonEncode } from '../../crypto/gojson.js';
import { goCompact } from '../canon.js';
import { RinError, invalid } from '../errors.js';
import { CONTROL_CONTRACT_VERSION } from '../types.js';
import type {
  ActorPublication,
  ActorUpdate,
  ActorView,
  DecisionAuthority,
  HostLease,
  HostRegistration,
  Principal,
  WaitActorInput,
  WorldPublication,
  WorldView,
} from '../types.js';
import { epochEquals, validateCapabilitySpec, validateEpoch, validateHostManifest, validateIdentifier, validateObservationEnvelope } from '../validate.js';
import { canAccessActor, publicationVisible } from './auth.js';
import { MAX_WAIT_MILLIS, SCOPE_ACTOR_READ } from './contracts.js';
import type { ControlCore } from './service.js';

const MIN_LEASE_TTL = 5_000;
const MAX_LEASE_TTL = 300_000;
const MAX_WORLDS_PER_HOST = 64;
const MAX_ACTORS_PER_WORLD = 4_096;
const MAX_VISIBLE_PRINCIPALS = 4_096;
const MAX_CAPABILITY_SPECS = 512;
const MAX_ACTOR_STATE_BYTES = 64 << 10;
const MAX_PUBLICATION_BYTES = 8 << 20;
const MAX_SAFE = Number.MAX_SAFE_INTEGER;

export interface HostEntry {
  registration: HostRegistration;
  lease: HostLease;
  worlds: Map<string, WorldPublication>;
}

const utf8 = new TextEncoder();
const byteLength = (s: string): number => utf8.encode(s).length;

/** Go's strings.TrimSpace set (unicode.IsSpace): JavaScript's \s adds U+FEFF and lacks U+0085. */
const GO_SPACE = /^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*$/;

/** Control-plane text is counted in bytes (R7 ⚠). */
export function validateControlText(field: string, value: string, maximum: number, required: boolean): void {
  if (byteLength(value) > maximum || (required && GO_SPACE.test(value))) {
    throw invalid(field, `must be valid UTF-8 text of at most ${maximum} bytes`);
  }
}

function positiveSafe(value: number): boolean {
  return Number.isSafeInteger(value) && value >= 1 && value <= MAX_SAFE;
}

/** A raw document that must be a JSON object of bounded size; it was strictly parsed with its body. */
function validateJsonObject(field: string, raw: { text: string } | undefined, maximum: number): void {
  if (raw === undefined || raw.text.length === 0 || byteLength(raw.text) > maximum) throw invalid(field, 'must be a bounded JSON object');
  if (!raw.text.trimStart().startsWith('{')) throw invalid(field, 'must be a JSON object');
}

function rethrowInvalid(field: string, fn: () => void): void {
  try {
    fn();
  } catch (e) {
    if (e instanceof RinError && e.code === 'invalid') throw invalid(field, e.message);
    throw e;
  }
}

export function validateRegistration(value: HostRegistration): void {
  if (value.contract_version !== CONTROL_CONTRACT_VERSION) throw invalid('contract_version', `must equal ${CONTROL_CONTRACT_VERSION}`);
  validateIdentifier('host_id', value.host_id);
  validateIdentifier('instance_id', value.instance_id);
  rethrowInvalid('manifest', () => validateHostManifest(value.manifest));
  if (!(value.lease_ttl_millis >= MIN_LEASE_TTL && value.lease_ttl_millis <= MAX_LEASE_TTL)) {
    throw invalid('lease_ttl_millis', 'must be between 5000 and 300000');
  }
}

function validateDecisionAuthority(field: string, value: DecisionAuthority): void {
  if (!positiveSafe(value.revision)) throw invalid(`${field}.revision`, 'must be a positive JSON-safe integer');
  if (value.source === 'internal') {
    if ((value.controller_principal_id ?? '') !== '') throw invalid(`${field}.controller_principal_id`, 'must be empty for internal authority');
    if (value.persona_mode !== 'character-bound') throw invalid(`${field}.persona_mode`, 'must be character-bound for internal authority');
  } else if (value.source === 'external') {
    validateIdentifier(`${field}.controller_principal_id`, value.controller_principal_id ?? '');
    if (value.persona_mode !== 'character-bound' && value.persona_mode !== 'agent-avatar') {
      throw invalid(`${field}.persona_mode`, 'must be character-bound or agent-avatar');
    }
  } else throw invalid(`${field}.source`, 'must be internal or external');
}

function validateActor(value: ActorPublication, hostId: string, worldId: string, index: number): void {
  const prefix = `actors[${index}]`;
  validateIdentifier(`${prefix}.actor_id`, value.actor_id);
  validateIdentifier(`${prefix}.owner_principal_id`, value.owner_principal_id);
  validateControlText(`${prefix}.display_name`, value.display_name, 128, true);
  if (!positiveSafe(value.observation_seq)) throw invalid(`${prefix}.observation_seq`, 'must be a positive JSON-safe integer');
  rethrowInvalid(`${prefix}.epoch`, () => validateEpoch(value.epoch, `${prefix}.epoch`));
  if (value.epoch.world_id !== worldId) throw invalid(`${prefix}.epoch.world_id`, 'must equal publication world_id');
  if ((value.decision_authority as DecisionAuthority | undefined | null) == null) throw invalid(`${prefix}.decision_authority`, 'is required');
  validateDecisionAuthority(`${prefix}.decision_authority`, value.decision_authority);
  validateJsonObject(`${prefix}.state`, value.state, MAX_ACTOR_STATE_BYTES);
  const observation = value.observation;
  if (observation !== undefined) {
    rethrowInvalid(`${prefix}.observation`, () => validateObservationEnvelope(observation));
    if (
      observation.host_id !== hostId ||
      observation.world_id !== worldId ||
      observation.actor_id !== value.actor_id ||
      !epochEquals(observation.epoch, value.epoch) ||
      observation.sequence !== value.observation_seq
    ) {
      throw invalid(`${prefix}.observation`, 'must match the enclosing Host, world, Actor, Epoch, and sequence');
    }
  }
  const capabilities = value.capabilities;
  if (capabilities !== undefined) {
    if (!(Number.isSafeInteger(capabilities.revision) && capabilities.revision >= 0)) {
      throw invalid(`${prefix}.capabilities.revision`, 'must be a JSON-safe integer');
    }
    if (capabilities.specs.length > MAX_CAPABILITY_SPECS) throw invalid(`${prefix}.capabilities.specs`, 'must contain at most 512 values');
    capabilities.specs.forEach((spec, k) => {
      rethrowInvalid(`${prefix}.capabilities.specs[${k}]`, () => validateCapabilitySpec(spec));
      const previous = capabilities.specs[k - 1];
      if (previous !== undefined) {
        const a = previous.capability;
        const b = spec.capability;
        if (!(a.id < b.id || (a.id === b.id && a.version < b.version))) {
          throw invalid(`${prefix}.capabilities.specs`, 'must be sorted by capability ID and version without duplicates');
        }
      }
    });
  }
}

/** R73/R74 (validatePublication). */
export function validatePublication(value: WorldPublication, maxConcurrentActors: number, hostId: string): void {
  validateIdentifier('world_id', value.world_id);
  validateControlText('display_name', value.display_name, 128, true);
  if (!positiveSafe(value.sequence)) throw invalid('sequence', 'must be a positive JSON-safe integer');
  const visible = value.visible_principal_ids ?? [];
  if (visible.length > MAX_VISIBLE_PRINCIPALS) throw invalid('visible_principal_ids', 'must contain at most 4096 values');
  const seenPrincipals = new Set<string>();
  visible.forEach((id, k) => {
    validateIdentifier(`visible_principal_ids[${k}]`, id);
    if (seenPrincipals.has(id)) throw invalid('visible_principal_ids', 'must not contain duplicate values');
    seenPrincipals.add(id);
  });
  const maximumActors = Math.min(MAX_ACTORS_PER_WORLD, maxConcurrentActors);
  if (value.actors.length > maximumActors) throw invalid('actors', `must contain at most ${maximumActors} values`);
  const seenActors = new Set<string>();
  value.actors.forEach((actor, k) => {
    if (seenActors.has(actor.actor_id)) throw invalid('actors', 'must not contain duplicate actor_id values');
    seenActors.add(actor.actor_id);
    validateActor(actor, hostId, value.world_id, k);
  });
  if (byteLength(goJsonEncode(value)) > MAX_PUBLICATION_BYTES) throw invalid('publication', 'must contain at most 8388608 bytes');
}

const compact = (raw: RawJson): RawJson => (raw.text === '' ? raw : new RawJson(goCompact(raw.text)));

/**
 * The raw documents of a validated publication as Go's json.Marshal writes them (no whitespace, HTML
 * characters escaped), so every view built from it is compact JSON (R66).
 */
function compactPublication(p: WorldPublication): WorldPublication {
  return {
    ...p,
    actors: p.actors.map((a) => ({
      ...a,
      state: compact(a.state),
      observation:
        a.observation === undefined
          ? undefined
          : {
              ...a.observation,
              payload: compact(a.observation.payload),
              facts: a.observation.facts?.map((f) => ({ ...f, value: compact(f.value) })),
              resources: a.observation.resources?.map((r) => ({ ...r, attributes: compact(r.attributes) })),
            },
    })),
  };
}

/** Host leases and the published read models. Every method runs inside `core.mutate` or reads only. */
export class Hosts {
  readonly entries = new Map<string, HostEntry>();

  constructor(private readonly core: ControlCore) {}

  private now(): number {
    return this.core.clock.now();
  }

  live(entry: HostEntry): boolean {
    return entry.lease.expires_at_unix_millis > this.now();
  }

  requireLease(hostId: string, leaseId: string): HostEntry {
    const entry = this.entries.get(hostId);
    if (entry === undefined || entry.lease.lease_id !== leaseId || !this.live(entry)) throw new RinError('lease_expired', '');
    return entry;
  }

  /** R71. */
  register(request: HostRegistration): HostLease {
    validateRegistration(request);
    const now = this.now();
    const current = this.entries.get(request.host_id);
    if (current !== undefined) {
      const live = current.lease.expires_at_unix_millis > now;
      if (live && current.registration.instance_id !== request.instance_id) {
        throw new RinError('lease_conflict', `host ${request.host_id} is already live`);
      }
      if (live) {
        if (goJsonEncode(current.registration.manifest) !== goJsonEncode(request.manifest)) {
          throw new RinError('lease_conflict', 'live host manifest changed');
        }
        current.registration.lease_ttl_millis = request.lease_ttl_millis;
        current.lease.expires_at_unix_millis = now + request.lease_ttl_millis;
        return { ...current.lease };
      }
      // An expired registration is replaced: its operations settle and its gateway requests fail.
      this.core.ops.onHostUnregistered(request.host_id, now);
    }
    const lease: HostLease = {
      host_id: request.host_id,
      instance_id: request.instance_id,
      lease_id: this.core.newId('lease'),
      expires_at_unix_millis: now + request.lease_ttl_millis,
    };
    // A decoded body belongs to this call alone and stored values are never mutated, so no copy is needed.
    this.entries.set(request.host_id, { registration: { ...request }, lease, worlds: new Map() });
    return { ...lease };
  }

  /** R72: extends by the registered TTL. */
  renew(hostId: string, leaseId: string): HostLease {
    const entry = this.requireLease(hostId, leaseId);
    entry.lease.expires_at_unix_millis = this.now() + entry.registration.lease_ttl_millis;
    return { ...entry.lease };
  }

  /** R72: the lease ends now; the read model stays, offline. */
  unregister(hostId: string, leaseId: string): void {
    const entry = this.requireLease(hostId, leaseId);
    const now = this.now();
    entry.lease.expires_at_unix_millis = now;
    this.core.ops.onHostUnregistered(hostId, now);
    this.core.notify();
  }

  /** R73: atomically replaces one world's read model. */
  publish(hostId: string, leaseId: string, published: WorldPublication): void {
    const entry = this.requireLease(hostId, leaseId);
    validatePublication(published, entry.registration.manifest.max_concurrent_actors, hostId);
    const publication = compactPublication(published);
    const existing = entry.worlds.get(publication.world_id);
    if (existing !== undefined) {
      if (publication.sequence < existing.sequence) throw new RinError('stale', 'publication sequence moved backwards');
      if (publication.sequence === existing.sequence) {
        if (goJsonEncode(existing) === goJsonEncode(publication)) return;
        throw new RinError('stale', 'publication changed without a new sequence');
      }
    } else if (entry.worlds.size >= MAX_WORLDS_PER_HOST) {
      throw invalid('world_id', 'host already contains 64 worlds');
    }
    const now = this.now();
    this.core.ops.onWorldPublished(hostId, publication, now);
    this.core.controllers.reconcile(hostId, publication, now);
    entry.worlds.set(publication.world_id, publication);
    this.core.notify();
  }

  findWorld(hostId: string, worldId: string): { entry: HostEntry; world: WorldPublication } {
    const entry = this.entries.get(hostId);
    const world = entry?.worlds.get(worldId);
    if (entry === undefined || world === undefined) throw new RinError('not_found', '');
    return { entry, world };
  }

  /** Sorted by (host_id, world_id); offline worlds are kept and shown offline. */
  listWorlds(principal: Principal): WorldView[] {
    const views: WorldView[] = [];
    for (const [hostId, entry] of this.entries) {
      const online = this.live(entry);
      for (const world of entry.worlds.values()) {
        if (!publicationVisible(principal, world)) continue;
        views.push({
          host_id: hostId,
          world_id: world.world_id,
          display_name: world.display_name,
          sequence: world.sequence,
          online,
          lease_expires_at_unix_millis: entry.lease.expires_at_unix_millis,
        });
      }
    }
    return views.sort((a, b) => cmp(a.host_id, b.host_id) || cmp(a.world_id, b.world_id));
  }

  listActors(principal: Principal, hostId: string, worldId: string): ActorView[] {
    const { entry, world } = this.findWorld(hostId, worldId);
    return world.actors
      .filter((a) => canAccessActor(principal, a, SCOPE_ACTOR_READ))
      .map((a) => this.actorView(entry, worldId, a))
      .sort((a, b) => cmp(a.actor_id, b.actor_id));
  }

  /** A forbidden actor is 403, not 404: its existence is not hidden from a caller who named it. */
  getActor(principal: Principal, hostId: string, worldId: string, actorId: string): ActorView {
    const { entry, world } = this.findWorld(hostId, worldId);
    const actor = world.actors.find((a) => a.actor_id === actorId);
    if (actor === undefined) throw new RinError('not_found', '');
    if (!canAccessActor(principal, actor, SCOPE_ACTOR_READ)) throw new RinError('forbidden', '');
    return this.actorView(entry, worldId, actor);
  }

  actorView(entry: HostEntry, worldId: string, actor: ActorPublication): ActorView {
    const hostId = entry.lease.host_id;
    const controller = this.core.controllers.peek(hostId, worldId, actor.actor_id);
    const stop = this.core.stops.get(hostId, worldId, actor.actor_id);
    const view: ActorView = {
      host_id: hostId,
      adapter_id: entry.registration.manifest.adapter_id,
      world_id: worldId,
      actor_id: actor.actor_id,
      owner_principal_id: actor.owner_principal_id,
      display_name: actor.display_name,
      observation_seq: actor.observation_seq,
      epoch: { ...actor.epoch },
      decision_authority: { ...actor.decision_authority },
      controller_lease: controller === undefined ? undefined : { ...controller, epoch: { ...controller.epoch } },
      emergency_stopped: stop?.active ?? false,
      emergency_stop_revision: stop === undefined || stop.revision === 0 ? undefined : stop.revision,
      state: actor.state,
      online: this.live(entry),
      lease_expires_at_unix_millis: entry.lease.expires_at_unix_millis,
    };
    return view;
  }

  /** R78: returns at once when any cursor value differs or wait_millis is 0; else waits for a change. */
  async waitActor(principal: Principal, input: WaitActorInput, signal: AbortSignal): Promise<ActorUpdate> {
    if (!(input.wait_millis <= MAX_WAIT_MILLIS)) throw invalid('wait_millis', `must not exceed ${MAX_WAIT_MILLIS}`);
    const deadline = this.now() + input.wait_millis;
    for (;;) {
      if (this.core.closed) throw new RinError('unavailable', '');
      const view = this.getActor(principal, input.host_id, input.world_id, input.actor_id);
      const changed = actorCursorChanged(view, input);
      if (changed || input.wait_millis === 0) return { actor: view, changed };
      const woke = await this.core.waitForChange(deadline, signal);
      if (woke === 'aborted') throw new RinError('unavailable', this.core.closed ? 'control plane is closed' : 'request cancelled');
      if (woke === 'timeout') {
        const last = this.getActor(principal, input.host_id, input.world_id, input.actor_id);
        return { actor: last, changed: actorCursorChanged(last, input) };
      }
    }
  }
}

function actorCursorChanged(view: ActorView, input: WaitActorInput): boolean {
  return (
    view.observation_seq !== input.after_observation_seq ||
    view.decision_authority.revision !== input.after_authority_revision ||
    (view.controller_lease?.lease_id ?? '') !== (input.after_controller_lease_id ?? '') ||
    (view.emergency_stop_revision ?? 0) !== (input.after_emergency_stop_revision ?? 0)
  );
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
