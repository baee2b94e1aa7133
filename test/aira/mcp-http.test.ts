// The Streamable HTTP server as anyone on the loopback sees it: typed JSON-RPC errors for every request it
// will not serve, a body cap, no task opened for a request that is not an initialize, and a session's end
// (DELETE or shutdown) cancelling its unfinished task.
import { request } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCrypto } from '../../ts/crypto/index.js';
import { bracketTask, openDocumentAuthority } from '../../ts/aira/doc/index.js';
import { McpListenError, parseListen, serveAiraMcpHttp, type ServedAiraMcp } from '../../ts/aira/mcp/http.js';
import { openTaskSession } from '../../ts/aira/mcp/open.js';
import type { AiraTask } from '../../ts/aira/runtime.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { bracketScript } from '../../ts/aira/mcp/script.js';
import { callTool, runOverMcp } from './mcp-harness.js';

const crypto = getCrypto();
const opened: AiraTask[] = [];
let served: ServedAiraMcp;

beforeAll(async () => {
  served = await serveAiraMcpHttp({
    listen: '127.0.0.1:0',
    maxBodyBytes: 4096,
    openSession: async () => {
      const s = await openTaskSession({
        crypto,
        task: bracketTask(),
        authority: async () => {
          const authority = openDocumentAuthority({ crypto });
          return { authority, release: () => authority.close() };
        },
      });
      opened.push(s.task);
      return s;
    },
  });
});
afterAll(async () => {
  await served?.close();
});

/** A raw request, so the Host header and the body are exactly what a hostile peer sends. */
function raw(
  method: string,
  path: string,
  opts: { host?: string; body?: string | Buffer; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: string }> {
  const url = new URL(served.url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        method,
        path,
        headers: { host: opts.host ?? url.host, accept: 'application/json, text/event-stream', 'content-type': 'application/json', ...opts.headers },
      },
      (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    if (opts.body !== undefined) req.write(opts.body);
    req.end();
  });
}

const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

