/**
 * `aigenora session web`: a page on loopback that follows one session side (snapshot, decision window,
 * transcript frames, events) and hands a person's decision to the engine as `session decide` does.
 * Every URL carries a random token as its first path segment; anything else gets 403.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { closeSync, existsSync, fstatSync, openSync, readdirSync, readFileSync, readSync, statSync } from 'node:fs';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { join, resolve } from 'node:path';
import { MAX_DEPTH } from '../crypto/jcs.js';
import { appendDecision, type DecisionRecord, type Window } from '../engine/decision.js';
import { resolveDataDir } from '../library/data-dir.js';
import { ClientAborted, createBoundedServer, type Refusal } from '../server/http-boundary.js';
import type { Spec } from '../spec/types.js';
import { sessionViewPage } from '../web/session-view.js';
import { stringFlag, UsageError, type Command } from './args.js';
import { controlFor } from './decision-control.js';
import { listenOn, parseLoopbackListen, stopSignal } from './serve.js';
import { firstLineOf } from './session.js';

/** How much of the end of transcript.jsonl and events.jsonl a state request reads: they can be huge. */
export const TAIL_BYTES = 4 << 20;
/** At most this many frames and events go to the page (the newest). */
export const MAX_FRAMES = 500;
export const MAX_EVENTS = 200;
/** A decision's request body. */
export const MAX_DECIDE_BYTES = 64 << 10;
/** snapshot.json, decision/state.json and spec.json are small; larger ones are not the engine's. */
const STATE_FILE_BYTES = 1 << 20;
const SPEC_BYTES = 4 << 20;
/** A field value longer than this (as JSON) is shown cut. */
const FIELD_CHARS = 240;

export { parseLoopbackListen, WebViewError } from './serve.js';
export { controlFor, type Control } from './decision-control.js';

/** The session side most recently written under `<data>/sessions` (its snapshot or events). */
export function latestSessionSide(dataDir: string): string | undefined {
  const base = join(dataDir, 'sessions');
  let best: { dir: string; at: number } | undefined;
  for (const sid of existsSync(base) ? readdirSync(base) : []) {
    for (const role of ['host', 'guest']) {
      const dir = join(base, sid, role);
      for (const f of ['snapshot.json', 'events.jsonl']) {
        const st = statSync(join(dir, f), { throwIfNoEntry: false });
        if (st && (!best || st.mtimeMs > best.at)) best = { dir, at: st.mtimeMs };
      }
    }
  }
  return best?.dir;
}

function sideDir(target: string): string {
  const st = statSync(target, { throwIfNoEntry: false });
  if (!st) throw new UsageError(`${target} does not exist`);
  if (!st.isDirectory()) throw new UsageError(`${target} is not a directory`);
  if (!existsSync(join(target, 'transcript.jsonl')) && !existsSync(join(target, 'snapshot.json'))) {
    throw new UsageError(`${target} is not a session directory (no transcript.jsonl or snapshot.json)`);
  }
  return resolve(target);
}

// ---- reading the session's files -------------------------------------------------------------

interface Tail {
  lines: string[];
  /** The file is longer than what was read: its first lines are left out. */
  truncated: boolean;
}

/** The complete lines in the last `cap` bytes of a file; a line still being written is left for later. */
function readTail(path: string, cap: number): Tail | undefined {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return undefined;
  }
  try {
    const size = fstatSync(fd).size;
    const start = Math.max(0, size - cap);
    const buf = Buffer.alloc(size - start);
    let n = 0;
    while (n < buf.length) {
      const r = readSync(fd, buf, n, buf.length - n, start + n);
      if (r === 0) break;
      n += r;
    }
    const text = buf.subarray(0, n).toString('utf8');
    const end = text.lastIndexOf('\n');
    const lines = end < 0 ? [] : text.slice(0, end).split('\n');
    // Reading from the middle of the file: the first line is a cut one.
    if (start > 0) lines.shift();
    return { lines: lines.filter((l) => l.trim() !== ''), truncated: start > 0 };
  } finally {
    closeSync(fd);
  }
}

