// Four-player Landlord: the reference's spec.json byte for byte (so its protocol id is the reference's),
// combination recognition and comparison on hand-built hands, bidding, whole games played by members
// choosing from their own views, and, where python3 imports the reference, the reference's hooks
// replaying the same games: same deal, same states, events, refusals and views.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { needReferencePython } from '../shared/require.js';
import { seeded } from '../../ts/hooks/random.js';
import { getCrypto } from '../../ts/crypto/index.js';
import type { GroupHooks, GroupMember } from '../../ts/hooks/types.js';
import { BUILTIN_DIR } from '../../ts/protocols/index.js';
import landlord, { autoplay, legalActions, type LandlordAction, type LandlordState, type LandlordView } from '../../ts/protocols/landlord/hooks.js';
import { beats, cardFaces, classify, NOT_A_COMBINATION, type Combination } from '../../ts/protocols/landlord/rules.js';
import type { CardFace } from '../../ts/protocols/landlord/rules.js';
import { playByAutoplay } from './group-autoplay.js';
import { expectEqual, expectOursCanonical as expectCanonical } from './fast-expect.js';
import { attempt, fourSeats, hostContext, referenceSpecTests } from './group-fixtures.js';
import { builtinGroupConfig, derivedSeats, startTable } from './group-table.js';
import { build, referenceRequests, type Built } from './reference-batch.js';

const ID = 'bbc0d9890d6481c3cd269fbfb466a3b7830e9d102638a14f2b7ddbae9da70d36';

const mulberry32 = seeded;
const hooks = (options: Record<string, unknown> = {}, seed = 1) => landlord.create(hostContext(options, seed)) as GroupHooks;
const MEMBERS = fourSeats('abcd', 'm-');
const byKey = (key: string) => MEMBERS.find((m) => m.public_key === key)!;

const RANK: Record<number, string> = { 11: 'J', 12: 'Q', 13: 'K', 14: 'A', 15: '2', 16: 'Black Joker', 17: 'Red Joker' };
const face = (value: number, suit = 'clubs'): CardFace => ({ rank: RANK[value] ?? String(value), value, suit: value >= 16 ? 'joker' : suit });
/** Cards from a compact list of values (repeats allowed; suits cycle so a pair is two suits). */
const hand = (...values: number[]) => values.map((v, i) => face(v, ['clubs', 'diamonds', 'hearts', 'spades'][i % 4]));
const kind = (...values: number[]) => classify(hand(...values));
const combo = (k: Combination['kind'], primary: number, length: number, tier = 0): Combination => ({ kind: k, primary, length, tier });

describe('Four-player Landlord: spec', () => {
  referenceSpecTests('landlord', ID, "the reference's four-player Landlord spec");
});

