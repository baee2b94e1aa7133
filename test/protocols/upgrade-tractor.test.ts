// Upgrade (Tractor): the reference's spec.json byte for byte (so its protocol id is the reference's), the
// tractor rules on hand-built cards (effective suits, shapes, follow obligations, trick winners), each
// refusal text, hand scoring and level movement, whole matches played by each member's autoplay from its
// own view (directly and through the group leader with verifying replicas, with a leader change), and,
// where python3 imports the reference, the reference's hooks replaying the same seeded matches: same
// deal, states, events, refusals, views and recovery.
import { describe, expect, it } from 'vitest';
import { needReferencePython } from '../shared/require.js';
import { getCrypto } from '../../ts/crypto/index.js';
import { seeded } from '../../ts/engine/local.js';
import type { GroupHooks, GroupMember } from '../../ts/hooks/types.js';
import { findBuiltin } from '../../ts/protocols/index.js';
import upgrade, { trickWinner, type Play, type UpgradeState, type UpgradeView } from '../../ts/protocols/upgrade-tractor/hooks.js';
import {
  cardStrength,
  classifyPlay,
  effectiveSuit,
  standardFacesWithJokers,
  validateFollow,
  type Shape,
  type TrumpContext,
} from '../../ts/protocols/upgrade-tractor/tractor.js';
import { expectEqual, expectOursCanonical as expectCanonical } from './fast-expect.js';
import { attempt, fourSeats, hostContext, referenceSpecTests } from './group-fixtures.js';
import { builtinGroupConfig, derivedSeats, startTable } from './group-table.js';
import { build, built, referenceRequests, type Built } from './reference-batch.js';

const ID = 'acdf987218b5382bbf5f4c0008d6766e97ca6c1ae12f3cf2becd2afa9ad6f88e';
const FOLDER = 'upgrade-tractor';

const hooks = (options: Record<string, unknown> = {}, seed = 1) => upgrade.create(hostContext(options, seed)) as GroupHooks;
const MEMBERS = fourSeats('abcd', 'm-');
const [M0, M1, M2, M3] = MEMBERS as [GroupMember, GroupMember, GroupMember, GroupMember];
const byKey = (key: string) => MEMBERS.find((m) => m.public_key === key)!;
const autoplay = upgrade.autoplay!;

// Card faces by code: '5H', '10S', 'QC', 'SJ', 'BJ'.
const SUIT: Record<string, string> = { C: 'clubs', D: 'diamonds', H: 'hearts', S: 'spades' };
const RANK: Record<string, number> = { J: 11, Q: 12, K: 13, A: 14 };
function f(code: string): { suit: string; rank: number } {
  if (code === 'SJ') return { suit: 'joker', rank: 16 };
  if (code === 'BJ') return { suit: 'joker', rank: 17 };
  const r = code.slice(0, -1);
  return { suit: SUIT[code.at(-1)!]!, rank: RANK[r] ?? Number(r) };
}
const cs = (text: string) => text.split(' ').filter(Boolean).map(f);
const T2H: TrumpContext = { level_rank: 2, trump_suit: 'hearts' };
const NT5: TrumpContext = { level_rank: 5, trump_suit: null };

describe('Upgrade (Tractor): spec and registration', () => {
  referenceSpecTests(FOLDER, ID, "the reference's Upgrade (Tractor) spec");

  it('is registered as upgrade-tractor-v1 with the reference profiles', () => {
    const b = findBuiltin('upgrade-tractor-v1')!;
    expect(b.folder).toBe(FOLDER);
    expect(b.profiles['quick']!.options).toEqual({ start_level: 2, target_level: 4, max_hands: 8 });
    expect(b.profiles['standard']!.options).toEqual({ start_level: 2, target_level: 14, max_hands: 16 });
  });
});

// Hand-built rule cases; each is also replayed through the reference's helpers below.
type RuleCase =
  | { op: 'classify'; cards: { suit: string; rank: number }[]; level_rank: number; trump_suit: string | null }
  | {
      op: 'follow';
      hand: { suit: string; rank: number }[];
      cards: { suit: string; rank: number }[];
      lead: Shape;
      level_rank: number;
      trump_suit: string | null;
    }
  | { op: 'winner'; trick: Play[]; level_rank: number; trump_suit: string | null }
  | { op: 'strength'; card: { suit: string; rank: number }; level_rank: number; trump_suit: string | null };
const runRule = (r: RuleCase) =>
  attempt((): unknown => {
    const c = { level_rank: r.level_rank, trump_suit: r.trump_suit };
    if (r.op === 'classify') return classifyPlay(r.cards, c);
    if (r.op === 'follow') return validateFollow(r.hand, r.cards, r.lead, c) ?? null;
    if (r.op === 'winner') return trickWinner(r.trick, c);
    return cardStrength(r.card, c);
  });
const shapeOf = (text: string, c: TrumpContext) => classifyPlay(cs(text), c);

const CLASSIFY: [string, string, TrumpContext, Partial<Shape> | string][] = [
  ['single', '7C', T2H, { kind: 'single', count: 1, suit: 'clubs', pair_count: 0 }],
  ['a level card is trump', '2S', T2H, { kind: 'single', suit: 'trump' }],
  ['pair', 'KS KS', T2H, { kind: 'pair', suit: 'spades', pair_count: 1 }],
  ['two different cards are a throw', 'KS QS', T2H, { kind: 'throw', pair_count: 0 }],
  ['tractor skips the level rank', '3C 3C AC AC', { level_rank: 2, trump_suit: 'hearts' }, { kind: 'throw' }],
  ['tractor over the level gap', '9D 9D JD JD', { level_rank: 10, trump_suit: 'hearts' }, { kind: 'tractor', tractor_length: 2, pair_count: 2 }],
  ['three-pair tractor', '6S 6S 7S 7S 8S 8S', T2H, { kind: 'tractor', tractor_length: 3, count: 6 }],
  ['trump A pair into off-suit level pair', 'AH AH 2S 2S', T2H, { kind: 'tractor', suit: 'trump' }],
  ['off-suit level pair into trump-suit level pair', '2C 2C 2H 2H', T2H, { kind: 'tractor' }],
  ['two off-suit level pairs are no tractor', '2C 2C 2S 2S', T2H, { kind: 'throw', pair_count: 2 }],
  ['trump level pair into small jokers', '2H 2H SJ SJ', T2H, { kind: 'tractor' }],
  ['jokers in no-trump', 'SJ SJ BJ BJ', NT5, { kind: 'tractor', suit: 'trump' }],
  ['level pair into small jokers in no-trump', '5D 5D SJ SJ', NT5, { kind: 'tractor' }],
  ['mixed effective suits', '7C 7D', T2H, 'all cards in a play must share an effective suit'],
  ['a trump-suit card with a joker', '9H BJ', T2H, { kind: 'throw', suit: 'trump' }],
  ['throw with a pair', 'AS AS KS 3S', T2H, { kind: 'throw', pair_count: 1 }],
  ['no cards', '', T2H, 'a play must contain at least one card'],
];

