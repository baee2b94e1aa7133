// Network sessions side by side in one run. Workload: RPS, 99 fixed rounds, wasm backend on every side
// of ours, transcripts written by both sides with durability `process` (each frame written with one
// write(2) before the engine's next step, no fsync per frame; the files are fsync'ed once when the
// session closes), as bench/engine.bench.ts runs the engine.
//
// - loopback: `aigenora host --daemon` in a child process serving every session (so its code is as
//   warm as this process's), the guest here, libp2p over 127.0.0.1 (TCP + Noise + Yamux).
// - loopback, stack as pinned: the same with AIGENORA_NET_UNPATCHED=1 on both sides (a second host
//   process), i.e. without node.ts's cuts to the per-frame cost of the pinned libp2p: before ÷ after.
// - in memory: runLocal, host and guest in this process over the in-memory transport.
// - raw TCP ping-pong: this process and an echo server in a child Node process over 127.0.0.1 (Nagle
//   off, no libp2p, no crypto), as many lines as our session has frames, each as long as a line of our
//   transcript, each sent when the echo of the last is back: the cost of one round trip per frame.
// - the reference agent over iroh: its Python CLI hosting and joining through our registry server in a
//   loopback-only network namespace (bench/reference-rps.ts); skipped, and said so, where it cannot run.
//
// One uncounted warm-up of each, then FLOOR_SAMPLES rounds of one of each, the order rotating every
// round so that a shared machine's busy moments fall on all alike. frames/s = frames of the session ÷
// the time from its first frame to its last, as seen by a side that sees every frame (the guest over
// the network, the host in memory); connection setup is reported apart. Floors, each on the median of
// the rounds' paired ratios:
// - (our ms per frame over loopback − the ping-pong's ms per round trip) ÷ the ping-pong's ms per
//   round trip ≤ 1.5: what a frame costs us above a bare round trip of its bytes between two processes.
// - our loopback frames/s ÷ the reference's over iroh ≥ 3, both timed over the rounds (the frames from
//   the first round result to the last ÷ the time between them), since the reference records its round
//   results and not its frames; it plays the same spec, so its rounds carry as many frames as ours.
// A missed floor prints MISSED and exits 0; a bench that cannot run exits 1. Writes bench/results/net.md.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
import { openReferenceRps, type ReferenceSample } from './reference-rps.js';

/** Our ms per frame above the raw ping-pong's round trip, at most this many times that round trip. */
const ABOVE_TCP = 1.5;
/** Our frames/s over loopback, at least this many times the reference agent's over iroh. */
const VS_REFERENCE = 3;
const UNPATCHED = 'AIGENORA_NET_UNPATCHED';
const protocol = { spec: l.spec, specText: l.text, protocolId: l.protocolId!, hooks };

interface Sample {
  frames: number;
  /** First to last frame, ms. */
  ms: number;
  /** Median gap between consecutive round_result frames, ms. */
  round: number;
  /** Frames from the first round_result (excluded) to the last (included), and the ms between those two. */
  roundFrames: number;
  roundMs: number;
  rounds: number;
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
  /** The frame count at each round_result, to count the frames of the rounds between the first and the last. */
  const resultFrames: number[] = [];
  return {
    onMessage: (_from: unknown, msg: Message) => {
      const now = performance.now();
      if (frames++ === 0) first = now;
      last = now;
      if (msg.action === 'round_result') {
        results.push(now);
        resultFrames.push(frames);
      }
    },
    sample: () => ({
      frames,
      ms: last - first,
      round: median(results.slice(1).map((t, k) => t - results[k]!)),
      roundFrames: resultFrames[resultFrames.length - 1]! - resultFrames[0]!,
      roundMs: results[results.length - 1]! - results[0]!,
      rounds: results.length,
    }),
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
 * A raw TCP ping-pong over 127.0.0.1: an echo server in a child Node process (no libp2p, no crypto, Nagle
 * off) that sends back each line it reads, and this process sending one line of `size` bytes at a time,
 * the next when the echo of the last is back. `trips` returns ms per round trip over `n` round trips.
 */
async function startEcho(): Promise<{ trips(n: number, size: number): Promise<number>; stop(): void }> {
  const { connect } = await import('node:net');
  const echo =
    "const s=require('net').createServer(c=>{c.setNoDelay(true);let b='';c.setEncoding('latin1');c.on('data',d=>{b+=d;let i;while((i=b.indexOf('\\n'))>=0){c.write(b.slice(0,i+1),'latin1');b=b.slice(i+1)}})});s.listen(0,'127.0.0.1',()=>console.log(s.address().port))";
  const child = spawn(process.execPath, ['-e', echo], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  const port = Number(
    await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout! }).once('line', resolve);
      child.once('exit', () => reject(new Error('the echo server exited')));
    }),
  );
  const sock = connect(port, '127.0.0.1');
  sock.setNoDelay(true);
  await new Promise<void>((resolve, reject) => sock.once('connect', resolve).once('error', reject));
  return {
    async trips(n, size) {
      const line = Buffer.alloc(size, 97);
      line[size - 1] = 10;
      const t0 = performance.now();
      await new Promise<void>((resolve) => {
        let got = 0;
        let done = 0;
        const onData = (d: Buffer) => {
          got += d.length;
          if (got < size) return;
          got -= size;
          if (++done === n) {
            sock.off('data', onData);
            resolve();
          } else sock.write(line);
        };
        sock.on('data', onData);
        sock.write(line);
      });
      return (performance.now() - t0) / n;
    },
    stop() {
      sock.destroy();
      child.kill();
    },
  };
}

