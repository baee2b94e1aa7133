/**
 * Drives the operations half directly: a stand-in for the core's ControlState (one host, one world,
 * actors with controller leases and emergency stops, the shared mutation lock and write-through
 * transaction), a virtual clock whose timers fire only when a test advances it, and a scripted
 * Host that answers gateway requests with bindings sealed by the real HostRegistry.
 *
 * `describeOpsDbs(name, fn)` runs a suite on PGlite in a temporary directory and, when
 * AIGENORA_TEST_PG_URL is set, on a fresh PostgreSQL database (without it the file fails, unless
 * AIGENORA_SKIP_CORPORA=1 asks to skip that variant, by name: describeEachDb in test/server/harness.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, expect } from 'vitest';
import { goJsonEncode, parseWireJson, RawJson } from '../../ts/crypto/gojson.js';
import type { ActorSnapshot, ControlState, WireBody } from '../../ts/rin/control/contracts.js';
import { RIN_MIGRATIONS } from '../../ts/rin/control/migrations.js';
import type { HostGateway } from '../../ts/rin/control/gateway.js';
import { Operations } from '../../ts/rin/control/operations.js';
import type { PolicyConfig } from '../../ts/rin/control/policy.js';
import { RinError } from '../../ts/rin/errors.js';
import { HostRegistry } from '../../ts/rin/registry.js';
import { newSchema } from '../../ts/rin/schema.js';
import type {
  ActionRequest,
  ActorEmergencyStop,
  ActorPublication,
  CapabilitySpec,
  ControllerLease,
  Effect,
  Epoch,
  HostControlBatch,
  HostGatewayDelivery,
  HostLease,
  HostManifest,
  OperationView,
  Principal,
  WorldPublication,
} from '../../ts/rin/types.js';
import { openDb, type Db } from '../../ts/server/db.js';
import { migrate } from '../../ts/server/migrate.js';
import { describeEachDb, freshPgDatabase, PG_URL } from '../server/harness.js';

export const HOST = 'host.harbor';
export const WORLD = 'world.harbor';
export const ACTOR = 'actor.guide';
export const ALICE: Principal = { id: 'alice', granted_scopes: ['actor.control', 'actor.execute', 'actor.read', 'operation.cancel', 'rin.policy.confirm'] };
export const BOB: Principal = { id: 'bob', granted_scopes: ['actor.control', 'actor.execute', 'actor.read', 'operation.cancel'] };
export const ADMIN: Principal = { id: 'admin', granted_scopes: ['host.admin'] };

/** Known effect kinds and scopes of the test world; the guarded profile decides the rest. */
export const TEST_POLICY: PolicyConfig = {
  revision: 1,
  profile: 'guarded',
  known_effect_kinds: ['cargo.move'],
  known_scopes: ['harbor.dock'],
  confirmation_ttl: { event: 16, step: 600, realtime: 30_000 },
  confirmation_scopes: ['rin.policy.confirm'],
};

/** Virtual time: the core's test clock (timers fire only when a test advances it). */
export { VirtualTimers as TestClock } from './control-http-harness.js';
import { VirtualTimers as TestClock } from './control-http-harness.js';

/** Lets queued promise work run (the database round trips included). */
export async function settle(rounds = 5): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise((r) => setTimeout(r, 1));
}

export function wire(value: unknown): WireBody {
  return parseWireJson(goJsonEncode(value));
}

export function manifest(): HostManifest {
  return {
    contract_version: 'rin.host/v2',
    adapter_id: 'harbor',
    adapter_version: '1.0.0',
    engine_id: 'harbor',
    engine_version: '1',
    runtime: 'node',
    platform: 'linux',
    headless: true,
    authority: 'standalone',
    deployment: 'loopback-sidecar',
    control: 'semantic',
    clock_modes: ['step'],
    decision_modes: ['sequential'],
    max_concurrent_actors: 8,
    durability: {
      profile: 'advisory',
      stable_identity: false,
      durable_before_network: false,
      durable_outbox: false,
      idempotent_apply: false,
      atomic_apply_and_outbox: false,
    },
  };
}

const SCHEMA = 'https://json-schema.org/draft/2020-12/schema';

