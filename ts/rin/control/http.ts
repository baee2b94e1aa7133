/**
 * The rin.control/v2 transport (R64–R70) on Hono: 30 routes under /control/v2 plus GET /health.
 *
 * Every request but the two health checks carries `Authorization: Bearer <token>` (401 otherwise).
 * A POST body must be `application/json`, at most `maxBodyBytes`, strict JSON (R1–R2), and decode
 * into the route's input type with no unknown member; any failure there is 400 `{"error": …}`
 * without a code. Service failures are RinErrors, answered with their status and stable code (R68).
 * Every response is compact JSON plus a newline, with no-store and nosniff.
 *
 * The client routes (info, worlds, … emergency-stop) exist only when a client principal is
 * configured; that principal, never the request, decides what the caller may do.
 */
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { GoJsonError, goJsonEncode, parseWireJson } from '../../crypto/gojson.js';
import { clientGone, honoIncoming } from '../../server/http-boundary.js';
import type { Log } from '../../server/log.js';
import { RIN_HTTP_STATUS, RinError, type RinCode } from '../errors.js';
import { CONTROL_CONTRACT_VERSION } from '../types.js';
import type {
  AcquireControllerInput,
  ActorTarget,
  DescribeCapabilityInput,
  HostRegistration,
  LeaseRequest,
  PollRequest,
  Principal,
  PublishRequest,
  ReleaseControllerInput,
  RenewControllerInput,
  SetEmergencyStopInput,
  WaitActorInput,
  WorldTarget,
} from '../types.js';
import { CapabilityRefShape, CapabilitySnapshotShape, EpochShape, HostManifestShape, ObservationEnvelopeShape, decodeWire, type Shape } from '../wire.js';
import { bearerMatches } from './auth.js';
import { MAX_WAIT_MILLIS, type WireBody } from './contracts.js';
import { describeCapability, getObservation, listCapabilities } from './discovery.js';
import type { ControlCore } from './service.js';

export const DEFAULT_MAX_BODY_BYTES = 1 << 20;
export const MAX_BODY_BYTES_LIMIT = 8 << 20;

// ---- request shapes (Go's request structs; `name?` = omitempty) ----

const target = { host_id: 'string', world_id: 'string', actor_id: 'string' } as const;
const EmptyShape = { fields: {} } as const;
const LeaseRequestShape = { fields: { host_id: 'string', lease_id: 'string' } } as const;
const HostRegistrationShape = {
  fields: { contract_version: 'string', host_id: 'string', instance_id: 'string', manifest: HostManifestShape, lease_ttl_millis: 'u32' },
} as const;
const DecisionAuthorityShape = { fields: { source: 'string', 'controller_principal_id?': 'string', revision: 'u64', persona_mode: 'string' } } as const;
const ActorPublicationShape = {
  fields: {
    actor_id: 'string',
    owner_principal_id: 'string',
    display_name: 'string',
    observation_seq: 'u64',
    epoch: EpochShape,
    decision_authority: { ptr: DecisionAuthorityShape },
    state: 'raw',
    'observation?': { ptr: ObservationEnvelopeShape },
    'capabilities?': { ptr: CapabilitySnapshotShape },
  },
} as const;
const WorldPublicationShape = {
  fields: {
    world_id: 'string',
    display_name: 'string',
    sequence: 'u64',
    'visible_principal_ids?': { list: 'string' },
    actors: { list: ActorPublicationShape },
  },
} as const;
const PublishRequestShape = { fields: { host_id: 'string', lease_id: 'string', publication: WorldPublicationShape } } as const;
const PollRequestShape = { fields: { host_id: 'string', lease_id: 'string', limit: 'i64', wait_millis: 'u32' } } as const;
const WorldTargetShape = { fields: { host_id: 'string', world_id: 'string' } } as const;
const ActorTargetShape = { fields: target } as const;
const WaitActorShape = {
  fields: {
    ...target,
    after_observation_seq: 'u64',
    after_authority_revision: 'u64',
    'after_controller_lease_id?': 'string',
    'after_emergency_stop_revision?': 'u64',
    wait_millis: 'u32',
  },
} as const;
const DescribeCapabilityShape = { fields: { ...target, capability: CapabilityRefShape } } as const;
const AcquireControllerShape = { fields: { ...target, controller_id: 'string', lease_ttl_millis: 'u32' } } as const;
const RenewControllerShape = { fields: { ...target, lease_id: 'string', lease_ttl_millis: 'u32' } } as const;
const ReleaseControllerShape = { fields: { ...target, lease_id: 'string' } } as const;
const EmergencyStopShape = { fields: { ...target, active: 'bool' } } as const;

