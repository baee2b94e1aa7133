/**
 * The rin.control/v2 server assembled: the database (PGlite under `<dataDir>/db`, or PostgreSQL),
 * the core state (hosts, controller leases, emergency stops), the operations half, and the HTTP app.
 *
 * One writer per database: PGlite's directory claim, and a session advisory lock on PostgreSQL, so a
 * second server on the same data is refused with a clear error instead of corrupting it.
 */
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Hono } from 'hono';
import pg from 'pg';
import type { Crypto } from '../../crypto/backend.js';
import { getCrypto } from '../../crypto/index.js';
import type { Migration } from '../../server/context.js';
import { openDb, type Db } from '../../server/db.js';
import { createBoundedServer, honoHandler } from '../../server/http-boundary.js';
import { jsonLineLog, type Log } from '../../server/log.js';
import { migrate } from '../../server/migrate.js';
import { RinError } from '../errors.js';
import { isLoopbackHost } from '../loopback.js';
import type { ActorEmergencyStop, ActorPublication, ControllerLease, HostLease, Principal } from '../types.js';
import { canAccessActor, checkClientPrincipal, checkToken, hasScope } from './auth.js';
import type { ActorSnapshot, ControlClock, ControlOps, ControlState, OpsFactory } from './contracts.js';
import { Controllers } from './controllers.js';
import { EmergencyStops } from './emergency.js';
import { Hosts } from './hosts.js';
import { RIN_MIGRATIONS } from './migrations.js';
import { createOperations } from './operations.js';
import { DEFAULT_MAX_BODY_BYTES, MAX_BODY_BYTES_LIMIT, createControlApp } from './http.js';

/** Wall-clock time and real timers. */
export const realClock: ControlClock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise((resolve) => {
      if (signal?.aborted) return resolve();
      const timer = setTimeout(done, Math.max(0, ms));
      function done(): void {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        resolve();
      }
      signal?.addEventListener('abort', done, { once: true });
    }),
};

/** The core's state; implements what the operations half may see (`ControlState`). */
export class ControlCore implements ControlState {
  readonly hosts: Hosts;
  readonly controllers: Controllers;
  readonly stops: EmergencyStops;
  closed = false;
  /** Why the server stopped writing before it was closed (its database lock was lost). */
  failure: Error | undefined;
  private opsImpl: ControlOps | undefined;
  private tail: Promise<void> = Promise.resolve();
  private waiters = new Set<() => void>();

  constructor(
    readonly clock: ControlClock,
    readonly db: Db,
    readonly crypto: Crypto,
    private readonly random: (n: number) => Uint8Array,
  ) {
    this.hosts = new Hosts(this);
    this.controllers = new Controllers(this);
    this.stops = new EmergencyStops(this);
  }

  get ops(): ControlOps {
    if (this.opsImpl === undefined) throw new Error('the operations half is not attached');
    return this.opsImpl;
  }

  attach(ops: ControlOps): void {
    this.opsImpl = ops;
  }

  newId(prefix: string): string {
    return `${prefix}.${Buffer.from(this.random(16)).toString('hex')}`;
  }

  async mutate<T>(fn: () => T | Promise<T>): Promise<T> {
    const previous = this.tail;
    let release!: () => void;
    this.tail = new Promise((r) => (release = r));
    await previous;
    try {
      if (this.closed)
        throw new RinError('unavailable', this.failure === undefined ? 'control plane is closed' : 'control plane stopped: its database lock was lost');
      let result: T | undefined;
      let failure: { error: unknown } | undefined;
      try {
        result = await fn();
      } catch (error) {
        failure = { error };
      }
      // What changed before a refusal (an expired lease found and invalidated) is kept, as in memory.
      // A mutation that changed nothing (a poll wake, a refusal) costs no transaction.
      const ops = this.ops;
      if (this.controllers.hasDirty() || this.stops.hasDirty() || (ops.hasDirty?.() ?? true)) {
        let committed = false;
        try {
          await this.db.transaction(async (tx) => {
            await this.controllers.flush(tx);
            await this.stops.flush(tx);
            await ops.flush(tx);
          });
          committed = true;
        } finally {
          this.controllers.afterFlush(committed);
          this.stops.afterFlush(committed);
          ops.afterFlush?.(committed);
        }
      }
      if (failure !== undefined) throw failure.error;
      return result as T;
    } finally {
      release();
    }
  }

  notify(): void {
    const waiters = this.waiters;
    this.waiters = new Set();
    for (const wake of waiters) wake();
  }

  waitForChange(deadline: number, signal?: AbortSignal): Promise<'changed' | 'timeout' | 'aborted'> {
    return new Promise((resolve) => {
      // A closed server has nothing more to wait for: waiters give up rather than loop.
      if (signal?.aborted || this.closed) return resolve('aborted');
      const stopTimer = new AbortController();
      let settled = false;
      const finish = (why: 'changed' | 'timeout' | 'aborted'): void => {
        if (settled) return;
        settled = true;
        this.waiters.delete(wake);
        signal?.removeEventListener('abort', onAbort);
        stopTimer.abort();
        resolve(why);
      };
      const wake = (): void => finish('changed');
      const onAbort = (): void => finish('aborted');
      this.waiters.add(wake);
      signal?.addEventListener('abort', onAbort, { once: true });
      void this.clock.sleep(Math.max(0, deadline - this.clock.now()), stopTimer.signal).then(() => finish('timeout'));
    });
  }

