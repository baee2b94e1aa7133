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