/** Mean bytes per line of the transcripts under `dir` (one frame a line), 0 when there are none. */
function meanFrameBytes(dir: string): number {
  let bytes = 0;
  let lines = 0;
  for (const sid of existsSync(dir) ? readdirSync(dir) : []) {
    const f = join(dir, sid, 'guest', 'transcript.jsonl');
    if (!existsSync(f)) continue;
    const text = readFileSync(f);
    bytes += text.length;
    lines += text.filter((x) => x === 10).length;
  }
  return lines === 0 ? 0 : bytes / lines;
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
  const runs: Record<'net' | 'raw' | 'mem', Sample[]> = { net: [], raw: [], mem: [] };
  /** ms per round trip of the raw TCP ping-pong, and the reference's sessions, in round order. */
  const tcp: number[] = [];
  const refs: ReferenceSample[] = [];
  const echo = await startEcho();
  const opened = await openReferenceRps(join(work, 'reference'));
  const reference = typeof opened === 'string' ? undefined : opened;
  try {
    // Warm-up, uncounted; the ping-pong's frames are as many and as long as our session's.
    await loopback('net');
    await loopback('raw');
    await memory();
    const tripFrames = (await loopback('net')).frames;
    const frameBytes = Math.round(meanFrameBytes(join(work, 'bob', 'sessions'))) || 300;
    await echo.trips(tripFrames, frameBytes);
    await reference?.session();

    const cases: Record<string, () => Promise<unknown>> = {
      net: async () => runs.net.push(await loopback('net')),
      raw: async () => runs.raw.push(await loopback('raw')),
      mem: async () => runs.mem.push(await memory()),
      tcp: async () => tcp.push(await echo.trips(tripFrames, frameBytes)),
      ...(reference && { ref: async () => refs.push(await reference.session()) }),
    };
    const keys = Object.keys(cases);
    for (let i = 0; i < FLOOR_SAMPLES; i++) for (let j = 0; j < keys.length; j++) await cases[keys[(i + j) % keys.length]!]!();
    return report(runs, tcp, refs, { tripFrames, frameBytes, missing: typeof opened === 'string' ? opened : undefined });
  } finally {
    echo.stop();
    await reference?.close();
    await hosts.net.stop();
    await hosts.raw.stop();
  }
}

