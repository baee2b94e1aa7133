/**
 * The seam between the two halves of the rin.control/v2 server.
 *
 * The core (hosts, worlds, actors, controller leases, emergency stops, HTTP) owns `ControlState`;
 * the operations half (submit, confirm, delivery, results, timeline, policy) implements `ControlOps`.
 * `service.ts` builds the state, then asks `OpsFactory` for the ops, then the HTTP app.
 *
 * Locking: every mutation of either half runs inside `state.mutate(fn)`: one at a time, and when
 * `fn` returns (or throws) the changed rows of both halves are written in one transaction (the
 * core's own tables, then `ops.flush(tx)`) before the response is sent. Reads that do not change
 * anything may run outside it. Long waits never hold it: wait with `state.waitForChange`, and never
 * await a host (a gateway bind) inside `mutate`: the host's answer needs `mutate` too.
 *
 * Tables of the core (created by the rin migrations, JSON as text):
 *   rin_controller_leases(lease_id text PRIMARY KEY, doc text NOT NULL)  — a ControllerLease
 *   rin_emergency_stops(key text PRIMARY KEY, doc text NOT NULL)         — an ActorEmergencyStop,
 *     key = `<host_id>/<world_id>/<actor_id>`
 * Host leases and world publications are not stored: hosts register and publish again (R96).
 */
import type { WireNode } from '../../crypto/gojson.js';
import type { Db } from '../../server/db.js';
import type { Crypto } from '../../crypto/backend.js';
import type {
  ActorEmergencyStop,
  ActorPublication,
  ControllerLease,
  HostControlBatch,
  HostLease,
  HostManifest,
  Principal,
  WorldPublication,
} from '../types.js';

export const SCOPE_ACTOR_READ = 'actor.read';
export const SCOPE_ACTOR_CONTROL = 'actor.control';
export const SCOPE_ACTOR_EXECUTE = 'actor.execute';
export const SCOPE_OPERATION_CANCEL = 'operation.cancel';
export const SCOPE_HOST_ADMIN = 'host.admin';

/** Bound of every long poll (R70). */
export const MAX_WAIT_MILLIS = 25_000;

/** A request body that passed the transport checks: media type, size, strict JSON (R1, R2, R67). */
export interface WireBody {
  text: string;
  root: WireNode;
}

/**
 * Time and timers go through here, so tests can run on a virtual clock: `sleep` resolves when the
 * clock has advanced by `ms` (or at once when `signal` aborts).
 */
export interface ControlClock {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** What the core knows about one published actor. */
export interface ActorSnapshot {
  hostId: string;
  worldId: string;
  actor: ActorPublication;
  world: WorldPublication;
  manifest: HostManifest;
  hostLease: HostLease;
  /** The host lease has not expired. */
  hostLive: boolean;
  /** Undefined until the owner first sets it. */
  emergencyStop: ActorEmergencyStop | undefined;
  /** The live controller lease, if any. */
  controller: ControllerLease | undefined;
}

/** The core's state as the operations half sees it. */
export interface ControlState {
  readonly clock: ControlClock;
  readonly db: Db;
  readonly crypto: Crypto;
  /** `<prefix>.<32 lowercase hex>` from 16 random bytes. */
  newId(prefix: string): string;

  /** Serialises mutations and writes the changed rows of both halves in one transaction. */
  mutate<T>(fn: () => T | Promise<T>): Promise<T>;
  /** Wakes every waiter (wait-actor, poll, operation and timeline waits). */
  notify(): void;
  /**
   * Waits until `notify()` is called, `deadline` (clock ms) passes, or `signal` aborts ('aborted'
   * also once the server is closed). Callers re-check their condition after every return.
   */
  waitForChange(deadline: number, signal?: AbortSignal): Promise<'changed' | 'timeout' | 'aborted'>;

