/**
 * The host side of rin.control/v2 over HTTP: connects an AdapterCoordinator (the game) to a control plane.
 *
 * It registers with a lease and keeps it renewed, publishes each world with its actors' capabilities and
 * observations (sequence +1 whenever what it would publish changes), and long-polls for work:
 *  - gateway bind/snapshot requests are answered with `host/gateway-result`, each id answered once (a
 *    redelivered request gets the same answer again, never a second binding);
 *  - deliveries are executed through the coordinator (authorized on the authority thread, exactly once
 *    per operation), then acknowledged; a delivery refused before execution is acknowledged as refused;
 *  - runs and outcomes are reported as the game advances; cancellations are passed to the game.
 * `stop()` ends the poll and unregisters.
 *
 * Failures are RinErrors with the control plane's codes. When the control plane cannot be reached the
 * agent retries with exponential backoff; results not yet delivered wait in a bounded outbox. Every
 * collection the agent keeps is bounded.
 */
import { goJsonEncode, RawJson } from '../crypto/gojson.js';
import { RinControlClient, type FetchLike } from './client.js';
import { RinError } from './errors.js';
import type { AdapterCoordinator } from './hostkit/coordinator.js';
import type { AdapterResult, HostWorldSource } from './hostkit/adapter.js';
import type {
  ActorPublication,
  GatewayErrorCode,
  HostControlBatch,
  HostControlDelivery,
  HostGatewayDelivery,
  HostGatewayResult,
  HostLease,
  WorldPublication,
} from './types.js';
import { CONTROL_CONTRACT_VERSION } from './types.js';
import { ActionRequestShape, BoundActionShape, decodeWireText, EpochShape, PrincipalShape, TimepointShape, type Shape } from './wire.js';

export interface HostAgentOptions {
  baseUrl: string;
  token: string;
  coordinator: AdapterCoordinator;
  /** What to publish; defaults to the coordinator's adapter when it describes its worlds. */
  world?: HostWorldSource;
  hostId: string;
  instanceId: string;
  /** 5000..300000; default 30000. The lease is renewed after a third of it. */
  leaseTtlMillis?: number;
  /** Long-poll wait, 0..25000; default 2000. Progress of running work is reported at least this often. */
  pollWaitMillis?: number;
  /** 1..64; default 16. */
  pollLimit?: number;
  fetch?: FetchLike;
  now?: () => number;
  /** Waits between retries; tests may replace it. */
  sleep?: (ms: number) => Promise<void>;
  /** Non-fatal failures inside the loop (a refused report, a network error being retried). */
  onError?: (error: RinError) => void;
  /** Retries of one request at start before giving up; default 8. */
  startAttempts?: number;
}

export interface HostAgent {
  readonly hostId: string;
  lease(): HostLease;
  /** Reports progress of running work and republishes the world if it changed; resolves when done. */
  refresh(): Promise<void>;
  /** Stops polling, then unregisters. */
  stop(): Promise<void>;
  /** Settles when the poll loop has ended. */
  readonly stopped: Promise<void>;
  stats(): HostAgentStats;
}

export interface HostAgentStats {
  publications: number;
  gatewayAnswers: number;
  executed: number;
  refused: number;
  cancellations: number;
  retries: number;
}

const MAX_ANSWERS = 1024;
const MAX_OUTBOX = 4096;
const MAX_TRACKED = 4096;
const BACKOFF_START = 100;
const BACKOFF_MAX = 5000;

