// How long an MCP session over HTTP lives when its client never says goodbye (issue 33 item 4): a session
// no request used for the idle timeout ends and its task is cancelled, and at the session cap a new
// initialize ends the least recently used idle session instead of being refused. Idleness is measured on
// a virtual clock; the requests are raw, each on its own connection that the server closes once it has
// answered, so every request has ended on the server before the test moves the clock.
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { getCrypto } from '../../ts/crypto/index.js';
import { bracketTask, openDocumentAuthority } from '../../ts/aira/doc/index.js';
import { serveAiraMcpHttp, type ServedAiraMcp } from '../../ts/aira/mcp/http.js';
import { openTaskSession } from '../../ts/aira/mcp/open.js';
import type { AiraTask } from '../../ts/aira/runtime.js';

const crypto = getCrypto();
const MINUTE = 60_000;

interface Answer {
  status: number;
  headers: string;
  body: string;
}

/** One request on its own connection (Connection: close): resolves once the server has closed it. */
function raw(served: ServedAiraMcp, method: string, opts: { sid?: string; body?: string } = {}): Promise<Answer> {
  const url = new URL(served.url);
  const head = [
    `${method} /mcp HTTP/1.1`,
    `Host: ${url.host}`,
    'Accept: application/json, text/event-stream',
    'Content-Type: application/json',
    'Connection: close',
    ...(opts.sid === undefined ? [] : [`Mcp-Session-Id: ${opts.sid}`]),
    ...(opts.body === undefined ? [] : [`Content-Length: ${Buffer.byteLength(opts.body)}`]),
  ];
  return new Promise((resolve, reject) => {
    const sock = connect(Number(url.port), url.hostname);
    let text = '';
    sock.on('data', (d: Buffer) => (text += d.toString()));
    sock.on('error', reject);
    sock.on('close', () => {
      const end = text.indexOf('\r\n\r\n');
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), headers: text.slice(0, end), body: text.slice(end + 4) });
    });
    sock.end(`${head.join('\r\n')}\r\n\r\n${opts.body ?? ''}`);
  });
}

/** Opens an event stream (GET) on the session and resolves once its headers arrived: from then on the session is in use. */
function eventStream(served: ServedAiraMcp, sid: string): Promise<{ close(): void }> {
  const url = new URL(served.url);
  return new Promise((resolve, reject) => {
    const sock = connect(Number(url.port), url.hostname);
    let text = '';
    sock.on('error', reject);
    sock.on('data', (d: Buffer) => {
      text += d.toString();
      if (!text.includes('\r\n\r\n')) return;
      if (!text.startsWith('HTTP/1.1 200')) reject(new Error(`no event stream: ${text.split('\r\n')[0]}`));
      resolve({ close: () => sock.destroy() });
    });
    sock.write(`GET /mcp HTTP/1.1\r\nHost: ${url.host}\r\nAccept: text/event-stream\r\nMcp-Session-Id: ${sid}\r\n\r\n`);
  });
}

/** initialize and the initialized notification, as a client does; the session's id. */
async function openSession(served: ServedAiraMcp): Promise<string> {
  const init = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'idle-test', version: '1' } },
  };
  const r = await raw(served, 'POST', { body: JSON.stringify(init) });
  expect(r.status, r.body).toBe(200);
  const sid = /^mcp-session-id: (\S+)$/im.exec(r.headers)?.[1];
  expect(sid).toBeTruthy();
  expect((await raw(served, 'POST', { sid, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) })).status).toBe(202);
  return sid!;
}

const manifest = (served: ServedAiraMcp, sid: string) =>
  raw(served, 'POST', {
    sid,
    body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'interface.manifest', arguments: { requestId: 'm' } } }),
  });

let served: ServedAiraMcp | undefined;
afterEach(async () => {
  await served?.close();
  served = undefined;
});

