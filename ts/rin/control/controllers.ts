/**
 * Controller leases (R79, R80): the exclusive, epoch-bound right to author ActionRequests for one
 * actor. A lease never grants an effect by itself. Leases are stored (one row each) and survive a
 * restart unless expired; a lease that expires, is released, or stops matching its actor's epoch or
 * authority is invalidated, which fences the operations bound to it.
 */
import { RinError, invalid } from '../errors.js';
import type { Db } from '../../server/db.js';
import type { AcquireControllerInput, ActorPublication, ActorTarget, ControllerLease, DecisionAuthority, Principal, WorldPublication } from '../types.js';
import { hasScope } from './auth.js';
import { SCOPE_ACTOR_CONTROL, SCOPE_ACTOR_READ, SCOPE_HOST_ADMIN } from './contracts.js';
import { epochEquals, validateIdentifier } from '../validate.js';
import type { ControlCore } from './service.js';

const MIN_TTL = 5_000;
const MAX_TTL = 300_000;

export const actorKey = (hostId: string, worldId: string, actorId: string): string => `${hostId}/${worldId}/${actorId}`;

export function validateActorTarget(target: ActorTarget): void {
  validateIdentifier('host_id', target.host_id);
  validateIdentifier('world_id', target.world_id);
  validateIdentifier('actor_id', target.actor_id);
}

function validateTtl(value: number): void {
  if (!(value >= MIN_TTL && value <= MAX_TTL)) throw invalid('lease_ttl_millis', 'must be between 5000 and 300000');
}

/** Internal authority: only host.admin may take the controls; external: only its named principal. */
function principalAllowed(principal: Principal, authority: DecisionAuthority): boolean {
  if (authority.source === 'internal') return hasScope(principal, SCOPE_HOST_ADMIN);
  return authority.source === 'external' && authority.controller_principal_id === principal.id;
}

export function leaseMatchesActor(lease: ControllerLease, actor: ActorPublication): boolean {
  const authority = actor.decision_authority;
  return (
    lease.actor_id === actor.actor_id &&
    epochEquals(lease.epoch, actor.epoch) &&
    lease.source === authority.source &&
    lease.persona_mode === authority.persona_mode &&
    lease.authority_revision === authority.revision &&
    (authority.source !== 'external' || lease.principal_id === authority.controller_principal_id)
  );
}

const copy = (lease: ControllerLease): ControllerLease => ({ ...lease, epoch: { ...lease.epoch } });

export class Controllers {
  private readonly leases = new Map<string, ControllerLease>();
  /** Rows to write at the end of the mutation: lease id → the lease, or null to delete. */
  private readonly dirty = new Map<string, ControllerLease | null>();
  private writing = new Map<string, ControllerLease | null>();

  constructor(private readonly core: ControlCore) {}

  private now(): number {
    return this.core.clock.now();
  }

  private put(key: string, lease: ControllerLease): void {
    this.leases.set(key, lease);
    this.dirty.set(lease.lease_id, lease);
  }

  /** Drops the lease and fences its operations (never delivered → stale, delivered → cancel requested). */
  invalidate(key: string, now: number): void {
    const lease = this.leases.get(key);
    if (lease === undefined) return;
    this.leases.delete(key);
    this.dirty.set(lease.lease_id, null);
    this.core.ops.onControllerLeaseInvalidated(copy(lease), now);
  }

  private expire(key: string, now: number): void {
    const lease = this.leases.get(key);
    if (lease !== undefined && lease.expires_at_unix_millis <= now) this.invalidate(key, now);
  }

  expireAll(now: number): void {
    for (const key of [...this.leases.keys()]) this.expire(key, now);
  }

  /** The live lease without side effects (views). */
  peek(hostId: string, worldId: string, actorId: string): ControllerLease | undefined {
    const lease = this.leases.get(actorKey(hostId, worldId, actorId));
    return lease !== undefined && lease.expires_at_unix_millis > this.now() ? lease : undefined;
  }

  /** The live lease; an expired one is invalidated first. Call inside a mutation. */
  live(hostId: string, worldId: string, actorId: string): ControllerLease | undefined {
    const key = actorKey(hostId, worldId, actorId);
    this.expire(key, this.now());
    const lease = this.leases.get(key);
    return lease === undefined ? undefined : copy(lease);
  }