  hostLease(hostId: string): HostLease | undefined {
    const entry = this.hosts.entries.get(hostId);
    return entry === undefined ? undefined : { ...entry.lease };
  }

  hostLive(hostId: string): boolean {
    const entry = this.hosts.entries.get(hostId);
    return entry !== undefined && this.hosts.live(entry);
  }

  requireHostLease(hostId: string, leaseId: string): HostLease {
    return { ...this.hosts.requireLease(hostId, leaseId).lease };
  }

  actor(hostId: string, worldId: string, actorId: string): ActorSnapshot | undefined {
    const entry = this.hosts.entries.get(hostId);
    const world = entry?.worlds.get(worldId);
    const actor = world?.actors.find((a) => a.actor_id === actorId);
    if (entry === undefined || world === undefined || actor === undefined) return undefined;
    return {
      hostId,
      worldId,
      actor,
      world,
      manifest: entry.registration.manifest,
      hostLease: { ...entry.lease },
      hostLive: this.hosts.live(entry),
      emergencyStop: this.stops.get(hostId, worldId, actorId),
      controller: this.controllers.peek(hostId, worldId, actorId),
    };
  }

  authorizeActor(principal: Principal, hostId: string, worldId: string, actorId: string, scope: string): ActorPublication {
    const { entry, world } = this.hosts.findWorld(hostId, worldId);
    if (!this.hosts.live(entry)) {
      this.ops.onHostExpired(hostId, this.clock.now());
      throw new RinError('unavailable', '');
    }
    const actor = world.actors.find((a) => a.actor_id === actorId);
    if (actor === undefined) throw new RinError('not_found', '');
    if (!canAccessActor(principal, actor, scope)) throw new RinError('forbidden', '');
    return actor;
  }

  controllerLease(hostId: string, worldId: string, actorId: string): ControllerLease | undefined {
    return this.controllers.live(hostId, worldId, actorId);
  }

  emergencyStop(hostId: string, worldId: string, actorId: string): ActorEmergencyStop | undefined {
    return this.stops.get(hostId, worldId, actorId);
  }

  canAccessActor(principal: Principal, actor: ActorPublication, scope: string): boolean {
    return canAccessActor(principal, actor, scope);
  }

  hasScope(principal: Principal, scope: string): boolean {
    return hasScope(principal, scope);
  }

  /** Refuses every further mutation for good: another server may now own the database. */
  fail(error: Error): void {
    this.failure ??= error;
    this.close();
  }

  /** Wakes every waiter and refuses further mutations. */
  close(): void {
    this.closed = true;
    this.notify();
  }
}

export interface RinControlOptions {
  /** The bearer token, at least 32 bytes (RIN_CONTROL_TOKEN). */
  token: string;
  /** The client principal; without it only the host routes exist. */
  principal?: Principal;
  /** An already open database (tests); not closed by the server. */
  db?: Db;
  /** PGlite lives in `<dataDir>/db`. Without dataDir, dbUrl and db the database is in memory. */
  dataDir?: string;
  /** A postgres:// URL: PostgreSQL instead of PGlite. */
  dbUrl?: string;
  now?: () => number;
  /** Overrides `now` and the timers (virtual time in tests). */
  clock?: ControlClock;
  crypto?: Crypto;
  policy?: unknown;
  /** The operations half; default the real one (operations.ts). */
  ops?: OpsFactory;
  /** Migrations of the rin tables (both halves), applied in order; default RIN_MIGRATIONS. */
  migrations?: readonly Migration[];
  /** Largest request body, default 1 MiB, at most 8 MiB. */
  maxBodyBytes?: number;
  random?: (n: number) => Uint8Array;
  log?: Log;
  /** Operation settings for the operations half (max operations, TTL). */
  operations?: Record<string, unknown>;
}

export interface RinControl {
  app: Hono;
  /** The core state, as the operations half sees it. */
  service: ControlCore;
  /** `METHOD path` of every route served. */
  routes: string[];
  /**
   * Settles with the reason if the server had to stop writing (PostgreSQL: the connection holding
   * the one-writer lock was lost); it then refuses every mutation with `unavailable`. Never settles
   * otherwise.
   */
  failed: Promise<Error>;
  close(): Promise<void>;
}

/** An arbitrary constant naming the one-writer lock among the database's advisory locks. */
const WRITER_LOCK = 0x72696e63746c;

/**
 * PostgreSQL: hold a session advisory lock for the server's lifetime; refuse when another holds it.
 * `onLost` is called once if the lock's connection ends or fails before `release`: from then on
 * another server may take the database, so this one must stop writing.
 */
