/**
 * The owner's emergency stop (R81): a latch per actor that survives controller changes and host
 * restarts. Each change bumps its revision; activating it cancels the actor's unfinished work, and
 * the policy denies every action while it is on. Stored, one row per actor.
 */
import { RinError } from '../errors.js';
import type { Db } from '../../server/db.js';
import type { ActorEmergencyStop, Principal, SetEmergencyStopInput } from '../types.js';
import { hasScope } from './auth.js';
import { SCOPE_ACTOR_CONTROL, SCOPE_HOST_ADMIN } from './contracts.js';
import { actorKey, validateActorTarget } from './controllers.js';
import type { ControlCore } from './service.js';

export class EmergencyStops {
  private readonly stops = new Map<string, ActorEmergencyStop>();
  private readonly dirty = new Set<string>();
  private writing = new Set<string>();

  constructor(private readonly core: ControlCore) {}

  get(hostId: string, worldId: string, actorId: string): ActorEmergencyStop | undefined {
    const stop = this.stops.get(actorKey(hostId, worldId, actorId));
    return stop === undefined ? undefined : { ...stop };
  }

  /**
   * Only the owner or host.admin, holding actor.control; works while the host is offline (the
   * actor's last publication decides). Setting the state it already has changes nothing.
   */
  set(principal: Principal, input: SetEmergencyStopInput): ActorEmergencyStop {
    validateActorTarget(input);
    const { world } = this.core.hosts.findWorld(input.host_id, input.world_id);
    const actor = world.actors.find((a) => a.actor_id === input.actor_id);
    if (actor === undefined) throw new RinError('not_found', '');
    if (!this.core.canAccessActor(principal, actor, SCOPE_ACTOR_CONTROL)) throw new RinError('forbidden', '');
    if (principal.id !== actor.owner_principal_id && !hasScope(principal, SCOPE_HOST_ADMIN)) throw new RinError('forbidden', '');
    const key = actorKey(input.host_id, input.world_id, input.actor_id);
    const current = this.stops.get(key);
    if (current !== undefined && current.active === input.active) return { ...current };
    const next: ActorEmergencyStop = {
      host_id: input.host_id,
      world_id: input.world_id,
      actor_id: input.actor_id,
      active: input.active,
      revision: (current?.revision ?? 0) + 1,
      updated_by_principal_id: principal.id,
      updated_at_unix_millis: this.core.clock.now(),
    };
    this.stops.set(key, next);
    this.dirty.add(key);
    if (input.active) this.core.ops.onEmergencyStop(input.host_id, input.world_id, input.actor_id, next.updated_at_unix_millis);
    this.core.notify();
    return { ...next };
  }

  async load(db: Db): Promise<void> {
    for (const row of await db.query<{ key: string; doc: string }>('SELECT key, doc FROM rin_emergency_stops')) {
      this.stops.set(row.key, JSON.parse(row.doc) as ActorEmergencyStop);
    }
  }

  async flush(tx: Db): Promise<void> {
    this.writing = new Set(this.dirty);
    this.dirty.clear();
    for (const key of this.writing) {
      const stop = this.stops.get(key);
      if (stop === undefined) continue;
      await tx.query('INSERT INTO rin_emergency_stops (key, doc) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET doc = EXCLUDED.doc', [
        key,
        JSON.stringify(stop),
      ]);
    }
  }

  /** A batch that was not committed is written again with the next one. */
  afterFlush(committed: boolean): void {
    if (!committed) for (const key of this.writing) this.dirty.add(key);
    this.writing.clear();
  }

  hasDirty(): boolean {
    return this.dirty.size > 0;
  }
}
