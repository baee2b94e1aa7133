// The line transport on a stream read through its events (as a libp2p v3 stream is): framing across
// chunks, the end on close and on the peer's end of writing, and an oversize line that stops reading.
import { describe, expect, it } from 'vitest';
import { LineTransport, type ByteStream } from '../../ts/net/line-transport.js';

type Listener = (evt: { data?: unknown }) => void;

/** A stream that is an event target, like a libp2p v3 stream; its async iterator must not be used. */
function eventStream(readStatus = 'readable') {
  const listeners = new Map<string, Set<Listener>>();
  const stream = {
    readStatus,
    send: () => true,
    close: async () => undefined,
    addEventListener: (type: string, l: Listener) => void (listeners.get(type) ?? listeners.set(type, new Set()).get(type)!).add(l),
    removeEventListener: (type: string, l: Listener) => void listeners.get(type)?.delete(l),
    [Symbol.asyncIterator]: () => {
      throw new Error('read through the async iterator');
    },
  };
  const emit = (type: string, data?: unknown) => {
    for (const l of [...(listeners.get(type) ?? [])]) l({ data });
  };
  const count = () => [...listeners.values()].reduce((n, s) => n + s.size, 0);
  return { stream: stream as unknown as ByteStream, emit, count, push: (s: string) => emit('message', new TextEncoder().encode(s)) };
}

describe('LineTransport on stream events', () => {
  it('cuts lines across messages (bytes or a list with subarray) and ends when the stream closes', async () => {
    const f = eventStream();
    const t = new LineTransport(f.stream, { heartbeatIntervalMs: 0 });
    f.push('{"a":1}\n\n{"b"');
    f.emit('message', { subarray: () => new TextEncoder().encode(':2}\n') });
    expect(await t.recv(500)).toEqual({ line: '{"a":1}' });
    expect(await t.recv(500)).toEqual({ line: '{"b":2}' });
    expect(await t.recv(20)).toEqual({ line: null, timedOut: true });
    f.emit('close');
    expect(await t.recv(500)).toEqual({ line: null, timedOut: false });
    expect(f.count()).toBe(0);
  });

  it('ends when the peer ends its writing, after the lines already read', async () => {
    const f = eventStream();
    const t = new LineTransport(f.stream, { heartbeatIntervalMs: 0 });
    f.push('{"a":1}\n');
    f.emit('remoteCloseWrite');
    expect(await t.recv(500)).toEqual({ line: '{"a":1}' });
    expect(await t.recv(500)).toEqual({ line: null, timedOut: false });
  });

  it('hands an oversize line over as it is and stops reading', async () => {
    const f = eventStream();
    const t = new LineTransport(f.stream, { heartbeatIntervalMs: 0, maxLineBytes: 16 });
    f.push(`${'x'.repeat(20)}\n{"c":1}\n`);
    expect((await t.recv(500)).line).toBe('x'.repeat(20));
    expect(await t.recv(500)).toEqual({ line: null, timedOut: false });
    expect(f.count()).toBe(0);
    // An unterminated tail over the limit too.
    const g = eventStream();
    const u = new LineTransport(g.stream, { heartbeatIntervalMs: 0, maxLineBytes: 16 });
    g.push('y'.repeat(10));
    g.push('y'.repeat(10));
    expect((await u.recv(500)).line).toBe('y'.repeat(20));
    expect(await u.recv(500)).toEqual({ line: null, timedOut: false });
  });

  it('a stream that is already closed ends at once', async () => {
    const f = eventStream('closed');
    const t = new LineTransport(f.stream, { heartbeatIntervalMs: 0 });
    expect(await t.recv(500)).toEqual({ line: null, timedOut: false });
  });
});
