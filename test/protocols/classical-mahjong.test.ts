// Classical Mahjong Core: the reference's spec.json byte for byte (so its protocol id is the reference's),
// the tile rules (winning shapes, scoring patterns, chow choices) on hand-built hands, every refusal text
// and the claim priority on hand-built tables, whole matches played by autoplay from each member's own
// view (directly and through the group leader with a verifying replica per member, with a leader change
// mid-hand), and, where python3 imports the reference, the reference's own hooks replaying the same
// tables and matches: same states, events, views, refusals and outcomes at every step.
import { describe, expect, it } from 'vitest';
import { needReferencePython } from '../shared/require.js';
import { seeded } from '../../ts/hooks/random.js';
import { getCrypto } from '../../ts/crypto/index.js';
import type { GroupLeader } from '../../ts/group/leader.js';
import type { GroupReplica } from '../../ts/group/member.js';
import type { GroupHookResult, GroupHooks, GroupState } from '../../ts/hooks/types.js';
import { findBuiltin } from '../../ts/protocols/index.js';
import mahjong, { type MahjongState, type MahjongView } from '../../ts/protocols/classical-mahjong/hooks.js';
import { shanten } from '../../ts/protocols/classical-mahjong/autoplay.js';
import { chowSequences, MahjongRuleError, scorePatterns, tileFaces, winKind, type TileFace } from '../../ts/protocols/classical-mahjong/tiles.js';
import { expectEqual } from './fast-expect.js';
import { fourSeats, hostContext, referenceSpecTests } from './group-fixtures.js';
import { builtinGroupConfig, derivedSeats, startTable } from './group-table.js';
import { build, referenceRequests, type Built } from './reference-batch.js';

const ID = 'b4b52ae592fb2fe9808c0bc4976eaee7ca1ce9fdb4638dc72bd88f18403def01';
const autoplay = mahjong.autoplay!;

const mulberry32 = seeded;
const hooks = (options: Record<string, unknown> = {}, seed = 1) => mahjong.create(hostContext(options, seed)) as GroupHooks;
const MEMBERS = fourSeats('abcd', 'm');
const KEYS = MEMBERS.map((m) => m.public_key);
const byKey = (k: string) => MEMBERS.find((m) => m.public_key === k)!;

const FACES = new Map(tileFaces().map((f) => [f.code, f]));
const t = (...codes: string[]): TileFace[] => codes.map((c) => ({ ...FACES.get(c)! }));
const run = (suit: string, from: number) => [from, from + 1, from + 2].map((r) => `${r}${suit}`);

describe('Classical Mahjong: spec and registration', () => {
  referenceSpecTests('classical-mahjong', ID, "the reference's Classical Mahjong spec");

  it('is registered under the reference alias with its profiles', () => {
    const b = findBuiltin('classical-mahjong-v1')!;
    expect(b.folder).toBe('classical-mahjong');
    expect(b.default_profile).toBe('standard');
    expect(b.profiles['quick']!.options).toEqual({ starting_points: 25000, max_hands: 1 });
    expect(b.profiles['standard']!.options).toEqual({ starting_points: 25000, max_hands: 4 });
  });
});

// Hand-built hands for the shape rules: [name, concealed codes, meld count, expected].
const SHAPES: [string, string[], number, string | null][] = [
  ['four runs and a pair', [...run('m', 1), ...run('m', 4), ...run('p', 2), ...run('s', 7), '5p', '5p'], 0, 'standard'],
  [
    'pungs of honors and a pair',
    ['east', 'east', 'east', 'red', 'red', 'red', 'white', 'white', 'white', 'north', 'north', 'north', '1m', '1m'],
    0,
    'standard',
  ],
  ['a run that only works one way round', ['1m', '1m', '1m', '2m', '3m', '4m', '5m', '5m', '5m', ...run('s', 1), '9s', '9s'], 0, 'standard'],
  ['runs do not wrap 8-9-1', ['8m', '9m', '1m', ...run('p', 1), ...run('p', 4), ...run('s', 1), 'west', 'west'], 0, null],
  ['honors never run', ['east', 'south', 'west', ...run('p', 1), ...run('p', 4), ...run('s', 1), '2m', '2m'], 0, null],
  ['seven pairs', ['1m', '1m', '4m', '4m', '9p', '9p', '3s', '3s', 'east', 'east', 'red', 'red', 'green', 'green'], 0, 'seven_pairs'],
  ['seven pairs with four of a kind', ['1m', '1m', '1m', '1m', '9p', '9p', '3s', '3s', 'east', 'east', 'red', 'red', 'green', 'green'], 0, 'seven_pairs'],
  ['six pairs and two singles', ['1m', '1m', '4m', '4m', '9p', '9p', '3s', '3s', 'east', 'east', 'red', 'red', 'green', 'white'], 0, null],
  ['thirteen orphans', ['1m', '9m', '1p', '9p', '1s', '9s', 'east', 'south', 'west', 'north', 'red', 'green', 'white', 'white'], 0, 'thirteen_orphans'],
  ['thirteen orphans without its pair', ['1m', '9m', '1p', '9p', '1s', '9s', 'east', 'south', 'west', 'north', 'red', 'green', 'white', '5m'], 0, null],
  ['one meld down: three melds and a pair', [...run('m', 1), ...run('m', 4), ...run('p', 2), '5p', '5p'], 1, 'standard'],
  ['seven pairs needs a concealed hand', ['1m', '1m', '4m', '4m', '9p', '9p', '3s', '3s', 'east', 'east', 'red'], 1, null],
  ['four melds down: a lone pair', ['white', 'white'], 4, 'standard'],
  ['four melds down: two singles', ['white', 'red'], 4, null],
  ['thirteen tiles are not a hand', [...run('m', 1), ...run('m', 4), ...run('p', 2), ...run('s', 7), '5p'], 0, null],
];

