// The line transport bounds what a peer can make it hold: received lines nobody has taken yet (reading
// stops, the libp2p stream is paused, and every line still arrives in order once taken) and what it
// sends to a peer that does not read (past a backlog limit the stream is aborted: `transport closed`).
import { describe, expect, it } from 'vitest';
import '../../ts/net/polyfill.js';
import { multiaddr } from '@multiformats/multiaddr';
import type { Libp2p } from 'libp2p';
import { LineTransport, type ByteStream } from '../../ts/net/line-transport.js';
import { createNode, sessionStream } from '../../ts/net/node.js';
import { SocketGuard } from '../../ts/net/guard.js';
import { seed, until } from './helpers.js';

type Listener = (evt: { data?: unknown }) => void;
const enc = new TextEncoder();
const line = (i: number, pad = 40) => JSON.stringify({ i, pad: 'p'.repeat(pad) });

/**
 * An event stream that pauses as a libp2p v3 stream does: while paused, what the peer pushes is kept,
 * and resume() hands all of it over in one message, then grants the peer its window again (`granting`,
 * what Yamux's sendPause/sendResume switch), in that order.
 */
function pausableStream() {
  const listeners = new Map<string, Set<Listener>>();
  const kept: Uint8Array[] = [];
  let pauses = 0;
  const stream = {
    readStatus: 'readable',
    granting: true,
    send: () => true,
    close: async () => undefined,
    addEventListener: (type: string, l: Listener) => void (listeners.get(type) ?? listeners.set(type, new Set()).get(type)!).add(l),
    removeEventListener: (type: string, l: Listener) => void listeners.get(type)?.delete(l),
    pause() {
      pauses++;
      stream.readStatus = 'paused';
      stream.granting = false;
    },
    resume() {
      stream.readStatus = 'readable';
      if (kept.length > 0) {
        const all = new Uint8Array(kept.reduce((n, b) => n + b.length, 0));
        let at = 0;
        for (const b of kept.splice(0)) all.set(b, (at += b.length) - b.length);
        emit('message', all);
      }
      stream.granting = true;
    },
    [Symbol.asyncIterator]: () => {
      throw new Error('read through the async iterator');
    },
  };
  const emit = (type: string, data?: unknown) => {
    for (const l of [...(listeners.get(type) ?? [])]) l({ data });
  };
  const push = (s: string) => {
    if (stream.readStatus === 'paused') kept.push(enc.encode(s));
    else emit('message', enc.encode(s));
  };
  return { stream, asByteStream: stream as unknown as ByteStream, emit, push, kept, pauses: () => pauses };
}

/** An async-iterable stream (no events) that records how many chunks were pulled from it. */
function pulledStream(chunks: string[]) {
  let pulled = 0;
  const stream: ByteStream = {
    send: () => true,
    close: async () => undefined,
    async *[Symbol.asyncIterator]() {
      for (const c of chunks) {
        pulled++;
        yield enc.encode(c);
      }
    },
  };
  return { stream, pulled: () => pulled };
}

/** Takes n lines; over real sockets a burst after a resume can wait for TCP retransmission here. */
async function drain(t: LineTransport, n: number, timeoutMs = 2_000): Promise<string[]> {
  const got: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = await t.recv(timeoutMs);
    if (r.line === null) throw new Error(`ended after ${i} lines (timedOut ${r.timedOut})`);
    got.push(r.line);
  }
  return got;
}