// The parts of a poll batch the model's wire shapes do not already describe.
const PolicyDecisionShape = {
  fields: {
    decision_id: 'string',
    result: 'string',
    controller_id: 'string',
    actor_id: 'string',
    principal_id: 'string',
    effect_digest: 'string',
    policy_revision: 'u64',
    matched_rule_ids: { list: 'string' },
    reason_code: 'string',
    human_summary: 'string',
    'effective_limits?': {
      list: {
        fields: {
          budget_id: 'string',
          usage_key: 'string',
          max_actions: 'u64',
          actions_used: 'u64',
          actions_remaining: 'u64',
          max_quantity: 'u64',
          quantity_used: 'u64',
          quantity_remaining: 'u64',
        },
      },
    },
    'confirmation_challenge?': {
      ptr: {
        fields: {
          challenge_id: 'string',
          controller_id: 'string',
          actor_id: 'string',
          principal_id: 'string',
          effect_digest: 'string',
          epoch: EpochShape,
          expires_at: TimepointShape,
          policy_revision: 'u64',
          single_use: 'bool',
        },
      },
    },
    evaluated_at: TimepointShape,
  },
} as const satisfies Shape;

const ActorTargetShape = { fields: { host_id: 'string', world_id: 'string', actor_id: 'string' } } as const;

const HostControlBatchShape = {
  fields: {
    gateway_requests: {
      list: {
        fields: {
          request: {
            fields: {
              gateway_request_id: 'string',
              kind: 'string',
              target: ActorTargetShape,
              'action_request?': { ptr: ActionRequestShape },
              submitted_at_unix_millis: 'i64',
            },
          },
          delivery_attempt: 'u32',
        },
      },
    },
    requests: {
      list: {
        fields: {
          request: {
            fields: {
              operation_id: 'string',
              request_id: 'string',
              principal: PrincipalShape,
              host_id: 'string',
              world_id: 'string',
              actor_id: 'string',
              kind: 'string',
              binding: { ptr: { fields: { epoch: EpochShape, observation_seq: 'u64', authority_revision: 'u64', 'controller_lease_id?': 'string' } } },
              action_request: { ptr: ActionRequestShape },
              bound_action: { ptr: BoundActionShape },
              policy_decision: { ptr: PolicyDecisionShape },
              'parent_operation_id?': 'string',
              submitted_at_unix_millis: 'i64',
            },
          },
          delivery_attempt: 'u32',
        },
      },
    },
    cancellations: { list: 'string' },
  },
} as const satisfies Shape;

/** Go accepts these gateway error codes (R94); anything else is sent as the nearest of them. */
function gatewayCode(e: unknown): GatewayErrorCode {
  if (!(e instanceof RinError)) return 'internal';
  if (e.code === 'invalid') {
    // A request fenced by the registry (epoch, observation window, spec digest) is stale, not malformed.
    const field = e.field ?? '';
    if (/^(expected_epoch|observation_sequence|spec_digest|capability)/.test(field)) return 'stale';
    return 'invalid';
  }
  switch (e.code) {
    case 'stale':
    case 'forbidden':
    case 'conflict':
    case 'unavailable':
    case 'internal':
      return e.code;
    case 'not_found':
      return 'invalid';
    case 'capacity':
    case 'lease_expired':
      return 'unavailable';
    default:
      return 'conflict';
  }
}

/** An acknowledgement code is an identifier (R88). */
function ackCode(e: unknown): string {
  if (e instanceof RinError) return gatewayCode(e) === 'stale' ? 'stale' : e.code.replace(/_/g, '-');
  return 'internal';
}

/** A message for the control plane: one line, at most `max` bytes, cut between code points. */
function clip(text: string, max = 500): string {
  const clean =
    text
      .replace(/[\u0000-\u001f\u007f]/g, ' ')
      .replace(/\p{Cs}/gu, '\ufffd')
      .trim() || 'refused';
  let out = '';
  let bytes = 0;
  for (const ch of clean) {
    bytes += Buffer.byteLength(ch, 'utf8');
    if (bytes > max) break;
    out += ch;
  }
  return out;
}

const asRinError = (e: unknown): RinError => (e instanceof RinError ? e : new RinError('internal', e instanceof Error ? e.message : String(e)));
const isNetwork = (e: unknown): boolean => e instanceof RinError && e.code === 'unavailable' && (e as { status?: number }).status === 0;

