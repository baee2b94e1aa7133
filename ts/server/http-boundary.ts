/**
 * The one door every HTTP request of ours comes through: the registry, the rin control daemon, the MCP
 * endpoint, `aigenora web` and `aigenora session web`. Anyone who can reach the port may send anything,
 * so what a client sends may cost it an answer, never the process.
 *
 * Before a handler runs, the boundary refuses what no handler should have to parse: a request target
 * that `new URL` cannot read (`GET //[`), an escape in the path that is malformed or not UTF-8, `%00`
 * in the path, a missing, malformed or repeated Host, a method none of our servers serves. Handlers get
 * the target already split (raw path, raw query), so none of them calls `new URL` on client bytes. While
 * a handler runs, a throw is answered (400 REQUEST_FAILED, one warn line naming it), never propagated;
 * a client that went away mid-request is closed quietly and costs at most one info line
 * (`client_aborted`), so an unauthenticated client cannot fill the error log.
 *
 * What Node's own parser refuses never reaches here: a request line or header it cannot read (a NUL, a
 * method that is not a token, headers past --max-http-header-size) gets Node's default 400 or 431 and
 * the socket is closed. That default holds only while no 'clientError' listener exists, so none is
 * added. A CONNECT, with no 'connect' listener, is closed without an answer.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import type { Log } from './log.js';

/** The request target as the client sent it, once the boundary found it readable. */
export interface RequestTarget {
  /** Still percent-encoded; every escape in it is well-formed UTF-8 and none is %00. */
  readonly path: string;
  /** The query with its '?', or ''; not checked (each surface reads its own parameters). */
  readonly search: string;
}

export type BoundedHandler = (req: IncomingMessage, res: ServerResponse, target: RequestTarget) => void | Promise<void>;

export type RefusalCode = 'BAD_REQUEST_TARGET' | 'BAD_HOST' | 'METHOD_NOT_ALLOWED' | 'REQUEST_FAILED';

export interface Refusal {
  readonly status: 400 | 405;
  readonly code: RefusalCode;
  /** One line. */
  readonly message: string;
}

/** A refusal in the surface's own error shape. */
export interface RenderedRefusal {
  readonly contentType: string;
  readonly body: string;
}

/** Every method one of our servers serves; anything else (TRACE, PROPFIND, …) is a 405 here. */
export const DEFAULT_METHODS: readonly string[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

export interface BoundaryOptions {
  methods?: readonly string[];
  /** Default: one line of text/plain, `CODE: message`. */
  render?: (r: Refusal) => RenderedRefusal;
  /** For `client_aborted` (info) and `request_failed` (warn); none: silent. */
  log?: Log;
}

/** Thrown by a body reader when the client went away before the body was complete. */
export class ClientAborted extends Error {
  override readonly name = 'ClientAborted';
  readonly code = 'CLIENT_ABORTED';
  constructor() {
    super('the client went away before the request was complete');
  }
}

const refusal = (status: 400 | 405, code: RefusalCode, message: string): Refusal => ({ status, code, message });

// Any base will do: only whether the target parses against one matters.
const BASE = 'http://boundary.invalid';

/** The target split into path and query, or why it cannot be read. */
export function requestTarget(raw: string | undefined): RequestTarget | Refusal {
  const url = raw ?? '';
  let path: string;
  let search: string;
  if (url.startsWith('/')) {
    try {
      new URL(url, BASE);
    } catch {
      return refusal(400, 'BAD_REQUEST_TARGET', 'the request target is not a URL path');
    }
    // Split by hand: `new URL` would read `//host/x` as a host and normalise what the client sent.
    const q = url.indexOf('?');
    path = q < 0 ? url : url.slice(0, q);
    search = q < 0 ? '' : url.slice(q);
  } else if (/^https?:\/\//i.test(url)) {
    // Absolute form (RFC 9112 §3.2.2), which a server must accept.
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return refusal(400, 'BAD_REQUEST_TARGET', 'the request target is not a URL');
    }
    path = u.pathname;
    search = u.search;
  } else {
    return refusal(400, 'BAD_REQUEST_TARGET', 'the request target must be a path starting with /');
  }
  let decoded: string;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    return refusal(400, 'BAD_REQUEST_TARGET', 'the path has a malformed %-escape or one that is not UTF-8');
  }
  if (decoded.includes('\u0000')) return refusal(400, 'BAD_REQUEST_TARGET', 'the path contains %00');
  return { path, search };
}

const isRefusal = (v: RequestTarget | Refusal): v is Refusal => 'code' in v;

// RFC 3986 host (an IP literal or a reg-name, no userinfo) and an optional port.
const HOST = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9\-._~!$&'()*+,;=%]+)(?::\d{0,5})?$/;

