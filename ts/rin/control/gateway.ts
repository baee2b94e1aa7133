/**
 * The host gateway: the control plane never binds effects itself. A bind or snapshot request is
 * queued for the authoritative host, delivered through `host/poll` (redelivered with a growing
 * `delivery_attempt` until answered; the host deduplicates by `gateway_request_id`) and answered by
 * `host/gateway-result`. No answer within 25 s → `unavailable` (R94, R70).
 *
 * Also the change feed every long poll of the operations half waits on: a version counter, so a
 * change between reading state and starting to wait is never lost.
 */
import { RinError, type RinCode } from '../errors.js';
import type {
  ActionBindingResult,
  ActionHostSnapshot,
  ActionRequest,
  ActorTarget,
  HostGatewayDelivery,
  HostGatewayRequest,
  HostGatewayResult,
} from '../types.js';
import { validateBoundAction, validateEpoch, validateIdentifier, validateText, validateTimepoint } from '../validate.js';
import type { ControlClock, ControlState } from './contracts.js';

export const GATEWAY_TIMEOUT_MILLIS = 25_000;
export const MAX_PENDING_GATEWAY_REQUESTS = 1024;

/** A monotonically increasing version; waiters wake on any bump after the version they read. */
export class ChangeFeed {
  private version = 0;
  private waiters = new Set<() => void>();

  get current(): number {
    return this.version;
  }

  bump(): void {
    this.version++;
    const waiting = this.waiters;
    this.waiters = new Set();
    for (const wake of waiting) wake();
  }

  /** Resolves once the version differs from `since`, at `deadline` (clock ms), or when `signal` aborts. */
  async wait(since: number, deadline: number, clock: ControlClock, signal?: AbortSignal): Promise<'changed' | 'timeout' | 'aborted'> {
    if (this.version !== since) return 'changed';
    if (signal?.aborted) return 'aborted';
    const remaining = deadline - clock.now();
    if (remaining <= 0) return 'timeout';
    const stop = new AbortController();
    let wake = (): void => {};
    const changed = new Promise<'changed'>((resolve) => {
      wake = () => resolve('changed');
      this.waiters.add(wake);
    });
    const aborted = new Promise<'aborted'>((resolve) => {
      if (signal === undefined) return;
      signal.addEventListener('abort', () => resolve('aborted'), { once: true, signal: stop.signal });
    });
    const timer = clock.sleep(remaining, stop.signal).then(() => 'timeout' as const);
    try {
      return await Promise.race([changed, aborted, timer]);
    } finally {
      stop.abort();
      this.waiters.delete(wake);
    }
  }
}

interface Pending {
  request: HostGatewayRequest;
  attempts: number;
  settle: (result: HostGatewayResult | RinError) => void;
}

const GO_ERROR_CODES: Readonly<Record<string, RinCode>> = {
  invalid: 'invalid',
  stale: 'stale',
  unavailable: 'unavailable',
  internal: 'unavailable',
  forbidden: 'forbidden',
  conflict: 'conflict',
  // Published by the OpenAPI enum but not mapped by the reference: the request could not be served.
  not_found: 'unavailable',
  capacity: 'unavailable',
};

export function validateActionHostSnapshot(snapshot: ActionHostSnapshot, field: string): void {
  validateTimepoint(snapshot.now, `${field}.now`);
  validateEpoch(snapshot.epoch, `${field}.epoch`);
  const seq = snapshot.observation_sequence;
  if (!Number.isSafeInteger(seq) || seq < 1) throw new RinError('invalid', `${field}: snapshot observation_sequence is invalid`, field);
}

export class HostGateway {
  private readonly pending = new Map<string, Pending>();

  constructor(
    private readonly state: ControlState,
    private readonly feed: ChangeFeed,
  ) {}

  /** Asks the host to bind one request; the binding's validity is checked by the caller. */
  async bind(target: ActorTarget, request: ActionRequest, signal?: AbortSignal): Promise<ActionBindingResult> {
    const result = await this.exchange('bind', target, request, signal);
    if (result.binding === undefined) throw new RinError('unavailable', 'Host returned no action binding');
    return result.binding;
  }

  async snapshot(target: ActorTarget, signal?: AbortSignal): Promise<ActionHostSnapshot> {
    const result = await this.exchange('snapshot', target, undefined, signal);
    if (result.snapshot === undefined) throw new RinError('unavailable', 'Host returned no action snapshot');
    return result.snapshot;
  }

  /** Undelivered and unanswered requests of a host, oldest first, each with its next attempt number. */
  collect(hostId: string, limit: number): HostGatewayDelivery[] {
    const mine = [...this.pending.values()]
      .filter((p) => p.request.target.host_id === hostId)
      .sort(
        (a, b) =>
          a.request.submitted_at_unix_millis - b.request.submitted_at_unix_millis ||
          (a.request.gateway_request_id < b.request.gateway_request_id ? -1 : a.request.gateway_request_id > b.request.gateway_request_id ? 1 : 0),
      )
      .slice(0, Math.max(0, limit));
    return mine.map((p) => {
      p.attempts = Math.min(p.attempts + 1, 0xffffffff);
      return { request: p.request, delivery_attempt: p.attempts };
    });
  }

