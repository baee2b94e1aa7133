// Every built-in protocol runs end to end through the engine (signed frames, transcripts, receipts)
// for several seeds, and `aigenora protocol test` passes for each from the CLI.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { runLocal } from '../../ts/engine/local.js';
import { verifyTranscriptAt } from '../../ts/engine/verify.js';
import { BUILTINS, builtinDir } from '../../ts/protocols/index.js';
import { tempDir } from '../shared/tmp.js';
import { builtin, c, hooksOf } from './harness.js';

const BIN = new URL('../../bin/aigenora.mjs', import.meta.url).pathname;

describe('built-ins through the engine', () => {
  it.each(BUILTINS.map((b) => [b.alias, b.folder]))('%s completes for 5 seeds with verified receipts', async (_alias, folder) => {
    const b = builtin(folder);
    const hooks = await hooksOf(folder);
    for (let seed = 1; seed <= 5; seed++) {
      const r = await runLocal({ crypto: c, ...b, hooks, seed, outDir: tempDir('builtin'), chat: { host: ['hi'], guest: ['hello', 'bye'] } });
      expect([r.host.reason, r.guest.reason], `seed ${seed}: ${r.host.detail ?? ''} ${r.guest.detail ?? ''}`).toEqual(
        folder === 'qna' ? ['request_response_complete', 'request_response_complete'] : ['completed', 'completed'],
      );
      for (const side of [r.host, r.guest]) expect(verifyTranscriptAt(c, side.dir)).toMatchObject({ ok: true, receipt: true });
    }
  });

  it.each(BUILTINS.map((b) => [b.alias, b]))('aigenora protocol test %s exits 0', (_alias, b) => {
    const r = spawnSync(process.execPath, [BIN, 'protocol', 'test', builtinDir(b), '--seed', '3', '--json', '--out', tempDir('cli-test')], { encoding: 'utf8' });
    expect(r.status, r.stdout + r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: true });
  });

  it('receipt verify and proof verify work from the CLI', () => {
    const out = tempDir('cli-receipt');
    const t = spawnSync(process.execPath, [BIN, 'protocol', 'test', builtinDir(BUILTINS[0]!), '--quiet', '--out', out], { encoding: 'utf8' });
    expect(t.status).toBe(0);
    const v = spawnSync(process.execPath, [BIN, 'receipt', 'verify', `${out}/guest`], { encoding: 'utf8' });
    expect([v.status, v.stdout]).toEqual([0, expect.stringMatching(/^verified: \d+ frames/)]);
    const bad = spawnSync(process.execPath, [BIN, 'receipt', 'verify', `${out}/guest`, '--spec', `${builtinDir(BUILTINS[1]!)}/spec.json`], { encoding: 'utf8' });
    expect(bad.status).toBe(1);
    expect(spawnSync(process.execPath, [BIN, 'receipt', 'verify', `${out}/nope`], { encoding: 'utf8' }).status).toBe(2);
  });
});

describe('observability while a session runs', () => {
  it('session events --follow streams events until session_ended (over a transport that delays every frame)', async () => {
    const { spawn } = await import('node:child_process');
    const out = tempDir('follow');
    const b = builtin('guess-number');
    const run = runLocal({ crypto: c, ...b, hooks: await hooksOf('guess-number'), outDir: out, faults: { delayMs: 25 } });
    await new Promise((r) => setTimeout(r, 50));
    const child = spawn(process.execPath, [BIN, 'session', 'events', `${out}/host`, '--follow', '--json'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    child.stdout.on('data', (d: Buffer) => (text += d.toString()));
    const [r, code] = await Promise.all([run, new Promise<number | null>((res) => child.on('close', res))]);
    expect(r.host.completed).toBe(true);
    expect(code).toBe(0);
    const types = text.trim().split('\n').map((l) => JSON.parse(l).type);
    expect(types[0]).toBe('session_started');
    expect(types.at(-1)).toBe('session_ended');
    const snap = spawnSync(process.execPath, [BIN, 'session', 'snapshot', `${out}/guest`, '--json'], { encoding: 'utf8' });
    expect(JSON.parse(snap.stdout)).toMatchObject({ phase: 'ended', completed: true });
  });
});
