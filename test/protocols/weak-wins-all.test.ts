// Weak Wins All: the judge and the autonomous bid on hand-built rounds, whole games with arbitrary bids
// (every message valid, points conserved), and, where the reference's Python hooks can be imported,
// the same judgements as the reference's on many generated games.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { needCommand, needShared, REFERENCE_SRC, sharedPath } from '../shared/require.js';
import type { HooksModule, Message, RoundState } from '../../ts/hooks/types.js';
import wwa, { autoBid, judgeRound, type RoundResult, type Settings } from '../../ts/protocols/weak-wins-all/hooks.js';
import { loadBuiltinSpec, play } from './play.js';

const s5: Settings = { total_points: 100, total_rounds: 5 };
const ready = (s: Settings): Message => ({ action: 'ready', ...s });
const after = (s: Settings, ...results: RoundResult[]): RoundState => ({ results, last_result: results.at(-1) ?? null, ready: ready(s) });

describe('weak wins all: judging', () => {
  it('the lower bid scores both bids; equal bids score each side its own', () => {
    expect(judgeRound(0, 10, 30, after(s5), s5)).toEqual({
      action: 'round_result',
      round: 0,
      host_bid: 10,
      guest_bid: 30,
      round_winner: 'host',
      host_score: 40,
      guest_score: 0,
      host_remaining: 90,
      guest_remaining: 70,
      game_over: false,
      game_winner: 'none',
    });
    expect(judgeRound(0, 25, 5, after(s5), s5)).toMatchObject({
      round_winner: 'guest',
      host_score: 0,
      guest_score: 30,
      host_remaining: 75,
      guest_remaining: 95,
    });
    expect(judgeRound(0, 20, 20, after(s5), s5)).toMatchObject({
      round_winner: 'draw',
      host_score: 20,
      guest_score: 20,
      host_remaining: 80,
      guest_remaining: 80,
    });
    expect(judgeRound(0, 0, 0, after(s5), s5)).toMatchObject({ round_winner: 'draw', host_score: 0, guest_score: 0, host_remaining: 100 });
  });

  it('carries scores and what is left from the previous round_result', () => {
    const r0 = judgeRound(0, 10, 30, after(s5), s5);
    const r1 = judgeRound(1, 50, 20, after(s5, r0), s5);
    expect(r1).toMatchObject({ round: 1, round_winner: 'guest', host_score: 40, guest_score: 70, host_remaining: 40, guest_remaining: 50 });
    const r2 = judgeRound(2, 7, 7, after(s5, r0, r1), s5);
    expect(r2).toMatchObject({ round_winner: 'draw', host_score: 47, guest_score: 77, host_remaining: 33, guest_remaining: 43 });
  });

  it('counts a bid above what is left as everything left', () => {
    const r0 = judgeRound(0, 90, 10, after(s5), s5);
    expect(judgeRound(1, 1000, 15, after(s5, r0), s5)).toMatchObject({ host_bid: 10, guest_bid: 15, round_winner: 'host', host_remaining: 0, host_score: 25 });
    const broke = judgeRound(1, 10, 15, after(s5, r0), s5);
    expect(judgeRound(2, 5, 1, after(s5, r0, broke), s5)).toMatchObject({ host_bid: 0, round_winner: 'host', host_remaining: 0 });
  });

  it('ends after total_rounds, the higher score winning, equal scores a draw', () => {
    const s2: Settings = { total_points: 10, total_rounds: 2 };
    const r0 = judgeRound(0, 3, 4, after(s2), s2);
    expect(r0).toMatchObject({ game_over: false, game_winner: 'none' });
    expect(judgeRound(1, 7, 6, after(s2, r0), s2)).toMatchObject({
      round_winner: 'guest',
      host_score: 7,
      guest_score: 13,
      game_over: true,
      game_winner: 'guest',
    });
    expect(judgeRound(1, 7, 0, after(s2, r0), s2)).toMatchObject({ host_score: 7, guest_score: 7, game_over: true, game_winner: 'draw' });
    const h0 = judgeRound(0, 1, 9, after(s2), s2);
    expect(judgeRound(1, 9, 1, after(s2, h0), s2)).toMatchObject({ host_score: 10, guest_score: 10, game_winner: 'draw' });
    expect(judgeRound(1, 9, 0, after(s2, h0), s2)).toMatchObject({ round_winner: 'guest', host_score: 10, guest_score: 9, game_winner: 'host' });
  });

  it('plays by the ready the host sent, not by local options', () => {
    const guest = wwa.create({ role: 'guest', options: { total_points: 500, total_rounds: 9 }, args: [], stateDir: '', decision: null, random: () => 0 });
    const s2: Settings = { total_points: 10, total_rounds: 2 };
    const r = guest.proto_round_judge_pure!(1, 4, 4, after(s2, judgeRound(0, 3, 3, after(s2), s2)));
    expect(r).toMatchObject({ host_remaining: 3, game_over: true, game_winner: 'draw' });
  });
});