/** A small JSON file's object, or undefined when missing, too large, unreadable or not an object. */
function readSmallObject(path: string, max = STATE_FILE_BYTES): Record<string, unknown> | undefined {
  const st = statSync(path, { throwIfNoEntry: false });
  if (!st?.isFile() || st.size > max) return undefined;
  try {
    const v = JSON.parse(readFileSync(path, 'utf8')) as unknown;
    return isObject(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Whether a parsed JSON value nests arrays and objects deeper than `max`; iterative, so any depth is safe to ask about. */
function nestedDeeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (depth + 1 > max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}

/** Re-reads a file only when its size or modification time changed: the page polls several times a second. */
class Cached<T> {
  private key = '';
  private value: T | undefined;
  constructor(
    private readonly path: string,
    private readonly load: (path: string) => T,
  ) {}
  get(): T {
    const st = statSync(this.path, { throwIfNoEntry: false });
    const key = st ? `${st.size}:${st.mtimeMs}:${st.ino}` : 'missing';
    if (key !== this.key || this.value === undefined) {
      this.value = this.load(this.path);
      this.key = key;
    }
    return this.value;
  }
}

export interface FrameRow {
  seq: number;
  from: string;
  action: string;
  fields: Record<string, unknown>;
  /** Fields whose value was too long to send whole. */
  cut?: string[];
}

interface FramesView {
  header: Record<string, unknown> | undefined;
  frames: FrameRow[];
  truncated: boolean;
  unreadable: number;
}

function framesOf(path: string): FramesView {
  const tail = readTail(path, TAIL_BYTES);
  if (!tail) return { header: undefined, frames: [], truncated: false, unreadable: 0 };
  let header: Record<string, unknown> | undefined;
  const frames: FrameRow[] = [];
  let unreadable = 0;
  for (const line of tail.lines) {
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch {
      unreadable++;
      continue;
    }
    if (isObject(v) && v['_transcript'] !== undefined) {
      header = v;
      continue;
    }
    const msg = isObject(v) ? v['msg'] : undefined;
    if (!isObject(v) || !isObject(msg) || typeof msg['action'] !== 'string' || typeof v['seq'] !== 'number' || typeof v['from'] !== 'string') {
      unreadable++;
      continue;
    }
    const row: FrameRow = { seq: v['seq'], from: v['from'], action: msg['action'], fields: {} };
    for (const [k, value] of Object.entries(msg)) {
      if (k === 'action') continue;
      const json = JSON.stringify(value) ?? 'null';
      if (json.length > FIELD_CHARS) {
        row.fields[k] = `${json.slice(0, FIELD_CHARS / 2)}… (${json.length} characters)`;
        (row.cut ??= []).push(k);
      } else row.fields[k] = value;
    }
    frames.push(row);
  }
  const over = frames.length > MAX_FRAMES;
  return {
    header: header ?? (tail.truncated ? firstLineObject(path) : undefined),
    frames: over ? frames.slice(-MAX_FRAMES) : frames,
    truncated: tail.truncated || over,
    unreadable,
  };
}

/** The transcript header when the tail read did not reach it. */
function firstLineObject(path: string): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(firstLineOf(path)) as unknown;
    return isObject(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

interface EventRow {
  ts: unknown;
  type: string;
  data?: unknown;
}

function eventsOf(path: string): { events: EventRow[]; truncated: boolean } {
  const tail = readTail(path, TAIL_BYTES);
  if (!tail) return { events: [], truncated: false };
  const events: EventRow[] = [];
  for (const line of tail.lines) {
    try {
      const e = JSON.parse(line) as unknown;
      if (isObject(e) && typeof e['type'] === 'string') events.push({ ts: e['ts'], type: e['type'], ...(e['data'] !== undefined && { data: e['data'] }) });
    } catch {
      // a line that is not JSON is not an event the engine wrote
    }
  }
  return { events: events.slice(-MAX_EVENTS), truncated: tail.truncated || events.length > MAX_EVENTS };
}

// ---- the server ----------------------------------------------------------------------------

export interface SessionView {
  url: string;
  close(): Promise<void>;
}

type Reply = { status: number; body: unknown; headers?: Record<string, string> };

const fail = (status: number, code: string, message: string, headers?: Record<string, string>): Reply => ({
  status,
  body: { error: { code, message } },
  ...(headers && { headers }),
});

const COMMON_HEADERS = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

const sha = (s: string) => createHash('sha256').update(s).digest();

/** Serves the view of `dir` on a loopback `host:port` until closed. */
export async function serveSessionView(dir: string, host: string, port: number): Promise<SessionView> {
  const token = randomBytes(32).toString('hex');
  const tokenHash = sha(token);
  const transcript = new Cached(join(dir, 'transcript.jsonl'), framesOf);
  const events = new Cached(join(dir, 'events.jsonl'), eventsOf);
  const specFile = new Cached(join(dir, 'spec.json'), (p) => readSmallObject(p, SPEC_BYTES) as Spec | undefined);
  let allowedHosts: Set<string> = new Set();

  // The engine rewrites state.json in place: a read that catches it half written keeps the last good one.
  let lastWindow: Window | undefined;
  const currentWindow = (): Window | undefined => {
    const path = join(dir, 'decision', 'state.json');
    if (!existsSync(path)) return (lastWindow = undefined);
    const w = readSmallObject(path);
    if (!w) return lastWindow;
    lastWindow =
      typeof w['window_id'] === 'string' &&
      typeof w['match_key'] === 'string' &&
      typeof w['match_value'] === 'number' &&
      (w['expects'] === 'value' || w['expects'] === 'message')
        ? (w as unknown as Window)
        : undefined;
    return lastWindow;
  };

  const state = (): Reply => {
    const t = transcript.get();
    const e = events.get();
    const snapshot = readSmallObject(join(dir, 'snapshot.json'));
    const spec = specFile.get();
    const role = typeof t.header?.['role'] === 'string' ? t.header['role'] : typeof snapshot?.['role'] === 'string' ? snapshot['role'] : undefined;
    const w = currentWindow();
    return {
      status: 200,
      body: {
        session_dir: dir,
        sid: t.header?.['sid'] ?? snapshot?.['sid'] ?? null,
        role: role ?? null,
        protocol_id: t.header?.['protocol_id'] ?? null,
        protocol_name: typeof spec?.name === 'string' ? spec.name : null,
        snapshot: snapshot ?? null,
        window: w ?? null,
        control: w ? controlFor(spec, role ?? 'guest', w) : null,
        frames: t.frames,
        frames_truncated: t.truncated,
        frames_unreadable: t.unreadable,
        events: e.events,
        events_truncated: e.truncated,
        limits: { tail_bytes: TAIL_BYTES, frames: MAX_FRAMES, events: MAX_EVENTS, decide_bytes: MAX_DECIDE_BYTES },
      },
    };
  };

  const decide = (raw: Buffer, contentType: string | undefined): Reply => {
    if (!/^application\/json(\s*;|$)/i.test(contentType ?? '')) return fail(415, 'UNSUPPORTED_MEDIA_TYPE', 'a decision is sent as application/json');
    let text: string;
    try {
      text = utf8.decode(raw);
    } catch {
      // Decoding leniently would record U+FFFD for what the person never sent.
      return fail(400, 'BODY_NOT_UTF8', 'the body is not UTF-8');
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return fail(400, 'BAD_JSON', 'the body is not JSON');
    }
    // JSON.parse reads any depth, but writing the decision (JSON.stringify) and every later reader recurse.
    if (nestedDeeperThan(body, MAX_DEPTH)) return fail(400, 'BODY_TOO_DEEP', `a decision nests arrays and objects at most ${MAX_DEPTH} deep`);
    if (!isObject(body)) return fail(400, 'BAD_DECISION', 'a decision is a JSON object {value} or {message}');
    const hasValue = 'value' in body;
    const hasMessage = 'message' in body;
    if (hasValue === hasMessage) return fail(400, 'BAD_DECISION', 'give exactly one of value and message');
    if (hasMessage && !isObject(body['message'])) return fail(400, 'BAD_DECISION', 'message must be a JSON object');
    if (body['window_id'] !== undefined && typeof body['window_id'] !== 'string') return fail(400, 'BAD_DECISION', 'window_id must be a string');
    const w = currentWindow();
    if (!w) return fail(409, 'NO_WINDOW', 'no decision window is open');
    // A click made for a window that has closed since must not answer the next one.
    if (body['window_id'] !== undefined && body['window_id'] !== w.window_id)
      return fail(409, 'WINDOW_CHANGED', `the window ${String(body['window_id']).slice(0, 80)} is no longer open`);
    if ((w.expects === 'message') !== hasMessage) return fail(400, 'BAD_DECISION', `the open window takes a ${w.expects}`);
    const rec: DecisionRecord = {
      match_key: w.match_key,
      match_value: w.match_value,
      ...(hasValue ? { value: body['value'] } : { message: body['message'] as Record<string, unknown> }),
      _meta: { decision_id: `web:${Date.now()}:${randomBytes(6).toString('hex')}`, origin: 'web' },
    };
    try {
      appendDecision(dir, rec);
    } catch {
      return fail(500, 'DECISION_NOT_WRITTEN', 'the decision could not be written to the session directory');
    }
    return { status: 200, body: { decision_id: rec._meta!.decision_id, window_id: w.window_id, match_key: w.match_key, match_value: w.match_value } };
  };

  const send = (res: ServerResponse, r: Reply) => {
    const text = `${JSON.stringify(r.body)}\n`;
    res
      .writeHead(r.status, { ...COMMON_HEADERS, 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), ...r.headers })
      .end(text);
  };

  /** The body up to `max` bytes; past it the rest is read and dropped (up to 16 times that, then the connection is cut) so that the 413 reaches the client. */
  const readBody = (req: IncomingMessage, max: number): Promise<Buffer | 'too_large'> =>
    new Promise((ok, bad) => {
      const parts: Buffer[] = [];
      let size = 0;
      req.on('data', (c: Buffer) => {
        size += c.length;
        if (size <= max) parts.push(c);
        else if (size > 16 * max) req.destroy();
      });
      req.on('end', () => ok(size > max ? 'too_large' : Buffer.concat(parts)));
      req.on('close', () => (size > max ? ok('too_large') : bad(new ClientAborted())));
      req.on('error', () => (size > max ? ok('too_large') : bad(new ClientAborted())));
    });

  const handle = async (req: IncomingMessage, res: ServerResponse, path: string): Promise<void> => {
    // A page elsewhere that makes the browser resolve its own name to 127.0.0.1 sends its own Host.
    if (!allowedHosts.has((req.headers.host ?? '').toLowerCase())) return send(res, fail(403, 'FORBIDDEN', 'wrong host'));
    const m = /^\/([^/]*)(\/.*)?$/.exec(path);
    const given = m?.[1] ?? '';
    if (!timingSafeEqual(sha(given), tokenHash)) return send(res, fail(403, 'FORBIDDEN', 'no token, or the wrong one'));
    const rest = m?.[2];
    if (rest === undefined) {
      res.writeHead(308, { ...COMMON_HEADERS, location: `/${token}/` }).end();
      return;
    }
    const method = req.method ?? 'GET';
    const only = (allowed: string): boolean => {
      if (method === allowed || (allowed === 'GET' && method === 'HEAD')) return true;
      send(res, fail(405, 'METHOD_NOT_ALLOWED', `${rest} takes ${allowed}`, { allow: allowed === 'GET' ? 'GET, HEAD' : allowed }));
      return false;
    };
    switch (rest) {
      case '/': {
        if (!only('GET')) return;
        const nonce = randomBytes(18).toString('base64');
        const html = sessionViewPage(nonce);
        res.writeHead(200, {
          ...COMMON_HEADERS,
          'content-type': 'text/html; charset=utf-8',
          'content-length': Buffer.byteLength(html),
          'content-security-policy': `default-src 'self'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; object-src 'none'`,
        });
        res.end(method === 'HEAD' ? undefined : html);
        return;
      }
      case '/favicon.ico':
        if (!only('GET')) return;
        res.writeHead(204, COMMON_HEADERS).end();
        return;
      case '/state':
        if (!only('GET')) return;
        return send(res, state());
      case '/decide': {
        if (!only('POST')) return;
        const raw = await readBody(req, MAX_DECIDE_BYTES);
        if (raw === 'too_large') return send(res, fail(413, 'BODY_TOO_LARGE', `a decision is at most ${MAX_DECIDE_BYTES} bytes`));
        return send(res, decide(raw, req.headers['content-type']));
      }
      default:
        return send(res, fail(404, 'NOT_FOUND', 'no such page'));
    }
  };

  const server: Server = createBoundedServer(
    async (req, res, { path }) => {
      try {
        await handle(req, res, path);
      } catch (e) {
        // A client that left is the boundary's to close quietly; anything else is the session's files.
        if (e instanceof ClientAborted || res.headersSent) throw e;
        send(res, fail(500, 'INTERNAL', 'the view could not read the session'));
      }
    },
    { render: (r: Refusal) => ({ contentType: 'application/json; charset=utf-8', body: `${JSON.stringify(fail(r.status, r.code, r.message).body)}\n` }) },
  );
  // Requests are small: slow clients are not waited on for long.
  server.requestTimeout = 30_000;
  server.headersTimeout = 10_000;
  const { port: bound, origin, close } = await listenOn(server, host, port);
  allowedHosts = new Set([`127.0.0.1:${bound}`, `localhost:${bound}`, `[::1]:${bound}`]);
  return { url: `${origin}/${token}/`, close };
}

export const sessionWeb: Command = {
  name: 'web',
  usage: 'aigenora session web [SESSION_DIR] [--listen 127.0.0.1:PORT] [--data-dir DIR] [--json]',
  help: `Serves a page on loopback that follows one side of a session, running or finished: its phase, frames
(seq, sender, action, fields), round results and events, polled a few times a second. When a decision
window is open (human and hybrid control) the page asks for it: buttons when the spec gives the choices
(an enum), an input otherwise, and for a whole-message window a JSON template of each message this side
may send. The decision is appended to decision/decisions.jsonl with origin "web", exactly as
\`session decide\` does, and the page shows whether the engine consumed or refused it.
SESSION_DIR is a session side (<data>/sessions/<sid16>/<role>); without it, the side most recently
written under --data-dir. --listen must be a loopback address (default 127.0.0.1:0, a free port).
The URL holds a random token; a request without it gets 403. Only the last ${TAIL_BYTES >> 20} MiB of
transcript.jsonl and events.jsonl are read (the newest ${MAX_FRAMES} frames and ${MAX_EVENTS} events shown).
Prints the URL (--json: {"url"}), then serves until SIGINT or SIGTERM.`,
  flags: { listen: 'string', 'data-dir': 'string', json: 'boolean' },
  async run(args, out) {
    if (args.positional.length > 1) throw new UsageError('expected at most one session directory');
    const { host, port } = parseLoopbackListen(stringFlag(args.flags, 'listen') ?? '127.0.0.1:0');
    const given = args.positional[0];
    if (given !== undefined && args.flags['data-dir'] !== undefined) throw new UsageError('give a session directory or --data-dir, not both');
    let dir: string;
    if (given !== undefined) dir = sideDir(given);
    else {
      const data = resolveDataDir(stringFlag(args.flags, 'data-dir'));
      const latest = latestSessionSide(data);
      if (!latest) throw new UsageError(`no session under ${join(data, 'sessions')}; give a session directory`);
      dir = sideDir(latest);
    }
    const view = await serveSessionView(dir, host, port);
    if (args.flags['json']) out.line(JSON.stringify({ url: view.url }));
    else out.line(`session view of ${dir} at ${view.url}`);
    await stopSignal();
    await view.close();
    return 0;
  },
};
