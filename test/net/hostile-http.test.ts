// Every HTTP surface against a hostile client on a raw socket (issue 33): `aigenora web`, `session web`,
// `server` (the registry), `rin serve` and `aira mcp --http`, each started as the real command. Garbage
// request lines (`GET //[`, a broken absolute form, bad and %00 escapes, a raw NUL), overlong and bad
// headers, methods nobody serves, deep JSON, invalid UTF-8 and bodies cut off by a disconnect. Each answer
// must be a 4xx or a closed socket, never a 5xx; the process must still be running, and a legitimate
// request is served afterwards. The sweeps collect every wrong answer before asserting, so one run
// lists all of them; what each surface answered to each input is printed at the end.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import type { Hono } from 'hono';
import { afterAll, describe, expect, it } from 'vitest';
import type { AppEnv, RouteModule } from '../../ts/server/context.js';
import { createServer, listen } from '../../ts/server/app.js';
import type { Log, LogFields } from '../../ts/server/log.js';
import { BIN } from '../shared/cli.js';
import { tempDir } from '../shared/tmp.js';

const DEEP = `${'['.repeat(5000)}${']'.repeat(5000)}`;
const NOT_UTF8 = (before: string, after: string) => Buffer.concat([Buffer.from(before), Buffer.from([0xff, 0xfe, 0xc0, 0x80]), Buffer.from(after)]);
const RIN_TOKEN = 'hostile-http-token-0123456789abcdef0123456789';
/** How long a socket may stay unanswered before it counts as a hang: far above any answer here. */
const ANSWER_WITHIN_MS = 15_000;

/** What each surface answered to each input: a status, or '-' for a socket closed without an answer. */
const seen = new Map<string, Map<string, string[]>>();
afterAll(() => {
  const surfaces = [...new Set([...seen.values()].flatMap((m) => [...m.keys()]))];
  const width = Math.max(...[...seen.keys()].map((k) => k.length));
  const rows = [...seen].map(([input, by]) => `  ${input.padEnd(width)}  ${surfaces.map((s) => (by.get(s) ?? []).join('/').padEnd(12)).join(' ')}`);
  console.log(
    `hostile HTTP clients (5xx answers and process exits: 0 when this suite passes)\n  ${''.padEnd(width)}  ${surfaces.map((s) => s.padEnd(12)).join(' ')}\n${rows.join('\n')}`,
  );
});

interface Answer {
  status: number | null;
  head: string;
  headers: string;
  body: string;
}

/** Writes `bytes` on a fresh socket; `cutAfterMs` destroys it from our side after that long (a client that goes away). */
function rawHttp(port: number, bytes: string | Buffer, cutAfterMs?: number): Promise<Answer> {
  return new Promise((resolve) => {
    const sock = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let done = false;
    const finish = (): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      sock.destroy();
      const text = Buffer.concat(chunks).toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      resolve({
        status: status ? Number(status[1]) : null,
        head: text.split('\r\n')[0] ?? '',
        headers: end < 0 ? text : text.slice(0, end),
        body: end < 0 ? '' : text.slice(end + 4),
      });
    };
    const timer = setTimeout(() => {
      if (cutAfterMs === undefined) chunks.unshift(Buffer.from(`(no answer within ${ANSWER_WITHIN_MS} ms) `));
      finish();
    }, cutAfterMs ?? ANSWER_WITHIN_MS);
    sock.on('data', (d: Buffer) => chunks.push(d));
    sock.on('error', () => undefined);
    sock.on('close', finish);
    sock.on('connect', () => sock.write(typeof bytes === 'string' ? Buffer.from(bytes, 'latin1') : bytes));
  });
}

/** A request as bytes: `Connection: close`, so the server ends the socket once it answered. */
function request(method: string, target: string, host: string, headers: string[] = [], body?: string | Buffer, declared?: number): Buffer {
  const b = body === undefined ? undefined : typeof body === 'string' ? Buffer.from(body, 'latin1') : body;
  const lines = [
    `${method} ${target} HTTP/1.1`,
    `Host: ${host}`,
    ...headers,
    'Connection: close',
    ...(b === undefined ? [] : [`Content-Length: ${declared ?? b.length}`]),
  ];
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), b ?? Buffer.alloc(0)]);
}

