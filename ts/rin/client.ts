/**
 * A client of the rin.control/v2 API: one typed method per route, host side and client side.
 *
 * The server is treated as untrusted even on loopback: the origin must be a plain loopback http URL
 * (the daemon never listens elsewhere, and a bearer token must not travel to another machine in the
 * clear), no redirect is followed, answers are capped at 8 MiB and must be strict JSON, and every
 * request has a deadline (a long poll's deadline is its wait plus a margin). Every failure is a
 * RinError carrying the server's stable code, or `unavailable` when the server could not be reached.
 *
 * Bodies are written with goJsonEncode, so RawJson sub-documents (action arguments, outputs) go out
 * byte for byte. Answers come back as plain JSON values (`Plain<T>`): raw sub-documents inside them
 * lose their number lexemes; callers that need those read `call(...).text` with the wire decoders.
 */
import { goJsonEncode, parseWireJson, type RawJson } from '../crypto/gojson.js';
import { sanitize } from '../registry/errors.js';
import { RinError, type RinCode } from './errors.js';
import { isLoopbackHost } from './loopback.js';
import type {
  AcknowledgementRequest,
  AcquireControllerInput,
  ActorEmergencyStop,
  ActorTarget,
  ActorUpdate,
  ActorView,
  CapabilitySnapshot,
  CapabilitySpec,
  ClientInfo,
  ControllerLease,
  DescribeCapabilityInput,
  GatewayResultRequest,
  HostControlBatch,
  HostLease,
  HostRegistration,
  LeaseRequest,
  ObservationEnvelope,
  OperationTarget,
  OperationUpdate,
  OperationView,
  OutcomeRequest,
  PollRequest,
  PublishRequest,
  ReleaseControllerInput,
  RenewControllerInput,
  RunRequest,
  SetEmergencyStopInput,
  StatusResponse,
  SubmitActionInput,
  TaskTimelinePage,
  TaskTimelineQuery,
  TaskTimelineUpdate,
  WaitActorInput,
  WaitOperationInput,
  WaitTaskTimelineInput,
  WorldTarget,
  WorldView,
} from './types.js';

export const CONTROL_DEFAULT_BASE_URL = 'http://127.0.0.1:7375';
export const CONTROL_MAX_RESPONSE_BYTES = 8 * 1024 * 1024;
export const CONTROL_TIMEOUT_MS = 30_000;
/** Added to a long poll's wait_millis: the server answers when the wait ends, then needs time to write. */
export const CONTROL_WAIT_MARGIN_MS = 10_000;

/** A wire type as JSON.parse returns it: raw sub-documents become plain JSON values. */
export type Plain<T> = T extends RawJson ? unknown : T extends readonly (infer U)[] ? Plain<U>[] : T extends object ? { [K in keyof T]: Plain<T[K]> } : T;

export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;

export interface RinControlClientOptions {
  /** A plain loopback http origin with an explicit port; default http://127.0.0.1:7375. */
  baseUrl?: string;
  /** The bearer token (at least 32 bytes, one line). */
  token: string;
  fetch?: FetchLike;
  /** Deadline of an ordinary request, connection to last byte; default 30 s. */
  timeoutMs?: number;
  /** Largest answer read; default (and at most) 8 MiB. */
  maxResponseBytes?: number;
}

/**
 * A refusal or failure from the control API; `status` is the HTTP status (0 when none arrived). The
 * message starts with the code, so a one-line report always names it, whatever the server's text says.
 */
export class RinControlError extends RinError {
  readonly status: number;
  constructor(code: RinCode, message: string, status: number) {
    super(code, `${code}: ${message}`);
    this.status = status;
  }
}

/** The answer to one request: parsed JSON and the exact text (for lossless re-reading). */
export interface ControlAnswer {
  status: number;
  text: string;
  body: unknown;
}

const STATUS_CODES: Record<number, RinCode> = {
  400: 'invalid',
  401: 'forbidden',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
  410: 'unavailable',
  429: 'capacity',
};
const RIN_CODES: ReadonlySet<string> = new Set<RinCode>([
  'invalid',
  'forbidden',
  'not_found',
  'lease_expired',
  'unavailable',
  'not_accepted',
  'lease_conflict',
  'stale',
  'conflict',
  'capacity',
  'internal',
]);

