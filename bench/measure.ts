/**
 * Shared by the bench files: fixed-time ops/s measurements, samples interleaved across cases, floors
 * judged on the median of paired ratios, and the floors file each bench hands to scripts/bench.sh.
 */
import { mkdirSync, writeFileSync } from 'node:fs';

export const MS = Number(process.env['BENCH_MS'] ?? 400);
/**
 * Milliseconds per interleaved sample, BENCH_MS when set. Smaller than MS: a floor takes SAMPLES
 * samples of every case it compares, and the median of those is steadier than one long window.
 */
export const SAMPLE_MS = Number(process.env['BENCH_MS'] ?? 150);

/** ops/s of `f`, after a warm-up, over about MS milliseconds; `per` = operations per call. */
export function measure(f: () => unknown, per = 1): number {
  return rates(f, per).wall;
}

/**
 * `measure`'s run, rated two ways: ops per second of wall time, and ops per second of the process's
 * CPU time (user + system, all threads), which a loaded machine disturbs less.
 */
export function rates(f: () => unknown, per = 1, ms = MS): { wall: number; cpu: number } {
  const warm = performance.now() + ms / 4;
  while (performance.now() < warm) f();
  let n = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let t = t0;
  while (t - t0 < ms) {
    for (let i = 0; i < 4; i++) f();
    n += 4;
    t = performance.now();
  }
  const cpu = process.cpuUsage(cpu0);
  return { wall: (n * per * 1000) / (t - t0), cpu: (n * per * 1e6) / Math.max(1, cpu.user + cpu.system) };
}

export function fmt(n: number): string {
  return n >= 1e6 ? `${(n / 1e6).toFixed(2)}M` : n >= 1e4 ? `${(n / 1e3).toFixed(1)}k` : n >= 100 ? n.toFixed(0) : n.toFixed(1);
}

/** The q-quantile (0 ≤ q ≤ 1) of `xs` by nearest rank on a sorted copy; NaN for none. */
export function percentile(xs: readonly number[], q: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]!;
}

export const median = (xs: readonly number[]): number => percentile(xs, 0.5);

