// Many sessions on one host: `aigenora host --daemon --max-sessions 128` in a child process, and 1, 10
// and 100 guests together in this process playing RPS (fixed rounds, wasm backend) over libp2p to
// 127.0.0.1, each guest with its own key, its own libp2p node and its own source address (127.0.1.k),
// as guests on as many machines would be: the host's socket guard lets one address hold only 8 sockets
// that have not yet completed a session handshake (ts/net/guard.ts), so 100 guests that all dial from
// one address at once are cut down to the 8 that get furthest whenever their handshakes take more than
// a second (as they do here, 100 of them sharing this process).
//
// Each run starts its n guests together and waits for all to end. They dial DIALLING at a time, the
// next as soon as one's session has started (100 libp2p nodes in one process all in their Noise and
// session handshakes at once, on a loaded 2-core machine, outlast the dial timeout of 10 s), and play
// ROUNDS rounds, long enough that the first session is still under way when the last starts: the table
// says how many were under way at once (from a guest's first frame to its end). frames/s = every
// session's frames ÷ the time from the run's start (the first dial) to the last frame of any, so every
// count pays its connection setups alike; the round latency is the gap between consecutive
// round_result frames as a guest sees them, p99 over every round of every session. The guests share
// this process, and the machine's cores, with each other and the host: the figures are what one
// machine does hosting and playing every seat, not the host alone. The host's RSS (VmRSS, Linux /proc)
// is read before each run, every 20 ms while it runs (the peak kept) and after (once the host has
// reported every session); RSS per session = (peak − before) ÷ n, mostly garbage not yet collected.
// Idle sessions apart, on a second host whose games are IDLE_ROUNDS long: 10 and then 100 guests in
// hybrid control (each move held for the spec's min_think_seconds, 1 s, so the host's sessions sit
// waiting), the host's RSS read 0.4 s after every session has its first frame; RSS per open idle
// session = (that − the RSS before) ÷ n, three times each.
//
// Floors: aggregate frames/s with 100 sessions ÷ with 10 ≥ 0.8 (throughput must not collapse as
// sessions pile up), the median of FLOOR_SAMPLES paired rounds; host RSS per open idle session with
// 100 open ≤ IDLE_KIB, the median of the three.
//
// The reference's host is not run: it serves one session per process. Its `host` takes the first
// channel its iroh node accepts (src/aigenora/agent/host.py:354, `channel = await accepted.get()`),
// plays that one session and returns (host.py:573) and shuts its node down (host.py:581); its
// `--daemon` only starts that same one-session host as a detached child process (host.py:116). Many
// reference sessions are many host processes, each with its own node and invitation, which is not what
// this bench measures. A missed floor prints MISSED and exits 0; a bench that cannot run exits 1.
// Writes bench/results/many-sessions.md.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Message } from '../ts/hooks/types.js';
import { parseInvitation, type Invitation } from '../ts/net/invitation.js';
import { join as joinSession } from '../ts/net/session.js';
import { budgetFloor, FLOOR_SAMPLES, fmt, floorTable, median, percentile, ratioFloor, table, writeFloors } from './measure.js';
import { BIN, crypto as c, hostDaemonArgs, rpsHooks as hooks, rpsSpec as l } from './rps-workload.js';

/** Aggregate frames/s with 100 sessions at once, at least this share of 10 at once. */
const NO_COLLAPSE = 0.8;
/** Host RSS per open idle session, KiB, at most this (with 100 open). */
const IDLE_KIB = 512;
/** Rounds of a timed session: enough that the first of 100 sessions is still under way when the last starts. */
const ROUNDS = 40;
/** Rounds of an idle session (each move held 1 s). */
const IDLE_ROUNDS = 3;
/** Guests in their connection and session handshake at once (each its own libp2p node in this one process). */
const DIALLING = 16;
const COUNTS = [1, 10, 100] as const;
/** The host's --max-sessions: above the largest count, so no guest is refused as busy. */
const MAX_SESSIONS = 128;
const protocol = { spec: l.spec, specText: l.text, protocolId: l.protocolId!, hooks };
const work = mkdtempSync(join(tmpdir(), 'aigenora-manybench-'));
const children: ChildProcess[] = [];

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
  /** The most sessions under way at once. */
  peak: number;
  frames: number;
  /** From the run's first dial to its last frame. */
  ms: number;
  rounds: number[];
  rssBefore: number;
  rssPeak: number;
  rssAfter: number;
}

