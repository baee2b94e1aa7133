// The interop test's plumbing: one private network namespace holding only loopback, processes started
// inside it (our server, our CLI, the reference's Python CLI), and every process's output kept so a
// failure can print all of it.
//
// Why a namespace: iroh otherwise tries its public relays and discovery, which this machine cannot
// reach; inside a namespace with only `lo` up its tickets carry loopback addresses and nothing else.
// Why a holder process plus nsenter rather than `ip netns add`: the namespace lives exactly as long as
// the holder, so a crashed test run leaves nothing behind in /run/netns, and each process can still be
// started, watched and killed from the test on its own.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
import { BIN } from '../shared/cli.js';
export { BIN };

export const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `cond` until it holds, running `step` (a query that may change it) before each look; throws naming `what` after `timeoutMs`. */
export async function until(cond: () => boolean, what: string, timeoutMs: number, step?: () => Promise<void>): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (step) await step();
    if (cond()) return;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await pause(step ? 500 : 50);
  }
}

/** Where the reference CLI is, or why it cannot run (scripts/lib/reference-peer.sh sets both up). */
export interface Reference {
  python: string;
  src: string;
}

export function findReference(): Reference | { missing: string } {
  const python = process.env['AIGENORA_REFERENCE_PYTHON'] ?? join(REPO, '.cache/reference-venv/bin/python');
  const src = process.env['AIGENORA_REFERENCE_SRC'] ?? resolve(REPO, '../shared/reference/aigenora-src/src');
  if (!existsSync(join(src, 'aigenora/__main__.py'))) return { missing: `the reference source (${src}/aigenora)` };
  if (!existsSync(python))
    return { missing: `the reference virtualenv (${python}; create it with: source scripts/lib/reference-peer.sh && ensure_reference_peer)` };
  const probe = spawnSync(python, ['-c', 'import iroh, cryptography, httpx'], { encoding: 'utf8' });
  if (probe.status !== 0) return { missing: `iroh/cryptography/httpx in ${python} (${(probe.stderr || '').trim().split('\n').pop()})` };
  return { python, src };
}

/** What a namespace needs: root (unshare -n, nsenter) and the tools. */
export function namespaceMissing(): string | undefined {
  if (process.getuid?.() !== 0) return 'root (the test makes a network namespace with unshare -n)';
  for (const tool of ['unshare', 'nsenter', 'ip']) {
    if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0) return `the ${tool} command (util-linux / iproute2)`;
  }
  return undefined;
}

export interface Proc {
  name: string;
  child: ChildProcess;
  /** stdout and stderr interleaved as they arrived. */
  output(): string;
  stdout(): string;
  exited: Promise<number | null>;
}

export interface Ran {
  code: number | null;
  out: string;
  stdout: string;
}

export class Namespace {
  /** Every process started in this namespace, for the failure dump. */
  readonly procs: Proc[] = [];

  private constructor(private readonly holder: ChildProcess) {}

  static async create(): Promise<Namespace> {
    const holder = spawn('unshare', ['--net', '--', 'sh', '-c', 'ip link set lo up && echo up && exec sleep 86400'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    holder.stdout!.on('data', (d: Buffer) => (text += d.toString()));
    holder.stderr!.on('data', (d: Buffer) => (text += d.toString()));
    await until(() => text.includes('up\n') || holder.exitCode !== null, 'the network namespace', 10_000);
    if (holder.exitCode !== null || holder.pid === undefined) throw new Error(`unshare --net failed: ${text}`);
    return new Namespace(holder);
  }

  /** Starts `cmd` inside the namespace. */
  start(name: string, cmd: string, args: string[], opts: { env?: Record<string, string>; cwd?: string } = {}): Proc {
    const child = spawn('nsenter', [`--net=/proc/${this.holder.pid}/ns/net`, '--', cmd, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      cwd: opts.cwd ?? REPO,
      env: { ...process.env, ...opts.env },
    });
    let all = '';
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      all += d.toString();
      out += d.toString();
    });
    child.stderr!.on('data', (d: Buffer) => (all += d.toString()));
    const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
    const p: Proc = { name, child, output: () => all, stdout: () => out, exited };
    this.procs.push(p);
    return p;
  }

  /** Runs `cmd` to its end (killed after `timeoutMs`). */
  async run(name: string, cmd: string, args: string[], opts: { env?: Record<string, string>; timeoutMs?: number } = {}): Promise<Ran> {
    const p = this.start(name, cmd, args, opts);
    const timer = setTimeout(() => p.child.kill('SIGKILL'), opts.timeoutMs ?? 120_000);
    const code = await p.exited;
    clearTimeout(timer);
    return { code, out: p.output(), stdout: p.stdout() };
  }

  /** The command and output of every process started from index `from` on, and of the first (our server, long-lived), for a failed test. */
  dump(from = 0): string {
    return this.procs
      .filter((_, i) => i === 0 || i >= from)
      .map((p) => `----- ${p.name} (${p.child.spawnargs.slice(3).join(' ')}) exit ${String(p.child.exitCode ?? p.child.signalCode)}\n${p.output()}`)
      .join('\n');
  }