describe('Classical Mahjong: tile rules', () => {
  it('has 34 faces in the reference order: characters, dots, bamboo, winds, dragons', () => {
    const faces = tileFaces();
    expect(faces.length).toBe(34);
    expect(faces[0]).toEqual({ code: '1m', suit: 'characters', rank: 1, label: '1 characters', kind: 'numbered' });
    expect(faces[9]!.code).toBe('1p');
    expect(faces[26]).toEqual({ code: '9s', suit: 'bamboo', rank: 9, label: '9 bamboo', kind: 'numbered' });
    expect(faces[27]).toEqual({ code: 'east', suit: 'wind', rank: 0, label: 'East', kind: 'honor' });
    expect(faces[33]).toEqual({ code: 'white', suit: 'dragon', rank: 0, label: 'White', kind: 'honor' });
  });

  it.each(SHAPES)('%s', (_name, codes, melds, expected) => {
    expect(winKind(t(...codes), melds)).toBe(expected);
  });

  it('refuses tiles and meld counts it cannot judge, with the reference texts', () => {
    expect(() => winKind(t('1m'), 5)).toThrow(new MahjongRuleError('meld_count must be between zero and four'));
    expect(() => winKind(t('1m'), -1)).toThrow('meld_count must be between zero and four');
    expect(() => winKind(['1m'])).toThrow('every tile must be an object');
    expect(() => winKind([{ code: '0m' }])).toThrow('tile code is invalid');
    expect(() => winKind(t('1m', '1m', '1m', '1m', '1m', ...run('p', 1), ...run('p', 4), '9s', '9s', '9s'))).toThrow(
      'a Mahjong face cannot appear more than four times',
    );
    expect(() => scorePatterns(t('1m'), { winKind: 'nine_gates' })).toThrow('win_kind is invalid');
    expect(() => scorePatterns(t('1m'), { winKind: 'standard', meldKinds: ['triple'] })).toThrow('meld kind is invalid');
  });

  it('scores the classical-core patterns', () => {
    const codes = (p: { code: string }[]) => p.map((x) => x.code);
    const mixed = t(...run('m', 1), ...run('m', 4), ...run('p', 2), ...run('s', 7), '5p', '5p');
    expect(scorePatterns(mixed, { winKind: 'standard' })).toEqual([
      { code: 'winning_hand', points: 1 },
      { code: 'concealed_hand', points: 1 },
    ]);
    expect(scorePatterns(mixed, { winKind: 'standard', selfDraw: true, concealed: false })).toEqual([
      { code: 'winning_hand', points: 1 },
      { code: 'self_draw', points: 1 },
    ]);
    const pure = t(...run('m', 1), ...run('m', 4), ...run('m', 7), '5m', '5m', '5m', '2m', '2m');
    expect(codes(scorePatterns(pure, { winKind: 'standard' }))).toEqual(['winning_hand', 'concealed_hand', 'pure_one_suit']);
    const halfFlush = t(...run('p', 1), ...run('p', 4), ...run('p', 7), 'red', 'red', 'red', 'east', 'east');
    expect(scorePatterns(halfFlush, { winKind: 'standard' }).at(-1)).toEqual({ code: 'mixed_one_suit', points: 3 });
    const simples = t(...run('m', 2), ...run('p', 4), '6s', '6s', '6s', '8s', '8s', '8s', '5m', '5m');
    expect(codes(scorePatterns(simples, { winKind: 'standard' }))).toEqual(['winning_hand', 'concealed_hand', 'all_simples']);
    const honors = t('east', 'east', 'east', 'red', 'red', 'red', 'white', 'white', 'white', 'north', 'north', 'north', 'green', 'green');
    expect(codes(scorePatterns(honors, { winKind: 'standard', meldKinds: ['pung', 'kong', 'concealed_kong', 'pung'], concealed: false }))).toEqual([
      'winning_hand',
      'all_pungs',
    ]);
    expect(codes(scorePatterns(honors, { winKind: 'standard', meldKinds: ['pung', 'kong', 'chow', 'pung'], concealed: false }))).toEqual(['winning_hand']);
    expect(codes(scorePatterns(honors, { winKind: 'standard', meldKinds: ['pung', 'pung', 'pung'], concealed: false }))).toEqual(['winning_hand']);
    const sevenPairs = t('1m', '1m', '4m', '4m', '9m', '9m', '3m', '3m', '2m', '2m', '5m', '5m', '6m', '6m');
    expect(scorePatterns(sevenPairs, { winKind: 'seven_pairs', selfDraw: true })).toEqual([
      { code: 'winning_hand', points: 1 },
      { code: 'self_draw', points: 1 },
      { code: 'concealed_hand', points: 1 },
      { code: 'seven_pairs', points: 4 },
      { code: 'pure_one_suit', points: 6 },
    ]);
    const orphans = t('1m', '9m', '1p', '9p', '1s', '9s', 'east', 'south', 'west', 'north', 'red', 'green', 'white', 'white');
    expect(codes(scorePatterns(orphans, { winKind: 'thirteen_orphans' }))).toEqual(['winning_hand', 'concealed_hand', 'thirteen_orphans']);
  });

  it('lists the chow choices for a discard, lowest run first', () => {
    expect(chowSequences(t('1m', '2m', '4m', '5m', '6m'), t('3m')[0])).toEqual([
      ['1m', '2m'],
      ['2m', '4m'],
      ['4m', '5m'],
    ]);
    expect(chowSequences(t('8p', '7p', '1p'), t('9p')[0])).toEqual([['7p', '8p']]);
    expect(chowSequences(t('2s', '3s'), t('1s')[0])).toEqual([['2s', '3s']]);
    expect(chowSequences(t('2s', '3s'), t('1m')[0])).toEqual([]);
    expect(chowSequences(t('east', 'south'), t('west')[0])).toEqual([]);
  });

  it('the autoplay measures how far a hand is from a standard win', () => {
    expect(shanten(t(...run('m', 1), ...run('m', 4), ...run('p', 2), ...run('s', 7), '5p', '5p') as never, 0)).toBe(-1);
    expect(shanten(t(...run('m', 1), ...run('m', 4), ...run('p', 2), ...run('s', 7), '5p') as never, 0)).toBe(0);
    expect(shanten(t('1m', '4m', '7m', '1p', '4p', '7p', '1s', '4s', '7s', 'east', 'south', 'west', 'north') as never, 0)).toBe(8);
  });
});

// ---------------------------------------------------------------------------------------------------
// Hand-built tables. Seat 0 deals and holds fourteen tiles. A scenario names tiles by code; each step
// is resolved to concrete tile ids from the actor's hand at that moment, so the same concrete actions
// can be replayed through the reference.

interface Scenario {
  options?: Record<string, unknown>;
  hands: string[][];
  /** Codes drawn next, in order. */
  wall?: string[];
  /** How many tiles stay in the wall (the rest go to the discard pile). */
  wallLeft?: number;
  steps: [number, Record<string, unknown>][];
}

function buildTable(h: GroupHooks, sc: Scenario): MahjongState {
  const s = h.proto_group_initial_state(MEMBERS) as MahjongState;
  const pool = [...s.deck.draw_pile, ...Object.values(s.deck.hands).flat()];
  const reserved = new Set([...sc.hands.flat(), ...(sc.wall ?? [])]);
  const take = (code: string) => {
    const at = pool.findIndex((id) => s.deck.catalog[id]!.code === code);
    if (at < 0) throw new Error(`no ${code} left for the table`);
    return pool.splice(at, 1)[0]!;
  };
  const hands = KEYS.map((_, seat) => (sc.hands[seat] ?? []).map(take));
  const wall = (sc.wall ?? []).map(take);
  hands.forEach((hand, seat) => {
    while (hand.length < (seat === 0 ? 14 : 13)) {
      const at = pool.findIndex((id) => !reserved.has(s.deck.catalog[id]!.code));
      hand.push(pool.splice(at, 1)[0]!);
    }
    s.deck.hands[KEYS[seat]!] = hand;
  });
  let rest = [...pool, ...wall.reverse()];
  const left = sc.wallLeft ?? rest.length;
  s.deck.discard_pile = rest.slice(0, rest.length - left);
  rest = rest.slice(rest.length - left);
  s.deck.draw_pile = rest;
  return s;
}

function resolve(state: MahjongState, seat: number, spec: Record<string, unknown>): Record<string, unknown> {
  const hand = [...state.deck.hands[KEYS[seat]!]!];
  const pick = (code: string) => {
    const at = hand.findIndex((id) => state.deck.catalog[id]!.code === code);
    return at < 0 ? `missing-${code}` : hand.splice(at, 1)[0]!;
  };
  const { code, codes, ...rest } = spec as { code?: string; codes?: string[] } & Record<string, unknown>;
  const action: Record<string, unknown> = rest;
  if (code) action['card_id'] = pick(code);
  if (codes) action['card_ids'] = codes.map(pick);
  return action;
}

type Outcome = { state: GroupState; events: unknown[]; completed: boolean; outcome: string | null } | { error: string };
interface Played {
  h: GroupHooks;
  start: MahjongState;
  actions: [string, Record<string, unknown>][];
  results: Outcome[];
  views: Record<string, unknown>[][];
  state: MahjongState;
}

