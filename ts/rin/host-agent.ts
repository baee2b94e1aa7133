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
import { RinControlClient, type FetchLike } from './client.js';
import { RinError } from './errors.js';
import { WorldPublisher } from './host-agent-publish.js';
import { ackCode, asRinError, Bounded, clip, gatewayCode, HostControlBatchShape, isNetwork } from './host-agent-wire.js';
import type { AdapterCoordinator } from './hostkit/coordinator.js';
import type { AdapterResult, HostWorldSource } from './hostkit/adapter.js';
import type { HostControlBatch, HostControlDelivery, HostGatewayDelivery, HostGatewayResult, HostLease, HostManifest } from './types.js';
import { CONTROL_CONTRACT_VERSION } from './types.js';
import { decodeWireText } from './wire.js';

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

interface Tracked {
  acked: boolean;
  reportedSeq: number;
  outcomeReported: boolean;
  cancelAsked: boolean;
}

type Report = { kind: 'run' | 'outcome'; operationId: string; result: AdapterResult };

/** The options checked, with their defaults. */
interface AgentSettings {
  ttl: number;
  /** The long poll's wait: it ends in time for the lease renewal a third of the way through the lease. */
  pollWait: number;
  pollLimit: number;
  now: () => number;
  sleep: (ms: number) => Promise<void>;
  onError: (error: RinError) => void;
  world: HostWorldSource;
  startAttempts: number;
}

function agentSettings(options: HostAgentOptions): AgentSettings {
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
  const world = options.world ?? options.coordinator.worldSource();
  if (!world) throw new RinError('invalid', 'the host agent needs a world source: the adapter does not describe its worlds');
  return { ttl, pollWait: Math.min(requestedWait, Math.floor(ttl / 3)), pollLimit, now, sleep, onError, world, startAttempts: options.startAttempts ?? 8 };
}

export async function startHostAgent(options: HostAgentOptions): Promise<HostAgent> {
  const agent = new HostAgentRun(options, agentSettings(options));
  await agent.start();
  return agent.handle();
}

/** One running agent: its lease, what it published, the work it took and the reports it owes. */
class HostAgentRun {
  private readonly hostId: string;
  private readonly coordinator: AdapterCoordinator;
  private readonly client: RinControlClient;
  /** Only the long poll is aborted by stop(); every other request runs to its own deadline. */
  private pollAbort = new AbortController();
  private readonly stats: HostAgentStats = { publications: 0, gatewayAnswers: 0, executed: 0, refused: 0, cancellations: 0, retries: 0 };
  private lease!: HostLease;
  private renewAt = 0;
  private stopping = false;
  private wake: () => void = () => undefined;
  private readonly stopRequested = new Promise<void>((resolve) => {
    this.wake = resolve;
  });
  private readonly publisher: WorldPublisher;
  private readonly answers = new Bounded<string, HostGatewayResult>(MAX_ANSWERS);
  private readonly tracked = new Bounded<string, Tracked>(MAX_TRACKED);
  private readonly refusedAcks = new Bounded<string, { code: string; message: string }>(MAX_TRACKED);
  private readonly outbox: Report[] = [];
  /** The agent's own work (batches, refreshes, reports) runs one piece at a time. */
  private chain: Promise<unknown> = Promise.resolve();
  private readonly manifest: HostManifest;
  private stopped: Promise<void> = Promise.resolve();

  constructor(
    private readonly options: HostAgentOptions,
    private readonly s: AgentSettings,
  ) {
    this.hostId = options.hostId;
    this.coordinator = options.coordinator;
    const baseFetch: FetchLike = options.fetch ?? ((url, init) => fetch(url, init));
    this.client = new RinControlClient({
      baseUrl: options.baseUrl,
      token: options.token,
      fetch: (url, init) =>
        url.endsWith('/control/v2/host/poll')
          ? baseFetch(url, { ...init, signal: init.signal ? AbortSignal.any([init.signal, this.pollAbort.signal]) : this.pollAbort.signal })
          : baseFetch(url, init),
    });
    this.publisher = new WorldPublisher(this.coordinator, s.world, this.hostId, s.now(), async (publication) => {
      await this.client.call('POST', '/control/v2/host/publish', { ...this.leaseBody(), publication });
      this.stats.publications += 1;
    });
    this.manifest = this.coordinator.manifest();
  }