describe('weak wins all: bids and settings', () => {
  it('bids an even split of what is left over the rounds left, at least 1, and everything on the last round', () => {
    expect([0, 1, 2, 3].map((r) => autoBid(r, 30, { total_points: 30, total_rounds: 4 }))).toEqual([7, 10, 15, 30]);
    expect(autoBid(0, 3, s5)).toBe(1);
    expect(autoBid(2, 0, s5)).toBe(0);
    expect(autoBid(4, 0, s5)).toBe(0);
  });

  it('the host plays by the settings the join proposes, else its own; the guest refuses a ready outside the parameters', async () => {
    const ctx = (role: 'host' | 'guest', options: Record<string, unknown>) => ({ role, options, args: [], stateDir: '', decision: null, random: () => 0 });
    const host = wwa.create(ctx('host', { total_points: 100 }));
    expect(await host.proto_host_handle_join!({ action: 'join', total_points: 40, total_rounds: 3 })).toEqual({
      action: 'ready',
      total_points: 40,
      total_rounds: 3,
    });
    expect(await host.proto_host_handle_join!({ action: 'join' })).toEqual({ action: 'ready', total_points: 100, total_rounds: 5 });
    const guest = wwa.create(ctx('guest', {}));
    expect(await guest.proto_guest_join_message!()).toEqual({ action: 'join', total_points: 25, total_rounds: 5 });
    expect(await guest.proto_guest_handle_ready!({ action: 'ready', total_points: 25, total_rounds: 5 })).toBeNull();
    for (const bad of [
      { total_points: 5000, total_rounds: 5 },
      { total_points: 25, total_rounds: 1 },
      { total_points: -1, total_rounds: 5 },
    ]) {
      expect(await guest.proto_guest_handle_ready!({ action: 'ready', ...bad }), JSON.stringify(bad)).toEqual({ abort: true });
    }
  });

  it('whole games with arbitrary bids: every message valid, every point spent scored, the winner by score', async () => {
    // Both sides bid at random between 0 and the spec's maximum (over-bids included); the engine only
    // validates the reveal, so the judge has to cope.
    const wild: HooksModule = {
      mode: 'simultaneous_round',
      create: (ctx) =>
        ({
          ...wwa.create(ctx),
          proto_round_value: () => Math.floor(ctx.random() * (ctx.random() < 0.5 ? 1001 : 40)),
        }) as never,
    };
    const spec = loadBuiltinSpec('weak-wins-all');
    for (let seed = 1; seed <= 40; seed++) {
      const options = { total_points: 10 + ((seed * 37) % 200), total_rounds: 2 + (seed % 7) };
      const r = await play(spec, wild, options, seed);
      expect(r.outcome, `seed ${seed}`).toBe('completed');
      const results = r.frames.filter((f) => f.msg.action === 'round_result').map((f) => f.msg as RoundResult);
      expect(results).toHaveLength(options.total_rounds);
      for (const res of results) {
        expect(res.host_remaining).toBeGreaterThanOrEqual(0);
        expect(res.host_score + res.guest_score).toBe(2 * options.total_points - res.host_remaining - res.guest_remaining);
      }
      const last = results.at(-1)!;
      expect(last.game_winner).toBe(last.host_score > last.guest_score ? 'host' : last.guest_score > last.host_score ? 'guest' : 'draw');
    }
  });
});