function step(h: GroupHooks, state: GroupState, actor: string, action: Record<string, unknown>): Outcome {
  try {
    const r: GroupHookResult = h.proto_group_handle(structuredClone(state), byKey(actor), structuredClone(action));
    return { state: r.state, events: r.events ?? [], completed: r.completed ?? false, outcome: r.outcome ?? null };
  } catch (e) {
    return { error: (e as Error).message };
  }
}

function playScenario(sc: Scenario): Played {
  const h = hooks({ deal_seed: 'table', ...sc.options });
  const start = buildTable(h, sc);
  let state = start;
  const actions: Played['actions'] = [];
  const results: Outcome[] = [];
  const views: Record<string, unknown>[][] = [];
  for (const [seat, spec] of sc.steps) {
    const action = resolve(state, seat, spec);
    actions.push([KEYS[seat]!, action]);
    const r = step(h, state, KEYS[seat]!, action);
    results.push(r);
    if ('state' in r) state = r.state as MahjongState;
    views.push(MEMBERS.map((m) => h.proto_group_view(state, m)));
  }
  return { h, start, actions, results, views, state };
}

const ok = (r: Outcome) => {
  if ('error' in r) throw new Error(`refused: ${r.error}`);
  return r;
};
const errorOf = (r: Outcome) => ('error' in r ? r.error : 'accepted');
const kinds = (r: Outcome) => ok(r).events.map((e) => (e as { kind: string }).kind);

const NO_WIN_HAND = ['1m', '4m', '7m', '2p', '5p', '8p', '3s', '6s', '9s', 'east', 'south', 'west', 'north'];

const SCENARIOS: Record<string, Scenario> = {
  selfDraw: {
    options: { max_hands: 4 },
    hands: [[...run('m', 1), ...run('m', 4), ...run('m', 7), '1p', '1p', '1p', '2p', '2p']],
    steps: [
      [1, { kind: 'discard', code: '1m' }],
      [0, { kind: 'pass_claim' }],
      [0, { kind: 'discard', card_id: 5 }],
      [0, { kind: 'discard', card_id: 'no-such-tile' }],
      [0, { kind: 'win' }],
    ],
  },
  refusals: {
    hands: [
      ['5s', '5s', '5s', '5s', '1m', '2m', '3m', '4p', '5p', '6p', '7s', '8s', '9s', 'east'],
      ['1p', '2p', '9m', '9m', ...NO_WIN_HAND.slice(0, 9)],
      ['north', 'north'],
    ],
    wall: ['white', '3p'],
    steps: [
      [0, { kind: 'win' }],
      [0, { kind: 'concealed_kong', card_ids: ['x'] }],
      [0, { kind: 'concealed_kong', codes: ['5s', '5s', '5s', '1m', '1m'] }],
      [0, { kind: 'concealed_kong', card_ids: ['a', 'b', 'c', 'd'] }],
      [0, { kind: 'concealed_kong', codes: ['5s', '5s', '5s', '1m'] }],
      [0, { kind: 'concealed_kong', codes: ['5s', '5s', '5s', '5s'] }],
      [0, { kind: 'discard', code: 'east' }],
      [0, { kind: 'pass_claim' }],
      [1, { kind: 'draw' }],
      [1, { kind: 'win' }],
      [1, { kind: 'chow', codes: ['1p', '2p'] }],
      [1, { kind: 'pung', codes: ['9m', '9m'] }],
      [1, { kind: 'pass_claim' }],
      [1, { kind: 'pass_claim' }],
      [2, { kind: 'chow', codes: ['north', 'north'] }],
      [2, { kind: 'pung', card_ids: ['a'] }],
      [2, { kind: 'kong', codes: ['north', 'north'] }],
      [2, { kind: 'pung', codes: ['north', 'north'] }],
      [2, { kind: 'pass_claim' }],
      [3, { kind: 'pass_claim' }],
      [0, { kind: 'discard', code: '1m' }],
      [1, { kind: 'discard', code: '3p' }],
    ],
  },
  winPriority: {
    options: { max_hands: 1 },
    hands: [
      ['9p', ...NO_WIN_HAND],
      ['9p', '9p'],
      [...run('m', 1), ...run('m', 4), ...run('s', 7), 'east', 'east', 'east', '9p'],
      ['7p', '8p', '1s', '1s', '1s', '2s', '2s', '2s', '3s', '3s', '3s', '4s', '4s'],
    ],
    steps: [
      [0, { kind: 'discard', code: '9p' }],
      [3, { kind: 'win' }],
      [1, { kind: 'pung', codes: ['9p', '9p'] }],
      [2, { kind: 'win' }],
      [2, { kind: 'discard', code: '1m' }],
    ],
  },
  pungOverChow: {
    hands: [['3m', ...NO_WIN_HAND], ['1m', '2m'], [], ['3m', '3m', 'green']],
    steps: [
      [0, { kind: 'discard', code: '3m' }],
      [1, { kind: 'chow', codes: ['2m', '1m'] }],
      [3, { kind: 'pung', codes: ['3m', '3m'] }],
      [2, { kind: 'pass_claim' }],
      [3, { kind: 'win' }],
      [3, { kind: 'discard', code: 'green' }],
    ],
  },
  chow: {
    hands: [
      ['3m', ...NO_WIN_HAND],
      ['1m', '2m', '4m', '5m'],
    ],
    steps: [
      [0, { kind: 'discard', code: '3m' }],
      [1, { kind: 'chow', codes: ['4m', '2m'] }],
      [2, { kind: 'pass_claim' }],
      [3, { kind: 'pass_claim' }],
      [1, { kind: 'discard', code: '1m' }],
    ],
  },
  kongClaim: {
    hands: [['red', ...NO_WIN_HAND], [], ['red', 'red', 'red']],
    wall: ['green'],
    steps: [
      [0, { kind: 'discard', code: 'red' }],
      [1, { kind: 'pass_claim' }],
      [2, { kind: 'kong', codes: ['red', 'red', 'red'] }],
      [3, { kind: 'pass_claim' }],
      [2, { kind: 'discard', code: 'green' }],
    ],
  },
  wallExhausted: {
    options: { max_hands: 1 },
    hands: [NO_WIN_HAND],
    wallLeft: 0,
    steps: [
      [0, { kind: 'discard', code: 'east' }],
      [1, { kind: 'pass_claim' }],
      [2, { kind: 'pass_claim' }],
      [3, { kind: 'pass_claim' }],
      [0, { kind: 'discard', code: '1m' }],
    ],
  },
  kongOnEmptyWall: {
    options: { max_hands: 2 },
    hands: [['5s', '5s', '5s', '5s']],
    wallLeft: 0,
    steps: [[0, { kind: 'concealed_kong', codes: ['5s', '5s', '5s', '5s'] }]],
  },
  sevenPairs: {
    options: { max_hands: 1 },
    hands: [['1m', '1m', '4m', '4m', '9m', '9m', '3m', '3m', '2m', '2m', '5m', '5m', '6m', '6m']],
    steps: [[0, { kind: 'win' }]],
  },
  thirteenOrphans: {
    options: { max_hands: 1, starting_points: 0 },
    hands: [['1m', '9m', '1p', '9p', '1s', '9s', 'east', 'south', 'west', 'north', 'red', 'green', 'white', 'white']],
    steps: [[0, { kind: 'win' }]],
  },
};

