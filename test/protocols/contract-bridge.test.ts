// Contract Bridge: the reference's spec.json byte for byte (so its protocol id is the reference's),
// duplicate scoring against the published table, the auction's and the play's refusals on hand-built
// situations, dummy control and privacy, whole boards played by members choosing from their own views
// (directly and through the group leader with verifying replicas and a leader change), and, where
// python3 imports the reference, the reference's hooks replaying the same boards step for step.
import { describe, expect, it } from 'vitest';
import { needReferencePython } from '../shared/require.js';
import { getCrypto } from '../../ts/crypto/index.js';
import { seeded } from '../../ts/engine/local.js';
import type { GroupHooks, GroupState } from '../../ts/hooks/types.js';
import { findBuiltin } from '../../ts/protocols/index.js';
import bridge, { legalCalls, legalCards, type BridgeState, type BridgeView } from '../../ts/protocols/contract-bridge/hooks.js';
import { bidValue, duplicateScore, standardFaces, winningTrickIndex, type Denomination } from '../../ts/protocols/contract-bridge/rules.js';
import { expectEqual } from './fast-expect.js';
import { fourSeats, hostContext, referenceSpecTests, refusalOf } from './group-fixtures.js';
import { builtinGroupConfig, derivedSeats, startTable } from './group-table.js';
import { build, referenceRequests, type Built } from './reference-batch.js';

const ID = '5d69cf0e7ff90b2b60191fb43ab2448d0bf9153555b827199c1d77bc3ea78f3e';

const make = (options: Record<string, unknown> = {}, seed = 1) => bridge.create(hostContext(options, seed)) as GroupHooks;
const MEMBERS = fourSeats('nesw', 'm');
const [N, E, S, W] = MEMBERS.map((m) => m.public_key) as [string, string, string, string];
const byKey = (k: string) => MEMBERS.find((m) => m.public_key === k)!;
const autoplay = bridge.autoplay!;

type Action = Record<string, unknown>;
/** Runs one action as the leader does: on a copy, so a refusal leaves the state untouched. */
const act = (h: GroupHooks, state: GroupState, actor: string, action: Action) => h.proto_group_handle(structuredClone(state), byKey(actor), action);
const refusal = (h: GroupHooks, state: GroupState, actor: string, action: Action): string => refusalOf(() => act(h, state, actor, action));
const bid = (level: number, denomination: Denomination): Action => ({ kind: 'bid', level, denomination });
const PASS: Action = { kind: 'pass' };
/** Plays calls in turn from the current player. */
function calls(h: GroupHooks, s: GroupState, ...list: Action[]): ReturnType<GroupHooks['proto_group_handle']> {
  let r = { state: s } as ReturnType<GroupHooks['proto_group_handle']>;
  for (const a of list) r = act(h, r.state, (r.state as BridgeState).current_player, a);
  return r;
}
const kinds = (events: unknown[] | undefined) => (events ?? []).map((e) => (e as { kind: string }).kind);

describe('Contract Bridge: spec and registration', () => {
  referenceSpecTests('contract-bridge', ID, "the reference's Contract Bridge spec");

  it('is a built-in under the reference alias with its one profile', () => {
    const b = findBuiltin('contract-bridge-v1');
    expect(b?.folder).toBe('contract-bridge');
    expect(b?.default_profile).toBe('standard');
    expect(b?.profiles['standard']?.options).toEqual({ board_number: 1 });
  });
});

describe('duplicate scoring', () => {
  // [level, denomination, doubled, tricks, vulnerable, score]: values from the duplicate scoring table.
  it.each([
    [1, 'nt', 0, 7, false, 90],
    [2, 'clubs', 0, 8, false, 90],
    [2, 'clubs', 0, 10, false, 130],
    [3, 'nt', 0, 9, false, 400],
    [3, 'nt', 0, 10, true, 630],
    [4, 'spades', 0, 10, false, 420],
    [4, 'hearts', 0, 10, true, 620],
    [5, 'diamonds', 0, 11, false, 400],
    [6, 'hearts', 0, 12, true, 1430],
    [6, 'nt', 0, 12, false, 990],
    [7, 'nt', 0, 13, true, 2220],
    [7, 'clubs', 0, 13, false, 1440],
    [1, 'clubs', 1, 7, false, 140],
    [1, 'clubs', 2, 7, false, 230],
    [2, 'hearts', 1, 8, false, 470],
    [4, 'spades', 1, 10, false, 590],
    [4, 'spades', 1, 11, true, 990],
    [3, 'nt', 2, 10, false, 1000],
    [2, 'diamonds', 2, 9, true, 1160],
    [4, 'spades', 0, 9, false, -50],
    [4, 'spades', 0, 8, true, -200],
    [3, 'nt', 1, 8, false, -100],
    [3, 'nt', 1, 6, false, -500],
    [4, 'hearts', 1, 6, false, -800],
    [5, 'clubs', 1, 6, false, -1100],
    [4, 'hearts', 1, 8, true, -500],
    [4, 'hearts', 1, 5, true, -1400],
    [1, 'nt', 2, 6, false, -200],
    [3, 'clubs', 2, 6, true, -1600],
    [7, 'nt', 0, 0, true, -1300],
  ] as const)('%i %s doubled=%i taking %i (vulnerable %s) scores %i', (level, denomination, doubled, tricks, vulnerable, score) => {
    expect(duplicateScore({ level, denomination, doubled, tricks, vulnerable })).toBe(score);
  });
});