interface Surface {
  label: string;
  child: ChildProcess;
  url: string;
  port: number;
  host: string;
  stderr(): string;
  /** SIGTERM, then the exit status. */
  stop(): Promise<number | null>;
}

const running: Surface[] = [];
afterAll(async () => {
  for (const s of running) if (s.child.exitCode === null) await s.stop();
});

/** Starts `aigenora …args` and waits for the ready line with its URL (every surface prints `--json` {"url"}). */
async function start(label: string, args: string[], env: Record<string, string> = {}): Promise<Surface> {
  const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((ok) => child.once('exit', (code) => ok(code)));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const nl = out.indexOf('\n');
      if (nl >= 0) resolve((JSON.parse(out.slice(0, nl)) as { url: string }).url);
    });
    void exited.then((code) => reject(new Error(`${label} exited ${code} before it listened: ${err}`)));
  });
  const u = new URL(url);
  const s: Surface = {
    label,
    child,
    url,
    port: Number(u.port),
    host: u.host,
    stderr: () => err,
    stop: () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
  running.push(s);
  return s;
}

interface Attack {
  what: string;
  bytes: Buffer;
  /** The client goes away after sending (no answer expected). */
  cut?: boolean;
}

/** The attacks every surface gets; `p` is the path prefix that gets past its first gate (a token, /mcp). */
function commonAttacks(host: string, p: string, headers: string[], jsonPath: string): Attack[] {
  const get = (target: string, extra: string[] = []) => request('GET', target, host, [...headers, ...extra]);
  return [
    { what: 'GET //[', bytes: get('//[') },
    { what: 'GET //[ under the prefix', bytes: get(`${p}//[`) },
    { what: 'GET http://[::1', bytes: get('http://[::1') },
    { what: 'GET http://[::1 with the prefix', bytes: get(`http://[::1${p}`) },
    { what: 'GET http:// (no host)', bytes: get('http://') },
    { what: 'bad escape %E0%A4%A', bytes: get(`${p}/%E0%A4%A`) },
    { what: 'bad escape %zz', bytes: get(`${p}/%zz`) },
    { what: 'escape of invalid UTF-8 %C0%80', bytes: get(`${p}/%C0%80`) },
    { what: '%00 in the path', bytes: get(`${p}/a%00b`) },
    { what: 'raw NUL in the path', bytes: get(`${p}/a\u0000b`) },
    { what: 'asterisk target', bytes: get('*') },
    { what: 'no leading slash', bytes: get('mcp') },
    { what: '40 KB header', bytes: get(`${p}/`, [`X-Big: ${'b'.repeat(40_000)}`]) },
    { what: 'obs-text header value', bytes: get(`${p}/`, ['X-Odd: \u00ff\u00fe']) },
    { what: 'Host [', bytes: request('GET', `${p}/`, '[', headers) },
    { what: 'Host with a space', bytes: request('GET', `${p}/`, 'a b', headers) },
    { what: 'Host with userinfo', bytes: request('GET', `${p}/`, `user@${host}`, headers) },
    { what: 'two Host headers', bytes: get(`${p}/`, ['Host: other.example']) },
    { what: 'TRACE', bytes: request('TRACE', `${p}/`, host, headers) },
    { what: 'PROPFIND', bytes: request('PROPFIND', `${p}/`, host, headers) },
    { what: 'CONNECT', bytes: request('CONNECT', '127.0.0.1:1', host, headers) },
    { what: 'method not a token', bytes: request('G@T', `${p}/`, host, headers) },
    { what: 'HTTP/9.9', bytes: Buffer.from(`GET ${p}/ HTTP/9.9\r\nHost: ${host}\r\n\r\n`, 'latin1') },
    { what: 'garbage', bytes: Buffer.from('\u0000\u0001\u0002 GARBAGE\r\n\r\n', 'latin1') },
    { what: 'deep JSON', bytes: request('POST', jsonPath, host, [...headers, 'Content-Type: application/json'], DEEP) },
    { what: 'deep JSON in an object', bytes: request('POST', jsonPath, host, [...headers, 'Content-Type: application/json'], `{"value":${DEEP}}`) },
    { what: 'invalid UTF-8 body', bytes: request('POST', jsonPath, host, [...headers, 'Content-Type: application/json'], NOT_UTF8('{"value":"', '"}')) },
    { what: 'body cut off, then gone', bytes: request('POST', jsonPath, host, [...headers, 'Content-Type: application/json'], '{"value":', 1000), cut: true },
    {
      what: 'chunked body cut off, then gone',
      bytes: Buffer.from(
        `POST ${jsonPath} HTTP/1.1\r\nHost: ${host}\r\n${headers.map((h) => `${h}\r\n`).join('')}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n9\r\n{"value":\r\n`,
        'latin1',
      ),
      cut: true,
    },
    {
      what: 'bad chunk size',
      bytes: Buffer.from(
        `POST ${jsonPath} HTTP/1.1\r\nHost: ${host}\r\n${headers.map((h) => `${h}\r\n`).join('')}Transfer-Encoding: chunked\r\n\r\nZZZ\r\n`,
        'latin1',
      ),
    },
    { what: 'headers cut off, then gone', bytes: Buffer.from(`GET ${p}/ HTTP/1.1\r\nHost: ${host}\r\nX-Half: `, 'latin1'), cut: true },
  ];
}