function hostRefusal(req: IncomingMessage): Refusal | undefined {
  let hosts = 0;
  for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i]!.toLowerCase() === 'host') hosts++;
  // Node keeps the first of several; a proxy in front may have used another (RFC 9112 §3.2).
  if (hosts > 1) return refusal(400, 'BAD_HOST', 'more than one Host header');
  const host = req.headers.host;
  // HTTP/1.0 may omit it (Node refuses an HTTP/1.1 request without one before we see it).
  if (host === undefined) return undefined;
  if (!HOST.test(host)) return refusal(400, 'BAD_HOST', 'the Host header is not host[:port]');
  return undefined;
}

/** What the boundary refuses before any handler runs, or the target it hands on. */
function check(req: IncomingMessage, methods: ReadonlySet<string>): RequestTarget | Refusal {
  if (!methods.has(req.method ?? '')) return refusal(405, 'METHOD_NOT_ALLOWED', `${(req.method ?? '').slice(0, 20)} is not served here`);
  return hostRefusal(req) ?? requestTarget(req.url);
}

/** The client closed the connection before its request was read or before its answer was written. */
export function clientGone(req: IncomingMessage | undefined, res?: ServerResponse): boolean {
  if (req === undefined) return false;
  return (req.destroyed && !req.complete) || (res !== undefined && res.destroyed && !res.writableFinished);
}

/** The Node request behind a Hono context served through `honoHandler` (c.env), if there is one. */
export function honoIncoming(env: unknown): IncomingMessage | undefined {
  if (typeof env !== 'object' || env === null || !('incoming' in env)) return undefined;
  return (env as { incoming: IncomingMessage }).incoming;
}

const plainRefusal = (r: Refusal): RenderedRefusal => ({ contentType: 'text/plain; charset=utf-8', body: `${r.code}: ${r.message}\n` });

const firstLine = (e: unknown): string => (e instanceof Error ? `${e.name}: ${e.message}` : String(e)).split('\n')[0]!.slice(0, 300);

const ignore = (): void => undefined;

/** Wraps a handler in the boundary: the result is a `request` listener that never throws. */
export function boundRequests(handler: BoundedHandler, opts: BoundaryOptions = {}): (req: IncomingMessage, res: ServerResponse) => void {
  const methods = new Set(opts.methods ?? DEFAULT_METHODS);
  const allow = [...methods].join(', ');
  const render = opts.render ?? plainRefusal;

  const refuse = (req: IncomingMessage, res: ServerResponse, r: Refusal): void => {
    if (res.headersSent || res.destroyed) {
      res.destroy();
      return;
    }
    const { contentType, body } = render(r);
    // A body left unread would be read as the next request on this connection.
    if (!req.complete) res.shouldKeepAlive = false;
    res.writeHead(r.status, {
      'content-type': contentType,
      'content-length': Buffer.byteLength(body),
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      ...(r.status === 405 && { allow }),
    });
    res.end(req.method === 'HEAD' ? undefined : body);
  };

  const failed = (req: IncomingMessage, res: ServerResponse, target: RequestTarget, e: unknown): void => {
    const fields = { method: (req.method ?? '').slice(0, 20), path: target.path.slice(0, 200) };
    if (e instanceof ClientAborted || clientGone(req, res)) {
      // Anyone can do this, as often as they like: it is not an error of ours.
      opts.log?.info('client_aborted', fields);
      res.destroy();
      return;
    }
    opts.log?.warn('request_failed', { ...fields, error: firstLine(e) });
    refuse(req, res, refusal(400, 'REQUEST_FAILED', 'the request could not be served'));
  };

  return (req, res) => {
    // A reset while the body is read or the answer written is ordinary traffic, not an uncaught 'error'.
    req.on('error', ignore);
    res.on('error', ignore);
    try {
      const target = check(req, methods);
      if (isRefusal(target)) return refuse(req, res, target);
      // Inside an async function, a synchronous throw becomes a rejection like any other.
      void (async () => handler(req, res, target))().catch((e: unknown) => {
        try {
          failed(req, res, target, e);
        } catch {
          res.destroy();
        }
      });
    } catch {
      res.destroy();
    }
  };
}

/** An http.Server whose every request goes through the boundary. */
export function createBoundedServer(handler: BoundedHandler, opts: BoundaryOptions = {}): Server {
  return createServer(boundRequests(handler, opts));
}

/** A Hono app's fetch as a bounded handler (c.env is `{ incoming, outgoing }`, see `honoIncoming`). */
export function honoHandler(fetch: Parameters<typeof getRequestListener>[0]): BoundedHandler {
  const listener = getRequestListener(fetch);
  return (req, res) => listener(req, res);
}
