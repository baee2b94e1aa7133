/**
 * A session's state directory: transcript.jsonl (every accepted frame, as its wire line, appended and
 * fsync'ed before the engine takes its next step, so a crash loses nothing already exchanged),
 * events.jsonl (the reference's event names), snapshot.json (the phase), a copy of spec.json, and at
 * the end receipt.json or proof.json.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export interface TranscriptHeader {
  _transcript: 1;
  sid: string;
  protocol_id: string;
  host_key: string;
  guest_key: string;
  nonce: string;
  /** Which side wrote this copy. */
  role: 'host' | 'guest';
}

function appendDurably(path: string, line: string): void {
  const fd = openSync(path, 'a', 0o600);
  try {
    writeSync(fd, `${line}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

export class SessionRecord {
  readonly transcript: string;
  readonly events: string;
  constructor(
    readonly dir: string,
    header: TranscriptHeader,
    specText: string,
  ) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    this.transcript = join(dir, 'transcript.jsonl');
    this.events = join(dir, 'events.jsonl');
    writeFileSync(join(dir, 'spec.json'), specText);
    writeFileSync(this.transcript, `${JSON.stringify(header)}\n`, { mode: 0o600 });
  }

  frame(line: string): void {
    appendDurably(this.transcript, line);
  }

  event(type: string, data?: Record<string, unknown>): void {
    appendDurably(this.events, JSON.stringify({ ts: new Date().toISOString(), type, ...(data ? { data } : {}) }));
  }

  snapshot(phase: string, extra: Record<string, unknown> = {}): void {
    this.writeJson('snapshot.json', { phase, updated_at: new Date().toISOString(), ...extra });
  }

  writeJson(name: string, value: unknown): void {
    const path = join(this.dir, name);
    const tmp = `${path}.tmp`;
    writeFileSync(tmp, `${JSON.stringify(value, null, 2)}\n`);
    renameSync(tmp, path);
  }
}
