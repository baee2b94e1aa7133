// The control API client against a hostile or broken daemon on loopback: what it sends (bytes, token),
// and that every odd answer ends in a RinError with a stable code rather than a crash or a hang.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RawJson } from '../../ts/crypto/gojson.js';
import { checkControlToken, normalizeControlBaseUrl, RinControlClient, RinControlError } from '../../ts/rin/client.js';
import { RinError } from '../../ts/rin/errors.js';

const TOKEN = 'test-token-0123456789abcdef0123456789';

describe('origin and token checks (R65, R69)', () => {
  it.each(['http://127.0.0.1:7375', 'http://127.0.0.1:7375/', 'http://localhost:1234', 'http://[::1]:7375', 'http://127.8.9.10:8080'])('accepts %s', (url) => {
    expect(normalizeControlBaseUrl(url)).toBe(new URL(url).origin);
  });
  it.each([
    'https://127.0.0.1:7375',
    'http://127.0.0.1',
    'http://127.0.0.1:80',
    'http://10.0.0.1:7375',
    'http://example.com:7375',
    'http://127.0.0.1.example.com:7375',
    'http://user:pw@127.0.0.1:7375',
    'http://127.0.0.1:7375/control',
    'http://127.0.0.1:7375/?x=1',
    'http://127.0.0.1:7375/#f',
    'not a url',
  ])('refuses %s', (url) => {
    expect(() => normalizeControlBaseUrl(url)).toThrow(RinError);
    expect(() => new RinControlClient({ baseUrl: url, token: TOKEN })).toThrow(/loopback|not a URL/);
  });
  it('refuses a short or multi-line token', () => {
    expect(() => checkControlToken('x'.repeat(31))).toThrow(/at least 32 bytes/);
    expect(checkControlToken('é'.repeat(16))).toBe('é'.repeat(16)); // 32 bytes, 16 characters
    expect(() => checkControlToken(`${'x'.repeat(32)}\n`)).toThrow(/one line/);
    expect(() => checkControlToken(` ${'x'.repeat(32)}`)).toThrow(/one line/);
  });
});

type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void;

