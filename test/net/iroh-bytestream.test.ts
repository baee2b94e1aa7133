// The iroh byte stream under a peer that does not read: send() reports the stream full past its
// high-water mark, the line transport gives up once its backlog passes its limit (and resets the
// stream), 'drain' comes once everything queued is written, and closing never waits on the peer for
// longer than its drain bound. A fake bidirectional stream stands in for iroh's: the writes it has
// not finished are exactly what a non-reading peer leaves unsent.
import { describe, expect, it, vi } from 'vitest';
import { byteStream } from '../../ts/net/iroh-node.js';
import { LineTransport } from '../../ts/net/line-transport.js';

function fakeBi() {
  const writes: { data: Uint8Array; done: () => void }[] = [];
  let resets = 0;
  const bi = {
    send: {
      writeAll: (data: Uint8Array) => new Promise<void>((done) => writes.push({ data, done })),
      finish: async () => undefined,
      stopped: async () => null,
      reset: async () => void resets++,
    },
    recv: { read: () => new Promise<bigint | null>(() => undefined) },
  };
  /** The peer reads what has been written so far (each write completes, in order). */
  const readAll = async () => {
    // Each write starts only when the one before it is done, a few turns later.
    for (let idle = 0; idle < 3;) {
      const w = writes.shift();
      if (w) {
        w.done();
        idle = 0;
      } else idle++;
      await new Promise((r) => setImmediate(r));
    }
  };
  return { bi, writes, readAll, resets: () => resets };
}

describe('iroh byteStream backpressure', () => {
  it('reports itself full past 1 MiB unsent, counts what it holds, and drains once the peer reads', async () => {
    const f = fakeBi();
    const s = byteStream(f.bi);
    let drains = 0;
    s.addEventListener('drain', () => drains++);
    const chunk = new Uint8Array(256 << 10);
    const answers = Array.from({ length: 6 }, () => s.send(chunk));
    expect(answers).toEqual([true, true, true, true, false, false]);
    expect(s.writeBufferLength).toBe(6 * chunk.length);
    await f.readAll();
    expect(s.writeBufferLength).toBe(0);
    expect(drains).toBe(1);
    expect(s.send(chunk)).toBe(true);
  });

  it('under the line transport, a peer that never reads is dropped at the backlog limit and the stream reset', async () => {
    const f = fakeBi();
    const t = new LineTransport(byteStream(f.bi), { heartbeatIntervalMs: 0, maxLineBytes: 64 << 10, maxSendBacklogBytes: 2 << 20 });
    const line = 'x'.repeat(60 << 10);
    let sent = 0;
    expect(() => {
      for (; sent < 1000; sent++) t.send(line);
    }).toThrow('transport closed');
    // The stream holds every line handed to it, the refused one included: over 2 MiB with it, not before.
    expect((sent + 1) * (line.length + 1)).toBeGreaterThan(2 << 20);
    expect(sent * (line.length + 1)).toBeLessThanOrEqual(2 << 20);
    await new Promise((r) => setImmediate(r));
    expect(f.resets()).toBe(1);
    expect(() => t.send('{}')).toThrow('transport closed');
  });

  it('closing does not wait on a peer that never reads beyond its drain bound', async () => {
    // The drain bound runs on a virtual clock: the close must be over once 10 s of it have passed,
    // however slowly this machine runs.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const f = fakeBi();
      const s = byteStream(f.bi);
      s.send(new Uint8Array(10));
      let closed = false;
      const closing = s.close().then(() => (closed = true));
      await vi.advanceTimersByTimeAsync(10_000);
      expect(closed).toBe(true);
      await closing;
    } finally {
      vi.useRealTimers();
    }
  }, 15_000);
});