describe('Classical Mahjong: the deal and options', () => {
  it('deals 14 to the dealer and 13 to the others from 136 tiles, dealer to act', () => {
    const h = hooks({ deal_seed: 'deal' });
    const s = h.proto_group_initial_state(MEMBERS) as MahjongState;
    expect(KEYS.map((k) => s.deck.hands[k]!.length)).toEqual([14, 13, 13, 13]);
    expect(s.deck.draw_pile.length).toBe(136 - 53);
    expect(Object.keys(s.deck.catalog).length).toBe(136);
    expect(s).toMatchObject({
      phase: 'discard',
      hand_number: 1,
      dealer_index: 0,
      dealer: KEYS[0],
      current_player: KEYS[0],
      scores: Object.fromEntries(KEYS.map((k) => [k, 25000])),
    });
    expect(Object.values(s.players).map((p) => p.wind)).toEqual(['east', 'south', 'west', 'north']);
    const codes = Object.values(s.deck.catalog).map((c) => c.code);
    for (const f of tileFaces()) expect(codes.filter((c) => c === f.code).length).toBe(4);
    expect((hooks({ deal_seed: 'deal' }).proto_group_initial_state(MEMBERS) as MahjongState).deck).toEqual(s.deck);
    expect((hooks({ deal_seed: 'other' }).proto_group_initial_state(MEMBERS) as MahjongState).deck.hands).not.toEqual(s.deck.hands);
    // Without a seed the session's random source deals.
    const unseeded = (seed: number) => (hooks({}, seed).proto_group_initial_state(MEMBERS) as MahjongState).deck.hands;
    expect(unseeded(3)).toEqual(unseeded(3));
    expect(unseeded(3)).not.toEqual(unseeded(4));
  });

  it('refuses options out of range and a table that is not four active members', () => {
    const refused = (options: Record<string, unknown>, members = MEMBERS) => {
      try {
        hooks(options).proto_group_initial_state(members);
        return 'accepted';
      } catch (e) {
        return (e as Error).message;
      }
    };
    expect(refused({ starting_points: -1 })).toBe('starting_points must be between 0 and 100000');
    expect(refused({ starting_points: 100001 })).toBe('starting_points must be between 0 and 100000');
    expect(refused({ starting_points: '25000' })).toBe('starting_points must be between 0 and 100000');
    expect(refused({ max_hands: 0 })).toBe('max_hands must be between 1 and 32');
    expect(refused({ max_hands: 33 })).toBe('max_hands must be between 1 and 32');
    expect(refused({ max_hands: true })).toBe('max_hands must be between 1 and 32');
    expect(refused({ max_hands: 1.5 })).toBe('max_hands must be between 1 and 32');
    expect(refused({}, MEMBERS.slice(0, 3))).toBe('Classical Mahjong requires exactly four active Members');
    expect(refused({}, [...MEMBERS.slice(0, 3), { ...MEMBERS[3]!, status: 'left' }])).toBe('Classical Mahjong requires exactly four active Members');
    expect(refused({ starting_points: 0, max_hands: 32 })).toBe('accepted');
  });
});