function report(
  runs: Record<'net' | 'raw' | 'mem', Sample[]>,
  tcp: number[],
  refs: ReferenceSample[],
  o: { tripFrames: number; frameBytes: number; missing: string | undefined },
): string {
  const rate = (s: Sample) => (s.frames * 1000) / s.ms;
  /** frames/s over the rounds alone, from the first round_result to the last: how the reference is timed too. */
  const roundRate = (s: Sample) => (s.roundFrames * 1000) / s.roundMs;
  // The reference plays the same spec, so its rounds carry as many frames as ours.
  const framesPerRound = median(runs.net.map((s) => s.roundFrames / (s.rounds - 1)));
  const refRate = (r: ReferenceSample) => (framesPerRound * (r.rounds - 1) * 1000) / r.ms;
  /** ms per frame of a loopback session above the ping-pong's round trip of the same round. */
  const above = runs.net.map((s, i) => s.ms / s.frames - tcp[i]!);
  const med = (w: keyof typeof runs, f: (s: Sample) => number) => median(runs[w].map(f));
  const frames = (w: keyof typeof runs) => [...new Set(runs[w].map((s) => s.frames))].join(', ');
  const cpu = (w: 'net' | 'raw') =>
    runs[w].every((s) => s.hostCpu !== undefined)
      ? `${med(w, (s) => s.cpu).toFixed(0)} ms guest + ${med(w, (s) => s.hostCpu!).toFixed(0)} ms host`
      : `${med(w, (s) => s.cpu).toFixed(0)} ms guest (host: not measured)`;
  const row = (name: string, w: 'net' | 'raw') => [
    name,
    frames(w),
    `${med(w, (s) => s.ms).toFixed(0)} ms`,
    med(w, rate).toFixed(0),
    med(w, roundRate).toFixed(0),
    `${med(w, (s) => s.round).toFixed(2)} ms`,
    `${med(w, (s) => s.setup!).toFixed(1)} ms`,
    `${med(w, (s) => s.total!).toFixed(0)} ms`,
    cpu(w),
  ];
  const refMed = (f: (r: ReferenceSample) => number) => median(refs.map(f));
  const floors = [
    ratioFloor(
      `loopback ms per frame above a raw TCP ping-pong's round trip ÷ that round trip (RPS 99 rounds; ${o.tripFrames} round trips of ${o.frameBytes}-byte lines)`,
      above,
      tcp,
      ABOVE_TCP,
      true,
    ),
    ...(refs.length > 0
      ? [
          ratioFloor(
            "loopback frames/s ÷ the reference agent's over iroh (RPS 99 rounds, timed over the rounds)",
            runs.net.map(roundRate),
            refs.map(refRate),
            VS_REFERENCE,
          ),
        ]
      : []),
  ];
  writeFloors('net', floors, o.missing ? [`floor not measured: our frames/s ÷ the reference's (${o.missing})`] : []);
  const before = ratioFloor('', runs.raw.map(rate), runs.mem.map(rate), 0);
  const gain = ratioFloor('', runs.net.map(rate), runs.raw.map(rate), 0);
  const vsMem = ratioFloor('', runs.net.map(rate), runs.mem.map(rate), 0);
  const lines = [
    '# Network sessions: loopback against a raw TCP ping-pong and the reference agent (one run)',
    '',
    `${new Date().toISOString()} · Node ${process.version} · load average ${loadavg()[0]!.toFixed(2)} on a shared 2-core machine · RPS, 99 fixed rounds, wasm backend on every side of ours`,
    '',
    '- **loopback**: `aigenora host --daemon` in a child process (one process for all its sessions), the guest in the bench process, libp2p over 127.0.0.1: TCP + Noise + Yamux.',
    `- **loopback, stack as pinned**: the same with \`${UNPATCHED}=1\` on both sides (its own host process): without ts/net/node.ts's cuts to the per-frame cost of the pinned libp2p (one writev per Noise message, Yamux window granted in halves, Noise's length reader without an exception per read, Noise's transport messages sealed by the session's own backend). The bytes on the wire are the same either way. Both loopback paths read the stream through its events (ts/net/line-transport.ts), so this is not the whole before.`,
    '- **in memory**: `runLocal`, host and guest in the bench process over the in-memory transport (as bench/engine.bench.ts).',
    `- **raw TCP ping-pong**: this process and an echo server in a child Node process over 127.0.0.1, plain TCP with Nagle off, no libp2p, no crypto, no engine: ${o.tripFrames} lines of ${o.frameBytes} bytes (as many frames as our session has, each as long as our transcript's mean line), each sent when the echo of the last is back. Its cost per frame is one round trip.`,
    "- **reference over iroh**: the reference agent (its Python CLI) hosting and a second one joining, both autonomous, through our `aigenora server` registry, inside a network namespace with only loopback up; timed from the joining side's record of each round result.",
    '- **transcripts**: both sides of our paths write theirs with durability `process`: each frame written with one write(2) before the engine takes its next step; no fsync per frame; fsync once at close.',
    `- **rounds**: ${FLOOR_SAMPLES} rounds of one session (one batch of round trips) per path after one uncounted warm-up of each, the order rotating every round; each floor is judged on the median of the ${FLOOR_SAMPLES} ratios of the same round.`,
    '- **frames/s**: the frames of a session ÷ the time from its first frame to its last, seen by a side that sees every frame (the guest over the network, the host in memory); connection setup is reported apart. **Over the rounds**: the frames after the first round result up to the last ÷ the time between those two results; the reference is timed this way (it records its round results, not its frames; it plays the same spec, so its rounds carry as many frames as ours, ' +
      `${framesPerRound.toFixed(0)} a round).`,
    '',
    ...table(
      [
        'path',
        'frames per session',
        'median first→last frame',
        'median frames/s',
        'median frames/s over the rounds',
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
          med('mem', roundRate).toFixed(0),
          `${med('mem', (s) => s.round).toFixed(2)} ms`,
          '–',
          '–',
          `${med('mem', (s) => s.cpu).toFixed(0)} ms, both sides`,
        ],
        refs.length > 0
          ? [
              'reference over iroh (Python, two processes)',
              `${refMed((r) => r.rounds)} round results`,
              `${refMed((r) => r.ms).toFixed(0)} ms (first→last round result)`,
              '–',
              median(refs.map(refRate)).toFixed(0),
              `${refMed((r) => r.round).toFixed(2)} ms`,
              `${refMed((r) => r.setup).toFixed(0)} ms (join command start → first round result)`,
              `${refMed((r) => r.total).toFixed(0)} ms (join command)`,
              '–',
            ]
          : ['reference over iroh', `not run: ${o.missing ?? 'no sample'}`, '–', '–', '–', '–', '–', '–', '–'],
      ],
      'lrrrrrrrr',
    ),
    '',
    "Round latency: the median gap between consecutive round_result frames (commit → commit → reveal → reveal → result; the reference: between its guest's recorded round results, at 1 ms resolution). CPU: user + system time of each process over the session (loopback: the join call with its setup and teardown; the host from /proc, in 10 ms ticks). The reference's setup includes starting Python and looking the invitation up at the registry, so it is not comparable with our dial → first frame.",
    '',
    `Raw TCP ping-pong: median ${(median(tcp) * 1000).toFixed(0)} µs per round trip (spread ${(Math.min(...tcp) * 1000).toFixed(0)}–${(Math.max(...tcp) * 1000).toFixed(0)} µs); loopback: median ${(med('net', (s) => s.ms / s.frames) * 1000).toFixed(0)} µs per frame, ${(median(above) * 1000).toFixed(0)} µs of it above the ping-pong's round trip. ` +
      "First floor: (our ms per frame − the ping-pong's ms per round trip) ÷ the ping-pong's ms per round trip, each pair from the same round, ≤ " +
      `${ABOVE_TCP}. Counting a frame as half a round trip (one way) instead would give a median of ${median(runs.net.map((s, i) => (s.ms / s.frames - tcp[i]! / 2) / (tcp[i]! / 2))).toFixed(2)}×.`,
    '',
    ...floorTable(floors),
    ...(o.missing ? ['', `Not measured in this run: our frames/s ÷ the reference's (${o.missing}).`] : []),
    '',
    ...table(
      ["not a floor (median of the same rounds' ratios)", 'median', 'spread (min–max)'],
      [
        ['loopback ÷ in memory (frames/s)', `${vsMem.median.toFixed(2)}×`, `${vsMem.min.toFixed(2)}–${vsMem.max.toFixed(2)}×`],
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
    `Samples in round order: frames/s loopback ${runs.net.map((s) => rate(s).toFixed(0)).join(', ')}; stack as pinned ${runs.raw.map((s) => rate(s).toFixed(0)).join(', ')}; in memory ${runs.mem.map((s) => rate(s).toFixed(0)).join(', ')}; ` +
      `frames/s over the rounds loopback ${runs.net.map((s) => roundRate(s).toFixed(0)).join(', ')}; reference ${refs.map((r) => refRate(r).toFixed(0)).join(', ') || '–'}; ping-pong µs per round trip ${tcp.map((t) => (t * 1000).toFixed(0)).join(', ')}.`,
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
