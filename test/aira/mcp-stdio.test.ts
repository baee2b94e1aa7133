// The MCP server over stdio against lines that are not what a client should send (issue 33 item 6): each
// gets its JSON-RPC answer on one line and the session goes on: not JSON (or not UTF-8) is the -32700 parse
// error, JSON that is no JSON-RPC message is -32600, a line over the size cap is dropped with a -32600,
// and a tools/call whose arguments are not an object is -32602 in one line, not zod's issue list.
import { spawn } from 'node:child_process';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { getCrypto } from '../../ts/crypto/index.js';
import { bracketTask, openDocumentAuthority } from '../../ts/aira/doc/index.js';
import { openTaskSession } from '../../ts/aira/mcp/open.js';
import { serveAiraMcpStdio, STDIO_MAX_MESSAGE_BYTES, type StdioServed } from '../../ts/aira/mcp/stdio.js';
import { BIN } from '../shared/cli.js';

const crypto = getCrypto();
const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'stdio-test', version: '1' } },
});

interface Reply {
  jsonrpc: string;
  id: string | number | null;
  result?: unknown;
  error?: { code: number; message: string };
}

/** stdout as a queue of lines, each parsed. */
function lines(stream: NodeJS.ReadableStream): () => Promise<Reply> {
  const ready: string[] = [];
  const waiting: ((line: string) => void)[] = [];
  let partial = '';
  stream.on('data', (d: Buffer) => {
    partial += d.toString();
    for (let nl = partial.indexOf('\n'); nl >= 0; nl = partial.indexOf('\n')) {
      const line = partial.slice(0, nl);
      partial = partial.slice(nl + 1);
      const w = waiting.shift();
      if (w) w(line);
      else ready.push(line);
    }
  });
  return async () => {
    const line = ready.shift() ?? (await new Promise<string>((resolve) => waiting.push(resolve)));
    return JSON.parse(line) as Reply;
  };
}

let served: StdioServed | undefined;
let stdin: PassThrough;
afterEach(async () => {
  stdin?.end();
  await served?.ended;
  served = undefined;
});

async function start(): Promise<{ send(line: string | Buffer): void; next: () => Promise<Reply> }> {
  stdin = new PassThrough();
  const stdout = new PassThrough();
  const next = lines(stdout);
  const s = await openTaskSession({
    crypto,
    task: bracketTask(),
    authority: async () => ({ authority: openDocumentAuthority({ crypto }), release: async () => undefined }),
  });
  served = await serveAiraMcpStdio(s, { stdin, stdout });
  const send = (line: string | Buffer) => stdin.write(Buffer.concat([typeof line === 'string' ? Buffer.from(line) : line, Buffer.from('\n')]));
  send(INIT);
  expect((await next()).result).toMatchObject({ serverInfo: { name: 'aigenora-aira' } });
  send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
  return { send, next };
}

const ping = (id: number) => JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' });

describe('aira mcp over stdio, line by line', () => {
  it('answers a line that is not JSON with the -32700 parse error, and goes on', async () => {
    const { send, next } = await start();
    for (const bad of ['this is not json', '{"jsonrpc":"2.0","id":3,', '\u0000', "{'single':'quotes'}"]) {
      send(bad);
      expect(await next(), bad).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: the line is not JSON' } });
    }
    send(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]));
    expect((await next()).error).toEqual({ code: -32700, message: 'Parse error: the line is not UTF-8' });
    send(ping(4));
    expect(await next()).toEqual({ jsonrpc: '2.0', id: 4, result: {} });
  });

  it('answers JSON that is no JSON-RPC message with -32600, naming its id when it has one', async () => {
    const { send, next } = await start();
    for (const [bad, id] of [
      ['[1,2]', null],
      ['42', null],
      ['{"id":5}', 5],
      ['{"jsonrpc":"1.0","id":"x","method":"ping"}', 'x'],
      ['{"jsonrpc":"2.0","id":{},"method":"ping"}', null],
    ] as const) {
      send(bad);
      const r = await next();
      expect([r.id, r.error?.code], bad).toEqual([id, -32600]);
    }
    send(ping(6));
    expect((await next()).id).toBe(6);
  });

  it('drops a line over the size cap with -32600 and reads the next one', async () => {
    const { send, next } = await start();
    send(`{"pad":"${'x'.repeat(STDIO_MAX_MESSAGE_BYTES)}"}`);
    expect((await next()).error).toMatchObject({ code: -32600, message: expect.stringContaining(`at most ${STDIO_MAX_MESSAGE_BYTES} bytes`) });
    send(ping(7));
    expect((await next()).id).toBe(7);
  });

  it('answers a tools/call whose arguments are not an object with -32602 in one line', async () => {
    const { send, next } = await start();
    for (const [id, params] of [
      [8, { name: 'interface.manifest', arguments: 'oops' }],
      [9, { name: 'interface.manifest', arguments: [1, 2] }],
      [10, { name: 5 }],
    ] as const) {
      send(JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params }));
      const r = await next();
      expect(r.id).toBe(id);
      expect(r.error?.code).toBe(-32602);
      expect(r.error?.message).toMatch(/^invalid tools\/call request: params\.(arguments|name): /);
      expect(r.error?.message).not.toMatch(/\n/);
    }
    send(JSON.stringify({ jsonrpc: '2.0', id: 11, method: 'resources/read', params: { uri: 5 } }));
    expect((await next()).error).toMatchObject({ code: -32602, message: expect.stringMatching(/^invalid resources\/read request: params\.uri: [^\n]+$/) });
    // A well-formed call still reaches the runtime.
    send(JSON.stringify({ jsonrpc: '2.0', id: 12, method: 'tools/call', params: { name: 'interface.manifest', arguments: { requestId: 'm' } } }));
    expect((await next()).result).toMatchObject({ structuredContent: { status: 'success' } });
  });
});

describe('aigenora aira mcp on stdio, as a process', () => {
  it('answers a garbage line with -32700 and still serves the session', async () => {
    const child = spawn(process.execPath, [BIN, 'aira', 'mcp'], { stdio: ['pipe', 'pipe', 'pipe'] });
    const next = lines(child.stdout);
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    child.stdin.write('this is not json\n');
    expect((await next()).error?.code).toBe(-32700);
    child.stdin.write(`${INIT}\n`);
    expect((await next()).id).toBe(1);
    child.stdin.write(`${ping(2)}\n`);
    expect(await next()).toEqual({ jsonrpc: '2.0', id: 2, result: {} });
    child.stdin.end();
    expect(await exited).toBe(0);
  });
});