describe('Classical Mahjong: hand-built tables', () => {
  it('a dealer self-draw win: each other seat pays the points, the next hand starts with the next dealer', () => {
    const p = playScenario(SCENARIOS['selfDraw']!);
    expect(p.results.slice(0, 4).map(errorOf)).toEqual([
      "it is not this Member's turn",
      'turn accepts discard, win, or concealed_kong',
      "card_id is not in this Member's hand",
      "card_id is not in this Member's hand",
    ]);
    const r = ok(p.results[4]!);
    expect(kinds(r)).toEqual(['self_draw', 'mahjong_hand_started']);
    const result = {
      kind: 'self_draw',
      winner: KEYS[0],
      discarder: null,
      win_kind: 'standard',
      patterns: [
        { code: 'winning_hand', points: 1 },
        { code: 'self_draw', points: 1 },
        { code: 'concealed_hand', points: 1 },
      ],
      points: 3,
      score_delta: { [KEYS[0]!]: 9, [KEYS[1]!]: -3, [KEYS[2]!]: -3, [KEYS[3]!]: -3 },
    };
    expect(r.events[0]).toEqual(result);
    expect(r.events[1]).toEqual({ kind: 'mahjong_hand_started', hand_number: 2, dealer: KEYS[1] });
    const s = r.state as MahjongState;
    expect(s).toMatchObject({ phase: 'discard', hand_number: 2, dealer_index: 1, dealer: KEYS[1], current_player: KEYS[1], last_result: result });
    expect(s.scores).toEqual({ [KEYS[0]!]: 25009, [KEYS[1]!]: 24997, [KEYS[2]!]: 24997, [KEYS[3]!]: 24997 });
    expect(KEYS.map((k) => s.deck.hands[k]!.length)).toEqual([13, 14, 13, 13]);
    expect(r.completed).toBe(false);
  });

  it('every refusal text of a turn and of a claim window; a concealed kong draws a replacement tile', () => {
    const p = playScenario(SCENARIOS['refusals']!);
    const texts = p.results.map(errorOf);
    expect(texts).toEqual([
      'the hand does not match a supported winning shape',
      'card_ids must contain 4 unique tile ids',
      'card_ids must contain 4 unique tile ids',
      "a selected tile is not in this Member's hand",
      'a concealed kong needs four identical tile faces',
      'accepted',
      'accepted',
      'this Member cannot respond to the discard',
      'claim accepts pass_claim, win, pung, kong, or chow',
      'the discard does not complete a supported win',
      'card_ids do not form a legal chow',
      'pung tiles must match the discard',
      'accepted',
      'this Member already responded to the claim window',
      'only the next seat may chow',
      'card_ids must contain 2 unique tile ids',
      'card_ids must contain 3 unique tile ids',
      'pung tiles must match the discard',
      'accepted',
      'accepted',
      "it is not this Member's turn",
      'accepted',
    ]);
    const kong = ok(p.results[5]!);
    const cards = (p.start.deck.hands[KEYS[0]!] ?? []).filter((id) => p.start.deck.catalog[id]!.code === '5s').map((id) => p.start.deck.catalog[id]);
    expect(kong.events).toEqual([
      { kind: 'concealed_kong', owner: KEYS[0], cards },
      { kind: 'replacement_draw', public_key: KEYS[0] },
    ]);
    const afterKong = kong.state as MahjongState;
    expect(afterKong.deck.hands[KEYS[0]!]!.length).toBe(11);
    expect(afterKong.deck.zones['melds']![KEYS[0]!]!.length).toBe(4);
    expect(afterKong.deck.catalog[afterKong.deck.hands[KEYS[0]!]!.at(-1)!]!.code).toBe('white');
    // The concealed kong is public; the replacement tile is not.
    const other = p.views[5]![1] as MahjongView;
    expect(other.melds[KEYS[0]!]![0]!.cards.map((c) => c.code)).toEqual(['5s', '5s', '5s', '5s']);
    expect(JSON.stringify(other)).not.toContain(afterKong.deck.hands[KEYS[0]!]!.at(-1)!);
    const discard = ok(p.results[6]!);
    expect(discard.events).toEqual([
      { kind: 'mahjong_discard', card_id: expect.any(String), card: expect.objectContaining({ code: 'east' }), public_key: KEYS[0], seat: 0 },
    ]);
    expect(discard.state).toMatchObject({ phase: 'claim', current_player: '', claim_eligible: KEYS.slice(1), claim_responses: {} });
    const mid = p.views[12]!;
    expect((mid[1] as MahjongView).my_claim).toEqual({ kind: 'pass_claim' });
    expect(
      mid.map((v) => [
        (v as MahjongView).claim_response_count,
        (v as MahjongView).claim_required_count,
        (v as MahjongView).my_claim,
        (v as MahjongView).you.may_claim,
      ]),
    ).toEqual([
      [1, 3, null, false],
      [1, 3, { kind: 'pass_claim' }, true],
      [1, 3, null, true],
      [1, 3, null, true],
    ]);
    const resolved = ok(p.results[19]!);
    expect(resolved.events).toEqual([
      { kind: 'claim_response_received', public_key: KEYS[3], response_count: 3 },
      { kind: 'claim_resolved', claim: 'none' },
      { kind: 'mahjong_draw', public_key: KEYS[1] },
    ]);
    const s = resolved.state as MahjongState;
    expect(s).toMatchObject({ phase: 'discard', current_player: KEYS[1], last_discard: null, claim_eligible: [], claim_responses: {} });
    expect(s.rivers[KEYS[0]!]!.length).toBe(1);
    expect(s.deck.catalog[s.deck.hands[KEYS[1]!]!.at(-1)!]!.code).toBe('3p');
  });

  it('a win outranks a pung, and the winner nearest the discarder clockwise takes the discard', () => {
    const p = playScenario(SCENARIOS['winPriority']!);
    const last = ok(p.results[3]!);
    expect(kinds(last)).toEqual(['claim_response_received', 'claim_resolved', 'discard_win', 'mahjong_match_complete']);
    expect(last.events[1]).toEqual({ kind: 'claim_resolved', claim: 'win', winner: KEYS[2] });
    expect(last.events[2]).toMatchObject({
      winner: KEYS[2],
      discarder: KEYS[0],
      win_kind: 'standard',
      points: 2,
      score_delta: { [KEYS[0]!]: -6, [KEYS[1]!]: 0, [KEYS[2]!]: 6, [KEYS[3]!]: 0 },
    });
    expect(last.events[3]).toEqual({
      kind: 'mahjong_match_complete',
      winner: KEYS[2],
      winners: [KEYS[2]],
      scores: { [KEYS[0]!]: 24994, [KEYS[1]!]: 25000, [KEYS[2]!]: 25006, [KEYS[3]!]: 25000 },
    });
    expect([last.completed, last.outcome, (last.state as MahjongState).phase]).toEqual([true, KEYS[2], 'completed']);
    // The discard a member won on stays in the discarder's river.
    expect((p.views[3]![0] as MahjongView).rivers[KEYS[0]!]!.map((c) => c.code)).toEqual(['9p']);
    expect(errorOf(p.results[4]!)).toBe('the Mahjong match is complete');
  });

  it('a pung outranks a chow; the claimant must discard before it may declare a self-draw win', () => {
    const p = playScenario(SCENARIOS['pungOverChow']!);
    const r = ok(p.results[3]!);
    expect(r.events[1]).toEqual({ kind: 'claim_resolved', claim: 'pung', winner: KEYS[3] });
    expect(r.events[2]).toMatchObject({ kind: 'pung', owner: KEYS[3], from: KEYS[0] });
    const s = r.state as MahjongState;
    expect(s.meld_groups[KEYS[3]!]![0]!.cards.map((c) => c.code)).toEqual(['3m', '3m', '3m']);
    expect(s.rivers[KEYS[0]!]).toEqual([]);
    expect(s).toMatchObject({ phase: 'discard', current_player: KEYS[3], must_discard_after_claim: true });
    expect(s.deck.hands[KEYS[3]!]!.length).toBe(11);
    expect(s.deck.hands[KEYS[1]!]!.length).toBe(13);
    expect(errorOf(p.results[4]!)).toBe('cannot declare a self-draw win before drawing a tile');
    expect(ok(p.results[5]!).state).toMatchObject({ phase: 'claim', must_discard_after_claim: false });
  });

  it('a chow by the next seat moves its two tiles and the discard into a public meld', () => {
    const p = playScenario(SCENARIOS['chow']!);
    const r = ok(p.results[3]!);
    expect(r.events.slice(1).map((e) => (e as { kind: string }).kind)).toEqual(['claim_resolved', 'chow']);
    const s = r.state as MahjongState;
    expect(s.meld_groups[KEYS[1]!]![0]).toMatchObject({ kind: 'chow', owner: KEYS[1], from: KEYS[0] });
    expect(s.meld_groups[KEYS[1]!]![0]!.cards.map((c) => c.code)).toEqual(['4m', '2m', '3m']);
    expect(s.deck.zones['melds']![KEYS[1]!]!.length).toBe(3);
    expect(ok(p.results[4]!).state).toMatchObject({ phase: 'claim' });
  });

  it('a claimed kong draws a replacement tile and leaves a self-draw win allowed', () => {
    const p = playScenario(SCENARIOS['kongClaim']!);
    const r = ok(p.results[3]!);
    expect(kinds(r)).toEqual(['claim_response_received', 'claim_resolved', 'kong', 'replacement_draw']);
    expect(r.state).toMatchObject({ current_player: KEYS[2], must_discard_after_claim: false });
    expect((r.state as MahjongState).deck.hands[KEYS[2]!]!.length).toBe(11);
    expect(errorOf(p.results[4]!)).toBe('accepted');
  });

  it('an exhausted wall ends the hand without a winner; the last hand ends the match, equal scores are a draw', () => {
    const p = playScenario(SCENARIOS['wallExhausted']!);
    const r = ok(p.results[3]!);
    expect(kinds(r)).toEqual(['claim_response_received', 'claim_resolved', 'mahjong_wall_exhausted', 'mahjong_match_complete']);
    expect(r.events[3]).toEqual({ kind: 'mahjong_match_complete', winner: 'draw', winners: KEYS, scores: Object.fromEntries(KEYS.map((k) => [k, 25000])) });
    expect([r.completed, r.outcome]).toEqual([true, 'draw']);
    expect((r.state as MahjongState).last_result).toEqual({ kind: 'wall_exhausted', winner: '', points: 0 });
    expect(errorOf(p.results[4]!)).toBe('the Mahjong match is complete');
    const k = playScenario(SCENARIOS['kongOnEmptyWall']!);
    const kr = ok(k.results[0]!);
    expect(kinds(kr)).toEqual(['concealed_kong', 'mahjong_wall_exhausted', 'mahjong_hand_started']);
    expect(kr.state).toMatchObject({ hand_number: 2, dealer: KEYS[1], last_result: { kind: 'wall_exhausted', winner: '', points: 0 } });
  });

  it('seven pairs and thirteen orphans score their patterns', () => {
    const seven = ok(playScenario(SCENARIOS['sevenPairs']!).results[0]!);
    expect(seven.events[0]).toMatchObject({ kind: 'self_draw', win_kind: 'seven_pairs', points: 13 });
    expect(seven.outcome).toBe(KEYS[0]);
    const orphans = ok(playScenario(SCENARIOS['thirteenOrphans']!).results[0]!);
    expect(orphans.events[0]).toMatchObject({ kind: 'self_draw', win_kind: 'thirteen_orphans', points: 16 });
    expect((orphans.state as MahjongState).scores).toEqual({ [KEYS[0]!]: 48, [KEYS[1]!]: -16, [KEYS[2]!]: -16, [KEYS[3]!]: -16 });
  });
});

// ---------------------------------------------------------------------------------------------------
// Whole matches, each member choosing from its own view with the module's autoplay.

const allIds = (s: MahjongState) => [
  ...s.deck.draw_pile,
  ...s.deck.discard_pile,
  ...Object.values(s.deck.hands).flat(),
  ...Object.values(s.deck.zones).flatMap((z) => Object.values(z).flat()),
];

