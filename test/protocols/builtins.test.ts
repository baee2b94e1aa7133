// The built-in protocols: every spec validates, hashes to its reference id where it reuses the
// reference's spec, and its hooks play complete games whose every message passes the spec.
import { describe, expect, it } from 'vitest';
import { getCrypto } from '../../ts/crypto/index.js';
import type { HooksModule, Message } from '../../ts/hooks/types.js';
import { builtinDir, BUILTINS } from '../../ts/protocols/index.js';
import { loadSpec, validateOptions } from '../../ts/spec/index.js';
import { loadBuiltinSpec, play } from './play.js';

const REFERENCE_IDS: Record<string, string> = {
  'rps-v1': '43a806481a8e8cd00bc89f4676756c9be9081c0dd8392bee8e3534da41daa55f',
  'coin-flip-v1': '9e5df77c31b613dd16b015ed802d4d063d446c4e381382885683c89b7f5ee48f',
  'weak-wins-all': '83ae1cd79f397624990fd280667864667143cdf5c80e8a8923b364dbba710396',
  'guess-number-v1': '166570eff5c0864d31ccafb9d04ea5154184542085dfa401a9c3590f6831e8c8',
  'connect4-v1': '5cd50a30977f690c81073e861c9fec9323b3bf359e703c886ff9b0153c1cb209',
  'gomoku-v1': '6fdb1053bf4b3c2eb280d0f48215042ce2a330bef4d14113fdab3c4f997a0827',
  'reversi-v1': '5358130e14885f61ff210d2dd44c58a15ca4140bd89558f41f3eb867bc188e8f',
  'human-chat-v1': '59da01bc80d2ac385e0c9c642ad578ffa83b8fe273c4df21d80b2555437b8a31',
  'hero-duel-v1': 'df2d0709aa159798680cfcb7106d4d3b0a8eee002b5644044dc0ed0b8d06092a',
  'crazy-eights-v1': '3a3c352ac09a83a3c0877a5585fcd8c03fa4b85b873601f2fe3ba734474a64ae',
  'briscola-v1': 'f508d605c7dc9c8aeffd7bf1441e283ebe9ed83c768e36c05d02e056cdd51867',
  'tank-battle-v1': '24765cedb54ad04ad234c8d5a65f56825fedecb1f12cd296a175d658cb4c802d',
  'community-room-v1': '9a8a512873c4ad083b2692c06221b789002ce3fd813da2c8dd71501eb8b054ec',
  'meeting-room-v1': '182ceaf26c288909862ad2f753c1e03858daac7e2550a18d2a856adfac02b58d',
  'texas-holdem-v1': 'ba17afdceb178d206e7f3ba614b29751f36ec749f3039fa471995707f6fd66c7',
  'four-player-landlord-v1': 'bbc0d9890d6481c3cd269fbfb466a3b7830e9d102638a14f2b7ddbae9da70d36',
  'contract-bridge-v1': '5d69cf0e7ff90b2b60191fb43ab2448d0bf9153555b827199c1d77bc3ea78f3e',
  'upgrade-tractor-v1': 'acdf987218b5382bbf5f4c0008d6766e97ca6c1ae12f3cf2becd2afa9ad6f88e',
  'classical-mahjong-v1': 'b4b52ae592fb2fe9808c0bc4976eaee7ca1ce9fdb4638dc72bd88f18403def01',
  'aether-sigil-v1': 'cbdb124e0db9be540099dbb7f7229bd9075251b5d6838f1ea943083d631570c5',
};

const hooksOf = async (folder: string) => (await import(`../../ts/protocols/${folder}/hooks.ts`)).default as HooksModule;