describe('tricks', () => {
  const card = (rank: number, suit: string) => ({ rank, suit });
  it('the highest trump wins, else the highest card of the led suit; discards never win', () => {
    const trick = [card(10, 'hearts'), card(14, 'spades'), card(2, 'clubs'), card(12, 'hearts')];
    expect(winningTrickIndex(trick, 'hearts', null)).toBe(3);
    expect(winningTrickIndex(trick, 'hearts', 'clubs')).toBe(2);
    expect(winningTrickIndex(trick, 'hearts', 'spades')).toBe(1);
    expect(winningTrickIndex(trick, 'hearts', 'diamonds')).toBe(3);
    expect(winningTrickIndex([card(3, 'clubs'), card(14, 'diamonds')], 'clubs', null)).toBe(0);
  });
  it('bids rank by level, then clubs < diamonds < hearts < spades < no trump', () => {
    expect([bidValue(1, 'clubs'), bidValue(1, 'nt'), bidValue(2, 'clubs'), bidValue(7, 'nt')]).toEqual([0, 4, 5, 34]);
    expect(
      standardFaces()
        .map((f) => f.code)
        .slice(0, 14),
    ).toEqual(['2C', '3C', '4C', '5C', '6C', '7C', '8C', '9C', '10C', 'JC', 'QC', 'KC', 'AC', '2D']);
  });
});

