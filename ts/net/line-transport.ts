/**
 * The engine's Transport over a libp2p stream: one compact JSON object per line ("\n"-terminated,
 * empty lines skipped), a maximum frame size (8 MiB by default, lowered while a peer is not yet
 * authenticated; a longer line is handed over as it is, to be refused, and reading stops), and the
 * reference's heartbeat (NOTES A7): {"_sys":"ping"} /
 * {"_sys":"pong"} lines that are answered here and never reach the protocol. Silence beyond the
 * heartbeat timeout reports peer_unresponsive (again every timeout), recovery peer_resumed; the
 * heartbeat never disconnects by itself.
 */
import type { Transport } from '../engine/transport.js';

export const DEFAULT_MAX_LINE_BYTES = 8 << 20;

/** The slice of a libp2p v3 stream this module uses. */
export interface ByteStream extends AsyncIterable<Uint8Array | { subarray(): Uint8Array }> {
  send(data: Uint8Array): boolean;
  close(): Promise<void>;
  abort?(err: Error): void;
}

/**
 * A libp2p v3 stream is also an event target: its 'message' events are what its async iterator
 * queues and hands out one promise at a time. Reading the events directly cuts those promise hops
 * from every frame.
 */
interface EventStream {
  readStatus?: string;
  addEventListener(type: string, listener: (evt: { data?: unknown }) => void): void;
  removeEventListener(type: string, listener: (evt: { data?: unknown }) => void): void;
}

export interface LineTransportOptions {
  maxLineBytes?: number;
  heartbeatIntervalMs?: number;
  heartbeatTimeoutMs?: number;
  onEvent?: (type: 'peer_unresponsive' | 'peer_resumed', data: Record<string, unknown>) => void;
}

const enc = new TextEncoder();
const dec = new TextDecoder();
const NEWLINE = 10;

/** The unterminated tail of the stream: one growing buffer, so many tiny chunks cost no more than one. */
class Tail {
  private buf = new Uint8Array(256);
  size = 0;
  append(bytes: Uint8Array): void {
    if (this.size + bytes.length > this.buf.length) {
      const next = new Uint8Array(Math.max(this.buf.length * 2, this.size + bytes.length));
      next.set(this.buf.subarray(0, this.size));
      this.buf = next;
    }
    this.buf.set(bytes, this.size);
    this.size += bytes.length;
  }
  /** The tail plus `rest`, and the tail emptied. */
  take(rest: Uint8Array = new Uint8Array()): Uint8Array {
    if (this.size === 0) return rest;
    this.append(rest);
    const out = this.buf.slice(0, this.size);
    this.size = 0;
    if (this.buf.length > 1 << 16) this.buf = new Uint8Array(256);
    return out;
  }
}

export class LineTransport implements Transport {
  private lines: string[] = [];
  private waiter: (() => void) | undefined;
  private ended = false;
  private lastHeard = Date.now();
  private unresponsive = false;
  private timer: ReturnType<typeof setInterval> | undefined;
  private maxLine: number;

  constructor(
    private readonly stream: ByteStream,
    private readonly opts: LineTransportOptions = {},
  ) {
    this.maxLine = opts.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
    const events = stream as unknown as Partial<EventStream>;
    if (typeof events.addEventListener === 'function' && typeof events.removeEventListener === 'function' && typeof events.readStatus === 'string') this.listen(events as EventStream);
    else void this.pump();
    const interval = opts.heartbeatIntervalMs ?? 10_000;
    const timeout = opts.heartbeatTimeoutMs ?? interval * 3;
    if (interval > 0) {
      let probe = 0;
      let lastReport = 0;
      this.timer = setInterval(() => {
        if (this.ended) return;
        this.write({ _sys: 'ping', probe_id: `p${++probe}`, ts: Date.now() / 1000 });
        const silent = Date.now() - this.lastHeard;
        if (silent > timeout && Date.now() - lastReport >= timeout) {
          this.unresponsive = true;
          lastReport = Date.now();
          opts.onEvent?.('peer_unresponsive', { silent_ms: silent });
        }
      }, interval);
      this.timer.unref?.();
    }
  }