describe('LineTransport receive backpressure', () => {
  it('pauses a flooding stream near the queue limit and delivers every line in order once taken', async () => {
    const f = pausableStream();
    const cap = 4096;
    const t = new LineTransport(f.asByteStream, { heartbeatIntervalMs: 0, maxQueuedBytes: cap });
    const sent = Array.from({ length: 2000 }, (_, i) => line(i));
    // Ten lines per message: the queue may pass the limit by at most the message being cut.
    const perMessage = 10;
    const messageChars = sent.slice(0, perMessage).reduce((n, l) => n + l.length + 1 + 64, 0);
    for (let i = 0; i < sent.length; i += perMessage)
      f.push(
        sent
          .slice(i, i + perMessage)
          .map((l) => `${l}\n`)
          .join(''),
      );
    expect(f.stream.readStatus).toBe('paused');
    expect(t.queuedBytes).toBeGreaterThan(cap);
    expect(t.queuedBytes).toBeLessThanOrEqual(cap + messageChars);
    expect(f.kept.length).toBeGreaterThan(0);
    // Taken one by one: every pause, including one that the lines handed over by a resume call for,
    // also stops the grants (else the peer would go on sending into the stream's own buffer).
    const got: string[] = [];
    while (got.length < sent.length) {
      got.push(...(await drain(t, 1)));
      if (f.stream.readStatus === 'paused') expect(f.stream.granting).toBe(false);
    }
    expect(got).toEqual(sent);
    expect(t.queuedBytes).toBe(0);
    expect(f.stream.readStatus).toBe('readable');
    expect(f.pauses()).toBeGreaterThan(1);
    expect(await t.recv(20)).toEqual({ line: null, timedOut: true });
  });

  it('resumes only once recv() has taken the queue below half of the limit', async () => {
    const f = pausableStream();
    const t = new LineTransport(f.asByteStream, { heartbeatIntervalMs: 0, maxQueuedBytes: 1000 });
    const sent = Array.from({ length: 40 }, (_, i) => line(i));
    for (const l of sent) f.push(`${l}\n`);
    expect(f.stream.readStatus).toBe('paused');
    const before = t.queuedBytes;
    expect(before).toBeGreaterThan(1000);
    expect(f.kept.length).toBeGreaterThan(0);
    const got: string[] = [];
    while (f.kept.length > 0) {
      expect(f.stream.readStatus).toBe('paused');
      const q = t.queuedBytes;
      const l = (await t.recv(100)).line!;
      got.push(l);
      // Still paused while the queue is above half; the resume hands over everything kept, at once.
      if (f.kept.length > 0) expect(t.queuedBytes).toBeGreaterThan(500);
      else expect(q - (l.length + 64)).toBeLessThanOrEqual(500);
    }
    got.push(...(await drain(t, sent.length - got.length)));
    expect(got).toEqual(sent);
  });

  it('delivers the lines kept while paused before reporting that the peer ended', async () => {
    const f = pausableStream();
    const t = new LineTransport(f.asByteStream, { heartbeatIntervalMs: 0, maxQueuedBytes: 1000 });
    const sent = Array.from({ length: 100 }, (_, i) => line(i));
    for (const l of sent) f.push(`${l}\n`);
    expect(f.kept.length).toBeGreaterThan(0);
    f.emit('remoteCloseWrite');
    expect(await drain(t, sent.length)).toEqual(sent);
    expect(await t.recv(500)).toEqual({ line: null, timedOut: false });
  });

  it('stops pulling from an async-iterable stream until recv() drains the queue', async () => {
    const sent = Array.from({ length: 500 }, (_, i) => line(i));
    const f = pulledStream(sent.map((l) => `${l}\n`));
    const t = new LineTransport(f.stream, { heartbeatIntervalMs: 0, maxQueuedBytes: 2000 });
    // The stream yields without I/O: everything the transport would pull unasked, it has pulled after
    // these turns of the event loop.
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    const perLine = sent[0]!.length + 64;
    expect(f.pulled()).toBeLessThan(sent.length);
    expect(f.pulled()).toBeLessThanOrEqual(Math.ceil(2000 / perLine) + 2);
    expect(t.queuedBytes).toBeLessThanOrEqual(2000 + perLine + 2);
    expect(await drain(t, sent.length)).toEqual(sent);
    expect(await t.recv(500)).toEqual({ line: null, timedOut: false });
  });
});