async function claimPostgres(url: string, onLost: (error: Error) => void): Promise<() => Promise<void>> {
  const client = new pg.Client({ connectionString: url });
  let held = false;
  let released = false;
  let lost = false;
  const lose = (error: Error): void => {
    if (!held || released || lost) return;
    lost = true;
    onLost(error);
  };
  client.on('error', lose);
  client.on('end', () => lose(new Error('connection ended')));
  const release = async (): Promise<void> => {
    released = true;
    await client.end();
  };
  try {
    await client.connect();
    const rows = (await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [WRITER_LOCK])).rows;
    if (rows[0]?.locked !== true) throw new Error('the rin control database is in use by another server (one writer per database)');
    held = true;
  } catch (e) {
    await release().catch(() => {});
    throw e;
  }
  return release;
}

/** Opens the database, applies migrations, loads stored state and builds the app; no socket. */
export async function createRinControl(opts: RinControlOptions): Promise<RinControl> {
  const token = checkToken(opts.token);
  const principal = opts.principal === undefined ? undefined : checkClientPrincipal(opts.principal);
  const maxBodyBytes = opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  if (!(Number.isSafeInteger(maxBodyBytes) && maxBodyBytes > 0 && maxBodyBytes <= MAX_BODY_BYTES_LIMIT)) {
    throw new RinError('invalid', 'max body must not exceed 8 MiB');
  }
  const log = opts.log ?? jsonLineLog();
  const clock: ControlClock = opts.clock ?? (opts.now === undefined ? realClock : { now: opts.now, sleep: realClock.sleep });
  const cleanups: Array<() => Promise<void>> = [];
  const cleanup = async (): Promise<void> => {
    for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
  };
  let core: ControlCore | undefined;
  let lostLock: Error | undefined;
  let signalFailed!: (error: Error) => void;
  const failed = new Promise<Error>((resolve) => (signalFailed = resolve));
  const onLockLost = (error: Error): void => {
    log.error('rin_db_lock_lost', {
      error: `the connection holding the one-writer lock was lost (${error.message.split('\n')[0]}); refusing every change from now on`,
    });
    lostLock = error;
    core?.fail(error);
    signalFailed(error);
  };
  try {
    let db = opts.db;
    if (db === undefined) {
      if (opts.dbUrl !== undefined) cleanups.push(await claimPostgres(opts.dbUrl, onLockLost));
      const opened = await openDb({
        url: opts.dbUrl,
        dir: opts.dataDir === undefined ? undefined : join(opts.dataDir, 'db'),
        onError: (m) => log.warn('db_pool_error', { error: m }),
      });
      cleanups.push(() => opened.close());
      db = opened;
    }
    await migrate(db, opts.migrations ?? RIN_MIGRATIONS);
    const service = new ControlCore(clock, db, opts.crypto ?? getCrypto(), opts.random ?? ((n) => randomBytes(n)));
    if (lostLock !== undefined) throw lostLock;
    core = service;
    await core.controllers.load(db);
    await core.stops.load(db);
    const ops = await (opts.ops ?? createOperations)({ state: core, db, policy: opts.policy, options: opts.operations });
    core.attach(ops);
    cleanups.push(() => ops.close());
    // Expired leases dropped while loading are deleted now.
    await core.mutate(() => undefined);
    const { app, routes } = createControlApp(core, { token, principal, maxBodyBytes, log });
    return {
      app,
      service,
      routes,
      failed,
      close: async () => {
        service.close();
        await cleanup();
      },
    };
  } catch (e) {
    await cleanup();
    throw e;
  }
}

export interface ServedRinControl extends RinControl {
  /** `http://host:port` actually bound. */
  url: string;
  port: number;
}

/** Serves on `listen` (`host:port`, default 127.0.0.1:7375; port 0 picks one); loopback only. */
export async function serveRinControl(opts: RinControlOptions & { listen?: string }): Promise<ServedRinControl> {
  const listen = opts.listen ?? '127.0.0.1:7375';
  const m = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(listen);
  const port = Number(m?.[2]);
  if (m === null || port > 65535) throw new RinError('invalid', `listen address must be host:port, got ${listen.slice(0, 80)}`);
  const hostname = m[1]!.replace(/^\[|\]$/g, '');
  if (!isLoopbackHost(hostname)) throw new RinError('invalid', `the control daemon listens only on loopback (localhost, 127.0.0.0/8, ::1), not ${hostname}`);
  const log = opts.log ?? jsonLineLog();
  const control = await createRinControl({ ...opts, log });
  // Through the HTTP boundary (ts/server/http-boundary.ts): no request line, header or throw ends the daemon.
  const server = createBoundedServer(honoHandler(control.app.fetch), {
    render: (r) => ({ contentType: 'application/json', body: `${JSON.stringify({ error: r.message })}\n` }),
    log,
  });
  try {
    const bound = await new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, hostname, () => resolve((server.address() as AddressInfo).port));
    });
    const urlHost = hostname.includes(':') ? `[${hostname}]` : hostname;
    return {
      ...control,
      url: `http://${urlHost}:${bound}`,
      port: bound,
      close: async () => {
        // Long polls end first (they answer at once), so the socket can close.
        control.service.close();
        await new Promise<void>((resolve) => server.close(() => resolve()));
        await control.close();
      },
    };
  } catch (e) {
    await control.close();
    throw e;
  }
}