describe('aira mcp over HTTP, from the outside', () => {
  it('refuses to listen anywhere but loopback, and a malformed address', () => {
    for (const bad of ['0.0.0.0:1', '10.0.0.1:80', 'example.com:80', '[::]:80', '127.0.0.1', '127.0.0.1:99999', '']) {
      expect(() => parseListen(bad), bad).toThrow(McpListenError);
    }
    expect(parseListen('[::1]:0')).toEqual({ hostname: '::1', port: 0 });
    expect(parseListen('localhost:8080')).toEqual({ hostname: 'localhost', port: 8080 });
  });

  it('answers every request it will not serve with a JSON-RPC error and opens no task', async () => {
    const before = opened.length;
    const cases: Array<[string, Promise<{ status: number; body: string }>, number]> = [
      ['a foreign Host header (DNS rebinding)', raw('POST', '/mcp', { host: 'evil.example:80', body: INIT }), 403],
      ['another path', raw('POST', '/other', { body: INIT }), 404],
      ['a body that is not JSON', raw('POST', '/mcp', { body: '{"jsonrpc":' }), 400],
      ['a body that is not UTF-8', raw('POST', '/mcp', { body: Buffer.from([0x7b, 0xff, 0xfe, 0x7d]) }), 400],
      ['a body over the cap', raw('POST', '/mcp', { body: JSON.stringify({ pad: 'x'.repeat(5000) }) }), 413],
      ['a first request that is not initialize', raw('POST', '/mcp', { body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) }), 400],
      ['a GET without a session', raw('GET', '/mcp'), 400],
      ['an unknown session', raw('POST', '/mcp', { body: INIT, headers: { 'mcp-session-id': 'no-such-session' } }), 404],
    ];
    for (const [what, p, status] of cases) {
      const r = await p;
      expect(r.status, what).toBe(status);
      const body = JSON.parse(r.body) as { jsonrpc: string; error: { code: number; message: string } };
      expect(body.jsonrpc, what).toBe('2.0');
      expect(body.error.message, what).toMatch(/\S/);
      expect(body.error.message, what).not.toMatch(/\n|\s at /);
    }
    expect(opened.length).toBe(before);
    expect(served.sessions.size).toBe(0);
  });

  it('keeps serving after a body over the cap was cut off mid-stream', async () => {
    const big = raw('POST', '/mcp', { body: JSON.stringify({ pad: 'x'.repeat(50_000) }) });
    expect((await big).status).toBe(413);
    const transport = new StreamableHTTPClientTransport(new URL(served.url));
    const client = new Client({ name: 'aira-test', version: '1.0.0' });
    await client.connect(transport);
    expect((await callTool(client, 'interface.manifest', { requestId: 'm' })).envelope.status).toBe('success');
    await transport.terminateSession();
    await client.close();
  });

  it("delivers the server's notifications on the session's event stream (GET)", async () => {
    const other = await serveAiraMcpHttp({
      listen: '127.0.0.1:0',
      openSession: () =>
        openTaskSession({
          crypto,
          task: bracketTask(),
          bindCapabilities: 2,
          authority: async () => ({ authority: openDocumentAuthority({ crypto }), release: async () => undefined }),
        }),
    });
    const client = new Client({ name: 'aira-test', version: '1.0.0' });
    let changed!: () => void;
    const listChanged = new Promise<void>((resolve) => (changed = resolve));
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => changed());
    await client.connect(new StreamableHTTPClientTransport(new URL(other.url)));
    // search then describe: the described capability becomes a bound tool, announced as a list change.
    await runOverMcp(client, bracketScript().slice(0, 3));
    await listChanged;
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('bound.doc.setParameter');
    await other.close();
    await client.close().catch(() => undefined);
  });

  it('refuses an initialize beyond the open-session cap until a session ends', async () => {
    const capped = await serveAiraMcpHttp({
      listen: '127.0.0.1:0',
      maxSessions: 2,
      openSession: () =>
        openTaskSession({
          crypto,
          task: bracketTask(),
          authority: async () => ({ authority: openDocumentAuthority({ crypto }), release: async () => undefined }),
        }),
    });
    const connect = async () => {
      const transport = new StreamableHTTPClientTransport(new URL(capped.url));
      const client = new Client({ name: 'aira-test', version: '1.0.0' });
      await client.connect(transport);
      return { transport, client };
    };
    try {
      const first = await connect();
      await connect();
      expect(capped.sessions.size).toBe(2);
      await expect(connect()).rejects.toThrow(/too many open sessions \(2\)/);
      expect(capped.sessions.size).toBe(2);
      await first.transport.terminateSession();
      await first.client.close();
      const third = await connect();
      expect((await callTool(third.client, 'interface.manifest', { requestId: 'm' })).envelope.status).toBe('success');
      expect(capped.sessions.size).toBe(2);
    } finally {
      await capped.close();
    }
  });

  it('cancels the task of a session the client ends (DELETE)', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(served.url));
    const client = new Client({ name: 'aira-test', version: '1.0.0' });
    await client.connect(transport);
    const task = opened.at(-1)!;
    expect(served.sessions.size).toBe(1);
    await callTool(client, 'catalog.search', { requestId: 'q' });
    expect(task.state).toBe('discover');
    await transport.terminateSession();
    await client.close();
    expect(served.sessions.size).toBe(0);
    expect(task.terminal).toMatchObject({ state: 'cancelled', code: 'CANCELLED' });
  });

  it('cancels the tasks of sessions still open when the server closes', async () => {
    const other = await serveAiraMcpHttp({
      listen: '127.0.0.1:0',
      openSession: async () => {
        const s = await openTaskSession({
          crypto,
          task: bracketTask(),
          authority: async () => ({ authority: openDocumentAuthority({ crypto }), release: async () => undefined }),
        });
        opened.push(s.task);
        return s;
      },
    });
    const client = new Client({ name: 'aira-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(other.url)));
    const task = opened.at(-1)!;
    await other.close();
    expect(task.terminal?.state).toBe('cancelled');
    await client.close().catch(() => undefined);
  });
});
