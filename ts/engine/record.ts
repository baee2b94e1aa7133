/**
 * A session's state directory: transcript.jsonl (every accepted frame, as its wire line, written to the
 * file before the engine takes its next step, so a crash of the process loses nothing already
 * exchanged; with durability "fsync" each line is also forced to disk, which survives a power loss but
 * costs a disk flush per frame: 1.3k instead of 5.9k frames/s here),
 * events.jsonl (the reference's event names), snapshot.json (the phase), a copy of spec.json, and at
 * the end receipt.json or proof.json.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export interface TranscriptHeader {
  _transcript: 1;
  sid: string;
  /** The invitation id the session was made from ("local" for in-process runs). */
  post_id: string;
  protocol_id: string;
  host_key: string;
  guest_key: string;
  nonce: string;
  /** Which side wrote this copy. */
  role: 'host' | 'guest';
  /** The reference's unsigned wire (engine/plain.ts): the peer's frames are this side's witness, signed by it. */
  wire?: 'plain';
}

/** What a written frame survives: the process dying (write(2) done), or the machine dying (fsync too). */
export type Durability = 'process' | 'fsync';

/**
 * A session directory's append-only transcript.jsonl: created with its header line and spec.json beside
 * it, or reopened to go on after a crash. A line is in the file when append returns (with `fsync`, on
 * disk). The two-party record below and a group member's (ts/group/session-dir.ts) both write through it.
 */
export class TranscriptFile {
  private readonly fd: number;
  private closed = false;

  private constructor(
    readonly path: string,
    private readonly fsync: boolean,
  ) {
    this.fd = openSync(path, 'a');
  }

  static create(dir: string, header: unknown, specText: string, fsync: boolean): TranscriptFile {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileSync(join(dir, 'spec.json'), specText);
    const path = join(dir, 'transcript.jsonl');
    writeFileSync(path, `${JSON.stringify(header)}\n`, { mode: 0o600 });
    return new TranscriptFile(path, fsync);
  }

  static reopen(dir: string, fsync: boolean): TranscriptFile {
    return new TranscriptFile(join(dir, 'transcript.jsonl'), fsync);
  }

  append(line: string): void {
    writeSync(this.fd, `${line}\n`);
    if (this.fsync) fsyncSync(this.fd);
  }

  /** Flushes to disk and closes; a second call does nothing. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      fsyncSync(this.fd);
    } finally {
      closeSync(this.fd);
    }
  }
}

export class SessionRecord {
  readonly transcript: string;
  readonly events: string;
  private readonly file: TranscriptFile;
  private readonly eventsFd: number;
  constructor(
    readonly dir: string,
    header: TranscriptHeader,
    specText: string,
    durability: Durability = 'process',
  ) {
    this.file = TranscriptFile.create(dir, header, specText, durability === 'fsync');
    this.transcript = this.file.path;
    this.events = join(dir, 'events.jsonl');
    this.eventsFd = openSync(this.events, 'a', 0o600);
  }

  /** Appends a frame's line; it is in the file (and with "fsync" on disk) when this returns. */
  frame(line: string): void {
    this.file.append(line);
  }

  event(type: string, data?: Record<string, unknown>): void {
    writeSync(this.eventsFd, `${JSON.stringify({ ts: new Date().toISOString(), type, ...(data ? { data } : {}) })}\n`);
  }

  close(): void {
    try {
      this.file.close();
    } catch {
      // a flush that fails at the end loses nothing already written
    }
    try {
      fsyncSync(this.eventsFd);
      closeSync(this.eventsFd);
    } catch {
      // already closed
    }
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
