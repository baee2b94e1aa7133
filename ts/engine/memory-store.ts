/**
 * A session's record kept in memory, for a page or any host without files: the same transcript text,
 * events and end files record.ts writes to a directory, so the same checks read them.
 */
import type { SessionStore } from './driver.js';
import type { TranscriptHeader } from './record.js';

export interface StoredEvent {
  ts: string;
  type: string;
  data?: Record<string, unknown>;
}

export class MemoryStore implements SessionStore {
  private readonly lines: string[];
  readonly events: StoredEvent[] = [];
  /** Files the session wrote by name (receipt.json, proof.json, snapshot.json…), as record.ts formats them. */
  readonly files = new Map<string, string>();
  closed = false;

  constructor(
    header: TranscriptHeader,
    readonly specText: string,
    /** Told of every event and phase change, for display. */
    private readonly onChange?: (kind: 'event' | 'snapshot', value: StoredEvent | Record<string, unknown>) => void,
  ) {
    this.lines = [JSON.stringify(header)];
  }

  frame(line: string): void {
    this.lines.push(line);
  }

  event(type: string, data?: Record<string, unknown>): void {
    const e: StoredEvent = { ts: new Date().toISOString(), type, ...(data ? { data } : {}) };
    this.events.push(e);
    this.onChange?.('event', e);
  }

  snapshot(phase: string, extra: Record<string, unknown> = {}): void {
    const s = { phase, updated_at: new Date().toISOString(), ...extra };
    this.writeJson('snapshot.json', s);
    this.onChange?.('snapshot', s);
  }

  writeJson(name: string, value: unknown): void {
    this.files.set(name, `${JSON.stringify(value, null, 2)}\n`);
  }

  close(): void {
    this.closed = true;
  }

  /** transcript.jsonl as record.ts writes it: the header, then one line per frame. */
  transcript(): string {
    return `${this.lines.join('\n')}\n`;
  }

  /** Frames recorded so far (the header not counted). */
  get frames(): number {
    return this.lines.length - 1;
  }
}
