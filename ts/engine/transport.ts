/**
 * The transport the engine talks through: whole lines (one JSON frame each) in, whole lines out, and
 * an end when the peer goes away. The network implementation is issue 5's; the in-memory pair here
 * can inject faults for tests: delay, drop, duplicate, reorder, corrupt, disconnect.
 */

export interface Transport {
  send(line: string): void;
  /** The next line, or null once the peer is gone (or `timeoutMs` passes: then `timedOut` is true). */
  recv(timeoutMs: number): Promise<{ line: string } | { line: null; timedOut: boolean }>;
  close(): void;
  /** Resolves once nothing more can come from the peer, even while lines it sent are still unread. */
  whenEnded?(): Promise<void>;
}

/** Decides what is delivered for the n-th line sent in one direction: [] drops it, two copies duplicate it. */
export type Fault = (line: string, n: number) => string[] | 'disconnect';

class Pipe {
  private queue: string[] = [];
  private waiting: ((v: string | null) => void) | undefined;
  /** Lines sent but not yet delivered (a delay is in effect). */
  private inFlight = 0;
  ending = false;
  closed = false;
  private onGone!: () => void;
  readonly gone = new Promise<void>((resolve) => (this.onGone = resolve));
  /** Sends a line after `delayMs`; a graceful close waits for it, as a socket flushes what it accepted. */
  later(line: string, delayMs: number): void {
    this.inFlight++;
    setTimeout(() => {
      this.inFlight--;
      this.push(line);
      if (this.ending && this.inFlight === 0) this.end();
    }, delayMs);
  }
  /** Ends once everything in flight is delivered. */
  finish(): void {
    if (this.inFlight === 0) this.end();
    else this.ending = true;
  }
  push(line: string): void {
    if (this.closed) return;
    if (this.waiting) {
      const w = this.waiting;
      this.waiting = undefined;
      w(line);
    } else this.queue.push(line);
  }
  end(): void {
    this.closed = true;
    this.onGone();
    const w = this.waiting;
    this.waiting = undefined;
    w?.(null);
  }
  take(timeoutMs: number): Promise<{ line: string } | { line: null; timedOut: boolean }> {
    if (this.queue.length) return Promise.resolve({ line: this.queue.shift()! });
    if (this.closed) return Promise.resolve({ line: null, timedOut: false });
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiting = undefined;
        resolve({ line: null, timedOut: true });
      }, timeoutMs);
      this.waiting = (line) => {
        clearTimeout(timer);
        resolve(line === null ? { line: null, timedOut: false } : { line });
      };
    });
  }
}

export interface MemoryOptions {
  /** Faults applied to lines the first (host) end sends, and to those the second (guest) end sends. */
  hostToGuest?: Fault;
  guestToHost?: Fault;
  /** Milliseconds before each line is delivered. */
  delayMs?: number;
}

/** Two connected in-memory ends, [host, guest]. */
export function memoryPair(opts: MemoryOptions = {}): [Transport, Transport] {
  const toGuest = new Pipe();
  const toHost = new Pipe();
  const end = (inbox: Pipe, outbox: Pipe, fault: Fault | undefined): Transport => {
    let n = 0;
    return {
      send(line) {
        if (outbox.closed || outbox.ending) throw new Error('transport closed');
        const out = fault ? fault(line, n++) : [line];
        if (out === 'disconnect') {
          outbox.end();
          inbox.end();
          return;
        }
        for (const l of out) {
          if (opts.delayMs) outbox.later(l, opts.delayMs);
          else outbox.push(l);
        }
      },
      recv: (timeoutMs) => inbox.take(timeoutMs),
      whenEnded: () => inbox.gone,
      close() {
        // Graceful: what was already sent is still delivered; the peer then sees the end.
        outbox.finish();
        inbox.end();
      },
    };
  };
  return [end(toHost, toGuest, opts.hostToGuest), end(toGuest, toHost, opts.guestToHost)];
}

/** A fault that holds the n-th line back and delivers it after the next one. */
export function reorderAt(k: number): Fault {
  let held: string | undefined;
  return (line, n) => {
    if (n === k) {
      held = line;
      return [];
    }
    if (held !== undefined) {
      const h = held;
      held = undefined;
      return [line, h];
    }
    return [line];
  };
}