const REF_SRC = REFERENCE_SRC;
const REF_HOOKS_REL = 'reference/aigenora-src/src/aigenora/protocols/83ae1cd7/9f397624990fd280667864667143cdf5c80e8a8923b364dbba710396/hooks.py';
const REF_HOOKS = sharedPath(REF_HOOKS_REL);
// Generates games with random settings and bids (auto bids, over-bids, ties), judged by the
// reference's host hooks, with each side's reference autonomous bid before every round.
const REF_SCRIPT = `
import importlib.util, json, random, sys, tempfile
from pathlib import Path
spec = importlib.util.spec_from_file_location('wwa_ref', sys.argv[1])
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
rng = random.Random(12)
games = []
with tempfile.TemporaryDirectory() as tmp:
    for g in range(120):
        s = {'total_points': rng.randint(10, 1000), 'total_rounds': rng.randint(2, 12)}
        host, guest = m.Hooks(), m.Hooks()
        host.proto_init(s, 'host', [], Path(tmp) / f'h{g}', None)
        guest.proto_init(s, 'guest', [], Path(tmp) / f'g{g}', None)
        rounds = []
        for r in range(s['total_rounds']):
            auto = {'host': host.proto_round_value(r, {}), 'guest': guest.proto_round_value(r, {})}
            pick = lambda side: rng.choice([auto[side], rng.randint(0, 1000), rng.randint(0, max(0, auto[side] * 2))])
            hv, gv = pick('host'), pick('guest')
            if rng.random() < 0.15: gv = hv
            res = host.proto_round_judge(r, hv, gv, {})
            guest.proto_guest_handle(res.response)
            rounds.append({'auto': auto, 'host': hv, 'guest': gv, 'result': res.response, 'completed': res.completed})
        games.append({'settings': s, 'rounds': rounds})
print(json.dumps(games))
`;
const reference =
  needShared(REF_HOOKS_REL, "the reference's Weak Wins All hooks") &&
  needCommand('python3', "the cross-check against the reference's Weak Wins All hooks", 'install python3 (>= 3.10)');

describe('weak wins all: the reference agrees', () => {
  it.skipIf(!reference)('judges and bids as the reference hooks on 120 generated games', () => {
    const out = spawnSync('python3', ['-c', REF_SCRIPT, REF_HOOKS], { encoding: 'utf8', env: { ...process.env, PYTHONPATH: REF_SRC }, maxBuffer: 64 << 20 });
    expect(out.status, out.stderr).toBe(0);
    type Game = {
      settings: Settings;
      rounds: { auto: { host: number; guest: number }; host: number; guest: number; result: RoundResult; completed: boolean }[];
    };
    const games = JSON.parse(out.stdout) as Game[];
    expect(games).toHaveLength(120);
    let rounds = 0;
    for (const [i, g] of games.entries()) {
      const h = wwa.create({ role: 'host', options: {}, args: [], stateDir: '', decision: null, random: () => 0 });
      const gu = wwa.create({ role: 'guest', options: {}, args: [], stateDir: '', decision: null, random: () => 0 });
      const state: RoundState & { results: Message[] } = { results: [], last_result: null, ready: ready(g.settings) };
      for (const [r, ref] of g.rounds.entries()) {
        expect([h.proto_round_value(r, state), gu.proto_round_value(r, state)], `game ${i} round ${r} auto bids`).toEqual([ref.auto.host, ref.auto.guest]);
        expect(h.proto_round_judge(r, ref.host, ref.guest, state), `game ${i} round ${r}`).toEqual({ response: ref.result, completed: ref.completed });
        state.results.push(ref.result);
        state.last_result = ref.result;
        rounds++;
      }
    }
    expect(rounds).toBeGreaterThan(400);
  });
});
