/** Shared by the bench files: a fixed-time ops/s measurement and number formatting. */

export const MS = Number(process.env['BENCH_MS'] ?? 400);

/** ops/s of `f`, after a warm-up, over about MS milliseconds; `per` = operations per call. */
export function measure(f: () => unknown, per = 1): number {
  return rates(f, per).wall;
}

/**
 * `measure`'s run, rated two ways: ops per second of wall time, and ops per second of the process's
 * CPU time (user + system, all threads), which a loaded machine disturbs less.
 */
export function rates(f: () => unknown, per = 1): { wall: number; cpu: number } {
  const warm = performance.now() + MS / 4;
  while (performance.now() < warm) f();
  let n = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let t = t0;
  while (t - t0 < MS) {
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
 * ops/s of each case, SAMPLES times, interleaved: round i measures every case once (the order
 * rotating each round), so a shared machine's busy moments fall on all cases alike. Each sample is a
 * `rates` run of about `ms` milliseconds. Returns the wall-clock rates per case, in round order.
 */
export function interleaved<K extends string>(cases: Readonly<Record<K, () => unknown>>, per = 1, ms = MS): Record<K, number[]> {
  const keys = Object.keys(cases) as K[];
  const out = Object.fromEntries(keys.map((k) => [k, [] as number[]])) as Record<K, number[]>;
  for (let i = 0; i < SAMPLES; i++) {
    const order = keys.map((_, j) => keys[(i + j) % keys.length]!);
    for (const k of order) out[k].push(ratesFor(cases[k], per, ms).wall);
  }
  return out;
}

function ratesFor(f: () => unknown, per: number, ms: number): { wall: number; cpu: number } {
  if (ms === MS) return rates(f, per);
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
  ok: boolean;
}

export function ratioFloor(name: string, num: readonly number[], den: readonly number[], required: number, atMost = false): Floor {
  if (num.length !== den.length || num.length === 0) throw new Error(`floor ${name}: ${num.length} vs ${den.length} samples`);
  const ratios = num.map((x, i) => x / den[i]!);
  const m = median(ratios);
  return { name, median: m, min: Math.min(...ratios), max: Math.max(...ratios), required, atMost, ok: atMost ? m <= required : m >= required };
}

/** The floors as a Markdown table: median ratio, the spread of the paired samples, and the verdict. */
export function floorTable(floors: readonly Floor[]): string[] {
  return table(
    ['floor (ratio of rates measured in the same run)', 'median', 'spread (min–max)', 'required', ''],
    floors.map((f) => [f.name, `${f.median.toFixed(2)}×`, `${f.min.toFixed(2)}–${f.max.toFixed(2)}×`, `${f.atMost ? '≤' : '≥'} ${f.required}×`, f.ok ? 'met' : 'MISSED']),
    'lrrrl',
  );
}