export function capability(id: string, kind: 'atomic' | 'macro' = 'atomic'): CapabilitySpec {
  return {
    capability: { id, version: '1.0.0' },
    description: `Test capability ${id}`,
    input: newSchema(
      JSON.stringify({ $schema: SCHEMA, type: 'object', properties: { crate: { type: 'string' }, weight: { type: 'number' } }, additionalProperties: false }),
    ),
    output: newSchema(
      JSON.stringify({ $schema: SCHEMA, type: 'object', properties: { moved: { type: 'integer' }, note: { type: 'string' } }, additionalProperties: false }),
    ),
    effect_schema: newSchema(JSON.stringify({ $schema: SCHEMA, type: 'object', properties: { weight: { type: 'integer' } }, additionalProperties: false })),
    kind,
    execution: 'queued',
    cancellation: 'cooperative',
    risk_floor: 'low',
    required_durability: 'advisory',
    execution_budget: { clock: 'step', value: 100 },
    max_input_bytes: 4096,
    max_output_bytes: 4096,
    max_effects: 8,
    produces_child_operations: kind === 'macro',
    digest: '',
  };
}

export type Risk = Effect['risk'];

/** What the scripted Host binds a request to: the effect's risk and reversibility decide the policy. */
export interface EffectPlan {
  risk: Risk;
  reversible?: boolean;
  kind?: string;
  ownership?: Effect['ownership'];
  tags?: string[];
}

interface ActorEntry {
  publication: ActorPublication;
  controller: ControllerLease | undefined;
  stop: ActorEmergencyStop | undefined;
}

/**
 * The core stood in. One host with one world; `mutate` serialises like the core's and writes the
 * operations' rows in one transaction when `fn` ends, also when it throws.
 */
export class FakeState implements ControlState {
  readonly crypto = undefined as never;
  lease: HostLease;
  epoch: Epoch = { session_id: 'session.one', world_id: WORLD, host: 1, world: 1, timeline: 1 };
  observationSeq = 10;
  readonly actors = new Map<string, ActorEntry>();
  ops!: Operations;
  notifications = 0;
  private lock: Promise<unknown> = Promise.resolve();
  private idCounter = 0;

  constructor(
    readonly clock: TestClock,
    readonly db: Db,
    specs: CapabilitySpec[],
  ) {
    this.lease = { host_id: HOST, instance_id: 'instance.one', lease_id: 'lease.one', expires_at_unix_millis: clock.now() + 60_000 };
    for (const actorId of [ACTOR, 'actor.other']) {
      this.actors.set(actorId, {
        publication: {
          actor_id: actorId,
          owner_principal_id: 'alice',
          display_name: actorId,
          observation_seq: this.observationSeq,
          epoch: { ...this.epoch },
          decision_authority: { source: 'external', controller_principal_id: 'alice', revision: 1, persona_mode: 'agent-avatar' },
          state: new RawJson('{}'),
          capabilities: { revision: 1, specs },
        },
        controller: undefined,
        stop: undefined,
      });
    }
  }

  newId(prefix: string): string {
    this.idCounter++;
    return `${prefix}.${this.idCounter.toString(16).padStart(32, '0')}`;
  }

  mutate<T>(fn: () => T | Promise<T>): Promise<T> {
    const run = this.lock.then(async () => {
      try {
        return await fn();
      } finally {
        await this.db.transaction((tx) => this.ops.flush(tx));
      }
    });
    this.lock = run.catch(() => {});
    return run;
  }

  notify(): void {
    this.notifications++;
  }

  async waitForChange(): Promise<'changed' | 'timeout' | 'aborted'> {
    throw new Error('the operations half waits on its own change feed');
  }

  hostLease(hostId: string): HostLease | undefined {
    return hostId === HOST ? this.lease : undefined;
  }

  hostLive(hostId: string): boolean {
    return hostId === HOST && this.lease.expires_at_unix_millis > this.clock.now();
  }

  requireHostLease(hostId: string, leaseId: string): HostLease {
    if (!this.hostLive(hostId) || this.lease.lease_id !== leaseId) throw new RinError('lease_expired', '');
    return this.lease;
  }

  private world(): WorldPublication {
    return { world_id: WORLD, display_name: 'Harbor', sequence: 1, actors: [...this.actors.values()].map((a) => a.publication) };
  }

  actor(hostId: string, worldId: string, actorId: string): ActorSnapshot | undefined {
    const a = this.actors.get(actorId);
    if (hostId !== HOST || worldId !== WORLD || a === undefined) return undefined;
    return {
      hostId,
      worldId,
      actor: a.publication,
      world: this.world(),
      manifest: manifest(),
      hostLease: this.lease,
      hostLive: this.hostLive(hostId),
      emergencyStop: a.stop,
      controller: this.controllerLease(hostId, worldId, actorId),
    };
  }

