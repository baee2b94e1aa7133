// Run by scripts/bench.sh after the benches: every floor of every bench of this run in one table
// (bench/results/floors.md), from the <bench>.floors.json files the benches wrote with writeFloors,
// with the benches that could not run, each bench's time, and the run's start and end, load average
// and Node version. A floors file older than this run's start is stale and is not read.
// With --partial (some benches, not all) the table is only printed: floors.md stays the last full run's.
// Usage: tsx bench/floors.ts --start ISO --load "1 5 15" [--logs DIR] [--partial] name:exit:seconds ...
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { floorCells, table, type Floor } from './measure.js';

const args = process.argv.slice(2);
const opt = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i < 0 ? undefined : args.splice(i, 2)[1];
};
const start = opt('--start') ?? '';
const load0 = opt('--load') ?? '';
const logs = opt('--logs');
const partialAt = args.indexOf('--partial');
const partial = partialAt >= 0;
if (partial) args.splice(partialAt, 1);
const runs = args.map((a) => {
  const [name, rc, seconds] = a.split(':');
  return { name: name!, rc: Number(rc), seconds: Number(seconds) };
});
if (runs.length === 0 || runs.some((r) => !r.name || Number.isNaN(r.rc))) throw new Error('usage: floors.ts --start ISO --load "1 5 15" name:exit:seconds ...');

interface FloorsFile {
  bench: string;
  at: string;
  samples: number;
  floors: Floor[];
  notes: string[];
}
const rows: string[][] = [];
const benches: string[][] = [];
const problems: string[] = [];
for (const r of runs) {
  const file = new URL(`results/${r.name}.floors.json`, import.meta.url);
  const f = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as FloorsFile) : undefined;
  const fresh = f !== undefined && (start === '' || f.at >= start);
  let what: string;
  if (r.rc !== 0) {
    // The error's own line when there is one (a stack's last lines say only where Node started it).
    const err =
      logs && existsSync(join(logs, `${r.name}.err`))
        ? readFileSync(join(logs, `${r.name}.err`), 'utf8')
            .trim()
            .split('\n')
        : [];
    const tail = err.find((l) => /^\s*(\w*Error\b|error\b)/i.test(l))?.trim() ?? err.slice(-3).join(' / ');
    what = `**COULD NOT RUN** (exit ${r.rc})`;
    problems.push(`- **${r.name}** could not run (exit ${r.rc})${tail ? `: ${tail.replace(/\|/g, '\\|').slice(0, 400)}` : ''}`);
  } else if (!fresh) what = 'ran; no floors reported (figures only)';
  else {
    const missed = f.floors.filter((x) => !x.ok).length;
    what = `${f.floors.length} floors, ${missed === 0 ? 'all met' : `${missed} MISSED`}`;
    for (const x of f.floors) rows.push([r.name, x.name, ...floorCells(x)]);
    for (const n of f.notes) problems.push(`- ${r.name}: ${n}`);
  }
  benches.push([r.name, what, `${r.seconds} s`]);
}

const end = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
const met = rows.filter((x) => x[5] === 'met').length;
const lines = [
  '# Bench floors, one run',
  '',
  `Started ${start}, ended ${end} · Node ${process.version} · load average ${load0} at the start, ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')} at the end (1, 5, 15 min)`,
  '',
  'Every floor is a ratio of two figures measured side by side in this run (or, marked with a unit, a size budget), judged on the median of interleaved paired samples; the spread is the min–max of those ratios. Each bench file says what each ratio divides and the durability of what it wrote.',
  '',
  `${met} of ${rows.length} floors met.`,
  '',
  ...table(['bench', 'floor', 'median', 'spread (min–max, n)', 'required', ''], rows, 'llrrrl'),
  '',
  '## Benches',
  '',
  ...table(['bench', 'outcome', 'time'], benches, 'llr'),
  ...(problems.length > 0 ? ['', '## Not measured', '', ...problems] : []),
];
const report = `${lines.join('\n')}\n`;
process.stdout.write(report);
if (partial) process.stderr.write('bench: some benches only: bench/results/floors.md keeps the last full run\n');
else writeFileSync(new URL('results/floors.md', import.meta.url), report);