// These run at every step of every match: each assertion is built only when its plain check fails.
function checkPrivacy(views: readonly Record<string, unknown>[], hands: readonly string[][]): void {
  views.forEach((v, i) => {
    const text = JSON.stringify(v);
    if (text.includes('draw_pile')) expect(text).not.toContain('draw_pile');
    // Every 24-hex-digit run in the view (tile ids are such runs): none may be another seat's tile.
    const seen = new Set(text.match(/[0-9a-f]{24}/g) ?? []);
    const leaks = hands.flatMap((hand, j) => (j === i ? [] : hand.filter((id) => seen.has(id)).map((id) => `seat ${i} sees ${id} of seat ${j}`)));
    if (leaks.length) expect(leaks).toEqual([]);
  });
}

function checkStep(h: GroupHooks, state: MahjongState, total: number): Record<string, unknown>[] {
  const ids = allIds(state);
  if (ids.length !== 136) expect(ids.length).toBe(136);
  const distinct = new Set(ids).size;
  if (distinct !== 136) expect(distinct).toBe(136);
  const sum = Object.values(state.scores).reduce((a, b) => a + b, 0);
  if (sum !== total) expect(sum).toBe(total);
  const views = MEMBERS.map((m) => h.proto_group_view(state, m));
  checkPrivacy(
    views,
    KEYS.map((k) => state.deck.hands[k]!),
  );
  expectEqual(
    views.map((v) => (v as MahjongView).my_hand.map((c) => c.card_id)),
    KEYS.map((k) => state.deck.hands[k]),
  );
  return views;
}

/**
 * One match from the members' own views; in a claim window the responders answer in a random order.
 * `before` sees each state an action is taken from.
 */
function playMatch(options: Record<string, unknown>, seed: number, before?: (n: number, state: MahjongState) => void) {
  const h = hooks(options, seed);
  const rnd = mulberry32(seed * 7919);
  const total = 4 * ((options['starting_points'] as number | undefined) ?? 25000);
  let state = h.proto_group_initial_state(MEMBERS) as MahjongState;
  const actions: [string, Record<string, unknown>][] = [];
  const wins: string[] = [];
  const kinds = new Set<string>();
  let outcome: string | null = null;
  for (let n = 0; n < 5000 && outcome === null; n++) {
    const views = checkStep(h, state, total);
    const ready = MEMBERS.map((m, i) => autoplay(views[i]!, m, rnd));
    const who = ready.map((a, i) => (a ? i : -1)).filter((i) => i >= 0);
    if (!(who.length > 0)) expect(who.length).toBeGreaterThan(0);
    if (state.phase === 'discard') expectEqual(who, [KEYS.indexOf(state.current_player)]);
    const i = who[Math.floor(rnd() * who.length)]!;
    before?.(n, state);
    actions.push([KEYS[i]!, ready[i]!]);
    const r = ok(step(h, state, KEYS[i]!, ready[i]!));
    for (const e of r.events) {
      const kind = (e as { kind: string }).kind;
      kinds.add(kind);
      if (kind === 'self_draw' || kind === 'discard_win') wins.push((e as { win_kind: string }).win_kind);
    }
    state = r.state as MahjongState;
    if (r.completed) outcome = r.outcome;
  }
  for (const v of checkStep(h, state, total)) expect(autoplay(v, byKey((v as MahjongView).you.public_key), rnd)).toBeNull();
  return { h, state, actions, outcome, wins, kinds };
}

describe('Classical Mahjong: whole matches from the members own views', () => {
  const tally: string[] = [];
  it.each([1, 2, 3, 4, 5, 6])('seed %i plays four hands to completion, conserving tiles and points, hiding every hand', (seed) => {
    const { state, outcome, wins } = playMatch({}, seed);
    tally.push(...wins);
    expect(state.phase).toBe('completed');
    expect(state.hand_number).toBe(4);
    const high = Math.max(...Object.values(state.scores));
    const leaders = KEYS.filter((k) => state.scores[k] === high);
    expect(outcome).toBe(leaders.length === 1 ? leaders[0] : 'draw');
  });

  it('the autoplay wins hands, not only exhausts the wall', () => {
    expect(tally.length).toBeGreaterThan(5);
  });
});

describe('Classical Mahjong: recovery', () => {
  it('keeps only public facts across a leader change, and deals a fresh hand', () => {
    const { h, state } = playMatch({ deal_seed: 'rec', max_hands: 2 }, 4);
    const snap = h.proto_group_recovery_snapshot!(state);
    expect(snap).toEqual({ hand_number: 2, dealer_index: 1, restart_count: 0, scores: state.scores });
    expect(JSON.stringify(snap)).not.toContain('card_id');
    const restored = h.proto_group_restore!(structuredClone(snap), MEMBERS, 2) as MahjongState;
    expect(restored).toMatchObject({
      phase: 'discard',
      hand_number: 2,
      dealer_index: 1,
      dealer: KEYS[1],
      restart_count: 1,
      scores: state.scores,
      recovery_notice: 'The interrupted hidden wall was discarded after a Leader change.',
      last_result: null,
    });
    expect(restored.deck.hands[KEYS[1]!]!.length).toBe(14);
    const changed = h.proto_group_on_leader_changed!(restored, 'a'.repeat(64), 'b'.repeat(64));
    expect((changed.state as MahjongState).recovery_notice).toBe('Leader changed from aaaaaaaa to bbbbbbbb; the private hand was restarted.');
    expect(changed.events).toEqual([
      { kind: 'mahjong_hand_restarted_after_leader_change', old_leader: 'a'.repeat(64), new_leader: 'b'.repeat(64), hand_number: 2 },
    ]);
    expect(h.proto_group_member_left(restored, MEMBERS[2]!, 'timeout').events).toEqual([
      { kind: 'member_disconnected', public_key: KEYS[2], reason: 'timeout' },
    ]);
    expect(h.proto_group_member_joined(restored, MEMBERS[2]!).events).toEqual([{ kind: 'member_rejoined', public_key: KEYS[2], seat: 2 }]);
    // A checkpoint's numbers may arrive as text (Python's int()); junk is refused; a missing field defaults.
    const fromText = h.proto_group_restore!({ hand_number: '3', dealer_index: 6, scores: { [KEYS[0]!]: '7' } }, MEMBERS, 2) as MahjongState;
    expect(fromText).toMatchObject({ hand_number: 3, dealer_index: 2, dealer: KEYS[2], restart_count: 1, scores: { [KEYS[0]!]: 7, [KEYS[1]!]: 0 } });
    expect(() => h.proto_group_restore!({ hand_number: 'x' }, MEMBERS, 2)).toThrow();
    expect(() => h.proto_group_restore!({}, MEMBERS.slice(1), 2)).toThrow('Classical Mahjong requires exactly four active Members');
  });
});

