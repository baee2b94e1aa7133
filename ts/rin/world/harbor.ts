/**
 * A small deterministic harbor, the built-in world of the demo and the tests (an in-memory reference
 * adapter, R98). Boats are the actors; crates wait on a shared dock; one slipway repairs hulls in turn.
 * Time is a virtual step clock that moves only when `tick()` is called, so every run is reproducible.
 *
 * The observation sequence counts state changes of the whole harbor. Each boat remembers the sequence
 * of its last change: an operation bound before a change to its boat (or to a boat it targets) is
 * refused at execution, whatever the registry's observation window would still allow.
 *
 * Every method that reads or writes the harbor must run on the authority thread (the coordinator's
 * dispatcher); `tick`, `squall` and `restart` are game events the caller dispatches the same way.
 */
import { RinError } from '../errors.js';
import type {
  AdapterBinding,
  AdapterOperation,
  AdapterPolicyFacts,
  AdapterResult,
  AdapterSnapshot,
  AdapterTarget,
  HostAdapter,
  HostWorldDescription,
  HostWorldSource,
} from '../hostkit/adapter.js';
import type {
  ActionOutcome,
  ActionRequest,
  ActionRun,
  ActionRunStatus,
  CapabilitySpec,
  Effect,
  Epoch,
  HostManifest,
  HostRef,
  ObservationEnvelope,
  ObservationFact,
  ObservationQuery,
  ObservationResource,
  Timepoint,
} from '../types.js';
import { HOST_CONTRACT_VERSION } from '../types.js';
import { budgetOf, CAPABILITY, EFFECT_KINDS, EFFECT_SCOPES, harborCapabilities, harborObservationSchema, HARBOR_VERSION, raw } from './catalog.js';

export type Berth = 'dock' | 'sea' | 'slipway' | 'sunk';

export interface Boat {
  actor_id: string;
  name: string;
  berth: Berth;
  cargo: number;
  capacity: number;
  hull: number;
  miles: number;
}

export interface HarborOptions {
  /** Principal that owns every boat (ActorPublication.owner_principal_id). */
  owner: string;
  /** Principal allowed to control the boats (external decision authority); defaults to the owner. */
  controller?: string;
  worldId?: string;
  sessionId?: string;
  dockCrates?: number;
  /**
   * The authority thread (e.g. the coordinator's SerialDispatcher): when given, every game method
   * refuses to run unless that dispatcher is running work, so a test proves nothing bypasses it.
   */
  authority?: { readonly active: boolean };
  /** Boats by actor id; defaults to gull, tern and puffin. */
  boats?: Array<Pick<Boat, 'actor_id' | 'name'> & Partial<Boat>>;
}

interface Task {
  operation: AdapterOperation;
  capability: string;
  /** Steps of work needed, and done so far. */
  total: number;
  done: number;
  waiting: boolean;
  progressSeq: number;
  result: AdapterResult;
}

const BOAT_NAMESPACE = 'harbor.fleet';
const SLIPWAY_STEPS = 2;

function refuse(code: RinError['code'], message: string): RinError {
  return new RinError(code, `harbor: ${message}`);
}

function argumentsOf(text: string): Record<string, unknown> {
  const value = JSON.parse(text) as unknown;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw refuse('invalid', 'arguments must be an object');
  return value as Record<string, unknown>;
}

function intArgument(args: Record<string, unknown>, name: string): number {
  const value = args[name];
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw refuse('invalid', `argument ${name} must be an integer`);
  return value;
}

export class HarborWorld implements HostAdapter, HostWorldSource {
  readonly worldId: string;
  private readonly owner: string;
  private readonly controller: string;
  private epochValue: Epoch;
  private step = 1;
  private seq = 1;
  private dockCrates: number;
  private readonly boats = new Map<string, Boat>();
  /** The sequence of each boat's last change. */
  private readonly changedAt = new Map<string, number>();
  private tasks = new Map<string, Task>();
  private slipway: string[] = [];
  private bindings = 0;
  private readonly authority: { readonly active: boolean } | undefined;