const FOLLOW: [string, string, string, string, TrumpContext, string | null][] = [
  // name, hand, selected, lead, context, refusal (null = legal)
  ['same count', '7C 8C 9C', '7C 8C', '3C', T2H, 'a follower must play the same number of cards'],
  ['must follow suit', '7C 8D', '8D', '3C', T2H, 'the follower must exhaust the led effective suit'],
  ['off-suit when void', '8D 9S', '9S', '3C', T2H, null],
  ['short suit plus another', '7C 8D 9S', '7C 9S', 'KC KC', T2H, null],
  ['short suit not exhausted', '7C 8C 9S', '7C 9S', 'KC KC', T2H, 'the follower must exhaust the led effective suit'],
  ['a held pair follows a pair', '7C 7C 8C', '7C 8C', 'KC KC', T2H, 'the follower must preserve available pairs'],
  ['pair follows pair', '7C 7C 8C', '7C 7C', 'KC KC', T2H, null],
  ['no pair held', '7C 8C 9C', '7C 9C', 'KC KC', T2H, null],
  ['trump follows trump: level and joker count', '2S BJ 9C', '2S BJ', 'AH 3H', T2H, null],
  ['a held tractor follows a tractor', '6S 6S 7S 7S 9S 9S 10S 10S', '6S 6S 9S 9S', 'QS QS KS KS', T2H, 'an available tractor must follow a tractor'],
  ['tractor follows tractor', '6S 6S 7S 7S 9S 9S 10S', '6S 6S 7S 7S', 'QS QS KS KS', T2H, null],
  ['pairs without a tractor', '6S 6S 8S 8S 10S', '6S 6S 8S 8S', 'QS QS KS KS', T2H, null],
  ['one pair of a tractor', '6S 6S 8S 9S 10S', '8S 9S 10S 6S', 'QS QS KS KS', T2H, 'the follower must preserve available pairs'],
  ['throw needs its pairs', '6S 6S 8S 9S', '6S 8S 9S', 'AS AS KS', T2H, 'the follower must preserve available pairs'],
];

const PLAYS = (specs: [number, string][], c: TrumpContext): Play[] =>
  specs.map(([seat, text], i) => {
    const cards = cs(text).map((x, j) => ({ ...x, code: '', label: '', color: 'red' as const, card_id: `${seat}-${j}`, copy: 0 }));
    let shape: Shape;
    try {
      shape = classifyPlay(cards, c);
    } catch {
      shape = { kind: 'mixed', count: cards.length, suit: 'mixed', pair_count: 0 };
    }
    return { public_key: MEMBERS[seat]!.public_key, seat, team: seat % 2 ? 'team1' : 'team0', cards, shape: i === 0 ? classifyPlay(cards, c) : shape };
  });
const WINNERS: [string, [number, string][], TrumpContext, number][] = [
  [
    'highest of the led suit',
    [
      [0, '9C'],
      [1, 'KC'],
      [2, 'AC'],
      [3, '3C'],
    ],
    T2H,
    2,
  ],
  [
    'first of equals wins',
    [
      [0, 'AC'],
      [1, 'AC'],
      [2, '3C'],
      [3, '4C'],
    ],
    T2H,
    0,
  ],
  [
    'off-suit never wins',
    [
      [0, '9C'],
      [1, 'AS'],
      [2, '3C'],
      [3, '4D'],
    ],
    T2H,
    0,
  ],
  [
    'trump beats the led suit',
    [
      [0, 'AC'],
      [1, '3H'],
      [2, '4C'],
      [3, 'KC'],
    ],
    T2H,
    1,
  ],
  [
    'big joker over trump level card',
    [
      [0, '3H'],
      [1, '2H'],
      [2, 'BJ'],
      [3, '2S'],
    ],
    T2H,
    2,
  ],
  [
    'trump-suit level over off-suit level',
    [
      [0, '2S'],
      [1, '2H'],
      [2, 'AH'],
      [3, '2D'],
    ],
    T2H,
    1,
  ],
  [
    'pairs: a trump pair beats the led pair',
    [
      [0, 'KC KC'],
      [1, '3H 3H'],
      [2, 'AC AC'],
      [3, '4C 5C'],
    ],
    T2H,
    1,
  ],
  [
    'pairs: two singles never win',
    [
      [0, '3C 3C'],
      [1, 'AC KC'],
      [2, '4C 4C'],
      [3, 'BJ SJ'],
    ],
    T2H,
    2,
  ],
  [
    'tractors: higher tractor wins',
    [
      [0, '6S 6S 7S 7S'],
      [1, '9S 9S 10S 10S'],
      [2, 'AS AS KS QS'],
      [3, '3C 4C 5C 6C'],
    ],
    T2H,
    1,
  ],
  [
    'throw: same suit stronger throw',
    [
      [0, 'AS 3S'],
      [1, 'KS QS'],
      [2, 'AS 4S'],
      [3, '3H 4C'],
    ],
    T2H,
    2,
  ],
  [
    'throw: trump beats the led suit, a stronger trump throw overtakes it',
    [
      [0, 'AS KS'],
      [1, '3H 4H'],
      [2, 'AS QS'],
      [3, 'BJ 2H'],
    ],
    T2H,
    3,
  ],
  [
    'throw: the first trump throw holds against a weaker one',
    [
      [0, 'AS KS'],
      [1, '3H 4H'],
      [2, 'AS QS'],
      [3, '3H 4H'],
    ],
    T2H,
    1,
  ],
  [
    'throw: a mixed discard never wins',
    [
      [0, 'QS 3S'],
      [1, 'AC BJ'],
      [2, '4S 5S'],
      [3, '6D 7D'],
    ],
    T2H,
    0,
  ],
];

const RULE_CASES: RuleCase[] = [
  ...CLASSIFY.map(([, text, c]): RuleCase => ({ op: 'classify', cards: cs(text), ...c })),
  ...FOLLOW.map(([, hand, sel, lead, c]): RuleCase => ({ op: 'follow', hand: cs(hand), cards: cs(sel), lead: shapeOf(lead, c), ...c })),
  ...WINNERS.map(([, specs, c]): RuleCase => ({ op: 'winner', trick: PLAYS(specs, c), ...c })),
  ...['BJ', 'SJ', '2H', '2S', 'AH', '3H', 'AS', '5C', '5S'].flatMap((code) => [
    { op: 'strength' as const, card: f(code), ...T2H },
    { op: 'strength' as const, card: f(code), ...NT5 },
  ]),
];

describe('Upgrade (Tractor): card rules', () => {
  it('has the reference faces: 52 cards then the small and big joker', () => {
    const faces = standardFacesWithJokers();
    expect(faces.length).toBe(54);
    expect(faces[0]).toEqual({ code: '2C', suit: 'clubs', rank: 2, label: '2C', color: 'black' });
    expect(faces[22]).toEqual({ code: 'JD', suit: 'diamonds', rank: 11, label: 'JD', color: 'red' });
    expect(faces[53]).toEqual({ code: 'BJ', suit: 'joker', rank: 17, label: 'Big Joker', color: 'red' });
  });

  it('makes jokers, level cards and the trump suit one effective suit', () => {
    expect(['BJ', 'SJ', '2S', '2H', '7H', '7S'].map((c) => effectiveSuit(f(c), T2H))).toEqual(['trump', 'trump', 'trump', 'trump', 'trump', 'spades']);
    expect(['7H', '5D'].map((c) => effectiveSuit(f(c), NT5))).toEqual(['hearts', 'trump']);
    expect(cardStrength(f('BJ'), T2H)).toEqual([1, 1000]);
    expect(cardStrength(f('2H'), T2H)).toEqual([1, 980]);
    expect(cardStrength(f('2S'), T2H)).toEqual([1, 970]);
    expect(cardStrength(f('AH'), T2H)).toEqual([1, 14]);
    expect(cardStrength(f('AS'), T2H)).toEqual([0, 14]);
    expect(cardStrength(f('5C'), NT5)).toEqual([1, 970]);
  });

  it.each(CLASSIFY)('classifies %s', (_n, text, c, expected) => {
    if (typeof expected === 'string') expect(() => classifyPlay(cs(text), c)).toThrow(expected);
    else expect(classifyPlay(cs(text), c)).toMatchObject(expected);
  });

  it.each(FOLLOW)('follow: %s', (_n, hand, sel, lead, c, refusal) => {
    const run = () => validateFollow(cs(hand), cs(sel), shapeOf(lead, c), c);
    if (refusal) expect(run).toThrow(refusal);
    else expect(run).not.toThrow();
  });

  it('refuses a malformed lead', () => {
    expect(() => validateFollow(cs('3C'), cs('3C'), { kind: 'mixed', count: 1, suit: 'mixed', pair_count: 0 }, T2H)).toThrow('lead classification is invalid');
    expect(() => validateFollow(cs('3C 3C 4C 4C'), cs('3C 3C 4C 4C'), { kind: 'tractor', count: 4, suit: 'clubs', pair_count: 2 }, T2H)).toThrow(
      'tractor lead length is invalid',
    );
  });

  it.each(WINNERS)('trick winner: %s', (_n, specs, c, expected) => {
    expect(trickWinner(PLAYS(specs, c), c)).toBe(expected);
  });
});

