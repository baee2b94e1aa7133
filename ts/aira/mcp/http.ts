/**
 * The Aira MCP server over Streamable HTTP: one MCP session (`mcp-session-id`) is one task, opened on the
 * session's `initialize` and cancelled when the session ends unfinished (DELETE, the server closing, or
 * the session left idle past its timeout). Loopback only; the Host header must name the bound address
 * (DNS rebinding); bodies are capped and read here, so nothing is parsed, and no task opened, for a
 * request that is not a well-formed initialize. Requests come through the HTTP boundary
 * (ts/server/http-boundary.ts), so no request line, header or throw can end the process.
 *
 * Clients rarely say goodbye (DELETE): a session no request has used for `idleTimeoutMs` ends, and at
 * the session cap a new initialize ends the least recently used idle session rather than being
 * refused. A session with a request in flight (an open event stream included) is never idle.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { isLoopbackHost } from '../../rin/loopback.js';
import { ClientAborted, createBoundedServer, type RequestTarget } from '../../server/http-boundary.js';
import { createAiraMcpSession, type AiraMcpSession, type AiraMcpSessionOptions } from './server.js';

export const MCP_PATH = '/mcp';
export const DEFAULT_MAX_BODY_BYTES = 1 << 20;
/** Each session holds a task (and, with the default store, a document store) until it ends. */
export const DEFAULT_MAX_SESSIONS = 64;
/** An agent may think for minutes between calls; half an hour without one is a client that left. */
export const DEFAULT_IDLE_TIMEOUT_MS = 30 * 60_000;
/** How often idle sessions are looked for when no request comes (each request looks too). */
const SWEEP_EVERY_MS = 60_000;

export class McpListenError extends Error {
  override readonly name = 'McpListenError';
  constructor(
    readonly code: 'INVALID_LISTEN' | 'LISTEN_FAILED',
    message: string,
  ) {
    super(message);
  }
}

export interface AiraMcpHttpOptions {
  /** `host:port` on loopback; port 0 picks a free one. */
  listen: string;
  /** Opens the task (and whatever it needs) of a new session. */
  openSession: (sessionId: string) => Promise<Omit<AiraMcpSessionOptions, 'version'>>;
  version?: string;
  maxBodyBytes?: number;
  /** Open sessions at once (default 64); at the cap an initialize ends the least recently used idle one, or is refused if none is idle. */
  maxSessions?: number;
  /** A session no request used for this long ends, its task cancelled (default 30 minutes). */
  idleTimeoutMs?: number;
  /** The clock idleness is measured on (tests: a virtual one). */
  now?: () => number;
}

export interface ServedAiraMcp {
  /** `http://host:port/mcp`. */
  readonly url: string;
  readonly port: number;
  /** Live sessions by id. */
  readonly sessions: ReadonlyMap<string, AiraMcpSession>;
  close(): Promise<void>;
}

export function parseListen(listen: string): { hostname: string; port: number } {
  const m = /^(\[[^\]]+\]|[^:[\]]+):(\d{1,5})$/.exec(listen);
  const port = Number(m?.[2]);
  if (m === null || port > 65535) throw new McpListenError('INVALID_LISTEN', `--http must be host:port, got ${JSON.stringify(listen.slice(0, 80))}`);
  const hostname = m[1]!.replace(/^\[|\]$/g, '');
  if (!isLoopbackHost(hostname))
    throw new McpListenError('INVALID_LISTEN', `the MCP server listens only on loopback (localhost, 127.0.0.0/8, ::1), not ${hostname.slice(0, 80)}`);
  return { hostname, port };
}

const jsonError = (status: number, code: number, message: string) =>
  new Response(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }), { status, headers: { 'content-type': 'application/json' } });

/** The body as text, or a 413 once it passes `max` bytes (declared or streamed); ClientAborted if the client leaves first. */
function readBody(req: IncomingMessage, max: number): Promise<string | Response> {
  const tooLarge = () => jsonError(413, -32600, `request body larger than ${max} bytes`);
  if (Number(req.headers['content-length'] ?? '0') > max) return Promise.resolve(tooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.byteLength;
      if (size <= max) return void chunks.push(chunk);
      // The rest is discarded unread; the connection closes once the 413 is written.
      req.off('data', onData).off('end', onEnd).resume();
      resolve(tooLarge());
    };
    const onEnd = () => {
      try {
        resolve(utf8.decode(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
      } catch {
        resolve(jsonError(400, -32700, 'request body is not UTF-8'));
      }
    };
    const gone = () => reject(new ClientAborted());
    req.on('data', onData).once('end', onEnd).once('error', gone).once('close', gone);
  });
}
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The request line and headers as the SDK transport reads them; its body is passed to it already parsed.
 * A 400 when the fetch API will not build one (it forbids some methods and header values Node accepts).
 */