describe('the auction', () => {
  it('deals thirteen private cards each and starts from the board dealer with its vulnerability', () => {
    const h = make({ deal_seed: 'deal' });
    const s = h.proto_group_initial_state(MEMBERS) as BridgeState;
    expect(Object.values(s.deck.hands).map((x) => x.length)).toEqual([13, 13, 13, 13]);
    expect([s.phase, s.dealer, s.current_player, s.vulnerability]).toEqual(['auction', N, N, 'none']);
    expect(s.players[E]).toEqual({ seat: 1, compass: 'east', partnership: 'ew' });
    for (const [board, dealer, vul] of [
      [2, E, 'ns'],
      [3, S, 'ew'],
      [4, W, 'both'],
      [5, N, 'ns'],
      [16, W, 'ew'],
      [17, N, 'none'],
      [32, W, 'ew'],
    ] as const) {
      const t = make({ deal_seed: 'deal', board_number: board }).proto_group_initial_state(MEMBERS) as BridgeState;
      expect([t.board_number, t.dealer, t.current_player, t.vulnerability]).toEqual([board, dealer, dealer, vul]);
    }
    expect(() => make({ board_number: 0 }).proto_group_initial_state(MEMBERS)).toThrow('board_number must be between 1 and 32');
    expect(() => make({ board_number: 33 }).proto_group_initial_state(MEMBERS)).toThrow('board_number must be between 1 and 32');
    expect(() => make({ board_number: '2' }).proto_group_initial_state(MEMBERS)).toThrow('board_number must be between 1 and 32');
    expect(() => make({ board_number: true }).proto_group_initial_state(MEMBERS)).toThrow('board_number must be between 1 and 32');
    expect(() => make().proto_group_initial_state(MEMBERS.slice(0, 3))).toThrow('Contract Bridge requires exactly four active Members');
    expect(() => make().proto_group_initial_state([...MEMBERS.slice(0, 3), { ...MEMBERS[3]!, status: 'left' }])).toThrow(
      'Contract Bridge requires exactly four active Members',
    );
  });

  it('refuses every illegal call with the reference text', () => {
    const h = make({ deal_seed: 'calls' });
    const s = h.proto_group_initial_state(MEMBERS);
    expect(refusal(h, s, E, PASS)).toBe("it is not this Member's turn to call");
    expect(refusal(h, s, N, { kind: 'play', card_id: 'x' })).toBe('auction accepts pass, bid, double, or redouble');
    expect(refusal(h, s, N, { kind: 'double' })).toBe('double is not legal in the current auction');
    expect(refusal(h, s, N, { kind: 'redouble' })).toBe('redouble is not legal in the current auction');
    for (const bad of [
      bid(0, 'clubs'),
      bid(8, 'nt'),
      { kind: 'bid', level: 1.5, denomination: 'clubs' },
      { kind: 'bid', level: '1', denomination: 'clubs' },
      { kind: 'bid', level: true, denomination: 'clubs' },
      bid(1, 'notrump' as Denomination),
      { kind: 'bid', level: 1 },
    ]) {
      expect(refusal(h, s, N, bad)).toBe('a bid requires level 1-7 and a valid denomination');
    }
    let t = act(h, s, N, bid(1, 'hearts')).state;
    expect(refusal(h, t, E, bid(1, 'hearts'))).toBe('a new bid must outrank the current contract');
    expect(refusal(h, t, E, bid(1, 'diamonds'))).toBe('a new bid must outrank the current contract');
    expect(refusal(h, t, E, { kind: 'redouble' })).toBe('redouble is not legal in the current auction');
    expect(refusal(h, t, E, bid(1, 'spades'))).toBe('accepted');
    t = act(h, t, E, PASS).state;
    // North's partner cannot double its own side; the doubled side may redouble, the other may not.
    expect(refusal(h, t, S, { kind: 'double' })).toBe('double is not legal in the current auction');
    t = act(h, t, S, PASS).state;
    t = act(h, t, W, { kind: 'double' }).state;
    expect(refusal(h, t, N, { kind: 'double' })).toBe('double is not legal in the current auction');
    expect(refusal(h, t, N, { kind: 'redouble' })).toBe('accepted');
    t = act(h, t, N, PASS).state;
    expect(refusal(h, t, E, { kind: 'redouble' })).toBe('redouble is not legal in the current auction');
    t = act(h, t, E, PASS).state;
    t = act(h, t, S, { kind: 'redouble' }).state;
    expect(refusal(h, t, W, { kind: 'redouble' })).toBe('redouble is not legal in the current auction');
    expect(refusal(h, t, W, { kind: 'double' })).toBe('double is not legal in the current auction');
    // A new bid clears the double.
    t = act(h, t, W, bid(2, 'clubs')).state;
    expect([(t as BridgeState).doubled, (t as BridgeState).last_non_pass]).toEqual([0, 'bid']);
  });

  it('four opening passes pass the board out', () => {
    const h = make({ deal_seed: 'out' });
    const r = calls(h, h.proto_group_initial_state(MEMBERS), PASS, PASS, PASS, PASS);
    expect([r.completed, r.outcome, (r.state as BridgeState).phase]).toEqual([true, 'passed_out', 'completed']);
    expect(kinds(r.events)).toEqual(['pass', 'board_passed_out']);
    expect((r.state as BridgeState).scores).toEqual({ ns: 0, ew: 0 });
    expect(refusal(h, r.state, N, PASS)).toBe('the board is complete');
  });

  it('three passes after a bid set the contract; the first of the side to name the strain declares', () => {
    const h = make({ deal_seed: 'contract' });
    let r = calls(h, h.proto_group_initial_state(MEMBERS), bid(1, 'clubs'), bid(1, 'hearts'), PASS, bid(2, 'hearts'), PASS, PASS);
    expect((r.state as BridgeState).phase).toBe('auction');
    expect(r.events).toEqual([{ kind: 'pass', public_key: E, seat: 1 }]);
    r = act(h, r.state, (r.state as BridgeState).current_player, { kind: 'double' });
    expect(r.events).toEqual([{ kind: 'double', public_key: S, seat: 2 }]);
    r = calls(h, r.state, PASS, PASS, PASS);
    const s = r.state as BridgeState;
    expect(s.contract).toEqual({ level: 2, denomination: 'hearts', doubled: 1, partnership: 'ew' });
    expect([s.phase, s.declarer, s.dummy, s.current_hand_owner, s.current_player]).toEqual(['playing', E, W, S, S]);
    expect(kinds(r.events)).toEqual(['pass', 'contract_set']);
    expect(r.events![1]).toEqual({ kind: 'contract_set', contract: s.contract, declarer: E, dummy: W });
    expect(s.auction.map((c) => c.kind)).toEqual(['bid', 'bid', 'pass', 'bid', 'pass', 'pass', 'double', 'pass', 'pass', 'pass']);
    expect(s.auction[3]).toEqual({ public_key: W, seat: 3, kind: 'bid', level: 2, denomination: 'hearts', value: 7 });
  });
});

/** A board in play: North declares 3NT, East leads, South is dummy. */
function inPlay(seed = 'play'): { h: GroupHooks; s: BridgeState } {
  const h = make({ deal_seed: seed });
  const s = calls(h, h.proto_group_initial_state(MEMBERS), bid(3, 'nt'), PASS, PASS, PASS).state as BridgeState;
  return { h, s };
}
const idsOf = (s: BridgeState, k: string) => s.deck.hands[k]!;
const suitOf = (s: BridgeState, id: string) => s.deck.catalog[id]!.suit;