describe('built-in protocols', () => {
  it.each(BUILTINS.map((b) => [b.alias, b]))('%s validates, and its profiles are valid options', (alias, b) => {
    const l = loadSpec(getCrypto(), builtinDir(b));
    expect(l.issues, alias).toEqual([]);
    if (REFERENCE_IDS[alias]) expect(l.protocolId).toBe(REFERENCE_IDS[alias]);
    for (const [name, p] of Object.entries(b.profiles)) expect(validateOptions(l.spec, p.options).issues, `${alias}/${name}`).toEqual([]);
  });

  // play.ts drives the message-exchange modes only. The mental_poker card games are played through the
  // engine's mental_poker mode in test/engine/builtins.test.ts and test/mp/; their rules are tested on
  // the hooks in mental-poker-rules.test.ts.
  // Tank Battle (authoritative_realtime) plays whole matches in tank-battle.test.ts; the
  // authoritative_group protocols play through the group leader in their own tests and every seat
  // through protocol test in test/engine/builtins.test.ts.
  const isGroup = (b: (typeof BUILTINS)[number]) => loadBuiltinSpec(b.folder).flow?.mode === 'authoritative_group';
  const isMentalPoker = (b: (typeof BUILTINS)[number]) => loadBuiltinSpec(b.folder).flow?.mode === 'mental_poker';
  const isRealtime = (b: (typeof BUILTINS)[number]) => loadBuiltinSpec(b.folder).flow?.mode === 'authoritative_realtime';
  const games = BUILTINS.filter((b) => b.folder !== 'human-chat' && !isMentalPoker(b) && !isRealtime(b) && !isGroup(b));
  it.each(games.flatMap((b) => Object.entries(b.profiles).map(([profile, p]) => [`${b.alias}/${profile}`, b, p.options] as const)))(
    '%s plays to completion for 20 seeds with every message valid',
    async (_name, b, options) => {
      const spec = loadBuiltinSpec(b.folder);
      const hooks = await hooksOf(b.folder);
      for (let seed = 1; seed <= 20; seed++) {
        const r = await play(spec, hooks, options, seed);
        expect(r.outcome, `seed ${seed}`).toBe('completed');
      }
    },
  );
});

describe('the test driver counts only real completions', () => {
  /** guess-number hooks with one of the guest's hooks replaced. */
  const withGuest = async (name: string, f: (...a: unknown[]) => unknown): Promise<HooksModule> => {
    const honest = await hooksOf('guess-number');
    return {
      mode: honest.mode,
      create: (ctx) => {
        const h = honest.create(ctx) as unknown as Record<string, unknown>;
        return (ctx.role === 'guest' ? { ...h, [name]: f } : h) as never;
      },
    };
  };
  const options = { range_min: 1, range_max: 100, max_attempts: 7 };

  it('a guest that sends nothing has stalled', async () => {
    const r = await play(loadBuiltinSpec('guess-number'), await withGuest('proto_guest_first_action', () => null), options);
    expect(r.outcome).toBe('stalled');
  });

  it('a guest that stops answering mid-game has stalled', async () => {
    const r = await play(loadBuiltinSpec('guess-number'), await withGuest('proto_guest_handle', () => null), options);
    expect(r.outcome).toBe('stalled');
    expect(r.frames.filter((f) => f.from === 'guest')).toHaveLength(2);
  });

  it('a qna guest that refuses the answer aborted', async () => {
    const honest = await hooksOf('qna');
    const picky: HooksModule = {
      mode: honest.mode,
      create: (ctx) => {
        const h = honest.create(ctx) as unknown as Record<string, unknown>;
        return (ctx.role === 'guest' ? { ...h, proto_guest_handle: () => ({ abort: true }) } : h) as never;
      },
    };
    expect((await play(loadBuiltinSpec('qna'), picky, { topic: 'commit_reveal' })).outcome).toBe('aborted');
  });
});

describe('rock-paper-scissors', () => {
  it('judges every pair by the spec win conditions', async () => {
    const { winnerOf } = await import('../../ts/protocols/rps/hooks.js');
    expect(winnerOf('rock', 'scissors')).toBe('host');
    expect(winnerOf('rock', 'paper')).toBe('guest');
    expect(winnerOf('paper', 'rock')).toBe('host');
    expect(winnerOf('scissors', 'paper')).toBe('host');
    expect(winnerOf('scissors', 'scissors')).toBe('draw');
  });

  it('ends first_to_win at rounds_to_win and fixed_rounds after best_of rounds', async () => {
    const spec = loadBuiltinSpec('rps');
    const hooks = await hooksOf('rps');
    for (let seed = 1; seed <= 10; seed++) {
      const first = await play(spec, hooks, { best_of: 5, termination: 'first_to_win' }, seed);
      const last = first.frames.filter((f) => f.msg.action === 'round_result').at(-1)!.msg as Message;
      expect(Math.max(last['host_wins'] as number, last['guest_wins'] as number)).toBe(3);
      const fixed = await play(spec, hooks, { best_of: 5, termination: 'fixed_rounds' }, seed);
      expect(fixed.frames.filter((f) => f.msg.action === 'round_result')).toHaveLength(5);
    }
  });
});

