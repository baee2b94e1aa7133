// Network sessions against the in-memory engine, side by side in one run. Workload: RPS, 99 fixed
// rounds, wasm backend on every side, transcripts written by both sides with durability `process` (each
// frame written with one write(2) before the engine's next step, no fsync per frame; the files are
// fsync'ed once when the session closes), as bench/engine.bench.ts runs the engine.
//
// - loopback: `aigenora host --daemon` in a child process serving every session (so its code is as
//   warm as this process's), the guest here, libp2p over 127.0.0.1 (TCP + Noise + Yamux).
// - loopback, stack as pinned: the same with AIGENORA_NET_UNPATCHED=1 on both sides (a second host
//   process), i.e. without node.ts's cuts to the per-frame cost of the pinned libp2p: before ÷ after.
// - in memory: runLocal, host and guest in this process over the in-memory transport.
//
// One uncounted warm-up session of each, then FLOOR_SAMPLES rounds of one session of each, the order
// rotating every round so that a shared machine's busy moments fall on all alike. frames/s = frames of
// the session ÷ the time from its first frame to its last, as seen by a side that sees every frame (the
// guest over the network, the host in memory); connection setup is reported apart. Floor: loopback ÷
// in-memory frames/s, the median of the rounds' ratios ≥ 0.6× (a missed floor prints MISSED and exits
// 0; a bench that cannot run exits 1). Writes bench/results/net.md.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { runLocal } from '../ts/engine/local.js';
import type { Message } from '../ts/hooks/types.js';
import { loadIdentity } from '../ts/library/identity.js';
import { parseInvitation, type Invitation } from '../ts/net/invitation.js';
import { join as joinSession } from '../ts/net/session.js';
import { BIN, crypto as c, hostDaemonArgs, OPTIONS, rpsHooks as hooks, rpsSpec as l } from './rps-workload.js';
import { FLOOR_SAMPLES, floorTable, median, ratioFloor, table, writeFloors } from './measure.js';

const FLOOR = 0.6;
const UNPATCHED = 'AIGENORA_NET_UNPATCHED';
const protocol = { spec: l.spec, specText: l.text, protocolId: l.protocolId!, hooks };

interface Sample {
  frames: number;
  /** First to last frame, ms. */
  ms: number;
  /** Median gap between consecutive round_result frames, ms. */
  round: number;
  /** CPU time (user + system) of this process over the session. */
  cpu: number;
  /** Loopback only: from the join call to the first frame (dial, Noise, Yamux, handshake, engine start). */
  setup?: number;
  /** Loopback only: from the join call until it returned (the node stopped). */
  total?: number;
  /** Loopback only: CPU time of the host process over the session (Linux /proc). */
  hostCpu?: number;
}

/** CPU time (user + system) of a process so far, ms, from Linux /proc (10 ms ticks); undefined elsewhere. */
function procCpu(pid: number | undefined): number | undefined {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
  } catch {
    return undefined;
  }
}
const ownCpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/** Times the frames one side sees: every frame once, as it is sent or accepted. */
function clock() {
  let first = 0;
  let last = 0;
  let frames = 0;
  const results: number[] = [];
  return {
    onMessage: (_from: unknown, msg: Message) => {
      const now = performance.now();
      if (frames++ === 0) first = now;
      last = now;
      if (msg.action === 'round_result') results.push(now);
    },
    sample: () => ({ frames, ms: last - first, round: median(results.slice(1).map((t, k) => t - results[k]!)) }),
    get first() {
      return first;
    },
  };
}

const work = mkdtempSync(join(tmpdir(), 'aigenora-netbench-'));
const children: ChildProcess[] = [];