describe('the play', () => {
  it('enforces turn, hand and suit with the reference texts; the declarer plays the dummy', () => {
    const { h, s } = inPlay();
    expect([s.declarer, s.dummy, s.current_player]).toEqual([N, S, E]);
    expect(refusal(h, s, E, PASS)).toBe('card play accepts only play');
    expect(refusal(h, s, N, { kind: 'play', card_id: idsOf(s, N)[0] })).toBe("it is not this Member's turn to play");
    expect(refusal(h, s, E, { kind: 'play', card_id: idsOf(s, N)[0] })).toBe('card_id is not in the active hand');
    expect(refusal(h, s, E, { kind: 'play', card_id: 7 })).toBe('card_id is not in the active hand');
    expect(refusal(h, s, E, { kind: 'play' })).toBe('card_id is not in the active hand');
    // Before the opening lead nobody sees the dummy.
    for (const m of MEMBERS) expect(h.proto_group_view(s, m)['dummy_hand']).toEqual([]);
    const lead = idsOf(s, E)[0]!;
    const r = act(h, s, E, { kind: 'play', card_id: lead });
    expect(kinds(r.events)).toEqual(['bridge_card_played', 'dummy_revealed']);
    expect(r.events![0]).toEqual({ kind: 'bridge_card_played', public_key: E, hand_owner: E, seat: 1, card: s.deck.catalog[lead] });
    const t = r.state as BridgeState;
    expect([t.current_hand_owner, t.current_player, t.dummy_revealed]).toEqual([S, N, true]);
    // The dummy itself may not play; the declarer plays the dummy's cards, following suit.
    const dummyIds = idsOf(t, S);
    expect(refusal(h, t, S, { kind: 'play', card_id: dummyIds[0] })).toBe("it is not this Member's turn to play");
    expect(refusal(h, t, N, { kind: 'play', card_id: idsOf(t, N)[0] })).toBe('card_id is not in the active hand');
    const led = suitOf(t, lead);
    const follows = dummyIds.filter((id) => suitOf(t, id) === led);
    const off = dummyIds.filter((id) => suitOf(t, id) !== led);
    if (follows.length && off.length) expect(refusal(h, t, N, { kind: 'play', card_id: off[0] })).toBe('the player must follow the led suit');
    const declarerView = h.proto_group_view(t, byKey(N)) as BridgeView;
    expect(declarerView.playable_hand.map((c) => c.card_id)).toEqual(dummyIds);
    expect(declarerView.my_hand.map((c) => c.card_id)).toEqual(idsOf(t, N));
    for (const m of MEMBERS) expect((h.proto_group_view(t, m) as BridgeView).dummy_hand.map((c) => c.card_id)).toEqual(dummyIds);
    expect((h.proto_group_view(t, byKey(S)) as BridgeView).playable_hand.map((c) => c.card_id)).toEqual(dummyIds);
    const pick = (follows[0] ?? off[0])!;
    const u = act(h, t, N, { kind: 'play', card_id: pick });
    expect(u.events).toEqual([{ kind: 'bridge_card_played', public_key: N, hand_owner: S, seat: 2, card: t.deck.catalog[pick] }]);
    expect((u.state as BridgeState).current_player).toBe(W);
    expect((h.proto_group_view(u.state, byKey(N)) as BridgeView).playable_hand.map((c) => c.card_id)).toEqual(idsOf(u.state as BridgeState, N));
  });

  it('a void hand may discard or ruff; a trick goes to its winner, who leads next', () => {
    // Search seeded deals for a trick where a player is void in the led suit.
    for (let i = 0; i < 200; i++) {
      const { h, s } = inPlay(`void${i}`);
      const lead = idsOf(s, E).find((id) => idsOf(s, W).every((x) => suitOf(s, x) !== suitOf(s, id)));
      if (!lead) continue;
      let r = act(h, s, E, { kind: 'play', card_id: lead });
      const led = suitOf(s, lead);
      const follow = (st: BridgeState, owner: string) => idsOf(st, owner).find((id) => suitOf(st, id) === led) ?? idsOf(st, owner)[0]!;
      r = act(h, r.state, N, { kind: 'play', card_id: follow(r.state as BridgeState, S) });
      const w = r.state as BridgeState;
      const discard = idsOf(w, W).find((id) => suitOf(w, id) !== led)!;
      r = act(h, r.state, W, { kind: 'play', card_id: discard });
      r = act(h, r.state, N, { kind: 'play', card_id: follow(r.state as BridgeState, N) });
      const done = r.state as BridgeState;
      const trick = done.trick_history[0]!;
      expect(trick.cards.map((p) => p.hand_owner)).toEqual([E, S, W, N]);
      const ledCards = trick.cards.filter((p) => p.card.suit === led);
      const best = ledCards.reduce((a, b) => (b.card.rank > a.card.rank ? b : a));
      expect(trick.winner).toBe(best.hand_owner); // no trumps: West's discard cannot win
      const team = best.hand_owner === N || best.hand_owner === S ? 'ns' : 'ew';
      expect(done.tricks).toEqual({ ns: team === 'ns' ? 1 : 0, ew: team === 'ew' ? 1 : 0 });
      expect(kinds(r.events)).toEqual(['bridge_card_played', 'bridge_trick_won']);
      expect(r.events![1]).toEqual({ kind: 'bridge_trick_won', winner: best.hand_owner, partnership: team, trick_number: 1 });
      expect([done.current_hand_owner, done.current_player, done.current_trick]).toEqual([best.hand_owner, best.hand_owner === S ? N : best.hand_owner, []]);
      expect(done.deck.discard_pile.length).toBe(4);
      return;
    }
    throw new Error('no seeded deal had a void in the led suit');
  });
});