// Hand-built hands: every supported shape, and shapes the reference refuses.
const SHAPES: [string, number[], Combination | null][] = [
  ['single', [7], combo('single', 7, 1)],
  ['single joker', [17], combo('single', 17, 1)],
  ['pair', [9, 9], combo('pair', 9, 2)],
  ['two different cards', [9, 10], null],
  ['triple of 2s', [15, 15, 15], combo('triple', 15, 3)],
  ['triple with single', [8, 8, 8, 3], combo('triple_single', 8, 4)],
  ['triple with a joker', [8, 8, 8, 16], combo('triple_single', 8, 4)],
  ['triple with pair', [4, 4, 4, 9, 9], combo('triple_pair', 4, 5)],
  ['triple with the black jokers', [4, 4, 4, 16, 16], combo('triple_pair', 4, 5)],
  ['straight 3-7', [3, 4, 5, 6, 7], combo('straight', 7, 5)],
  ['straight 3-A', [3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14], combo('straight', 14, 12)],
  ['straight of four', [3, 4, 5, 6], null],
  ['straight through 2', [11, 12, 13, 14, 15], null],
  ['straight with a gap', [3, 4, 5, 6, 8], null],
  ['pair straight', [5, 5, 6, 6, 7, 7], combo('pair_straight', 7, 6)],
  ['two pairs', [5, 5, 6, 6], null],
  ['pair straight through 2', [13, 13, 14, 14, 15, 15], null],
  ['airplane', [6, 6, 6, 7, 7, 7], combo('airplane', 7, 6)],
  ['airplane of 2s', [14, 14, 14, 15, 15, 15], null],
  ['airplane with a gap', [6, 6, 6, 8, 8, 8], null],
  ['airplane with singles', [6, 6, 6, 7, 7, 7, 3, 10], combo('airplane_single', 7, 8)],
  ['airplane with a pair as its singles', [6, 6, 6, 7, 7, 7, 3, 3], null],
  ['airplane with pairs', [6, 6, 6, 7, 7, 7, 3, 3, 10, 10], combo('airplane_pair', 7, 10)],
  ['three triples with a 2s triple as wing', [6, 6, 6, 7, 7, 7, 15, 15, 15], null],
  ['four with two singles', [9, 9, 9, 9, 3, 5], combo('four_two_single', 9, 6)],
  ['four with a pair as two singles', [9, 9, 9, 9, 3, 3], combo('four_two_single', 9, 6)],
  ['four with two pairs', [9, 9, 9, 9, 3, 3, 5, 5], combo('four_two_pair', 9, 8)],
  ['two fours', [9, 9, 9, 9, 3, 3, 3, 3], null],
  ['four with one single', [9, 9, 9, 9, 3], null],
  ['bomb of four', [10, 10, 10, 10], combo('bomb', 10, 4, 1)],
  ['bomb of eight', [3, 3, 3, 3, 3, 3, 3, 3], combo('bomb', 3, 8, 1)],
  ['joker pair is a joker bomb', [16, 17], combo('joker_bomb', 17, 2, 2)],
  ['black jokers', [16, 16], combo('joker_bomb', 16, 2, 2)],
  ['four jokers', [16, 16, 17, 17], combo('joker_bomb', 17, 4, 2)],
];

describe('Four-player Landlord: combinations', () => {
  it.each(SHAPES)('%s', (_name, values, expected) => {
    if (expected) expect(kind(...values)).toEqual(expected);
    else expect(() => kind(...values)).toThrow(NOT_A_COMBINATION);
  });

  it('compares normal plays by kind, size and rank, bombs by size then rank, joker bombs above all', () => {
    expect(beats(kind(8), kind(7))).toBe(true);
    expect(beats(kind(7), kind(7))).toBe(false);
    expect(beats(kind(17), kind(16))).toBe(true);
    expect(beats(kind(9, 9), kind(8))).toBe(false); // another kind
    expect(beats(kind(4, 5, 6, 7, 8, 9), kind(3, 4, 5, 6, 7))).toBe(false); // another length
    expect(beats(kind(4, 5, 6, 7, 8), kind(3, 4, 5, 6, 7))).toBe(true);
    expect(beats(kind(9, 9, 9, 3), kind(8, 8, 8, 14))).toBe(true); // the attachment does not count
    expect(beats(kind(3, 3, 3, 3), kind(15, 15))).toBe(true);
    expect(beats(kind(3, 3, 3, 3), kind(9, 9, 9, 9, 3, 3, 5, 5))).toBe(true);
    expect(beats(kind(3, 3, 3, 3, 3), kind(15, 15, 15, 15))).toBe(true); // more cards first
    expect(beats(kind(4, 4, 4, 4), kind(3, 3, 3, 3))).toBe(true);
    expect(beats(kind(3, 3, 3, 3), kind(4, 4, 4, 4))).toBe(false);
    expect(beats(kind(16, 16), kind(3, 3, 3, 3, 3, 3, 3, 3))).toBe(true);
    expect(beats(kind(16, 16, 17), kind(16, 17))).toBe(true);
    expect(beats(kind(17, 17), kind(16, 17))).toBe(false); // same size, same highest joker
    expect(beats(kind(16, 17), kind(16, 16))).toBe(true);
  });

  it('has two 54-card decks of faces in the reference order', () => {
    const faces = cardFaces();
    expect(faces.length).toBe(54);
    expect(faces[0]).toEqual({ rank: '3', value: 3, suit: 'clubs' });
    expect(faces[12]).toEqual({ rank: '2', value: 15, suit: 'clubs' });
    expect(faces[53]).toEqual({ rank: 'Red Joker', value: 17, suit: 'joker' });
  });
});