  /** R79: a live lease with the same controller, principal, authority and epoch is renewed; any other is a conflict. */
  acquire(principal: Principal, input: AcquireControllerInput): ControllerLease {
    validateActorTarget(input);
    validateIdentifier('controller_id', input.controller_id);
    validateTtl(input.lease_ttl_millis);
    const actor = this.core.authorizeActor(principal, input.host_id, input.world_id, input.actor_id, SCOPE_ACTOR_CONTROL);
    const authority = actor.decision_authority;
    if (!principalAllowed(principal, authority)) throw new RinError('forbidden', '');
    const key = actorKey(input.host_id, input.world_id, input.actor_id);
    const now = this.now();
    this.expire(key, now);
    const current = this.leases.get(key);
    if (current !== undefined) {
      if (
        current.controller_id !== input.controller_id ||
        current.principal_id !== principal.id ||
        current.source !== authority.source ||
        current.persona_mode !== authority.persona_mode ||
        current.authority_revision !== authority.revision ||
        !epochEquals(current.epoch, actor.epoch)
      ) {
        throw new RinError('lease_conflict', '');
      }
      const renewed = { ...current, expires_at_unix_millis: now + input.lease_ttl_millis };
      this.put(key, renewed);
      this.core.notify();
      return copy(renewed);
    }
    const lease: ControllerLease = {
      lease_id: this.core.newId('controller-lease'),
      controller_id: input.controller_id,
      principal_id: principal.id,
      host_id: input.host_id,
      world_id: input.world_id,
      actor_id: input.actor_id,
      source: authority.source,
      persona_mode: authority.persona_mode,
      authority_revision: authority.revision,
      epoch: { ...actor.epoch },
      acquired_at_unix_millis: now,
      expires_at_unix_millis: now + input.lease_ttl_millis,
    };
    this.put(key, lease);
    this.core.notify();
    return copy(lease);
  }

  /** R80: the exact live lease, by its holder or host.admin; a lease that no longer matches its actor ends. */
  renew(principal: Principal, target: ActorTarget, leaseId: string, ttl: number): ControllerLease {
    validateActorTarget(target);
    validateIdentifier('lease_id', leaseId);
    validateTtl(ttl);
    const key = actorKey(target.host_id, target.world_id, target.actor_id);
    const now = this.now();
    this.expire(key, now);
    const lease = this.leases.get(key);
    if (lease === undefined || lease.lease_id !== leaseId) throw new RinError('lease_expired', '');
    if (lease.principal_id !== principal.id && !hasScope(principal, SCOPE_HOST_ADMIN)) throw new RinError('forbidden', '');
    const actor = this.core.authorizeActor(principal, target.host_id, target.world_id, target.actor_id, SCOPE_ACTOR_CONTROL);
    if (!leaseMatchesActor(lease, actor)) {
      this.invalidate(key, now);
      throw new RinError('lease_expired', '');
    }
    const renewed = { ...lease, expires_at_unix_millis: now + ttl };
    this.put(key, renewed);
    this.core.notify();
    return copy(renewed);
  }

  release(principal: Principal, target: ActorTarget, leaseId: string): void {
    validateActorTarget(target);
    validateIdentifier('lease_id', leaseId);
    const key = actorKey(target.host_id, target.world_id, target.actor_id);
    const lease = this.leases.get(key);
    if (lease === undefined || lease.lease_id !== leaseId) throw new RinError('lease_expired', '');
    if (lease.principal_id !== principal.id && !hasScope(principal, SCOPE_HOST_ADMIN)) throw new RinError('forbidden', '');
    this.invalidate(key, this.now());
    this.core.notify();
  }

  get(principal: Principal, target: ActorTarget): ControllerLease {
    validateActorTarget(target);
    this.core.authorizeActor(principal, target.host_id, target.world_id, target.actor_id, SCOPE_ACTOR_READ);
    const lease = this.live(target.host_id, target.world_id, target.actor_id);
    if (lease === undefined) throw new RinError('not_found', '');
    return lease;
  }

  /** A new publication ends the leases of actors that left the world or whose epoch/authority changed. */
  reconcile(hostId: string, publication: WorldPublication, now: number): void {
    const actors = new Map(publication.actors.map((a) => [a.actor_id, a]));
    for (const [key, lease] of [...this.leases]) {
      if (lease.host_id !== hostId || lease.world_id !== publication.world_id) continue;
      const actor = actors.get(lease.actor_id);
      if (actor === undefined || !leaseMatchesActor(lease, actor)) this.invalidate(key, now);
    }
  }

  /** Restart: stored leases come back unless expired (R96). */
  async load(db: Db): Promise<void> {
    const now = this.now();
    for (const row of await db.query<{ lease_id: string; doc: string }>('SELECT lease_id, doc FROM rin_controller_leases')) {
      const lease = JSON.parse(row.doc) as ControllerLease;
      if (lease.expires_at_unix_millis <= now) {
        this.dirty.set(row.lease_id, null);
        continue;
      }
      this.leases.set(actorKey(lease.host_id, lease.world_id, lease.actor_id), lease);
    }
  }

  async flush(tx: Db): Promise<void> {
    this.writing = new Map(this.dirty);
    this.dirty.clear();
    for (const [leaseId, lease] of this.writing) {
      if (lease === null) await tx.query('DELETE FROM rin_controller_leases WHERE lease_id = $1', [leaseId]);
      else {
        await tx.query('INSERT INTO rin_controller_leases (lease_id, doc) VALUES ($1, $2) ON CONFLICT (lease_id) DO UPDATE SET doc = EXCLUDED.doc', [
          leaseId,
          JSON.stringify(lease),
        ]);
      }
    }
  }

  /** A batch that was not committed is written again with the next one (unless changed since). */
  afterFlush(committed: boolean): void {
    if (!committed) for (const [leaseId, lease] of this.writing) if (!this.dirty.has(leaseId)) this.dirty.set(leaseId, lease);
    this.writing.clear();
  }

  hasDirty(): boolean {
    return this.dirty.size > 0;
  }
}