/** A server on a virtual clock (`clock.t`), recording the task of each session in open order. */
async function serve(opts: { idleTimeoutMs?: number; maxSessions?: number } = {}) {
  const clock = { t: 1_000_000 };
  const tasks: AiraTask[] = [];
  served = await serveAiraMcpHttp({
    listen: '127.0.0.1:0',
    now: () => clock.t,
    ...opts,
    openSession: async () => {
      const s = await openTaskSession({
        crypto,
        task: bracketTask(),
        authority: async () => ({ authority: openDocumentAuthority({ crypto }), release: async () => undefined }),
      });
      tasks.push(s.task);
      return s;
    },
  });
  return { served, clock, tasks };
}

describe('MCP sessions over HTTP that their clients abandoned', () => {
  it('end once no request used them for the idle timeout, their task cancelled; a request in time keeps one alive', async () => {
    const { served, clock, tasks } = await serve({ idleTimeoutMs: 10 * MINUTE });
    const a = await openSession(served);
    const taskA = tasks[0]!;
    clock.t += 10 * MINUTE - 1;
    expect((await manifest(served, a)).status).toBe(200);
    clock.t += 10 * MINUTE - 1;
    expect((await manifest(served, a)).status).toBe(200);
    expect(taskA.terminal).toBeNull();
    clock.t += 10 * MINUTE;
    // Any request looks for idle sessions; this one opens another.
    const b = await openSession(served);
    expect([...served.sessions.keys()]).toEqual([b]);
    expect(taskA.terminal).toMatchObject({ state: 'cancelled', code: 'CANCELLED' });
    const gone = await manifest(served, a);
    expect([gone.status, (JSON.parse(gone.body) as { error: { code: number } }).error.code]).toEqual([404, -32001]);
    expect((await manifest(served, b)).status).toBe(200);
  });

  it('end by default after 30 idle minutes', async () => {
    const { served, clock, tasks } = await serve();
    await openSession(served);
    clock.t += 30 * MINUTE - 1;
    await openSession(served);
    expect(served.sessions.size).toBe(2);
    clock.t += 1;
    await openSession(served);
    expect(served.sessions.size).toBe(2);
    expect(tasks.map((t) => t.terminal?.state ?? 'open')).toEqual(['cancelled', 'open', 'open']);
  });

  it('make room at the session cap: a new initialize ends the least recently used idle session, never one in use', async () => {
    const { served, clock, tasks } = await serve({ maxSessions: 2 });
    const a = await openSession(served);
    clock.t += 1000;
    const b = await openSession(served);
    clock.t += 1000;
    // a was used after b opened: b is now the least recently used.
    expect((await manifest(served, a)).status).toBe(200);
    clock.t += 1000;
    const c = await openSession(served);
    expect(new Set(served.sessions.keys())).toEqual(new Set([a, c]));
    expect(tasks.map((t) => t.terminal?.state ?? 'open')).toEqual(['open', 'cancelled', 'open']);
    expect((await manifest(served, b)).status).toBe(404);

    // Both sessions in use (an event stream open on each): nothing to take, so the initialize is refused.
    const streams = [await eventStream(served, a), await eventStream(served, c)];
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'idle-test', version: '1' } },
    };
    const refused = await raw(served, 'POST', { body: JSON.stringify(init) });
    expect(refused.status).toBe(503);
    expect((JSON.parse(refused.body) as { error: { message: string } }).error.message).toMatch(/too many open sessions \(2\), all in use/);
    expect(served.sessions.size).toBe(2);
    expect(tasks).toHaveLength(3);
    // Once a stream is closed its session is idle again, and the next initialize takes its place.
    streams[0]!.close();
    let d: Answer | undefined;
    for (let i = 0; i < 200 && d?.status !== 200; i++) {
      d = await raw(served, 'POST', { body: JSON.stringify(init) });
      if (d.status !== 200) await new Promise((r) => setTimeout(r, 10));
    }
    expect(d?.status).toBe(200);
    expect(served.sessions.has(a)).toBe(false);
    expect(served.sessions.has(c)).toBe(true);
    streams[1]!.close();
  });
});
