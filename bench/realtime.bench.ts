// authoritative_realtime with Tank Battle. (1) Both sides in one process on the virtual clock
// (runVirtual), unthrottled: how fast the engine steps, checks and signs a match: rt_frame/s (ticks
// per wall-clock second) and signed frames/s (every transcript line: frames, commands, acks,
// receipts). (2) Host and guest over the real network transport (libp2p on loopback, one process)
// at the spec's tick rate: the sustained tick rate, the host's tick jitter and the guest's
// command-to-ack latency. Floors, on the median of NET_RUNS (≥ 3) matches: the tick rate held (measured
// ÷ the spec's rate ≥ 0.99) and p99 tick jitter under one tick interval (p99 ÷ the interval ≤ 1). Their
// anchor is the protocol's own cadence, not a measurement: a realtime match must keep it on any
// machine that runs it. Transcripts: durability `process` (one write per frame, no fsync). Writes
// bench/results/realtime.md and realtime.floors.json.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { getCrypto } from '../ts/crypto/index.js';
import { runVirtual } from '../ts/engine/virtual.js';
import type { HooksModule, Message } from '../ts/hooks/types.js';
import { parseInvitation } from '../ts/net/invitation.js';
import { host, join as joinSession } from '../ts/net/session.js';
import { builtinDir, BUILTINS } from '../ts/protocols/index.js';
import { rulesetHashOfDir } from '../ts/realtime/ruleset-dir.js';
import { loadSpec } from '../ts/spec/index.js';
import { floorTable, fmt, median, percentile, ratioFloor, table, writeFloors } from './measure.js';

const c = getCrypto('wasm');
const tank = BUILTINS.find((b) => b.alias === 'tank-battle-v1')!;
const dir = builtinDir(tank);
const l = loadSpec(c, dir);
const hooks = (await import('../ts/protocols/tank-battle/hooks.js')).default as HooksModule;
const rulesetHash = rulesetHashOfDir(c, dir);
const tickHz = (l.spec.flow as unknown as { realtime: { tick_rate_hz: number } }).realtime.tick_rate_hz;
const periodMs = 1000 / tickHz;
const load0 = loadavg();