const deckIds = (s: LandlordState) => [...s.deck.draw_pile, ...s.deck.discard_pile, ...Object.values(s.deck.hands).flat()];

/**
 * Checks one state and returns the members' views of it (in seat order). It runs at every step of every
 * game: each assertion is built only where its plain check fails.
 */
function checkStep(h: GroupHooks, state: LandlordState): LandlordView[] {
  // Cards are conserved: 108 ids, each in exactly one place.
  const ids = deckIds(state);
  if (ids.length !== 108) expect(ids.length).toBe(108);
  const idSet = new Set(ids);
  if (idSet.size !== 108) expect(idSet.size).toBe(108);
  const catalog = new Set(Object.keys(state.deck.catalog));
  if (!(idSet.size === catalog.size && [...idSet].every((id) => catalog.has(id)))) expect(idSet).toEqual(catalog);
  return MEMBERS.map((m) => {
    const view = h.proto_group_view(state, m) as LandlordView;
    expectEqual(
      view.my_hand.map((c) => c.card_id),
      state.deck.hands[m.public_key],
    );
    const text = JSON.stringify(view);
    if (text.includes('draw_pile')) expect(text).not.toContain('draw_pile');
    // The landlord's bottom cards are public once revealed; every other held card is private.
    const bottom = new Set(state.bottom_revealed.map((c) => c.card_id));
    for (const other of MEMBERS)
      if (other !== m)
        for (const id of state.deck.hands[other.public_key]!.filter((x) => !bottom.has(x)))
          if (text.includes(id)) expect(text.includes(id), `seat ${m.seat} sees a card of seat ${other.seat}`).toBe(false);
    // During bidding the bottom is hidden from everyone.
    if (state.phase === 'bidding') for (const id of state.deck.draw_pile) if (text.includes(id)) expect(text.includes(id)).toBe(false);
    const cards = Object.values(view.hand_counts).reduce((a, b) => a + b, 0) + view.discard.length + state.deck.draw_pile.length;
    if (cards !== 108) expect(cards).toBe(108);
    return view;
  });
}

type Step = [GroupMember, LandlordAction];

/**
 * Plays one game: each acting member picks from the legal actions in its own view (the views checkStep
 * checked), with a seeded random.
 */
function playGame(options: Record<string, unknown>, seed: number) {
  const h = hooks(options, seed);
  const pick = mulberry32(seed * 7919);
  let state = h.proto_group_initial_state(MEMBERS) as LandlordState;
  let views = checkStep(h, state);
  const steps: Step[] = [];
  let outcome: string | null | undefined;
  for (let n = 0; n < 2000 && !outcome; n++) {
    const actor = byKey(state.current_player);
    const actions = legalActions(views[actor.seat]!);
    if (!(actions.length > 0)) expect(actions.length).toBeGreaterThan(0);
    for (const other of MEMBERS) {
      if (other === actor) continue;
      const idle = legalActions(views[other.seat]!);
      if (idle.length) expect(idle).toEqual([]);
    }
    const pass = actions.find((a) => a.kind === 'pass');
    const plays = actions.filter((a) => a.kind !== 'pass');
    const action = pass && (pick() < 0.4 || !plays.length) ? pass : plays[Math.floor(pick() * plays.length)]!;
    steps.push([actor, action]);
    const r = h.proto_group_handle(structuredClone(state), actor, structuredClone(action) as Record<string, unknown>);
    state = r.state as LandlordState;
    views = checkStep(h, state);
    if (r.completed) outcome = r.outcome;
  }
  return { h, state, steps, outcome };
}

/** The games of `playGame(options, seed)` without deal_seed: several tests look at the same ones. */
const games = new Map<number, ReturnType<typeof playGame>>();
function gameOf(seed: number): ReturnType<typeof playGame> {
  if (!games.has(seed)) games.set(seed, playGame({}, seed));
  return games.get(seed)!;
}