describe('Classical Mahjong through the group leader', () => {
  const crypto = getCrypto();
  const seats = derivedSeats(crypto, 'mahjong', 4, 'm-');
  const { pk, members } = seats;
  const config = builtinGroupConfig('classical-mahjong');
  const table = (groupId: string, options: Record<string, unknown>, seed: number) =>
    startTable({ crypto, seats, config, groupId, hooks: mahjong.create(hostContext(options, seed)) as GroupHooks });

  /** One action by a member whose autoplay, reading its replica's view, has something to do. */
  function turn(leader: GroupLeader, replicas: GroupReplica[], seqs: number[], rnd: () => number) {
    const views = replicas.map((r) => r.view!);
    checkPrivacy(
      views,
      views.map((v) => (v['my_hand'] as { card_id: string }[]).map((c) => c.card_id)),
    );
    const ready = members.map((m, i) => autoplay(views[i]!, m, rnd));
    const who = ready.map((a, i) => (a ? i : -1)).filter((i) => i >= 0);
    if (!(who.length > 0)) expect(who.length).toBeGreaterThan(0);
    const i = who[Math.floor(rnd() * who.length)]!;
    const { envelopes, receipt } = leader.applyInput({ actor_public_key: pk(i), client_seq: ++seqs[i]!, action: ready[i]! });
    if (receipt.status !== 'accepted') expect(receipt.status).toBe('accepted');
    return envelopes;
  }

  it('plays a match to completion with every replica verifying every envelope; no checkpoint holds a tile', () => {
    const { leader, replicas, deliver } = table('grp-mahjong', { max_hands: 2 }, 21);
    const seqs = [0, 0, 0, 0];
    const rnd = mulberry32(5);
    for (let n = 0; n < 3000 && !leader.completed; n++) {
      deliver(turn(leader, replicas, seqs, rnd));
      const checkpoint = JSON.stringify(replicas[1]!.checkpoint);
      if (checkpoint.includes('card_id')) expect(checkpoint).not.toContain('card_id');
    }
    expect(leader.completed).toBe(true);
    const view = replicas[0]!.view as MahjongView;
    expect(view.phase).toBe('completed');
    const scores = view.scores;
    expect(Object.values(scores).reduce((a, b) => a + b, 0)).toBe(100000);
    const high = Math.max(...Object.values(scores));
    const leaders = Object.keys(scores).filter((k) => scores[k] === high);
    expect(leader.outcome).toBe(leaders.length === 1 ? leaders[0] : 'draw');
    for (const r of replicas) expect([r.seq, r.frameHash]).toEqual([leader.seq, leader.frameHash]);
    for (const r of replicas)
      expect(
        autoplay(
          r.view!,
          members.find((m) => m.public_key === r.viewerPublicKey)!,
          rnd,
        ),
      ).toBeNull();
  }, 180_000);

  it('a leader change mid-hand discards the hidden wall, keeps the scores, and the match still completes', () => {
    const tbl = table('grp-mahjong-f', { max_hands: 2 }, 22);
    const { replicas, deliver } = tbl;
    let { leader } = tbl;
    const seqs = [0, 0, 0, 0];
    const rnd = mulberry32(6);
    let failedOver = false;
    for (let n = 0; n < 3000 && !leader.completed; n++) {
      deliver(turn(leader, replicas, seqs, rnd));
      if (!failedOver && n === 40 && !leader.completed) {
        failedOver = true;
        const before = replicas[2]!.checkpoint!;
        expect(JSON.stringify(before)).not.toContain('draw_pile');
        const saved = before['protocol_state'] as { hand_number: number; dealer_index: number; scores: Record<string, number> };
        const hand = (replicas[2]!.view as MahjongView).my_hand.map((c) => c.card_id);
        leader = tbl.failover(mahjong.create(hostContext({ max_hands: 2 }, 23)) as GroupHooks, 2, before);
        const v = replicas[2]!.view as MahjongView;
        expect(v).toMatchObject({
          phase: 'discard',
          hand_number: saved.hand_number,
          restart_count: 1,
          scores: saved.scores,
          recovery_notice: `Leader changed from ${pk(0).slice(0, 8)} to ${pk(2).slice(0, 8)}; the private hand was restarted.`,
        });
        expect(v.dealer).toBe(members[saved.dealer_index]!.public_key);
        expect(v.my_hand.map((c) => c.card_id)).not.toEqual(hand);
        expect(Object.values(v.melds).flat()).toEqual([]);
      }
    }
    expect(failedOver).toBe(true);
    expect(leader.completed).toBe(true);
    for (const r of replicas) expect([r.seq, r.frameHash]).toEqual([leader.seq, leader.frameHash]);
  }, 180_000);
});

// ---------------------------------------------------------------------------------------------------
// The reference's own hooks, run by python3, replaying the same inputs. Every request of this file is built
// before its first test and answered by one python3 process, which runs while the other tests do; each
// test below then compares its own answer.

const haveRef = needReferencePython(['aigenora.proto.hooks', 'aigenora.proto.mahjong'], 'the reference cross-check of Classical Mahjong');
const viewOps = () => KEYS.map((k) => ({ op: 'view', viewer: k }));

/** A request for classical-mahjong-ref.py and what our side says to each of its outputs. */
interface RefCase {
  request: Record<string, unknown>;
  ours: unknown[];
}

/** The tile rules on hand-built and random hands. */
function shapesCase(): RefCase {
  const rnd = mulberry32(77);
  const wall = tileFaces().flatMap((f) => [f, f, f, f]);
  const steps: Record<string, unknown>[] = [];
  const ours: unknown[] = [];
  const guard = (f: () => unknown) => {
    try {
      return { result: f() };
    } catch (e) {
      return { error: (e as Error).message };
    }
  };
  const add = (s: Record<string, unknown>, f: () => unknown) => {
    steps.push(s);
    ours.push(guard(f));
  };
  for (const [, codes, melds] of SHAPES) add({ op: 'win_kind', tiles: t(...codes), meld_count: melds }, () => winKind(t(...codes), melds));
  add({ op: 'win_kind', tiles: t('1m'), meld_count: 5 }, () => winKind(t('1m'), 5));
  add({ op: 'win_kind', tiles: [{ code: 'x' }], meld_count: 0 }, () => winKind([{ code: 'x' }], 0));
  for (let i = 0; i < 400; i++) {
    const melds = Math.floor(rnd() * 5);
    // Hands built from melds and a pair (often winning), with a tile swapped now and then.
    const pool = [...wall].sort(() => rnd() - 0.5);
    const size = 3 * (4 - melds) + 2;
    let hand: TileFace[];
    if (rnd() < 0.5) {
      const suit = 'mps'[Math.floor(rnd() * 3)]!;
      const codes: string[] = [];
      while (codes.length < size - 2) {
        const r = 1 + Math.floor(rnd() * 7);
        codes.push(...(rnd() < 0.5 ? run(suit, r) : [`${r}${suit}`, `${r}${suit}`, `${r}${suit}`]));
      }
      const pair = `${1 + Math.floor(rnd() * 9)}${'mps'[Math.floor(rnd() * 3)]}`;
      codes.push(pair, pair);
      if (rnd() < 0.3) codes[Math.floor(rnd() * codes.length)] = tileFaces()[Math.floor(rnd() * 34)]!.code;
      hand = t(...codes);
    } else hand = pool.slice(0, rnd() < 0.9 ? size : size + 1);
    add({ op: 'win_kind', tiles: hand, meld_count: melds }, () => winKind(hand, melds));
    const meldKinds = Array.from({ length: melds }, () => ['chow', 'pung', 'kong', 'concealed_kong'][Math.floor(rnd() * 4)]!);
    const kind = ['standard', 'seven_pairs', 'thirteen_orphans'][Math.floor(rnd() * 3)]!;
    const [selfDraw, concealed] = [rnd() < 0.5, rnd() < 0.5];
    add({ op: 'patterns', tiles: hand, win_kind: kind, meld_kinds: meldKinds, self_draw: selfDraw, concealed }, () =>
      scorePatterns(hand, { winKind: kind, meldKinds, selfDraw, concealed }),
    );
    const discard = pool[size + 1]!;
    add({ op: 'chow', hand, discard }, () => chowSequences(hand, discard));
  }
  return { request: { steps }, ours };
}

/** A hand-built table: its start, then each action and the four views after it. */
function tableCase(name: string): RefCase {
  const sc = SCENARIOS[name]!;
  const p = playScenario(sc);
  const steps: Record<string, unknown>[] = [{ op: 'set_state', state: p.start }, ...viewOps()];
  const ours: unknown[] = [{ ok: true }, ...MEMBERS.map((m) => ({ view: p.h.proto_group_view(p.start, m) }))];
  p.actions.forEach(([actor, action], i) => {
    steps.push({ op: 'act', actor, action }, ...viewOps());
    ours.push(p.results[i], ...p.views[i]!.map((view) => ({ view })));
  });
  return { request: { options: { deal_seed: 'table', ...sc.options }, members: MEMBERS, steps }, ours };
}

