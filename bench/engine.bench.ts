// The session engine end to end over the in-memory transport, side by side for both backends: sign,
// frame, strict parse, envelope and chain checks, spec validation, hooks, transcript append. An RPS
// game of 99 fixed rounds (about 500 frames) per backend; frames/s counts every frame either side
// sent. Floor (issue 4): >= 5,000 frames/s with the wasm backend. Then the same wasm workload with
// the engine as it was before its split into driver, core and modes (a git worktree of PREV_COMMIT)
// and as it is now, one process each (bench/rps-inmemory.ts), sessions alternating: the split must keep
// within 10% of the frames/s before it. Writes bench/results/engine.md.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { getCrypto } from '../ts/crypto/index.js';
import { runLocal } from '../ts/engine/local.js';
import type { HooksModule } from '../ts/hooks/types.js';
import { builtinDir, BUILTINS } from '../ts/protocols/index.js';
import { loadSpec } from '../ts/spec/index.js';
import { fmt, median, percentile, table } from './measure.js';

const rps = BUILTINS.find((b) => b.alias === 'rps-v1')!;
const hooks = (await import('../ts/protocols/rps/hooks.js')).default as HooksModule;
const lines = ['# Session engine', '', `${new Date().toISOString()} · Node ${process.version} · RPS, 99 fixed rounds, in-memory transport, transcripts written per frame with durability \`process\` (one write(2) per frame, no fsync: what \`runLocal\` records with) · load average ${loadavg()[0]!.toFixed(2)} on a shared 2-core machine`, ''];
const rows: string[][] = [];
for (const name of ['wasm', 'js'] as const) {
  const c = getCrypto(name);
  const l = loadSpec(c, builtinDir(rps));
  const runs: { frames: number; ms: number }[] = [];
  for (let i = 0; i < 5; i++) {
    const out = mkdtempSync(join(tmpdir(), 'aigenora-bench-'));
    let frames = 0;
    const t0 = performance.now();
    const r = await runLocal({ crypto: c, spec: l.spec, specText: l.text, protocolId: l.protocolId!, hooks, options: { best_of: 99, termination: 'fixed_rounds' }, seed: i + 1, outDir: out, onMessage: () => frames++ });
    const ms = performance.now() - t0;
    if (!r.host.completed || !r.guest.completed) throw new Error(`bench session failed: ${r.host.reason} ${r.guest.reason}`);
    runs.push({ frames, ms });
    rmSync(out, { recursive: true, force: true });
  }
  runs.sort((a, b) => a.ms - b.ms);
  const best = runs[2]!; // median of 5
  const rate = (best.frames * 1000) / best.ms;
  rows.push([name, String(best.frames), `${best.ms.toFixed(0)} ms`, fmt(rate), name === 'wasm' ? '≥ 5.0k' : '–', name === 'wasm' ? (rate >= 5000 ? 'met' : 'MISSED') : '']);
}
lines.push(...table(['backend', 'frames', 'session time', 'frames/s', 'floor', ''], rows, 'lrrrrl'), '', ...(await beforeAfter()));
const report = `${lines.join('\n')}\n`;
process.stdout.write(report);
writeFileSync(new URL('results/engine.md', import.meta.url), report);

