/**
 * Classical Mahjong Core (authoritative_group): four fixed seats, 136 tiles from the shared deck, a
 * dealer who starts with fourteen, a claim window after every discard (win, then pung or kong by the
 * nearest seat, then chow by the next seat only), and a small additive scoring profile over a match of
 * `max_hands` hands with a rotating dealer. The authority state, events, views and refusal texts are the
 * reference's field for field, and a seeded wall (`deal_seed`) has the reference's tile ids in the
 * reference's order, so either implementation can lead or take over. Without a seed the wall's seed
 * comes from the session's random source.
 */
import { defineHooks, type GroupHookResult, type GroupHooks, type GroupMember, type GroupState, type HookContext } from '../../hooks/types.js';
import { fixedSeats, fourActiveMembers } from '../fixed-seats.js';
import {
  createSharedDeck,
  dealSeed,
  discardCards,
  drawCards,
  moveDiscardToZone,
  moveHandToZone,
  privateDeckView,
  takeFromHand,
  type Card,
  type SharedDeck,
} from '../shared-deck.js';
import { autoplay } from './autoplay.js';
import { chowSequences, scorePatterns, tileFaces, winKind, type Pattern, type TileFace, type WinKind } from './tiles.js';

export type Tile = Card<TileFace>;
export const WINDS = ['east', 'south', 'west', 'north'] as const;

export interface MeldGroup {
  kind: 'chow' | 'pung' | 'kong' | 'concealed_kong';
  owner: string;
  from?: string;
  cards: Tile[];
}
export interface LastDiscard {
  card_id: string;
  card: Tile;
  public_key: string;
  seat: number;
}
export interface ClaimResponse {
  kind: string;
  card_ids?: string[];
}
export type HandResult =
  | { kind: 'wall_exhausted'; winner: ''; points: 0 }
  | {
      kind: 'self_draw' | 'discard_win';
      winner: string;
      discarder: string | null;
      win_kind: WinKind;
      patterns: Pattern[];
      points: number;
      score_delta: Record<string, number>;
    };

/** The public part of the authority state (everything but the wall and hands). */
interface TableFields {
  phase: 'discard' | 'claim' | 'completed';
  hand_number: number;
  restart_count: number;
  recovery_notice: string;
  turn_order: string[];
  players: Record<string, { seat: number; wind: string }>;
  dealer: string;
  current_player: string;
  last_discard: LastDiscard | null;
  scores: Record<string, number>;
  last_result: HandResult | null;
}
export type MahjongState = GroupState &
  TableFields & {
    dealer_index: number;
    must_discard_after_claim: boolean;
    rivers: Record<string, string[]>;
    meld_groups: Record<string, MeldGroup[]>;
    claim_eligible: string[];
    claim_responses: Record<string, ClaimResponse>;
    deck: SharedDeck<TileFace>;
  };
export type MahjongView = Record<string, unknown> &
  TableFields & {
    wall_count: number;
    hand_counts: Record<string, number>;
    my_hand: Tile[];
    rivers: Record<string, Tile[]>;
    melds: Record<string, MeldGroup[]>;
    claim_response_count: number;
    claim_required_count: number;
    my_claim: ClaimResponse | null;
    you: { public_key: string; seat: number; wind: string; may_claim: boolean };
  };

type Member = Pick<GroupMember, 'public_key' | 'seat' | 'status'>;

/** Python's int() on a checkpoint field: numbers truncate, numeric text parses, anything else is refused. */
function pyInt(v: unknown): number {
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'number' && Number.isFinite(v)) return Math.trunc(v);
  if (typeof v === 'string' && /^\s*[+-]?\d+\s*$/.test(v)) return Number.parseInt(v, 10);
  if (typeof v === 'string' && !v.includes("'")) throw new Error(`invalid literal for int() with base 10: '${v}'`);
  throw new Error(`invalid literal for int(): ${JSON.stringify(v)}`);
}

/** A seat's wind, indexing as the reference's tuple does (negative seats count from the end). */
export function windOf(seat: number): string {
  const wind = WINDS[seat < 0 ? seat + 4 : seat];
  if (!Number.isInteger(seat) || !wind) throw new Error('tuple index out of range');
  return wind;
}

const nextKey = (order: readonly string[], key: string) => order[(order.indexOf(key) + 1) % order.length]!;
const clockwiseAfter = (order: readonly string[], key: string) => {
  const at = order.indexOf(key);
  return Array.from({ length: order.length - 1 }, (_, i) => order[(at + i + 1) % order.length]!);
};