describe('coin flip', () => {
  it('gives the round to the guest exactly when the choices match (rules.win_conditions)', async () => {
    const { winnerOf } = await import('../../ts/protocols/coin-flip/hooks.js');
    expect(winnerOf('heads', 'heads')).toBe('guest');
    expect(winnerOf('heads', 'tails')).toBe('host');
  });
});

describe('guess number', () => {
  it('the bisecting guest always wins within log2 attempts, and hints match the revealed secret', async () => {
    const spec = loadBuiltinSpec('guess-number');
    const hooks = await hooksOf('guess-number');
    for (let seed = 1; seed <= 30; seed++) {
      const r = await play(spec, hooks, { range_min: 1, range_max: 100, max_attempts: 7 }, seed);
      const over = r.frames.at(-1)!.msg as Message;
      expect(over.action).toBe('game_over');
      expect(over['winner']).toBe('guest');
      expect(over['total_attempts']).toBeLessThanOrEqual(7);
    }
    const { hintsConsistent } = await import('../../ts/protocols/guess-number/hooks.js');
    expect(
      hintsConsistent(42, [
        { number: 50, result: 'lower' },
        { number: 25, result: 'higher' },
      ]),
    ).toBe(true);
    expect(hintsConsistent(42, [{ number: 50, result: 'higher' }])).toBe(false);
  });

  it('the host wins when attempts run out', async () => {
    const r = await play(loadBuiltinSpec('guess-number'), await hooksOf('guess-number'), { range_min: 1, range_max: 10000, max_attempts: 2 }, 3);
    expect((r.frames.at(-1)!.msg as Message)['winner']).toBe('host');
  });
});

describe('connect four', () => {
  it('finds wins in rows, columns and both diagonals, and full boards', async () => {
    const { Board } = await import('../../ts/protocols/connect-four/hooks.js');
    const b = new Board(7, 6);
    for (const c of [0, 1, 2]) b.drop(c, 'guest');
    expect(b.wins(3, b.drop(3, 'guest'))).toBe(true);
    const v = new Board(4, 4);
    for (let i = 0; i < 3; i++) v.drop(2, 'host');
    expect(v.wins(2, v.drop(2, 'host'))).toBe(true);
    const d = new Board(4, 4);
    d.drop(1, 'host');
    d.drop(2, 'host');
    d.drop(2, 'host');
    for (let i = 0; i < 3; i++) d.drop(3, 'host');
    d.drop(0, 'guest');
    d.drop(1, 'guest');
    d.drop(2, 'guest');
    expect(d.wins(3, d.drop(3, 'guest'))).toBe(true);
    const f = new Board(4, 4);
    for (let c = 0; c < 4; c++) for (let r = 0; r < 4; r++) f.drop(c, (c + Math.floor(r / 2)) % 2 ? 'host' : 'guest');
    expect(f.full()).toBe(true);
    expect(f.landing(0)).toBe(-1);
  });

  it('takes a winning move, else blocks', async () => {
    const { Board } = await import('../../ts/protocols/connect-four/hooks.js');
    const b = new Board(7, 6);
    for (const c of [0, 1, 2]) b.drop(c, 'guest');
    expect(b.choose('host', () => 0)).toBe(3); // block
    expect(b.choose('guest', () => 0)).toBe(3); // win
  });
});