/** A Markdown table as lines; `align` has one letter per column, l or r (default: first l, rest r). */
export function table(head: readonly string[], rows: readonly (readonly (string | number)[])[], align?: string): string[] {
  const a = align ?? `l${'r'.repeat(head.length - 1)}`;
  return [`| ${head.join(' | ')} |`, `|${head.map((_, i) => (a[i] === 'r' ? '---:' : '---')).join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)];
}

/** Samples per case for a floor: the floor is judged on their median, never on one sample. */
export const SAMPLES = Math.max(3, Number(process.env['BENCH_SAMPLES'] ?? 5));

/**
 * Samples for the cheap cases whose floors sit closest to their line (the 1 KiB AEAD, strict verify,
 * loopback frames): on a shared machine one busy moment moves a ratio by 20% or more, and the median
 * of 9 paired ratios moves far less than the median of 5 for a few seconds more.
 */
export const FLOOR_SAMPLES = Math.max(SAMPLES, Number(process.env['BENCH_FLOOR_SAMPLES'] ?? 9));

/**
 * ops/s of each case, `samples` times, interleaved: round i measures every case once (the order
 * rotating each round), so a shared machine's busy moments fall on all cases alike. Each sample is a
 * `rates` run of about `ms` milliseconds. Returns the wall-clock rates per case, in round order.
 */
export function interleaved<K extends string>(cases: Readonly<Record<K, () => unknown>>, per = 1, ms = SAMPLE_MS, samples = SAMPLES): Record<K, number[]> {
  const keys = Object.keys(cases) as K[];
  const out = Object.fromEntries(keys.map((k) => [k, [] as number[]])) as Record<K, number[]>;
  for (let i = 0; i < samples; i++) {
    const order = keys.map((_, j) => keys[(i + j) % keys.length]!);
    for (const k of order) out[k].push(rates(cases[k], per, ms).wall);
  }
  return out;
}

/** One sample: ops/s of `f` over about `ms` milliseconds after a warm-up of a quarter of that. */
export function sample(f: () => unknown, per = 1, ms = SAMPLE_MS): number {
  return rates(f, per, ms).wall;
}

/**
 * The same rotation for cases that are whole runs (a session, a child process, an async loop): each
 * call of a case returns one sample (a rate, or a cost when the floor is `atMost`). Rounds defaults to
 * SAMPLES.
 */
export async function interleavedRuns<K extends string>(
  cases: Readonly<Record<K, () => number | Promise<number>>>,
  rounds = SAMPLES,
): Promise<Record<K, number[]>> {
  const keys = Object.keys(cases) as K[];
  const out = Object.fromEntries(keys.map((k) => [k, [] as number[]])) as Record<K, number[]>;
  for (let i = 0; i < rounds; i++) {
    for (let j = 0; j < keys.length; j++) {
      const k = keys[(i + j) % keys.length]!;
      out[k].push(await cases[k]());
    }
  }
  return out;
}

/** A floor judged on paired samples: ratio i is num[i] / den[i] (measured in the same round). */
export interface Floor {
  /** What is compared, e.g. "wasm ChaCha20-Poly1305 seal 64 KiB ÷ libsodium-wrappers". */
  name: string;
  median: number;
  min: number;
  max: number;
  /** The required median ratio; `atMost` flips the comparison (for costs, where lower is better). */
  required: number;
  atMost?: boolean;
  /** Set when the floor is not a ratio (a size budget): the unit its figures are in. */
  unit?: string;
  /** How many paired ratios the median is of. */
  samples?: number;
  ok: boolean;
}

export function ratioFloor(name: string, num: readonly number[], den: readonly number[], required: number, atMost = false): Floor {
  if (num.length !== den.length || num.length === 0) throw new Error(`floor ${name}: ${num.length} vs ${den.length} samples`);
  const ratios = num.map((x, i) => x / den[i]!);
  const m = median(ratios);
  return {
    name,
    median: m,
    min: Math.min(...ratios),
    max: Math.max(...ratios),
    required,
    atMost,
    samples: ratios.length,
    ok: atMost ? m <= required : m >= required,
  };
}

/** A budget that is not a ratio (a byte size, which no machine's speed changes): one figure, no spread. */
export function budgetFloor(name: string, value: number, atMost: number, unit: string): Floor {
  return { name, median: value, min: value, max: value, required: atMost, atMost: true, unit, ok: value <= atMost };
}

/** How a floor's figures print: `1.23×` for a ratio, `245.8 KiB` for a budget. */
export function floorCells(f: Floor): [median: string, spread: string, required: string, verdict: string] {
  const x = (v: number) => (f.unit ? `${v.toFixed(1)} ${f.unit}` : `${v.toFixed(2)}×`);
  return [
    x(f.median),
    f.unit ? '–' : `${f.min.toFixed(2)}–${f.max.toFixed(2)}×${f.samples === undefined ? '' : ` (n = ${f.samples})`}`,
    `${f.atMost ? '≤' : '≥'} ${f.required}${f.unit ? ` ${f.unit}` : '×'}`,
    f.ok ? 'met' : 'MISSED',
  ];
}

/** Each case's medians by implementation, from its samples. */
export function medians<I extends string>(samples: ReadonlyMap<string, Partial<Record<I, number[]>>>): Map<string, Partial<Record<I, number>>> {
  return new Map(
    [...samples].map(([name, s]) => [name, Object.fromEntries(Object.entries(s).map(([k, v]) => [k, median(v as number[])])) as Partial<Record<I, number>>]),
  );
}

/**
 * ops/s by case and implementation as a Markdown table; every cell but the wasm backend's carries, in
 * brackets, the wasm backend's ratio to it (a ratio of medians). An implementation a case lacks: '–'.
 */
export function versusWasmTable<I extends string>(impls: readonly I[], results: ReadonlyMap<string, Partial<Record<I, number>>>): string[] {
  const lines = [`| case | ${impls.join(' | ')} |`, `|---|${impls.map(() => '---:').join('|')}|`];
  for (const [name, row] of results) {
    const w = row['wasm' as I];
    const cells = impls.map((i) => {
      const v = row[i];
      if (v === undefined) return '–';
      return i === 'wasm' || w === undefined ? fmt(v) : `${fmt(v)} (${(w / v).toFixed(2)}×)`;
    });
    lines.push(`| ${name} | ${cells.join(' | ')} |`);
  }
  return lines;
}

/** The floors as a Markdown table: median ratio, the spread of the paired samples, and the verdict. */
export function floorTable(floors: readonly Floor[]): string[] {
  return table(
    ['floor (median of n paired ratios, measured in the same run)', 'median', 'spread (min–max, n)', 'required', ''],
    floors.map((f) => [f.name, ...floorCells(f)]),
    'lrrrl',
  );
}

/**
 * Hands this bench's floors to scripts/bench.sh (bench/results/<bench>.floors.json) and says on
 * stderr which were missed. A missed floor is a result, not a failure: the exit code stays 0, so
 * the runner goes on; a bench exits non-zero only when it could not run. `notes` are floors that
 * could not be measured in this run (an anchor absent), said in the summary beside the others.
 */
export function writeFloors(bench: string, floors: readonly Floor[], notes: readonly string[] = []): void {
  const dir = new URL('results/', import.meta.url);
  mkdirSync(dir, { recursive: true });
  writeFileSync(new URL(`${bench}.floors.json`, dir), `${JSON.stringify({ bench, at: new Date().toISOString(), samples: SAMPLES, floors, notes }, null, 1)}\n`);
  for (const f of floors.filter((x) => !x.ok))
    process.stderr.write(`${bench} bench: floor MISSED: ${f.name}: ${floorCells(f)[0]} (required ${floorCells(f)[2]})\n`);
  for (const n of notes) process.stderr.write(`${bench} bench: ${n}\n`);
}