function webRequest(req: IncomingMessage, host: string, target: RequestTarget): Request | Response {
  try {
    const headers = new Headers();
    const raw = req.rawHeaders;
    for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!);
    return new Request(`http://${host}${target.path}${target.search}`, { method: req.method ?? 'GET', headers });
  } catch {
    return jsonError(400, -32600, 'the request method or headers cannot be read');
  }
}

/** Writes a transport's answer: JSON in one write, an event stream as it comes until either side ends it. */
async function writeResponse(res: ServerResponse, answer: Response): Promise<void> {
  const headers: Record<string, string> = {};
  answer.headers.forEach((value, name) => (headers[name] = value));
  if (answer.body === null) {
    res.writeHead(answer.status, headers).end();
    return;
  }
  if (!(headers['content-type'] ?? '').startsWith('text/event-stream')) {
    const body = Buffer.from(await answer.arrayBuffer());
    res.writeHead(answer.status, { ...headers, 'content-length': String(body.byteLength) }).end(body);
    return;
  }
  res.writeHead(answer.status, headers);
  res.flushHeaders();
  const reader = answer.body.getReader();
  res.once('close', () => void reader.cancel().catch(() => undefined));
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      res.write(value);
    }
  } finally {
    res.end();
  }
}

export async function serveAiraMcpHttp(opts: AiraMcpHttpOptions): Promise<ServedAiraMcp> {
  const { hostname, port } = parseListen(opts.listen);
  const max = opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const maxSessions = opts.maxSessions ?? DEFAULT_MAX_SESSIONS;
  const idleTimeoutMs = opts.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  const now = opts.now ?? Date.now;
  let opening = 0;
  const sessions = new Map<string, AiraMcpSession>();
  const transports = new Map<string, WebStandardStreamableHTTPServerTransport>();
  /** Per session: requests in flight and when the last one ended (or the session opened). */
  const activity = new Map<string, { busy: number; since: number }>();
  let allowedHosts: string[] = [];
  let closing = false;

  async function endSession(id: string): Promise<void> {
    const s = sessions.get(id);
    sessions.delete(id);
    transports.delete(id);
    activity.delete(id);
    await s?.close();
  }

  /** Counts the request as the session's until its answer is written or its connection gone. */
  function use(id: string, res: ServerResponse): void {
    const a = activity.get(id);
    if (a === undefined) return;
    a.busy++;
    res.once('close', () => {
      a.busy--;
      a.since = now();
    });
  }

  const idle = (): [string, number][] => [...activity].filter(([, a]) => a.busy === 0).map(([id, a]) => [id, a.since]);

  /** Ends every session idle past the timeout. */
  async function expireIdle(): Promise<void> {
    const t = now();
    for (const [id] of idle()) {
      // Looked up again: while an earlier one was ending, a request may have come for this one.
      const a = activity.get(id);
      if (a !== undefined && a.busy === 0 && t - a.since >= idleTimeoutMs) await endSession(id);
    }
  }

  async function answer(req: IncomingMessage, res: ServerResponse, target: RequestTarget): Promise<Response> {
    try {
      return await serveRequest(req, res, target);
    } catch (e) {
      if (e instanceof ClientAborted) throw e;
      // A task that cannot be opened (its authority unreachable, …) is the client's answer, not a crash.
      const first = (e instanceof Error ? e.message : String(e)).split('\n')[0]!.slice(0, 300);
      const code = (e as { code?: unknown }).code;
      return jsonError(500, -32603, typeof code === 'string' && !first.startsWith(code) ? `${code}: ${first}` : first);
    }
  }

  async function serveRequest(req: IncomingMessage, res: ServerResponse, target: RequestTarget): Promise<Response> {
    const host = req.headers.host ?? '';
    if (!allowedHosts.includes(host)) return jsonError(403, -32000, 'the Host header must name the loopback address the server is bound to');
    if (target.path !== MCP_PATH) return jsonError(404, -32601, `not found: the MCP endpoint is ${MCP_PATH}`);
    if (closing) return jsonError(503, -32000, 'the server is closing');
    await expireIdle();
    let parsedBody: unknown;
    if (req.method === 'POST') {
      const text = await readBody(req, max);
      if (text instanceof Response) return text;
      try {
        parsedBody = JSON.parse(text);
      } catch {
        return jsonError(400, -32700, 'request body is not JSON');
      }
    }
    const sidHeader = req.headers['mcp-session-id'];
    const sid = Array.isArray(sidHeader) ? sidHeader.join(', ') : sidHeader;
    if (sid !== undefined) {
      const t = transports.get(sid);
      if (t === undefined) return jsonError(404, -32001, 'session not found');
      const request = webRequest(req, host, target);
      if (request instanceof Response) return request;
      use(sid, res);
      return t.handleRequest(request, parsedBody === undefined ? undefined : { parsedBody });
    }
    if (req.method !== 'POST' || !isInitializeRequest(parsedBody))
      return jsonError(400, -32000, 'no mcp-session-id: the first request of a session is initialize');
    if (sessions.size + opening >= maxSessions) {
      // The least recently used idle session makes room; one still in use is never taken away.
      const oldest = idle().sort((a, b) => a[1] - b[1])[0];
      if (oldest === undefined) return jsonError(503, -32000, `too many open sessions (${maxSessions}), all in use: end one (DELETE) first`);
      await endSession(oldest[0]);
    }
    // Counted from here until the transport has registered the session (or refused it), so concurrent
    // initializes cannot pass the cap together.
    opening++;
    try {
      return await openSession(req, host, target, parsedBody);
    } finally {
      opening--;
    }
  }

  async function openSession(req: IncomingMessage, host: string, target: RequestTarget, parsedBody: unknown): Promise<Response> {
    const request = webRequest(req, host, target);
    if (request instanceof Response) return request;
    const id = randomUUID();
    const session = createAiraMcpSession({ ...(await opts.openSession(id)), ...(opts.version !== undefined && { version: opts.version }) });
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => id,
      enableJsonResponse: true,
      onsessioninitialized: (sessionId) => {
        sessions.set(sessionId, session);
        transports.set(sessionId, transport);
        activity.set(sessionId, { busy: 0, since: now() });
      },
      onsessionclosed: (sessionId) => endSession(sessionId),
    });
    await session.connect(transport);
    const res = await transport.handleRequest(request, { parsedBody });
    // An initialize the transport refused leaves no session (and cancels its task).
    if (!sessions.has(id)) await session.close();
    return res;
  }

  // Plain node:http rather than a Fetch-API bridge: the body is read (and capped) here anyway, so the
  // transport gets a body-less Request and the parsed message, and a JSON answer goes out in one write.
  const server = createBoundedServer(
    async (req, res, target) => {
      const r = await answer(req, res, target);
      // A body left unread (over the cap) would stall the next request on this connection.
      if (!req.complete) res.shouldKeepAlive = false;
      await writeResponse(res, r);
    },
    {
      render: (r) => ({
        contentType: 'application/json',
        body: JSON.stringify({ jsonrpc: '2.0', error: { code: -32600, message: `${r.code}: ${r.message}` }, id: null }),
      }),
    },
  );
  const bound = await new Promise<number>((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) =>
      reject(new McpListenError('LISTEN_FAILED', `cannot listen on ${hostname}:${port}: ${e.code ?? e.message}`)),
    );
    server.listen(port, hostname, () => resolve((server.address() as AddressInfo).port));
  });
  // Each request looks for idle sessions too; this finds them when nothing comes in at all.
  const sweeper = setInterval(() => void expireIdle().catch(() => undefined), Math.min(idleTimeoutMs, SWEEP_EVERY_MS));
  sweeper.unref();
  const urlHost = hostname.includes(':') ? `[${hostname}]` : hostname;
  allowedHosts = [`${urlHost}:${bound}`, ...(hostname === '127.0.0.1' || hostname === '::1' ? [`localhost:${bound}`] : [])];
  return {
    url: `http://${urlHost}:${bound}${MCP_PATH}`,
    port: bound,
    sessions,
    async close() {
      closing = true;
      clearInterval(sweeper);
      for (const id of [...sessions.keys()]) await endSession(id);
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Idle keep-alive connections (and open event streams) would hold close() open.
        server.closeAllConnections();
      });
    },
  };
}
