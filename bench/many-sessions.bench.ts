// Many sessions on one host: `aigenora host --daemon` in a child process, and 1, the host's cap, and 100
// guests in this process playing RPS (fixed rounds, few of them, wasm backend) over libp2p on 127.0.0.1,
// each guest with its own key.
//
// `host --daemon` serves at most DEFAULT_MAX_SESSIONS (8) sessions at once and no CLI option raises it;
// a guest beyond that is refused ("host busy"). So the counts run here are sessions served, at most the
// cap at once: 1 (alone), the cap (all at once) and 100 (queued, a guest dialling as soon as one ends,
// so the host always has the cap open). frames/s = every session's frames ÷ the time from the run's
// start (the first dial) to the last frame of any, so every count pays its connection setups alike;
// the round latency is the gap between consecutive round_result frames as a guest sees them, p99 over
// every round of every session. The host's RSS (VmRSS, Linux /proc) is read before each run, every 20 ms
// while it runs (the peak kept) and after (once the host reports its last session); the peak's rise over
// the RSS before, ÷ sessions at once, is mostly garbage not yet collected. Idle sessions apart: the cap
// of guests in hybrid control (each of their moves held for the spec's min_think_seconds, 1 s, so the
// host's sessions sit waiting), the host's RSS read 0.4 s after all have started, three times; RSS per
// open idle session = (that − the RSS before) ÷ the cap.
//
// Floors: aggregate frames/s serving 100 sessions ÷ serving the cap at once ≥ 0.8 (throughput must not
// collapse as sessions pile up), the median of FLOOR_SAMPLES paired rounds; host RSS per open idle
// session ≤ IDLE_KIB, the median of the three. The reference's host is not run: bench/reference-rps.ts
// drives one reference session at a time (a Python host and guest in a network namespace), not many on
// one host. A missed floor prints MISSED and exits 0; a bench that cannot run exits 1. Writes
// bench/results/many-sessions.md.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Message } from '../ts/hooks/types.js';
import { parseInvitation, type Invitation } from '../ts/net/invitation.js';
import { DEFAULT_MAX_SESSIONS, join as joinSession } from '../ts/net/session.js';
import { budgetFloor, FLOOR_SAMPLES, fmt, floorTable, median, percentile, ratioFloor, table, writeFloors } from './measure.js';
import { BIN, crypto as c, hostDaemonArgs, rpsHooks as hooks, rpsSpec as l } from './rps-workload.js';

/** Aggregate frames/s serving 100 sessions, at least this share of serving the cap at once. */
const NO_COLLAPSE = 0.8;
/** Host RSS per open idle session, KiB, at most this. */
const IDLE_KIB = 4096;
const ROUNDS = 5;
const OPTIONS = { best_of: ROUNDS, termination: 'fixed_rounds' };
const COUNTS = [1, DEFAULT_MAX_SESSIONS, 100] as const;
const protocol = { spec: l.spec, specText: l.text, protocolId: l.protocolId!, hooks };
const work = mkdtempSync(join(tmpdir(), 'aigenora-manybench-'));
let child: ChildProcess | undefined;

/** Resident set of a process, KiB, from /proc/<pid>/status; NaN where it cannot be read. */
function rssKiB(pid: number | undefined): number {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);
  } catch {
    return NaN;
  }
}

interface Run {
  sessions: number;
  frames: number;
  /** From the run's first dial to its last frame. */
  ms: number;
  rounds: number[];
  rssBefore: number;
  rssPeak: number;
  rssAfter: number;
}

