/**
 * AdapterCoordinator: seals an adapter's bindings with the host registry and owns the final
 * authority-thread gate before the game executes anything (R53–R59). Each adapter call runs inside the
 * dispatcher; whatever the adapter returns is checked before it leaves the host.
 */
import { goJsonEncode } from '../../crypto/gojson.js';
import { RinError } from '../errors.js';
import { HostRegistry } from '../registry.js';
import type {
  ActionBindingResult,
  ActionHostSnapshot,
  ActionRequest,
  ActorTarget,
  CapabilitySnapshot,
  HostControlDelivery,
  HostManifest,
  ObservationEnvelope,
  ObservationQuery,
} from '../types.js';
import { isMonotonicRunUpdate, isTerminalActionRunStatus } from '../run.js';
import {
  validateActionOutcome,
  validateActionRun,
  validateEpoch,
  validateObservationEnvelope,
  validateObservationQuery,
  validateTimepoint,
} from '../validate.js';
import type { AdapterOperation, AdapterPolicyFacts, AdapterResult, AdapterSnapshot, AdapterTarget, HostAdapter, HostWorldSource } from './adapter.js';
import type { AuthorityDispatcher } from './authority.js';
import { clone } from './clone.js';
import { validateActionDelivery } from './delivery.js';

export const MAX_ADAPTER_OPERATIONS = 4096;
export const MAX_ADAPTER_CAPABILITIES = 512;

const isTerminalRun = isTerminalActionRunStatus;

/** A refusal by HostKit itself (not by a model validator): code `invalid` unless a more exact code applies. */
export function hostkitError(message: string, code: RinError['code'] = 'invalid'): RinError {
  return new RinError(code, message);
}

interface OperationState {
  operation: AdapterOperation;
  fingerprint: string;
  result: AdapterResult;
}

export class AdapterCoordinator {
  private readonly operations = new Map<string, OperationState>();
  /** Executions in flight, so a delivery replayed while its first attempt runs waits for that attempt. */
  private readonly executing = new Map<string, { fingerprint: string; done: Promise<AdapterResult> }>();

  private constructor(
    private readonly adapter: HostAdapter,
    readonly dispatcher: AuthorityDispatcher,
    private readonly registry: HostRegistry,
    private readonly hostManifest: HostManifest,
    private readonly source: HostWorldSource | undefined,
  ) {}

  /** Validates the manifest and seals the adapter's capability catalog before any work is accepted (R54). */
  static async create(game: HostAdapter, dispatcher: AuthorityDispatcher): Promise<AdapterCoordinator> {
    const adapter = typedFailures(game);
    const manifest = clone(adapter.manifest());
    const registry = new HostRegistry(manifest);
    const specs = clone(await dispatcher.dispatch(() => adapter.listCapabilities()));
    if (!Array.isArray(specs) || specs.length === 0) throw hostkitError('adapter must publish at least one capability');
    if (specs.length > MAX_ADAPTER_CAPABILITIES) throw hostkitError('adapter publishes more than 512 capabilities');
    specs.forEach((spec, index) => {
      try {
        registry.register(spec);
      } catch (e) {
        throw withContext(`register adapter capability ${index}`, e);
      }
    });
    return new AdapterCoordinator(adapter, dispatcher, registry, manifest, publicationSource(game));
  }

  /** The game's description of its worlds for publication, when the adapter provides one. */
  worldSource(): HostWorldSource | undefined {
    return this.source;
  }

  manifest(): HostManifest {
    return clone(this.hostManifest);
  }

  /** The sealed catalog, sorted by (id, version). */
  capabilities(): CapabilitySnapshot {
    return this.registry.snapshot();
  }