  constructor(options: HarborOptions) {
    this.authority = options.authority;
    this.owner = options.owner;
    this.controller = options.controller ?? options.owner;
    this.worldId = options.worldId ?? 'harbor';
    this.epochValue = { session_id: options.sessionId ?? 'harbor.session', world_id: this.worldId, host: 1, world: 1, timeline: 1 };
    this.dockCrates = options.dockCrates ?? 40;
    const boats = options.boats ?? [
      { actor_id: 'gull', name: 'Gull' },
      { actor_id: 'tern', name: 'Tern' },
      { actor_id: 'puffin', name: 'Puffin' },
    ];
    for (const b of boats) {
      this.boats.set(b.actor_id, { berth: 'dock', cargo: 0, capacity: 12, hull: 100, miles: 0, ...b });
      this.changedAt.set(b.actor_id, this.seq);
    }
  }

  // ---- game state (read-only views and events) ----

  get now(): Timepoint {
    return { clock: 'step', value: this.step };
  }

  get epoch(): Epoch {
    return { ...this.epochValue };
  }

  get sequence(): number {
    return this.seq;
  }

  boat(actorId: string): Boat {
    const boat = this.boats.get(actorId);
    if (!boat) throw refuse('not_found', `no boat is crewed by actor ${actorId}`);
    return { ...boat };
  }

  get crates(): number {
    return this.dockCrates;
  }

  /** A deterministic digest of the whole game state (conformance: did anything change?). */
  stateDigest(): string {
    return JSON.stringify({
      epoch: this.epochValue,
      step: this.step,
      seq: this.seq,
      dock: this.dockCrates,
      boats: [...this.boats.values()],
      slipway: this.slipway,
      tasks: [...this.tasks.values()].map((t) => [t.operation.operation_id, t.done, t.result.run.status]),
    });
  }

  /** Worlds and actors as the host publishes them. */
  describe(): HostWorldDescription[] {
    this.onAuthority('describe');
    return [
      {
        world_id: this.worldId,
        display_name: 'Harbor',
        actors: [...this.boats.values()]
          .filter((b) => b.berth !== 'sunk')
          .map((b) => ({
            actor_id: b.actor_id,
            owner_principal_id: this.owner,
            display_name: `Skipper of the ${b.name}`,
            decision_authority: { source: 'external', controller_principal_id: this.controller, revision: 1, persona_mode: 'agent-avatar' },
          })),
      },
    ];
  }

  /** The actor's public state for the publication (a JSON object). */
  actorState(actorId: string): Record<string, unknown> {
    this.onAuthority('actorState');
    const b = this.boat(actorId);
    return { berth: b.berth, cargo: b.cargo, hull: b.hull };
  }

  /** Every change to the boats or the dock moves the sequence; the step and the host epoch move the rest. */
  publicationVersion(): string {
    this.onAuthority('publicationVersion');
    return `${this.epochValue.host}.${this.seq}.${this.step}`;
  }

  /** One world step: voyages advance, the slipway works, shifts count down. */
  tick(): void {
    this.onAuthority('tick');
    this.step += 1;
    for (const task of [...this.tasks.values()]) {
      if (task.result.outcome) continue;
      if (task.capability === CAPABILITY.repair) continue;
      task.done += 1;
      if (task.capability === CAPABILITY.sail) this.touch([task.operation.target.actor_id]);
      if (task.done >= task.total) this.finish(task);
      else this.progress(task, 'running');
    }
    this.workSlipway();
  }

  /** An unrelated harbor event (weather) that changes every boat: prepared bindings go stale. */
  squall(): void {
    this.onAuthority('squall');
    for (const boat of this.boats.values()) if (boat.hull > 10) boat.hull -= 10;
    this.touch([...this.boats.keys()]);
  }

  /** The authoritative host was replaced: a new host epoch, and work in flight is gone. */
  restart(): void {
    this.onAuthority('restart');
    this.epochValue = { ...this.epochValue, host: this.epochValue.host + 1 };
    for (const task of this.tasks.values()) {
      const boat = this.boats.get(task.operation.target.actor_id);
      if (boat && boat.berth !== 'sunk') boat.berth = 'dock';
    }
    this.tasks = new Map();
    this.slipway = [];
    this.step += 1;
    this.seq = 1;
    for (const id of this.boats.keys()) this.changedAt.set(id, 1);
  }

  // ---- HostAdapter ----