/** Sends every attack; returns the wrong outcomes (a 5xx, a hang, an exit) and the answers by name. */
async function sweep(s: Surface, attacks: Attack[]): Promise<{ wrong: string[]; answers: Map<string, Answer> }> {
  const wrong: string[] = [];
  const answers = new Map<string, Answer>();
  for (const a of attacks) {
    const r = await rawHttp(s.port, a.bytes, a.cut ? 300 : undefined);
    answers.set(a.what, r);
    const by = seen.get(a.what) ?? new Map<string, string[]>();
    seen.set(a.what, by);
    by.set(s.label, [...(by.get(s.label) ?? []), r.status === null ? '-' : String(r.status)]);
    if (r.status !== null && r.status >= 500) wrong.push(`${a.what} → ${r.head} ${r.body.slice(0, 200)}`);
    if (r.head.startsWith('(no answer')) wrong.push(`${a.what} → ${r.head}`);
    if (s.child.exitCode !== null) {
      wrong.push(`${a.what} → the process exited ${s.child.exitCode}: ${s.stderr().slice(-500)}`);
      break;
    }
  }
  return { wrong, answers };
}

const errorLines = (stderr: string) => stderr.split('\n').filter((l) => /"level":"error"|internal_error|Error:|at .*\(/.test(l));

describe('aigenora web under hostile clients', () => {
  it('answers every garbage request with a 4xx or a close, keeps running, and still serves the page', async () => {
    const s = await start('web', ['web', '--listen', '127.0.0.1:0', '--json']);
    // The one request of the issue first: it used to end the process.
    const first = await rawHttp(s.port, request('GET', '//[', s.host));
    expect(first.status).toBe(400);
    expect(s.child.exitCode).toBeNull();
    const { wrong } = await sweep(s, commonAttacks(s.host, '', [], '/'));
    expect(wrong).toEqual([]);
    expect(s.child.exitCode).toBeNull();
    const page = await rawHttp(s.port, request('GET', '/', s.host));
    expect(page.status).toBe(200);
    expect(page.body).toContain('aigenora agent');
    expect((await rawHttp(s.port, request('GET', '/agent.js', s.host))).status).toBe(200);
    expect(errorLines(s.stderr())).toEqual([]);
    expect(await s.stop()).toBe(0);
  });
});

describe('aigenora session web under hostile clients', () => {
  it('answers every garbage request with a 4xx or a close, refuses deep and non-UTF-8 decisions with a typed 400, and still takes a decision', async () => {
    const side = join(tempDir('hostile-session-web'), 'side');
    mkdirSync(join(side, 'decision'), { recursive: true });
    writeFileSync(join(side, 'snapshot.json'), JSON.stringify({ role: 'guest', phase: 'play' }));
    writeFileSync(join(side, 'decision', 'state.json'), JSON.stringify({ window_id: 'w1', match_key: 'round', match_value: 1, expects: 'value' }));
    const decisions = join(side, 'decision', 'decisions.jsonl');
    const s = await start('session web', ['session', 'web', side, '--listen', '127.0.0.1:0', '--json']);
    const p = new URL(s.url).pathname.replace(/\/$/, '');
    const { wrong, answers } = await sweep(s, commonAttacks(s.host, p, [], `${p}/decide`));
    expect(wrong).toEqual([]);
    const code = (a: Answer | undefined) => [a?.status, (JSON.parse(a?.body ?? '{}') as { error?: { code?: string } }).error?.code];
    expect(code(answers.get('deep JSON in an object'))).toEqual([400, 'BODY_TOO_DEEP']);
    expect(code(answers.get('deep JSON'))).toEqual([400, 'BODY_TOO_DEEP']);
    expect(code(answers.get('invalid UTF-8 body'))).toEqual([400, 'BODY_NOT_UTF8']);
    // Nothing hostile became a decision; in particular no U+FFFD stands in for bytes that were not UTF-8.
    expect(existsSync(decisions)).toBe(false);
    const ok = await rawHttp(s.port, request('POST', `${p}/decide`, s.host, ['Content-Type: application/json'], '{"value":"rock","window_id":"w1"}'));
    expect(ok.status, ok.body).toBe(200);
    expect(readFileSync(decisions, 'utf8').trim().split('\n')).toHaveLength(1);
    expect((await rawHttp(s.port, request('GET', `${p}/state`, s.host))).status).toBe(200);
    expect(s.child.exitCode).toBeNull();
    expect(await s.stop()).toBe(0);
  });
});

describe('aigenora server (the registry) under hostile clients', () => {
  it('answers every garbage request with a 4xx or a close, keeps running, logs no error, and still serves', async () => {
    const s = await start('registry', ['server', '--listen', '127.0.0.1:0', '--data-dir', tempDir('hostile-registry-http'), '--pow-difficulty', '1', '--json']);
    const { wrong } = await sweep(s, commonAttacks(s.host, '/api/v1', [], '/api/v1/auth/register'));
    expect(wrong).toEqual([]);
    const version = await rawHttp(s.port, request('GET', '/api/v1/version', s.host));
    expect(version.status).toBe(200);
    // Every request the server saw has its access line by now, the cut ones included.
    expect(s.stderr()).toMatch(/"path":"\/api\/v1\/version","status":200/);
    expect(errorLines(s.stderr())).toEqual([]);
    expect(await s.stop()).toBe(0);
  });

  it('logs a client that left mid-body as client_aborted at info, never internal_error (a route reading its body its own way)', async () => {
    const lines: { level: string; event: string; fields?: LogFields }[] = [];
    const log: Log = {
      info: (event, fields) => void lines.push({ level: 'info', event, fields }),
      warn: (event, fields) => void lines.push({ level: 'warn', event, fields }),
      error: (event, fields) => void lines.push({ level: 'error', event, fields }),
    };
    // A module whose handler reads the raw body itself, not through the signed-header middleware.
    const echo: RouteModule = {
      name: 'echo',
      migrations: [],
      register(app: Hono<AppEnv>) {
        app.post('/echo', async (c) => c.json({ length: (await c.req.text()).length }));
      },
    };
    const server = await createServer({ log, modules: [echo] });
    const listening = await listen(server);
    try {
      const port = Number(new URL(listening.url).port);
      const host = new URL(listening.url).host;
      await rawHttp(port, request('POST', '/echo', host, ['Content-Type: application/json'], '{"a":', 1000), 200);
      const deadline = Date.now() + ANSWER_WITHIN_MS;
      while (!lines.some((l) => l.event === 'request' && l.fields?.['path'] === '/echo') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(lines.filter((l) => l.level === 'error')).toEqual([]);
      expect(lines.filter((l) => l.event === 'client_aborted')).toMatchObject([{ level: 'info', fields: { method: 'POST', path: '/echo' } }]);
      const ok = await rawHttp(port, request('POST', '/echo', host, ['Content-Type: application/json'], '{"a":1}'));
      expect([ok.status, ok.body]).toEqual([200, '{"length":7}']);
    } finally {
      await listening.close();
    }
  });
});

describe('aigenora rin serve under hostile clients', () => {
  it('answers every garbage request, with or without the token, with a 4xx or a close, keeps running, and still serves', async () => {
    const s = await start(
      'rin control',
      ['rin', 'serve', '--principal', 'client.one', '--listen', '127.0.0.1:0', '--data-dir', tempDir('hostile-rin-http'), '--json'],
      { RIN_CONTROL_TOKEN: RIN_TOKEN },
    );
    const bearer = [`Authorization: Bearer ${RIN_TOKEN}`];
    const anonymous = await sweep(s, commonAttacks(s.host, '/control/v2', [], '/control/v2/worlds'));
    const authorized = await sweep(s, commonAttacks(s.host, '/control/v2', bearer, '/control/v2/worlds'));
    expect([...anonymous.wrong, ...authorized.wrong]).toEqual([]);
    expect((await rawHttp(s.port, request('GET', '/health', s.host))).status).toBe(200);
    const worlds = await rawHttp(s.port, request('POST', '/control/v2/worlds', s.host, [...bearer, 'Content-Type: application/json'], '{}'));
    expect(worlds.status, worlds.body).toBe(200);
    expect(errorLines(s.stderr())).toEqual([]);
    expect(await s.stop()).toBe(0);
  });
});

describe('aigenora aira mcp --http under hostile clients', () => {
  it('answers every garbage request, in a session or not, with a 4xx or a close, keeps running, and still opens a session', async () => {
    const s = await start('MCP HTTP', ['aira', 'mcp', '--http', '127.0.0.1:0', '--json']);
    const accept = ['Accept: application/json, text/event-stream'];
    const json = [...accept, 'Content-Type: application/json'];
    const init = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'hostile', version: '1' } },
    });
    const opened = await rawHttp(s.port, request('POST', '/mcp', s.host, json, init));
    expect(opened.status, opened.body).toBe(200);
    const sid = /mcp-session-id: (\S+)/i.exec(opened.headers)?.[1];
    expect(sid).toBeTruthy();
    const inSession = [...accept, `Mcp-Session-Id: ${sid}`];
    const outside = await sweep(s, [
      ...commonAttacks(s.host, '/mcp', accept, '/mcp'),
      {
        what: 'an initialize with deep capabilities',
        bytes: request('POST', '/mcp', s.host, json, init.replace('"capabilities":{}', `"capabilities":{"x":${DEEP}}`)),
      },
    ]);
    const within = await sweep(s, [
      ...commonAttacks(s.host, '/mcp', inSession, '/mcp'),
      {
        what: 'a tools/call with deep arguments',
        bytes: request(
          'POST',
          '/mcp',
          s.host,
          [...inSession, 'Content-Type: application/json'],
          JSON.stringify({ jsonrpc: '2.0', id: 6, method: 'tools/call', params: { name: 'catalog.search', arguments: { requestId: 'd' } } }).replace(
            '"requestId":"d"',
            `"requestId":"d","deep":${DEEP}`,
          ),
        ),
      },
      // The SDK builds a fetch Request from these; the fetch API forbids the methods outright.
      { what: 'TRACE /mcp in a session', bytes: request('TRACE', '/mcp', s.host, [...inSession, 'Content-Type: application/json']) },
      {
        what: 'a tools/call whose arguments are a string',
        bytes: request(
          'POST',
          '/mcp',
          s.host,
          [...inSession, 'Content-Type: application/json'],
          JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'interface.manifest', arguments: 'oops' } }),
        ),
      },
    ]);
    expect([...outside.wrong, ...within.wrong]).toEqual([]);
    expect(within.answers.get('TRACE /mcp in a session')?.status).toBe(405);
    const call = within.answers.get('a tools/call whose arguments are a string')!;
    const error = (JSON.parse(call.body) as { error: { code: number; message: string } }).error;
    expect(error.code).toBe(-32602);
    expect(error.message).not.toContain('\n');
    const again = await rawHttp(s.port, request('POST', '/mcp', s.host, json, init));
    expect(again.status, again.body).toBe(200);
    expect(s.child.exitCode).toBeNull();
    expect(errorLines(s.stderr())).toEqual([]);
    expect(await s.stop()).toBe(0);
  });
});