/** R69: the origin of a loopback control daemon, or a RinError `invalid`. */
export function normalizeControlBaseUrl(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    throw new RinError('invalid', `control URL ${JSON.stringify(sanitize(raw, 100))} is not a URL (e.g. ${CONTROL_DEFAULT_BASE_URL})`);
  }
  if (
    u.protocol !== 'http:' ||
    u.username ||
    u.password ||
    u.search ||
    u.hash ||
    (u.pathname !== '/' && u.pathname !== '') ||
    !u.port ||
    !isLoopbackHost(u.hostname)
  ) {
    throw new RinError(
      'invalid',
      `control URL must be a plain loopback http origin with a port (e.g. ${CONTROL_DEFAULT_BASE_URL}), got ${JSON.stringify(sanitize(raw, 100))}`,
    );
  }
  return u.origin;
}

/** R65: at least 32 bytes, one line without NUL or surrounding space. */
export function checkControlToken(token: string): string {
  if (new TextEncoder().encode(token).byteLength < 32) throw new RinError('invalid', 'the control token must contain at least 32 bytes');
  if (token !== token.trim() || /[\0\r\n]/.test(token) || token.length > 4096)
    throw new RinError('invalid', 'the control token must be one line without surrounding space');
  return token;
}

async function readCapped(res: Response, max: number, where: string): Promise<Uint8Array> {
  const declared = Number(res.headers.get('content-length') ?? NaN);
  if (declared > max) {
    await res.body?.cancel().catch(() => undefined);
    throw new RinControlError('internal', `${where}: the answer declares ${declared} bytes, more than ${max}`, res.status);
  }
  const parts: Uint8Array[] = [];
  let size = 0;
  // Node's web streams are async iterable; leaving the loop early (the throw) cancels the stream.
  const body = (res.body as unknown as AsyncIterable<Uint8Array> | null) ?? [];
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > max) throw new RinControlError('internal', `${where}: the answer exceeds ${max} bytes`, res.status);
    parts.push(chunk);
  }
  return Buffer.concat(parts, size);
}

export class RinControlClient {
  readonly baseUrl: string;
  readonly #token: string;
  readonly #fetch: FetchLike;
  readonly #timeoutMs: number;
  readonly #maxResponseBytes: number;

