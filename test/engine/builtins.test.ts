// Every built-in protocol runs end to end through the engine (signed frames, transcripts, receipts)
// for several seeds, and `aigenora protocol test` passes for each from the CLI.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runLocal } from '../../ts/engine/local.js';
import { verifyTranscriptAt } from '../../ts/engine/verify.js';
import { BUILTINS, builtinDir } from '../../ts/protocols/index.js';
import { tempDir } from '../shared/tmp.js';
import { appendDecision } from '../../ts/engine/decision.js';
import { bendingHeroDuelHost, builtin, c, hooksOf, ManualClock, until } from './harness.js';
import { toHex } from '../../ts/crypto/encoding.js';
import { dealBytes, dealSecrets, memoCrypto } from '../mp/deal.js';

import { BIN, cli } from '../shared/cli.js';

const modeOf = (b: (typeof BUILTINS)[number]) => JSON.parse(readFileSync(`${builtinDir(b)}/spec.json`, 'utf8')).flow?.mode as string;
// authoritative_group protocols run every seat in one process instead of a host and a guest (below).
const runnable = BUILTINS.filter((b) => modeOf(b) !== 'authoritative_group');
const groups = BUILTINS.filter((b) => modeOf(b) === 'authoritative_group');

describe('group built-ins through protocol test', () => {
  it("all eight of the reference's group protocols are built in", () => {
    expect(groups.map((b) => b.alias).sort()).toEqual([
      'aether-sigil-v1',
      'classical-mahjong-v1',
      'community-room-v1',
      'contract-bridge-v1',
      'four-player-landlord-v1',
      'meeting-room-v1',
      'texas-holdem-v1',
      'upgrade-tractor-v1',
    ]);
  });

  it.each(groups.map((b) => [b.alias, b]))(
    "aigenora protocol test %s: every seat plays, the group completes, each seat's directory verifies",
    async (_alias, b) => {
      // The quickest profile: the game tests play the long ones.
      const profile = b.profiles['quick'] ?? b.profiles[b.default_profile]!;
      const out = tempDir('cli-group');
      const r = await cli(['protocol', 'test', builtinDir(b), '--seed', '2', '--json', '--options', JSON.stringify(profile.options), '--out', out]);
      expect(r.status, r.stdout + r.stderr).toBe(0);
      const j = JSON.parse(r.stdout) as {
        ok: boolean;
        completed: boolean;
        refusals: number;
        members: { dir: string; completed: boolean; verify: { ok: boolean; receipt: boolean } }[];
      };
      expect([j.ok, j.completed, j.refusals]).toEqual([true, true, 0]);
      const spec = JSON.parse(readFileSync(`${builtinDir(b)}/spec.json`, 'utf8')) as { flow: { group: { min_participants: number } } };
      expect(j.members).toHaveLength(spec.flow.group.min_participants);
      for (const m of j.members) expect([m.completed, m.verify.ok, m.verify.receipt]).toEqual([true, true, true]);
      const v = await cli(['receipt', 'verify', j.members.at(-1)!.dir]);
      expect(v.status, v.stdout).toBe(0);
    },
    120_000,
  );
});

/** The two-party built-ins that always end with a winner or a draw. */
const GAMES = [
  'rps',
  'coin-flip',
  'guess-number',
  'weak-wins-all',
  'gomoku',
  'connect-four',
  'reversi',
  'hero-duel',
  'crazy-eights',
  'briscola',
  'tank-battle',
];

/** The outcome a side's own files record, read the way a person auditing them would. */
function recordedOutcome(dir: string, mode: string): string | undefined {
  const events = readFileSync(`${dir}/events.jsonl`, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { type?: string; event?: string; data?: Record<string, unknown> });
  const named = (n: string) => events.filter((e) => (e.type ?? e.event) === n).at(-1)?.data;
  const known = (v: unknown) => (['host', 'guest', 'draw'].includes(v as string) ? (v as string) : undefined);
  if (mode === 'mental_poker') return known(named('game_over')?.['outcome']);
  if (mode === 'authoritative_realtime') return known(named('realtime_ended')?.['outcome']);
  const msgs = readFileSync(`${dir}/transcript.jsonl`, 'utf8')
    .trim()
    .split('\n')
    .slice(1)
    .map((l) => (JSON.parse(l) as { msg: Record<string, unknown> }).msg);
  const last = msgs.filter((m) => !String(m['action']).startsWith('_') && (known(m['winner']) ?? known(m['game_winner']))).at(-1);
  return last && (known(last['winner']) ?? known(last['game_winner']));
}