/** Bounded insertion-ordered map: the oldest entry goes first when full. */
class Bounded<K, V> extends Map<K, V> {
  constructor(private readonly limit: number) {
    super();
  }
  override set(key: K, value: V): this {
    if (!this.has(key) && this.size >= this.limit) {
      const oldest = this.keys().next();
      if (!oldest.done) this.delete(oldest.value);
    }
    return super.set(key, value);
  }
}

interface Tracked {
  acked: boolean;
  reportedSeq: number;
  outcomeReported: boolean;
  cancelAsked: boolean;
}

type Report = { kind: 'run' | 'outcome'; operationId: string; result: AdapterResult };

export async function startHostAgent(options: HostAgentOptions): Promise<HostAgent> {
  const ttl = options.leaseTtlMillis ?? 30_000;
  if (!Number.isSafeInteger(ttl) || ttl < 5000 || ttl > 300_000) throw new RinError('invalid', 'leaseTtlMillis must be between 5000 and 300000');
  const requestedWait = options.pollWaitMillis ?? 2000;
  if (!Number.isSafeInteger(requestedWait) || requestedWait < 0 || requestedWait > 25_000)
    throw new RinError('invalid', 'pollWaitMillis must be between 0 and 25000');
  const pollLimit = options.pollLimit ?? 16;
  if (!Number.isSafeInteger(pollLimit) || pollLimit < 1 || pollLimit > 64) throw new RinError('invalid', 'pollLimit must be between 1 and 64');
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const onError = options.onError ?? (() => undefined);
  const { coordinator, hostId, instanceId } = options;
  const world = options.world ?? coordinator.worldSource();
  if (!world) throw new RinError('invalid', 'the host agent needs a world source: the adapter does not describe its worlds');
  // A poll must end in time for the lease renewal a third of the way through the lease.
  const pollWait = Math.min(requestedWait, Math.floor(ttl / 3));
  const dispatcher = coordinator.dispatcher;

  // Only the long poll is aborted by stop(); every other request runs to its own deadline.
  let pollAbort = new AbortController();
  const baseFetch: FetchLike = options.fetch ?? ((url, init) => fetch(url, init));
  const client = new RinControlClient({
    baseUrl: options.baseUrl,
    token: options.token,
    fetch: (url, init) =>
      url.endsWith('/control/v2/host/poll')
        ? baseFetch(url, { ...init, signal: init.signal ? AbortSignal.any([init.signal, pollAbort.signal]) : pollAbort.signal })
        : baseFetch(url, init),
  });

  const stats: HostAgentStats = { publications: 0, gatewayAnswers: 0, executed: 0, refused: 0, cancellations: 0, retries: 0 };
  let lease: HostLease;
  let renewAt = 0;
  let stopping = false;
  let wake: () => void = () => undefined;
  const stopRequested = new Promise<void>((resolve) => {
    wake = resolve;
  });
  /** A wait that ends early when the agent stops. */
  const pause = (ms: number): Promise<void> => Promise.race([sleep(ms), stopRequested]);
  // Seeded from the clock, so a restarted agent publishes above what the control plane kept of it.
  let sequence = now();
  const published = new Map<string, string>();
  /** The change signal every world was last published (or found unchanged) at. */
  let publishedVersion: string | undefined;
  const answers = new Bounded<string, HostGatewayResult>(MAX_ANSWERS);
  const tracked = new Bounded<string, Tracked>(MAX_TRACKED);
  const refusedAcks = new Bounded<string, { code: string; message: string }>(MAX_TRACKED);
  const outbox: Report[] = [];

  // The agent's own work (batches, refreshes, reports) runs one piece at a time.
  let chain: Promise<unknown> = Promise.resolve();
  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const run = chain.then(work, work);
    chain = run.catch(() => undefined);
    return run;
  };

  const manifest = coordinator.manifest();
  const register = async (): Promise<void> => {
    const answer = await client.call('POST', '/control/v2/host/register', {
      contract_version: CONTROL_CONTRACT_VERSION,
      host_id: hostId,
      instance_id: instanceId,
      manifest,
      lease_ttl_millis: ttl,
    });
    lease = answer.body as HostLease;
    renewAt = now() + Math.floor(ttl / 3);
    published.clear();
    publishedVersion = undefined;
  };

  const leaseBody = () => ({ host_id: hostId, lease_id: lease.lease_id });

  /** Retries a request while the control plane is unreachable, with exponential backoff. */
  const withRetry = async <T>(work: () => Promise<T>, attempts: number): Promise<T> => {
    let delay = BACKOFF_START;
    for (let attempt = 1; ; attempt++) {
      try {
        return await work();
      } catch (e) {
        if (!isNetwork(e) || attempt >= attempts || stopping) throw e;
        stats.retries += 1;
        onError(asRinError(e));
        await sleep(delay);
        delay = Math.min(delay * 2, BACKOFF_MAX);
      }
    }
  };

  /** A request that needs a live lease: an expired lease is replaced and the world republished first. */
  const leased = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (e) {
      if (!(e instanceof RinError && e.code === 'lease_expired') || stopping) throw e;
      await register();
      await publish();
      return work();
    }
  };

  const buildPublications = async (): Promise<WorldPublication[]> => {
    const worlds = await dispatcher.dispatch(() => world.describe());
    const capabilities = coordinator.capabilities();
    const out: WorldPublication[] = [];
    for (const w of worlds) {
      const actors: ActorPublication[] = [];
      for (const actor of w.actors) {
        const target = { host_id: hostId, world_id: w.world_id, actor_id: actor.actor_id };
        const snapshot = await coordinator.snapshotAction(target);
        const observation = await coordinator.observe({
          query_id: `query.${actor.actor_id}.${snapshot.observation_sequence}`,
          host_id: hostId,
          world_id: w.world_id,
          actor_id: actor.actor_id,
          expected_epoch: snapshot.epoch,
          limit: 64,
        });
        const state = await dispatcher.dispatch(() => world.actorState(actor.actor_id));
        actors.push({
          actor_id: actor.actor_id,
          owner_principal_id: actor.owner_principal_id,
          display_name: actor.display_name,
          observation_seq: observation.sequence,
          epoch: observation.epoch,
          decision_authority: actor.decision_authority,
          state: new RawJson(goJsonEncode(state)),
          observation,
          capabilities,
        });
      }
      out.push({
        world_id: w.world_id,
        display_name: w.display_name,
        sequence: 0,
        ...(w.visible_principal_ids && w.visible_principal_ids.length > 0 ? { visible_principal_ids: w.visible_principal_ids } : {}),
        actors,
      });
    }
    return out;
  };

  /** The world's change signal and the catalog revision, when the world offers one. */
  const publicationVersion = async (): Promise<string | undefined> => {
    if (world.publicationVersion === undefined) return undefined;
    const version = await dispatcher.dispatch(() => world.publicationVersion!());
    return `${version}\0${coordinator.capabilities().revision}`;
  };

  /** Publishes every world whose content changed since its last publication (sequence +1). */
  async function publish(): Promise<void> {
    // Read before building: a change while building moves it again, so nothing is skipped wrongly.
    const version = await publicationVersion();
    if (version !== undefined && version === publishedVersion) return;
    for (const publication of await buildPublications()) {
      const content = goJsonEncode(publication);
      if (published.get(publication.world_id) === content) continue;
      sequence += 1;
      publication.sequence = sequence;
      await client.call('POST', '/control/v2/host/publish', { ...leaseBody(), publication });
      published.set(publication.world_id, content);
      stats.publications += 1;
    }
    publishedVersion = version;
  }

  const track = (operationId: string): Tracked => {
    let t = tracked.get(operationId);
    if (!t) {
      t = { acked: false, reportedSeq: 0, outcomeReported: false, cancelAsked: false };
      tracked.set(operationId, t);
    }
    return t;
  };

  const queueReports = (operationId: string, result: AdapterResult): void => {
    const t = track(operationId);
    if (result.run.progress_seq > t.reportedSeq) {
      outbox.push({ kind: 'run', operationId, result });
      t.reportedSeq = result.run.progress_seq;
    }
    if (result.outcome && !t.outcomeReported) {
      outbox.push({ kind: 'outcome', operationId, result });
      t.outcomeReported = true;
    }
    if (outbox.length > MAX_OUTBOX) outbox.splice(0, outbox.length - MAX_OUTBOX);
  };

  /** Sends queued reports in order; stops at a network failure and keeps the rest for later. */
  const flush = async (): Promise<void> => {
    while (outbox.length > 0) {
      const report = outbox[0] as Report;
      try {
        if (report.kind === 'run') {
          await leased(() => client.call('POST', '/control/v2/host/run', { ...leaseBody(), run: report.result.run }));
        } else {
          await leased(() =>
            client.call('POST', '/control/v2/host/outcome', {
              ...leaseBody(),
              outcome: report.result.outcome,
              ...(report.result.output ? { output: report.result.output } : {}),
            }),
          );
          coordinator.forgetOperation(report.operationId);
        }
      } catch (e) {
        if (isNetwork(e)) throw e;
        // Refused for good (a conflict, a stale run): nothing a resend could change.
        onError(asRinError(e));
      }
      outbox.shift();
    }
  };

  const answerGateway = async (delivery: HostGatewayDelivery): Promise<void> => {
    const request = delivery.request;
    let result = answers.get(request.gateway_request_id);
    if (!result) {
      try {
        if (request.kind === 'bind') {
          if (!request.action_request) throw new RinError('invalid', 'action_request: is required for bind');
          const binding = await coordinator.bindRequest(request.target, request.action_request);
          result = { gateway_request_id: request.gateway_request_id, binding };
        } else if (request.kind === 'snapshot') {
          result = { gateway_request_id: request.gateway_request_id, snapshot: await coordinator.snapshotAction(request.target) };
        } else {
          throw new RinError('invalid', 'kind: must be bind or snapshot');
        }
      } catch (e) {
        result = { gateway_request_id: request.gateway_request_id, error_code: gatewayCode(e), error_message: clip(asRinError(e).message) };
      }
      answers.set(request.gateway_request_id, result);
    }
    try {
      await leased(() => client.call('POST', '/control/v2/host/gateway-result', { ...leaseBody(), result }));
      stats.gatewayAnswers += 1;
    } catch (e) {
      if (isNetwork(e)) throw e;
      // The control plane gave up on the request (timed out, host left): nothing to answer any more.
      onError(asRinError(e));
    }
  };

  const acknowledge = (operationId: string, accepted: boolean, code?: string, message?: string) =>
    leased(() =>
      client.call('POST', '/control/v2/host/ack', {
        ...leaseBody(),
        acknowledgement: { operation_id: operationId, accepted, ...(accepted ? {} : { code, message }) },
      }),
    );

  /** True when the delivery was new work (not a redelivery of an operation already acknowledged). */
  const handleDelivery = async (delivery: HostControlDelivery): Promise<boolean> => {
    const operationId = delivery.request.operation_id;
    // An accepted operation is redelivered until it reports a run; it runs only once regardless.
    if (tracked.get(operationId)?.acked) return false;
    const earlier = refusedAcks.get(operationId);
    if (earlier) {
      await acknowledge(operationId, false, earlier.code, earlier.message);
      return true;
    }
    let result: AdapterResult;
    try {
      result = await coordinator.executeDelivery(delivery);
    } catch (e) {
      const refusal = { code: ackCode(e), message: clip(asRinError(e).message) };
      refusedAcks.set(operationId, refusal);
      stats.refused += 1;
      onError(asRinError(e));
      await acknowledge(operationId, false, refusal.code, refusal.message);
      return true;
    }
    if (!tracked.has(operationId)) stats.executed += 1;
    const t = track(operationId);
    await acknowledge(operationId, true);
    t.acked = true;
    queueReports(operationId, result);
    return true;
  };

  const handleCancellation = async (operationId: string): Promise<boolean> => {
    const t = tracked.get(operationId);
    if (t?.cancelAsked) return false;
    if (!t) {
      // Never executed here: the operation can only be refused.
      try {
        await acknowledge(operationId, false, 'cancelled', 'cancelled before execution');
      } catch (e) {
        if (isNetwork(e)) throw e;
        onError(asRinError(e));
      }
      track(operationId).cancelAsked = true;
      return true;
    }
    t.cancelAsked = true;
    stats.cancellations += 1;
    try {
      queueReports(operationId, await coordinator.cancel(operationId));
    } catch (e) {
      onError(asRinError(e));
    }
    return true;
  };

  /**
   * Republishes changed worlds, then reports newer progress of unfinished operations: a controller that
   * waits for its operation to finish and then reads the actor sees the world the operation left, and its
   * next request is fenced with that observation instead of being refused as stale.
   */
  const refreshNow = async (): Promise<void> => {
    const results: [string, AdapterResult][] = [];
    for (const operationId of coordinator.unfinished()) {
      try {
        results.push([operationId, await coordinator.verify(operationId)]);
      } catch (e) {
        onError(asRinError(e));
      }
    }
    await leased(() => publish());
    for (const [operationId, result] of results) queueReports(operationId, result);
    await flush();
  };

  const handleBatch = async (batch: HostControlBatch): Promise<boolean> => {
    let acted = false;
    for (const id of batch.cancellations) acted = (await handleCancellation(id)) || acted;
    for (const g of batch.gateway_requests) {
      await answerGateway(g);
      acted = true;
    }
    for (const d of batch.requests) acted = (await handleDelivery(d)) || acted;
    await refreshNow();
    return acted;
  };

  const renewIfDue = async (): Promise<void> => {
    if (now() < renewAt) return;
    try {
      const answer = await client.call('POST', '/control/v2/host/renew', leaseBody());
      lease = answer.body as HostLease;
      renewAt = now() + Math.floor(ttl / 3);
    } catch (e) {
      if (!(e instanceof RinError && e.code === 'lease_expired')) throw e;
      await register();
      await publish();
    }
  };

  const startAttempts = options.startAttempts ?? 8;
  await withRetry(register, startAttempts);
  await withRetry(() => publish(), startAttempts);

  const loop = async (): Promise<void> => {
    let delay = BACKOFF_START;
    while (!stopping) {
      try {
        await serial(renewIfDue);
        pollAbort = new AbortController();
        const answer = await client.call('POST', '/control/v2/host/poll', { ...leaseBody(), limit: pollLimit, wait_millis: pollWait }, pollWait);
        if (stopping) break;
        const batch = decodeWireText<HostControlBatch>(answer.text, HostControlBatchShape);
        const acted = await serial(() => handleBatch(batch));
        // Work already handled comes back on every poll until it settles (an accepted operation
        // still queued in the game, a cancellation the game cannot honour): do not spin on it.
        if (!acted && batch.requests.length + batch.cancellations.length > 0) await pause(Math.min(Math.max(pollWait, 100), 500));
        delay = BACKOFF_START;
      } catch (e) {
        if (stopping) break;
        const error = asRinError(e);
        onError(error);
        if (error.code === 'lease_expired') {
          await serial(async () => {
            await register();
            await publish();
          }).catch((again: unknown) => onError(asRinError(again)));
        }
        stats.retries += 1;
        await pause(delay);
        delay = Math.min(delay * 2, BACKOFF_MAX);
      }
    }
  };
  const stopped = loop();

  return {
    hostId,
    lease: () => ({ ...lease }),
    refresh: () => serial(refreshNow),
    stats: () => ({ ...stats }),
    stopped,
    async stop(): Promise<void> {
      if (stopping) return stopped;
      stopping = true;
      wake();
      pollAbort.abort();
      await stopped;
      await chain;
      try {
        await serial(() => flush());
      } catch (e) {
        onError(asRinError(e));
      }
      await client.call('POST', '/control/v2/host/unregister', leaseBody());
    },
  };
}
