// Runs one of the *-ref.py scripts beside these tests (the reference's own hooks, under python3) once per
// test file for all of that file's requests, instead of once per request: a python3 start and the import of
// the reference cost far more than most requests. The requests go in as {"batch": [request, ...]}; the
// script answers each on its own line, {"ok": <what it prints for that request alone>} or {"crash": <its
// traceback>}, so a request the script fails on fails only the test that asked it (the Python side of this
// is reference_batch.py, which the scripts share).
//
// The process reads its input from a file and writes its answers to files, never through a pipe to this
// process: it runs to the end on the other core while the tests of this file go on (a pipe would stall it
// whenever the test thread is busy and cannot drain it), and a test awaits only its own answer.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll } from 'vitest';
import { REFERENCE_SRC } from '../shared/require.js';

export interface ReferenceBatch {
  /** What the script answered to request `i`; rejects with the script's traceback if it failed on it. */
  answer<T = unknown>(i: number): Promise<T>;
  /** Stops the process if it still runs and removes its files (for an afterAll). */
  close(): void;
}

/** Starts `script` (a file beside this one) on every request at once. */
export function startReference(script: string, requests: readonly unknown[]): ReferenceBatch {
  const dir = mkdtempSync(join(tmpdir(), 'aigenora-ref-'));
  const [input, output, errors] = ['in.json', 'out.jsonl', 'err.txt'].map((f) => join(dir, f)) as [string, string, string];
  writeFileSync(input, JSON.stringify({ batch: requests }));
  const fds = [openSync(input, 'r'), openSync(output, 'w'), openSync(errors, 'w')];
  let child: ChildProcess | null = null;
  try {
    child = spawn('python3', [fileURLToPath(new URL(`./${script}`, import.meta.url)), REFERENCE_SRC], { cwd: REFERENCE_SRC, stdio: fds });
  } finally {
    for (const fd of fds) closeSync(fd);
  }
  const proc = child;
  let running = true;
  const lines = new Promise<string[]>((resolve, reject) => {
    proc.on('error', (e) => {
      running = false;
      reject(e);
    });
    proc.on('close', (code, signal) => {
      running = false;
      try {
        const text = readFileSync(output, 'utf8');
        const said = readFileSync(errors, 'utf8');
        const got = text.split('\n');
        if (got.at(-1) === '') got.pop();
        if (code !== 0 || got.length !== requests.length) {
          reject(new Error(`python3 ${script} ended with ${signal ?? `status ${code}`} after ${got.length} of ${requests.length} answers: ${said}`));
        } else resolve(got);
      } catch (e) {
        reject(e as Error);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
  // A run filtered to other tests awaits no answer: no unhandled rejection then.
  lines.catch(() => undefined);
  return {
    async answer<T>(i: number): Promise<T> {
      const line = (await lines)[i];
      if (line === undefined) throw new Error(`no request ${i} was sent to ${script}`);
      const a = JSON.parse(line) as { ok: T } | { crash: string };
      if ('crash' in a) throw new Error(`${script} failed on request ${i}:\n${a.crash}`);
      return a.ok;
    },
    close() {
      if (running) proc.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The requests of one test file, each known by a key (a case, or what its request was made from), all sent
 * to the script at once (see referenceRequests).
 */
export class ReferenceRequests {
  private readonly index = new Map<unknown, number>();
  private readonly requests: unknown[] = [];
  private batch: ReferenceBatch | undefined;

  /** Sends `request`, its answer known by `key`. */
  add(key: unknown, request: unknown): void {
    this.index.set(key, this.requests.push(request) - 1);
  }

  /** Sends the request of each case that built, its answer known by the case (one that threw sends none: its test rethrows). */
  addBuilt(cases: readonly (Built<{ request: unknown }> | undefined)[]): void {
    for (const c of cases) if (c && 'ok' in c) this.add(c, c.ok.request);
  }

  start(script: string): void {
    this.batch = startReference(script, this.requests);
  }

  /** What the script answered to the request sent under `key`. */
  answer<T>(key: unknown): Promise<T> {
    return this.batch!.answer<T>(this.index.get(key)!);
  }

  /** Our side of case `c` (rethrowing what building it threw) and the script's answer to its request. */
  async answered<T, A = unknown[]>(c: Built<T> | undefined): Promise<{ mine: T; theirs: A }> {
    const mine = built(c);
    return { mine, theirs: await this.answer<A>(c) };
  }

  close(): void {
    this.batch?.close();
  }
}

/**
 * Where `have` (python3 imports the reference): a beforeAll of the calling test file in which `collect`
 * builds the file's cases and adds their requests, then starts `script` on them all; an afterAll stops it.
 */
export function referenceRequests(have: boolean, script: string, collect: (requests: ReferenceRequests) => void | Promise<void>): ReferenceRequests {
  const requests = new ReferenceRequests();
  if (have) {
    beforeAll(async () => {
      await collect(requests);
      requests.start(script);
    }, 300_000);
    afterAll(() => requests.close());
  }
  return requests;
}

/** What `build` returned, or what it threw, kept for the test that owns the case to rethrow. */
export type Built<T> = { ok: T } | { error: unknown };
export function build<T>(make: () => T): Built<T> {
  try {
    return { ok: make() };
  } catch (error) {
    return { error };
  }
}
export async function buildAsync<T>(make: () => Promise<T>): Promise<Built<T>> {
  try {
    return { ok: await make() };
  } catch (error) {
    return { error };
  }
}
export function built<T>(b: Built<T> | undefined): T {
  if (!b) throw new Error('the case was not built (its beforeAll did not run)');
  if ('error' in b) throw b.error;
  return b.ok;
}