describe('Four-player Landlord: bidding', () => {
  it('deals 25 each with an 8-card bottom, bids in seat order, the first highest bid wins and takes the bottom', () => {
    const h = hooks({ deal_seed: 'bids' });
    let s = h.proto_group_initial_state(MEMBERS) as LandlordState;
    expect(Object.values(s.deck.hands).map((x) => x.length)).toEqual([25, 25, 25, 25]);
    expect(s.deck.draw_pile.length).toBe(8);
    expect(s.current_player).toBe(MEMBERS[0]!.public_key);
    expect(() => h.proto_group_handle(s, MEMBERS[1]!, { kind: 'bid', value: 1 })).toThrow("it is not this Member's turn");
    expect(() => h.proto_group_handle(s, MEMBERS[0]!, { kind: 'play', card_ids: [] })).toThrow('bidding accepts only a bid action');
    for (const value of [4, -1, 1.5, true, '1', null])
      expect(() => h.proto_group_handle(structuredClone(s), MEMBERS[0]!, { kind: 'bid', value })).toThrow('bid value must be 0, 1, 2, or 3');
    const bottom = [...s.deck.draw_pile].reverse();
    for (const [seat, value] of [
      [0, 1],
      [1, 2],
      [2, 2],
      [3, 0],
    ] as const)
      s = h.proto_group_handle(s, MEMBERS[seat]!, { kind: 'bid', value }).state as LandlordState;
    expect(s.phase).toBe('playing');
    expect(s.landlord).toBe(MEMBERS[1]!.public_key); // seat 2's equal bid does not take it
    expect(s.highest_bid).toBe(2);
    expect(s.current_player).toBe(s.landlord);
    expect(s.deck.hands[s.landlord]!.length).toBe(33);
    expect(s.bottom_revealed.map((c) => c.card_id)).toEqual(bottom);
    expect(Object.values(s.players).map((p) => p.role)).toEqual(['farmer', 'landlord', 'farmer', 'farmer']);
    const v = h.proto_group_view(s, MEMBERS[1]!) as LandlordView;
    expect(v.you).toEqual({ public_key: MEMBERS[1]!.public_key, seat: 1, is_landlord: true });
  });

  it('a bid of 3 ends bidding at once', () => {
    const h = hooks({ deal_seed: 'three' });
    let s = h.proto_group_initial_state(MEMBERS) as LandlordState;
    s = h.proto_group_handle(s, MEMBERS[0]!, { kind: 'bid', value: 0 }).state as LandlordState;
    const r = h.proto_group_handle(s, MEMBERS[1]!, { kind: 'bid', value: 3 });
    expect((r.state as LandlordState).landlord).toBe(MEMBERS[1]!.public_key);
    expect(r.events!.map((e) => (e as { kind: string }).kind)).toEqual(['bid', 'landlord_selected']);
  });

  it('when all pass, the authority redeals a new round with the scores kept', () => {
    const h = hooks({ deal_seed: 'pass' });
    let s = h.proto_group_initial_state(MEMBERS) as LandlordState;
    const first = structuredClone(s.deck.hands);
    let r;
    for (const m of MEMBERS) s = (r = h.proto_group_handle(s, m, { kind: 'bid', value: 0 })).state as LandlordState;
    expect(r!.events!.at(-1)).toEqual({ kind: 'all_passed_redeal', round_number: 2 });
    expect(s.phase).toBe('bidding');
    expect(s.round_number).toBe(2);
    expect(s.recovery_notice).toBe('All Members passed; the authority redealt.');
    expect(s.deck.hands).not.toEqual(first);
  });

  it('refuses a table that is not exactly four active members', () => {
    expect(() => hooks().proto_group_initial_state(MEMBERS.slice(0, 3))).toThrow('Four-player Landlord requires exactly four active Members');
  });
});