/**
 * A table in trick play with chosen hands: the seeded deal, everyone passes (seat 0 declares by default),
 * seat 0 buries, then the hands and kitty are replaced by the cards named (the rest go to the discard).
 */
function table(hands: string[], kitty: string, over: Partial<UpgradeState> = {}, options: Record<string, unknown> = { deal_seed: 'table' }) {
  const h = hooks(options);
  let s = h.proto_group_initial_state(MEMBERS) as UpgradeState;
  for (const m of MEMBERS) s = h.proto_group_handle(s, m, { kind: 'pass_declare' }).state as UpgradeState;
  s = h.proto_group_handle(s, M0, { kind: 'bury', card_ids: s.deck.hands[M0.public_key]!.slice(0, 8) }).state as UpgradeState;
  Object.assign(s, over);
  const free = Object.values(s.deck.catalog);
  const take = (code: string) => {
    const { suit, rank } = f(code);
    const at = free.findIndex((c) => c.suit === suit && c.rank === rank);
    if (at < 0) throw new Error(`no ${code} left`);
    return free.splice(at, 1)[0]!.card_id;
  };
  MEMBERS.forEach((m, i) => (s.deck.hands[m.public_key] = hands[i]!.split(' ').filter(Boolean).map(take)));
  s.deck.zones = { kitty: { table: kitty.split(' ').filter(Boolean).map(take) } };
  s.deck.draw_pile = [];
  s.deck.discard_pile = free.map((c) => c.card_id);
  const ids = (seat: number, text: string) => {
    const hand = [...s.deck.hands[MEMBERS[seat]!.public_key]!];
    return text.split(' ').map((code) => {
      const { suit, rank } = f(code);
      const at = hand.findIndex((id) => s.deck.catalog[id]!.suit === suit && s.deck.catalog[id]!.rank === rank);
      return hand.splice(at, 1)[0]!;
    });
  };
  return { h, s, ids };
}