describe('built-ins through the engine', () => {
  it.each(runnable.map((b) => [b.alias, b.folder, modeOf(b)]))('%s completes for 5 seeds with verified receipts', async (_alias, folder, mode) => {
    const b = builtin(folder);
    const hooks = await hooksOf(folder);
    // mental_poker: the pinned deal of test/mp/deal.ts (fixture RSA keys, fixed card keys and nonces, one
    // session id) with the Guest's shuffle drawn from the seed, so each seed deals other hands and plays
    // another game, while the sealed tables, the costly RSA part, are computed once (memoCrypto). Fresh
    // keys and a random deal through the engine: `aigenora protocol test` below.
    const mp = mode === 'mental_poker';
    const crypto = mp ? memoCrypto(c) : c;
    for (let seed = 1; seed <= 5; seed++) {
      const pinned = mp && {
        keySeeds: { host: new Uint8Array(32).fill(7), guest: new Uint8Array(32).fill(9) },
        nonce: toHex(dealBytes('builtin session nonce', 16)),
        mpSecrets: { host: dealSecrets(crypto.ot, 'host', { shuffle: seed }), guest: dealSecrets(crypto.ot, 'guest', { shuffle: seed }) },
      };
      const r = await runLocal({ crypto, ...b, hooks, seed, outDir: tempDir('builtin'), chat: { host: ['hi'], guest: ['hello', 'bye'] }, ...pinned });
      expect([r.host.reason, r.guest.reason], `seed ${seed}: ${r.host.detail ?? ''} ${r.guest.detail ?? ''}`).toEqual(
        folder === 'qna' ? ['request_response_complete', 'request_response_complete'] : ['completed', 'completed'],
      );
      for (const side of [r.host, r.guest]) expect(verifyTranscriptAt(crypto, side.dir)).toMatchObject({ ok: true, receipt: true });
      // One outcome, the same on both sides, and what the session's own record says: the mental-poker
      // audit's game_over event, the realtime end event, or the last protocol message naming a winner.
      expect(r.host.outcome, `seed ${seed}`).toBe(r.guest.outcome);
      if (GAMES.includes(folder)) expect(['host', 'guest', 'draw'], `seed ${seed}`).toContain(r.host.outcome);
      for (const side of [r.host, r.guest]) expect(side.outcome).toBe(recordedOutcome(side.dir, mode));
    }
  });

  it.each(runnable.map((b) => [b.alias, b]))('aigenora protocol test %s exits 0', async (_alias, b) => {
    const r = await cli(['protocol', 'test', builtinDir(b), '--seed', '3', '--json', '--out', tempDir('cli-test')]);
    expect(r.status, r.stdout + r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: true });
  });

  it('receipt verify works from the CLI: 0 for a verified copy, 1 for a wrong spec or a bad receipt.json, 2 for no path', async () => {
    const out = tempDir('cli-receipt');
    const t = spawnSync(process.execPath, [BIN, 'protocol', 'test', builtinDir(BUILTINS[0]!), '--quiet', '--out', out], { encoding: 'utf8' });
    expect(t.status).toBe(0);
    const v = await cli(['receipt', 'verify', `${out}/guest`]);
    expect([v.status, v.stdout]).toEqual([0, expect.stringMatching(/^verified: \d+ frames/)]);
    const bad = spawnSync(process.execPath, [BIN, 'receipt', 'verify', `${out}/guest`, '--spec', `${builtinDir(BUILTINS[1]!)}/spec.json`], {
      encoding: 'utf8',
    });
    expect(bad.status).toBe(1);
    writeFileSync(`${out}/guest/receipt.json`, 'garbage');
    const garbage = await cli(['receipt', 'verify', `${out}/guest`]);
    expect([garbage.status, garbage.stdout]).toEqual([1, expect.stringMatching(/^not verified: receipt\.json/)]);
    expect((await cli(['receipt', 'verify', `${out}/nope`])).status).toBe(2);
  });

  it("proof verify works from the CLI, and refuses another protocol's rules", async () => {
    // A host that bends hero-duel numbers: the guest's shadow judge writes a balance_mismatch proof.
    const honest = await hooksOf('hero-duel');
    const cheat = await bendingHeroDuelHost(0, (res) => ({ ...res, guest_hp: 1 }));
    const r = await runLocal({
      crypto: c,
      ...builtin('hero-duel'),
      hooks: honest,
      hostHooks: cheat,
      options: { max_rounds: 30 },
      outDir: tempDir('cli-proof'),
    });
    expect(r.guest.reason).toBe('balance_mismatch');
    const proof = r.guest.proof!;
    const run = (...a: string[]) => cli(['proof', 'verify', proof, ...a]);
    const dir = (folder: string) => new URL(`../../ts/protocols/${folder}`, import.meta.url).pathname;
    const without = await run();
    expect([without.status, without.stdout]).toEqual([1, expect.stringMatching(/^not proven \(balance_mismatch, offender host\): .*--protocol-dir/)]);
    const proven = await run('--protocol-dir', dir('hero-duel'));
    expect([proven.status, proven.stdout]).toEqual([0, expect.stringMatching(/^proven \(balance_mismatch, offender host\)/)]);
    // rps has a pure judge too, and would "prove" something: its dir is refused before its hooks load.
    const rps = await run('--protocol-dir', dir('rps'));
    expect(rps.status).toBe(2);
    expect(rps.stdout).toBe('');
    expect(rps.stderr).toMatch(/holds protocol [0-9a-f]{64}; the proof is about [0-9a-f]{64}/);
    expect(rps.stderr).not.toMatch(/\n\s+at /);
    // Tampered and garbage proofs: not proven (1), one line, never a stack trace.
    const p = JSON.parse(readFileSync(proof, 'utf8')) as { frames: string[] };
    const edits = [
      'garbage',
      '',
      'null',
      '[]',
      '{}',
      JSON.stringify({ ...p, frames: [] }),
      JSON.stringify({ ...p, frames: [null] }),
      JSON.stringify({ ...p, frames: p.frames.map((f) => f.replace('"guest_hp":1', '"guest_hp":2')) }),
      JSON.stringify({ ...p, offender: 'guest' }),
    ];
    for (const edit of edits) {
      writeFileSync(proof, edit);
      const e = await run('--protocol-dir', dir('hero-duel'));
      expect([e.status, e.stderr], edit.slice(0, 60)).toEqual([edit.startsWith('{"v"') ? 1 : expect.any(Number), expect.not.stringMatching(/\n\s+at /)]);
      if (edit.startsWith('{"v"')) expect(e.stdout).toMatch(/^not proven/);
      expect(e.status).not.toBe(0);
    }
  });
});