/** The refused action tried before every fifth action of a seeded match: a discard by someone who may not act now. */
function refusalAt(state: MahjongState): [string, Record<string, unknown>] {
  const wrong = state.phase === 'discard' ? KEYS.find((k) => k !== state.current_player)! : state.last_discard!.public_key;
  return [wrong, { kind: 'discard', card_id: state.deck.hands[wrong]![0] }];
}

/**
 * A seeded match, played from the members' own views: the request replays its actions with the four views
 * before each and a refused action every fifth step, then the snapshot, a restore from it and the leader
 * change. (Our side of each step is worked out by the test, as it compares: kept from here to there, the
 * states and views of three matches would weigh on every test between.)
 */
function matchCase(seed: number) {
  const options = { deal_seed: `cross-${seed}`, max_hands: 2, starting_points: 1000 };
  const refusals = new Map<number, [string, Record<string, unknown>]>();
  const { h, state, actions, outcome, kinds } = playMatch(options, seed, (n, s) => {
    if (n % 5 === 0) refusals.set(n, refusalAt(s));
  });
  const steps: Record<string, unknown>[] = [];
  actions.forEach(([actor, action], n) => {
    const refused = refusals.get(n);
    if (refused) steps.push({ op: 'act', actor: refused[0], action: refused[1] });
    steps.push(...viewOps(), { op: 'act', actor, action });
  });
  const snapshot = h.proto_group_recovery_snapshot!(state);
  steps.push({ op: 'snapshot' }, { op: 'restore', checkpoint: snapshot, members: MEMBERS }, { op: 'leader_changed', old: KEYS[0], new: KEYS[1] });
  return { request: { options, members: MEMBERS, steps }, h, actions, outcome, kinds };
}

/** Our side of a seeded match's request, one output at a time, as the reference prints it. */
function* matchOutputs(h: GroupHooks, actions: [string, Record<string, unknown>][]): Generator<unknown> {
  let state = h.proto_group_initial_state(MEMBERS) as MahjongState;
  yield { state };
  for (const [n, [actor, action]] of actions.entries()) {
    if (n % 5 === 0) {
      // A refused action on the way, from someone who may not act now: the same text.
      const [wrong, bad] = refusalAt(state);
      yield step(h, state, wrong, bad);
    }
    for (const m of MEMBERS) yield { view: h.proto_group_view(state, m) };
    const r = ok(step(h, state, actor, action));
    yield r;
    state = r.state as MahjongState;
  }
  const snapshot = h.proto_group_recovery_snapshot!(state);
  yield { snapshot };
  state = h.proto_group_restore!(structuredClone(snapshot), MEMBERS, 2) as MahjongState;
  yield { state };
  const changed = h.proto_group_on_leader_changed!(structuredClone(state), KEYS[0]!, KEYS[1]!);
  yield { state: changed.state, events: changed.events };
}

const CHECKPOINTS: Record<string, unknown>[] = [
  {},
  { hand_number: 3, dealer_index: 2, restart_count: 4, scores: Object.fromEntries(KEYS.map((k, i) => [k, 100 * i])) },
  { hand_number: '3', dealer_index: 6, scores: { [KEYS[0]!]: '7', [KEYS[2]!]: 2.9 } },
  { hand_number: 'x' },
  { restart_count: ' 2 ', dealer_index: -1 },
];

/** Restores from hand-made checkpoints. */
function restoreCase(): RefCase {
  const h = hooks({ deal_seed: 'restore' });
  const ours = CHECKPOINTS.map((checkpoint) => {
    try {
      return { state: h.proto_group_restore!(structuredClone(checkpoint), MEMBERS, 2) };
    } catch (e) {
      return { error: (e as Error).message };
    }
  });
  return { request: { options: { deal_seed: 'restore' }, steps: CHECKPOINTS.map((checkpoint) => ({ op: 'restore', checkpoint, members: MEMBERS })) }, ours };
}

const SEEDS = [1, 2, 3];
const cases: {
  shapes?: Built<RefCase>;
  tables: Record<string, Built<RefCase>>;
  matches: Record<number, Built<ReturnType<typeof matchCase>>>;
  restore?: Built<RefCase>;
} = { tables: {}, matches: {} };

const reference = referenceRequests(haveRef, 'classical-mahjong-ref.py', (requests) => {
  cases.shapes = build(shapesCase);
  for (const name of Object.keys(SCENARIOS)) cases.tables[name] = build(() => tableCase(name));
  for (const seed of SEEDS) cases.matches[seed] = build(() => matchCase(seed));
  cases.restore = build(restoreCase);
  requests.addBuilt([cases.shapes, ...Object.values(cases.tables), ...SEEDS.map((s) => cases.matches[s]), cases.restore]);
});
/** Our side of a case and the reference's outputs for it. */
const answered = <T>(c: Built<T> | undefined) => reference.answered<T, Record<string, unknown>[]>(c);

describe.skipIf(!haveRef)('Classical Mahjong against the reference hooks', () => {
  it('judges shapes, scores patterns and lists chows as the reference does, on hand-built and random hands', async () => {
    const { mine, theirs } = await answered(cases.shapes);
    expectEqual(theirs, mine.ours);
  });

  it.each(Object.keys(SCENARIOS))('hand-built table %s: the same refusals, states, events, outcomes and views', async (name) => {
    const { mine, theirs } = await answered(cases.tables[name]);
    const ours = mine.ours;
    expect(theirs.length).toBe(ours.length + 1);
    for (let i = 0; i < ours.length; i++) expectEqual(theirs[i + 1], ours[i], `step ${i}`);
  });

  const covered = new Set<string>();
  it.each(SEEDS)('seeded match %i: the same deal, states, events, views, outcome, and refusals on the way', async (seed) => {
    const { mine, theirs } = await answered(cases.matches[seed]);
    for (const k of mine.kinds) covered.add(k);
    // The first state, then per action a refusal every fifth step, four views and the result; then recovery.
    const n = mine.actions.length;
    expect(theirs.length).toBe(1 + Math.ceil(n / 5) + 5 * n + 3);
    let i = 0;
    for (const ours of matchOutputs(mine.h, mine.actions)) {
      expectEqual(theirs[i], ours, `step ${i}`);
      i += 1;
    }
    expect(i).toBe(theirs.length);
    expect((theirs.at(-4) as { outcome: string }).outcome).toBe(mine.outcome);
  });

  it('restores from checkpoints as the reference does: defaults, numbers as text, a dealer index past the table', async () => {
    const { mine, theirs } = await answered(cases.restore);
    const ours = mine.ours as ({ state: unknown } | { error: string })[];
    expect(ours.map((o) => ('error' in o ? o.error : 'restored'))).toEqual([
      'restored',
      'restored',
      'restored',
      "invalid literal for int() with base 10: 'x'",
      'restored',
    ]);
    expectEqual(theirs, ours);
  });

  it('the seeded matches compared met claims of every kind, wins and a drawn-out wall', () => {
    for (const k of ['mahjong_discard', 'mahjong_draw', 'claim_resolved', 'pung', 'chow', 'mahjong_hand_started', 'mahjong_match_complete'])
      expect(covered, k).toContain(k);
    expect(['self_draw', 'discard_win'].some((k) => covered.has(k))).toBe(true);
  });
});