  /** Registers and publishes (retrying while the control plane cannot be reached), then starts the serve loop. */
  async start(): Promise<void> {
    await this.withRetry(() => this.register(), this.s.startAttempts);
    await this.withRetry(() => this.publisher.publish(), this.s.startAttempts);
    this.stopped = this.serve();
  }

  handle(): HostAgent {
    const stopped = this.stopped;
    return {
      hostId: this.hostId,
      lease: () => ({ ...this.lease }),
      refresh: () => this.serial(() => this.refreshNow()),
      stats: () => ({ ...this.stats }),
      stopped,
      stop: () => this.stop(),
    };
  }

  private serial<T>(work: () => Promise<T>): Promise<T> {
    const run = this.chain.then(work, work);
    this.chain = run.catch(() => undefined);
    return run;
  }

  /** A wait that ends early when the agent stops. */
  private pause(ms: number): Promise<void> {
    return Promise.race([this.s.sleep(ms), this.stopRequested]);
  }

  // ---- the lease ----

  private async register(): Promise<void> {
    const answer = await this.client.call('POST', '/control/v2/host/register', {
      contract_version: CONTROL_CONTRACT_VERSION,
      host_id: this.hostId,
      instance_id: this.options.instanceId,
      manifest: this.manifest,
      lease_ttl_millis: this.s.ttl,
    });
    this.lease = answer.body as HostLease;
    this.renewAt = this.s.now() + Math.floor(this.s.ttl / 3);
    this.publisher.reset();
  }

  private async reregister(): Promise<void> {
    await this.register();
    await this.publisher.publish();
  }

  private leaseBody() {
    return { host_id: this.hostId, lease_id: this.lease.lease_id };
  }

  private async renewIfDue(): Promise<void> {
    if (this.s.now() < this.renewAt) return;
    try {
      const answer = await this.client.call('POST', '/control/v2/host/renew', this.leaseBody());
      this.lease = answer.body as HostLease;
      this.renewAt = this.s.now() + Math.floor(this.s.ttl / 3);
    } catch (e) {
      if (!(e instanceof RinError && e.code === 'lease_expired')) throw e;
      await this.reregister();
    }
  }

  /** Retries a request while the control plane is unreachable, with exponential backoff. */
  private async withRetry<T>(work: () => Promise<T>, attempts: number): Promise<T> {
    let delay = BACKOFF_START;
    for (let attempt = 1; ; attempt++) {
      try {
        return await work();
      } catch (e) {
        if (!isNetwork(e) || attempt >= attempts || this.stopping) throw e;
        this.stats.retries += 1;
        this.s.onError(asRinError(e));
        await this.s.sleep(delay);
        delay = Math.min(delay * 2, BACKOFF_MAX);
      }
    }
  }

