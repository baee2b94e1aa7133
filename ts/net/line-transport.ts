/**
 * The engine's Transport over a libp2p stream: one compact JSON object per line ("\n"-terminated,
 * empty lines skipped), a maximum frame size (8 MiB by default, lowered while a peer is not yet
 * authenticated; a longer line is handed over as it is, to be refused, and reading stops), and the
 * reference's heartbeat (NOTES A7): {"_sys":"ping"} /
 * {"_sys":"pong"} lines that are answered here and never reach the protocol. Silence beyond the
 * heartbeat timeout reports peer_unresponsive (again every timeout), recovery peer_resumed; the
 * heartbeat never disconnects by itself.
 *
 * Both directions are bounded, so a peer cannot make us hold memory without limit:
 * - Received lines wait for recv() in a queue of at most `maxQueuedBytes` (plus the chunk being cut).
 *   Above it reading stops, a libp2p stream is paused (it stops granting its flow-control window, so
 *   the peer's sends stall and the push-back reaches its TCP socket; what was already in flight is
 *   kept by the stream and handed over on resume), and it resumes once recv() has taken the queue
 *   below half. Lines the peer sent before ending its side are all delivered before the end.
 * - Bytes sent while the stream reports itself full (send() false, until its 'drain' event) are a
 *   backlog; past `maxSendBacklogBytes` the peer is taken for gone: the stream is aborted and send
 *   throws `transport closed`, as for a dead stream.
 */
import type { Transport } from '../engine/transport.js';

export const DEFAULT_MAX_LINE_BYTES = 8 << 20;

/** The send backlog's default limit; it is never below one line of the transport's limit. */
export const DEFAULT_MAX_SEND_BACKLOG_BYTES = 16 << 20;

/**
 * What one queued line costs beyond its characters (the string and its slot in the queue): counted
 * so a flood of one-character lines is bounded in memory as much as one of long ones.
 */
const LINE_OVERHEAD = 64;

/** The slice of a libp2p v3 stream this module uses. */
export interface ByteStream extends AsyncIterable<Uint8Array | { subarray(): Uint8Array }> {
  /** false: the stream is buffering above its high-water mark (a libp2p stream then emits 'drain'). */
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
  /** Stops 'message' events and the peer's sending (libp2p v3); what arrives meanwhile is kept. */
  pause?(): void;
  /** Hands over what was kept, at once, and lets the peer send again. */
  resume?(): void;
  /** Bytes the stream holds that its transport has not taken yet (libp2p v3). */
  readonly writeBufferLength?: number;
}

export interface LineTransportOptions {
  maxLineBytes?: number;
  /**
   * Received lines waiting for recv() above which reading stops until recv() has taken them below
   * half, counted as their characters plus a fixed 64 per line. Default: twice the line limit, at least
   * 1 MiB (it follows setMaxLineBytes).
   */
  maxQueuedBytes?: number;
  /**
   * Bytes sent since the stream last reported itself full (a libp2p stream: what it holds unsent) above
   * which the peer is taken for gone. Default 16 MiB; never below one line of the line limit.
   */
  maxSendBacklogBytes?: number;
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
  /** Characters (plus LINE_OVERHEAD each) of the lines waiting for recv(). */
  private queued = 0;
  private queueCap: number;
  /** Reading is stopped until recv() has drained the queue; `release` starts it again. */
  private held = false;
  private release: (() => void) | undefined;
  /** -1 while the stream takes what we send; else what it holds since it said it was full. */
  private backlog = -1;
  /** Whether the stream tells when it has drained (without that, a backlog could never be cleared). */
  private drains = false;
  private readonly drained = (): void => {
    this.backlog = -1;
  };
  /** The stream's close, once close() was called. */
  private closing: Promise<void> | undefined;
  private onEnded!: () => void;
  private readonly endedP = new Promise<void>((resolve) => (this.onEnded = resolve));