/** `aigenora host --daemon` in a child process, and the sessions it reports on its standard output. */
async function startHost(
  name: string,
  unpatched: boolean,
): Promise<{ child: ChildProcess; inv: Invitation; report(): Promise<{ completed?: boolean; reason?: string }>; stop(): Promise<void> }> {
  const invFile = join(work, `${name}.invitation`);
  let stderr = '';
  const env = { ...process.env, AIGENORA_CRYPTO: 'wasm', [UNPATCHED]: unpatched ? '1' : '0' };
  const child = spawn(process.execPath, [BIN, ...hostDaemonArgs(join(work, 'alice'), invFile)], { stdio: ['ignore', 'pipe', 'pipe'], env });
  children.push(child);
  child.stderr!.on('data', (d: Buffer) => void (stderr = (stderr + d.toString()).slice(-4000)));
  const exited = new Promise<never>((_, reject) =>
    child.on('exit', (code) => reject(new Error(`the host (${name}) exited (${code}): ${stderr.trim().split('\n').slice(-4).join(' / ')}`))),
  );
  exited.catch(() => undefined);
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  /** One report per session served: with --json a host prints a line of JSON per result, its invitation's first (no "completed"). */
  const next = async (): Promise<{ completed?: boolean; reason?: string }> => {
    for (let r = await lines.next(); !r.done; r = await lines.next()) {
      const v = JSON.parse(r.value as string) as { completed?: boolean; reason?: string };
      if (v.completed !== undefined) return v;
    }
    return await exited;
  };
  for (let k = 0; k < 600 && !existsSync(invFile); k++) await Promise.race([new Promise((r) => setTimeout(r, 50)), exited]);
  if (!existsSync(invFile)) throw new Error(`the host (${name}) wrote no invitation in 30 s: ${stderr.trim()}`);
  return {
    child,
    inv: parseInvitation(c, readFileSync(invFile, 'utf8')),
    report: () =>
      Promise.race([
        next(),
        exited,
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no report from the host (${name}) within 10 s`)), 10_000)),
      ]),
    async stop() {
      child.kill('SIGINT');
      await exited.catch(() => undefined);
    },
  };
}

/**
 * The floor of any network path on this machine: round trips of a 300-byte message between this
 * process and an echo server in a child Node process over 127.0.0.1, plain TCP with Nagle off (no
 * libp2p, no crypto). Median µs per round trip of `batches` batches.
 */
async function rawTcpRoundTrip(trips = 2000, batches = 3): Promise<number> {
  const { connect } = await import('node:net');
  const echo =
    "const s=require('net').createServer(c=>{c.setNoDelay(true);c.on('data',d=>c.write(d))});s.listen(0,'127.0.0.1',()=>console.log(s.address().port))";
  const child = spawn(process.execPath, ['-e', echo], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  try {
    const port = Number(
      await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stdout! }).once('line', resolve);
        child.once('exit', () => reject(new Error('the echo server exited')));
      }),
    );
    const sock = connect(port, '127.0.0.1');
    sock.setNoDelay(true);
    await new Promise<void>((resolve, reject) => sock.once('connect', resolve).once('error', reject));
    const msg = Buffer.alloc(300, 97);
    const perTrip: number[] = [];
    for (let b = 0; b <= batches; b++) {
      const t0 = performance.now();
      await new Promise<void>((resolve) => {
        let got = 0;
        let n = 0;
        const onData = (d: Buffer) => {
          got += d.length;
          if (got < msg.length) return;
          got -= msg.length;
          if (++n === trips) {
            sock.off('data', onData);
            resolve();
          } else sock.write(msg);
        };
        sock.on('data', onData);
        sock.write(msg);
      });
      // The first batch warms up.
      if (b > 0) perTrip.push(((performance.now() - t0) * 1000) / trips);
    }
    sock.destroy();
    return median(perTrip);
  } finally {
    child.kill();
  }
}

async function main(): Promise<string> {
  for (const who of ['alice', 'bob']) {
    const r = spawnSync(process.execPath, [BIN, 'init', '--data-dir', join(work, who)], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`aigenora init: ${r.stderr.trim()}`);
  }
  const seed = loadIdentity(c, join(work, 'bob')).seed;
  const hosts = { net: await startHost('patched', false), raw: await startHost('unpatched', true) };

  const loopback = async (which: 'net' | 'raw'): Promise<Sample> => {
    const h = hosts[which];
    const k = clock();
    // node.ts reads the switch when the guest's node and stream are made, i.e. during the join.
    process.env[UNPATCHED] = which === 'raw' ? '1' : '0';
    const cpu0 = ownCpu();
    const host0 = procCpu(h.child.pid);
    const t0 = performance.now();
    const r = await joinSession({
      crypto: c,
      seed,
      protocol,
      options: {},
      sessionsDir: join(work, 'bob', 'sessions'),
      invitation: h.inv,
      onMessage: k.onMessage,
    });
    const total = performance.now() - t0;
    const cpu = ownCpu() - cpu0;
    delete process.env[UNPATCHED];
    if (!r.completed) throw new Error(`loopback session failed on the guest: ${r.reason} ${r.detail ?? ''}`);
    const report = await h.report();
    if (!report.completed) throw new Error(`loopback session failed on the host: ${report.reason ?? 'no report'}`);
    const host1 = procCpu(h.child.pid);
    return { ...k.sample(), cpu, setup: k.first - t0, total, ...(host0 !== undefined && host1 !== undefined && { hostCpu: host1 - host0 }) };
  };
  let seedN = 0;
  const memory = async (): Promise<Sample> => {
    const k = clock();
    const out = mkdtempSync(join(work, 'mem-'));
    const cpu0 = ownCpu();
    const r = await runLocal({
      crypto: c,
      spec: l.spec,
      specText: l.text,
      protocolId: l.protocolId!,
      hooks,
      options: OPTIONS,
      seed: ++seedN,
      outDir: out,
      onMessage: k.onMessage,
    });
    const cpu = ownCpu() - cpu0;
    if (!r.host.completed || !r.guest.completed) throw new Error(`in-memory session failed: ${r.host.reason} ${r.guest.reason}`);
    rmSync(out, { recursive: true, force: true });
    return { ...k.sample(), cpu };
  };
  const cases = { net: () => loopback('net'), raw: () => loopback('raw'), mem: memory } as const;
  const keys = Object.keys(cases) as (keyof typeof cases)[];

  for (const key of keys) await cases[key]();
  const runs: Record<keyof typeof cases, Sample[]> = { net: [], raw: [], mem: [] };
  for (let i = 0; i < FLOOR_SAMPLES; i++)
    for (let j = 0; j < keys.length; j++) {
      const key = keys[(i + j) % keys.length]!;
      runs[key].push(await cases[key]());
    }
  await hosts.net.stop();
  await hosts.raw.stop();

  const rate = (s: Sample) => (s.frames * 1000) / s.ms;
  const med = (w: keyof typeof cases, f: (s: Sample) => number) => median(runs[w].map(f));
  const frames = (w: keyof typeof cases) => [...new Set(runs[w].map((s) => s.frames))].join(', ');
  const cpu = (w: 'net' | 'raw') =>
    runs[w].every((s) => s.hostCpu !== undefined)
      ? `${med(w, (s) => s.cpu).toFixed(0)} ms guest + ${med(w, (s) => s.hostCpu!).toFixed(0)} ms host`
      : `${med(w, (s) => s.cpu).toFixed(0)} ms guest (host: not measured)`;
  const row = (name: string, w: 'net' | 'raw') => [
    name,
    frames(w),
    `${med(w, (s) => s.ms).toFixed(0)} ms`,
    med(w, rate).toFixed(0),
    `${med(w, (s) => s.round).toFixed(2)} ms`,
    `${med(w, (s) => s.setup!).toFixed(1)} ms`,
    `${med(w, (s) => s.total!).toFixed(0)} ms`,
    cpu(w),
  ];
  const floors = [
    ratioFloor('loopback frames/s ÷ in-memory frames/s (RPS 99 rounds, wasm, durability process on both)', runs.net.map(rate), runs.mem.map(rate), FLOOR),
  ];
  writeFloors('net', floors);
  const tcpRtt = await rawTcpRoundTrip();
  const before = ratioFloor('', runs.raw.map(rate), runs.mem.map(rate), 0);
  const gain = ratioFloor('', runs.net.map(rate), runs.raw.map(rate), 0);
  const lines = [
    '# Network sessions against the in-memory engine (one run)',
    '',
    `${new Date().toISOString()} · Node ${process.version} · load average ${loadavg()[0]!.toFixed(2)} on a shared 2-core machine · RPS, 99 fixed rounds, wasm backend on every side`,
    '',
    '- **loopback**: `aigenora host --daemon` in a child process (one process for all its sessions), the guest in the bench process, libp2p over 127.0.0.1: TCP + Noise + Yamux.',
    `- **loopback, stack as pinned**: the same with \`${UNPATCHED}=1\` on both sides (its own host process): without ts/net/node.ts's cuts to the per-frame cost of the pinned libp2p (one writev per Noise message, Yamux window granted in halves, Noise's length reader without an exception per read, Noise's transport messages sealed by the session's own backend). The bytes on the wire are the same either way. Both loopback paths read the stream through its events (ts/net/line-transport.ts), so this is not the whole before.`,
    '- **in memory**: `runLocal`, host and guest in the bench process over the in-memory transport (as bench/engine.bench.ts).',
    '- **transcripts**: both sides of every path write theirs with durability `process`: each frame written with one write(2) before the engine takes its next step; no fsync per frame; fsync once at close.',
    `- **ratio**: loopback frames/s ÷ in-memory frames/s of the same round; ${FLOOR_SAMPLES} rounds of one session per path after one uncounted warm-up session of each, the order rotating every round; the floor is judged on the median of the ${FLOOR_SAMPLES} ratios.`,
    '- **frames/s**: the frames of a session ÷ the time from its first frame to its last, seen by a side that sees every frame (the guest over the network, the host in memory); connection setup is reported apart.',
    '',
    ...table(
      [
        'path',
        'frames per session',
        'median first→last frame',
        'median frames/s',
        'median round latency',
        'median setup (dial → first frame)',
        'median join call, end to end',
        'median CPU per session',
      ],
      [
        row('loopback (libp2p)', 'net'),
        row('loopback, stack as pinned', 'raw'),
        [
          'in memory',
          frames('mem'),
          `${med('mem', (s) => s.ms).toFixed(0)} ms`,
          med('mem', rate).toFixed(0),
          `${med('mem', (s) => s.round).toFixed(2)} ms`,
          '–',
          '–',
          `${med('mem', (s) => s.cpu).toFixed(0)} ms, both sides`,
        ],
      ],
      'lrrrrrrr',
    ),
    '',
    'Round latency: the median gap between consecutive round_result frames (commit → commit → reveal → reveal → result). CPU: user + system time of each process over the session (loopback: the join call with its setup and teardown; the host from /proc, in 10 ms ticks).',
    '',
    `The machine's own floor for any network path, a figure with no floor of its own: a 300-byte message and its echo between this process and a child Node process over 127.0.0.1, plain TCP with Nagle off, no libp2p and no crypto, takes ${tcpRtt.toFixed(0)} µs per round trip (median of 3 batches of 2,000 after a warm-up batch). One frame over loopback costs the in-memory engine's work plus about half of that, plus what libp2p and Noise add on each side.`,
    '',
    ...floorTable(floors),
    '',
    ...table(
      ["not a floor (median of the same rounds' ratios)", 'median', 'spread (min–max)'],
      [
        [
          'loopback with the stack as pinned ÷ in memory (before the cuts)',
          `${before.median.toFixed(2)}×`,
          `${before.min.toFixed(2)}–${before.max.toFixed(2)}×`,
        ],
        ['loopback ÷ loopback with the stack as pinned (what the cuts gain)', `${gain.median.toFixed(2)}×`, `${gain.min.toFixed(2)}–${gain.max.toFixed(2)}×`],
      ],
      'lrr',
    ),
    '',
    `Samples, frames/s in round order: loopback ${runs.net.map((s) => rate(s).toFixed(0)).join(', ')}; stack as pinned ${runs.raw.map((s) => rate(s).toFixed(0)).join(', ')}; in memory ${runs.mem.map((s) => rate(s).toFixed(0)).join(', ')}.`,
  ];
  return `${lines.join('\n')}\n`;
}

try {
  const report = await main();
  process.stdout.write(report);
  writeFileSync(new URL('results/net.md', import.meta.url), report);
} catch (e) {
  process.stderr.write(`\nnet bench: COULD NOT RUN: ${(e as Error)?.stack ?? String(e)}\n`);
  process.exitCode = 1;
} finally {
  for (const child of children) child.kill('SIGKILL');
  rmSync(work, { recursive: true, force: true });
}