  /** The host's lease (live or expired), undefined for a host never registered. */
  hostLease(hostId: string): HostLease | undefined;
  hostLive(hostId: string): boolean;
  /** The lease of a live host with exactly this lease id; otherwise RinError lease_expired (R72). */
  requireHostLease(hostId: string, leaseId: string): HostLease;
  actor(hostId: string, worldId: string, actorId: string): ActorSnapshot | undefined;
  /**
   * Go's authorizeActorLocked: world missing → not_found; host lease expired → unavailable (and the
   * host's operations are settled through `ops.onHostExpired`); actor missing → not_found; actor not
   * accessible with `scope` → forbidden.
   */
  authorizeActor(principal: Principal, hostId: string, worldId: string, actorId: string, scope: string): ActorPublication;
  /** The live controller lease of an actor; an expired one is invalidated first (fencing its operations). */
  controllerLease(hostId: string, worldId: string, actorId: string): ControllerLease | undefined;
  emergencyStop(hostId: string, worldId: string, actorId: string): ActorEmergencyStop | undefined;
  /** R76. */
  canAccessActor(principal: Principal, actor: ActorPublication, scope: string): boolean;
  hasScope(principal: Principal, scope: string): boolean;
}

/** Poll input after the transport checks (wait_millis ≤ 25000 already enforced, R70). */
export interface PollInput {
  hostId: string;
  leaseId: string;
  limit: number;
  waitMillis: number;
  signal: AbortSignal;
}

/**
 * The operations half. Route handlers receive the strictly parsed body and decode it themselves
 * (a body that does not decode: RinError with stage 'decode' → 400 without code); they return the
 * response value (written with goJsonEncode) — ack/run/outcome/gatewayResult return nothing and the
 * transport answers `{"status":"acknowledged"|"recorded"}`.
 *
 * Hooks are called by the core inside `state.mutate`, after the core's own state changed.
 */
export interface ControlOps {
  /** A host lease was found expired, or a registration replaced an expired one (R71, R91). */
  onHostExpired(hostId: string, now: number): void;
  /** `host/unregister`: settle like expiry and fail the host's pending gateway requests (R72). */
  onHostUnregistered(hostId: string, now: number): void;
  /** Before a new publication replaces the world's read model: fence superseded authority revisions. */
  onWorldPublished(hostId: string, publication: WorldPublication, now: number): void;
  /** A controller lease expired, was released, or no longer matches its actor (R80). */
  onControllerLeaseInvalidated(lease: ControllerLease, now: number): void;
  /** An emergency stop was activated: cancel the actor's unfinished operations (R81). */
  onEmergencyStop(hostId: string, worldId: string, actorId: string, now: number): void;
  /** Whether `flush` has rows to write; without it every mutation opens a transaction. */
  hasDirty?(): boolean;
  /** Writes the operations half's changed rows, in `state.mutate`'s transaction when anything is dirty. */
  flush(tx: Db): Promise<void>;
  /** After that transaction: `committed` false means the rows written must be written again. */
  afterFlush?(committed: boolean): void;
  /** Stops waiters and timers; the database is closed by the core afterwards. */
  close(): Promise<void>;

  poll(input: PollInput): Promise<HostControlBatch>;
  ack(body: WireBody): Promise<void>;
  run(body: WireBody): Promise<void>;
  outcome(body: WireBody): Promise<void>;
  gatewayResult(body: WireBody): Promise<void>;

  submit(principal: Principal, body: WireBody, signal: AbortSignal): Promise<unknown>;
  confirm(principal: Principal, body: WireBody, signal: AbortSignal): Promise<unknown>;
  get(principal: Principal, body: WireBody): Promise<unknown>;
  wait(principal: Principal, body: WireBody, signal: AbortSignal): Promise<unknown>;
  cancel(principal: Principal, body: WireBody): Promise<unknown>;
  timelineGet(principal: Principal, body: WireBody): Promise<unknown>;
  timelineWait(principal: Principal, body: WireBody, signal: AbortSignal): Promise<unknown>;
}

export interface OpsFactoryContext {
  state: ControlState;
  /** Rows were loaded by the core already; the factory loads its own and applies R96's restart rules. */
  db: Db;
  policy?: unknown;
  /** Operation settings (max operations, TTL) passed through from createRinControl. */
  options?: Record<string, unknown>;
}

export type OpsFactory = (ctx: OpsFactoryContext) => Promise<ControlOps>;