describe('observability while a session runs', () => {
  it('session events --follow streams events until session_ended, including those written after it started', async () => {
    const { spawn } = await import('node:child_process');
    const out = tempDir('follow');
    const guestDir = `${out}/guest`;
    // The guest decides as a human on a virtual clock: the session waits at its first window until the
    // test answers, which it does only once the follower has printed what was there when it started.
    const run = runLocal({
      crypto: c,
      ...builtin('rps'),
      hooks: await hooksOf('rps'),
      options: { best_of: 1 },
      outDir: out,
      guestControl: 'human',
      decisionTimeoutMs: 1000,
      minThinkMs: 0,
      clock: new ManualClock(),
    });
    await until(
      () => existsSync(`${guestDir}/decision/state.json`) && readFileSync(`${guestDir}/decision/state.json`, 'utf8').includes('window_id'),
      "the guest's decision window",
    );
    const child = spawn(process.execPath, [BIN, 'session', 'events', `${out}/host`, '--follow', '--json'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    child.stdout.on('data', (d: Buffer) => (text += d.toString()));
    const closed = new Promise<number | null>((res) => child.on('close', res));
    await until(() => text.includes('session_started'), "the follower's first lines");
    const before = text.trim().split('\n').length;
    appendDecision(guestDir, { match_key: 'round', match_value: 0, value: 'rock' });
    const [r, code] = await Promise.all([run, closed]);
    expect(r.host.completed).toBe(true);
    expect(code).toBe(0);
    const types = text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).type);
    expect(types[0]).toBe('session_started');
    expect(types.at(-1)).toBe('session_ended');
    expect(types.length).toBeGreaterThan(before);
    const snap = await cli(['session', 'snapshot', `${out}/guest`, '--json']);
    expect(JSON.parse(snap.stdout)).toMatchObject({ phase: 'ended', completed: true });
  });
});
