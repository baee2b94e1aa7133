// The HTTP boundary every server of ours listens through (ts/server/http-boundary.ts), on its own: what it
// refuses before a handler runs, what a handler sees, and what becomes of a handler that throws or of a
// client that leaves mid-body. Raw sockets, so the request line is exactly what the test says.
import type { Server } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ClientAborted, createBoundedServer, requestTarget, type BoundedHandler, type RequestTarget } from '../../ts/server/http-boundary.js';
import type { Log, LogFields } from '../../ts/server/log.js';

let server: Server | undefined;
afterEach(async () => {
  await new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())));
  server?.closeAllConnections();
  server = undefined;
});

function recordingLog(): { log: Log; lines: { level: string; event: string; fields?: LogFields }[] } {
  const lines: { level: string; event: string; fields?: LogFields }[] = [];
  const at = (level: string) => (event: string, fields?: LogFields) => void lines.push({ level, event, fields });
  return { log: { info: at('info'), warn: at('warn'), error: at('error') }, lines };
}

async function listen(handler: BoundedHandler, log?: Log): Promise<number> {
  server = createBoundedServer(handler, { log });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', () => resolve()));
  return (server.address() as AddressInfo).port;
}

/** Bytes on a fresh socket; the answer's status line and body once the server closed it (or we cut it). */
function send(port: number, bytes: string, cutAfterMs?: number): Promise<{ head: string; body: string }> {
  return new Promise((resolve) => {
    const sock = connect(port, '127.0.0.1');
    let text = '';
    const done = () => {
      sock.destroy();
      const end = text.indexOf('\r\n\r\n');
      resolve({ head: text.split('\r\n')[0] ?? '', body: end < 0 ? '' : text.slice(end + 4) });
    };
    sock.on('data', (d: Buffer) => (text += d.toString('latin1')));
    sock.on('error', () => undefined);
    sock.on('close', done);
    sock.write(Buffer.from(bytes, 'latin1'));
    if (cutAfterMs !== undefined) setTimeout(done, cutAfterMs);
  });
}

const get = (target: string, extra = '') => `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\n${extra}Connection: close\r\n\r\n`;

describe('requestTarget', () => {
  it('splits a path from its query as sent, without normalising either', () => {
    expect(requestTarget('/a/b?x=1&y=%zz')).toEqual({ path: '/a/b', search: '?x=1&y=%zz' });
    expect(requestTarget('//evil.example/agent.js')).toEqual({ path: '//evil.example/agent.js', search: '' });
    expect(requestTarget('/a/../b/%2e%2e/c')).toEqual({ path: '/a/../b/%2e%2e/c', search: '' });
    expect(requestTarget('http://example.com/p/q?r')).toEqual({ path: '/p/q', search: '?r' });
  });

  it('refuses what new URL cannot read, bad escapes and %00', () => {
    for (const bad of ['//[', 'http://[::1', 'http://', '*', 'mcp', '', '/%E0%A4%A', '/%zz', '/%C0%80', '/a%00b', undefined]) {
      expect(requestTarget(bad), String(bad)).toMatchObject({ status: 400, code: 'BAD_REQUEST_TARGET' });
    }
  });
});

describe('a bounded server', () => {
  it('hands a handler the target and refuses, before it runs, a bad target, a bad or repeated Host, and a method it does not serve', async () => {
    const seen: RequestTarget[] = [];
    const port = await listen((_req, res, target) => {
      seen.push(target);
      res.end('ok');
    });
    expect((await send(port, get('/x?y'))).body).toBe('ok');
    expect(seen).toEqual([{ path: '/x', search: '?y' }]);
    const refusals: [string, string, RegExp][] = [
      ['GET //[', get('//['), /^HTTP\/1\.1 400 .*\n?/],
      ['%00', get('/a%00'), /^HTTP\/1\.1 400/],
      ['Host [', 'GET / HTTP/1.1\r\nHost: [\r\nConnection: close\r\n\r\n', /^HTTP\/1\.1 400/],
      ['Host with userinfo', 'GET / HTTP/1.1\r\nHost: u@h\r\nConnection: close\r\n\r\n', /^HTTP\/1\.1 400/],
      ['two Hosts', get('/', 'Host: other\r\n'), /^HTTP\/1\.1 400/],
      ['TRACE', 'TRACE / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n', /^HTTP\/1\.1 405/],
    ];
    for (const [what, bytes, status] of refusals) {
      const r = await send(port, bytes);
      expect(r.head, what).toMatch(status);
      expect(r.body, what).toMatch(/^(BAD_REQUEST_TARGET|BAD_HOST|METHOD_NOT_ALLOWED): [^\n]+\n$/);
    }
    expect(seen).toHaveLength(1);
  });

  it('answers a handler that throws, synchronously or not, with 400 REQUEST_FAILED and one warn line, and keeps serving', async () => {
    const { log, lines } = recordingLog();
    const port = await listen((req, res) => {
      if (req.url === '/sync') throw new Error('sync failure\nsecond line');
      if (req.url === '/async') return Promise.reject(new TypeError('async failure'));
      if (req.url === '/late') {
        res.writeHead(200).write('partial');
        return Promise.reject(new Error('after the headers'));
      }
      res.end('ok');
    }, log);
    for (const path of ['/sync', '/async']) {
      const r = await send(port, get(path));
      expect([r.head, r.body], path).toEqual(['HTTP/1.1 400 Bad Request', 'REQUEST_FAILED: the request could not be served\n']);
    }
    // Once the headers are out, the status cannot change: the connection is cut.
    expect((await send(port, get('/late'))).head).toBe('HTTP/1.1 200 OK');
    expect((await send(port, get('/'))).body).toBe('ok');
    expect(lines.map((l) => [l.level, l.event, l.fields?.['path'], l.fields?.['error']])).toEqual([
      ['warn', 'request_failed', '/sync', 'Error: sync failure'],
      ['warn', 'request_failed', '/async', 'TypeError: async failure'],
      ['warn', 'request_failed', '/late', 'Error: after the headers'],
    ]);
  });

  it('closes quietly on a client that left mid-body: one client_aborted info line, no answer, no error', async () => {
    const { log, lines } = recordingLog();
    let failed!: () => void;
    const handled = new Promise<void>((resolve) => (failed = resolve));
    const port = await listen(
      (req) =>
        new Promise<void>((_resolve, reject) => {
          req.resume();
          req.once('close', () => {
            reject(new ClientAborted());
            setImmediate(failed);
          });
        }),
      log,
    );
    await send(port, 'POST /upload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{"a":', 100);
    await handled;
    expect(lines).toEqual([{ level: 'info', event: 'client_aborted', fields: { method: 'POST', path: '/upload' } }]);
  });
});