type Event = { ts: string; type: string; data?: Record<string, unknown> };
const events = (d: string): Event[] =>
  readFileSync(join(d, 'events.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((s) => JSON.parse(s) as Event);
const transcriptLines = (d: string): string[] => readFileSync(join(d, 'transcript.jsonl'), 'utf8').trim().split('\n');
const ended = (evs: Event[]) => evs.find((e) => e.type === 'realtime_ended')?.data as { tick: number; outcome: string } | undefined;
const ms = (n: number) => `${n.toFixed(n < 10 ? 2 : n < 100 ? 1 : 0)} ms`;

// (1) In memory, on the virtual clock.
const SEEDS = (process.env['BENCH_RT_SEEDS'] ?? '1,2,3').split(',').map(Number);
const memRows: (string | number)[][] = [];
const perProfile: { profile: string; frameRate: number[]; signedRate: number[] }[] = [];
for (const profile of ['short', 'quick', 'standard'] as const) {
  const agg = { profile, frameRate: [] as number[], signedRate: [] as number[] };
  for (const seed of SEEDS) {
    const out = mkdtempSync(join(tmpdir(), 'aigenora-rtbench-'));
    let rtFrames = 0;
    const t0 = performance.now();
    const v = await runVirtual({
      crypto: c,
      spec: l.spec,
      specText: l.text,
      protocolId: l.protocolId!,
      hooks,
      options: tank.profiles[profile]!.options,
      outDir: out,
      seed,
      rulesetHash,
      onMessage: (_from, msg) => void (msg.action === 'rt_frame' && rtFrames++),
    });
    const wall = performance.now() - t0;
    if (!v.host.completed || !v.guest.completed) throw new Error(`bench match failed (${profile}, seed ${seed}): ${v.host.reason} / ${v.guest.reason}`);
    const end = ended(events(v.guest.dir));
    if (!end || end.tick !== rtFrames)
      throw new Error(`bench match (${profile}, seed ${seed}): the guest's realtime_ended tick ${end?.tick} is not the ${rtFrames} rt_frames the host sent`);
    // Every line either side signed, as the host's transcript holds them (its header line aside).
    const signed = transcriptLines(v.host.dir).filter((s) => s.includes('"sig"')).length;
    rmSync(out, { recursive: true, force: true });
    agg.frameRate.push((rtFrames * 1000) / wall);
    agg.signedRate.push((signed * 1000) / wall);
    memRows.push([
      profile,
      seed,
      rtFrames,
      end.outcome,
      ms(wall),
      fmt((rtFrames * 1000) / wall),
      signed,
      fmt((signed * 1000) / wall),
      `${(v.elapsedMs / wall).toFixed(1)}×`,
    ]);
  }
  perProfile.push(agg);
}

// (2) Over loopback at the spec's tick rate: the short profile, 100 ticks.
const NET_RUNS = Math.max(3, Number(process.env['BENCH_RT_NET_RUNS'] ?? 3));
const protocol = { spec: l.spec, specText: l.text, protocolId: l.protocolId!, hooks, rulesetHash };
const short = tank.profiles['short']!.options;
const netCols: string[][] = [];
const floorRows: (string | number)[][] = [];
type Summary = { count?: number; timers?: number; p50_ms: number; p99_ms: number; max_ms: number };
const three = (a: number, b: number, c: number, n?: number) => `${ms(a)} / ${ms(b)} / ${ms(c)}${n === undefined ? '' : ` (${n})`}`;
const heldRates: number[] = [];
const jitters: number[] = [];
for (let run = 1; run <= NET_RUNS; run++) {
  const out = mkdtempSync(join(tmpdir(), 'aigenora-rtnetbench-'));
  const seed = (n: number) => new Uint8Array(32).fill(n + run * 2);
  const sent = new Map<number, number>();
  const lat: number[] = [];
  const h = await host({ crypto: c, seed: seed(1), protocol, options: short, sessionsDir: join(out, 'h') });
  let hr, g;
  try {
    g = await joinSession({
      crypto: c,
      seed: seed(2),
      protocol,
      options: {},
      sessionsDir: join(out, 'g'),
      invitation: parseInvitation(c, h.text),
      onMessage: (from, msg: Message) => {
        if (from === 'guest' && msg.action === 'rt_command') sent.set(msg['seq'] as number, performance.now());
        if (from === 'host' && msg.action === 'rt_command_ack') {
          const t = sent.get(msg['seq'] as number);
          if (t !== undefined) lat.push(performance.now() - t);
        }
      },
    });
    hr = await h.done;
  } finally {
    await h.stop();
  }
  if (!g.completed || !hr.completed) throw new Error(`bench network match ${run} failed: host ${hr.reason}, guest ${g.reason}`);
  const hev = events(hr.dir);
  const gev = events(g.dir);
  // Tick times as the host stamped them into its frames (ns since the match started).
  const frames = transcriptLines(hr.dir)
    .map((s) => JSON.parse(s) as { msg?: Message })
    .filter((f) => f.msg?.action === 'rt_frame')
    .map((f) => f.msg!['frame'] as { tick: number; host_time_ns: number });
  const ticks = frames.length;
  const spanMs = (frames.at(-1)!.host_time_ns - frames[0]!.host_time_ns) / 1e6;
  const rateFrames = ((frames.at(-1)!.tick - frames[0]!.tick) * 1000) / spanMs;
  const tsOf = (type: string) => Date.parse(hev.find((e) => e.type === type)!.ts);
  const rateEvents = (ticks * 1000) / (tsOf('realtime_ended') - tsOf('realtime_started'));
  const gaps = frames.slice(1).map((f, k) => Math.abs((f.host_time_ns - frames[k]!.host_time_ns) / 1e6 - periodMs));
  const late = hev.find((e) => e.type === 'timer_lateness')?.data as Summary | undefined;
  if (!late) process.stderr.write(`realtime bench: THE HOST RECORDED NO timer_lateness EVENT (run ${run}); jitter from the frames' host_time_ns only\n`);
  const rtt = gev.find((e) => e.type === 'realtime_command_rtt')?.data as Summary | undefined;
  // The same latency from the guest's events.jsonl (millisecond timestamps).
  const evSent = new Map<number, number>();
  const evLat: number[] = [];
  for (const e of gev) {
    if (e.type !== 'protocol_message') continue;
    const m = e.data!['msg'] as Message;
    if (e.data!['direction'] === 'sent' && m.action === 'rt_command') evSent.set(m['seq'] as number, Date.parse(e.ts));
    if (e.data!['direction'] === 'received' && m.action === 'rt_command_ack' && evSent.has(m['seq'] as number))
      evLat.push(Date.parse(e.ts) - evSent.get(m['seq'] as number)!);
  }
  rmSync(out, { recursive: true, force: true });
  const p99Jitter = Math.max(late?.p99_ms ?? 0, percentile(gaps, 0.99));
  const holds = rateFrames >= tickHz * 0.99 && p99Jitter < periodMs;
  heldRates.push(rateFrames);
  jitters.push(p99Jitter);
  netCols.push([
    String(ticks),
    `${rateFrames.toFixed(3)} Hz`,
    `${rateEvents.toFixed(2)} Hz`,
    late ? three(late.p50_ms, late.p99_ms, late.max_ms, late.count ?? late.timers) : '**NOT RECORDED**',
    three(percentile(gaps, 0.5), percentile(gaps, 0.99), Math.max(...gaps), gaps.length),
    three(percentile(lat, 0.5), percentile(lat, 0.99), Math.max(...lat), lat.length),
    three(percentile(evLat, 0.5), percentile(evLat, 0.99), Math.max(...evLat), evLat.length),
    rtt ? three(rtt.p50_ms, rtt.p99_ms, rtt.max_ms, rtt.count) : 'not recorded',
  ]);
  floorRows.push([
    `run ${run}: ${tickHz} Hz held (≥ 99%), p99 tick jitter < ${ms(periodMs)}`,
    `${rateFrames.toFixed(2)} Hz, p99 ${ms(p99Jitter)}`,
    holds ? 'PASS' : 'MISSED',
  ]);
}
const netMeasures = [
  'ticks played',
  "tick rate, from the frames' host_time_ns",
  "tick rate, from the host's realtime_started → realtime_ended",
  "tick lateness p50 / p99 / max (n), the host's timer_lateness",
  `tick spacing error abs(Δ host_time_ns − ${periodMs} ms) p50 / p99 / max (n)`,
  'command → ack p50 / p99 / max (n), timed in the guest process',
  "command → ack p50 / p99 / max (n), from the guest's events.jsonl (ms resolution)",
  "command → ack p50 / p99 / max (n), the guest's realtime_command_rtt",
];
const netRows = netMeasures.map((m, i) => [m, ...netCols.map((col) => col[i]!)]);
const load1 = loadavg();
const floors = [
  ratioFloor(
    `network match tick rate ÷ the spec's ${tickHz} Hz`,
    heldRates,
    heldRates.map(() => tickHz),
    0.99,
  ),
  ratioFloor(
    `network match p99 tick jitter ÷ the tick interval (${periodMs} ms)`,
    jitters,
    jitters.map(() => periodMs),
    1,
    true,
  ),
];
writeFloors('realtime', floors);

const lines = [
  '# Realtime (authoritative_realtime, Tank Battle)',
  '',
  `${new Date().toISOString()} · Node ${process.version} · wasm backend · load average ${load0[0]!.toFixed(2)} at the start, ${load1[0]!.toFixed(2)} at the end, on a shared 2-core machine`,
  '',
  `## In memory, virtual clock, unthrottled (seeds ${SEEDS.join(', ')})`,
  '',
  'Both sides in one process (runVirtual): every frame signed, checked against the spec and the chain, and written to both transcripts with durability `process` (one write per frame, no fsync). No floor: figures only. rt_frame/s is ticks per wall-clock second; signed frames counts every line of the host\'s transcript; "× realtime" is match time on the virtual clock over wall time.',
  '',
  ...table(['profile', 'seed', 'ticks', 'outcome', 'wall time', 'rt_frame/s', 'signed frames', 'signed frames/s', '× realtime'], memRows, 'lrrlrrrrr'),
  '',
  ...table(
    ['profile', 'median rt_frame/s', 'median signed frames/s'],
    perProfile.map((p) => [p.profile, fmt(median(p.frameRate)), fmt(median(p.signedRate))]),
  ),
  '',
  `## Over loopback at ${tickHz} Hz (libp2p TCP + Noise + Yamux, host and guest in one process, short profile)`,
  '',
  "Tick lateness: how late the host driver fired each tick timer against its fixed cadence. Tick spacing: consecutive frames' host_time_ns (the host's clock, millisecond resolution) against one interval. Command → ack: the guest's rt_command sent to the host's rt_command_ack for the same seq received. A match ends early when one side is eliminated; with under 100 samples, p99 is the max.",
  '',
  ...table(['measure', ...netCols.map((_, i) => `run ${i + 1}`)], netRows),
  '',
  ...table(['run', 'measured', 'both held'], floorRows, 'lrl'),
  '',
  '## Floors, from this run',
  '',
  `Judged on the median of the ${NET_RUNS} matches. The tick rate divides the rate from the frames' host_time_ns by the spec's ${tickHz} Hz; the jitter divides the p99 of the host's tick lateness and the frames' spacing error (the larger) by the tick interval, ${ms(periodMs)}. The anchor is the protocol's cadence, not a measurement of this run: it is what the match must keep on any machine.`,
  '',
  ...floorTable(floors),
];
const report = `${lines.join('\n')}\n`;
process.stdout.write(report);
writeFileSync(new URL('results/realtime.md', import.meta.url), report);