  /** Observe on the authority thread; the envelope must belong to exactly the queried host/world/actor/epoch (R56). */
  async observe(query: ObservationQuery): Promise<ObservationEnvelope> {
    validateObservationQuery(query);
    const envelope = clone(await this.dispatcher.dispatch(() => this.adapter.observe(clone(query))));
    validateObservationEnvelope(envelope);
    if (
      envelope.host_id !== query.host_id ||
      envelope.world_id !== query.world_id ||
      envelope.actor_id !== query.actor_id ||
      !same(envelope.epoch, query.expected_epoch)
    ) {
      throw hostkitError('adapter observation does not match query authority', 'stale');
    }
    if (envelope.sequence < (query.after_sequence ?? 0)) throw hostkitError('adapter observation sequence moved backwards', 'stale');
    return envelope;
  }

  /** The authoritative snapshot for a gateway `snapshot` request. */
  async snapshotAction(target: ActorTarget): Promise<ActionHostSnapshot> {
    const adapterTarget = makeTarget(target, target.actor_id);
    const snapshot = clone(await this.dispatcher.dispatch(() => this.adapter.snapshot(clone(adapterTarget))));
    validateSnapshot(snapshot, adapterTarget);
    return { now: snapshot.now, epoch: snapshot.epoch, observation_sequence: snapshot.observation_seq };
  }

  /**
   * Snapshot, request validation, target resolution, effect preview and registry sealing in one
   * dispatch (R53, R55): nothing can change the game between the checks and the seal.
   */
  async bindRequest(target: ActorTarget, request: ActionRequest): Promise<ActionBindingResult> {
    const adapterTarget = makeTarget(target, request.actor_id);
    return this.dispatcher.dispatch(async () => {
      const snapshot = clone(await this.adapter.snapshot(clone(adapterTarget)));
      validateSnapshot(snapshot, adapterTarget);
      this.registry.validateRequest(request, snapshot.epoch, snapshot.observation_seq);
      const binding = clone(await this.adapter.bind(clone(adapterTarget), clone(request)));
      const effects = clone(await this.adapter.preview(clone(adapterTarget), clone(request), clone(binding)));
      const bound = this.registry.sealBinding(
        request,
        {
          binding_id: binding.binding_id,
          ...(binding.resolved_targets && binding.resolved_targets.length > 0 ? { resolved_targets: binding.resolved_targets } : {}),
          effect_preview: effects,
          valid_until: binding.valid_until,
        },
        snapshot.now,
        snapshot.epoch,
        snapshot.observation_seq,
      );
      return {
        bound_action: bound,
        snapshot: { now: snapshot.now, epoch: snapshot.epoch, observation_sequence: snapshot.observation_seq },
      };
    });
  }

  /**
   * Runs one delivered operation exactly once (R57): a replay of the same operation returns the cached
   * result without touching the game; the same operation id with another bound action is refused.
   * Snapshot, final authorization, execution and result validation share one dispatch.
   */
  async executeDelivery(delivery: HostControlDelivery): Promise<AdapterResult> {
    const request = delivery.request;
    validateActionDelivery(request);
    const operation: AdapterOperation = clone({
      operation_id: request.operation_id,
      target: { host_id: request.host_id, world_id: request.world_id, actor_id: request.actor_id },
      principal: request.principal,
      action: request.bound_action,
    });
    const fingerprint = goJsonEncode(operation);
    const known = this.operations.get(operation.operation_id);
    if (known) {
      if (known.fingerprint !== fingerprint) throw hostkitError('operation ID was reused for a different bound action', 'conflict');
      return clone(known.result);
    }
    const inFlight = this.executing.get(operation.operation_id);
    if (inFlight) {
      if (inFlight.fingerprint !== fingerprint) throw hostkitError('operation ID was reused for a different bound action', 'conflict');
      return clone(await inFlight.done);
    }
    if (this.operations.size + this.executing.size >= MAX_ADAPTER_OPERATIONS) throw hostkitError('adapter operation cache is full', 'capacity');
    const done = this.dispatcher.dispatch(async () => {
      const snapshot = clone(await this.adapter.snapshot(clone(operation.target)));
      validateSnapshot(snapshot, operation.target);
      this.registry.authorize(operation.action, snapshot.now, snapshot.epoch, snapshot.observation_seq, operation.principal);
      const result = clone(await this.adapter.execute(clone(operation)));
      this.validateResult(operation, result);
      return result;
    });
    this.executing.set(operation.operation_id, { fingerprint, done });
    try {
      const result = await done;
      this.operations.set(operation.operation_id, { operation, fingerprint, result });
      return clone(result);
    } finally {
      this.executing.delete(operation.operation_id);
    }
  }

