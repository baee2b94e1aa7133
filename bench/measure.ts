/** Shared by the bench files: a fixed-time ops/s measurement and number formatting. */

export const MS = Number(process.env['BENCH_MS'] ?? 400);

/** ops/s of `f`, after a warm-up, over about MS milliseconds; `per` = operations per call. */
export function measure(f: () => unknown, per = 1): number {
  const warm = performance.now() + MS / 4;
  while (performance.now() < warm) f();
  let n = 0;
  const t0 = performance.now();
  let t = t0;
  while (t - t0 < MS) {
    for (let i = 0; i < 4; i++) f();
    n += 4;
    t = performance.now();
  }
  return (n * per * 1000) / (t - t0);
}

export function fmt(n: number): string {
  return n >= 1e6 ? `${(n / 1e6).toFixed(2)}M` : n >= 1e4 ? `${(n / 1e3).toFixed(1)}k` : n >= 100 ? n.toFixed(0) : n.toFixed(1);
}
