// The session engine end to end over the in-memory transport, side by side for both backends: sign,
// frame, strict parse, envelope and chain checks, spec validation, hooks, transcript append. An RPS
// game of 99 fixed rounds (about 500 frames) per backend; frames/s counts every frame either side
// sent. Floor (issue 4): >= 5,000 frames/s with the wasm backend. Then the same wasm workload with
// the engine as it was before its split into driver, core and modes (a git worktree of PREV_COMMIT)
// and as it is now, alternating in separate processes (bench/rps-inmemory.ts): the split must keep
// within 10% of the frames/s before it. Writes bench/results/engine.md.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { getCrypto } from '../ts/crypto/index.js';
import { runLocal } from '../ts/engine/local.js';
import type { HooksModule } from '../ts/hooks/types.js';
import { builtinDir, BUILTINS } from '../ts/protocols/index.js';
import { loadSpec } from '../ts/spec/index.js';
import { fmt, median, table } from './measure.js';

const rps = BUILTINS.find((b) => b.alias === 'rps-v1')!;
const hooks = (await import('../ts/protocols/rps/hooks.js')).default as HooksModule;
const lines = ['# Session engine', '', `${new Date().toISOString()} · Node ${process.version} · RPS, 99 fixed rounds, in-memory transport, transcripts fsync'ed per frame · load average ${loadavg()[0]!.toFixed(2)} on a shared 2-core machine`, ''];
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
lines.push(...table(['backend', 'frames', 'session time', 'frames/s', 'floor', ''], rows, 'lrrrrl'), '', ...beforeAfter());
const report = `${lines.join('\n')}\n`;
process.stdout.write(report);
writeFileSync(new URL('results/engine.md', import.meta.url), report);

/**
 * RPS in memory with the engine before its split (a temporary worktree of PREV_COMMIT) and now (this
 * checkout), ROUNDS times each, alternating, each a fresh process. The worktree borrows this
 * checkout's node_modules and WASM bindings: the Rust core must be the same in both, or the
 * comparison would not be of the engine alone. A tree that cannot run is reported, never skipped.
 */
function beforeAfter(): string[] {
  const PREV = process.env['BENCH_PREV_COMMIT'] ?? '9f1ee0f';
  const ROUNDS = Number(process.env['BENCH_PREV_ROUNDS'] ?? 3);
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
  try {
    const add = git('worktree', 'add', '--detach', tree, PREV);
    if (add.status !== 0) return fail(`git worktree add: ${add.stderr.trim()}`);
    const crates = git('diff', '--quiet', PREV, '--', 'crates/');
    if (crates.status !== 0) return fail(`crates/ differs between ${PREV} and this checkout, so this checkout's WASM bindings are not that commit's`);
    symlinkSync(join(root, 'node_modules'), join(tree, 'node_modules'));
    symlinkSync(join(root, 'bindings', 'node'), join(tree, 'bindings', 'node'));
    const tsx = join(root, 'node_modules', '.bin', 'tsx');
    const worker = join(root, 'bench', 'rps-inmemory.ts');
    const trees = { before: tree, after: root };
    const runs: Record<'before' | 'after', { frames: number; ms: number }[]> = { before: [], after: [] };
    for (let i = 0; i < ROUNDS; i++) {
      for (const which of i % 2 === 0 ? (['before', 'after'] as const) : (['after', 'before'] as const)) {
        const r = spawnSync(tsx, [worker, trees[which], '3'], { cwd: trees[which], encoding: 'utf8' });
        if (r.status !== 0) {
          if (which === 'before') return fail(`${r.stderr.trim().split('\n').slice(-6).join(' / ') || `exit ${r.status}`}`);
          throw new Error(`the current engine failed its bench run: ${r.stderr}`);
        }
        runs[which].push(...(JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { frames: number; ms: number }[]));
      }
    }
    const rate = (w: 'before' | 'after') => median(runs[w].map((r) => (r.frames * 1000) / r.ms));
    const frames = (w: 'before' | 'after') => [...new Set(runs[w].map((r) => r.frames))].join(', ');
    const ratio = rate('after') / rate('before');
    out.push(
      `Each tree ${ROUNDS} processes (alternating, each a warm-up session then 3 timed ones); median over the ${runs.after.length} timed sessions of each.`,
      '',
      ...table(['engine', 'commit', 'frames per session', 'median session time', 'median frames/s'], [
        ['before the split', PREV, frames('before'), `${median(runs.before.map((r) => r.ms)).toFixed(0)} ms`, fmt(rate('before'))],
        ['after the split', `${head}${dirty ? ' + uncommitted ts/ changes' : ''}`, frames('after'), `${median(runs.after.map((r) => r.ms)).toFixed(0)} ms`, fmt(rate('after'))],
      ], 'llrrr'),
      '',
      ...table(['floor', 'measured', 'required', ''], [['frames/s after ÷ before the split', `${ratio.toFixed(3)}×`, '≥ 0.90×', ratio >= 0.9 ? 'met' : 'MISSED']], 'lrrl'),
    );
    return out;
  } catch (e) {
    if (e instanceof Error && e.message.startsWith('the current engine')) throw e;
    return fail(e instanceof Error ? e.message : String(e));
  } finally {
    cleanup();
    process.off('SIGINT', onSignal);
  }
}
