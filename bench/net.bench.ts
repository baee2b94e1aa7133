// Network sessions between two processes on loopback (issue 5): the host is `aigenora host` in a child
// process, the guest runs here so that it can time each round. RPS, 99 fixed rounds: total time,
// median round latency (between consecutive round_results), frames/s over the one connection, and
// the time to establish a session (dial + Noise + handshake, until the guest's join is sent).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getCrypto } from '../ts/crypto/index.js';
import type { HooksModule } from '../ts/hooks/types.js';
import { loadIdentity } from '../ts/library/identity.js';
import { parseInvitation } from '../ts/net/invitation.js';
import { join as joinSession } from '../ts/net/session.js';
import { builtinDir, BUILTINS } from '../ts/protocols/index.js';
import { loadSpec } from '../ts/spec/index.js';

const BIN = new URL('../bin/aigenora.mjs', import.meta.url).pathname;
const work = mkdtempSync(join(tmpdir(), 'aigenora-netbench-'));
const c = getCrypto();
for (const who of ['alice', 'bob']) spawnSync(process.execPath, [BIN, 'init', '--data-dir', join(work, who)], { stdio: 'ignore' });
const l = loadSpec(c, builtinDir(BUILTINS.find((b) => b.alias === 'rps-v1')!));
const hooks = (await import('../ts/protocols/rps/hooks.js')).default as HooksModule;
const protocol = { spec: l.spec, specText: l.text, protocolId: l.protocolId!, hooks };

const runs: { total: number; setup: number; median: number; frames: number }[] = [];
for (let i = 0; i < 3; i++) {
  const invFile = join(work, `inv${i}.txt`);
  const child = spawn(process.execPath, [BIN, 'host', '--protocol', 'rps-v1', '--options', '{"best_of":99,"termination":"fixed_rounds"}', '--data-dir', join(work, 'alice'), '--invitation-file', invFile, '--json'], { stdio: 'ignore' });
  for (let k = 0; k < 200 && !existsSync(invFile); k++) await new Promise((r) => setTimeout(r, 50));
  const inv = parseInvitation(c, readFileSync(invFile, 'utf8'));
  const results: number[] = [];
  let frames = 0;
  let joined = 0;
  const t0 = performance.now();
  const r = await joinSession({
    crypto: c, seed: loadIdentity(c, join(work, 'bob')).seed, protocol, options: {}, sessionsDir: join(work, 'bob', 'sessions'), invitation: inv,
    onMessage: (_from, msg) => {
      frames++;
      if (msg.action === 'join') joined = performance.now();
      if (msg.action === 'round_result') results.push(performance.now());
    },
  });
  const total = performance.now() - t0;
  await new Promise((res) => child.on('exit', res));
  if (!r.completed) throw new Error(`bench session failed: ${r.reason}`);
  const gaps = results.slice(1).map((t, k) => t - results[k]!).sort((a, b) => a - b);
  runs.push({ total, setup: joined - t0, median: gaps[Math.floor(gaps.length / 2)]!, frames });
}
rmSync(work, { recursive: true, force: true });
runs.sort((a, b) => a.total - b.total);
const m = runs[1]!;
const lines = [
  '# Network sessions (libp2p, loopback, two processes)',
  '',
  `${new Date().toISOString()} · Node ${process.version} · RPS 99 fixed rounds, wasm backend, TCP + Noise + Yamux · median of 3 sessions`,
  '',
  '| measure | value |',
  '|---|---:|',
  `| session end to end (dial → receipts) | ${m.total.toFixed(0)} ms |`,
  `| time to establish (dial + Noise + A7 handshake) | ${m.setup.toFixed(1)} ms |`,
  `| median round latency (commit → commit → reveal → reveal → result) | ${m.median.toFixed(2)} ms |`,
  `| frames over the connection | ${m.frames} |`,
  `| frames/s over one connection | ${((m.frames * 1000) / (m.total - m.setup)).toFixed(0)} |`,
];
const report = `${lines.join('\n')}\n`;
process.stdout.write(report);
writeFileSync(new URL('results/net.md', import.meta.url), report);