  /** A request that needs a live lease: an expired lease is replaced and the world republished first. */
  private async leased<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (e) {
      if (!(e instanceof RinError && e.code === 'lease_expired') || this.stopping) throw e;
      await this.reregister();
      return work();
    }
  }

  // ---- reports ----

  private track(operationId: string): Tracked {
    let t = this.tracked.get(operationId);
    if (!t) {
      t = { acked: false, reportedSeq: 0, outcomeReported: false, cancelAsked: false };
      this.tracked.set(operationId, t);
    }
    return t;
  }

  private queueReports(operationId: string, result: AdapterResult): void {
    const t = this.track(operationId);
    const outbox = this.outbox;
    if (result.run.progress_seq > t.reportedSeq) {
      outbox.push({ kind: 'run', operationId, result });
      t.reportedSeq = result.run.progress_seq;
    }
    if (result.outcome && !t.outcomeReported) {
      outbox.push({ kind: 'outcome', operationId, result });
      t.outcomeReported = true;
    }
    if (outbox.length > MAX_OUTBOX) outbox.splice(0, outbox.length - MAX_OUTBOX);
  }

  /** Sends queued reports in order; stops at a network failure and keeps the rest for later. */
  private async flush(): Promise<void> {
    const outbox = this.outbox;
    while (outbox.length > 0) {
      const report = outbox[0] as Report;
      try {
        if (report.kind === 'run') {
          await this.leased(() => this.client.call('POST', '/control/v2/host/run', { ...this.leaseBody(), run: report.result.run }));
        } else {
          await this.leased(() =>
            this.client.call('POST', '/control/v2/host/outcome', {
              ...this.leaseBody(),
              outcome: report.result.outcome,
              ...(report.result.output ? { output: report.result.output } : {}),
            }),
          );
          this.coordinator.forgetOperation(report.operationId);
        }
      } catch (e) {
        if (isNetwork(e)) throw e;
        // Refused for good (a conflict, a stale run): nothing a resend could change.
        this.s.onError(asRinError(e));
      }
      outbox.shift();
    }
  }

  // ---- the work of a batch ----

  private async answerGateway(delivery: HostGatewayDelivery): Promise<void> {
    const request = delivery.request;
    let result = this.answers.get(request.gateway_request_id);
    if (!result) {
      try {
        if (request.kind === 'bind') {
          if (!request.action_request) throw new RinError('invalid', 'action_request: is required for bind');
          const binding = await this.coordinator.bindRequest(request.target, request.action_request);
          result = { gateway_request_id: request.gateway_request_id, binding };
        } else if (request.kind === 'snapshot') {
          result = { gateway_request_id: request.gateway_request_id, snapshot: await this.coordinator.snapshotAction(request.target) };
        } else {
          throw new RinError('invalid', 'kind: must be bind or snapshot');
        }
      } catch (e) {
        result = { gateway_request_id: request.gateway_request_id, error_code: gatewayCode(e), error_message: clip(asRinError(e).message) };
      }
      this.answers.set(request.gateway_request_id, result);
    }
    const answer = result;
    try {
      await this.leased(() => this.client.call('POST', '/control/v2/host/gateway-result', { ...this.leaseBody(), result: answer }));
      this.stats.gatewayAnswers += 1;
    } catch (e) {
      if (isNetwork(e)) throw e;
      // The control plane gave up on the request (timed out, host left): nothing to answer any more.
      this.s.onError(asRinError(e));
    }
  }

  private acknowledge(operationId: string, accepted: boolean, code?: string, message?: string) {
    return this.leased(() =>
      this.client.call('POST', '/control/v2/host/ack', {
        ...this.leaseBody(),
        acknowledgement: { operation_id: operationId, accepted, ...(accepted ? {} : { code, message }) },
      }),
    );
  }

  /** True when the delivery was new work (not a redelivery of an operation already acknowledged). */
  private async handleDelivery(delivery: HostControlDelivery): Promise<boolean> {
    const operationId = delivery.request.operation_id;
    // An accepted operation is redelivered until it reports a run; it runs only once regardless.
    if (this.tracked.get(operationId)?.acked) return false;
    const earlier = this.refusedAcks.get(operationId);
    if (earlier) {
      await this.acknowledge(operationId, false, earlier.code, earlier.message);
      return true;
    }
    let result: AdapterResult;
    try {
      result = await this.coordinator.executeDelivery(delivery);
    } catch (e) {
      const refusal = { code: ackCode(e), message: clip(asRinError(e).message) };
      this.refusedAcks.set(operationId, refusal);
      this.stats.refused += 1;
      this.s.onError(asRinError(e));
      await this.acknowledge(operationId, false, refusal.code, refusal.message);
      return true;
    }
    if (!this.tracked.has(operationId)) this.stats.executed += 1;
    const t = this.track(operationId);
    await this.acknowledge(operationId, true);
    t.acked = true;
    this.queueReports(operationId, result);
    return true;
  }

  private async handleCancellation(operationId: string): Promise<boolean> {
    const t = this.tracked.get(operationId);
    if (t?.cancelAsked) return false;
    if (!t) {
      // Never executed here: the operation can only be refused.
      try {
        await this.acknowledge(operationId, false, 'cancelled', 'cancelled before execution');
      } catch (e) {
        if (isNetwork(e)) throw e;
        this.s.onError(asRinError(e));
      }
      this.track(operationId).cancelAsked = true;
      return true;
    }
    t.cancelAsked = true;
    this.stats.cancellations += 1;
    try {
      this.queueReports(operationId, await this.coordinator.cancel(operationId));
    } catch (e) {
      this.s.onError(asRinError(e));
    }
    return true;
  }

  /**
   * Republishes changed worlds, then reports newer progress of unfinished operations: a controller that
   * waits for its operation to finish and then reads the actor sees the world the operation left, and its
   * next request is fenced with that observation instead of being refused as stale.
   */
  private async refreshNow(): Promise<void> {
    const results: [string, AdapterResult][] = [];
    for (const operationId of this.coordinator.unfinished()) {
      try {
        results.push([operationId, await this.coordinator.verify(operationId)]);
      } catch (e) {
        this.s.onError(asRinError(e));
      }
    }
    await this.leased(() => this.publisher.publish());
    for (const [operationId, result] of results) this.queueReports(operationId, result);
    await this.flush();
  }

  private async handleBatch(batch: HostControlBatch): Promise<boolean> {
    let acted = false;
    for (const id of batch.cancellations) acted = (await this.handleCancellation(id)) || acted;
    for (const g of batch.gateway_requests) {
      await this.answerGateway(g);
      acted = true;
    }
    for (const d of batch.requests) acted = (await this.handleDelivery(d)) || acted;
    await this.refreshNow();
    return acted;
  }

  // ---- the serve loop and shutdown ----

  /** Long-polls until stopped; a failure is reported and retried with exponential backoff. */
  private async serve(): Promise<void> {
    const { pollWait, pollLimit } = this.s;
    let delay = BACKOFF_START;
    while (!this.stopping) {
      try {
        await this.serial(() => this.renewIfDue());
        this.pollAbort = new AbortController();
        const answer = await this.client.call('POST', '/control/v2/host/poll', { ...this.leaseBody(), limit: pollLimit, wait_millis: pollWait }, pollWait);
        if (this.stopping) break;
        const batch = decodeWireText<HostControlBatch>(answer.text, HostControlBatchShape);
        const acted = await this.serial(() => this.handleBatch(batch));
        // Work already handled comes back on every poll until it settles (an accepted operation
        // still queued in the game, a cancellation the game cannot honour): do not spin on it.
        if (!acted && batch.requests.length + batch.cancellations.length > 0) await this.pause(Math.min(Math.max(pollWait, 100), 500));
        delay = BACKOFF_START;
      } catch (e) {
        if (this.stopping) break;
        const error = asRinError(e);
        this.s.onError(error);
        if (error.code === 'lease_expired') {
          await this.serial(() => this.reregister()).catch((again: unknown) => this.s.onError(asRinError(again)));
        }
        this.stats.retries += 1;
        await this.pause(delay);
        delay = Math.min(delay * 2, BACKOFF_MAX);
      }
    }
  }

  /** Ends the poll, sends what reports it can, then unregisters. */
  private async stop(): Promise<void> {
    if (this.stopping) return this.stopped;
    this.stopping = true;
    this.wake();
    this.pollAbort.abort();
    await this.stopped;
    await this.chain;
    try {
      await this.serial(() => this.flush());
    } catch (e) {
      this.s.onError(asRinError(e));
    }
    await this.client.call('POST', '/control/v2/host/unregister', this.leaseBody());
  }
}