  /** Newer authoritative progress without executing again. */
  verify(operationId: string): Promise<AdapterResult> {
    return this.update(operationId, (operation) => this.adapter.verify(operation));
  }

  /** Asks the game to stop; refused before the adapter is called when the capability cannot cancel (R58). */
  cancel(operationId: string): Promise<AdapterResult> {
    const state = this.operations.get(operationId);
    if (!state) return Promise.reject(hostkitError('adapter operation is not known', 'not_found'));
    const spec = this.registry.resolve(state.operation.action.capability);
    if (!spec || spec.digest !== state.operation.action.spec_digest) {
      return Promise.reject(hostkitError('adapter operation capability was revoked', 'stale'));
    }
    if (spec.cancellation === 'unsupported') {
      return Promise.reject(hostkitError('adapter operation does not support cancellation', 'conflict'));
    }
    return this.update(operationId, (operation) => this.adapter.cancel(operation));
  }

  /** The last result HostKit accepted for an operation, if it is still cached. */
  result(operationId: string): AdapterResult | undefined {
    const state = this.operations.get(operationId);
    return state ? clone(state.result) : undefined;
  }

  /** Ids of cached operations that have not reached a terminal run. */
  unfinished(): string[] {
    return [...this.operations.values()].filter((s) => !isTerminalRun(s.result.run.status)).map((s) => s.operation.operation_id);
  }

  /** Releases one terminal cache entry once the control plane holds its result. */
  forgetOperation(operationId: string): boolean {
    const state = this.operations.get(operationId);
    if (!state || !isTerminalRun(state.result.run.status)) return false;
    return this.operations.delete(operationId);
  }

  /** The adapter's policy vocabulary, sorted, unique, 1..512 entries of 1..128 bytes each (R59). */
  async policyFacts(target: AdapterTarget): Promise<AdapterPolicyFacts> {
    const facts = clone(await this.dispatcher.dispatch(() => this.adapter.policyFacts(clone(target))));
    return {
      known_effect_kinds: normalizeFacts('effect kinds', facts.known_effect_kinds),
      known_scopes: normalizeFacts('scopes', facts.known_scopes),
    };
  }

  private async update(operationId: string, call: (operation: AdapterOperation) => AdapterResult | Promise<AdapterResult>): Promise<AdapterResult> {
    const state = this.operations.get(operationId);
    if (!state) throw hostkitError('adapter operation is not known', 'not_found');
    const result = await this.dispatcher.dispatch(async () => {
      const value = clone(await call(clone(state.operation)));
      this.validateResult(state.operation, value);
      return value;
    });
    // Read again: another update may have landed while this one waited for the authority thread.
    const current = this.operations.get(operationId) ?? state;
    if (!isMonotonicRunUpdate(current.result.run, result.run)) throw hostkitError('adapter operation progress moved backwards', 'conflict');
    this.operations.set(operationId, { ...current, result });
    return clone(result);
  }

  /** R58: what an adapter reports must be a valid, self-consistent result for exactly this operation. */
  private validateResult(operation: AdapterOperation, result: AdapterResult): void {
    if (!result || typeof result !== 'object' || !result.run) throw hostkitError('adapter result has no run');
    try {
      validateActionRun(result.run);
    } catch (e) {
      throw withContext('validate adapter run', e);
    }
    if (result.run.operation_id !== operation.operation_id) throw hostkitError('adapter run operation ID does not match delivery');
    const terminal = isTerminalRun(result.run.status);
    if (terminal !== (result.outcome !== undefined)) throw hostkitError('terminal adapter run and Outcome presence do not match');
    if (result.outcome) {
      try {
        validateActionOutcome(result.outcome);
      } catch (e) {
        throw withContext('validate adapter outcome', e);
      }
      if (result.outcome.operation_id !== operation.operation_id || result.outcome.status !== result.run.status) {
        throw hostkitError('adapter Outcome does not match run');
      }
      if (!same(result.outcome.epoch, operation.action.expected_epoch) || result.outcome.world_seq < operation.action.observation_sequence) {
        throw hostkitError('adapter Outcome does not match bound timeline');
      }
    }
    if (!terminal && result.output !== undefined) throw hostkitError('non-terminal adapter result contains Output');
    if (result.run.status === 'succeeded' && result.output === undefined) throw hostkitError('successful adapter result has no structured Output');
    if (result.output !== undefined) {
      try {
        this.registry.validateSpecOutput(operation.action.capability, operation.action.spec_digest, result.output.text);
      } catch (e) {
        throw withContext('validate adapter Output', e);
      }
    }
  }
}