const activeMembers = (members: readonly Member[]): Member[] => fourActiveMembers(members, 'Classical Mahjong');

function create(ctx: HookContext): GroupHooks {
  function optionInt(name: string, fallback: number, min: number, max: number): number {
    const value = Object.hasOwn(ctx.options, name) ? ctx.options[name] : fallback;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) throw new Error(`${name} must be between ${min} and ${max}`);
    return value;
  }

  function newHand(
    members: readonly Member[],
    scores: Record<string, number>,
    handNumber: number,
    dealerIndex: number,
    restartCount: number,
    recoveryNotice: string,
  ): MahjongState {
    if (members.length !== 4) throw new Error('Classical Mahjong requires exactly four active Members');
    const order = members.map((m) => m.public_key);
    const dealerAt = ((dealerIndex % 4) + 4) % 4;
    const seed = dealSeed(ctx.options['deal_seed'], [handNumber, restartCount], ctx.random);
    const deck = createSharedDeck(tileFaces(), members, 13, seed, 4);
    const dealer = order[dealerAt]!;
    drawCards(deck, dealer, 1);
    const players: TableFields['players'] = {};
    for (const m of members) players[m.public_key] = { seat: m.seat, wind: windOf(m.seat) };
    return {
      phase: 'discard',
      hand_number: handNumber,
      dealer_index: dealerAt,
      restart_count: restartCount,
      recovery_notice: recoveryNotice,
      turn_order: order,
      players,
      dealer,
      current_player: dealer,
      must_discard_after_claim: false,
      rivers: Object.fromEntries(order.map((k) => [k, []])),
      meld_groups: Object.fromEntries(order.map((k) => [k, []])),
      last_discard: null,
      claim_eligible: [],
      claim_responses: {},
      scores,
      last_result: null,
      deck,
    };
  }

  const handFaces = (state: MahjongState, key: string): Tile[] => state.deck.hands[key]!.map((id) => structuredClone(state.deck.catalog[id]!));

  /** The tiles `cardIds` names from a member's hand: exactly `expected` unique ids, all held. */
  function handCards(state: MahjongState, key: string, cardIds: unknown, expected: number): Tile[] {
    if (!Array.isArray(cardIds) || cardIds.length !== expected || new Set(cardIds).size !== expected || cardIds.some((id) => typeof id !== 'string')) {
      throw new Error(`card_ids must contain ${expected} unique tile ids`);
    }
    const hand = state.deck.hands[key]!;
    if (cardIds.some((id: string) => !hand.includes(id))) throw new Error("a selected tile is not in this Member's hand");
    return cardIds.map((id: string) => structuredClone(state.deck.catalog[id]!));
  }

  function finishHand(state: MahjongState, events: unknown[]): GroupHookResult {
    const maxHands = optionInt('max_hands', 4, 1, 32);
    if (state.hand_number >= maxHands) {
      state.phase = 'completed';
      const high = Math.max(...Object.values(state.scores));
      const winners = state.turn_order.filter((k) => state.scores[k] === high);
      const outcome = winners.length === 1 ? winners[0]! : 'draw';
      events.push({ kind: 'mahjong_match_complete', winner: outcome, winners, scores: { ...state.scores } });
      return { state, events, completed: true, outcome };
    }
    const members = state.turn_order.map((k) => ({ public_key: k, seat: state.players[k]!.seat, status: 'active' }));
    const replacement = newHand(members, state.scores, state.hand_number + 1, (state.dealer_index + 1) % 4, state.restart_count, state.recovery_notice);
    replacement.last_result = state.last_result;
    events.push({ kind: 'mahjong_hand_started', hand_number: replacement.hand_number, dealer: replacement.dealer });
    return { state: replacement, events };
  }

  function finishDraw(state: MahjongState, events: unknown[]): GroupHookResult {
    state.last_result = { kind: 'wall_exhausted', winner: '', points: 0 };
    events.push({ kind: 'mahjong_wall_exhausted' });
    return finishHand(state, events);
  }

  function win(state: MahjongState, winner: string, selfDraw: boolean, prior: unknown[] = []): GroupHookResult {
    const events = [...prior];
    const concealed = handFaces(state, winner);
    let discarder: string | null = null;
    if (!selfDraw) {
      concealed.push(state.last_discard!.card);
      discarder = state.last_discard!.public_key;
    }
    const melds = state.meld_groups[winner]!;
    const kind = winKind(concealed, melds.length);
    if (kind === null) throw new Error('the hand does not match a supported winning shape');
    const patterns = scorePatterns([...concealed, ...melds.flatMap((g) => g.cards)], {
      winKind: kind,
      meldKinds: melds.map((g) => g.kind),
      selfDraw,
      concealed: melds.every((g) => g.kind === 'concealed_kong'),
    });
    const points = patterns.reduce((a, p) => a + p.points, 0);
    const delta: Record<string, number> = Object.fromEntries(state.turn_order.map((k) => [k, 0]));
    if (selfDraw) {
      for (const k of state.turn_order) {
        if (k === winner) continue;
        delta[k]! -= points;
        delta[winner]! += points;
      }
    } else {
      delta[discarder!]! -= points * 3;
      delta[winner]! += points * 3;
    }
    for (const [k, amount] of Object.entries(delta)) state.scores[k]! += amount;
    state.last_result = { kind: selfDraw ? 'self_draw' : 'discard_win', winner, discarder, win_kind: kind, patterns, points, score_delta: delta };
    // The reference spreads the result into a 'mahjong_win' event, so the result's own kind
    // (self_draw / discard_win) is the event's kind: the event is a copy of the result.
    events.push(structuredClone(state.last_result));
    return finishHand(state, events);
  }

  function discard(state: MahjongState, actor: GroupMember, action: Record<string, unknown>): GroupHookResult {
    const key = actor.public_key;
    const cardId = action['card_id'];
    if (typeof cardId !== 'string' || !state.deck.hands[key]!.includes(cardId)) throw new Error("card_id is not in this Member's hand");
    const card = structuredClone(state.deck.catalog[cardId]!);
    takeFromHand(state.deck, key, [cardId]);
    discardCards(state.deck, [cardId]);
    state.must_discard_after_claim = false;
    state.rivers[key]!.push(cardId);
    state.last_discard = { card_id: cardId, card, public_key: key, seat: actor.seat };
    state.phase = 'claim';
    state.current_player = '';
    state.claim_eligible = state.turn_order.filter((k) => k !== key);
    state.claim_responses = {};
    return { state, events: [{ kind: 'mahjong_discard', ...structuredClone(state.last_discard) }] };
  }

  function concealedKong(state: MahjongState, actor: GroupMember, action: Record<string, unknown>): GroupHookResult {
    const key = actor.public_key;
    const cardIds = action['card_ids'];
    const cards = handCards(state, key, cardIds, 4);
    if (new Set(cards.map((c) => c.code)).size !== 1) throw new Error('a concealed kong needs four identical tile faces');
    moveHandToZone(state.deck, key, 'melds', key, cardIds as string[]);
    const group: MeldGroup = { kind: 'concealed_kong', owner: key, cards };
    state.meld_groups[key]!.push(group);
    // The reference spreads the group into a 'mahjong_meld' event, so the group's own kind is the
    // event's kind: the event is a copy of the group.
    const events: unknown[] = [structuredClone(group)];
    if (!state.deck.draw_pile.length) return finishDraw(state, events);
    drawCards(state.deck, key, 1);
    state.must_discard_after_claim = false;
    events.push({ kind: 'replacement_draw', public_key: key });
    return { state, events };
  }

  function handleTurn(state: MahjongState, actor: GroupMember, action: Record<string, unknown>): GroupHookResult {
    const kind = action['kind'];
    if (kind === 'discard') return discard(state, actor, action);
    if (kind === 'win') {
      if (state.must_discard_after_claim) throw new Error('cannot declare a self-draw win before drawing a tile');
      return win(state, actor.public_key, true);
    }
    if (kind === 'concealed_kong') return concealedKong(state, actor, action);
    throw new Error('turn accepts discard, win, or concealed_kong');
  }

  function applyClaimedMeld(state: MahjongState, claimant: string, response: ClaimResponse, events: unknown[]): GroupHookResult {
    const kind = response.kind as 'pung' | 'kong' | 'chow';
    const cardIds = response.card_ids!;
    const cards = handCards(state, claimant, cardIds, kind === 'kong' ? 3 : 2);
    moveHandToZone(state.deck, claimant, 'melds', claimant, cardIds);
    const last = state.last_discard!;
    const claimed = moveDiscardToZone(state.deck, 'melds', claimant, last.card_id);
    const river = state.rivers[last.public_key]!;
    river.splice(river.indexOf(last.card_id), 1);
    const group: MeldGroup = { kind, owner: claimant, from: last.public_key, cards: [...cards, claimed] };
    state.meld_groups[claimant]!.push(group);
    state.phase = 'discard';
    state.current_player = claimant;
    state.must_discard_after_claim = kind === 'pung' || kind === 'chow';
    state.last_discard = null;
    state.claim_eligible = [];
    state.claim_responses = {};
    events.push(structuredClone(group)); // the event is the group, as in concealedKong
    if (kind === 'kong') {
      if (!state.deck.draw_pile.length) return finishDraw(state, events);
      drawCards(state.deck, claimant, 1);
      events.push({ kind: 'replacement_draw', public_key: claimant });
    }
    return { state, events };
  }

  function resolveClaims(state: MahjongState, events: unknown[]): GroupHookResult {
    const ordered = clockwiseAfter(state.turn_order, state.last_discard!.public_key);
    const first = (kinds: string[]) => ordered.find((k) => kinds.includes(state.claim_responses[k]!.kind));
    const winner = first(['win']);
    if (winner) {
      events.push({ kind: 'claim_resolved', claim: 'win', winner });
      return win(state, winner, false, events);
    }
    const claimant = first(['pung', 'kong']) ?? first(['chow']);
    if (claimant) {
      const response = state.claim_responses[claimant]!;
      events.push({ kind: 'claim_resolved', claim: response.kind, winner: claimant });
      return applyClaimedMeld(state, claimant, response, events);
    }
    events.push({ kind: 'claim_resolved', claim: 'none' });
    const next = nextKey(state.turn_order, state.last_discard!.public_key);
    state.last_discard = null;
    state.claim_eligible = [];
    state.claim_responses = {};
    if (!state.deck.draw_pile.length) return finishDraw(state, events);
    drawCards(state.deck, next, 1);
    state.phase = 'discard';
    state.current_player = next;
    state.must_discard_after_claim = false;
    events.push({ kind: 'mahjong_draw', public_key: next });
    return { state, events };
  }

  function handleClaim(state: MahjongState, actor: GroupMember, action: Record<string, unknown>): GroupHookResult {
    const key = actor.public_key;
    if (!state.claim_eligible.includes(key)) throw new Error('this Member cannot respond to the discard');
    if (Object.hasOwn(state.claim_responses, key)) throw new Error('this Member already responded to the claim window');
    const kind = action['kind'];
    const response: ClaimResponse = { kind: kind as string };
    const discarded = state.last_discard!.card;
    if (kind === 'pass_claim') {
      // nothing to check
    } else if (kind === 'win') {
      if (winKind([...handFaces(state, key), discarded], state.meld_groups[key]!.length) === null)
        throw new Error('the discard does not complete a supported win');
    } else if (kind === 'pung' || kind === 'kong') {
      const cardIds = action['card_ids'];
      const cards = handCards(state, key, cardIds, kind === 'pung' ? 2 : 3);
      if (cards.some((c) => c.code !== discarded.code)) throw new Error(`${kind} tiles must match the discard`);
      response.card_ids = [...(cardIds as string[])];
    } else if (kind === 'chow') {
      if (key !== nextKey(state.turn_order, state.last_discard!.public_key)) throw new Error('only the next seat may chow');
      const cardIds = action['card_ids'];
      const codes = handCards(state, key, cardIds, 2)
        .map((c) => c.code)
        .sort()
        .join(' ');
      const choices = chowSequences(handFaces(state, key), discarded).map((pair) => [...pair].sort().join(' '));
      if (!choices.includes(codes)) throw new Error('card_ids do not form a legal chow');
      response.card_ids = [...(cardIds as string[])];
    } else {
      throw new Error('claim accepts pass_claim, win, pung, kong, or chow');
    }
    state.claim_responses[key] = response;
    const events: unknown[] = [{ kind: 'claim_response_received', public_key: key, response_count: Object.keys(state.claim_responses).length }];
    if (Object.keys(state.claim_responses).length < state.claim_eligible.length) return { state, events };
    return resolveClaims(state, events);
  }

  return {
    supported_control_modes: () => ['autonomous', 'hybrid', 'human'],
    proto_host_metadata: () => ['Classical Mahjong Core', 'game,tiles,multiplayer,mahjong,shared-deck', 'supply', {}],

    proto_group_initial_state(members: GroupMember[]): GroupState {
      const points = optionInt('starting_points', 25000, 0, 100000);
      optionInt('max_hands', 4, 1, 32);
      const active = activeMembers(members);
      return newHand(active, Object.fromEntries(active.map((m) => [m.public_key, points])), 1, 0, 0, '');
    },

    ...fixedSeats,

    // A member whose turn ran out discards the tile it drew last (the newest in its hand: any tile is a
    // legal discard) and passes a claim window it has not answered. It never declares a win or a meld
    // in its own name: those are its choices to make.
    proto_group_timeout_action(s: GroupState, member: GroupMember): Record<string, unknown> | null {
      const state = s as MahjongState;
      const key = member.public_key;
      if (state.phase === 'discard' && state.current_player === key) {
        const newest = state.deck.hands[key]?.at(-1);
        return newest === undefined ? null : { kind: 'discard', card_id: newest };
      }
      if (state.phase === 'claim' && state.claim_eligible.includes(key) && !Object.hasOwn(state.claim_responses, key)) return { kind: 'pass_claim' };
      return null;
    },

    proto_group_handle(s: GroupState, actor: GroupMember, action: Record<string, unknown>): GroupHookResult {
      const state = s as MahjongState;
      if (state.phase === 'completed') throw new Error('the Mahjong match is complete');
      if (state.phase === 'discard') {
        if (actor.public_key !== state.current_player) throw new Error("it is not this Member's turn");
        return handleTurn(state, actor, action);
      }
      if (state.phase === 'claim') return handleClaim(state, actor, action);
      throw new Error('the Mahjong table is not accepting actions');
    },

    proto_group_view(s: GroupState, viewer: GroupMember): Record<string, unknown> {
      const state = s as MahjongState;
      const deck = privateDeckView(state.deck, viewer.public_key);
      const catalog = state.deck.catalog;
      // The committed state is frozen and shared: the view copies what it hands out.
      const view: MahjongView = {
        phase: state.phase,
        hand_number: state.hand_number,
        restart_count: state.restart_count,
        recovery_notice: state.recovery_notice,
        turn_order: [...state.turn_order],
        players: structuredClone(state.players),
        dealer: state.dealer,
        current_player: state.current_player,
        wall_count: deck.draw_count,
        hand_counts: deck.hand_counts,
        my_hand: deck.my_hand,
        rivers: Object.fromEntries(Object.entries(state.rivers).map(([k, ids]) => [k, ids.map((id) => structuredClone(catalog[id]!))])),
        melds: structuredClone(state.meld_groups),
        last_discard: structuredClone(state.last_discard),
        claim_response_count: Object.keys(state.claim_responses).length,
        claim_required_count: state.claim_eligible.length,
        my_claim: structuredClone(state.claim_responses[viewer.public_key] ?? null),
        scores: { ...state.scores },
        last_result: structuredClone(state.last_result),
        you: { public_key: viewer.public_key, seat: viewer.seat, wind: windOf(viewer.seat), may_claim: state.claim_eligible.includes(viewer.public_key) },
      };
      return view;
    },

    // Only public facts survive a leader change: the hidden wall and hands are never copied to failover candidates.
    proto_group_recovery_snapshot(s: GroupState): GroupState {
      const state = s as MahjongState;
      return { hand_number: state.hand_number, dealer_index: state.dealer_index, restart_count: state.restart_count, scores: { ...state.scores } };
    },

    proto_group_restore(checkpoint: GroupState, members: GroupMember[]): GroupState {
      const active = activeMembers(members);
      // dict.get(name, fallback): only an absent field takes the fallback.
      const get = (o: Record<string, unknown>, name: string, fallback: unknown) => (Object.hasOwn(o, name) ? o[name] : fallback);
      const saved = get(checkpoint, 'scores', {});
      if (typeof saved !== 'object' || saved === null || Array.isArray(saved)) throw new Error('checkpoint scores must be an object');
      const scores = Object.fromEntries(active.map((m) => [m.public_key, pyInt(get(saved as Record<string, unknown>, m.public_key, 0))]));
      return newHand(
        active,
        scores,
        pyInt(get(checkpoint, 'hand_number', 1)),
        pyInt(get(checkpoint, 'dealer_index', 0)),
        pyInt(get(checkpoint, 'restart_count', 0)) + 1,
        'The interrupted hidden wall was discarded after a Leader change.',
      );
    },

    proto_group_on_leader_changed(s: GroupState, oldLeader: string, newLeader: string): GroupHookResult {
      const state = s as MahjongState;
      state.recovery_notice = `Leader changed from ${oldLeader.slice(0, 8)} to ${newLeader.slice(0, 8)}; the private hand was restarted.`;
      return {
        state,
        events: [{ kind: 'mahjong_hand_restarted_after_leader_change', old_leader: oldLeader, new_leader: newLeader, hand_number: state.hand_number }],
      };
    },
  };
}

export default defineHooks('authoritative_group', create, autoplay);
