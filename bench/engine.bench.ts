// The session engine end to end over the in-memory transport, side by side for both backends: sign,
// frame, strict parse, envelope and chain checks, spec validation, hooks, transcript append. An RPS
// game of 99 fixed rounds (about 500 frames) per backend; frames/s counts every frame either side
// sent. Floor (issue 4): >= 5,000 frames/s with the wasm backend. Writes bench/results/engine.md.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getCrypto } from '../ts/crypto/index.js';
import { runLocal } from '../ts/engine/local.js';
import type { HooksModule } from '../ts/hooks/types.js';
import { builtinDir, BUILTINS } from '../ts/protocols/index.js';
import { loadSpec } from '../ts/spec/index.js';
import { fmt } from './measure.js';

const rps = BUILTINS.find((b) => b.alias === 'rps-v1')!;
const hooks = (await import('../ts/protocols/rps/hooks.js')).default as HooksModule;
const lines = ['# Session engine', '', `${new Date().toISOString()} · Node ${process.version} · RPS, 99 fixed rounds, in-memory transport, transcripts fsync'ed per frame`, '', '| backend | frames | session time | frames/s | floor | |', '|---|---:|---:|---:|---:|---|'];
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
  lines.push(`| ${name} | ${best.frames} | ${best.ms.toFixed(0)} ms | ${fmt(rate)} | ${name === 'wasm' ? '≥ 5.0k' : '–'} | ${name === 'wasm' ? (rate >= 5000 ? 'met' : 'MISSED') : ''} |`);
}
const report = `${lines.join('\n')}\n`;
process.stdout.write(report);
writeFileSync(new URL('results/engine.md', import.meta.url), report);