/** A table in play with chosen hands: seat 0 is the landlord. */
function table(hands: number[][]) {
  const h = hooks({ deal_seed: 'table' });
  let s = h.proto_group_initial_state(MEMBERS) as LandlordState;
  s = h.proto_group_handle(s, MEMBERS[0]!, { kind: 'bid', value: 3 }).state as LandlordState;
  // Re-deal by value: each seat gets the catalog's cards of the listed values, the rest go to the discard.
  const free = Object.values(s.deck.catalog);
  const take = (v: number) =>
    free.splice(
      free.findIndex((c) => c.value === v),
      1,
    )[0]!.card_id;
  MEMBERS.forEach((m, i) => (s.deck.hands[m.public_key] = hands[i]!.map(take)));
  s.deck.draw_pile = [];
  s.deck.discard_pile = free.map((c) => c.card_id);
  const ids = (seat: number, ...values: number[]) =>
    values.map((v) => s.deck.hands[MEMBERS[seat]!.public_key]!.find((id) => s.deck.catalog[id]!.value === v && true)!);
  return { h, s, ids };
}

describe('Four-player Landlord: play', () => {
  it('refuses each illegal play with the reference text, passes, and resets the trick after three passes', () => {
    const {
      h,
      ids,
      s: s0,
    } = table([
      [3, 3, 5, 9, 9, 12],
      [4, 6, 6, 10],
      [7, 7, 8],
      [11, 11, 13],
    ]);
    let s = s0;
    const [m0, m1, m2, m3] = MEMBERS as [GroupMember, GroupMember, GroupMember, GroupMember];
    const bad = (actor: GroupMember, action: Record<string, unknown>, text: string) =>
      expect(() => h.proto_group_handle(structuredClone(s), actor, action)).toThrow(text);
    bad(m0, { kind: 'pass' }, 'the trick leader cannot pass');
    bad(m0, { kind: 'draw' }, 'playing accepts play or pass');
    bad(m0, { kind: 'play', card_ids: [] }, 'card_ids must be a non-empty unique array');
    bad(m0, { kind: 'play', card_ids: 'x' }, 'card_ids must be a non-empty unique array');
    bad(m0, { kind: 'play', card_ids: [ids(0, 5)[0], ids(0, 5)[0]] }, 'card_ids must be a non-empty unique array');
    bad(m0, { kind: 'play', card_ids: [7] }, 'card_ids must be a non-empty unique array');
    bad(m0, { kind: 'play', card_ids: Array.from({ length: 21 }, (_, i) => `c${i}`) }, 'card_ids must be a non-empty unique array');
    bad(m0, { kind: 'play', card_ids: ids(1, 4) }, "a selected card is not in this Member's hand");
    bad(m0, { kind: 'play', card_ids: ids(0, 3, 5) }, NOT_A_COMBINATION);
    bad(m1, { kind: 'play', card_ids: ids(1, 4) }, "it is not this Member's turn");
    s = h.proto_group_handle(s, m0, { kind: 'play', card_ids: ids(0, 5) }).state as LandlordState;
    expect(s.current_player).toBe(m1.public_key);
    bad(m1, { kind: 'play', card_ids: ids(1, 4) }, 'the selected cards do not beat the previous play');
    const sixes = s.deck.hands[m1.public_key]!.filter((id) => s.deck.catalog[id]!.value === 6);
    bad(m1, { kind: 'play', card_ids: sixes }, 'the selected cards do not beat the previous play');
    s = h.proto_group_handle(s, m1, { kind: 'play', card_ids: ids(1, 10) }).state as LandlordState;
    s = h.proto_group_handle(s, m2, { kind: 'pass' }).state as LandlordState;
    s = h.proto_group_handle(s, m3, { kind: 'pass' }).state as LandlordState;
    expect(s.passes).toBe(2);
    const r = h.proto_group_handle(s, m0, { kind: 'pass' });
    s = r.state as LandlordState;
    expect(r.events).toEqual([
      { kind: 'pass', public_key: m0.public_key },
      { kind: 'trick_reset', public_key: m1.public_key },
    ]);
    expect(s.last_play).toBeNull();
    expect(s.current_player).toBe(m1.public_key);
    expect(s.passes).toBe(0);
  });

  it('scores with the bid and a doubling per bomb; the farmers share the result', () => {
    const { h, s: s0 } = table([
      [9, 9, 9, 9, 3],
      [4, 4, 4, 4, 14],
      [17, 16, 5],
      [8, 8],
    ]);
    let s = s0;
    const [m0, m1, m2, m3] = MEMBERS as [GroupMember, GroupMember, GroupMember, GroupMember];
    const all = (m: GroupMember, v: number) => s.deck.hands[m.public_key]!.filter((id) => s.deck.catalog[id]!.value === v);
    s = h.proto_group_handle(s, m0, { kind: 'play', card_ids: all(m0, 3) }).state as LandlordState;
    s = h.proto_group_handle(s, m1, { kind: 'play', card_ids: all(m1, 4) }).state as LandlordState; // bomb 1
    s = h.proto_group_handle(s, m2, { kind: 'play', card_ids: [...all(m2, 16), ...all(m2, 17)] }).state as LandlordState; // bomb 2
    s = h.proto_group_handle(s, m3, { kind: 'pass' }).state as LandlordState;
    s = h.proto_group_handle(s, m0, { kind: 'pass' }).state as LandlordState;
    s = h.proto_group_handle(s, m1, { kind: 'pass' }).state as LandlordState;
    expect(s.bombs).toBe(2);
    const r = h.proto_group_handle(s, m2, { kind: 'play', card_ids: all(m2, 5) });
    expect(r.completed).toBe(true);
    expect(r.outcome).toBe('farmers');
    const base = 3 * 2 ** 2;
    expect(r.events!.at(-1)).toEqual({
      kind: 'game_over',
      outcome: 'farmers',
      winner: m2.public_key,
      score_delta: { [m0.public_key]: -3 * base, [m1.public_key]: base, [m2.public_key]: base, [m3.public_key]: base },
    });
    s = r.state as LandlordState;
    expect(s.scores[m0.public_key]).toBe(-36);
    expect(() => h.proto_group_handle(s, m3, { kind: 'pass' })).toThrow('the round is complete');
  });
});