describe('Upgrade (Tractor): declaration and kitty', () => {
  it('validates its options as the reference does', () => {
    expect(() => hooks({ start_level: 1 }).proto_group_initial_state(MEMBERS)).toThrow('start_level must be between 2 and 14');
    expect(() => hooks({ target_level: 15 }).proto_group_initial_state(MEMBERS)).toThrow('target_level must be between 3 and 14');
    expect(() => hooks({ start_level: 5, target_level: 5 }).proto_group_initial_state(MEMBERS)).toThrow('target_level must be higher than start_level');
    expect(() => hooks({ max_hands: 0 }).proto_group_initial_state(MEMBERS)).toThrow('max_hands must be between 1 and 64');
    expect(() => hooks({ start_level: true }).proto_group_initial_state(MEMBERS)).toThrow('start_level must be between 2 and 14');
    expect(() => hooks().proto_group_initial_state(MEMBERS.slice(0, 3))).toThrow('Upgrade requires exactly four active Members');
  });

  it('deals 25 each with an eight-card kitty; declarations in any order; the strongest takes the kitty and buries eight', () => {
    const h = hooks({ deal_seed: 'declare', start_level: 7, target_level: 9 });
    let s = h.proto_group_initial_state(MEMBERS) as UpgradeState;
    expect(Object.values(s.deck.hands).map((x) => x.length)).toEqual([25, 25, 25, 25]);
    expect(s.deck.draw_pile.length).toBe(8);
    expect([s.phase, s.current_player, s.level_rank, s.starter]).toEqual(['declaration', '', 7, M0.public_key]);
    // Put known cards in seat 1 and seat 3's hands by swapping ids between hands (conservation holds).
    const find = (suit: string, rank: number, copy: number) =>
      Object.values(s.deck.catalog).find((c) => c.suit === suit && c.rank === rank && c.copy === copy)!.card_id;
    const place = (seat: number, id: string) => {
      for (const hand of [...Object.values(s.deck.hands), s.deck.draw_pile]) if (hand.includes(id)) hand.splice(hand.indexOf(id), 1);
      s.deck.hands[MEMBERS[seat]!.public_key]!.push(id);
    };
    const [s7a, s7b, h7, sj1, sj2, bj1, c3a, c3b] = [
      find('spades', 7, 0),
      find('spades', 7, 1),
      find('hearts', 7, 0),
      find('joker', 16, 0),
      find('joker', 16, 1),
      find('joker', 17, 0),
      find('clubs', 3, 0),
      find('clubs', 3, 1),
    ];
    for (const id of [s7a, s7b, h7, bj1, c3a, c3b]) place(1, id);
    for (const id of [sj1, sj2]) place(3, id);
    // Rebalance: move extra cards from seat 1 to the kitty pile and from other hands so 25/25/25/25 + 8 holds.
    const all = [...Object.values(s.deck.hands).flat(), ...s.deck.draw_pile];
    const keep = new Set([s7a, s7b, h7, bj1, c3a, c3b, sj1, sj2]);
    const rest = all.filter((id) => !keep.has(id));
    const deal = (fixed: string[]) => [...fixed, ...rest.splice(0, 25 - fixed.length)];
    s.deck.hands = {
      [M0.public_key]: deal([]),
      [M1.public_key]: deal([s7a, s7b, h7, bj1, c3a, c3b]),
      [M2.public_key]: deal([]),
      [M3.public_key]: deal([sj1, sj2]),
    };
    s.deck.draw_pile = rest;
    const bad = (actor: GroupMember, action: Record<string, unknown>, text: string) =>
      expect(() => h.proto_group_handle(structuredClone(s), actor, action)).toThrow(text);
    bad(M1, { kind: 'play', card_ids: [h7] }, 'declaration accepts pass_declare or declare_trump');
    bad(M1, { kind: 'declare_trump', card_ids: [] }, 'card_ids must contain 1-2 unique ids');
    bad(M1, { kind: 'declare_trump', card_ids: [h7, h7] }, 'card_ids must contain 1-2 unique ids');
    bad(M1, { kind: 'declare_trump', card_ids: [h7, s7a, s7b] }, 'card_ids must contain 1-2 unique ids');
    bad(M1, { kind: 'declare_trump', card_ids: [1] }, 'card_ids must contain 1-2 unique ids');
    bad(M1, { kind: 'declare_trump', card_ids: 'x' }, 'card_ids must contain 1-2 unique ids');
    bad(M1, { kind: 'declare_trump', card_ids: [sj1] }, "a selected card is not in this Member's hand");
    bad(M1, { kind: 'declare_trump', card_ids: [c3a] }, 'a single declaration must be one level card');
    bad(M1, { kind: 'declare_trump', card_ids: [bj1] }, 'a single declaration must be one level card');
    bad(M1, { kind: 'declare_trump', card_ids: [h7, s7a] }, 'a pair declaration needs identical card faces');
    bad(M1, { kind: 'declare_trump', card_ids: [c3a, c3b] }, 'a pair declaration needs level cards or identical jokers');
    let r = h.proto_group_handle(s, M1, { kind: 'declare_trump', card_ids: [h7] });
    s = r.state as UpgradeState;
    expect(r.events).toEqual([
      { kind: 'declare_trump', public_key: M1.public_key, seat: 1, strength: 1, trump_suit: 'hearts', card_ids: [h7], cards: [s.deck.catalog[h7]] },
    ]);
    bad(M1, { kind: 'pass_declare' }, 'this Member has already declared or passed');
    bad(M3, { kind: 'declare_trump', card_ids: [] }, 'card_ids must contain 1-2 unique ids');
    s = h.proto_group_handle(s, M3, { kind: 'declare_trump', card_ids: [sj1, sj2] }).state as UpgradeState;
    expect(s.winning_declaration).toMatchObject({ public_key: M3.public_key, strength: 3, trump_suit: null });
    s = h.proto_group_handle(s, M0, { kind: 'pass_declare' }).state as UpgradeState;
    const kitty = [...s.deck.draw_pile].reverse();
    r = h.proto_group_handle(s, M2, { kind: 'pass_declare' });
    s = r.state as UpgradeState;
    expect(r.events!.at(-1)).toEqual({ kind: 'upgrade_declarer_selected', declarer: M3.public_key, declarer_team: 'team1', trump_suit: null, level_rank: 7 });
    expect([s.phase, s.current_player, s.declarer, s.declarer_team]).toEqual(['bury', M3.public_key, M3.public_key, 'team1']);
    expect(s.deck.hands[M3.public_key]!.slice(25)).toEqual(kitty);
    // No view shows the kitty's cards to anyone but the declarer (they are in its hand now).
    for (const m of [M0, M1, M2]) for (const id of kitty) expect(JSON.stringify(h.proto_group_view(s, m))).not.toContain(id);
    const hand3 = s.deck.hands[M3.public_key]!;
    const others = hand3.filter((id) => id !== sj1 && id !== sj2);
    bad(M0, { kind: 'bury', card_ids: others.slice(0, 8) }, "it is not this Member's turn");
    bad(M3, { kind: 'play', card_ids: others.slice(0, 8) }, 'the declarer must bury exactly eight cards');
    bad(M3, { kind: 'bury', card_ids: others.slice(0, 7) }, 'card_ids must contain 8-8 unique ids');
    bad(M3, { kind: 'bury', card_ids: [sj1, ...others.slice(0, 7)] }, 'the winning declaration cards cannot be buried');
    bad(M3, { kind: 'bury', card_ids: [h7, ...others.slice(0, 7)] }, "a selected card is not in this Member's hand");
    r = h.proto_group_handle(s, M3, { kind: 'bury', card_ids: others.slice(0, 8) });
    s = r.state as UpgradeState;
    expect(r.events).toEqual([{ kind: 'upgrade_kitty_buried', declarer: M3.public_key, count: 8 }]);
    expect(s.deck.zones['kitty']!['table']).toEqual(others.slice(0, 8));
    expect([s.phase, s.current_player]).toEqual(['playing', M3.public_key]);
    for (const m of MEMBERS) for (const id of others.slice(0, 8)) expect(JSON.stringify(h.proto_group_view(s, m))).not.toContain(id);
    const v = h.proto_group_view(s, M3) as UpgradeView;
    expect(v.you).toEqual({ public_key: M3.public_key, seat: 3, team: 'team1', is_declarer: true });
    expect(v.my_hand.length).toBe(25);
  });

  it('when all pass, the starter declares with no trump suit', () => {
    const h = hooks({ deal_seed: 'all-pass' });
    let s = h.proto_group_initial_state(MEMBERS) as UpgradeState;
    for (const m of [M2, M1, M3, M0]) s = h.proto_group_handle(s, m, { kind: 'pass_declare' }).state as UpgradeState;
    expect([s.declarer, s.declarer_team, s.trump_suit, s.phase]).toEqual([M0.public_key, 'team0', null, 'bury']);
    expect(Object.values(s.declarations).map((d) => d.strength)).toEqual([0, 0, 0, 0]);
  });
});

