// Run by engine.bench.ts, once per source tree: `tsx bench/rps-inmemory.ts <tree root> <sessions>`
// plays RPS (99 fixed rounds, autonomous, in-memory transport, wasm backend) with the engine of the
// tree it is given (this checkout, or a worktree of an older commit), one warm-up session and then
// <sessions> timed ones, and prints one JSON line: [{ frames, ms }, …]. Only APIs that both the
// engine before and after its split export are used.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [root, count] = [process.argv[2], Number(process.argv[3] ?? 3)];
if (!root) throw new Error('usage: rps-inmemory.ts <tree root> [sessions]');
const from = (path: string) => import(pathToFileURL(join(root, path)).href);
const { getCrypto } = await from('ts/crypto/index.ts');
const { runLocal } = await from('ts/engine/local.ts');
const { builtinDir, BUILTINS } = await from('ts/protocols/index.ts');
const { loadSpec } = await from('ts/spec/index.ts');
const hooks = (await from('ts/protocols/rps/hooks.ts')).default;

const c = getCrypto('wasm');
const l = loadSpec(c, builtinDir(BUILTINS.find((b: { alias: string }) => b.alias === 'rps-v1')));
const runs: { frames: number; ms: number }[] = [];
for (let i = 0; i <= count; i++) {
  const out = mkdtempSync(join(tmpdir(), 'aigenora-bench-'));
  let frames = 0;
  const t0 = performance.now();
  const r = await runLocal({ crypto: c, spec: l.spec, specText: l.text, protocolId: l.protocolId, hooks, options: { best_of: 99, termination: 'fixed_rounds' }, seed: i + 1, outDir: out, onMessage: () => frames++ });
  const ms = performance.now() - t0;
  rmSync(out, { recursive: true, force: true });
  if (!r.host.completed || !r.guest.completed) throw new Error(`bench session failed in ${root}: ${r.host.reason} / ${r.guest.reason}`);
  if (i > 0) runs.push({ frames, ms });
}
process.stdout.write(`${JSON.stringify(runs)}\n`);
