/**
 * Local decisions from a page: the engine's decision windows handed to whatever renders them, and the
 * person's answers handed back, checked by the engine exactly as decisions from a file are
 * (decision.ts). A refused answer leaves the window open and says why.
 */
import type { Clock } from '../engine/clock.js';
import type { DecisionRecord, Window } from '../engine/decision-window.js';
import type { DecisionSource } from '../engine/driver.js';

export type Answer = { value: unknown } | { message: Record<string, unknown> };

interface Pending {
  w: Window;
  accept: (r: DecisionRecord) => string | undefined;
  onReject: (id: string, why: string) => void;
  resolve: (d: { id: string; rec: DecisionRecord } | undefined) => void;
  timer: ReturnType<typeof setTimeout>;
}

export class PageDecisions implements DecisionSource {
  private pending: Pending | undefined;
  private count = 0;

  constructor(
    /** The window open now (null: none), and why the last answer was refused. */
    private readonly onWindow: (w: Window | null, refused?: string) => void,
  ) {}

  publish(w: Window | null): void {
    this.onWindow(w);
  }

  wait(
    w: Window,
    until: number,
    accept: Pending['accept'],
    onReject: Pending['onReject'],
    clock: Clock,
    signal?: AbortSignal,
  ): Promise<{ id: string; rec: DecisionRecord } | undefined> {
    this.settle(undefined);
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.settle(undefined), Math.max(0, until - clock.now()));
      const mine: Pending = { w, accept, onReject, resolve, timer };
      this.pending = mine;
      signal?.addEventListener('abort', () => this.pending === mine && this.settle(undefined), { once: true });
    });
  }

  /** Hands the person's answer to the open window: undefined when taken, else why not. */
  submit(answer: Answer): string | undefined {
    const p = this.pending;
    if (!p) return 'no decision is open';
    const id = `page:${++this.count}`;
    const rec: DecisionRecord = { match_key: p.w.match_key, match_value: p.w.match_value, ...answer, _meta: { decision_id: id, origin: 'page' } };
    const why = p.accept(rec);
    if (why) {
      p.onReject(id, why);
      this.onWindow(p.w, why);
      return why;
    }
    this.settle({ id, rec });
    return undefined;
  }

  private settle(d: { id: string; rec: DecisionRecord } | undefined): void {
    const p = this.pending;
    if (!p) return;
    this.pending = undefined;
    clearTimeout(p.timer);
    p.resolve(d);
  }
}
