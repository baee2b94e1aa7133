// Hero Duel against the reference: our default balance is the reference's (read from its files when this
// test runs, never copied here), our judge gives the reference's own round_results for whole games, and a
// balance travels the way the reference sends it. The reference has no balance field in join or ready and
// no hash of it anywhere: the numbers go as the invitation's options.balance (the guest plays the
// invitation's options), and the only comparison is the guest's shadow judge, round by round. So a guest
// that plays the invitation's options agrees with a host of any balance, and one that plays other numbers
// ends the session as balance_mismatch.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runLocal, seeded } from '../../ts/engine/local.js';
import { verifyTranscriptAt } from '../../ts/engine/verify.js';
import type { Message } from '../../ts/hooks/types.js';
import heroDuel, { judgeRound, STANDARD_BALANCE, type Hero, type Move } from '../../ts/protocols/hero-duel/hooks.js';
import { BUILTINS } from '../../ts/protocols/index.js';
import { needReferencePython, needShared, sharedPath } from '../shared/require.js';
import { tempDir } from '../shared/tmp.js';
import { builtin, c } from '../engine/harness.js';
import { startReference, type ReferenceBatch } from './reference-batch.js';

const PROTOCOLS = 'reference/aigenora-src/src/aigenora/protocols';
const HOOKS = `${PROTOCOLS}/df2d0709/aa159798680cfcb7106d4d3b0a8eee002b5644044dc0ed0b8d06092a/hooks.py`;
const haveIndex = needShared(`${PROTOCOLS}/index.json`, "the reference's protocol index (hero-duel-v1's standard profile)");
const havePython =
  needShared(HOOKS, "the reference's hero-duel hooks (its DEFAULT_BALANCE and judge)") &&
  needReferencePython(['aigenora.proto.hooks'], "the reference's hero-duel hooks");

const MOVES: Move[] = ['normal', 'skill_a', 'skill_b', 'ult'];
const HEROES = Object.keys(STANDARD_BALANCE).sort();

/** A game of random moves (skills that cannot be cast included) judged by ours, round after round. */
function game(options: { host_hero: string; guest_hero: string; max_rounds: number; balance?: Record<string, Hero> }, seed: number) {
  const heroes = options.balance ?? STANDARD_BALANCE;
  const setup = { host: heroes[options.host_hero]!, guest: heroes[options.guest_hero]!, maxRounds: options.max_rounds };
  const random = seeded(seed);
  const moves: [Move, Move][] = [];
  const results: Message[] = [];
  for (let r = 0; results.at(-1)?.['game_over'] !== true; r++) {
    const m: [Move, Move] = [MOVES[Math.floor(random() * 4)]!, MOVES[Math.floor(random() * 4)]!];
    moves.push(m);
    results.push(judgeRound(setup, r, m[0], m[1], results.at(-1) ?? null));
  }
  return { options, results, request: { options, moves } };
}

/** Every number of the standard table one higher: a balance of the same heroes that is not the default. */
const CUSTOM: Record<string, Hero> = Object.fromEntries(
  Object.entries(STANDARD_BALANCE).map(([name, h]) => [
    name,
    {
      hp: h.hp + 1,
      mana: h.mana + 1,
      mana_regen: h.mana_regen + 1,
      atk: h.atk + 1,
      skill_a: { dmg: h.skill_a.dmg + 1, cost: h.skill_a.cost + 1, cd: h.skill_a.cd + 1 },
      skill_b: { dmg: h.skill_b.dmg + 1, cost: h.skill_b.cost + 1, cd: h.skill_b.cd + 1 },
      ult: { dmg: h.ult.dmg + 1, cost: h.ult.cost + 1, cd: h.ult.cd + 1 },
    },
  ]),
);

describe.skipIf(!haveIndex)("the reference's index.json", () => {
  it("hero-duel-v1's default profile is our default balance and max_rounds, number for number", () => {
    const index = JSON.parse(readFileSync(sharedPath(`${PROTOCOLS}/index.json`), 'utf8')) as {
      protocols: { alias: string; default_profile: string; profiles: Record<string, { options: Record<string, unknown> }> }[];
    };
    const theirs = index.protocols.find((p) => p.alias === 'hero-duel-v1');
    expect(theirs, 'hero-duel-v1 in the reference index').toBeDefined();
    const ours = BUILTINS.find((p) => p.alias === 'hero-duel-v1')!;
    expect(ours.default_profile).toBe(theirs!.default_profile);
    expect(theirs!.profiles[theirs!.default_profile]!.options['balance']).toEqual(STANDARD_BALANCE);
    expect(ours.profiles[ours.default_profile]!.options).toEqual(theirs!.profiles[theirs!.default_profile]!.options);
  });
});