  async close(): Promise<void> {
    for (const p of this.procs) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    this.holder.kill('SIGKILL');
    await Promise.all(this.procs.map((p) => p.exited));
  }
}

/** The public key in a key.json (ours and the reference's share the `{public_key, private_key}` layout). */
export const publicKeyOf = (dataDir: string): string => (JSON.parse(readFileSync(join(dataDir, 'key.json'), 'utf8')) as { public_key: string }).public_key;

/** The last top-level JSON object in a command's stdout (ours prints one with --json). */
export function lastJson(stdout: string): Record<string, unknown> | undefined {
  const starts = [...stdout.matchAll(/^\{/gm)].map((m) => m.index).reverse();
  for (const s of starts) {
    try {
      return JSON.parse(stdout.slice(s)) as Record<string, unknown>;
    } catch {
      // not the start of a complete object; try an earlier one
    }
  }
  return undefined;
}

/**
 * One interop world: a namespace holding our registry server on `port`, and runners for the reference's
 * CLI and ours inside it. Each test file makes its own (its own namespace and port), so files run in
 * parallel without meeting.
 */
export interface World {
  ns: Namespace;
  /** The server's base URL. */
  server: string;
  runRef(name: string, dataDir: string, args: string[], timeoutMs?: number): Promise<Ran>;
  startRef(name: string, dataDir: string, args: string[]): Proc;
  runOurs(name: string, args: string[], timeoutMs?: number): Promise<Ran>;
  startOurs(name: string, args: string[]): Proc;
  /** The environment the reference's CLI runs with for a data dir (its TMPDIR, our server). */
  refEnv(dataDir: string): Record<string, string>;
  /** `init` (and a private TMPDIR) for a reference data dir, `init` for one of ours. */
  initRef(dataDir: string): void;
  initOurs(dataDir: string): void;
  close(): Promise<void>;
}

export async function openWorld(reference: Reference, root: string, port: number, stepMs = 180_000, serverArgs: string[] = []): Promise<World> {
  const server = `http://127.0.0.1:${port}`;
  const refEnv = (dataDir: string): Record<string, string> => ({
    PYTHONPATH: reference.src,
    PYTHONUNBUFFERED: '1',
    // ../shared is read-only input: no __pycache__ beside the reference's sources.
    PYTHONDONTWRITEBYTECODE: '1',
    // A foreground host/join keeps its session state under $TMPDIR/aigenora-sessions: keep it in the test's folder.
    TMPDIR: join(dataDir, 'tmp'),
    // The reference would otherwise fall back to its public server.
    P2P_SERVER: server,
  });
  const pyArgs = (dataDir: string, args: string[]) => ['-m', 'aigenora', ...args, '--data-dir', dataDir];
  const ns = await Namespace.create();
  const srv = ns.start('our server', process.execPath, [BIN, 'server', '--listen', `127.0.0.1:${port}`, '--data-dir', join(root, 'server'), ...serverArgs]);
  await until(() => srv.output().includes(`127.0.0.1:${port}`) || srv.child.exitCode !== null, 'our server to print its URL', 60_000).catch((e: Error) => {
    throw new Error(`${e.message}\n${ns.dump()}`);
  });
  if (srv.child.exitCode !== null) throw new Error(`our server exited:\n${ns.dump()}`);
  return {
    ns,
    server,
    runRef: (name, dataDir, args, timeoutMs = stepMs) => ns.run(name, reference.python, pyArgs(dataDir, args), { env: refEnv(dataDir), timeoutMs }),
    startRef: (name, dataDir, args) => ns.start(name, reference.python, pyArgs(dataDir, args), { env: refEnv(dataDir) }),
    runOurs: (name, args, timeoutMs = stepMs) => ns.run(name, process.execPath, [BIN, ...args], { timeoutMs }),
    startOurs: (name, args) => ns.start(name, process.execPath, [BIN, ...args]),
    refEnv,
    initRef(dataDir) {
      const r = spawnSync(reference.python, pyArgs(dataDir, ['init']), {
        encoding: 'utf8',
        env: { ...process.env, PYTHONPATH: reference.src, PYTHONDONTWRITEBYTECODE: '1' },
      });
      if (r.status !== 0) throw new Error(`reference init failed: ${r.stdout}${r.stderr}`);
      mkdirSync(join(dataDir, 'tmp'), { recursive: true });
    },
    initOurs(dataDir) {
      const r = spawnSync(process.execPath, [BIN, 'init', '--data-dir', dataDir], { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`aigenora init failed: ${r.stdout}${r.stderr}`);
    },
    close: () => ns.close(),
  };
}

/** The post id a host printed: `post_id: X` (the reference's stdout, ours without --json), or ours with --json (its first JSON line). */
export const postIdOf = (p: Proc): string | undefined => /^post_id: (\S+)$/m.exec(p.output())?.[1] ?? /^\{.*"post_id":"([^"]+)"/m.exec(p.stdout())?.[1];