  constructor(
    private readonly stream: ByteStream,
    private readonly opts: LineTransportOptions = {},
  ) {
    this.maxLine = opts.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
    this.queueCap = this.defaultQueueCap();
    const events = stream as unknown as Partial<EventStream>;
    if (typeof events.addEventListener === 'function') {
      this.drains = true;
      events.addEventListener('drain', this.drained);
    }
    if (typeof events.addEventListener === 'function' && typeof events.removeEventListener === 'function' && typeof events.readStatus === 'string')
      this.listen(events as EventStream);
    else void this.pump();
    const interval = opts.heartbeatIntervalMs ?? 10_000;
    const timeout = opts.heartbeatTimeoutMs ?? interval * 3;
    if (interval > 0) {
      let probe = 0;
      let lastReport = 0;
      this.timer = setInterval(() => {
        if (this.ended) return;
        // While we are not reading, the silence is ours, not the peer's.
        if (this.held) this.lastHeard = Date.now();
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

  private defaultQueueCap(): number {
    return this.opts.maxQueuedBytes ?? Math.max(2 * this.maxLine, 1 << 20);
  }

  /** Sends, or ends the transport and throws when the stream is gone or its backlog is over the limit. */
  private put(bytes: Uint8Array): void {
    let ok: boolean;
    try {
      ok = this.stream.send(bytes);
    } catch {
      this.finish();
      throw new Error('transport closed');
    }
    if (!ok || this.backlog >= 0) this.congested(bytes.length);
  }

  private congested(n: number): void {
    if (!this.drains) return;
    const held = (this.stream as unknown as EventStream).writeBufferLength;
    // What the stream really holds when it says so (a slow reader's drains do not reset it); else a count.
    this.backlog = typeof held === 'number' ? held : Math.max(this.backlog, 0) + n;
    if (this.backlog <= Math.max(this.opts.maxSendBacklogBytes ?? DEFAULT_MAX_SEND_BACKLOG_BYTES, this.maxLine + 1)) return;
    this.finish();
    if (this.stream.abort) this.stream.abort(new Error(`send backlog of ${this.backlog} bytes: the peer does not read`));
    else void this.stream.close().catch(() => undefined);
    throw new Error('transport closed');
  }

  private write(obj: unknown): void {
    try {
      this.put(enc.encode(`${JSON.stringify(obj)}\n`));
    } catch {
      // put() has ended the transport
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
    this.queued += line.length + LINE_OVERHEAD;
    this.wake();
  }

  /** recv() took the queue below half of its limit: read again. */
  private unhold(): void {
    this.held = false;
    const r = this.release;
    this.release = undefined;
    r?.();
  }

  private wake(): void {
    const w = this.waiter;
    this.waiter = undefined;
    w?.();
  }

  private finish(): void {
    if (this.drains) (this.stream as unknown as EventStream).removeEventListener('drain', this.drained);
    this.ended = true;
    if (this.timer) clearInterval(this.timer);
    this.wake();
    this.onEnded();
  }

  whenEnded(): Promise<void> {
    return this.endedP;
  }

  /** Changes the line limit from the next byte read (the host raises it once the guest is authenticated). */
  setMaxLineBytes(n: number): void {
    this.maxLine = n;
    this.queueCap = this.defaultQueueCap();
  }

  /** What the lines waiting for recv() count against `maxQueuedBytes`. */
  get queuedBytes(): number {
    return this.queued;
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
      for await (const chunk of this.stream) {
        if (!this.chunk(chunk)) break;
        // Not pulling leaves the rest with the stream, whose own flow control stalls the peer.
        if (this.queued > this.queueCap)
          await new Promise<void>((resolve) => {
            this.held = true;
            this.release = resolve;
          });
      }
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
    const pause = s.pause?.bind(s);
    const resume = s.resume?.bind(s);
    /** The peer ended while we were paused: the stream may still keep lines it sent before. */
    let endPending = false;
    /**
     * Inside resume(): a libp2p stream hands over what it kept and only then grants the peer its window
     * again, so a pause called from that hand-over would be undone at once (the peer sending on while
     * the stream reads as paused, into its own buffer): it waits until resume() has returned.
     */
    let resuming = false;
    const stop = () => {
      s.removeEventListener('message', onMessage);
      s.removeEventListener('close', end);
      s.removeEventListener('remoteCloseWrite', end);
      this.release = undefined;
      this.finish();
    };
    const end = () => {
      if (this.held && !this.ended) endPending = true;
      else stop();
    };
    const hold = () => {
      this.held = true;
      this.release = release;
      try {
        pause?.();
      } catch {
        // closing: nothing more will come
      }
    };
    const release = () => {
      resuming = true;
      try {
        // Hands over everything kept while paused, in one message, before returning.
        resume?.();
      } catch {
        // closed meanwhile: what it kept is gone with it
      } finally {
        resuming = false;
      }
      if (endPending) stop();
      else if (this.queued > this.queueCap && !this.held && !this.ended) hold();
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
      else if (this.queued > this.queueCap && !this.held && !resuming && pause) hold();
    };
    s.addEventListener('message', onMessage);
    s.addEventListener('close', end);
    s.addEventListener('remoteCloseWrite', end);
  }

  /** Throws when the stream is gone (the engine reads that as a disconnect). */
  send(line: string): void {
    if (this.ended) throw new Error('transport closed');
    // libp2p buffers what it cannot send yet; frames are small, so rather than wait for each drain the
    // backlog is only bounded (see congested()).
    this.put(enc.encode(`${line}\n`));
  }

  async recv(timeoutMs: number): Promise<{ line: string } | { line: null; timedOut: boolean }> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const line = this.lines.shift();
      if (line !== undefined) {
        this.queued -= line.length + LINE_OVERHEAD;
        if (this.held && this.queued <= this.queueCap / 2) this.unhold();
        return { line };
      }
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
    this.closing ??= this.stream.close().catch(() => undefined);
  }

  /**
   * Resolves once close() has handed everything sent to the connection beneath and the peer has closed
   * its end too, which it does only after reading what came before (or after `ms`; at once when close()
   * was not called). Whoever stops the node next must wait for it: a node's stop gives each connection
   * half a second to close before aborting it, and under load a last frame still on its way then (a
   * guest's receipt) is lost, the peer seeing a disconnect instead of the end of the session.
   */
  async closed(ms: number): Promise<void> {
    if (!this.closing) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([Promise.all([this.closing, this.endedP]), new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
    clearTimeout(timer);
  }
}