// The reference's hooks.py under python3: one process answers every request of this file (reference-batch.ts).
const GAMES = [
  ...HEROES.flatMap((host_hero, i) => HEROES.map((guest_hero, j) => game({ host_hero, guest_hero, max_rounds: 30 }, 1 + i * 4 + j))),
  game({ host_hero: 'tank', guest_hero: 'tank', max_rounds: 4 }, 99),
  game({ host_hero: 'mage', guest_hero: 'assassin', max_rounds: 30, balance: CUSTOM }, 100),
];
let batch: ReferenceBatch | undefined;
if (havePython) {
  beforeAll(() => {
    batch = startReference('hero-duel-ref.py', [{ defaults: true }, ...GAMES.map((g) => g.request)]);
  });
  afterAll(() => batch?.close());
}

describe.skipIf(!havePython)("the reference's hero-duel hooks", () => {
  it('its DEFAULT_BALANCE is ours, and a guest without options asks for as many rounds as ours', async () => {
    const theirs = await batch!.answer<{ balance: unknown; join: Message }>(0);
    expect(theirs.balance).toEqual(STANDARD_BALANCE);
    const guest = heroDuel.create({ role: 'guest', options: {}, args: [], stateDir: '', decision: null, random: () => 0 }) as {
      proto_guest_join_message(): Message;
    };
    expect(guest.proto_guest_join_message()['max_rounds']).toBe(theirs.join['max_rounds']);
  });

  it('its judge, with its default balance (or the one in the options), gives every round_result of ours, field for field', async () => {
    // Games to 0 HP and to max_rounds, every pair of heroes, skills cast and skills that fall back to normal.
    expect(GAMES.some((g) => g.results.at(-1)!['host_hp'] !== 0 && g.results.at(-1)!['guest_hp'] !== 0)).toBe(true);
    expect(GAMES.some((g) => g.results.some((r, i) => r['host_move'] === 'normal' && g.request.moves[i]![0] !== 'normal'))).toBe(true);
    for (const [i, g] of GAMES.entries()) expect(await batch!.answer(i + 1), JSON.stringify(g.options)).toEqual(g.results);
  });
});

describe("a balance travels as the invitation's options", () => {
  /** Both sides over the in-memory transport, each with the options it plays; each transcript must verify. */
  async function duel(hostOptions: Record<string, unknown>, guestOptions: Record<string, unknown>) {
    const r = await runLocal({
      crypto: c,
      ...builtin('hero-duel'),
      hooks: heroDuel,
      hostOptions,
      guestOptions,
      outDir: tempDir('hero-duel'),
      timeoutMs: 10_000,
    });
    for (const side of [r.host, r.guest]) expect(verifyTranscriptAt(c, side.dir).ok, side.dir).toBe(true);
    return r;
  }
  const firstResult = (dir: string) =>
    readFileSync(join(dir, 'transcript.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => (JSON.parse(l) as { msg: Message }).msg)
      .find((m) => m.action === 'round_result')!;

  it("a guest playing the invitation's non-default balance agrees with the host, and the numbers are that balance's", async () => {
    const options = { max_rounds: 6, balance: CUSTOM, host_hero: 'warrior', guest_hero: 'tank' };
    const r = await duel(options, options);
    expect([r.host.completed, r.guest.completed]).toEqual([true, true]);
    const first = firstResult(r.guest.dir);
    expect([first['host_hp'], first['guest_hp']]).toEqual([
      CUSTOM['warrior']!.hp - (first['guest_damage_dealt'] as number),
      CUSTOM['tank']!.hp - (first['host_damage_dealt'] as number),
    ]);
  });

  it('a guest playing other numbers than the host refuses in the first round, typed balance_mismatch, either way round', async () => {
    const heroes = { host_hero: 'warrior', guest_hero: 'tank', max_rounds: 6 };
    for (const [host, guest] of [
      [{ ...heroes, balance: CUSTOM }, heroes],
      [heroes, { ...heroes, balance: CUSTOM }],
    ] as const) {
      const r = await duel(host, guest);
      expect(r.guest).toMatchObject({ completed: false, reason: 'balance_mismatch' });
      expect(r.host.completed).toBe(false);
      const mismatch = readFileSync(join(r.guest.dir, 'events.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { type: string; data: { round: number } })
        .find((e) => e.type === 'balance_mismatch_detected');
      expect(mismatch?.data).toMatchObject({ round: 0, role: 'host' });
    }
  });

  it('an empty balance is the default, as the reference reads it', async () => {
    const heroes = { host_hero: 'mage', guest_hero: 'assassin', max_rounds: 6 };
    const r = await duel({ ...heroes, balance: {} }, heroes);
    expect([r.host.completed, r.guest.completed]).toEqual([true, true]);
  });
});