  authorizeActor(principal: Principal, hostId: string, worldId: string, actorId: string, scope: string): ActorPublication {
    if (hostId !== HOST || worldId !== WORLD) throw new RinError('not_found', '');
    if (!this.hostLive(hostId)) {
      this.ops.onHostExpired(hostId, this.clock.now());
      throw new RinError('unavailable', '');
    }
    const a = this.actors.get(actorId);
    if (a === undefined) throw new RinError('not_found', '');
    if (!this.canAccessActor(principal, a.publication, scope)) throw new RinError('forbidden', '');
    return a.publication;
  }

  controllerLease(hostId: string, worldId: string, actorId: string): ControllerLease | undefined {
    const a = this.actors.get(actorId);
    if (hostId !== HOST || worldId !== WORLD || a?.controller === undefined) return undefined;
    if (a.controller.expires_at_unix_millis <= this.clock.now()) {
      const lease = a.controller;
      a.controller = undefined;
      this.ops.onControllerLeaseInvalidated(lease, this.clock.now());
      return undefined;
    }
    return a.controller;
  }

  emergencyStop(_hostId: string, _worldId: string, actorId: string): ActorEmergencyStop | undefined {
    return this.actors.get(actorId)?.stop;
  }

  canAccessActor(principal: Principal, actor: ActorPublication, scope: string): boolean {
    if (this.hasScope(principal, 'host.admin')) return true;
    if (!this.hasScope(principal, scope)) return false;
    return (
      principal.id === actor.owner_principal_id ||
      (actor.decision_authority.source === 'external' && actor.decision_authority.controller_principal_id === principal.id)
    );
  }

  hasScope(principal: Principal, scope: string): boolean {
    return (principal.granted_scopes ?? []).includes(scope);
  }

  // ---- test controls ----

  acquire(actorId: string, principalId = 'alice', controllerId = 'controller.one'): ControllerLease {
    const a = this.actors.get(actorId)!;
    a.controller = {
      lease_id: `controller-lease.${actorId.replace('.', '')}${principalId}`,
      controller_id: controllerId,
      principal_id: principalId,
      host_id: HOST,
      world_id: WORLD,
      actor_id: actorId,
      source: 'external',
      persona_mode: 'agent-avatar',
      authority_revision: 1,
      epoch: { ...a.publication.epoch },
      acquired_at_unix_millis: this.clock.now(),
      expires_at_unix_millis: this.clock.now() + 300_000,
    };
    return a.controller;
  }

  /** The host observes again: every actor's observation sequence moves on. */
  observe(steps = 1): void {
    this.observationSeq += steps;
    for (const a of this.actors.values()) a.publication = { ...a.publication, observation_seq: this.observationSeq };
  }

  async stop(actorId: string): Promise<void> {
    await this.mutate(() => {
      const a = this.actors.get(actorId)!;
      a.stop = {
        host_id: HOST,
        world_id: WORLD,
        actor_id: actorId,
        active: true,
        revision: (a.stop?.revision ?? 0) + 1,
        updated_by_principal_id: 'alice',
        updated_at_unix_millis: this.clock.now(),
      };
      this.ops.onEmergencyStop(HOST, WORLD, actorId, this.clock.now());
    });
  }
}

/** The authoritative Host scripted: binds with the real registry, answers snapshots, polls. */
export class ScriptedHost {
  readonly registry: HostRegistry;
  step = 1000;
  plans = new Map<string, EffectPlan[]>();
  defaultPlan: EffectPlan[] = [{ risk: 'low', reversible: true }];
  bindingCounter = 0;
  /** Set to make the next bound_at disagree with the snapshot. */
  skewBoundAt = false;

  constructor(
    readonly state: FakeState,
    readonly specs: CapabilitySpec[],
  ) {
    this.registry = new HostRegistry(manifest());
    for (const spec of specs) this.registry.register(spec);
  }

  now(): { clock: 'step'; value: number } {
    return { clock: 'step', value: this.step };
  }

