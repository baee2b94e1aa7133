/**
 * What the engine made of a decision `session decide` wrote: it marks every decision it reads in
 * decision/consumed.jsonl (consumed, superseded or rejected) and records why it refused one in
 * events.jsonl (local_decision_rejected, with the decision's id and the reason). Both files are followed
 * from where they ended before the decision was written, so a long session's history is never reread.
 */
import { closeSync, fstatSync, openSync, readSync, statSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export type Verdict =
  | { kind: 'accepted' }
  | { kind: 'refused'; reason: string }
  | { kind: 'superseded' }
  /** The window closed, or the session ended, before the engine read the decision. */
  | { kind: 'closed'; why: string }
  | { kind: 'timeout' };

/** A line longer than this is no line the engine wrote: it is skipped rather than buffered. */
const MAX_LINE_BYTES = 8 << 20;

/** New complete lines of an append-only file, from an offset on; a line still being written waits for the next read. */
export class Follower {
  constructor(
    private readonly path: string,
    private offset: number,
  ) {}

  static atEnd(path: string): Follower {
    return new Follower(path, statSync(path, { throwIfNoEntry: false })?.size ?? 0);
  }

  lines(): string[] {
    let fd: number;
    try {
      fd = openSync(this.path, 'r');
    } catch {
      return [];
    }
    try {
      const out: string[] = [];
      for (;;) {
        const size = fstatSync(fd).size;
        if (size <= this.offset) return out;
        const buf = Buffer.alloc(Math.min(size - this.offset, MAX_LINE_BYTES));
        const n = readSync(fd, buf, 0, buf.length, this.offset);
        const end = buf.subarray(0, n).lastIndexOf(0x0a);
        if (end < 0) {
          if (n === MAX_LINE_BYTES) this.offset += n;
          return out;
        }
        out.push(
          ...buf
            .subarray(0, end)
            .toString('utf8')
            .split('\n')
            .filter((l) => l.trim() !== ''),
        );
        this.offset += end + 1;
      }
    } finally {
      closeSync(fd);
    }
  }
}

const objectOf = (line: string): Record<string, unknown> | undefined => {
  try {
    const v = JSON.parse(line) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
};

/** Where the engine's answers will appear; taken before the decision is written. */
export interface VerdictWatch {
  events: Follower;
  consumed: Follower;
}

export function watchVerdicts(dir: string): VerdictWatch {
  return { events: Follower.atEnd(join(dir, 'events.jsonl')), consumed: Follower.atEnd(join(dir, 'decision', 'consumed.jsonl')) };
}

/** Whether the window a decision is for is open now: undefined while state.json is unreadable (the engine rewrites it in place). */
function windowOpen(dir: string, key: string, value: number): boolean | undefined {
  let text: string;
  try {
    text = readFileSync(join(dir, 'decision', 'state.json'), 'utf8');
  } catch {
    return false;
  }
  const w = objectOf(text);
  if (!w) return undefined;
  return w['match_key'] === key && w['match_value'] === value;
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface VerdictQuery {
  decision_id: string;
  match_key: string;
  match_value: number;
  /** The window was open when the decision was written: its closing without a verdict is then an answer. */
  windowWasOpen: boolean;
  timeoutMs: number;
  pollMs?: number;
}

/**
 * Polls until the engine marks the decision, refuses it, the window closes or the session ends without
 * it being read, or `timeoutMs` passes. The window's state is read before the marks each time: the engine
 * marks a decision before it closes the window, so a closed window with no mark means it was never read.
 */
export async function waitForVerdict(dir: string, watch: VerdictWatch, q: VerdictQuery): Promise<Verdict> {
  const end = Date.now() + q.timeoutMs;
  const poll = q.pollMs ?? 50;
  let seenOpen = q.windowWasOpen;
  let markedRejected = false;
  let ended: string | undefined;
  let fellBack = false;
  const scan = (): Verdict | undefined => {
    for (const line of watch.consumed.lines()) {
      const m = objectOf(line);
      if (m?.['decision_id'] !== q.decision_id) continue;
      if (m['reason'] === 'consumed') return { kind: 'accepted' };
      if (m['reason'] === 'superseded') return { kind: 'superseded' };
      if (m['reason'] === 'rejected') markedRejected = true;
    }
    for (const line of watch.events.lines()) {
      const e = objectOf(line);
      const data = (e?.['data'] ?? {}) as Record<string, unknown>;
      if (e?.['type'] === 'local_decision_rejected' && data['decision_id'] === q.decision_id)
        return { kind: 'refused', reason: String(data['reason'] ?? 'no reason given') };
      if (e?.['type'] === 'local_decision_fallback' && data['match_key'] === q.match_key && data['match_value'] === q.match_value) fellBack = true;
      if (e?.['type'] === 'session_ended') ended = String(data['reason'] ?? 'ended');
    }
    return undefined;
  };
  const closed = (): Verdict => {
    if (markedRejected) return { kind: 'refused', reason: 'refused (the engine recorded no reason)' };
    if (ended !== undefined) return { kind: 'closed', why: `the session ended (${ended}) before the engine read the decision` };
    if (fellBack)
      return { kind: 'closed', why: `the window ${q.match_key} ${q.match_value} ran out before the engine read the decision; the hooks' move was played` };
    return { kind: 'closed', why: `the window ${q.match_key} ${q.match_value} closed before the engine read the decision` };
  };
  for (;;) {
    const open = windowOpen(dir, q.match_key, q.match_value);
    if (open) seenOpen = true;
    const v = scan();
    if (v) return v;
    if (ended !== undefined) return closed();
    if (open === false && seenOpen && !markedRejected) {
      // The events that say why (a fallback, the session's end) follow the window's closing closely.
      await pause(poll * 2);
      return scan() ?? closed();
    }
    if (Date.now() >= end) return markedRejected ? closed() : { kind: 'timeout' };
    await pause(Math.min(poll, Math.max(1, end - Date.now())));
  }
}