/**
 * Every step of one board played by autoplay from each member's own view (after the scripted opening
 * calls `prefix`, made by whoever is to call), checking privacy on the way.
 */
function playBoard(
  options: Record<string, unknown>,
  seed: number,
  prefix: Action[] = [],
): { h: GroupHooks; steps: { actor: string; action: Action }[]; final: BridgeState; outcome: string; events: unknown[] } {
  const h = make(options, seed);
  const rnd = seeded(seed * 7 + 1);
  let s = h.proto_group_initial_state(MEMBERS) as BridgeState;
  const steps: { actor: string; action: Action }[] = [];
  for (let n = 0; n < 400; n++) {
    // Per step: each assertion is built only where its plain check fails.
    const views = MEMBERS.map((m) => h.proto_group_view(s, m) as BridgeView);
    views.forEach((v, i) => {
      const me = MEMBERS[i]!.public_key;
      const text = JSON.stringify(v);
      for (const [owner, ids] of Object.entries(s.deck.hands)) {
        if (owner === me || (s.dummy_revealed && owner === s.dummy)) continue;
        for (const id of ids) if (text.includes(id)) expect(text.includes(id), `seed ${seed}: seat ${i} sees a card of ${owner.slice(0, 1)}`).toBe(false);
      }
      expectEqual(
        v.my_hand.map((c) => c.card_id),
        s.deck.hands[me],
      );
    });
    const picks = MEMBERS.map((m, i) => autoplay(views[i]!, m, rnd));
    // Exactly the member whose turn it is has an action; the dummy never does.
    expectEqual(
      picks.map((p) => p !== null),
      MEMBERS.map((m) => m.public_key === s.current_player),
    );
    const i = picks.findIndex((p) => p !== null);
    const actor = MEMBERS[i]!.public_key;
    const action = n < prefix.length ? prefix[n]! : picks[i]!;
    const r = act(h, s, actor, action);
    steps.push({ actor, action });
    s = r.state as BridgeState;
    if (r.completed) {
      for (const [j, m] of MEMBERS.entries()) expect(autoplay(h.proto_group_view(s, m), m, rnd), `seat ${j}`).toBeNull();
      return { h, steps, final: s, outcome: r.outcome as string, events: r.events ?? [] };
    }
  }
  throw new Error(`seed ${seed}: the board did not end`);
}

describe('whole boards from autoplay', () => {
  it.each([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])('seed %i completes with the right outcome and scores', (seed) => {
    const { final, outcome, events } = playBoard({ deal_seed: `b${seed}`, board_number: ((seed - 1) % 32) + 1 }, seed);
    expect(final.phase).toBe('completed');
    expect(final.deck.discard_pile.length).toBe(outcome === 'passed_out' ? 0 : 52);
    if (outcome === 'passed_out') {
      expect(final.auction.map((c) => c.kind)).toEqual(['pass', 'pass', 'pass', 'pass']);
      return;
    }
    const c = final.contract!;
    expect(final.tricks.ns + final.tricks.ew).toBe(13);
    const made = final.tricks[c.partnership] >= c.level + 6;
    expect(outcome).toBe(`${c.partnership}_${made ? 'made' : 'down'}`);
    const done = events.at(-1) as { kind: string; contract_score: number; tricks: number; scores: Record<string, number> };
    expect(done.kind).toBe('bridge_board_complete');
    expect(done.tricks).toBe(final.tricks[c.partnership]);
    expect(done.contract_score >= 0).toBe(made);
    const winnerSide = made ? c.partnership : c.partnership === 'ns' ? 'ew' : 'ns';
    expect(final.scores[winnerSide]).toBe(Math.abs(done.contract_score));
    expect(final.scores[winnerSide === 'ns' ? 'ew' : 'ns']).toBe(0);
    // Every trick has four cards and follows suit where the hand could.
    for (const t of final.trick_history) expect(t.cards.length).toBe(4);
  });

  it('autoplay offers only legal calls and cards, and the random boards reach contracts, doubles and both results', () => {
    const outcomes = new Set<string>();
    let doubled = 0;
    for (let seed = 20; seed < 40; seed++) {
      const { final, outcome } = playBoard({ deal_seed: `many${seed}` }, seed);
      outcomes.add(outcome.replace(/^(ns|ew)_/, ''));
      if ((final.contract?.doubled ?? 0) > 0) doubled += 1;
    }
    expect([...outcomes].sort()).toEqual(expect.arrayContaining(['down', 'made']));
    expect(doubled).toBeGreaterThan(0);
    const h = make({ deal_seed: 'legal' });
    const s = h.proto_group_initial_state(MEMBERS);
    for (const c of legalCalls(h.proto_group_view(s, byKey(N)) as BridgeView)) expect(refusal(h, s, N, c)).toBe('accepted');
    expect(legalCalls(h.proto_group_view(s, byKey(N)) as BridgeView).length).toBe(36);
    const { h: h2, s: p } = inPlay('legal');
    const v = h2.proto_group_view(p, byKey(E)) as BridgeView;
    for (const c of legalCards(v)) expect(refusal(h2, p, E, { kind: 'play', card_id: c.card_id })).toBe('accepted');
  });

  it('without deal_seed the deal comes from ctx.random: same seed, same deal; other seed, other deal', () => {
    const deal = (seed: number) => JSON.stringify((make({}, seed).proto_group_initial_state(MEMBERS) as BridgeState).deck.hands);
    expect(deal(5)).toBe(deal(5));
    expect(deal(5)).not.toBe(deal(6));
  });
});