  /** `host/gateway-result` after the lease check: completes one request of this host. */
  report(hostId: string, result: HostGatewayResult): void {
    const pending = this.pending.get(result.gateway_request_id);
    if (pending === undefined) throw new RinError('not_found', 'not found');
    if (pending.request.target.host_id !== hostId) throw new RinError('forbidden', 'forbidden');
    validateGatewayResult(result, pending.request.kind);
    this.pending.delete(result.gateway_request_id);
    if (result.error_code !== undefined && result.error_code !== ('' as string)) {
      const code = GO_ERROR_CODES[result.error_code] ?? 'unavailable';
      pending.settle(new RinError(code, `Host gateway ${result.error_code}: ${result.error_message ?? ''}`));
    } else {
      pending.settle(result);
    }
    this.changed();
  }

  /** A host left: its pending requests fail at once instead of waiting for the timeout. */
  failHost(hostId: string, error: RinError): void {
    for (const [id, p] of this.pending) {
      if (p.request.target.host_id !== hostId) continue;
      this.pending.delete(id);
      p.settle(error);
    }
  }

  failAll(error: RinError): void {
    for (const p of this.pending.values()) p.settle(error);
    this.pending.clear();
  }

  private changed(): void {
    this.feed.bump();
    this.state.notify();
  }

  private async exchange(
    kind: 'bind' | 'snapshot',
    target: ActorTarget,
    actionRequest: ActionRequest | undefined,
    signal?: AbortSignal,
  ): Promise<HostGatewayResult> {
    const snap = this.state.actor(target.host_id, target.world_id, target.actor_id);
    if (this.state.hostLease(target.host_id) === undefined) throw new RinError('not_found', 'not found');
    if (snap === undefined) throw new RinError('not_found', 'not found');
    if (!snap.hostLive) throw new RinError('unavailable', 'unavailable');
    if (this.pending.size >= MAX_PENDING_GATEWAY_REQUESTS) throw new RinError('capacity', 'capacity');
    const clock = this.state.clock;
    const request: HostGatewayRequest = {
      gateway_request_id: this.state.newId('gateway'),
      kind,
      target: { host_id: target.host_id, world_id: target.world_id, actor_id: target.actor_id },
      ...(actionRequest === undefined ? {} : { action_request: actionRequest }),
      submitted_at_unix_millis: clock.now(),
    };
    const stop = new AbortController();
    let settle: (r: HostGatewayResult | RinError) => void = () => {};
    const answered = new Promise<HostGatewayResult | RinError>((resolve) => {
      settle = resolve;
    });
    const pending: Pending = { request, attempts: 0, settle };
    this.pending.set(request.gateway_request_id, pending);
    this.changed();
    const timeout = clock.sleep(GATEWAY_TIMEOUT_MILLIS, stop.signal).then(() => 'timeout' as const);
    const aborted = new Promise<'aborted'>((resolve) => {
      signal?.addEventListener('abort', () => resolve('aborted'), { once: true, signal: stop.signal });
    });
    try {
      const outcome = await Promise.race([answered, timeout, aborted]);
      if (outcome === 'timeout' || outcome === 'aborted') {
        if (this.pending.get(request.gateway_request_id) === pending) {
          this.pending.delete(request.gateway_request_id);
          this.changed();
        }
        if (outcome === 'aborted') throw new RinError('unavailable', 'the request was abandoned');
        throw new RinError('unavailable', 'Host gateway response timed out');
      }
      if (outcome instanceof RinError) throw outcome;
      return outcome;
    } finally {
      stop.abort();
    }
  }
}

function validateGatewayResult(result: HostGatewayResult, kind: 'bind' | 'snapshot'): void {
  validateIdentifier('gateway_request_id', result.gateway_request_id);
  const errorCode = result.error_code ?? '';
  if (errorCode !== '') {
    if (result.binding !== undefined || result.snapshot !== undefined)
      throw new RinError('invalid', 'gateway_result: error cannot include a successful result', 'gateway_result');
    validateText('error_message', result.error_message ?? '', 500, true);
    if (!(errorCode in GO_ERROR_CODES)) throw new RinError('invalid', 'error_code: is not supported', 'error_code');
    return;
  }
  if ((result.error_message ?? '') !== '') throw new RinError('invalid', 'error_message: requires error_code', 'error_message');
  if (kind === 'bind') {
    if (result.binding === undefined || result.snapshot !== undefined)
      throw new RinError('invalid', 'gateway_result: bind requires only binding', 'gateway_result');
    validateActionHostSnapshot(result.binding.snapshot, 'binding.snapshot');
    validateBoundAction(result.binding.bound_action);
  } else {
    if (result.snapshot === undefined || result.binding !== undefined)
      throw new RinError('invalid', 'gateway_result: snapshot requires only snapshot', 'gateway_result');
    validateActionHostSnapshot(result.snapshot, 'snapshot');
  }
}
