/**
 * The task trace (M46): the contract version and matrix digest it ran under, every decision in the order
 * the runtime made it, and the one terminal record. Nothing in it depends on wall time or randomness,
 * so the same task gives the same trace through any transport.
 */
import type { MatrixContract } from './contract.js';
import { Trace, type TerminalRecord, type TerminalState, type TraceEvent } from './schema.js';

export class TraceLog {
  readonly #events: TraceEvent[] = [];
  #terminal: TerminalRecord | null = null;

  constructor(
    private readonly contract: MatrixContract,
    private readonly taskId: string,
  ) {}

  get terminal(): TerminalRecord | null {
    return this.#terminal;
  }

  /** The seq the next event gets. */
  get nextSeq(): number {
    return this.#events.length;
  }

  append(event: Omit<TraceEvent, 'seq'>): TraceEvent {
    const e: TraceEvent = { seq: this.#events.length, ...event };
    // Optional members are left out rather than carried as undefined, so JSON and JCS agree.
    if (e.code === undefined) delete e.code;
    if (e.status === undefined) delete e.status;
    if (e.effectClass === undefined) delete e.effectClass;
    this.#events.push(e);
    return e;
  }

  /**
   * Records the terminal once; later calls return the first record unchanged. `seq` is the event that
   * ended the task, or, for an end outside any call (cancel, abstain, a spent time budget), the number
   * of events before it.
   */
  end(state: TerminalState, code: string, reason: string, seq: number): TerminalRecord {
    if (this.#terminal) return this.#terminal;
    this.#terminal = Object.freeze({ state, code, reason: reason.slice(0, 1000), seq });
    return this.#terminal;
  }

  /** A copy, valid against the `Trace` schema. */
  snapshot(): Trace {
    return Trace.parse({
      contractVersion: this.contract.contractVersion,
      traceVersion: this.contract.traceVersion,
      matrixDigest: this.contract.matrixDigest,
      taskId: this.taskId,
      events: this.#events.map((e) => ({ ...e })),
      terminal: this.#terminal ? { ...this.#terminal } : null,
    });
  }
}