describe('recovery', () => {
  it('the snapshot holds no cards; restore redeals the same board with the scores kept', () => {
    const { h, s } = inPlay('rec');
    const played = { ...s, scores: { ns: 420, ew: 50 } } as BridgeState;
    const snap = h.proto_group_recovery_snapshot!(played);
    expect(snap).toEqual({ board_number: 1, restart_count: 0, scores: { ns: 420, ew: 50 } });
    const r = h.proto_group_restore!(structuredClone(snap), MEMBERS, 2) as BridgeState;
    expect([r.phase, r.board_number, r.restart_count, r.scores, r.auction, r.recovery_notice]).toEqual([
      'auction',
      1,
      1,
      { ns: 420, ew: 50 },
      [],
      'The previous private board was discarded after a Leader change.',
    ]);
    // A seeded redeal depends on the restart count: a fresh deal, not the compromised one.
    expect(r.deck.hands[N]).not.toEqual(s.deck.hands[N]);
    const changed = h.proto_group_on_leader_changed!(r, 'f'.repeat(64), 'e'.repeat(64));
    expect((changed.state as BridgeState).recovery_notice).toBe('Leader changed from ffffffff to eeeeeeee; the private board was redealt.');
    expect(changed.events).toEqual([{ kind: 'board_restarted_after_leader_change', old_leader: 'f'.repeat(64), new_leader: 'e'.repeat(64), board_number: 1 }]);
    const sparse = h.proto_group_restore!({}, MEMBERS, 2) as BridgeState;
    expect([sparse.board_number, sparse.restart_count, sparse.scores]).toEqual([1, 1, { ns: 0, ew: 0 }]);
    const fromText = h.proto_group_restore!({ board_number: '4', restart_count: 2, scores: { ns: '30' } }, MEMBERS, 2) as BridgeState;
    expect([fromText.board_number, fromText.dealer, fromText.vulnerability, fromText.restart_count, fromText.scores]).toEqual([
      4,
      W,
      'both',
      3,
      { ns: 30, ew: 0 },
    ]);
    expect(() => h.proto_group_restore!({ board_number: 'x' }, MEMBERS, 2)).toThrow('invalid literal for int()');
  });

  it('joins and departures are reported without touching the board', () => {
    const h = make({ deal_seed: 'j' });
    const s = h.proto_group_initial_state(MEMBERS);
    expect(h.proto_group_member_joined(s, MEMBERS[1]!).events).toEqual([{ kind: 'member_rejoined', public_key: E, seat: 1 }]);
    expect(h.proto_group_member_left(s, MEMBERS[2]!, 'timeout').events).toEqual([{ kind: 'member_disconnected', public_key: S, reason: 'timeout' }]);
  });
});

