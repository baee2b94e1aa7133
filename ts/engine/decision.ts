/**
 * Local decisions (NOTES A13): who chooses this side's moves. `autonomous` leaves every move to the
 * hooks; `hybrid` (the default) opens an intervention window of timing.min_think_seconds and then
 * plays the hooks' move; `human` waits for a decision until decision.timeout_seconds and then applies
 * timeout_action (abort for human, by default fallback to the hooks' move for hybrid).
 *
 * Decisions arrive as lines appended to `<state_dir>/decision/decisions.jsonl` (by `aigenora session
 * decide`): {match_key, match_value, value | message, _meta?: {decision_id, origin}}. For an open
 * window the bus takes the records whose match_key field equals the window's value, prefers an explicit
 * origin (100) over policy_runner/script_runner (50) over none (0), the newest line within a priority,
 * and marks the others superseded in consumed.jsonl. The current window is published in state.json.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Crypto } from '../crypto/backend.js';
import { toHex, utf8 } from '../crypto/encoding.js';
import { systemClock, type Clock } from './clock.js';
import type { DecisionRecord, Window } from './decision-window.js';

export { CONTROL_MODES, decisionConfig, type DecisionRecord, type Window } from './decision-window.js';

const priority = (r: DecisionRecord) => {
  const o = r._meta?.origin;
  if (!o) return 0;
  return o === 'policy_runner' || o === 'script_runner' ? 50 : 100;
};

export class DecisionBus {
  readonly dir: string;
  private consumed = new Set<string>();
  constructor(
    private readonly crypto: Crypto,
    stateDir: string,
    private readonly consumerId: string,
  ) {
    this.dir = join(stateDir, 'decision');
    mkdirSync(this.dir, { recursive: true });
  }

  private idOf(r: DecisionRecord, lineNo: number): string {
    if (r._meta?.decision_id) return r._meta.decision_id;
    const sorted = JSON.stringify(r, Object.keys(r).sort());
    return `legacy:${lineNo}:${toHex(this.crypto.sha256(utf8(sorted))).slice(0, 16)}`;
  }

  publish(w: Window | null): void {
    writeFileSync(join(this.dir, 'state.json'), `${JSON.stringify(w ?? { window: null }, null, 2)}\n`);
  }

  /** The records matching the window that were not consumed yet, with their ids. */
  private candidates(w: Window): { id: string; rec: DecisionRecord; line: number }[] {
    const path = join(this.dir, 'decisions.jsonl');
    if (!existsSync(path)) return [];
    const out: { id: string; rec: DecisionRecord; line: number }[] = [];
    readFileSync(path, 'utf8')
      .split('\n')
      .forEach((text, i) => {
        if (!text.trim()) return;
        let rec: DecisionRecord;
        try {
          rec = JSON.parse(text) as DecisionRecord;
        } catch {
          return;
        }
        const id = this.idOf(rec, i + 1);
        if (rec.match_key === w.match_key && rec.match_value === w.match_value && !this.consumed.has(id)) out.push({ id, rec, line: i });
      });
    return out;
  }

  private mark(id: string, w: Window, reason: 'consumed' | 'superseded' | 'rejected'): void {
    this.consumed.add(id);
    appendFileSync(
      join(this.dir, 'consumed.jsonl'),
      `${JSON.stringify({ decision_id: id, match_key: w.match_key, match_value: w.match_value, consumer_id: this.consumerId, reason, ts: new Date().toISOString() })}\n`,
    );
  }

  /**
   * Waits for a decision until `until` (ms since epoch on `clock`), polling the file every 50 ms of
   * real time. `accept` checks a candidate and returns why it is refused (it is then marked rejected
   * and the wait goes on).
   */
  async wait(
    w: Window,
    until: number,
    accept: (r: DecisionRecord) => string | undefined,
    onReject: (id: string, why: string) => void,
    clock: Clock = systemClock,
    signal?: AbortSignal,
  ): Promise<{ id: string; rec: DecisionRecord } | undefined> {
    for (;;) {
      const cands = this.candidates(w).sort((a, b) => priority(b.rec) - priority(a.rec) || b.line - a.line);
      for (const [i, c] of cands.entries()) {
        const why = accept(c.rec);
        if (why) {
          this.mark(c.id, w, 'rejected');
          onReject(c.id, why);
          continue;
        }
        this.mark(c.id, w, 'consumed');
        for (const loser of cands.slice(i + 1)) this.mark(loser.id, w, 'superseded');
        return { id: c.id, rec: c.rec };
      }
      if (clock.now() >= until || signal?.aborted) return undefined;
      await new Promise((r) => setTimeout(r, Math.min(50, Math.max(1, until - clock.now()))));
    }
  }
}

/** Appends a decision record (what `aigenora session decide` does). */
export function appendDecision(stateDir: string, rec: DecisionRecord): void {
  const dir = join(stateDir, 'decision');
  mkdirSync(dir, { recursive: true });
  appendFileSync(join(dir, 'decisions.jsonl'), `${JSON.stringify(rec)}\n`);
}