describe('Upgrade (Tractor): trick play and scoring', () => {
  it('refuses each illegal play with the reference text and moves the turn clockwise', () => {
    const { h, s: s0, ids } = table(['3C 3C 4C 5D', '7C 7C 8C 9S', '9C 10C JC QC', 'KD KD AD 2S'], '');
    let s = s0;
    const bad = (actor: GroupMember, action: Record<string, unknown>, text: string) =>
      expect(() => h.proto_group_handle(structuredClone(s), actor, action)).toThrow(text);
    bad(M1, { kind: 'play', card_ids: ids(1, '9S') }, "it is not this Member's turn");
    bad(M0, { kind: 'bury', card_ids: ids(0, '3C') }, 'trick play accepts only play');
    bad(M0, { kind: 'play', card_ids: [] }, 'card_ids must contain 1-25 unique ids');
    bad(M0, { kind: 'play', card_ids: ids(1, '9S') }, "a selected card is not in this Member's hand");
    bad(M0, { kind: 'play', card_ids: ids(0, '3C 5D') }, 'all cards in a play must share an effective suit');
    let r = h.proto_group_handle(s, M0, { kind: 'play', card_ids: ids(0, '3C 3C') });
    s = r.state as UpgradeState;
    expect(r.events).toEqual([
      {
        kind: 'upgrade_play',
        public_key: M0.public_key,
        seat: 0,
        team: 'team0',
        cards: s.current_trick[0]!.cards,
        shape: { kind: 'pair', count: 2, suit: 'clubs', pair_count: 1, signatures: [{ suit: 'clubs', rank: 3, count: 2 }] },
      },
    ]);
    expect(s.current_player).toBe(M1.public_key);
    bad(M1, { kind: 'play', card_ids: ids(1, '7C') }, 'a follower must play the same number of cards');
    bad(M1, { kind: 'play', card_ids: ids(1, '7C 8C') }, 'the follower must preserve available pairs');
    bad(M1, { kind: 'play', card_ids: ids(1, '8C 9S') }, 'the follower must exhaust the led effective suit');
    s = h.proto_group_handle(s, M1, { kind: 'play', card_ids: ids(1, '7C 7C') }).state as UpgradeState;
    s = h.proto_group_handle(s, M2, { kind: 'play', card_ids: ids(2, '10C QC') }).state as UpgradeState;
    r = h.proto_group_handle(s, M3, { kind: 'play', card_ids: ids(3, 'KD KD') });
    s = r.state as UpgradeState;
    expect(s.trick_history[0]!.plays[3]!.shape.kind).toBe('pair'); // a void follower's off-suit pair still never wins
    expect(r.events!.at(-1)).toEqual({ kind: 'upgrade_trick_won', winner: M1.public_key, team: 'team1', points: 30, trick_number: 1 });
    expect([s.current_player, s.captured_points, s.defender_points]).toEqual([M1.public_key, { team0: 0, team1: 30 }, 30]);
    // A mixed discard is classified as such.
    s = h.proto_group_handle(s, M1, { kind: 'play', card_ids: ids(1, '8C') }).state as UpgradeState;
    s = h.proto_group_handle(s, M2, { kind: 'play', card_ids: ids(2, '9C') }).state as UpgradeState;
    s = h.proto_group_handle(s, M3, { kind: 'play', card_ids: ids(3, '2S') }).state as UpgradeState;
    r = h.proto_group_handle(s, M0, { kind: 'play', card_ids: ids(0, '4C') });
    expect(r.events!.at(-1)).toMatchObject({ winner: M3.public_key, team: 'team1', points: 0 }); // the level 2 is trump
  });

  it('an off-suit discard of several cards is a mixed shape', () => {
    const { h, s: s0, ids } = table(['AS KS', '3C 4D', '5S 6S', '7S 8S'], '');
    let s = h.proto_group_handle(s0, M0, { kind: 'play', card_ids: ids(0, 'AS KS') }).state as UpgradeState;
    s = h.proto_group_handle(s, M1, { kind: 'play', card_ids: ids(1, '3C 4D') }).state as UpgradeState;
    expect(s.current_trick[1]!.shape).toEqual({ kind: 'mixed', count: 2, suit: 'mixed', pair_count: 0 });
  });

  /** The last trick of a hand: seat 0's team declares, `dp` defender points already, seat `winner` wins with its lead. */
  function lastTrick(dp: number, kitty: string, hands: string[], over: Partial<UpgradeState> = {}, options: Record<string, unknown> = { deal_seed: 'table' }) {
    const { h, s, ids } = table(hands, kitty, { defender_points: dp, captured_points: { team0: 0, team1: dp }, ...over }, options);
    let state = s;
    let r;
    const lead = MEMBERS.findIndex((m) => m.public_key === s.current_player);
    for (let k = 0; k < 4; k++) {
      const seat = (lead + k) % 4;
      r = h.proto_group_handle(state, MEMBERS[seat]!, { kind: 'play', card_ids: ids(seat, hands[seat]!) });
      state = r.state as UpgradeState;
    }
    return r!;
  }
  const KITTY = '5C 5C 10C KC 3D 4D 6D 7D'; // 30 points

  it('defenders winning the last trick take the kitty times twice the lead count; 80+ moves control in 40-point bands', () => {
    const r = lastTrick(10, KITTY, ['3S 3S', 'AS AS', '4S 6S', '7S 8S']);
    const events = r.events as Record<string, unknown>[];
    expect(events.find((e) => e['kind'] === 'upgrade_hand_complete')).toEqual({
      kind: 'upgrade_hand_complete',
      defender_points: 130,
      kitty_points: 30,
      kitty_multiplier: 4,
      kitty_award: 120,
      controlling_team: 'team1',
      level_steps: 2,
      levels: { team0: 2, team1: 4 },
    });
    const s = r.state as UpgradeState;
    expect([s.phase, s.hand_number, s.declarer_team, s.level_rank, s.starter]).toEqual(['declaration', 2, 'team1', 4, M1.public_key]);
    expect(s.match_points).toEqual({ team0: 0, team1: 130 });
    expect(s.last_result).toMatchObject({ controlling_team: 'team1' });
    expect(events.at(-1)).toEqual({ kind: 'upgrade_hand_started', hand_number: 2, starter: M1.public_key });
  });

  it.each([
    [0, 3, 'team0'],
    [35, 2, 'team0'],
    [40, 1, 'team0'],
    [75, 1, 'team0'],
    [80, 1, 'team1'],
    [119, 1, 'team1'],
    [120, 2, 'team1'],
  ] as const)('defenders at %i points: %i level(s) for %s', (dp, steps, team) => {
    const r = lastTrick(dp, KITTY, ['AS', '3S', '4S', '6S']);
    const done = (r.events as Record<string, unknown>[]).find((e) => e['kind'] === 'upgrade_hand_complete')!;
    expect([done['defender_points'], done['kitty_award'], done['level_steps'], done['controlling_team']]).toEqual([dp, 0, steps, team]);
    const s = r.state as UpgradeState;
    // The next hand is started by the controlling team: the last trick's winner if theirs, else its first seat.
    expect(s.starter).toBe(team === 'team0' ? M0.public_key : M1.public_key);
  });

  it('caps levels at the target and completes the match there, or after max_hands', () => {
    let r = lastTrick(0, KITTY, ['AS', '3S', '4S', '6S'], {}, { deal_seed: 'table', target_level: 4 });
    expect(r.completed).toBe(true);
    expect(r.outcome).toBe('team0');
    expect(r.events!.at(-1)).toEqual({ kind: 'upgrade_match_complete', winner: 'team0', levels: { team0: 4, team1: 2 } });
    const s = r.state as UpgradeState;
    expect(s.phase).toBe('completed');
    expect(s.kitty_revealed.map((c) => c.code).sort()).toEqual(
      KITTY.split(' ')
        .map((c) => (c === '10C' ? '10C' : c))
        .sort(),
    );
    expect(() => hooks().proto_group_handle(s, M0, { kind: 'play', card_ids: [] })).toThrow('the Upgrade match is complete');
    r = lastTrick(100, KITTY, ['AS', '3S', '4S', '6S'], {}, { deal_seed: 'table', max_hands: 1 });
    expect([r.completed, r.outcome]).toEqual([true, 'team1']);
  });
});

/**
 * No view holds a card hidden from its viewer: other hands (less declared cards) and the kitty until revealed.
 * Returns the views (in seat order). It runs after every step of every match: an assertion is built only
 * where its plain check fails.
 */
function checkPrivacy(h: GroupHooks, state: UpgradeState): UpgradeView[] {
  const ids = [...state.deck.draw_pile, ...state.deck.discard_pile, ...Object.values(state.deck.hands).flat(), ...(state.deck.zones['kitty']?.['table'] ?? [])];
  const distinct = new Set(ids).size;
  if (distinct !== 108) expect(distinct).toBe(108);
  const declared = new Set(Object.values(state.declarations).flatMap((d) => d.card_ids ?? []));
  const revealed = new Set(state.kitty_revealed.map((c) => c.card_id));
  return MEMBERS.map((m) => {
    const view = h.proto_group_view(state, m) as UpgradeView;
    expectEqual(
      view.my_hand.map((c) => c.card_id),
      state.deck.hands[m.public_key],
    );
    const text = JSON.stringify(view);
    for (const other of MEMBERS)
      if (other !== m)
        for (const id of state.deck.hands[other.public_key]!)
          if (!declared.has(id) && text.includes(id)) expect(text.includes(id), `seat ${m.seat} sees a card of seat ${other.seat}`).toBe(false);
    for (const id of [...state.deck.draw_pile, ...(state.deck.zones['kitty']?.['table'] ?? [])])
      if (!revealed.has(id) && text.includes(id)) expect(text.includes(id), 'a kitty card in a view').toBe(false);
    return view;
  });
}

type Step = [GroupMember, Record<string, unknown>];

/** A random selection from the actor's own hand of the kind the phase asks for: often illegal, sometimes legal. */
function randomTry(view: UpgradeView, actor: GroupMember, pick: () => number): Record<string, unknown> {
  const hand = view.my_hand.map((c) => c.card_id);
  const some = (n: number) => [...hand].sort(() => pick() - 0.5).slice(0, n);
  if (view.phase === 'declaration') return { kind: 'declare_trump', card_ids: some(1 + Math.floor(pick() * 2)) };
  if (view.phase === 'bury') return { kind: 'bury', card_ids: some(8) };
  const lead = view.current_trick[0]?.shape;
  return { kind: 'play', card_ids: some(lead ? lead.count : 1 + Math.floor(pick() * 3)) };
  void actor;
}

