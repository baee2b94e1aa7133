/** p50 / p99 / max of a set of durations in milliseconds, as sessions report their timing. */
export interface MsSummary {
  count: number;
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
}

export function msSummary(ms: readonly number[]): MsSummary {
  const sorted = [...ms].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  return { count: sorted.length, p50_ms: at(0.5), p99_ms: at(0.99), max_ms: sorted.at(-1) ?? 0 };
}