/** One worker process (bench/rps-inmemory.ts) on a tree: each call plays one session there. */
function worker(tsx: string, script: string, tree: string): { session(): Promise<{ frames: number; ms: number; cpuMs: number }>; close(): void } {
  const child = spawn(tsx, [script, tree], { cwd: tree, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => void (stderr += d.toString()));
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const exited = new Promise<never>((_, reject) => child.on('close', (code) => reject(new Error(`exit ${code}: ${stderr.trim().split('\n').slice(-6).join(' / ')}`))));
  exited.catch(() => undefined);
  return {
    async session() {
      child.stdin.write('\n');
      const next = await Promise.race([lines.next(), exited]);
      if (next.done) await exited;
      return JSON.parse(next.value as string) as { frames: number; ms: number; cpuMs: number };
    },
    close: () => child.stdin.end(),
  };
}

/**
 * RPS in memory with the engine before its split (a temporary worktree of PREV_COMMIT) and now (this
 * checkout): one process each, sessions alternating between them (the order flipping every pair), so
 * a shared machine's load falls on both alike; the floor is judged on the median of the pairs'
 * ratios. The worktree borrows this checkout's node_modules and WASM bindings: the Rust core must be
 * the same in both, or the comparison would not be of the engine alone. A tree that cannot run is
 * reported, never skipped.
 */
async function beforeAfter(): Promise<string[]> {
  const PREV = process.env['BENCH_PREV_COMMIT'] ?? '9f1ee0f';
  const PAIRS = Number(process.env['BENCH_PREV_PAIRS'] ?? 15);
  const WARM = 2;
  const root = new URL('..', import.meta.url).pathname.replace(/\/$/, '');
  const git = (...args: string[]) => spawnSync('git', args, { cwd: root, encoding: 'utf8' });
  const head = git('rev-parse', '--short', 'HEAD').stdout.trim();
  const dirty = git('status', '--porcelain', '--', 'ts').stdout.trim() !== '';
  const tree = join(tmpdir(), `aigenora-prev-${process.pid}`);
  const out = ['## Before vs after the engine split (wasm)', ''];
  const fail = (why: string): string[] => {
    process.stderr.write(`\nengine bench: THE ENGINE BEFORE THE SPLIT (${PREV}) COULD NOT RUN: ${why}\n\n`);
    process.exitCode = 1;
    return [...out, `**NOT MEASURED: the engine before the split (${PREV}) could not run: ${why.replace(/\s+/g, ' ').slice(0, 500)}**`];
  };
  const cleanup = () => {
    if (git('worktree', 'remove', '--force', tree).status !== 0) {
      rmSync(tree, { recursive: true, force: true });
      git('worktree', 'prune');
    }
  };
  const onSignal = () => {
    cleanup();
    process.exit(130);
  };
  process.once('SIGINT', onSignal);
  const workers: { close(): void }[] = [];
  try {
    const add = git('worktree', 'add', '--detach', tree, PREV);
    if (add.status !== 0) return fail(`git worktree add: ${add.stderr.trim()}`);
    const crates = git('diff', '--quiet', PREV, '--', 'crates/');
    if (crates.status !== 0) return fail(`crates/ differs between ${PREV} and this checkout, so this checkout's WASM bindings are not that commit's`);
    symlinkSync(join(root, 'node_modules'), join(tree, 'node_modules'));
    symlinkSync(join(root, 'bindings', 'node'), join(tree, 'bindings', 'node'));
    const tsx = join(root, 'node_modules', '.bin', 'tsx');
    const script = join(root, 'bench', 'rps-inmemory.ts');
    const w = { before: worker(tsx, script, tree), after: worker(tsx, script, root) };
    workers.push(w.before, w.after);
    const runs: Record<'before' | 'after', { frames: number; ms: number; cpuMs: number }[]> = { before: [], after: [] };
    for (let i = 0; i < WARM + PAIRS; i++) {
      for (const which of i % 2 === 0 ? (['before', 'after'] as const) : (['after', 'before'] as const)) {
        let r;
        try {
          r = await w[which].session();
        } catch (e) {
          if (which === 'before') return fail((e as Error).message);
          throw new Error(`the current engine failed its bench run: ${(e as Error).message}`);
        }
        if (i >= WARM) runs[which].push(r);
      }
    }
    const rates = (w: 'before' | 'after') => runs[w].map((r) => (r.frames * 1000) / r.ms);
    const frames = (w: 'before' | 'after') => [...new Set(runs[w].map((r) => r.frames))].join(', ');
    const ratios = rates('after').map((a, k) => a / rates('before')[k]!);
    const ratio = median(ratios);
    // CPU time leaves out the waits (fsync, other processes' turns) that a shared machine varies most.
    const cpuRates = (w: 'before' | 'after') => runs[w].map((r) => (r.frames * 1000) / r.cpuMs);
    const cpuRatios = cpuRates('after').map((a, k) => a / cpuRates('before')[k]!);
    out.push(
      `One process per tree, ${PAIRS} sessions each after ${WARM} warm-up ones, alternating session by session. Median frames/s of each; the floor on the median of the ${PAIRS} pairs' after ÷ before ratios (their spread: ${percentile(ratios, 0).toFixed(2)}× to ${percentile(ratios, 1).toFixed(2)}×).`,
      '',
      ...table(['engine', 'commit', 'frames per session', 'median session time', 'median frames/s', 'median CPU time', 'frames per CPU second'], [
        ['before the split', PREV, frames('before'), `${median(runs.before.map((r) => r.ms)).toFixed(0)} ms`, fmt(median(rates('before'))), `${median(runs.before.map((r) => r.cpuMs)).toFixed(0)} ms`, fmt(median(cpuRates('before')))],
        ['after the split', `${head}${dirty ? ' + uncommitted ts/ changes' : ''}`, frames('after'), `${median(runs.after.map((r) => r.ms)).toFixed(0)} ms`, fmt(median(rates('after'))), `${median(runs.after.map((r) => r.cpuMs)).toFixed(0)} ms`, fmt(median(cpuRates('after')))],
      ], 'llrrrrr'),
      '',
      ...table(['floor', 'measured', 'required', ''], [
        ['frames/s after ÷ before the split (median of pairs)', `${ratio.toFixed(3)}×`, '≥ 0.90×', ratio >= 0.9 ? 'met' : 'MISSED'],
        ['the same per CPU second of the process (median of pairs; not the floor)', `${median(cpuRatios).toFixed(3)}×`, '–', ''],
      ], 'lrrl'),
    );
    return out;
  } catch (e) {
    if (e instanceof Error && e.message.startsWith('the current engine')) throw e;
    return fail(e instanceof Error ? e.message : String(e));
  } finally {
    for (const x of workers) x.close();
    cleanup();
    process.off('SIGINT', onSignal);
  }
}