  manifest(): HostManifest {
    return {
      contract_version: HOST_CONTRACT_VERSION,
      adapter_id: 'aigenora.harbor',
      adapter_version: HARBOR_VERSION,
      engine_id: 'aigenora.harbor',
      engine_version: HARBOR_VERSION,
      runtime: 'node',
      platform: 'any',
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

  listCapabilities(): CapabilitySpec[] {
    this.onAuthority('listCapabilities');
    return harborCapabilities();
  }

  policyFacts(): AdapterPolicyFacts {
    this.onAuthority('policyFacts');
    return { known_effect_kinds: [...EFFECT_KINDS], known_scopes: [...EFFECT_SCOPES] };
  }

  snapshot(target: AdapterTarget): AdapterSnapshot {
    this.onAuthority('snapshot');
    this.requireTarget(target);
    return { now: this.now, epoch: this.epoch, observation_seq: this.seq };
  }

  observe(query: ObservationQuery): ObservationEnvelope {
    this.onAuthority('observe');
    const target = { host_id: query.host_id, world_id: query.world_id, actor_id: query.actor_id };
    const boat = this.requireTarget(target);
    const self = this.boatRef(boat.actor_id);
    const kinds = query.kinds && query.kinds.length > 0 ? new Set(query.kinds) : undefined;
    const keep = (kind: string): boolean => !kinds || kinds.has(kind);
    const facts: ObservationFact[] = [
      { fact_id: 'berth', kind: 'harbor.berth', subject: self, value: raw(boat.berth) },
      { fact_id: 'cargo', kind: 'harbor.cargo', subject: self, value: raw(boat.cargo) },
      { fact_id: 'dock-crates', kind: 'harbor.dock', value: raw(this.dockCrates) },
      { fact_id: 'hull', kind: 'harbor.hull', subject: self, value: raw(boat.hull) },
    ].filter((f) => keep(f.kind));
    const resources: ObservationResource[] = [...this.boats.values()]
      .filter(() => keep('harbor.boat'))
      .map((b) => ({
        ref: this.boatRef(b.actor_id),
        kind: 'harbor.boat',
        ownership: b.actor_id === boat.actor_id ? ('actor' as const) : ('player' as const),
        scope: 'harbor.public',
        ...(b.cargo > 0 ? { quantity: b.cargo, unit: 'crate' } : {}),
        attributes: raw({ berth: b.berth, hull: b.hull }),
      }));
    const schema = harborObservationSchema();
    return {
      observation_id: `observation.${boat.actor_id}.${this.epochValue.host}.${this.seq}`,
      host_id: query.host_id,
      world_id: this.worldId,
      actor_id: boat.actor_id,
      epoch: this.epoch,
      sequence: this.seq,
      observed_at: this.now,
      schema_ref: { id: 'harbor.observation', version: HARBOR_VERSION, sha256: schema.sha256 },
      payload: raw({
        step: this.step,
        actor_id: boat.actor_id,
        boat: { name: boat.name, berth: boat.berth, cargo: boat.cargo, capacity: boat.capacity, hull: boat.hull, miles: boat.miles },
        dock: { crates: this.dockCrates },
        fleet: [...this.boats.values()].map((b) => ({ actor_id: b.actor_id, berth: b.berth })),
      }),
      ...(facts.length > 0 ? { facts: facts.slice(0, query.limit) } : {}),
      ...(resources.length > 0 ? { resources: resources.slice(0, query.limit) } : {}),
    };
  }

  /** Resolves the actor's boat and any targeted boat, and refuses what the harbor cannot do now. */
  bind(target: AdapterTarget, request: ActionRequest): AdapterBinding {
    this.onAuthority('bind');
    const boat = this.requireTarget(target);
    const args = argumentsOf(request.arguments.text);
    const id = request.capability.id;
    if (boat.berth === 'sunk') throw refuse('conflict', `${boat.name} has sunk`);
    const resolved: HostRef[] = [];
    if (id === CAPABILITY.tow) {
      const towed = this.resolveBoatRef(request.target_refs?.[0]);
      if (towed.actor_id === boat.actor_id) throw refuse('invalid', 'a boat cannot tow itself');
      if (towed.berth !== 'sea') throw refuse('conflict', `${towed.name} is not at sea`);
      resolved.push(this.boatRef(towed.actor_id));
    } else if (request.target_refs && request.target_refs.length > 0) {
      throw refuse('invalid', `${id} takes no target`);
    }
    if (id !== CAPABILITY.inspect && id !== CAPABILITY.scuttle && boat.berth !== 'dock') {
      throw refuse('conflict', `${boat.name} is not at the dock`);
    }
    if (id === CAPABILITY.load) {
      const crates = intArgument(args, 'crates');
      if (crates > this.dockCrates) throw refuse('conflict', `only ${this.dockCrates} crates wait on the dock`);
      if (boat.cargo + crates > boat.capacity) throw refuse('conflict', `${boat.name} holds at most ${boat.capacity} crates`);
    }
    this.bindings += 1;
    return {
      binding_id: `binding.${this.epochValue.host}.${this.bindings}`,
      ...(resolved.length > 0 ? { resolved_targets: resolved } : {}),
      valid_until: { clock: 'step', value: this.step + budgetOf(id) },
    };
  }

  /** Effects are derived from the harbor, never from the controller's words. */
  preview(target: AdapterTarget, request: ActionRequest, binding: AdapterBinding): Effect[] {
    this.onAuthority('preview');
    const boat = this.requireTarget(target);
    const args = argumentsOf(request.arguments.text);
    const subject = this.boatRef(boat.actor_id);
    // Members in the contract's order; by default an effect on the actor's own boat, reversible, low risk.
    const effect = (
      effect_id: string,
      kind: string,
      operation: Effect['operation'],
      attributes: Record<string, unknown>,
      more: Partial<Effect> = {},
    ): Effect => ({
      effect_id,
      kind,
      operation,
      subject_ref: subject,
      ...(more.target_ref ? { target_ref: more.target_ref } : {}),
      ownership: more.ownership ?? 'actor',
      scope: more.scope ?? 'harbor.public',
      ...(more.quantity ? { quantity: more.quantity, unit: more.unit } : {}),
      reversible: more.reversible ?? true,
      risk: more.risk ?? 'low',
      attributes: raw(attributes),
    });
    switch (request.capability.id) {
      case CAPABILITY.inspect:
        return [effect('survey', 'harbor.survey', 'read', {})];
      case CAPABILITY.load:
        return [effect('load', 'harbor.cargo', 'transfer', { crates_on_dock: this.dockCrates }, { quantity: intArgument(args, 'crates'), unit: 'crate' })];
      case CAPABILITY.sail: {
        const distance = intArgument(args, 'distance');
        return [effect('voyage', 'harbor.voyage', 'update', { distance }, { quantity: distance, unit: 'mile' })];
      }
      case CAPABILITY.repair:
        // The slipway is shared and a repair cannot be undone: the guarded policy asks a human first.
        return [
          effect(
            'slipway',
            'harbor.repair',
            'update',
            { hull: boat.hull },
            { ownership: 'shared', scope: 'harbor.slipway', reversible: false, risk: 'moderate' },
          ),
        ];
      case CAPABILITY.shift:
        return [effect('plan', 'harbor.plan', 'execute', { steps: intArgument(args, 'steps') })];
      case CAPABILITY.tow: {
        const towed = binding.resolved_targets?.[0];
        if (!towed) throw refuse('invalid', 'tow needs a resolved target');
        return [effect('tow', 'harbor.tow', 'transfer', {}, { target_ref: towed, ownership: 'player', risk: 'high' })];
      }
      case CAPABILITY.scuttle:
        return [effect('scuttle', 'harbor.vessel', 'delete', {}, { reversible: false, risk: 'critical' })];
      default:
        throw refuse('invalid', `unknown capability ${request.capability.id}`);
    }
  }

  execute(operation: AdapterOperation): AdapterResult {
    this.onAuthority('execute');
    const known = this.tasks.get(operation.operation_id);
    if (known) return known.result;
    const boat = this.requireTarget(operation.target);
    const action = operation.action;
    if (action.expected_epoch.host !== this.epochValue.host) throw refuse('stale', 'the operation belongs to a previous host');
    for (const ref of [this.boatRef(boat.actor_id), ...(action.resolved_targets ?? [])]) {
      const changed = this.changedAt.get(ref.key) ?? Number.MAX_SAFE_INTEGER;
      if (changed > action.observation_sequence) throw refuse('stale', `boat ${ref.key} changed after observation ${action.observation_sequence}`);
    }
    const args = argumentsOf(action.normalized_arguments.text);
    const task: Task = {
      operation,
      capability: action.capability.id,
      total: 0,
      done: 0,
      waiting: false,
      progressSeq: 0,
      result: { run: { operation_id: operation.operation_id, status: 'queued', progress_seq: 1, progress: 0, updated_at: this.now } },
    };
    this.tasks.set(operation.operation_id, task);
    const live = this.boats.get(boat.actor_id) as Boat;
    switch (action.capability.id) {
      case CAPABILITY.inspect:
        return this.complete(task, 'succeeded', 'Surveyed the boat and the dock.', {
          berth: live.berth,
          cargo: live.cargo,
          hull: live.hull,
          crates_on_dock: this.dockCrates,
        });
      case CAPABILITY.load: {
        const crates = intArgument(args, 'crates');
        if (crates > this.dockCrates || live.cargo + crates > live.capacity) {
          return this.complete(task, 'failed', 'The crates no longer fit.', undefined, 'harbor.no-room');
        }
        this.dockCrates -= crates;
        live.cargo += crates;
        this.touch([...this.boats.keys()]);
        return this.complete(task, 'succeeded', `Loaded ${crates} crates.`, { cargo: live.cargo, crates_on_dock: this.dockCrates });
      }
      case CAPABILITY.sail:
        task.total = intArgument(args, 'distance');
        live.berth = 'sea';
        this.touch([live.actor_id]);
        return this.progress(task, 'running', 'Under way.');
      case CAPABILITY.shift:
        task.total = intArgument(args, 'steps');
        this.touch([live.actor_id]);
        return this.progress(task, 'running', 'The shift has begun.');
      case CAPABILITY.repair:
        task.total = SLIPWAY_STEPS;
        task.waiting = true;
        this.slipway.push(operation.operation_id);
        live.berth = 'slipway';
        this.touch([live.actor_id]);
        return this.progress(task, 'queued', 'Waiting for the slipway.');
      case CAPABILITY.tow: {
        const towedRef = action.resolved_targets?.[0];
        const towed = towedRef ? this.boats.get(towedRef.key) : undefined;
        if (!towed || towed.berth !== 'sea') return this.complete(task, 'failed', 'Nothing to tow.', undefined, 'harbor.no-target');
        this.abandonTasksOf(towed.actor_id);
        towed.berth = 'dock';
        this.touch([live.actor_id, towed.actor_id]);
        return this.complete(task, 'succeeded', `Towed the ${towed.name}.`, { towed: towed.actor_id });
      }
      case CAPABILITY.scuttle:
        live.berth = 'sunk';
        live.cargo = 0;
        this.touch([live.actor_id]);
        return this.complete(task, 'succeeded', `The ${live.name} sank.`, { sunk: true });
      default:
        this.tasks.delete(operation.operation_id);
        throw refuse('invalid', `unknown capability ${action.capability.id}`);
    }
  }

  verify(operation: AdapterOperation): AdapterResult {
    this.onAuthority('verify');
    const task = this.tasks.get(operation.operation_id);
    if (!task) throw refuse('not_found', `operation ${operation.operation_id} is not running here`);
    return task.result;
  }

  /** Cooperative: the boat stops at the next safe point, which in this harbor is right now. */
  cancel(operation: AdapterOperation): AdapterResult {
    this.onAuthority('cancel');
    const task = this.tasks.get(operation.operation_id);
    if (!task) throw refuse('not_found', `operation ${operation.operation_id} is not running here`);
    if (task.result.outcome) return task.result;
    const boat = this.boats.get(task.operation.target.actor_id) as Boat;
    if (task.capability === CAPABILITY.sail) {
      boat.miles += task.done;
      boat.berth = 'dock';
    }
    if (task.capability === CAPABILITY.repair) {
      this.slipway = this.slipway.filter((id) => id !== task.operation.operation_id);
      boat.berth = 'dock';
    }
    this.touch([boat.actor_id]);
    return this.complete(task, 'cancelled', 'Stopped on request.', undefined, 'harbor.cancelled');
  }

  // ---- internals ----

  private onAuthority(what: string): void {
    if (this.authority && !this.authority.active) throw refuse('internal', `${what} ran outside the authority thread`);
  }

  private requireTarget(target: AdapterTarget): Boat {
    if (target.world_id !== this.worldId) throw refuse('not_found', `no world ${target.world_id}`);
    const boat = this.boats.get(target.actor_id);
    if (!boat) throw refuse('not_found', `no actor ${target.actor_id}`);
    return boat;
  }

  private boatRef(actorId: string): HostRef {
    return { namespace: BOAT_NAMESPACE, type: 'boat', key: actorId, ephemeral: false, epoch: this.epoch };
  }

  private resolveBoatRef(ref: HostRef | undefined): Boat {
    if (!ref || ref.namespace !== BOAT_NAMESPACE || ref.type !== 'boat') throw refuse('invalid', 'the target is not a boat of this harbor');
    const boat = this.boats.get(ref.key);
    if (!boat) throw refuse('not_found', 'the target boat does not exist');
    return boat;
  }

  private touch(actorIds: string[]): void {
    this.seq += 1;
    for (const id of actorIds) this.changedAt.set(id, this.seq);
  }

  /** The task's next run report (progress_seq +1). */
  private run(task: Task, status: ActionRunStatus, progress: number, message?: string): ActionRun {
    task.progressSeq += 1;
    return {
      operation_id: task.operation.operation_id,
      status,
      progress_seq: task.progressSeq,
      progress,
      updated_at: this.now,
      ...(message ? { message } : {}),
    };
  }

  private progress(task: Task, status: ActionRunStatus, message?: string): AdapterResult {
    const progress = status !== 'queued' && task.total > 0 ? Math.min(99, Math.floor((task.done * 100) / task.total)) : 0;
    task.result = { run: this.run(task, status, progress, message) };
    return task.result;
  }

  private complete(task: Task, status: ActionRunStatus, summary: string, output?: Record<string, unknown>, code?: string): AdapterResult {
    const outcome: ActionOutcome = {
      operation_id: task.operation.operation_id,
      status,
      ...(code ? { code } : {}),
      summary,
      epoch: { ...task.operation.action.expected_epoch },
      world_seq: this.seq,
      occurred_at: this.now,
    };
    task.result = {
      run: this.run(task, status, status === 'succeeded' ? 100 : task.result.run.progress),
      outcome,
      ...(output ? { output: raw(output) } : {}),
    };
    return task.result;
  }

  private finish(task: Task): void {
    const boat = this.boats.get(task.operation.target.actor_id) as Boat;
    if (task.capability === CAPABILITY.sail) {
      boat.miles += task.total;
      boat.berth = 'dock';
      this.touch([boat.actor_id]);
      this.complete(task, 'succeeded', `Sailed ${task.total} miles and returned.`, { miles_sailed: task.total, total_miles: boat.miles });
    } else if (task.capability === CAPABILITY.repair) {
      boat.hull = 100;
      boat.berth = 'dock';
      this.touch([boat.actor_id]);
      this.complete(task, 'succeeded', 'The hull is repaired.', { hull: boat.hull });
    } else {
      this.touch([boat.actor_id]);
      this.complete(task, 'succeeded', `The shift of ${task.total} steps is over.`, { steps: task.total });
    }
  }

  /** The slipway takes the first queued boat; its repair then takes SLIPWAY_STEPS ticks. */
  private workSlipway(): void {
    const head = this.slipway[0];
    if (head === undefined) return;
    const task = this.tasks.get(head);
    if (!task || task.result.outcome) {
      this.slipway.shift();
      return;
    }
    if (task.waiting) {
      task.waiting = false;
      this.progress(task, 'running', 'On the slipway.');
      return;
    }
    task.done += 1;
    if (task.done >= task.total) {
      this.slipway.shift();
      this.finish(task);
    } else {
      this.progress(task, 'running', 'On the slipway.');
    }
  }

  /** A towed boat's voyage ends: the environment interrupted it. */
  private abandonTasksOf(actorId: string): void {
    for (const task of this.tasks.values()) {
      if (task.operation.target.actor_id !== actorId || task.result.outcome || task.result.run.status !== 'running') continue;
      this.complete(task, 'interrupted', 'Towed back to the dock.', undefined, 'harbor.towed');
    }
  }
}