  constructor(opts: RinControlClientOptions) {
    this.baseUrl = normalizeControlBaseUrl(opts.baseUrl ?? CONTROL_DEFAULT_BASE_URL);
    this.#token = checkControlToken(opts.token);
    this.#fetch = opts.fetch ?? ((url, init) => fetch(url, init));
    this.#timeoutMs = opts.timeoutMs ?? CONTROL_TIMEOUT_MS;
    this.#maxResponseBytes = Math.min(opts.maxResponseBytes ?? CONTROL_MAX_RESPONSE_BYTES, CONTROL_MAX_RESPONSE_BYTES);
    if (!Number.isSafeInteger(this.#timeoutMs) || this.#timeoutMs < 1) throw new RinError('invalid', 'timeoutMs must be a positive integer');
    if (!Number.isSafeInteger(this.#maxResponseBytes) || this.#maxResponseBytes < 1024) throw new RinError('invalid', 'maxResponseBytes must be at least 1024');
  }

  // Routes open without a token, and the client's view of itself.
  health(): Promise<StatusResponse> {
    return this.#get('/control/v2/health');
  }
  info(): Promise<Plain<ClientInfo>> {
    return this.#get('/control/v2/info');
  }

  // Host side (R71–R73, R86–R89, R94).
  registerHost(body: HostRegistration): Promise<Plain<HostLease>> {
    return this.#post('/control/v2/host/register', body);
  }
  renewHost(body: LeaseRequest): Promise<Plain<HostLease>> {
    return this.#post('/control/v2/host/renew', body);
  }
  unregisterHost(body: LeaseRequest): Promise<StatusResponse> {
    return this.#post('/control/v2/host/unregister', body);
  }
  publishWorld(body: PublishRequest): Promise<StatusResponse> {
    return this.#post('/control/v2/host/publish', body);
  }
  pollHost(body: PollRequest): Promise<Plain<HostControlBatch>> {
    return this.#post('/control/v2/host/poll', body, body.wait_millis);
  }
  reportGatewayResult(body: GatewayResultRequest): Promise<StatusResponse> {
    return this.#post('/control/v2/host/gateway-result', body);
  }
  acknowledge(body: AcknowledgementRequest): Promise<StatusResponse> {
    return this.#post('/control/v2/host/ack', body);
  }
  reportRun(body: RunRequest): Promise<StatusResponse> {
    return this.#post('/control/v2/host/run', body);
  }
  reportOutcome(body: OutcomeRequest): Promise<StatusResponse> {
    return this.#post('/control/v2/host/outcome', body);
  }

  // Client side: discovery (R76–R78).
  listWorlds(): Promise<Plain<WorldView>[]> {
    return this.#post('/control/v2/worlds', {});
  }
  listActors(body: WorldTarget): Promise<Plain<ActorView>[]> {
    return this.#post('/control/v2/actors', body);
  }
  getActor(body: ActorTarget): Promise<Plain<ActorView>> {
    return this.#post('/control/v2/actor', body);
  }
  waitActor(body: WaitActorInput): Promise<Plain<ActorUpdate>> {
    return this.#post('/control/v2/wait-actor', body, body.wait_millis);
  }
  observe(body: ActorTarget): Promise<Plain<ObservationEnvelope>> {
    return this.#post('/control/v2/observe', body);
  }
  listCapabilities(body: ActorTarget): Promise<Plain<CapabilitySnapshot>> {
    return this.#post('/control/v2/capabilities', body);
  }
  describeCapability(body: DescribeCapabilityInput): Promise<Plain<CapabilitySpec>> {
    return this.#post('/control/v2/capability', body);
  }

  // Controller leases (R79–R80) and the emergency stop (R81).
  acquireController(body: AcquireControllerInput): Promise<Plain<ControllerLease>> {
    return this.#post('/control/v2/controllers/acquire', body);
  }
  renewController(body: RenewControllerInput): Promise<Plain<ControllerLease>> {
    return this.#post('/control/v2/controllers/renew', body);
  }
  releaseController(body: ReleaseControllerInput): Promise<StatusResponse> {
    return this.#post('/control/v2/controllers/release', body);
  }
  getController(body: ActorTarget): Promise<Plain<ControllerLease>> {
    return this.#post('/control/v2/controllers/get', body);
  }
  setEmergencyStop(body: SetEmergencyStopInput): Promise<Plain<ActorEmergencyStop>> {
    return this.#post('/control/v2/emergency-stop', body);
  }

  // Actions and operations (R82–R93), task timelines (R95).
  submitAction(body: SubmitActionInput): Promise<Plain<OperationView>> {
    return this.#post('/control/v2/actions/submit', body);
  }
  confirmAction(body: OperationTarget): Promise<Plain<OperationView>> {
    return this.#post('/control/v2/actions/confirm', body);
  }
  getOperation(body: OperationTarget): Promise<Plain<OperationView>> {
    return this.#post('/control/v2/operations/get', body);
  }
  waitOperation(body: WaitOperationInput): Promise<Plain<OperationUpdate>> {
    return this.#post('/control/v2/operations/wait', body, body.wait_millis);
  }
  cancelOperation(body: OperationTarget): Promise<Plain<OperationView>> {
    return this.#post('/control/v2/operations/cancel', body);
  }
  getTaskTimeline(body: TaskTimelineQuery): Promise<Plain<TaskTimelinePage>> {
    return this.#post('/control/v2/tasks/timeline/get', body);
  }
  waitTaskTimeline(body: WaitTaskTimelineInput): Promise<Plain<TaskTimelineUpdate>> {
    return this.#post('/control/v2/tasks/timeline/wait', body, body.wait_millis);
  }

  async #get<T>(path: string): Promise<T> {
    return (await this.call('GET', path)).body as T;
  }

  async #post<T>(path: string, body: unknown, waitMillis?: number): Promise<T> {
    return (await this.call('POST', path, body, waitMillis)).body as T;
  }

  /**
   * One request. `body` is encoded with goJsonEncode; `waitMillis` (a long poll's wait) extends the
   * deadline. A non-2xx answer becomes a RinControlError with the server's code (or the status's).
   */
  async call(method: 'GET' | 'POST', path: string, body?: unknown, waitMillis?: number): Promise<ControlAnswer> {
    if (!path.startsWith('/control/v2/') || path.includes('..') || path.includes('//'))
      throw new RinError('invalid', `not a control API path: ${sanitize(path, 100)}`);
    const headers: Record<string, string> = { accept: 'application/json', authorization: `Bearer ${this.#token}` };
    let payload: string | undefined;
    if (body !== undefined) {
      payload = goJsonEncode(body);
      headers['content-type'] = 'application/json';
    }
    const timeoutMs =
      this.#timeoutMs + (waitMillis !== undefined && Number.isSafeInteger(waitMillis) && waitMillis > 0 ? waitMillis + CONTROL_WAIT_MARGIN_MS : 0);
    const signal = AbortSignal.timeout(timeoutMs);
    const where = `${method} ${path}`;
    let res: Response;
    let bytes: Uint8Array;
    try {
      res = await this.#fetch(`${this.baseUrl}${path}`, { method, headers, ...(payload !== undefined && { body: payload }), redirect: 'manual', signal });
      if (res.status >= 300 && res.status < 400) {
        await res.body?.cancel().catch(() => undefined);
        throw new RinControlError(
          'unavailable',
          `${where}: the control daemon answered with a redirect (HTTP ${res.status}), which is never followed`,
          res.status,
        );
      }
      bytes = await readCapped(res, this.#maxResponseBytes, where);
    } catch (e) {
      if (e instanceof RinError) throw e;
      if (signal.aborted) throw new RinControlError('unavailable', `${where}: no complete answer from ${this.baseUrl} within ${timeoutMs} ms`, 0);
      const cause = (e as { cause?: { code?: unknown } }).cause;
      const why = typeof cause?.code === 'string' ? cause.code : e instanceof Error ? e.message : String(e);
      throw new RinControlError('unavailable', `${where}: cannot reach the control daemon at ${this.baseUrl} (${sanitize(why, 80)})`, 0);
    }
    const answer = decodeAnswer(bytes, res, where);
    if (res.status < 200 || res.status >= 300) throw refusal(answer.body, res.status, where);
    return answer;
  }
}

function decodeAnswer(bytes: Uint8Array, res: Response, where: string): ControlAnswer {
  const type = (res.headers.get('content-type') ?? '').split(';', 1)[0]!.trim().toLowerCase();
  const ok = res.status >= 200 && res.status < 300;
  let text: string;
  try {
    if (type !== 'application/json') throw new Error(`content type ${JSON.stringify(sanitize(type, 60))}`);
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    // Strict: one value, no duplicate names, paired surrogates (the server's own rules, R1–R2).
    parseWireJson(text);
  } catch (e) {
    if (!ok) return { status: res.status, text: '', body: null };
    throw new RinControlError('internal', `${where}: the answer is not strict JSON (${sanitize(e instanceof Error ? e.message : String(e), 80)})`, res.status);
  }
  const body = JSON.parse(text) as unknown;
  if (ok && (body === null || typeof body !== 'object'))
    throw new RinControlError('internal', `${where}: the answer is not a JSON object or array`, res.status);
  return { status: res.status, text, body };
}

function refusal(body: unknown, status: number, where: string): RinControlError {
  const o = body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
  const said = typeof o['code'] === 'string' ? o['code'] : '';
  const code: RinCode = RIN_CODES.has(said) ? (said as RinCode) : (STATUS_CODES[status] ?? (status >= 500 ? 'internal' : 'unavailable'));
  const message = typeof o['error'] === 'string' && o['error'].trim() !== '' ? sanitize(o['error'], 500) : `HTTP ${status}`;
  return new RinControlError(code, `${message} (HTTP ${status} from ${where})`, status);
}