describe('Four-player Landlord: whole games', () => {
  it.each([1, 2, 3, 4, 5, 6])('seed %i plays to completion from the members own views, conserving cards and hiding hands', (seed) => {
    const { state, outcome } = gameOf(seed);
    expect(['landlord', 'farmers']).toContain(outcome);
    expect(state.phase).toBe('completed');
    expect(Object.values(state.scores).reduce((a, b) => a + b, 0)).toBe(0);
    expect(Object.values(state.deck.hands).some((x) => x.length === 0)).toBe(true);
  });

  it('the same session seed deals the same cards, another seed other cards', () => {
    const deal = (seed: number) => (hooks({}, seed).proto_group_initial_state(MEMBERS) as LandlordState).deck.hands;
    expect(deal(9)).toEqual(deal(9));
    expect(deal(9)).not.toEqual(deal(10));
  });

  it('keeps only public scores across a leader change, and redeals', () => {
    // The game of seed 3 above (the whole-games test only reads it): its hooks deal the redeal below as a fresh run's would.
    const { h, state } = gameOf(3);
    const snap = h.proto_group_recovery_snapshot!(state);
    expect(snap).toEqual({ round_number: 1, restart_count: 0, scores: state.scores });
    const restored = h.proto_group_restore!(structuredClone(snap), MEMBERS, 2) as LandlordState;
    expect(restored).toMatchObject({
      phase: 'bidding',
      round_number: 2,
      restart_count: 1,
      scores: state.scores,
      recovery_notice: 'The previous private deal was discarded after a Leader change.',
    });
    const changed = h.proto_group_on_leader_changed!(restored, 'a'.repeat(64), 'b'.repeat(64));
    expect((changed.state as LandlordState).recovery_notice).toBe('Leader changed from aaaaaaaa to bbbbbbbb; the private deal was restarted.');
    expect(changed.events).toEqual([{ kind: 'round_restarted_after_leader_change', old_leader: 'a'.repeat(64), new_leader: 'b'.repeat(64), round_number: 2 }]);
    expect(h.proto_group_member_left(restored, MEMBERS[2]!, 'timeout').events).toEqual([
      { kind: 'member_disconnected', public_key: MEMBERS[2]!.public_key, reason: 'timeout' },
    ]);
    expect(h.proto_group_member_joined(restored, MEMBERS[2]!).events).toEqual([{ kind: 'member_rejoined', public_key: MEMBERS[2]!.public_key, seat: 2 }]);
  });
});

