// Run by engine.bench.ts, one process per source tree: `tsx bench/rps-inmemory.ts <tree root>` loads
// the engine of the tree it is given (this checkout, or a worktree of an older commit) and, for each
// line read on stdin, plays one RPS session (99 fixed rounds, autonomous, in-memory transport, wasm
// backend) and prints one JSON line { frames, ms, cpuMs } (wall and CPU time of the session). The caller alternates sessions between two such
// processes so that both engines meet the same load. Only APIs that the engine both before and after
// its split exports are used.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';

const root = process.argv[2];
if (!root) throw new Error('usage: rps-inmemory.ts <tree root>');
const from = (path: string) => import(pathToFileURL(join(root, path)).href);
const { getCrypto } = await from('ts/crypto/index.ts');
const { runLocal } = await from('ts/engine/local.ts');
const { builtinDir, BUILTINS } = await from('ts/protocols/index.ts');
const { loadSpec } = await from('ts/spec/index.ts');
const hooks = (await from('ts/protocols/rps/hooks.ts')).default;

const c = getCrypto('wasm');
const l = loadSpec(c, builtinDir(BUILTINS.find((b: { alias: string }) => b.alias === 'rps-v1')));
let seed = 0;
for await (const _ of createInterface({ input: process.stdin })) {
  const out = mkdtempSync(join(tmpdir(), 'aigenora-bench-'));
  let frames = 0;
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const r = await runLocal({ crypto: c, spec: l.spec, specText: l.text, protocolId: l.protocolId, hooks, options: { best_of: 99, termination: 'fixed_rounds' }, seed: ++seed, outDir: out, onMessage: () => frames++ });
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  rmSync(out, { recursive: true, force: true });
  if (!r.host.completed || !r.guest.completed) throw new Error(`bench session failed in ${root}: ${r.host.reason} / ${r.guest.reason}`);
  process.stdout.write(`${JSON.stringify({ frames, ms, cpuMs: (cpu.user + cpu.system) / 1000 })}\n`);
}