function same(left: unknown, right: unknown): boolean {
  return goJsonEncode(left) === goJsonEncode(right);
}

function withContext(context: string, e: unknown): RinError {
  if (e instanceof RinError) return new RinError(e.code, `${context}: ${e.message}`, e.field, e.stage);
  return new RinError('internal', `${context}: ${e instanceof Error ? e.message : String(e)}`);
}

function makeTarget(target: ActorTarget, actorId: string): AdapterTarget {
  if (!target.host_id || !target.world_id || !target.actor_id) throw hostkitError('adapter target identifiers are required');
  if (target.actor_id !== actorId) throw hostkitError('adapter target does not match action actor');
  return { host_id: target.host_id, world_id: target.world_id, actor_id: target.actor_id };
}

function validateSnapshot(snapshot: AdapterSnapshot, target: AdapterTarget): void {
  validateTimepoint(snapshot.now, 'snapshot.now');
  validateEpoch(snapshot.epoch, 'snapshot.epoch');
  if (snapshot.epoch.world_id !== target.world_id) throw hostkitError('adapter snapshot belongs to another world');
  if (!Number.isSafeInteger(snapshot.observation_seq) || snapshot.observation_seq < 1) {
    throw hostkitError('adapter snapshot observation sequence is required');
  }
}

function normalizeFacts(what: string, values: unknown): string[] {
  if (!Array.isArray(values) || values.length === 0 || values.length > 512) throw hostkitError(`adapter policy facts require 1 to 512 ${what}`);
  const sorted = values.map((v) => {
    if (typeof v !== 'string' || v.length === 0 || Buffer.byteLength(v, 'utf8') > 128) {
      throw hostkitError('adapter policy fact identifiers must contain 1 to 128 bytes');
    }
    return v;
  });
  sorted.sort((a, b) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')));
  for (let i = 1; i < sorted.length; i++) {
    if (sorted[i] === sorted[i - 1]) throw hostkitError('adapter policy facts contain duplicates');
  }
  return sorted;
}

const ADAPTER_CALLS = ['snapshot', 'observe', 'listCapabilities', 'bind', 'preview', 'execute', 'cancel', 'verify', 'policyFacts'] as const;

/** The adapter with every failure typed: a game's own exception becomes RinError `internal` naming the call. */
function typedFailures(adapter: HostAdapter): HostAdapter {
  const wrapped: Record<string, unknown> = { manifest: () => adapter.manifest() };
  for (const name of ADAPTER_CALLS) {
    const method = adapter[name] as (...args: unknown[]) => unknown;
    wrapped[name] = async (...args: unknown[]) => {
      try {
        return await method.apply(adapter, args);
      } catch (e) {
        throw e instanceof RinError ? e : new RinError('internal', `adapter ${name}: ${e instanceof Error ? e.message : String(e)}`);
      }
    };
  }
  return wrapped as unknown as HostAdapter;
}

function publicationSource(adapter: HostAdapter): HostWorldSource | undefined {
  const candidate = adapter as Partial<HostWorldSource>;
  if (typeof candidate.describe !== 'function' || typeof candidate.actorState !== 'function') return undefined;
  return { describe: () => candidate.describe!.call(adapter), actorState: (id) => candidate.actorState!.call(adapter, id) };
}