describe('hero duel', () => {
  it('resolves skills only with mana and no cooldown, ticks cooldowns and regenerates mana', async () => {
    const { judgeRound, STANDARD_BALANCE: B } = await import('../../ts/protocols/hero-duel/hooks.js');
    const setup = { host: B['warrior']!, guest: B['mage']!, maxRounds: 30 };
    // The standard table (the reference's): warrior hp 250, atk 25, skill_b 70/35/cd 3; mage hp 150, atk 12, ult 180/80/cd 5.
    const r0 = judgeRound(setup, 0, 'skill_b', 'ult', null);
    expect(r0).toMatchObject({
      host_move: 'skill_b',
      guest_move: 'ult',
      host_damage_dealt: 70,
      guest_damage_dealt: 180,
      host_hp: 250 - 180,
      guest_hp: 150 - 70,
    });
    expect(r0).toMatchObject({
      host_mana: 80 - 35 + 15,
      guest_mana: 120 - 80 + 20,
      host_cd_b: 2,
      guest_cd_ult: 4,
      round_winner: 'guest',
      game_over: false,
      game_winner: 'none',
    });
    // skill_b is still cooling down: a normal attack instead, reported as the move in effect.
    const r1 = judgeRound(setup, 1, 'skill_b', 'ult', r0);
    expect(r1).toMatchObject({ host_move: 'normal', guest_move: 'normal', host_damage_dealt: 25, guest_damage_dealt: 12, host_cd_b: 1, guest_cd_ult: 3 });
    const r2 = judgeRound(setup, 2, 'normal', 'normal', r1);
    expect(r2).toMatchObject({ host_cd_b: 0, guest_hp: 150 - 70 - 25 - 25 });
  });

  it('ends at 0 HP (draw when both fall) and at max_rounds by HP', async () => {
    const { judgeRound, STANDARD_BALANCE: B } = await import('../../ts/protocols/hero-duel/hooks.js');
    const glass = { ...B['mage']!, hp: 10 };
    expect(judgeRound({ host: glass, guest: glass, maxRounds: 30 }, 0, 'normal', 'normal', null)).toMatchObject({
      host_hp: 0,
      guest_hp: 0,
      game_over: true,
      game_winner: 'draw',
    });
    expect(judgeRound({ host: B['tank']!, guest: B['mage']!, maxRounds: 1 }, 0, 'normal', 'normal', null)).toMatchObject({
      game_over: true,
      game_winner: 'host',
    });
  });

  it('the guest shadow judge agrees with the host on whole games', async () => {
    const spec = loadBuiltinSpec('hero-duel');
    expect(spec.shadow_judge).toBe(true);
    const { STANDARD_BALANCE } = await import('../../ts/protocols/hero-duel/hooks.js');
    for (let seed = 1; seed <= 10; seed++) {
      const r = await play(spec, await hooksOf('hero-duel'), { max_rounds: 30, balance: STANDARD_BALANCE }, seed);
      expect(r.outcome).toBe('completed');
    }
  });
});

describe('ask aigenora (qna)', () => {
  it('answers a known topic and reports an unknown one, whatever the question text says', async () => {
    const spec = loadBuiltinSpec('qna');
    const hooks = await hooksOf('qna');
    const r = await play(spec, hooks, { topic: 'commit_reveal' });
    expect(r.frames.at(-1)!.msg).toMatchObject({ action: 'answer', status: 'answered' });
    const u = await play(spec, hooks, { topic: 'weather' });
    expect(u.frames.at(-1)!.msg).toMatchObject({ action: 'answer', status: 'unknown_topic' });
  });
});

describe('human chat', () => {
  it('keeps the conversation and escapes terminal control characters in peer text', async () => {
    const { displaySafe } = await import('../../ts/protocols/human-chat/hooks.js');
    expect(displaySafe('hi\u001b[2Jthere\u202e')).toBe('hi\\u001b[2Jthere\\u202e');
    const hooks = await hooksOf('human-chat');
    const h = hooks.create({ role: 'host', options: {}, args: [], stateDir: '', decision: null, random: Math.random }) as unknown as Record<
      string,
      (...a: unknown[]) => unknown
    >;
    h['proto_on_message']!({ action: 'chat', text: 'hello', seq: 1 });
    h['proto_on_send']!({ action: 'chat', text: 'hi', seq: 1 });
    expect(h['proto_display']!({ action: 'chat', text: 'x\u0007', seq: 2 }, 'received')).toBe('peer #2: x\\u0007');
    expect((h['transcript']!() as { lines: unknown[] }).lines).toHaveLength(2);
  });
});