  private write(obj: unknown): void {
    try {
      this.stream.send(enc.encode(`${JSON.stringify(obj)}\n`));
    } catch {
      this.finish();
    }
  }

  private heard(): void {
    this.lastHeard = Date.now();
    if (this.unresponsive) {
      this.unresponsive = false;
      this.opts.onEvent?.('peer_resumed', {});
    }
  }

  private deliver(line: string): void {
    this.heard();
    if (line.startsWith('{"_sys"')) {
      try {
        const m = JSON.parse(line) as { _sys?: string; probe_id?: string };
        if (m._sys === 'ping') this.write({ _sys: 'pong', probe_id: String(m.probe_id ?? '').slice(0, 64) });
        return;
      } catch {
        // not a heartbeat after all: the engine will judge it
      }
    }
    this.lines.push(line);
    this.wake();
  }

  private wake(): void {
    const w = this.waiter;
    this.waiter = undefined;
    w?.();
  }

  private finish(): void {
    this.ended = true;
    if (this.timer) clearInterval(this.timer);
    this.wake();
  }

  /** Changes the line limit from the next byte read (the host raises it once the guest is authenticated). */
  setMaxLineBytes(n: number): void {
    this.maxLine = n;
  }

  private readonly tail = new Tail();

  /**
   * Cuts the lines out of one chunk; false once reading must stop (an oversize line was handed over).
   * Lines are cut on bytes, so the cost stays linear in what arrives however it is chunked.
   */
  private chunk(chunk: Uint8Array | { subarray(): Uint8Array }): boolean {
    const tail = this.tail;
    const bytes = chunk instanceof Uint8Array ? chunk : chunk.subarray();
    let start = 0;
    for (let nl = bytes.indexOf(NEWLINE); nl >= 0; nl = bytes.indexOf(NEWLINE, start)) {
      const piece = bytes.subarray(start, nl);
      const line = tail.take(piece);
      start = nl + 1;
      if (line.length > this.maxLine) {
        // Hand the oversize frame over: it is refused (frame_too_large, or a failed handshake).
        this.deliver(dec.decode(line));
        return false;
      }
      const text = dec.decode(line);
      if (text.trim()) this.deliver(text);
    }
    if (start < bytes.length) tail.append(bytes.subarray(start));
    if (tail.size > this.maxLine) {
      this.deliver(dec.decode(tail.take()));
      return false;
    }
    return true;
  }

  private async pump(): Promise<void> {
    try {
      for await (const chunk of this.stream) if (!this.chunk(chunk)) break;
    } catch {
      // a reset stream is a disconnect
    }
    this.finish();
  }

  /** The same reading as pump(), on the stream's events. */
  private listen(s: EventStream): void {
    if (s.readStatus !== 'readable' && s.readStatus !== 'paused') {
      this.finish();
      return;
    }
    const stop = () => {
      s.removeEventListener('message', onMessage);
      s.removeEventListener('close', stop);
      s.removeEventListener('remoteCloseWrite', stop);
      this.finish();
    };
    const onMessage = (evt: { data?: unknown }) => {
      if (this.ended) return;
      let go: boolean;
      try {
        go = this.chunk(evt.data as Uint8Array | { subarray(): Uint8Array });
      } catch {
        go = false;
      }
      if (!go) stop();
    };
    s.addEventListener('message', onMessage);
    s.addEventListener('close', stop);
    s.addEventListener('remoteCloseWrite', stop);
  }

  /** Throws when the stream is gone (the engine reads that as a disconnect). */
  send(line: string): void {
    if (this.ended) throw new Error('transport closed');
    try {
      // libp2p buffers what it cannot send yet; frames are small, so no need to wait for drain here.
      this.stream.send(enc.encode(`${line}\n`));
    } catch {
      this.finish();
      throw new Error('transport closed');
    }
  }

  async recv(timeoutMs: number): Promise<{ line: string } | { line: null; timedOut: boolean }> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const line = this.lines.shift();
      if (line !== undefined) return { line };
      if (this.ended) return { line: null, timedOut: false };
      const left = deadline - Date.now();
      if (left <= 0) return { line: null, timedOut: true };
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiter = () => {
          clearTimeout(t);
          resolve();
        };
      });
    }
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    void this.stream.close().catch(() => undefined);
  }
}