describe('through the group leader: four replicas, each acting from its own verified view', () => {
  const crypto = getCrypto('js');
  const seats = derivedSeats(crypto, 'bridge', 4, 'm');
  const { pk, members } = seats;
  const config = builtinGroupConfig('contract-bridge');
  const hooksOf = (seed: number) => bridge.create(hostContext({ deal_seed: 'leader' }, seed)) as GroupHooks;

  it.each([
    [1, -1],
    [2, 6],
    [3, 30],
  ])(
    'board %i (leader change after step %i): every envelope verified, views private, the board completes',
    (run, failAt) => {
      const table = startTable({ crypto, seats, config, groupId: `grp-bridge-${run}`, hooks: hooksOf(run) });
      const { replicas, deliver } = table;
      let { leader } = table;
      const seqs = [0, 0, 0, 0];
      const rnd = seeded(run * 13);
      let failedOver = false;
      for (let n = 0; n < 1000 && !leader.completed; n++) {
        const views = replicas.map((r) => r.view as BridgeView);
        // Own hands are disjoint; a view holds no other hand's card except the exposed dummy's. (Per step:
        // each assertion is built only where its plain check fails.)
        const hands = views.map((v) => v.my_hand.map((c) => c.card_id));
        const distinct = new Set(hands.flat()).size;
        if (distinct !== hands.flat().length) expect(distinct).toBe(hands.flat().length);
        views.forEach((v, i) => {
          const text = JSON.stringify(v);
          hands.forEach((h, j) => {
            if (j === i || (v.dummy_revealed && members[j]!.public_key === v.dummy)) return;
            for (const id of h) if (text.includes(id)) expect(text.includes(id)).toBe(false);
          });
        });
        const checkpoint = JSON.stringify(replicas[1]!.checkpoint);
        if (checkpoint.includes('card_id')) expect(checkpoint).not.toContain('card_id');
        const picks = members.map((m, i) => autoplay(views[i]!, m, rnd));
        const i = picks.findIndex((p) => p !== null);
        const acting = picks.filter((p) => p !== null).length;
        if (acting !== 1) expect(acting).toBe(1);
        const { envelopes, receipt } = leader.applyInput({ actor_public_key: pk(i), client_seq: ++seqs[i]!, action: picks[i]! });
        if (receipt.status !== 'accepted') expect(receipt.status).toBe('accepted');
        deliver(envelopes);
        if (n === failAt && !leader.completed) {
          failedOver = true;
          const before = replicas[2]!.checkpoint!;
          const scores = (before['protocol_state'] as { scores: unknown }).scores;
          leader = table.failover(hooksOf(run + 100), 2, before);
          const v = replicas[0]!.view as BridgeView;
          expect([v.phase, v.board_number, v.restart_count, v.auction, v.scores]).toEqual(['auction', 1, 1, [], scores]);
          expect(v.recovery_notice).toBe(`Leader changed from ${pk(0).slice(0, 8)} to ${pk(2).slice(0, 8)}; the private board was redealt.`);
          expect(v.my_hand.length).toBe(13);
        }
      }
      expect(failedOver).toBe(failAt >= 0);
      expect(leader.completed).toBe(true);
      expect(leader.outcome).toMatch(/^(passed_out|(ns|ew)_(made|down))$/);
      for (const r of replicas) expect([r.seq, r.frameHash]).toEqual([leader.seq, leader.frameHash]);
      const final = replicas[3]!.view as BridgeView;
      expect(final.phase).toBe('completed');
      if (leader.outcome !== 'passed_out') expect(final.tricks.ns + final.tricks.ew).toBe(13);
    },
    120_000,
  );
});

// The reference's own hooks, run by python3, replaying the same inputs. Every request of this file is built
// before its first test and answered by one python3 process, which runs while the other tests do; each
// test below then compares its own answer.
const haveRef = needReferencePython(
  ['aigenora.proto.hooks', 'aigenora.proto.card_games', 'aigenora.proto.shared_deck'],
  'the reference cross-check of Contract Bridge',
);

/** A request for contract-bridge-ref.py and what our side says to each of its outputs. */
interface RefCase {
  request: Record<string, unknown>;
  ours: unknown[];
}

/** Every contract, doubling, vulnerability and trick count. */
function scoresCase(): RefCase {
  const steps: Record<string, unknown>[] = [];
  const ours: unknown[] = [];
  for (let level = 1; level <= 7; level++)
    for (const denomination of ['clubs', 'diamonds', 'hearts', 'spades', 'nt'] as const)
      for (const doubled of [0, 1, 2])
        for (const vulnerable of [false, true])
          for (let tricks = 0; tricks <= 13; tricks++) {
            steps.push({ op: 'score', level, denomination, doubled, tricks, vulnerable });
            ours.push({ score: duplicateScore({ level, denomination, doubled, tricks, vulnerable }) });
          }
  return { request: { steps }, ours };
}

// Random boards, and scripted auctions the random ones rarely reach: a redoubled contract, a passed-out
// board, a declarer whose partner named the strain first, a doubled slam.
const XX: Action[] = [bid(1, 'hearts'), { kind: 'double' }, { kind: 'redouble' }, PASS, PASS, PASS];
const OUT: Action[] = [PASS, PASS, PASS, PASS];
const PARTNER: Action[] = [bid(1, 'clubs'), PASS, bid(1, 'hearts'), PASS, bid(2, 'hearts'), PASS, PASS, PASS];
const SLAM: Action[] = [PASS, bid(6, 'nt'), { kind: 'double' }, PASS, PASS, PASS];
const BOARDS: [number, Action[]][] = [
  [1, []],
  [2, []],
  [3, []],
  [4, []],
  [5, []],
  [6, []],
  [7, XX],
  [8, OUT],
  [9, PARTNER],
  [10, SLAM],
  [11, XX],
];

/** One output of a board's replay: the request step that asks for it (none for the first state), and ours. */
type Output = [Record<string, unknown> | null, () => unknown];

/**
 * A board's replay, one output at a time as the reference prints them: the first state, then per step the
 * refused actions on the way, the four views and the step; at the end the views, a refused pass, and
 * recovery. Our side of each output is made only when asked for (the beforeAll asks for the requests only).
 */
