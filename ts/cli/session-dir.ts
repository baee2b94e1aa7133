/** `aigenora session list`, `events`, `snapshot` and `abort`: a session side's directory, read (and followed) from its files. */
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MAX_TRANSCRIPT_BYTES } from '../engine/verify.js';
import { FileError, readText } from '../files/index.js';
import { resolveDataDir } from '../library/data-dir.js';
import { UsageError, type Command } from './args.js';

export function sessionDir(target: string): string {
  if (!existsSync(target)) throw new UsageError(`${target} does not exist`);
  return target;
}

/** The files one of which every session side's directory holds once its session started. */
const SESSION_FILES = ['snapshot.json', 'events.jsonl', 'transcript.jsonl'];

/** A session side's directory, or a usage error (exit 2) naming why the path is not one. */
function sessionSideDir(target: string): string {
  const st = statSync(target, { throwIfNoEntry: false });
  if (!st) throw new UsageError(`${target} does not exist`, 'FILE_NOT_FOUND');
  if (!st.isDirectory()) throw new UsageError(`${target} is not a directory, it must be a session directory`, 'NOT_A_SESSION_DIR');
  if (!SESSION_FILES.some((f) => existsSync(join(target, f))))
    throw new UsageError(`${target} is not a session directory (no ${SESSION_FILES.join(', ')})`, 'NOT_A_SESSION_DIR');
  return target;
}

/** A session file's JSON object, or undefined when it is missing, unreadable or not an object. */
export function readObject(path: string): Record<string, unknown> | undefined {
  try {
    return parseObject(readText(path, { maxBytes: STATE_FILE_BYTES }));
  } catch (e) {
    if (e instanceof FileError) return undefined;
    throw e;
  }
}

export function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(text) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** snapshot.json and decision/state.json are small; anything larger is not one the engine wrote. */
const STATE_FILE_BYTES = 1 << 20;

/** Prints a file's lines, then (with --follow) new lines as they are appended, until the session ends. */
async function follow(path: string, onLine: (line: string) => boolean, followOn: boolean): Promise<void> {
  let offset = 0;
  let ended = false;
  const drain = () => {
    if (!existsSync(path)) return;
    const text = readText(path, { maxBytes: MAX_TRANSCRIPT_BYTES, what: 'events.jsonl' });
    const fresh = text.slice(offset);
    const lastNl = fresh.lastIndexOf('\n');
    if (lastNl < 0) return;
    for (const line of fresh.slice(0, lastNl).split('\n')) if (line) ended = onLine(line) || ended;
    offset += lastNl + 1;
  };
  drain();
  while (followOn && !ended) {
    await new Promise((r) => setTimeout(r, 200));
    drain();
  }
}

export const sessionEvents: Command = {
  name: 'events',
  usage: 'aigenora session events <SESSION_DIR> [--follow] [--json]',
  help: 'One event per line (time, type, data); --follow keeps printing new events until session_ended.',
  flags: { follow: 'boolean', json: 'boolean' },
  async run(args, out) {
    if (args.positional.length !== 1) throw new UsageError('expected a session directory');
    const dir = sessionSideDir(args.positional[0]!);
    await follow(
      join(dir, 'events.jsonl'),
      (line) => {
        const e = parseObject(line);
        if (!e) {
          out.warn(`skipped a line of events.jsonl that is not a JSON object: ${line.slice(0, 80)}`);
          return false;
        }
        if (args.flags['json']) out.line(line);
        else out.line(`${String(e['ts'])} ${String(e['type'])}${e['data'] ? ` ${JSON.stringify(e['data'])}` : ''}`);
        return e['type'] === 'session_ended';
      },
      args.flags['follow'] === true,
    );
    return 0;
  },
};

