// The CLI for the tests. `cli()` runs the command line in this process through `main(argv, io)`:
// the same dispatch, parsing, output and exit status as the installed command, without the second
// or so that starting Node, tsx and the command's modules costs each time. `spawnCli()` and `BIN` start
// it as a child process, for what only a real process shows (the process guards, signals, long-running
// hosts and servers, two processes talking).
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { main } from '../../ts/cli/main.js';

const ROOT = new URL('../..', import.meta.url).pathname;

/** The newest modification time of the files under `dir`. */
function newest(dir: string): number {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

/** dist/ holds the compiled CLI when it was built after the last change to ts/ (npm test builds it first). */
function distIsFresh(): boolean {
  try {
    return statSync(join(ROOT, 'dist/.tsbuildinfo')).mtimeMs > newest(join(ROOT, 'ts'));
  } catch {
    return false;
  }
}

/**
 * The script a test starts as `aigenora`: bin/aigenora.mjs runs the TypeScript sources through tsx;
 * while dist/ is fresh, the same code compiled starts in half the time and CPU, as the installed
 * command does. AIGENORA_TEST_CLI=source forces the sources.
 */
export const BIN =
  process.env['AIGENORA_TEST_CLI'] !== 'source' && distIsFresh() ? join(ROOT, 'test/shared/aigenora-dist.mjs') : join(ROOT, 'bin/aigenora.mjs');

export interface CliResult {
  status: number;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  /** Variables set (a string) or removed (undefined) for the run, over this process's environment. */
  env?: Record<string, string | undefined>;
  cwd?: string;
}

// Runs are taken one at a time: the environment and the working directory belong to the process.
let queue: Promise<unknown> = Promise.resolve();

/** Runs `aigenora ...args` in process and returns what it wrote and its exit status. */
export function cli(args: readonly string[], opts: CliOptions = {}): Promise<CliResult> {
  const run = queue.then(() => runNow(args, opts));
  queue = run.catch(() => undefined);
  return run;
}

async function runNow(args: readonly string[], opts: CliOptions): Promise<CliResult> {
  const saved = new Map<string, string | undefined>();
  for (const [k, v] of Object.entries(opts.env ?? {})) {
    saved.set(k, process.env[k]);
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  const cwd = process.cwd();
  if (opts.cwd) process.chdir(opts.cwd);
  let stdout = '';
  let stderr = '';
  try {
    const status = await main(args, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t) });
    return { status, stdout, stderr };
  } finally {
    if (opts.cwd) process.chdir(cwd);
    for (const [k, v] of saved) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

/** Runs `aigenora ...args` as a child process (bin/aigenora.mjs on this Node). */
export function spawnCli(args: readonly string[], opts: CliOptions = {}): CliResult {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const [k, v] of Object.entries(opts.env ?? {})) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env, ...(opts.cwd && { cwd: opts.cwd }) });
  return { status: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}