interface Idle {
  sessions: number;
  before: number;
  open: number;
  after: number;
}

interface Host {
  pid: number;
  inv: Invitation;
  warnings(): string[];
  /** Waits until the host has reported `n` sessions in all (20 s at most). */
  reports(n: number): Promise<void>;
}

/** `aigenora host --daemon` serving RPS of `rounds` fixed rounds. */
async function startHost(rounds: number): Promise<Host> {
  const invFile = join(work, `invitation-${rounds}`);
  const args = [...hostDaemonArgs(join(work, 'host'), invFile), '--max-sessions', String(MAX_SESSIONS)];
  args[args.indexOf('--options') + 1] = JSON.stringify({ best_of: rounds, termination: 'fixed_rounds' });
  let stderr = '';
  const warnings: string[] = [];
  const h = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, AIGENORA_CRYPTO: 'wasm' } });
  children.push(h);
  h.stderr!.on('data', (d: Buffer) => {
    const text = d.toString();
    stderr = (stderr + text).slice(-4000);
    for (const line of text.split('\n')) if (/Warning|Error/.test(line)) warnings.push(line.trim());
  });
  const exited = new Promise<never>((_, reject) =>
    h.on('exit', (code) => reject(new Error(`the host exited (${code}): ${stderr.trim().split('\n').slice(-4).join(' / ')}`))),
  );
  exited.catch(() => undefined);
  let reported = 0;
  let failed = '';
  createInterface({ input: h.stdout! }).on('line', (line) => {
    const v = JSON.parse(line) as { completed?: boolean; reason?: string; type?: string; message?: string };
    if (v.completed === undefined) return;
    reported++;
    if (!v.completed) failed ||= v.reason ?? 'not completed';
  });
  for (let k = 0; k < 600 && !existsSync(invFile); k++) await Promise.race([new Promise((r) => setTimeout(r, 50)), exited]);
  if (!existsSync(invFile)) throw new Error(`the host wrote no invitation in 30 s: ${stderr.trim()}`);
  return {
    pid: h.pid!,
    inv: parseInvitation(c, readFileSync(invFile, 'utf8')),
    warnings: () => warnings,
    async reports(n) {
      for (let k = 0; k < 400 && reported < n; k++) await Promise.race([new Promise((r) => setTimeout(r, 50)), exited]);
      if (failed) throw new Error(`a session failed on the host: ${failed}`);
      if (reported < n) throw new Error(`the host reported ${reported} of ${n} sessions within 20 s`);
    },
  };
}