async function startHost(): Promise<{ pid: number; inv: Invitation; reports(n: number): Promise<void> }> {
  const invFile = join(work, 'invitation');
  const args = hostDaemonArgs(join(work, 'host'), invFile);
  args[args.indexOf('--options') + 1] = JSON.stringify(OPTIONS);
  let stderr = '';
  const h = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, AIGENORA_CRYPTO: 'wasm' } });
  child = h;
  h.stderr!.on('data', (d: Buffer) => void (stderr = (stderr + d.toString()).slice(-4000)));
  const exited = new Promise<never>((_, reject) =>
    h.on('exit', (code) => reject(new Error(`the host exited (${code}): ${stderr.trim().split('\n').slice(-4).join(' / ')}`))),
  );
  exited.catch(() => undefined);
  let reported = 0;
  let failed = '';
  createInterface({ input: h.stdout! }).on('line', (line) => {
    const v = JSON.parse(line) as { completed?: boolean; reason?: string };
    if (v.completed === undefined) return;
    reported++;
    if (!v.completed) failed ||= v.reason ?? 'not completed';
  });
  for (let k = 0; k < 600 && !existsSync(invFile); k++) await Promise.race([new Promise((r) => setTimeout(r, 50)), exited]);
  if (!existsSync(invFile)) throw new Error(`the host wrote no invitation in 30 s: ${stderr.trim()}`);
  return {
    pid: h.pid!,
    inv: parseInvitation(c, readFileSync(invFile, 'utf8')),
    /** Waits until the host has reported `n` sessions in all (10 s at most). */
    async reports(n) {
      for (let k = 0; k < 200 && reported < n; k++) await Promise.race([new Promise((r) => setTimeout(r, 50)), exited]);
      if (failed) throw new Error(`a session failed on the host: ${failed}`);
      if (reported < n) throw new Error(`the host reported ${reported} of ${n} sessions within 10 s`);
    },
  };
}