/** The reference's error texts: a service error reads `<sentinel>` or `<sentinel>: <detail>`. */
const SENTINEL: Readonly<Record<RinCode, string>> = {
  invalid: 'invalid control plane value',
  forbidden: 'control plane access forbidden',
  not_found: 'control plane value not found',
  lease_expired: 'control plane lease expired',
  unavailable: 'control plane host unavailable',
  not_accepted: 'control plane operation not accepted',
  lease_conflict: 'control plane lease conflict',
  stale: 'stale control plane value',
  conflict: 'control plane value conflict',
  capacity: 'control plane capacity exceeded',
  internal: 'internal error',
};

/** A transport-level refusal: 400 (or 401/404/405) with `{"error": …}` and no code. */
export class TransportError extends Error {
  constructor(
    readonly status: 400 | 401 | 404 | 405,
    message: string,
  ) {
    super(message);
  }
}

export interface HttpOptions {
  token: Uint8Array;
  /** The configured client principal; without it the client routes answer 404. */
  principal: Principal | undefined;
  maxBodyBytes: number;
  log: Log;
}

const SECURITY_HEADERS = { 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' } as const;

/** Compact JSON (Go's encoding) and a newline (R66). */
export function jsonResponse(status: number, value: unknown, extra: Record<string, string> = {}): Response {
  return new Response(`${goJsonEncode(value)}\n`, { status, headers: { 'Content-Type': 'application/json', ...SECURITY_HEADERS, ...extra } });
}

function errorResponse(e: unknown, log: Log, where: string): Response {
  if (e instanceof TransportError) {
    const extra: Record<string, string> = e.status === 401 ? { 'WWW-Authenticate': 'Bearer' } : {};
    return jsonResponse(e.status, { error: e.message }, extra);
  }
  if (e instanceof RinError && e.stage === 'decode') return jsonResponse(400, { error: `invalid request: ${e.message}` });
  if (e instanceof RinError && e.code !== 'internal') {
    const text = e.message === '' ? SENTINEL[e.code] : `${SENTINEL[e.code]}: ${e.message}`;
    return jsonResponse(RIN_HTTP_STATUS[e.code], { error: text, code: e.code });
  }
  log.error('rin_control_internal_error', { route: where, error: (e instanceof Error ? e.message : String(e)).slice(0, 300) });
  return jsonResponse(500, { error: 'internal error', code: 'internal' });
}

/**
 * The answer when the client went away mid-request (its body cut short): nobody reads it, and since
 * anyone may do that as often as they like, it is one info line, never an internal error.
 */
function abandoned(c: Context, log: Log): Response | undefined {
  if (!clientGone(honoIncoming(c.env))) return undefined;
  log.info('client_aborted', { method: c.req.method, path: c.req.path });
  return jsonResponse(400, { error: 'the request ended before it was complete' });
}

/** `application/json`, parameters allowed (`; charset=utf-8`), as Go's mime.ParseMediaType reads it. */
function isJsonMediaType(header: string | undefined): boolean {
  if (header === undefined) return false;
  const [type = '', ...params] = header.split(';');
  if (type.trim().toLowerCase() !== 'application/json') return false;
  const token = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
  const param = new RegExp(`^\\s*${token}\\s*=\\s*(${token}|"(?:[^"\\\\]|\\\\.)*")\\s*$`);
  return params.every((p, i) => param.test(p) || (i === params.length - 1 && p.trim() === ''));
}

/** The transport checks of R67: media type, size, strict JSON. */
async function readWireBody(request: Request, maxBodyBytes: number): Promise<WireBody> {
  if (!isJsonMediaType(request.headers.get('content-type') ?? undefined)) throw new TransportError(400, 'content type must be application/json');
  // The body limit middleware has already refused anything longer.
  const bytes = new Uint8Array(await request.arrayBuffer());
  try {
    return parseWireJson(bytes, { maxBytes: maxBodyBytes });
  } catch (e) {
    if (e instanceof GoJsonError) throw new TransportError(400, `invalid JSON: ${e.message}`);
    throw e;
  }
}

function decodeBody<T>(body: WireBody, shape: Shape): T {
  return decodeWire<T>(body.text, body.root, shape);
}

type Handler = (c: Context, body: () => Promise<WireBody>) => Promise<unknown>;
type Route = { method: 'GET' | 'POST'; path: string; client: boolean; handler: Handler };

const STATUS = (status: string) => ({ status });

/** The route table; `client` routes exist only with a client principal. */
function routes(core: ControlCore, principal: Principal | undefined): Route[] {
  const p = (): Principal => {
    if (principal === undefined) throw new TransportError(404, 'not found');
    return principal;
  };
  const signal = (c: Context): AbortSignal => c.req.raw.signal;
  const host = (path: string, handler: Handler): Route => ({ method: 'POST', path: `/control/v2/host/${path}`, client: false, handler });
  const client = (path: string, handler: Handler, method: 'GET' | 'POST' = 'POST'): Route => ({ method, path: `/control/v2/${path}`, client: true, handler });
  const ops = () => core.ops;
  return [
    { method: 'GET', path: '/health', client: false, handler: async () => STATUS('ok') },
    { method: 'GET', path: '/control/v2/health', client: false, handler: async () => STATUS('ok') },
    host('register', async (_c, body) => {
      const input = decodeBody<HostRegistration>(await body(), HostRegistrationShape);
      return core.mutate(() => core.hosts.register(input));
    }),
    host('renew', async (_c, body) => {
      const input = decodeBody<LeaseRequest>(await body(), LeaseRequestShape);
      return core.mutate(() => core.hosts.renew(input.host_id, input.lease_id));
    }),
    host('unregister', async (_c, body) => {
      const input = decodeBody<LeaseRequest>(await body(), LeaseRequestShape);
      await core.mutate(() => core.hosts.unregister(input.host_id, input.lease_id));
      return STATUS('offline');
    }),
    host('publish', async (_c, body) => {
      const input = decodeBody<PublishRequest>(await body(), PublishRequestShape);
      await core.mutate(() => core.hosts.publish(input.host_id, input.lease_id, input.publication));
      return STATUS('published');
    }),
    host('poll', async (c, body) => {
      const input = decodeBody<PollRequest>(await body(), PollRequestShape);
      if (input.wait_millis > MAX_WAIT_MILLIS) throw new TransportError(400, `wait_millis must not exceed ${MAX_WAIT_MILLIS}`);
      return ops().poll({ hostId: input.host_id, leaseId: input.lease_id, limit: input.limit, waitMillis: input.wait_millis, signal: signal(c) });
    }),
    host('gateway-result', async (_c, body) => {
      await ops().gatewayResult(await body());
      return STATUS('recorded');
    }),
    host('ack', async (_c, body) => {
      await ops().ack(await body());
      return STATUS('acknowledged');
    }),
    host('run', async (_c, body) => {
      await ops().run(await body());
      return STATUS('recorded');
    }),
    host('outcome', async (_c, body) => {
      await ops().outcome(await body());
      return STATUS('recorded');
    }),
    client('info', async () => ({ contract_version: CONTROL_CONTRACT_VERSION, principal: { ...p() } }), 'GET'),
    client('worlds', async (_c, body) => {
      decodeBody<Record<string, never>>(await body(), EmptyShape);
      return core.hosts.listWorlds(p());
    }),
    client('actors', async (_c, body) => {
      const input = decodeBody<WorldTarget>(await body(), WorldTargetShape);
      return core.hosts.listActors(p(), input.host_id, input.world_id);
    }),
    client('actor', async (_c, body) => {
      const input = decodeBody<ActorTarget>(await body(), ActorTargetShape);
      return core.hosts.getActor(p(), input.host_id, input.world_id, input.actor_id);
    }),
    client('wait-actor', async (c, body) => {
      const input = decodeBody<WaitActorInput>(await body(), WaitActorShape);
      return core.hosts.waitActor(p(), input, signal(c));
    }),
    client('observe', async (_c, body) => getObservation(core, p(), decodeBody<ActorTarget>(await body(), ActorTargetShape))),
    client('capabilities', async (_c, body) => listCapabilities(core, p(), decodeBody<ActorTarget>(await body(), ActorTargetShape))),
    client('capability', async (_c, body) => describeCapability(core, p(), decodeBody<DescribeCapabilityInput>(await body(), DescribeCapabilityShape))),
    client('controllers/acquire', async (_c, body) => {
      const input = decodeBody<AcquireControllerInput>(await body(), AcquireControllerShape);
      return core.mutate(() => core.controllers.acquire(p(), input));
    }),
    client('controllers/renew', async (_c, body) => {
      const input = decodeBody<RenewControllerInput>(await body(), RenewControllerShape);
      return core.mutate(() => core.controllers.renew(p(), input, input.lease_id, input.lease_ttl_millis));
    }),
    client('controllers/release', async (_c, body) => {
      const input = decodeBody<ReleaseControllerInput>(await body(), ReleaseControllerShape);
      await core.mutate(() => core.controllers.release(p(), input, input.lease_id));
      return STATUS('released');
    }),
    client('controllers/get', async (_c, body) => {
      const input = decodeBody<ActorTarget>(await body(), ActorTargetShape);
      return core.mutate(() => core.controllers.get(p(), input));
    }),
    client('actions/submit', async (c, body) => ops().submit(p(), await body(), signal(c))),
    client('actions/confirm', async (c, body) => ops().confirm(p(), await body(), signal(c))),
    client('operations/get', async (_c, body) => ops().get(p(), await body())),
    client('operations/wait', async (c, body) => ops().wait(p(), await body(), signal(c))),
    client('tasks/timeline/get', async (_c, body) => ops().timelineGet(p(), await body())),
    client('tasks/timeline/wait', async (c, body) => ops().timelineWait(p(), await body(), signal(c))),
    client('operations/cancel', async (_c, body) => ops().cancel(p(), await body())),
    client('emergency-stop', async (_c, body) => {
      const input = decodeBody<SetEmergencyStopInput>(await body(), EmergencyStopShape);
      return core.mutate(() => core.stops.set(p(), input));
    }),
  ];
}

/** The app and its rin.control/v2 routes as `METHOD path` (GET /health, outside the contract, aside). */
export function createControlApp(core: ControlCore, opts: HttpOptions): { app: Hono; routes: string[] } {
  const app = new Hono();
  const table = routes(core, opts.principal).filter((r) => !r.client || opts.principal !== undefined);
  const byPath = new Map(table.map((r) => [r.path, r]));
  const open = new Set(['/health', '/control/v2/health']);

  app.use('*', async (c, next) => {
    const started = performance.now();
    await next();
    // Method, path and status only: never a body, a token or a header.
    opts.log.info('request', { method: c.req.method, path: c.req.path, status: c.res.status, ms: Math.round(performance.now() - started) });
  });
  app.use('*', async (c, next) => {
    if (open.has(c.req.path) || bearerMatches(c.req.header('authorization'), opts.token)) return next();
    return errorResponse(new TransportError(401, 'unauthorized'), opts.log, c.req.path);
  });
  app.use('*', bodyLimit({ maxSize: opts.maxBodyBytes, onError: () => jsonResponse(400, { error: 'request body exceeds the configured limit' }) }));
  app.all('*', async (c) => {
    const path = c.req.path;
    try {
      const route = byPath.get(path);
      if (route === undefined) throw new TransportError(404, 'not found');
      // A GET route answers HEAD too, without the body, as Go's mux does.
      const head = c.req.method === 'HEAD' && route.method === 'GET';
      if (c.req.method !== route.method && !head) {
        return jsonResponse(405, { error: 'method not allowed' }, { Allow: route.method === 'GET' ? 'GET, HEAD' : route.method });
      }
      let read: Promise<WireBody> | undefined;
      const body = (): Promise<WireBody> => (read ??= readWireBody(c.req.raw, opts.maxBodyBytes));
      const value = await route.handler(c, body);
      const res = jsonResponse(200, value);
      return head ? new Response(null, { status: res.status, headers: res.headers }) : res;
    } catch (e) {
      return abandoned(c, opts.log) ?? errorResponse(e, opts.log, path);
    }
  });
  // What a middleware throws (bodyLimit reading a chunked body the client cut off) gets the same answers.
  app.onError((e, c) => abandoned(c, opts.log) ?? errorResponse(e, opts.log, c.req.path));
  return { app, routes: table.filter((r) => r.path.startsWith('/control/v2/')).map((r) => `${r.method} ${r.path}`) };
}