describe('LineTransport send backlog', () => {
  /** A stream that reports itself full from the first send on, and whose drain the test emits. */
  function fullStream() {
    const listeners = new Map<string, Set<Listener>>();
    let aborted: Error | undefined;
    let sentBytes = 0;
    const stream = {
      readStatus: 'readable',
      send: (d: Uint8Array) => ((sentBytes += d.length), false),
      close: async () => undefined,
      abort: (e: Error) => void (aborted = e),
      addEventListener: (type: string, l: Listener) => void (listeners.get(type) ?? listeners.set(type, new Set()).get(type)!).add(l),
      removeEventListener: (type: string, l: Listener) => void listeners.get(type)?.delete(l),
      [Symbol.asyncIterator]: () => {
        throw new Error('read through the async iterator');
      },
    };
    const emit = (type: string) => {
      for (const l of [...(listeners.get(type) ?? [])]) l({});
    };
    return { stream: stream as unknown as ByteStream, emit, aborted: () => aborted, sentBytes: () => sentBytes };
  }

  it('counts what is sent while the stream is full, forgets it on drain, and aborts past the limit', async () => {
    const f = fullStream();
    const t = new LineTransport(f.stream, { heartbeatIntervalMs: 0, maxLineBytes: 100, maxSendBacklogBytes: 1000 });
    const l = 'x'.repeat(99); // 100 bytes with its newline
    for (let i = 0; i < 10; i++) t.send(l);
    expect(f.sentBytes()).toBe(1000);
    f.emit('drain');
    for (let i = 0; i < 10; i++) t.send(l);
    expect(f.aborted()).toBeUndefined();
    expect(() => t.send(l)).toThrow('transport closed');
    expect(f.aborted()).toBeInstanceOf(Error);
    expect(() => t.send(l)).toThrow('transport closed');
    expect(await t.recv(500)).toEqual({ line: null, timedOut: false });
  });

  it('never sets the limit below one line of the line limit', () => {
    const f = fullStream();
    const t = new LineTransport(f.stream, { heartbeatIntervalMs: 0, maxLineBytes: 1000, maxSendBacklogBytes: 10 });
    t.send('y'.repeat(999));
    expect(f.aborted()).toBeUndefined();
    expect(() => t.send('z')).toThrow('transport closed');
  });

  it('a stream without drain events is never judged by a backlog', () => {
    let aborted = false;
    const stream: ByteStream = {
      send: () => false,
      close: async () => undefined,
      abort: () => void (aborted = true),
      async *[Symbol.asyncIterator]() {},
    };
    const t = new LineTransport(stream, { heartbeatIntervalMs: 0, maxLineBytes: 10, maxSendBacklogBytes: 10 });
    for (let i = 0; i < 100; i++) t.send('x'.repeat(9));
    expect(aborted).toBe(false);
  });
});

