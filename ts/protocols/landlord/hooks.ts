/**
 * Four-player Landlord (authoritative_group): two 54-card decks, 25 cards to each of four seats and an
 * eight-card bottom to the winning bidder, one Landlord against three Farmers. The authority state,
 * events, views and refusal texts are the reference's field for field, and a seeded deal (the
 * `deal_seed` option) gives the reference's card ids in the reference's order, so a leader of either
 * implementation can take over from the other and a member cannot tell them apart. Without a seed the
 * deal's seed comes from the session's random source.
 */
import { defineHooks, type GroupHookResult, type GroupMember, type GroupState } from '../../hooks/types.js';
import { fixedSeats, fourActiveMembers } from '../fixed-seats.js';
import { beats, cardFaces, classify, suggestPlays, type Combination } from './rules.js';
import { createSharedDeck, dealSeed, drawCards, playToDiscard, privateDeckView, type Card as DeckCard, type SharedDeck as Deck } from '../shared-deck.js';
import type { CardFace } from './rules.js';

type Card = DeckCard<CardFace>;
type SharedDeck = Deck<CardFace>;

export interface PublicPlay {
  public_key: string;
  seat: number;
  cards: Card[];
  combination: Combination;
}
interface Player {
  seat: number;
  role: 'unassigned' | 'landlord' | 'farmer';
}
/** The public part of the authority state (everything but the deck). */
interface TableFields {
  phase: 'bidding' | 'playing' | 'completed';
  round_number: number;
  restart_count: number;
  recovery_notice: string;
  players: Record<string, Player>;
  turn_order: string[];
  current_player: string;
  bids: Record<string, number>;
  highest_bid: number;
  highest_bidder: string;
  landlord: string;
  bottom_revealed: Card[];
  last_play: PublicPlay | null;
  passes: number;
  bombs: number;
  scores: Record<string, number>;
}
export type LandlordState = GroupState & TableFields & { deck: SharedDeck };
export type LandlordView = Record<string, unknown> &
  TableFields & {
    hand_counts: Record<string, number>;
    my_hand: Card[];
    discard: Card[];
    you: { public_key: string; seat: number; is_landlord: boolean };
  };
export type LandlordAction = { kind: 'bid'; value: number } | { kind: 'play'; card_ids: string[] } | { kind: 'pass' };

const HAND_SIZE = 25;
const MAX_SELECTED = 20;

/** Python's int() on a checkpoint field: numbers truncate, numeric text parses, anything else is refused. */
function pyInt(v: unknown, fallback: number): number {
  if (v === undefined) return fallback;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'number' && Number.isFinite(v)) return Math.trunc(v);
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'string' && /^\s*[+-]?\d+\s*$/.test(v)) return Number.parseInt(v, 10);
  throw new Error(`invalid literal for int(): ${JSON.stringify(v)}`);
}

function nextPlayer(state: LandlordState, key: string): string {
  const order = state.turn_order;
  return order[(order.indexOf(key) + 1) % order.length]!;
}

function scoreRound(state: LandlordState, winner: string): ['landlord' | 'farmers', Record<string, number>] {
  const base = Math.max(1, state.highest_bid) * 2 ** state.bombs;
  const landlordWon = winner === state.landlord;
  const delta: Record<string, number> = {};
  for (const key of state.turn_order) delta[key] = key === state.landlord ? (landlordWon ? 3 : -3) * base : landlordWon ? -base : base;
  return [landlordWon ? 'landlord' : 'farmers', delta];
}

/** The legal bids, or a selection of legal plays (see suggestPlays) and the pass when it is allowed, for the viewer of `view`. */
export function legalActions(view: LandlordView): LandlordAction[] {
  if (view.phase === 'completed' || view.current_player !== view.you.public_key) return [];
  if (view.phase === 'bidding') return Object.hasOwn(view.bids, view.you.public_key) ? [] : [0, 1, 2, 3].map((value) => ({ kind: 'bid', value }));
  const previous = view.last_play;
  const plays: LandlordAction[] = suggestPlays(view.my_hand, previous?.combination ?? null).map((p) => ({ kind: 'play', card_ids: p.card_ids }));
  return previous && previous.public_key !== view.you.public_key ? [{ kind: 'pass' }, ...plays] : plays;
}