describe('Four-player Landlord through the group leader', () => {
  const crypto = getCrypto();
  const seats = derivedSeats(crypto, 'landlord', 4, 'm-');
  const { pk } = seats;

  it('plays a game to completion with every replica verifying every envelope, then fails over to a fresh deal keeping the scores', () => {
    const config = builtinGroupConfig('landlord');
    const { leader, replicas, deliver } = startTable({ crypto, seats, config, groupId: 'grp-landlord', hooks: landlord.create(hostContext({}, 11)) });
    const seqs = [0, 0, 0, 0];
    const pick = mulberry32(5);
    for (let n = 0; n < 2000 && !leader.completed; n++) {
      const i = replicas.findIndex((r) => legalActions(r.view as LandlordView).length > 0);
      const actions = legalActions(replicas[i]!.view as LandlordView);
      const action = actions[Math.floor(pick() * actions.length)]!;
      const { envelopes, receipt } = leader.applyInput({ actor_public_key: pk(i), client_seq: ++seqs[i]!, action: action as Record<string, unknown> });
      expect(receipt.status).toBe('accepted');
      deliver(envelopes);
      // No checkpoint a replica holds (a failover candidate's copy) carries any hidden card.
      const checkpoint = JSON.stringify(replicas[1]!.checkpoint);
      expect(checkpoint).toContain('"scores"');
      expect(checkpoint).not.toContain('card_id');
    }
    expect(leader.completed).toBe(true);
    expect(['landlord', 'farmers']).toContain(leader.outcome);
    const scores = (replicas[0]!.view as LandlordView).scores;
    expect(Object.values(scores).some((v) => v !== 0)).toBe(true);
    for (const r of replicas) expect([r.seq, r.frameHash]).toEqual([leader.seq, leader.frameHash]);
  }, 120_000);

  it('a leader change mid-round abandons the deal and redeals from the public checkpoint', () => {
    const config = builtinGroupConfig('landlord');
    const table = startTable({ crypto, seats, config, groupId: 'grp-ll-f', hooks: landlord.create(hostContext({}, 12)) });
    const { leader: first, replicas, deliver } = table;
    deliver(first.applyInput({ actor_public_key: pk(0), client_seq: 1, action: { kind: 'bid', value: 1 } }).envelopes);
    const before = (replicas[2]!.view as LandlordView).my_hand.map((c) => c.card_id);
    table.failover(landlord.create(hostContext({}, 13)), 2);
    const view = replicas[2]!.view as LandlordView;
    expect(view).toMatchObject({ phase: 'bidding', round_number: 2, restart_count: 1, bids: {} });
    expect(view.my_hand.length).toBe(25);
    expect(view.my_hand.map((c) => c.card_id)).not.toEqual(before);
  }, 120_000);
});