/**
 * Plays one match with hooks directly: each step, optionally a random try (kept if legal), else the actor's
 * autoplay, each member choosing from its view of the state (the views checkPrivacy checked).
 */
function playMatch(options: Record<string, unknown>, seed: number, tries = 0.3) {
  const h = hooks(options, seed);
  const pick = seeded(seed * 7919);
  let state = h.proto_group_initial_state(MEMBERS) as UpgradeState;
  let views = checkPrivacy(h, state);
  const steps: Step[] = [];
  let result: { completed?: boolean; outcome?: string | null } = {};
  const apply = (actor: GroupMember, action: Record<string, unknown>) => {
    steps.push([actor, action]);
    const r = h.proto_group_handle(structuredClone(state), actor, structuredClone(action));
    state = r.state as UpgradeState;
    views = checkPrivacy(h, state);
    result = r;
  };
  for (let n = 0; n < 20000 && !result.completed; n++) {
    const chosen = MEMBERS.map((m, i) => autoplay(views[i]!, m, pick));
    const ready = MEMBERS.filter((_, i) => chosen[i]);
    if (!(ready.length > 0)) expect(ready.length).toBeGreaterThan(0);
    if (state.phase !== 'declaration') expectEqual(ready, [byKey(state.current_player)]);
    const actor = ready[Math.floor(pick() * ready.length)]!;
    if (pick() < tries) {
      const attemptAction = randomTry(views[actor.seat]!, actor, pick);
      let legal = true;
      try {
        h.proto_group_handle(structuredClone(state), actor, structuredClone(attemptAction));
      } catch {
        legal = false;
      }
      if (legal) {
        apply(actor, attemptAction);
        continue;
      }
      steps.push([actor, attemptAction]);
    }
    apply(actor, chosen[actor.seat]!);
  }
  return { h, state, steps, result };
}

describe('Upgrade (Tractor): whole matches from the members own views', () => {
  it.each([1, 2, 3, 4])(
    'seed %i: the quick profile plays to a finished match, conserving cards and hiding hands',
    (seed) => {
      const options = { start_level: 2, target_level: 4, max_hands: 8 };
      const { state, result } = playMatch(options, seed);
      expect(result.completed).toBe(true);
      expect(state.phase).toBe('completed');
      expect(result.outcome).toBe(state.last_result!.controlling_team);
      const levels = state.levels;
      expect(levels[result.outcome as 'team0' | 'team1'] === 4 || state.hand_number === 8).toBe(true);
      expect(Object.values(state.deck.hands).every((x) => x.length === 0)).toBe(true);
      // The last hand's tricks took every card: each trick's lead count summed over the hand is 25.
      expect(state.trick_history.reduce((n, t) => n + t.plays[0]!.cards.length, 0)).toBe(25);
    },
    120_000,
  );

  it('the same session seed deals the same cards, another seed other cards', () => {
    const deal = (seed: number) => (hooks({}, seed).proto_group_initial_state(MEMBERS) as UpgradeState).deck.hands;
    expect(deal(9)).toEqual(deal(9));
    expect(deal(9)).not.toEqual(deal(10));
  });

  it('keeps only public facts across a leader change and redeals a fresh hand', () => {
    const { h, state } = playMatch({ deal_seed: 'recover', target_level: 4 }, 3);
    const snap = h.proto_group_recovery_snapshot!(state);
    expect(snap).toEqual({
      hand_number: state.hand_number,
      restart_count: 0,
      levels: state.levels,
      declarer_team: state.declarer_team,
      starter: state.starter,
      match_points: state.match_points,
    });
    expect(JSON.stringify(snap)).not.toContain('card_id');
    const restored = h.proto_group_restore!(structuredClone(snap), MEMBERS, 2) as UpgradeState;
    expect(restored).toMatchObject({
      phase: 'declaration',
      hand_number: state.hand_number,
      restart_count: 1,
      levels: state.levels,
      match_points: state.match_points,
      recovery_notice: 'The interrupted private deal and kitty were discarded after a Leader change.',
    });
    expect(restored.level_rank).toBe(state.levels[state.declarer_team]);
    const changed = h.proto_group_on_leader_changed!(restored, 'a'.repeat(64), 'b'.repeat(64));
    expect((changed.state as UpgradeState).recovery_notice).toBe('Leader changed from aaaaaaaa to bbbbbbbb; the private hand was redealt.');
    expect(changed.events).toEqual([
      { kind: 'upgrade_hand_restarted_after_leader_change', old_leader: 'a'.repeat(64), new_leader: 'b'.repeat(64), hand_number: state.hand_number },
    ]);
    expect(() => h.proto_group_restore!({ declarer_team: 'team9' }, MEMBERS, 2)).toThrow('declarer_team is invalid');
    expect((h.proto_group_restore!({ starter: 'nobody' }, MEMBERS, 2) as UpgradeState).starter).toBe(M0.public_key);
    expect(h.proto_group_member_left(restored, M2, 'timeout').events).toEqual([{ kind: 'member_disconnected', public_key: M2.public_key, reason: 'timeout' }]);
    expect(h.proto_group_member_joined(restored, M2).events).toEqual([{ kind: 'member_rejoined', public_key: M2.public_key, seat: 2 }]);
  }, 120_000);
});

describe('Upgrade (Tractor) through the group leader', () => {
  const crypto = getCrypto();
  const seats = derivedSeats(crypto, 'upgrade', 4, 'm-');
  const { pk, members } = seats;

  it('plays a match by autoplay with every replica verifying every envelope, and a leader change mid-hand redeals and still completes', () => {
    const config = builtinGroupConfig(FOLDER);
    const options = { start_level: 2, target_level: 4, max_hands: 2 };
    const table = startTable({ crypto, seats, config, groupId: 'grp-upgrade', hooks: upgrade.create(hostContext(options, 21)) as GroupHooks });
    const { replicas, deliver } = table;
    let { leader } = table;
    const seqs = [0, 0, 0, 0];
    const pick = seeded(5);
    let failedOver = false;
    let n = 0;
    for (; n < 5000 && !leader.completed; n++) {
      const views = replicas.map((r) => r.view as UpgradeView);
      // No member's view holds another member's undeclared cards. (Per step: each assertion is built only
      // where its plain check fails.)
      for (const v of views) {
        const declared = new Set(Object.values(v.declarations).flatMap((d) => d.card_ids ?? []));
        const text = JSON.stringify(v);
        for (const o of views)
          if (o !== v) for (const c of o.my_hand) if (!declared.has(c.card_id) && text.includes(c.card_id)) expect(text.includes(c.card_id)).toBe(false);
      }
      const chosen = members.map((m, i) => autoplay(views[i]!, m, pick));
      const ready = [0, 1, 2, 3].filter((i) => chosen[i]);
      if (!(ready.length > 0)) expect(ready.length).toBeGreaterThan(0);
      const i = ready[Math.floor(pick() * ready.length)]!;
      const { envelopes, receipt } = leader.applyInput({ actor_public_key: pk(i), client_seq: ++seqs[i]!, action: chosen[i]! });
      if (receipt.status !== 'accepted') expect(receipt.status).toBe('accepted');
      deliver(envelopes);
      const checkpoint = JSON.stringify(replicas[2]!.checkpoint);
      if (checkpoint.includes('card_id')) expect(checkpoint).not.toContain('card_id');
      if (!failedOver && views[0]!.phase === 'playing' && views[0]!.trick_history.length === 3) {
        failedOver = true;
        const before = replicas[2]!.checkpoint!;
        const hand = views[2]!.hand_number;
        leader = table.failover(upgrade.create(hostContext(options, 22)) as GroupHooks, 2, before);
        const v = replicas[0]!.view as UpgradeView;
        expect([v.phase, v.hand_number, v.restart_count, v.recovery_notice]).toEqual([
          'declaration',
          hand,
          1,
          `Leader changed from ${pk(0).slice(0, 8)} to ${pk(2).slice(0, 8)}; the private hand was redealt.`,
        ]);
        expect(v.my_hand.length).toBe(25);
        expect(v.trick_history).toEqual([]);
      }
    }
    expect(failedOver).toBe(true);
    expect(leader.completed).toBe(true);
    const final = replicas[0]!.view as UpgradeView;
    expect(final.phase).toBe('completed');
    expect(leader.outcome).toBe(final.last_result!.controlling_team);
    for (const r of replicas) expect([r.seq, r.frameHash]).toEqual([leader.seq, leader.frameHash]);
  }, 300_000);
});