function* boardOutputs(h: GroupHooks, steps: { actor: string; action: Action }[]): Generator<Output> {
  let s = h.proto_group_initial_state(MEMBERS);
  const first = s;
  yield [null, () => ({ state: first })];
  const probe = (actor: string, action: Action): Output => {
    const at = s;
    return [{ op: 'try', actor, action }, () => ({ error: refusal(h, at, actor, action) })];
  };
  const views = function* (): Generator<Output> {
    const at = s;
    for (const m of MEMBERS) yield [{ op: 'view', viewer: m.public_key }, () => ({ view: h.proto_group_view(at, m) })];
  };
  for (const step of steps) {
    // Refused actions on the way: the same text, and the state unchanged.
    const st = s as BridgeState;
    const wrong = MEMBERS.find((m) => m.public_key !== step.actor)!.public_key;
    yield probe(wrong, step.action);
    if (st.phase === 'auction') {
      yield probe(step.actor, { kind: 'double' });
      yield probe(step.actor, { kind: 'redouble' });
      yield probe(step.actor, bid(1, 'clubs'));
      yield probe(step.actor, bid(9, 'nt'));
      yield probe(step.actor, { kind: 'claim' });
    } else {
      yield probe(step.actor, { kind: 'pass' });
      yield probe(step.actor, { kind: 'play', card_id: 'nope' });
      const hand = st.deck.hands[st.current_hand_owner]!;
      const led = st.current_trick[0]?.card.suit;
      const off = hand.find((id) => st.deck.catalog[id]!.suit !== led);
      if (led && off) yield probe(step.actor, { kind: 'play', card_id: off });
      if (st.dummy) yield probe(st.dummy, { kind: 'play', card_id: st.deck.hands[st.dummy]![0] });
    }
    yield* views();
    const r = act(h, s, step.actor, step.action);
    s = r.state;
    yield [{ op: 'act', ...step }, () => ({ state: r.state, events: r.events ?? [], completed: r.completed ?? false, outcome: r.outcome ?? null })];
  }
  yield* views();
  yield probe(N, PASS);
  // Recovery: the snapshot, a restore from it (a redeal of the same board) and the leader-change notice.
  const snap = h.proto_group_recovery_snapshot!(s);
  yield [{ op: 'snapshot' }, () => ({ snapshot: snap })];
  s = h.proto_group_restore!(structuredClone(snap), MEMBERS, 2);
  const restored = structuredClone(s); // on_leader_changed below edits this state in place
  yield [{ op: 'restore', checkpoint: snap }, () => ({ state: restored })];
  const lc = h.proto_group_on_leader_changed!(s, W, E);
  s = lc.state;
  yield [{ op: 'leader_changed', old: W, new: E }, () => ({ state: lc.state, events: lc.events ?? [] })];
  yield* views();
}

/** One board played by autoplay, and the request that replays it through the reference (see boardOutputs). */
function boardCase(seed: number, prefix: Action[]) {
  const options = { deal_seed: `x${seed}`, board_number: seed * 5 - (seed > 6 ? 30 : 0) };
  const { h, steps, final } = playBoard(options, seed + 40, prefix);
  const req: Record<string, unknown>[] = [];
  let outputs = 0;
  for (const [op] of boardOutputs(h, steps)) {
    if (op) req.push(op);
    outputs += 1;
  }
  return { request: { options, members: MEMBERS, steps: req }, h, steps, final, outputs };
}

const cases: { scores?: Built<RefCase>; boards: Record<number, Built<ReturnType<typeof boardCase>>> } = { boards: {} };

const reference = referenceRequests(haveRef, 'contract-bridge-ref.py', (requests) => {
  cases.scores = build(scoresCase);
  for (const [seed, prefix] of BOARDS) cases.boards[seed] = build(() => boardCase(seed, prefix));
  requests.addBuilt([cases.scores, ...BOARDS.map(([seed]) => cases.boards[seed])]);
});

describe.skipIf(!haveRef)("against the reference's hooks", () => {
  it('scores every contract, doubling, vulnerability and trick count as the reference does', async () => {
    const { mine, theirs } = await reference.answered(cases.scores);
    expectEqual(theirs, mine.ours);
  });

  it.each(BOARDS)("seed %i: every state, event, view, refusal and outcome equals the reference leader's", async (seed, prefix) => {
    const { mine, theirs } = await reference.answered(cases.boards[seed]);
    const { final, h, steps } = mine;
    if (prefix === XX) expect(final.contract).toMatchObject({ level: 1, denomination: 'hearts', doubled: 2 });
    if (prefix === SLAM) expect(final.contract).toMatchObject({ level: 6, denomination: 'nt', doubled: 1 });
    if (prefix === OUT) expect(final.contract).toBeNull();
    if (prefix === PARTNER) expect(final.declarer).toBe(final.turn_order[(final.turn_order.indexOf(final.dealer) + 2) % 4]);
    expect(theirs.length).toBe(mine.outputs);
    // Our side of each output, made as it is compared.
    let i = 0;
    for (const [, ours] of boardOutputs(h, steps)) {
      expectEqual(theirs[i], ours(), `step ${i}`);
      i += 1;
    }
  });
});