async function main(): Promise<string> {
  const r = spawnSync(process.execPath, [BIN, 'init', '--data-dir', join(work, 'host')], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`aigenora init: ${r.stderr.trim()}`);
  const host = await startHost();
  let served = 0;

  /**
   * One guest's session; its frame times go to `frames` and its round gaps to `rounds`. `hybrid` holds
   * each of the guest's moves for the spec's min_think_seconds (1 s), so the host's session sits idle.
   */
  const guest = async (frames: number[], rounds: number[], controlMode: 'autonomous' | 'hybrid' = 'autonomous', onFirst?: () => void): Promise<void> => {
    let last = NaN;
    const res = await joinSession({
      crypto: c,
      seed: new Uint8Array(randomBytes(32)),
      protocol,
      options: {},
      controlMode,
      sessionsDir: join(work, 'guests'),
      invitation: host.inv,
      onMessage: (_from: unknown, msg: Message) => {
        const now = performance.now();
        if (frames.push(now) === 1) onFirst?.();
        if (msg.action !== 'round_result') return;
        if (!Number.isNaN(last)) rounds.push(now - last);
        last = now;
      },
    });
    if (!res.completed) throw new Error(`a session failed on the guest: ${res.reason} ${res.detail ?? ''}`);
  };

  /** `n` sessions, at most the host's cap at once, each slot taking the next guest when its session ends. */
  const run = async (n: number): Promise<Run> => {
    const rssBefore = rssKiB(host.pid);
    let rssPeak = rssBefore;
    const poll = setInterval(() => (rssPeak = Math.max(rssPeak, rssKiB(host.pid))), 20);
    const frames: number[] = [];
    const rounds: number[] = [];
    let left = n;
    const t0 = performance.now();
    const slot = async () => {
      while (left > 0) {
        left--;
        await guest(frames, rounds);
      }
    };
    try {
      await Promise.all(Array.from({ length: Math.min(n, DEFAULT_MAX_SESSIONS) }, slot));
    } finally {
      clearInterval(poll);
    }
    served += n;
    await host.reports(served);
    return {
      sessions: n,
      frames: frames.length,
      ms: Math.max(...frames) - t0,
      rounds,
      rssBefore,
      rssPeak,
      rssAfter: rssKiB(host.pid),
    };
  };

  /** The host's RSS idle, then with the cap of sessions open and idle (hybrid guests thinking), then after they end. */
  const idle = async (): Promise<{ before: number; open: number; after: number }> => {
    const before = rssKiB(host.pid);
    let started = 0;
    let all = () => {};
    const opened = new Promise<void>((resolve) => (all = resolve));
    const sessions = Array.from({ length: DEFAULT_MAX_SESSIONS }, () => guest([], [], 'hybrid', () => ++started === DEFAULT_MAX_SESSIONS && all()));
    await Promise.race([opened, Promise.all(sessions)]);
    await new Promise((r) => setTimeout(r, 400));
    const open = rssKiB(host.pid);
    await Promise.all(sessions);
    served += DEFAULT_MAX_SESSIONS;
    await host.reports(served);
    return { before, open, after: rssKiB(host.pid) };
  };

  const rss0 = rssKiB(host.pid);
  await run(DEFAULT_MAX_SESSIONS); // warm-up, uncounted
  const runs = new Map<number, Run[]>(COUNTS.map((n) => [n, []]));
  for (let i = 0; i < FLOOR_SAMPLES; i++) {
    for (let j = 0; j < COUNTS.length; j++) {
      const n = COUNTS[(i + j) % COUNTS.length]!;
      runs.get(n)!.push(await run(n));
    }
  }
  const rssEnd = rssKiB(host.pid);
  const idles = [await idle(), await idle(), await idle()];
  const perIdle = median(idles.map((x) => (x.open - x.before) / DEFAULT_MAX_SESSIONS));

  const rate = (x: Run) => (x.frames * 1000) / x.ms;
  const floors = [
    ratioFloor(
      `aggregate frames/s, 100 sessions served ÷ ${DEFAULT_MAX_SESSIONS} at once (host cap ${DEFAULT_MAX_SESSIONS})`,
      runs.get(100)!.map(rate),
      runs.get(DEFAULT_MAX_SESSIONS)!.map(rate),
      NO_COLLAPSE,
    ),
    budgetFloor(`host RSS per open idle session (${DEFAULT_MAX_SESSIONS} open at once)`, perIdle, IDLE_KIB, 'KiB'),
  ];
  writeFloors('many-sessions', floors);

  const mib = (k: number) => (k / 1024).toFixed(1);
  const rows = COUNTS.map((n) => {
    const rs = runs.get(n)!;
    const open = Math.min(n, DEFAULT_MAX_SESSIONS);
    return [
      `${n}`,
      `${open}`,
      fmt(median(rs.map(rate))),
      median(rs.map((x) => percentile(x.rounds, 0.99))).toFixed(1),
      median(rs.map((x) => percentile(x.rounds, 0.5))).toFixed(1),
      mib(median(rs.map((x) => x.rssBefore))),
      mib(median(rs.map((x) => x.rssPeak))),
      mib(median(rs.map((x) => x.rssAfter))),
      ((median(rs.map((x) => x.rssPeak - x.rssBefore)) / open) | 0).toString(),
    ];
  });
  const lines = [
    '# Many sessions on one host',
    '',
    `\`aigenora host --daemon\` (child process) and guests in this process over libp2p on 127.0.0.1; RPS, ${ROUNDS} fixed rounds, wasm backend.`,
    `The host serves at most ${DEFAULT_MAX_SESSIONS} sessions at once and no CLI option raises it: 100 sessions are served ${DEFAULT_MAX_SESSIONS} at a time,`,
    'a guest dialling as soon as another session ends. The reference host is not run (its driver, bench/reference-rps.ts, runs one session at a time).',
    "Aggregate frames/s: all sessions' frames ÷ the time from the first dial to the last frame (connection setups included); round ms: gaps between round results.",
    `Median of ${FLOOR_SAMPLES} rounds, one run of each count per round, the order rotating. Load ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}, ${process.version}.`,
    '',
    ...table(
      [
        'sessions',
        'at once',
        'aggregate frames/s',
        'p99 round ms',
        'p50 round ms',
        'host RSS before MiB',
        'peak MiB',
        'after MiB',
        '(peak − before) ÷ at once, KiB',
      ],
      rows,
    ),
    '',
    `Host RSS: ${mib(rss0)} MiB idle at start (no session yet), ${mib(rssEnd)} MiB idle after the timed runs.`,
    `Idle sessions (${DEFAULT_MAX_SESSIONS} hybrid guests holding each move 1 s, RSS read 0.4 s after all have started), 3 times: ${idles
      .map((x) => `${mib(x.before)} → ${mib(x.open)} → ${mib(x.after)} MiB`)
      .join('; ')}; median ${perIdle.toFixed(0)} KiB per open idle session. ${served} sessions served in all.`,
    '',
    ...floorTable(floors),
    '',
  ];
  return `${lines.join('\n')}\n`;
}

try {
  const report = await main();
  process.stdout.write(report);
  writeFileSync(new URL('results/many-sessions.md', import.meta.url), report);
} catch (e) {
  process.stderr.write(`\nmany-sessions bench: COULD NOT RUN: ${(e as Error)?.stack ?? String(e)}\n`);
  process.exitCode = 1;
} finally {
  child?.kill('SIGKILL');
  rmSync(work, { recursive: true, force: true });
}
