// The line transport on a fake stream: framing, empty lines, oversize lines, heartbeat answers,
// and the peer_unresponsive / peer_resumed events (without ever disconnecting).
import { describe, expect, it } from 'vitest';
import { LineTransport, type ByteStream } from '../../ts/net/line-transport.js';
import { until } from './helpers.js';

/** A stream whose incoming chunks the test pushes, recording what the transport sends. */
function fakeStream() {
  const sent: string[] = [];
  const queue: Uint8Array[] = [];
  let wake: (() => void) | undefined;
  let closed = false;
  const stream: ByteStream = {
    send: (d) => (sent.push(new TextDecoder().decode(d)), true),
    close: async () => {
      closed = true;
      wake?.();
    },
    async *[Symbol.asyncIterator]() {
      for (;;) {
        while (queue.length) yield queue.shift()!;
        if (closed) return;
        await new Promise<void>((r) => (wake = r));
      }
    },
  };
  const pushBytes = (b: Uint8Array) => {
    queue.push(b);
    wake?.();
  };
  const push = (s: string) => pushBytes(new TextEncoder().encode(s));
  const end = () => {
    closed = true;
    wake?.();
  };
  return { stream, sent, push, pushBytes, end };
}

describe('LineTransport', () => {
  it('splits lines across chunks, skips empty ones, and reports the end', async () => {
    const f = fakeStream();
    const t = new LineTransport(f.stream, { heartbeatIntervalMs: 0 });
    f.push('{"a":1}\n\n{"b"');
    f.push(':2}\n');
    expect(await t.recv(500)).toEqual({ line: '{"a":1}' });
    expect(await t.recv(500)).toEqual({ line: '{"b":2}' });
    expect(await t.recv(50)).toEqual({ line: null, timedOut: true });
    f.end();
    expect(await t.recv(500)).toEqual({ line: null, timedOut: false });
  });

  it('hands an oversize line over as it is (the engine refuses it) and stops reading', async () => {
    const f = fakeStream();
    const t = new LineTransport(f.stream, { heartbeatIntervalMs: 0, maxLineBytes: 100 });
    f.push('x'.repeat(150));
    const r = await t.recv(500);
    expect(r.line?.length).toBe(150);
    expect(await t.recv(100)).toEqual({ line: null, timedOut: false });
  });

  it('cuts lines on bytes, a character split across chunks included, under a limit that can be raised', async () => {
    const f = fakeStream();
    const t = new LineTransport(f.stream, { heartbeatIntervalMs: 0, maxLineBytes: 16 });
    const line = new TextEncoder().encode('{"a":"é€"}\n');
    for (const b of line) f.pushBytes(Uint8Array.of(b));
    expect(await t.recv(500)).toEqual({ line: '{"a":"é€"}' });
    t.setMaxLineBytes(64);
    f.push(`{"b":"${'x'.repeat(40)}"}\n`);
    expect(await t.recv(500)).toEqual({ line: `{"b":"${'x'.repeat(40)}"}` });
    // Many one-byte chunks make one line.
    t.setMaxLineBytes(1 << 20);
    const long = `{"c":"${'z'.repeat(50_000)}"}`;
    for (const b of new TextEncoder().encode(`${long}\n`)) f.pushBytes(Uint8Array.of(b));
    expect(await t.recv(5000)).toEqual({ line: long });
    t.setMaxLineBytes(64);
    // A complete line over the limit is handed over as it is, and reading stops.
    f.push(`${'y'.repeat(80)}\n{"c":1}\n`);
    expect((await t.recv(500)).line).toBe('y'.repeat(80));
    expect(await t.recv(100)).toEqual({ line: null, timedOut: false });
  });

  it('answers pings, never delivers _sys lines, and reports silence and recovery', async () => {
    const f = fakeStream();
    const events: string[] = [];
    const t = new LineTransport(f.stream, { heartbeatIntervalMs: 20, heartbeatTimeoutMs: 60, onEvent: (e) => events.push(e) });
    f.push('{"_sys":"ping","probe_id":"p7","ts":1}\n');
    await until(() => f.sent.includes('{"_sys":"pong","probe_id":"p7"}\n'), 'the pong');
    await until(() => f.sent.some((l) => l.startsWith('{"_sys":"ping"')), 'a ping of its own');
    await until(() => events.includes('peer_unresponsive'), 'peer_unresponsive');
    f.push('{"_sys":"pong","probe_id":"p1"}\n{"v":1}\n');
    expect(await t.recv(500)).toEqual({ line: '{"v":1}' });
    expect(events.at(-1)).toBe('peer_resumed');
    t.send('{"still":"open"}');
    expect(f.sent.at(-1)).toBe('{"still":"open"}\n');
    t.close();
  });
});