  effects(request: ActionRequest): Effect[] {
    const plan = this.plans.get(request.idempotency_key) ?? this.defaultPlan;
    return plan.map((p, i) => ({
      effect_id: `effect.${i}`,
      kind: p.kind ?? 'cargo.move',
      operation: 'update',
      ...(p.tags ? { tags: p.tags } : {}),
      ownership: p.ownership ?? 'actor',
      scope: 'harbor.dock',
      reversible: p.reversible ?? false,
      risk: p.risk,
      attributes: new RawJson('{"weight":3}'),
    }));
  }

  /** One poll of the host's queue: gateway requests are answered; the batch is returned. */
  async pollOnce(limit = 16): Promise<HostControlBatch> {
    const batch = await this.state.ops.poll({ hostId: HOST, leaseId: this.state.lease.lease_id, limit, waitMillis: 0, signal: new AbortController().signal });
    await this.answer(batch.gateway_requests);
    return batch;
  }

  /**
   * Answers only the pending gateway requests (taken from the gateway's queue as a poll would),
   * so serving a submission does not also deliver queued operations.
   */
  async answerGateway(): Promise<number> {
    const gateway = (this.state.ops as unknown as { gateway: HostGateway }).gateway;
    const pending = gateway.collect(HOST, 64);
    await this.answer(pending);
    return pending.length;
  }

  private async answer(requests: HostGatewayDelivery[]): Promise<void> {
    for (const g of requests) {
      const r = g.request;
      if (r.kind === 'snapshot') {
        await this.state.ops.gatewayResult(
          wire({
            host_id: HOST,
            lease_id: this.state.lease.lease_id,
            result: {
              gateway_request_id: r.gateway_request_id,
              snapshot: { now: this.now(), epoch: this.state.epoch, observation_sequence: this.state.observationSeq },
            },
          }),
        );
        continue;
      }
      const request = r.action_request!;
      const now = this.now();
      const bound = this.registry.sealBinding(
        request,
        { binding_id: `binding.${++this.bindingCounter}`, effect_preview: this.effects(request), valid_until: { clock: 'step', value: this.step + 50 } },
        now,
        this.state.epoch,
        this.state.observationSeq,
      );
      const snapshotNow = this.skewBoundAt ? { clock: 'step' as const, value: this.step + 1 } : now;
      await this.state.ops.gatewayResult(
        wire({
          host_id: HOST,
          lease_id: this.state.lease.lease_id,
          result: {
            gateway_request_id: r.gateway_request_id,
            binding: { bound_action: bound, snapshot: { now: snapshotNow, epoch: this.state.epoch, observation_sequence: this.state.observationSeq } },
          },
        }),
      );
    }
  }

  /** Answers gateway requests until the promise settles (the gateway request it waits on is answered). */
  async serve<T>(pending: Promise<T>): Promise<T> {
    let done = false;
    const watched = pending.finally(() => {
      done = true;
    });
    watched.catch(() => {});
    for (let i = 0; i < 50 && !done; i++) {
      await settle(2);
      if (!done) await this.answerGateway();
    }
    return watched;
  }

  async ack(operationId: string, accepted = true, code?: string): Promise<void> {
    await this.state.ops.ack(
      wire({ host_id: HOST, lease_id: this.state.lease.lease_id, acknowledgement: { operation_id: operationId, accepted, ...(code ? { code } : {}) } }),
    );
  }

  async run(operationId: string, status: 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled', progressSeq: number, progress: number): Promise<void> {
    await this.state.ops.run(
      wire({
        host_id: HOST,
        lease_id: this.state.lease.lease_id,
        run: { operation_id: operationId, status, progress_seq: progressSeq, progress, updated_at: { clock: 'step', value: this.step + progressSeq } },
      }),
    );
  }

  async outcome(operationId: string, status: 'succeeded' | 'failed' | 'cancelled' | 'interrupted', output?: string): Promise<void> {
    const text = `{"host_id":${JSON.stringify(HOST)},"lease_id":${JSON.stringify(this.state.lease.lease_id)},"outcome":${goJsonEncode({
      operation_id: operationId,
      status,
      ...(status === 'succeeded' ? {} : { code: `harbor.${status}` }),
      summary: `The crate was ${status}.`,
      epoch: this.state.epoch,
      world_seq: this.state.observationSeq,
      occurred_at: { clock: 'step', value: this.step + 10 },
    })}${output === undefined ? '' : `,"output":${output}`}}`;
    await this.state.ops.outcome(parseWireJson(text));
  }
}