// The reference's own hooks, run by python3, replaying the same inputs. Every request of this file is built
// before its first test and answered by one python3 process, which runs while the other tests do; each
// test below then compares its own answer.
const haveRef = needReferencePython(['aigenora.proto.hooks', 'aigenora.proto.tractor'], 'the reference cross-check of Upgrade (Tractor)');

/** `actions` to replay from `start` (or the deal), and the request that asks the reference to replay them. */
interface Replay {
  options: Record<string, unknown>;
  start: UpgradeState | null;
  actions: Step[];
  failover?: [string, string];
  request: Record<string, unknown>;
}
const replayOf = (options: Record<string, unknown>, start: UpgradeState | null, actions: Step[], failover?: [string, string]): Replay => ({
  options,
  start,
  actions,
  ...(failover ? { failover } : {}),
  request: { options, members: MEMBERS, actions, ...(start ? { state: start } : {}), ...(failover ? { failover } : {}) },
});

/** The state `actions` leave from `start` (or the deal), a refused one leaving it as it was. */
function stateAfter(options: Record<string, unknown>, start: UpgradeState | null, actions: Step[]): UpgradeState {
  const h = hooks(options);
  let state = start ? structuredClone(start) : h.proto_group_initial_state(MEMBERS);
  for (const [actor, action] of actions) {
    try {
      state = h.proto_group_handle(structuredClone(state), actor, structuredClone(action)).state;
    } catch {
      // refused: the state stays
    }
  }
  return state as UpgradeState;
}

const answerTo = <T = Record<string, unknown>[]>(key: unknown) => reference.answer<T>(key);

/**
 * Replays `r` through ours and the reference's hooks (its answer to the request); every step must match.
 * Our side is worked out here, as it is compared (kept from the beforeAll to the test, every state and view
 * of the replays would weigh on every test between).
 */
async function compareSteps(replay: Replay) {
  const ref = await answerTo(replay);
  const { options, start, actions, failover } = replay;
  const h = hooks(options);
  expect(ref.length).toBe(actions.length + 1 + (failover ? 1 : 0));
  let state = start ? structuredClone(start) : h.proto_group_initial_state(MEMBERS);
  const views = (st: typeof state) => MEMBERS.map((m) => h.proto_group_view(st, m));
  if (!start) expectCanonical({ state, views: views(state) }, ref[0]);
  const texts = new Set<string>();
  const kinds = new Set<string>();
  actions.forEach(([actor, action], i) => {
    let ours: unknown;
    try {
      const r = h.proto_group_handle(structuredClone(state), actor, structuredClone(action));
      state = r.state;
      for (const e of r.events ?? []) if ((e as { kind: string }).kind === 'upgrade_play') kinds.add((e as { shape: Shape }).shape.kind);
      ours = { state, events: r.events ?? [], completed: r.completed ?? false, outcome: r.outcome ?? null, views: views(state) };
    } catch (e) {
      texts.add((e as Error).message);
      ours = { error: (e as Error).message };
    }
    expectCanonical(ours, ref[i + 1], `step ${i}`);
  });
  if (failover) {
    const snapshot = h.proto_group_recovery_snapshot!(state);
    const changed = h.proto_group_on_leader_changed!(h.proto_group_restore!(structuredClone(snapshot), MEMBERS, 1), failover[0], failover[1]);
    expectCanonical({ snapshot, state: changed.state, events: changed.events, views: views(changed.state) }, ref.at(-1));
  }
  return { texts, kinds, state: state as UpgradeState };
}

const BAD_OPTIONS: Record<string, unknown>[] = [{ start_level: 1 }, { start_level: 6, target_level: 6 }, { max_hands: 65 }, { target_level: '9' }];
const MATCHES: [number, Record<string, unknown>][] = [
  [1, { max_hands: 1 }],
  [2, { max_hands: 1, start_level: 10, target_level: 14 }],
  [3, { max_hands: 3, target_level: 6 }],
];

function matchCase(seed: number, extra: Record<string, unknown>): Replay {
  const options = { deal_seed: `cross-${seed}`, ...extra };
  const { steps } = playMatch(options, seed, 0.5);
  const actions: Step[] = [[M2, { kind: 'play', card_ids: [] }], [M1, { kind: 'bury' }], ...steps];
  return replayOf(options, null, actions, ['c'.repeat(64), 'd'.repeat(64)]);
}

/** Every single card and neighbouring pair as declare_trump, then from the bury each bury refusal and the legal bury. */
function declarationsCase(): { declare: Replay; bury: Replay } {
  const options = { deal_seed: 'declare-all', start_level: 9, target_level: 12 };
  const start = hooks(options).proto_group_initial_state(MEMBERS) as UpgradeState;
  const actions: Step[] = [];
  for (const m of [M2, M0, M3, M1]) {
    const hand = start.deck.hands[m.public_key]!;
    const sorted = [...hand].sort(
      (a, b) => start.deck.catalog[a]!.suit.localeCompare(start.deck.catalog[b]!.suit) || start.deck.catalog[a]!.rank - start.deck.catalog[b]!.rank,
    );
    for (const id of sorted) actions.push([m, { kind: 'declare_trump', card_ids: [id] }]);
    sorted.slice(1).forEach((id, i) => actions.push([m, { kind: 'declare_trump', card_ids: [sorted[i]!, id] }]));
    actions.push(
      [m, { kind: 'declare_trump', card_ids: sorted.slice(0, 3) }],
      [m, { kind: 'declare_trump', card_ids: [start.deck.draw_pile[0]!] }],
      [m, { kind: 'pass_declare' }],
      [m, { kind: 'pass_declare' }],
    );
  }
  const declare = replayOf(options, null, actions);
  // Then the kitty: each bury refusal, and the legal bury (from our state at the bury, which the first replay compares).
  const bury = stateAfter(options, null, actions);
  const declarer = byKey(bury.declarer);
  const other = MEMBERS.find((m) => m !== declarer)!;
  const hand = bury.deck.hands[declarer.public_key]!;
  const kept = bury.winning_declaration?.card_ids ?? [];
  expect(kept.length).toBeGreaterThan(0);
  const free = hand.filter((id) => !kept.includes(id));
  const buryActions: Step[] = [
    [other, { kind: 'bury', card_ids: free.slice(0, 8) }],
    [declarer, { kind: 'pass_declare' }],
    [declarer, { kind: 'bury', card_ids: free.slice(0, 7) }],
    [declarer, { kind: 'bury', card_ids: [...free.slice(0, 7), free[0]!] }],
    [declarer, { kind: 'bury', card_ids: [kept[0]!, ...free.slice(0, 7)] }],
    [declarer, { kind: 'bury', card_ids: [bury.deck.hands[other.public_key]![0]!, ...free.slice(0, 7)] }],
    [declarer, { kind: 'bury', card_ids: free.slice(0, 8) }],
    [declarer, { kind: 'pass_declare' }],
  ];
  return { declare, bury: replayOf(options, bury, buryActions, ['1'.repeat(64), '2'.repeat(64)]) };
}