// The reference's own hooks, run by python3, replaying the same inputs.
describe('Four-player Landlord: every seat by autoplay, through the group leader', () => {
  const spec = JSON.parse(readFileSync(join(BUILTIN_DIR, 'landlord', 'spec.json'), 'utf8')) as unknown;
  it('seeds 1-3: every game completes, each member acting only from its own view', () => {
    for (const seed of [1, 2, 3]) {
      const { leader, replicas, actions } = playByAutoplay({ crypto: getCrypto(), module: landlord, spec, options: {}, seats: 4, seed, maxActions: 1500 });
      expect(leader.completed).toBe(true);
      expect(['landlord', 'farmers']).toContain(leader.outcome);
      const view = replicas[0]!.view as LandlordView;
      expect(Object.values(view.scores).some((v) => v !== 0)).toBe(true);
      // The winning side emptied a hand; the other side did not.
      const counts = view.hand_counts;
      const empty = Object.keys(counts).filter((k) => counts[k] === 0);
      expect(empty.length).toBe(1);
      expect(empty[0] === view.landlord).toBe(leader.outcome === 'landlord');
      expect(actions.some((a) => a['kind'] === 'pass')).toBe(true);
    }
  }, 120_000);

  it('waits when it is not its turn or the game is over', () => {
    const h = hooks({ deal_seed: 'wait' }, 1);
    const state = h.proto_group_initial_state(MEMBERS) as LandlordState;
    for (const m of MEMBERS) {
      const action = autoplay(h.proto_group_view(state, m), m, mulberry32(2));
      if (m.public_key === state.current_player) expect(action).toMatchObject({ kind: 'bid' });
      else expect(action).toBeNull();
    }
    const actor = byKey(state.current_player);
    expect(autoplay({ ...h.proto_group_view(state, actor), phase: 'completed' }, actor, mulberry32(2))).toBeNull();
  });
});

// The reference's own hooks, run by python3, replaying the same inputs. Every request of this file is built
// before its first test and answered by one python3 process, which runs while the other tests do; each
// test below then compares its own answer.
const haveRef = needReferencePython(['aigenora.proto.hooks'], 'the reference cross-check of four-player Landlord');

function classifyCase() {
  const hands = SHAPES.map(([, values]) => hand(...values));
  const ours = hands.map((cards) => attempt(() => classify(cards)));
  return { request: { classify: hands }, ours };
}

const SEEDS = [1, 2, 3];
/** A seeded game, and the request that replays it through the reference with refused actions first: out of turn, a bad bid. */
function gameCase(seed: number) {
  const options = { deal_seed: `cross-${seed}` };
  const { h, steps } = playGame(options, seed);
  const actions: [GroupMember, unknown][] = [[MEMBERS[2]!, { kind: 'bid', value: 1 }], [MEMBERS[0]!, { kind: 'bid', value: 7 }], ...steps];
  return { request: { options, members: MEMBERS, actions }, h, actions };
}

const cases: {
  classify?: Built<ReturnType<typeof classifyCase>>;
  games: Record<number, Built<ReturnType<typeof gameCase>>>;
} = { games: {} };

const reference = referenceRequests(haveRef, 'landlord-ref.py', (requests) => {
  cases.classify = build(classifyCase);
  for (const seed of SEEDS) cases.games[seed] = build(() => gameCase(seed));
  requests.addBuilt([cases.classify, ...SEEDS.map((s) => cases.games[s])]);
});

describe.skipIf(!haveRef)('Four-player Landlord against the reference hooks', () => {
  it('classifies every hand-built shape as the reference does', async () => {
    const { mine, theirs } = await reference.answered(cases.classify);
    expectEqual(mine.ours, theirs);
  });

  it.each(SEEDS)('seeded game %i: the same deal, states, events, outcome and views, and the same refusals', async (seed) => {
    const { mine, theirs: ref } = await reference.answered(cases.games[seed]);
    // Our side, made as it is compared (the game's own hooks, replaying its actions).
    const { h, actions } = mine;
    let state = h.proto_group_initial_state(MEMBERS);
    const views = (s: typeof state) => MEMBERS.map((m) => h.proto_group_view(s, m));
    expectCanonical({ state, views: views(state) }, ref[0]);
    actions.forEach(([actor, action], i) => {
      let ours: unknown;
      try {
        const r = h.proto_group_handle(structuredClone(state), actor, structuredClone(action) as Record<string, unknown>);
        state = r.state;
        ours = { state, events: r.events ?? [], completed: r.completed ?? false, outcome: r.outcome ?? null, views: views(state) };
      } catch (e) {
        ours = { error: (e as Error).message };
      }
      expectCanonical(ours, ref[i + 1], `step ${i}`);
    });
  });
});