/** A controller's request for the fake world, at the actor's current epoch and observation. */
export function actionRequest(state: FakeState, spec: CapabilitySpec, key: string, extra: Partial<ActionRequest> = {}): ActionRequest {
  const actorId = extra.actor_id ?? ACTOR;
  const publication = state.actors.get(actorId)!.publication;
  return {
    request_id: `request.${key}`,
    controller_id: 'controller.one',
    actor_id: actorId,
    capability: { ...spec.capability },
    spec_digest: spec.digest,
    arguments: new RawJson('{"crate":"blue","weight":1.0}'),
    expected_epoch: { ...publication.epoch },
    observation_sequence: publication.observation_seq,
    task_id: 'task.unload',
    idempotency_key: key,
    ...extra,
  };
}

export function submitBody(request: ActionRequest, parent?: string): WireBody {
  return wire({ host_id: HOST, world_id: WORLD, action_request: request, ...(parent ? { parent_operation_id: parent } : {}) });
}

export interface OpsWorld {
  clock: TestClock;
  db: Db;
  state: FakeState;
  host: ScriptedHost;
  ops: Operations;
  specs: CapabilitySpec[];
  signal: AbortSignal;
  submit(principal: Principal, request: ActionRequest, parent?: string): Promise<OperationView>;
  /** A new Operations instance on the same database, as after a restart. */
  reopen(): Promise<Operations>;
}

export async function openOpsWorld(db: Db, policy: PolicyConfig = TEST_POLICY, clock = new TestClock(), fresh = true): Promise<OpsWorld> {
  await migrate(db, RIN_MIGRATIONS);
  if (fresh) await db.exec('DELETE FROM rin_operations; DELETE FROM rin_meta; DELETE FROM rin_controller_leases; DELETE FROM rin_emergency_stops;');
  const registry = new HostRegistry(manifest());
  const specs = [registry.register(capability('harbor.cargo.load')), registry.register(capability('harbor.cargo.route', 'macro'))];
  const state = new FakeState(clock, db, specs);
  const open = async (): Promise<Operations> => {
    state.ops = await Operations.open({ state, db, policy });
    return state.ops;
  };
  const ops = await open();
  const host = new ScriptedHost(state, specs);
  const signal = new AbortController().signal;
  const world: OpsWorld = {
    clock,
    db,
    state,
    host,
    ops,
    specs,
    signal,
    submit: (principal, request, parent) => host.serve(state.ops.submit(principal, submitBody(request, parent), signal)),
    reopen: async () => {
      await state.ops.close();
      world.ops = await open();
      return world.ops;
    },
  };
  return world;
}

/** A fresh database of `kind`; `close` drops it. */
export async function openTestDb(kind: 'pglite' | 'postgres'): Promise<{ db: Db; url?: string; dir?: string; close(): Promise<void> }> {
  if (kind === 'postgres') {
    if (PG_URL === undefined) throw new Error('AIGENORA_TEST_PG_URL is not set');
    const fresh = await freshPgDatabase(PG_URL);
    const db = await openDb({ url: fresh.url });
    return {
      db,
      url: fresh.url,
      close: async () => {
        await db.close();
        await fresh.drop();
      },
    };
  }
  const dir = mkdtempSync(join(tmpdir(), 'aigenora-rin-ops-'));
  const db = await openDb({ dir });
  return {
    db,
    dir,
    close: async () => {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Registers a suite once per database engine; PostgreSQL with AIGENORA_TEST_PG_URL (see describeEachDb). */
export const describeOpsDbs = describeEachDb;

/**
 * One in-memory PGlite for a test file and a fresh world (tables emptied, a controller lease on
 * ACTOR held by alice) before each test; the returned function gives the current world.
 */
export function useOpsWorld(): () => OpsWorld {
  let db: Db | undefined;
  let world: OpsWorld | undefined;
  beforeAll(async () => {
    db = await openDb({});
  });
  afterAll(async () => {
    await db?.close();
  });
  beforeEach(async () => {
    world = await openOpsWorld(db!);
    world.state.acquire(ACTOR);
  });
  return () => world!;
}

/** Awaits a promise that must fail with a RinError of `code`. */
export async function rejects(p: Promise<unknown>, code: RinError['code']): Promise<RinError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e, `expected RinError ${code}`).toBeInstanceOf(RinError);
  expect((e as RinError).code).toBe(code);
  return e as RinError;
}