/** Hand-built tables in trick play: subsets of each seat's hand of the lead's size, seat by seat from the leader, until one is legal. */
function tablesCase(): Replay[] {
  const scenarios: [Record<string, unknown>, string[], string, Partial<UpgradeState>][] = [
    [{ deal_seed: 'table' }, ['3C 3C 4C 5D', '7C 7C 8C 9S', '9C 10C JC QC', 'KD KD AD 2S'], '', {}],
    [
      { deal_seed: 'table' },
      ['3S 3S 4S 4S 9D', 'AS AS 6S 6S 9H', 'QS QS KS KS 10D', '2H 2H 7S 8S BJ'],
      '5C 5C 10C KC 3D 4D 6D 7D',
      { defender_points: 40, captured_points: { team0: 0, team1: 40 } },
    ],
    [{ deal_seed: 'table', target_level: 4 }, ['AS', '3S', '4S', '6S'], '5C 5C 10C KC 3D 4D 6D 7D', {}],
    [
      { deal_seed: 'table', max_hands: 1 },
      ['3S 3S', 'AS AS', '4S 6S', '7S 8S'],
      'KC KC 10C 3D 4D 6D 7D 8D',
      { defender_points: 75, captured_points: { team0: 5, team1: 75 } },
    ],
  ];
  return scenarios.map(([options, hands, kitty, over]) => {
    const { s } = table(hands, kitty, over, options);
    const actions: Step[] = [
      [M1, { kind: 'play', card_ids: s.deck.hands[M1.public_key]!.slice(0, 1) }],
      [M0, { kind: 'pass' }],
    ];
    const h = hooks(options);
    let state = structuredClone(s);
    for (let n = 0; n < 40 && state.phase === 'playing'; n++) {
      const actor = byKey(state.current_player);
      const hand = state.deck.hands[actor.public_key]!;
      const size = state.current_trick[0]?.shape.count;
      const subsets: string[][] = [];
      for (let mask = 1; mask < 1 << hand.length; mask++) {
        const pickIds = hand.filter((_, i) => mask & (1 << i));
        if (size === undefined || pickIds.length === size) subsets.push(pickIds);
      }
      // Leads try the largest sets first, so pairs, tractors and throws come before singles.
      subsets.sort((a, b) => b.length - a.length);
      let moved = false;
      for (const ids of subsets.slice(0, 64)) {
        actions.push([actor, { kind: 'play', card_ids: ids }]);
        try {
          state = h.proto_group_handle(structuredClone(state), actor, { kind: 'play', card_ids: ids }).state as UpgradeState;
          moved = true;
          break;
        } catch {
          // refused: the reference must refuse it with the same text
        }
      }
      expect(moved).toBe(true);
    }
    return replayOf(options, s, actions, ['e'.repeat(64), 'f'.repeat(64)]);
  });
}

const cases: {
  matches: Record<number, Built<Replay>>;
  declarations?: Built<ReturnType<typeof declarationsCase>>;
  tables?: Built<Replay[]>;
} = { matches: {} };

const reference = referenceRequests(haveRef, 'upgrade-tractor-ref.py', (requests) => {
  for (const [seed, extra] of MATCHES) cases.matches[seed] = build(() => matchCase(seed, extra));
  cases.declarations = build(declarationsCase);
  cases.tables = build(tablesCase);
  requests.add(RULE_CASES, { rules: RULE_CASES });
  for (const options of BAD_OPTIONS) requests.add(options, { options, members: MEMBERS, actions: [] });
  for (const [seed] of MATCHES) {
    const c = cases.matches[seed]!;
    if ('ok' in c) requests.add(c.ok, c.ok.request);
  }
  if ('ok' in cases.declarations) for (const r of [cases.declarations.ok.declare, cases.declarations.ok.bury]) requests.add(r, r.request);
  if ('ok' in cases.tables) for (const r of cases.tables.ok) requests.add(r, r.request);
});

const seenTexts = new Set<string>();
const seenKinds = new Set<string>();

describe.skipIf(!haveRef)('Upgrade (Tractor) against the reference hooks', () => {
  it('the tractor rules give the reference results and refusals on every hand-built case', async () => {
    const ref = await answerTo(RULE_CASES);
    expect(ref.length).toBe(RULE_CASES.length);
    RULE_CASES.forEach((r, i) => expectCanonical(runRule(r), ref[i], `${r.op} case ${i}`));
  });

  it('refuses bad options with the reference texts', async () => {
    for (const options of BAD_OPTIONS) {
      const ours = attempt(() => hooks(options).proto_group_initial_state(MEMBERS));
      expect(ours).toEqual((await answerTo(options))[0]);
    }
  });

  it.each(MATCHES)(
    'seeded match %i: the same deal, states, events, refusals, outcome, views and recovery',
    async (seed) => {
      const r = await compareSteps(built(cases.matches[seed]));
      expect(r.state.phase).toBe('completed');
      expect(r.texts.size).toBeGreaterThan(2);
      for (const t of r.texts) seenTexts.add(t);
      for (const k of r.kinds) seenKinds.add(k);
    },
    300_000,
  );

  it('declarations: every single card and every neighbouring pair of each hand, as declare_trump, in turn', async () => {
    const c = built(cases.declarations);
    const declare = await compareSteps(c.declare);
    for (const t of declare.texts) seenTexts.add(t);
    expect(declare.state.phase).toBe('bury');
    expect(declare.texts.size).toBeGreaterThanOrEqual(6);
    // The bury replay starts from this state (as the beforeAll found it).
    expectEqual(c.bury.start, declare.state);
    const bury = await compareSteps(c.bury);
    for (const t of bury.texts) seenTexts.add(t);
    expect(bury.state.phase).toBe('playing');
  }, 120_000);

  it('hand-built tables: refusals, follows, discards, the kitty award, level bands and match completion', async () => {
    for (const c of built(cases.tables)) {
      const r = await compareSteps(c);
      for (const t of r.texts) seenTexts.add(t);
      for (const k of r.kinds) seenKinds.add(k);
    }
  }, 120_000);

  it('the cross-checked steps met every play shape and the refusal texts of each phase', () => {
    expect([...seenKinds].sort()).toEqual(['mixed', 'pair', 'single', 'throw', 'tractor']);
    for (const t of [
      "it is not this Member's turn",
      'this Member has already declared or passed',
      'declaration accepts pass_declare or declare_trump',
      'card_ids must contain 1-2 unique ids',
      "a selected card is not in this Member's hand",
      'a single declaration must be one level card',
      'a pair declaration needs identical card faces',
      'a pair declaration needs level cards or identical jokers',
      'the declaration must be stronger than the current one',
      'the declarer must bury exactly eight cards',
      'card_ids must contain 8-8 unique ids',
      'the winning declaration cards cannot be buried',
      'trick play accepts only play',
      'all cards in a play must share an effective suit',
      'the follower must exhaust the led effective suit',
      'the follower must preserve available pairs',
    ])
      expect(seenTexts, t).toContain(t);
  });
});