describe('against a daemon that misbehaves', () => {
  let server: Server;
  let base: string;
  let handler: Handler = () => undefined;
  const seen: { method: string; url: string; auth: string | undefined; type: string | undefined; body: string }[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        seen.push({ method: req.method!, url: req.url!, auth: req.headers.authorization, type: req.headers['content-type'], body });
        handler(req, body, res);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  const json = (res: ServerResponse, status: number, text: string) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(text);
  };
  const client = (opts: { timeoutMs?: number } = {}) => new RinControlClient({ baseUrl: base, token: TOKEN, ...opts });
  async function refusal(p: Promise<unknown>): Promise<RinControlError> {
    const e = await p.then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(e).toBeInstanceOf(RinControlError);
    return e as RinControlError;
  }

  it('sends the bearer token and writes raw arguments byte for byte', async () => {
    handler = (_req, _body, res) => json(res, 200, '{"operation_id":"operation.1","status":"queued"}\n');
    const args = '{"b":1.0,"a":1e400,"c":"\\u00e9<"}';
    const epoch = { session_id: 's', world_id: 'w', host: 1, world: 2, timeline: 3 };
    const op = await client().submitAction({
      host_id: 'h',
      world_id: 'w',
      action_request: {
        request_id: 'r',
        controller_id: 'c',
        actor_id: 'a',
        capability: { id: 'x.y', version: '1.0.0' },
        spec_digest: '0'.repeat(64),
        arguments: new RawJson(args),
        expected_epoch: epoch,
        observation_sequence: 4,
        idempotency_key: 'k',
      },
    });
    expect(op.status).toBe('queued');
    const last = seen.at(-1)!;
    expect(last.method).toBe('POST');
    expect(last.url).toBe('/control/v2/actions/submit');
    expect(last.auth).toBe(`Bearer ${TOKEN}`);
    expect(last.type).toBe('application/json');
    expect(last.body).toBe(
      `{"host_id":"h","world_id":"w","action_request":{"request_id":"r","controller_id":"c","actor_id":"a","capability":{"id":"x.y","version":"1.0.0"},"spec_digest":"${'0'.repeat(64)}","arguments":${args},"expected_epoch":{"session_id":"s","world_id":"w","host":1,"world":2,"timeline":3},"observation_sequence":4,"idempotency_key":"k"}}`,
    );
  });

  it("carries the server's code and message, or the status's code when it names none", async () => {
    handler = (_req, _body, res) => json(res, 409, '{"error":"controller lease is held","code":"lease_conflict"}');
    let e = await refusal(client().getController({ host_id: 'h', world_id: 'w', actor_id: 'a' }));
    expect([e.code, e.status]).toEqual(['lease_conflict', 409]);
    expect(e.message).toBe('lease_conflict: controller lease is held (HTTP 409 from POST /control/v2/controllers/get)');
    handler = (_req, _body, res) => json(res, 401, '{"error":"unauthorized"}');
    e = await refusal(client().listWorlds());
    expect([e.code, e.status]).toEqual(['forbidden', 401]);
    handler = (_req, _body, res) => json(res, 409, '{"error":"x","code":"made_up"}');
    expect((await refusal(client().listWorlds())).code).toBe('conflict');
    handler = (_req, _body, res) => {
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end('<html>bad gateway</html>');
    };
    e = await refusal(client().listWorlds());
    expect([e.code, e.message]).toEqual(['internal', 'internal: HTTP 502 (HTTP 502 from POST /control/v2/worlds)']);
  });

  it('keeps control characters of the server out of the message', async () => {
    handler = (_req, _body, res) => json(res, 400, '{"error":"bad\\u001b[31m red\\nline","code":"invalid"}');
    const e = await refusal(client().listWorlds());
    expect(e.message).not.toMatch(/[\u0000-\u001f]/);
  });

  it('refuses an answer that is not strict JSON, not JSON at all, or not an object', async () => {
    for (const [type, text] of [
      ['application/json', '{"a":1,"a":2}'],
      ['application/json', '{"a":"\\ud800"}'],
      ['text/plain', '{}'],
      ['application/json', '{} {}'],
      ['application/json', '"a string"'],
    ] as const) {
      handler = (_req, _body, res) => {
        res.writeHead(200, { 'content-type': type });
        res.end(text);
      };
      const e = await refusal(client().listWorlds());
      expect(e.code, text).toBe('internal');
    }
  });

  it('stops reading an answer larger than 8 MiB, declared or streamed', async () => {
    const big = `[${'"xxxxxxxxxxxxxxx",'.repeat(500_000)}"x"]`; // ~9 MB
    handler = (_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(big) });
      res.end(big);
    };
    expect((await refusal(client().listWorlds())).message).toMatch(/declares \d+ bytes, more than 8388608/);
    handler = (_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(big.slice(0, 5_000_000));
      res.end(big.slice(5_000_000));
    };
    expect((await refusal(client().listWorlds())).message).toMatch(/exceeds 8388608 bytes/);
  });

  it('never follows a redirect', async () => {
    const before = seen.length;
    handler = (_req, _body, res) => {
      res.writeHead(307, { location: `${base}/control/v2/elsewhere` });
      res.end();
    };
    const e = await refusal(client().listWorlds());
    expect(e.code).toBe('unavailable');
    expect(e.message).toMatch(/redirect/);
    expect(seen.length).toBe(before + 1);
  });

  it('gives up after its deadline, and extends it by a long poll’s wait', async () => {
    handler = () => undefined; // never answers
    const e = await refusal(client({ timeoutMs: 200 }).getOperation({ operation_id: 'operation.1' }));
    expect(e.code).toBe('unavailable');
    expect(e.message).toMatch(/within 200 ms/);
    handler = (_req, _body, res) => setTimeout(() => json(res, 200, '{"operation":{"operation_id":"operation.1"},"changed":false}'), 500);
    const update = await client({ timeoutMs: 200 }).waitOperation({ operation_id: 'operation.1', wait_millis: 400 });
    expect(update.changed).toBe(false);
  });

  it('names an unreachable daemon', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const e = await refusal(new RinControlClient({ baseUrl: `http://127.0.0.1:${port}`, token: TOKEN }).info());
    expect(e.code).toBe('unavailable');
    expect(e.message).toMatch(/cannot reach the control daemon .*ECONNREFUSED/);
  });
});