describe('LineTransport backpressure over two libp2p nodes', () => {
  const PROTO = '/aigenora/backpressure-test/1';

  /** A listening node whose handler wraps each stream as the session code does. */
  async function pair(onStream: (raw: ByteStream) => void): Promise<{ nodes: Libp2p[]; dial: () => Promise<ByteStream> }> {
    const server = await createNode(seed(91), { listen: ['/ip4/127.0.0.1/tcp/0'], guard: new SocketGuard({ deadlineMs: 60_000 }) });
    await server.handle(PROTO, (stream: unknown) => onStream(sessionStream(stream as ByteStream)));
    const client = await createNode(seed(92));
    const addr = server.getMultiaddrs()[0]!;
    return {
      nodes: [server, client],
      dial: async () => sessionStream((await client.dialProtocol(multiaddr(addr.toString()), PROTO)) as unknown as ByteStream),
    };
  }

  it('a flooding peer is paused (TCP push-back reaches it) and every line arrives in order once taken', async () => {
    let reader: LineTransport | undefined;
    let raw: { readStatus?: string; readBufferLength?: number; recvWindowCapacity?: number } | undefined;
    const cap = 64 << 10;
    const { nodes, dial } = await pair((s) => {
      raw = s as unknown as typeof raw;
      reader = new LineTransport(s, { heartbeatIntervalMs: 0, maxQueuedBytes: cap });
    });
    try {
      const out = await dial();
      const writer = new LineTransport(out, { heartbeatIntervalMs: 0 });
      const sent = Array.from({ length: 20_000 }, (_, i) => line(i, 100)); // about 2.3 MB
      for (const l of sent) writer.send(l);
      await until(() => raw?.readStatus === 'paused', 'the reading stream to pause');
      // The flood pushes until flow control stops it: the writer has spent all the window the reader
      // granted (none left to send with) and all of it has arrived (none left to receive). A reader
      // that went on granting while paused would refill its window on the frame that emptied it, so
      // that this point never comes. From here nothing moves until recv() takes lines.
      const wout = out as unknown as { sendWindowCapacity?: number };
      await until(() => wout.sendWindowCapacity === 0 && raw!.recvWindowCapacity === 0, 'the flood to stall in flow control');
      expect(raw!.readStatus).toBe('paused');
      const perLine = sent[0]!.length + 64;
      // At most one Yamux data frame (its window, 256 KiB initial) past the limit.
      expect(reader!.queuedBytes).toBeLessThanOrEqual(cap + (256 << 10) + perLine);
      // Most of the flood waits on the peer's side, not in our memory.
      const total = sent.reduce((n, l) => n + l.length + 1, 0);
      expect(reader!.queuedBytes + (raw!.readBufferLength ?? 0)).toBeLessThan(total / 2);
      expect((out as unknown as { writeBufferLength?: number }).writeBufferLength ?? 0).toBeGreaterThan(total / 2);
      const got = await drain(reader!, sent.length, 15_000);
      expect(got).toEqual(sent);
      expect(reader!.queuedBytes).toBe(0);
      writer.close();
      reader!.close();
    } finally {
      await Promise.all(nodes.map((n) => n.stop()));
    }
  }, 60_000);

  it('a peer that never reads: send throws transport closed once the backlog passes the limit, and the stream is aborted', async () => {
    const held: LineTransport[] = [];
    const { nodes, dial } = await pair((s) => {
      // Never calls recv(): its queue fills, it pauses, and the writer's window runs out.
      held.push(new LineTransport(s, { heartbeatIntervalMs: 0, maxQueuedBytes: 16 << 10 }));
    });
    try {
      const out = await dial();
      const rawOut = out as unknown as { status?: string; writeBufferLength?: number };
      const cap = 64 << 10;
      const writer = new LineTransport(out, { heartbeatIntervalMs: 0, maxLineBytes: 1024, maxSendBacklogBytes: cap });
      const l = line(0, 200);
      let before = 0;
      let thrown: unknown;
      for (let i = 0; i < 200_000 && thrown === undefined; i++) {
        before = rawOut.writeBufferLength ?? 0;
        try {
          writer.send(l);
        } catch (e) {
          thrown = e;
        }
        if (i % 64 === 0) await new Promise((r) => setImmediate(r));
      }
      expect(thrown).toBeInstanceOf(Error);
      expect((thrown as Error).message).toBe('transport closed');
      // Thrown by the first send that took what the stream holds past the limit, not before.
      expect(before).toBeLessThanOrEqual(cap);
      expect(before + l.length + 1).toBeGreaterThan(cap);
      expect(rawOut.status).toBe('aborted');
      expect(() => writer.send(l)).toThrow('transport closed');
      expect(await writer.recv(500)).toEqual({ line: null, timedOut: false });
    } finally {
      await Promise.all(nodes.map((n) => n.stop()));
    }
  }, 30_000);
});