export const sessionSnapshot: Command = {
  name: 'snapshot',
  usage: 'aigenora session snapshot <SESSION_DIR> [--follow] [--json]',
  help: 'Prints the phase (in_progress, ended, aborted) and details; --follow prints each change until the session ends.',
  flags: { follow: 'boolean', json: 'boolean' },
  async run(args, out) {
    if (args.positional.length !== 1) throw new UsageError('expected a session directory');
    const path = join(sessionSideDir(args.positional[0]!), 'snapshot.json');
    // Without --follow there is nothing to wait for: a session side that has not written its snapshot yet is refused.
    if (!args.flags['follow'] && !existsSync(path))
      throw new FileError('FILE_NOT_FOUND', path, `snapshot.json ${path} does not exist (yet): --follow waits for it`);
    let last = '';
    for (;;) {
      const text = existsSync(path) ? readText(path, { maxBytes: STATE_FILE_BYTES, what: 'snapshot.json' }) : '';
      if (text && text !== last) {
        last = text;
        const s = parseObject(text);
        if (!s) {
          out.refuse('SNAPSHOT_INVALID', `${path} is not a JSON object`);
          return 1;
        }
        if (args.flags['json']) out.line(JSON.stringify(s));
        else out.line(`${String(s['phase'])}${s['reason'] ? ` (${String(s['reason'])})` : ''} ${String(s['updated_at'] ?? '')}`);
        if (s['phase'] !== 'in_progress') return 0;
      }
      if (!args.flags['follow']) {
        if (text) return 0;
        out.refuse('SNAPSHOT_INVALID', `${path} is empty`);
        return 1;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  },
};

export const sessionList: Command = {
  name: 'list',
  usage: 'aigenora session list [--data-dir DIR] [--json]',
  help: 'One line per session side: session id (prefix), role, phase, reason, directory.',
  flags: { 'data-dir': 'string', json: 'boolean' },
  run(args, out) {
    const dataDir = resolveDataDir(args.flags['data-dir'] as string | undefined);
    const base = join(dataDir, 'sessions');
    for (const d of [dataDir, base])
      if (statSync(d, { throwIfNoEntry: false })?.isDirectory() === false) throw new UsageError(`${d} is not a directory`, 'DATA_DIR_INVALID');
    const rows: Record<string, unknown>[] = [];
    for (const sid of existsSync(base) ? readdirSync(base).sort() : []) {
      for (const role of ['host', 'guest']) {
        const dir = join(base, sid, role);
        const snap = join(dir, 'snapshot.json');
        if (!existsSync(snap)) continue;
        const s = readObject(snap) ?? { phase: 'unreadable' };
        rows.push({ session: String(s['sid'] ?? sid), role, phase: s['phase'], reason: s['reason'] ?? null, updated_at: s['updated_at'], dir });
      }
    }
    if (args.flags['json']) out.json(rows);
    else if (!rows.length) out.line(`no sessions under ${base}`);
    else
      for (const r of rows)
        out.line(
          `${String(r['session']).slice(0, 16)}  ${String(r['role']).padEnd(5)}  ${String(r['phase']).padEnd(11)} ${r['reason'] ? String(r['reason']).padEnd(18) : ''.padEnd(18)} ${String(r['dir'])}`,
        );
    return 0;
  },
};

export const sessionAbort: Command = {
  name: 'abort',
  usage: 'aigenora session abort <SESSION_DIR> [--json]',
  help: 'Leaves an abort request the running engine picks up within 200 ms: it tells the peer, writes its transcript and ends with reason local_abort.',
  flags: { json: 'boolean' },
  run(args, out) {
    if (args.positional.length !== 1) throw new UsageError('expected a session directory');
    const dir = sessionSideDir(args.positional[0]!);
    const requestedAt = new Date().toISOString();
    writeFileSync(join(dir, 'abort.request'), `${requestedAt}\n`);
    if (args.flags['json']) out.json({ session_dir: dir, abort_requested_at: requestedAt });
    else out.line(`abort requested for ${dir}`);
    return 0;
  },
};