export default defineHooks(
  'authoritative_group',
  (ctx) => {
    function newRound(
      members: readonly GroupMember[] | readonly { public_key: string; seat: number; status: string }[],
      scores: Record<string, number>,
      roundNumber: number,
      restartCount: number,
      recoveryNotice: string,
    ): LandlordState {
      const active = fourActiveMembers(members, 'Four-player Landlord');
      const seed = dealSeed(ctx.options['deal_seed'], [roundNumber, restartCount], ctx.random);
      const deck = createSharedDeck(cardFaces(), active, HAND_SIZE, seed, 2);
      const order = active.map((m) => m.public_key);
      const players: Record<string, Player> = {};
      for (const m of active) players[m.public_key] = { seat: m.seat, role: 'unassigned' };
      return {
        phase: 'bidding',
        round_number: roundNumber,
        restart_count: restartCount,
        recovery_notice: recoveryNotice,
        players,
        turn_order: order,
        current_player: order[0]!,
        bids: {},
        highest_bid: 0,
        highest_bidder: '',
        landlord: '',
        bottom_revealed: [],
        last_play: null,
        passes: 0,
        bombs: 0,
        scores,
        deck,
      };
    }

    function handleBid(state: LandlordState, actor: GroupMember, action: Record<string, unknown>): GroupHookResult {
      if (action['kind'] !== 'bid') throw new Error('bidding accepts only a bid action');
      const raw = action['value'];
      const value = typeof raw === 'bigint' ? Number(raw) : raw;
      if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 3) throw new Error('bid value must be 0, 1, 2, or 3');
      const key = actor.public_key;
      if (Object.hasOwn(state.bids, key)) throw new Error('this Member has already bid');
      state.bids[key] = value;
      if (value > state.highest_bid) {
        state.highest_bid = value;
        state.highest_bidder = key;
      }
      const events: unknown[] = [{ kind: 'bid', public_key: key, seat: actor.seat, value }];
      const done = value === 3 || Object.keys(state.bids).length === state.turn_order.length;
      if (done && !state.highest_bidder) {
        const members = Object.entries(state.players).map(([public_key, p]) => ({ public_key, seat: p.seat, status: 'active' }));
        const replacement = newRound(members, state.scores, state.round_number + 1, state.restart_count, 'All Members passed; the authority redealt.');
        events.push({ kind: 'all_passed_redeal', round_number: replacement.round_number });
        return { state: replacement, events };
      }
      if (done) {
        const landlord = state.highest_bidder;
        const bottom = drawCards(state.deck, landlord, state.deck.draw_pile.length);
        state.bottom_revealed = bottom;
        state.landlord = landlord;
        for (const [k, p] of Object.entries(state.players)) p.role = k === landlord ? 'landlord' : 'farmer';
        state.phase = 'playing';
        state.current_player = landlord;
        events.push({ kind: 'landlord_selected', public_key: landlord, bid: state.highest_bid, bottom: bottom.map((c) => ({ ...c })) });
      } else {
        let next = nextPlayer(state, key);
        while (Object.hasOwn(state.bids, next)) next = nextPlayer(state, next);
        state.current_player = next;
      }
      return { state, events };
    }

    function handlePlay(state: LandlordState, actor: GroupMember, action: Record<string, unknown>): GroupHookResult {
      const kind = action['kind'];
      if (kind === 'pass') {
        if (!state.last_play) throw new Error('the trick leader cannot pass');
        if (state.last_play.public_key === actor.public_key) throw new Error('the last player cannot pass to itself');
        state.passes += 1;
        const events: unknown[] = [{ kind: 'pass', public_key: actor.public_key }];
        if (state.passes >= state.turn_order.length - 1) {
          const winner = state.last_play.public_key;
          state.last_play = null;
          state.passes = 0;
          state.current_player = winner;
          events.push({ kind: 'trick_reset', public_key: winner });
        } else {
          state.current_player = nextPlayer(state, actor.public_key);
        }
        return { state, events };
      }
      if (kind !== 'play') throw new Error('playing accepts play or pass');
      const ids = action['card_ids'];
      if (!Array.isArray(ids) || !ids.length || ids.length > MAX_SELECTED || new Set(ids).size !== ids.length || ids.some((id) => typeof id !== 'string')) {
        throw new Error('card_ids must be a non-empty unique array');
      }
      const cardIds = ids as string[];
      const hand = state.deck.hands[actor.public_key] ?? [];
      if (cardIds.some((id) => !hand.includes(id))) throw new Error("a selected card is not in this Member's hand");
      const cards = cardIds.map((id) => ({ ...state.deck.catalog[id]! }));
      const combination = classify(cards);
      if (state.last_play && !beats(combination, state.last_play.combination)) throw new Error('the selected cards do not beat the previous play');
      playToDiscard(state.deck, actor.public_key, cardIds);
      if (combination.tier > 0) state.bombs += 1;
      const play: PublicPlay = { public_key: actor.public_key, seat: actor.seat, cards, combination };
      state.last_play = play;
      state.passes = 0;
      const events: unknown[] = [{ kind: 'play', ...structuredClone(play) }];
      if (!state.deck.hands[actor.public_key]!.length) {
        const [outcome, delta] = scoreRound(state, actor.public_key);
        state.phase = 'completed';
        for (const [k, amount] of Object.entries(delta)) state.scores[k] = (state.scores[k] ?? 0) + amount;
        events.push({ kind: 'game_over', outcome, winner: actor.public_key, score_delta: delta });
        return { state, events, completed: true, outcome };
      }
      state.current_player = nextPlayer(state, actor.public_key);
      return { state, events };
    }

    return {
      supported_control_modes: () => ['autonomous', 'hybrid', 'human'],
      proto_host_metadata: () => ['Four-player Landlord', 'game,cards,multiplayer,landlord', 'supply', {}],

      proto_group_initial_state(members: GroupMember[]): GroupState {
        const scores: Record<string, number> = {};
        for (const m of members) scores[m.public_key] = 0;
        return newRound(members, scores, 1, 0, '');
      },

      ...fixedSeats,

      // A member whose turn ran out bids 0 (the bidding's pass), passes when the trick allows it, and
      // otherwise (it leads) plays its lowest single card, which is always a legal lead.
      proto_group_timeout_action(s: GroupState, member: GroupMember): Record<string, unknown> | null {
        const state = s as LandlordState;
        const key = member.public_key;
        if (state.current_player !== key) return null;
        if (state.phase === 'bidding') return Object.hasOwn(state.bids, key) ? null : { kind: 'bid', value: 0 };
        if (state.phase !== 'playing') return null;
        if (state.last_play && state.last_play.public_key !== key) return { kind: 'pass' };
        const hand = state.deck.hands[key] ?? [];
        const lowest = hand.reduce<string | undefined>(
          (best, id) => (best === undefined || state.deck.catalog[id]!.value < state.deck.catalog[best]!.value ? id : best),
          undefined,
        );
        return lowest === undefined ? null : { kind: 'play', card_ids: [lowest] };
      },

      proto_group_handle(s: GroupState, actor: GroupMember, action: Record<string, unknown>): GroupHookResult {
        const state = s as LandlordState;
        if (state.phase === 'completed') throw new Error('the round is complete');
        if (actor.public_key !== state.current_player) throw new Error("it is not this Member's turn");
        if (state.phase === 'bidding') return handleBid(state, actor, action);
        if (state.phase === 'playing') return handlePlay(state, actor, action);
        throw new Error('the table is not accepting actions');
      },

      proto_group_view(s: GroupState, viewer: GroupMember): Record<string, unknown> {
        const state = s as LandlordState;
        const deck = privateDeckView(state.deck, viewer.public_key);
        // The committed state is frozen and shared: the view copies what it hands out.
        const view: LandlordView = {
          phase: state.phase,
          round_number: state.round_number,
          restart_count: state.restart_count,
          recovery_notice: state.recovery_notice,
          players: structuredClone(state.players),
          turn_order: [...state.turn_order],
          current_player: state.current_player,
          bids: { ...state.bids },
          highest_bid: state.highest_bid,
          highest_bidder: state.highest_bidder,
          landlord: state.landlord,
          bottom_revealed: structuredClone(state.bottom_revealed),
          last_play: structuredClone(state.last_play),
          passes: state.passes,
          bombs: state.bombs,
          scores: { ...state.scores },
          hand_counts: deck.hand_counts,
          my_hand: deck.my_hand,
          discard: deck.discard,
          you: { public_key: viewer.public_key, seat: viewer.seat, is_landlord: viewer.public_key === state.landlord },
        };
        return view;
      },

      // Only public facts survive a leader change: the hidden deal is never copied to failover candidates.
      proto_group_recovery_snapshot(s: GroupState): GroupState {
        const state = s as LandlordState;
        return { round_number: state.round_number, restart_count: state.restart_count, scores: { ...state.scores } };
      },

      proto_group_restore(checkpoint: GroupState, members: GroupMember[]): GroupState {
        const saved = (checkpoint['scores'] ?? {}) as Record<string, unknown>;
        const scores: Record<string, number> = {};
        for (const m of members) scores[m.public_key] = pyInt(saved[m.public_key], 0);
        return newRound(
          members,
          scores,
          pyInt(checkpoint['round_number'], 1) + 1,
          pyInt(checkpoint['restart_count'], 0) + 1,
          'The previous private deal was discarded after a Leader change.',
        );
      },

      proto_group_on_leader_changed(s: GroupState, oldLeader: string, newLeader: string): GroupHookResult {
        const state = s as LandlordState;
        state.recovery_notice = `Leader changed from ${oldLeader.slice(0, 8)} to ${newLeader.slice(0, 8)}; the private deal was restarted.`;
        return {
          state,
          events: [{ kind: 'round_restarted_after_leader_change', old_leader: oldLeader, new_leader: newLeader, round_number: state.round_number }],
        };
      },
    };
  },
  autoplay,
);

/**
 * The unattended player, from its own view: bids mostly above zero so few deals end in a redeal, passes
 * now and then when it may, and otherwise plays one of the suggested combinations at random.
 */
export function autoplay(view: Record<string, unknown>, _me: GroupMember, random: () => number): LandlordAction | null {
  const actions = legalActions(view as LandlordView);
  if (!actions.length) return null;
  if ((view as LandlordView).phase === 'bidding') return { kind: 'bid', value: random() < 0.25 ? 0 : 1 + Math.floor(random() * 3) };
  const pass = actions.find((a) => a.kind === 'pass');
  const plays = actions.filter((a) => a.kind !== 'pass');
  if (pass && (!plays.length || random() < 0.3)) return pass;
  return plays[Math.floor(random() * plays.length)]!;
}