async function main(): Promise<string> {
  const r = spawnSync(process.execPath, [BIN, 'init', '--data-dir', join(work, 'host')], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`aigenora init: ${r.stderr.trim()}`);
  let host = await startHost(ROUNDS);
  let served = 0;

  /** Guests dialling (connection and session handshake) at once, at most DIALLING; the rest wait their turn. */
  let dialling = 0;
  const queue: (() => void)[] = [];
  const dialSlot = async (): Promise<() => void> => {
    if (dialling >= DIALLING) await new Promise<void>((resolve) => queue.push(resolve));
    else dialling++;
    let freed = false;
    return () => {
      if (freed) return;
      freed = true;
      const next = queue.shift();
      if (next) next();
      else dialling--;
    };
  };
  /** Sessions under way now (from the guest's first frame to its end), and the most at once since `open.peak` was reset. */
  const open = { now: 0, peak: 0 };

  /**
   * One guest's session; its frame times go to `frames` and its round gaps to `rounds`. `hybrid` holds
   * each of the guest's moves for the spec's min_think_seconds (1 s), so the host's session sits idle.
   */
  const guest = async (
    k: number,
    frames: number[],
    rounds: number[],
    controlMode: 'autonomous' | 'hybrid' = 'autonomous',
    onFirst?: () => void,
  ): Promise<void> => {
    let last = NaN;
    let first = true;
    const free = await dialSlot();
    try {
      const res = await joinSession({
        crypto: c,
        seed: new Uint8Array(randomBytes(32)),
        protocol,
        options: {},
        controlMode,
        sessionsDir: join(work, 'guests'),
        invitation: host.inv,
        localAddress: `127.0.1.${k + 1}`,
        onEvent: (type) => void (type === 'connected' && free()),
        onMessage: (_from: unknown, msg: Message) => {
          const now = performance.now();
          frames.push(now);
          if (first) {
            first = false;
            open.peak = Math.max(open.peak, ++open.now);
            onFirst?.();
          }
          if (msg.action !== 'round_result') return;
          if (!Number.isNaN(last)) rounds.push(now - last);
          last = now;
        },
      });
      if (!res.completed) throw new Error(`a session failed on the guest: ${res.reason} ${res.detail ?? ''}`);
    } finally {
      free();
      if (!first) open.now--;
    }
  };

  /** `n` sessions together: every guest starts at once (dialling DIALLING at a time); the run ends when the last session has. */
  const run = async (n: number): Promise<Run> => {
    const rssBefore = rssKiB(host.pid);
    let rssPeak = rssBefore;
    const poll = setInterval(() => (rssPeak = Math.max(rssPeak, rssKiB(host.pid))), 20);
    const frames: number[] = [];
    const rounds: number[] = [];
    open.peak = 0;
    const t0 = performance.now();
    try {
      await Promise.all(Array.from({ length: n }, (_, k) => guest(k, frames, rounds)));
    } finally {
      clearInterval(poll);
    }
    served += n;
    await host.reports(served);
    return {
      sessions: n,
      peak: open.peak,
      frames: frames.length,
      ms: Math.max(...frames) - t0,
      rounds,
      rssBefore,
      rssPeak,
      rssAfter: rssKiB(host.pid),
    };
  };

  /** The host's RSS idle, then with `n` sessions open and idle (hybrid guests thinking), then after they end. */
  const idle = async (n: number): Promise<Idle> => {
    const before = rssKiB(host.pid);
    let started = 0;
    let all = () => {};
    const opened = new Promise<void>((resolve) => (all = resolve));
    const sessions = Array.from({ length: n }, (_, k) => guest(k, [], [], 'hybrid', () => ++started === n && all()));
    await Promise.race([opened, Promise.all(sessions)]);
    if (started < n) throw new Error(`only ${started} of ${n} idle sessions were open at once`);
    await new Promise((r) => setTimeout(r, 400));
    const rssOpen = rssKiB(host.pid);
    await Promise.all(sessions);
    served += n;
    await host.reports(served);
    return { sessions: n, before, open: rssOpen, after: rssKiB(host.pid) };
  };

  const rss0 = rssKiB(host.pid);
  await run(10); // warm-up, uncounted
  const runs = new Map<number, Run[]>(COUNTS.map((n) => [n, []]));
  for (let i = 0; i < FLOOR_SAMPLES; i++) {
    for (let j = 0; j < COUNTS.length; j++) {
      const n = COUNTS[(i + j) % COUNTS.length]!;
      runs.get(n)!.push(await run(n));
    }
  }
  const rssEnd = rssKiB(host.pid);
  const warnings = host.warnings();
  // A second host for the idle sessions, whose games are short: each held move costs a second.
  children.pop()!.kill('SIGKILL');
  host = await startHost(IDLE_ROUNDS);
  const timedServed = served;
  served = 0;
  const idleStart = rssKiB(host.pid);
  const idles = new Map<number, Idle[]>();
  for (const n of [10, 100]) idles.set(n, [await idle(n), await idle(n), await idle(n)]);
  const perIdle = (n: number) => median(idles.get(n)!.map((x) => (x.open - x.before) / n));

  const rate = (x: Run) => (x.frames * 1000) / x.ms;
  const floors = [
    ratioFloor('aggregate frames/s, 100 sessions together ÷ 10', runs.get(100)!.map(rate), runs.get(10)!.map(rate), NO_COLLAPSE),
    budgetFloor('host RSS per open idle session (100 open at once)', perIdle(100), IDLE_KIB, 'KiB'),
  ];
  writeFloors('many-sessions', floors);

  const mib = (k: number) => (k / 1024).toFixed(1);
  const rows = COUNTS.map((n) => {
    const rs = runs.get(n)!;
    return [
      `${n}`,
      `${median(rs.map((x) => x.peak))} (${Math.min(...rs.map((x) => x.peak))}–${Math.max(...rs.map((x) => x.peak))})`,
      fmt(median(rs.map(rate))),
      median(rs.map((x) => percentile(x.rounds, 0.99))).toFixed(1),
      median(rs.map((x) => percentile(x.rounds, 0.5))).toFixed(1),
      median(rs.map((x) => x.ms)).toFixed(0),
      mib(median(rs.map((x) => x.rssBefore))),
      mib(median(rs.map((x) => x.rssPeak))),
      mib(median(rs.map((x) => x.rssAfter))),
      ((median(rs.map((x) => x.rssPeak - x.rssBefore)) / n) | 0).toString(),
    ];
  });
  const idleLine = (n: number) =>
    `${n} open: ${idles
      .get(n)!
      .map((x) => `${mib(x.before)} → ${mib(x.open)} → ${mib(x.after)} MiB`)
      .join('; ')}; median ${perIdle(n).toFixed(0)} KiB per open idle session.`;
  warnings.push(...host.warnings());
  const lines = [
    '# Many sessions on one host',
    '',
    `\`aigenora host --daemon --max-sessions ${MAX_SESSIONS}\` (child process) and 1, 10 and 100 guests together in this process (each its own libp2p node) over 127.0.0.1, each from its own address 127.0.1.k;`,
    `RPS, ${ROUNDS} fixed rounds, wasm backend. Every guest of a run starts at once (${DIALLING} dialling at a time, the next as one's session starts); host and guests share the machine's 2 cores.`,
    "Aggregate frames/s: all sessions' frames ÷ the time from the first dial to the last frame (connection setups included); round ms: gaps between round results.",
    `Median of ${FLOOR_SAMPLES} rounds, one run of each count per round, the order rotating. Load ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}, ${process.version}.`,
    '',
    ...table(
      [
        'sessions',
        'most under way at once (min–max)',
        'aggregate frames/s',
        'p99 round ms',
        'p50 round ms',
        'run ms',
        'host RSS before MiB',
        'peak MiB',
        'after MiB',
        '(peak − before) ÷ sessions, KiB',
      ],
      rows,
    ),
    '',
    `Host RSS: ${mib(rss0)} MiB idle at start (no session yet), ${mib(rssEnd)} MiB idle after the timed runs (${timedServed} sessions served).`,
    `Idle sessions, on a second host serving ${IDLE_ROUNDS} rounds (${mib(idleStart)} MiB at its start): hybrid guests holding each move 1 s, the host's RSS read`,
    `0.4 s after every session has its first frame, 3 times each:`,
    `${idleLine(10)}`,
    `${idleLine(100)}`,
    `Host warnings on stderr: ${warnings.length ? warnings.slice(0, 5).join(' / ') : 'none'}.`,
    '',
    'The reference host is not run: it serves one session per process (aigenora-src src/aigenora/agent/host.py:354 takes the first',
    'channel its iroh node accepts, line 573 returns after that session, line 581 shuts the node down; its --daemon, line 116, only',
    'starts that same one-session host as a detached child). Many reference sessions are many host processes, not many on one host.',
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
  for (const h of children) h.kill('SIGKILL');
  rmSync(work, { recursive: true, force: true });
}
