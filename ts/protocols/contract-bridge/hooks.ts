/**
 * Contract Bridge (authoritative_group): one duplicate-scored board for four fixed seats, North-South
 * against East-West. An auction from the board's dealer sets the contract; the declarer's left-hand
 * opponent leads, the dummy is exposed after that lead and the declarer plays its cards. The authority
 * state, events, views, completion, outcome and refusal texts are the reference's field for field, and a
 * seeded deal (the `deal_seed` option) gives the reference's card ids in the reference's order, so either
 * implementation's leader can take over from the other. Without a seed the deal's seed comes from the
 * session's random source.
 */
import { defineHooks, type GroupHookResult, type GroupMember, type GroupState } from '../../hooks/types.js';
import { fixedSeats, fourActiveMembers } from '../fixed-seats.js';
import { createSharedDeck, dealSeed, discardCards, privateDeckView, takeFromHand, type Card as DeckCard, type SharedDeck } from '../shared-deck.js';
import {
  COMPASS,
  VULNERABILITY,
  bidValue,
  checkFollowSuit,
  duplicateScore,
  isDenomination,
  otherSide,
  partnershipOf,
  standardFaces,
  winningTrickIndex,
  SUITS,
  type CardFace,
  type Denomination,
  type Partnership,
} from './rules.js';

export type Card = DeckCard<CardFace>;
type CallKind = 'pass' | 'bid' | 'double' | 'redouble';
export interface Call {
  public_key: string;
  seat: number;
  kind: CallKind;
  level?: number;
  denomination?: Denomination;
  value?: number;
}
export interface Bid extends Call {
  kind: 'bid';
  level: number;
  denomination: Denomination;
  value: number;
}
export interface Contract {
  level: number;
  denomination: Denomination;
  doubled: number;
  partnership: Partnership;
}
export interface TrickPlay {
  /** Who submitted the card: the declarer for the dummy's cards. */
  public_key: string;
  hand_owner: string;
  seat: number;
  card: Card;
}
interface Player {
  seat: number;
  compass: string;
  partnership: Partnership;
}
type Scores = Record<Partnership, number>;
/** What every member sees of the table (the state less the deck and the auction's bookkeeping). */
interface TableFields {
  phase: 'auction' | 'playing' | 'completed';
  board_number: number;
  restart_count: number;
  recovery_notice: string;
  players: Record<string, Player>;
  turn_order: string[];
  dealer: string;
  vulnerability: string;
  current_player: string;
  current_hand_owner: string;
  auction: Call[];
  last_bid: Bid | null;
  doubled: number;
  contract: Contract | null;
  declarer: string;
  dummy: string;
  dummy_revealed: boolean;
  current_trick: TrickPlay[];
  trick_history: { number: number; winner: string; cards: TrickPlay[] }[];
  tricks: Scores;
  scores: Scores;
}
export type BridgeState = GroupState &
  TableFields & {
    last_non_pass: '' | 'bid' | 'double' | 'redouble';
    consecutive_passes: number;
    deck: SharedDeck<CardFace>;
  };
export type BridgeView = Record<string, unknown> &
  TableFields & {
    dummy_hand: Card[];
    my_hand: Card[];
    /** The cards the viewer may play now: its own hand, or the dummy's when the declarer plays for it. */
    playable_hand: Card[];
    hand_counts: Record<string, number>;
    you: { public_key: string; seat: number; compass: string; partnership: Partnership };
  };

/** Python's int() on a checkpoint field: numbers truncate, numeric text parses, anything else is refused. */
function pyInt(v: unknown, fallback: number): number {
  if (v === undefined) return fallback;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'number' && Number.isFinite(v)) return Math.trunc(v);
  if (typeof v === 'string' && /^\s*[+-]?\d+\s*$/.test(v)) return Number.parseInt(v, 10);
  throw new Error(`invalid literal for int(): ${JSON.stringify(v)}`);
}
const pyMod = (a: number, n: number): number => ((a % n) + n) % n;

const nextKey = (state: TableFields, key: string): string => state.turn_order[(state.turn_order.indexOf(key) + 1) % state.turn_order.length]!;
const teamOf = (state: TableFields, key: string): Partnership => state.players[key]!.partnership;

export default defineHooks(
  'authoritative_group',
  (ctx) => {
    function newBoard(members: readonly GroupMember[], boardNumber: number, scores: Scores, restartCount: number, recoveryNotice: string): BridgeState {
      const active = fourActiveMembers(members, 'Contract Bridge');
      const seed = dealSeed(ctx.options['deal_seed'], [boardNumber, restartCount], ctx.random);
      const deck = createSharedDeck(standardFaces(), active, 13, seed);
      const order = active.map((m) => m.public_key);
      const dealer = order[pyMod(boardNumber - 1, 4)]!;
      const players: Record<string, Player> = {};
      for (const m of active) players[m.public_key] = { seat: m.seat, compass: COMPASS[m.seat]!, partnership: partnershipOf(m.seat) };
      return {
        phase: 'auction',
        board_number: boardNumber,
        restart_count: restartCount,
        recovery_notice: recoveryNotice,
        players,
        turn_order: order,
        dealer,
        vulnerability: VULNERABILITY[pyMod(boardNumber - 1, 16)]!,
        current_player: dealer,
        current_hand_owner: '',
        auction: [],
        last_bid: null,
        last_non_pass: '',
        doubled: 0,
        consecutive_passes: 0,
        contract: null,
        declarer: '',
        dummy: '',
        dummy_revealed: false,
        current_trick: [],
        trick_history: [],
        tricks: { ns: 0, ew: 0 },
        scores,
        deck,
      };
    }

    function handleCall(state: BridgeState, actor: GroupMember, action: Record<string, unknown>): GroupHookResult {
      const kind = action['kind'];
      const key = actor.public_key;
      const call: Call = { public_key: key, seat: actor.seat, kind: kind as CallKind };
      if (kind === 'pass') {
        state.consecutive_passes += 1;
      } else if (kind === 'bid') {
        const level = action['level'];
        const denomination = action['denomination'];
        if (typeof level !== 'number' || !Number.isInteger(level) || level < 1 || level > 7 || !isDenomination(denomination)) {
          throw new Error('a bid requires level 1-7 and a valid denomination');
        }
        const value = bidValue(level, denomination);
        if (state.last_bid && value <= state.last_bid.value) throw new Error('a new bid must outrank the current contract');
        Object.assign(call, { level, denomination, value });
        state.last_bid = structuredClone(call) as Bid;
        state.doubled = 0;
        state.last_non_pass = 'bid';
        state.consecutive_passes = 0;
      } else if (kind === 'double') {
        if (!state.last_bid || state.doubled !== 0 || state.last_non_pass !== 'bid' || teamOf(state, key) === teamOf(state, state.last_bid.public_key)) {
          throw new Error('double is not legal in the current auction');
        }
        state.doubled = 1;
        state.last_non_pass = 'double';
        state.consecutive_passes = 0;
      } else if (kind === 'redouble') {
        if (!state.last_bid || state.doubled !== 1 || state.last_non_pass !== 'double' || teamOf(state, key) !== teamOf(state, state.last_bid.public_key)) {
          throw new Error('redouble is not legal in the current auction');
        }
        state.doubled = 2;
        state.last_non_pass = 'redouble';
        state.consecutive_passes = 0;
      } else {
        throw new Error('auction accepts pass, bid, double, or redouble');
      }
      state.auction.push(call);
      // The reference writes {"kind": "bridge_call", **call}: the call's own kind overwrites it, so the
      // event's kind is the call's (pass, bid, double or redouble), first as there.
      const { kind: callKind, ...rest } = structuredClone(call);
      const events: unknown[] = [{ kind: callKind, ...rest }];
      if (!state.last_bid && state.auction.length === 4) {
        state.phase = 'completed';
        events.push({ kind: 'board_passed_out' });
        return { state, events, completed: true, outcome: 'passed_out' };
      }
      if (state.last_bid && state.consecutive_passes >= 3) {
        startPlay(state);
        events.push({ kind: 'contract_set', contract: structuredClone(state.contract), declarer: state.declarer, dummy: state.dummy });
        return { state, events };
      }
      state.current_player = nextKey(state, key);
      return { state, events };
    }

    function startPlay(state: BridgeState): void {
      const final = state.last_bid!;
      const side = teamOf(state, final.public_key);
      // The declarer is the side's first member to bid the final denomination.
      const declarer = state.auction.find((c) => c.kind === 'bid' && c.denomination === final.denomination && teamOf(state, c.public_key) === side)!.public_key;
      const seat = state.players[declarer]!.seat;
      const leader = state.turn_order[(seat + 1) % 4]!;
      state.contract = { level: final.level, denomination: final.denomination, doubled: state.doubled, partnership: side };
      state.declarer = declarer;
      state.dummy = state.turn_order[(seat + 2) % 4]!;
      state.phase = 'playing';
      state.current_hand_owner = leader;
      state.current_player = leader;
    }

    function handlePlay(state: BridgeState, actor: GroupMember, action: Record<string, unknown>): GroupHookResult {
      if (action['kind'] !== 'play') throw new Error('card play accepts only play');
      const owner = state.current_hand_owner;
      const expected = owner === state.dummy ? state.declarer : owner;
      if (actor.public_key !== expected) throw new Error("it is not this Member's turn to play");
      const cardId = action['card_id'];
      const hand = state.deck.hands[owner]!;
      if (typeof cardId !== 'string' || !hand.includes(cardId)) throw new Error('card_id is not in the active hand');
      const card = structuredClone(state.deck.catalog[cardId]!);
      if (state.current_trick.length) {
        checkFollowSuit(
          hand.map((id) => state.deck.catalog[id]!),
          card,
          state.current_trick[0]!.card.suit,
        );
      }
      takeFromHand(state.deck, owner, [cardId]);
      discardCards(state.deck, [cardId]);
      const play: TrickPlay = { public_key: actor.public_key, hand_owner: owner, seat: state.players[owner]!.seat, card };
      state.current_trick.push(play);
      const events: unknown[] = [{ kind: 'bridge_card_played', ...structuredClone(play) }];
      if (!state.dummy_revealed) {
        state.dummy_revealed = true;
        events.push({ kind: 'dummy_revealed', dummy: state.dummy });
      }
      if (state.current_trick.length < 4) {
        const next = nextKey(state, owner);
        state.current_hand_owner = next;
        state.current_player = next === state.dummy ? state.declarer : next;
        return { state, events };
      }
      const cards = state.current_trick.map((p) => p.card);
      const denomination = state.contract!.denomination;
      const trump = (SUITS as readonly string[]).includes(denomination) ? denomination : null;
      const winner = state.current_trick[winningTrickIndex(cards, cards[0]!.suit, trump)]!.hand_owner;
      const team = teamOf(state, winner);
      state.tricks[team] += 1;
      state.trick_history.push({ number: state.trick_history.length + 1, winner, cards: structuredClone(state.current_trick) });
      state.current_trick = [];
      events.push({ kind: 'bridge_trick_won', winner, partnership: team, trick_number: state.trick_history.length });
      if (state.trick_history.length === 13) return completeBoard(state, events);
      state.current_hand_owner = winner;
      state.current_player = winner === state.dummy ? state.declarer : winner;
      return { state, events };
    }

    function completeBoard(state: BridgeState, events: unknown[]): GroupHookResult {
      const contract = state.contract!;
      const side = contract.partnership;
      const tricks = state.tricks[side];
      const vulnerable = state.vulnerability === side || state.vulnerability === 'both';
      const score = duplicateScore({ level: contract.level, denomination: contract.denomination, doubled: contract.doubled, tricks, vulnerable });
      state.scores[score >= 0 ? side : otherSide(side)] += Math.abs(score);
      state.phase = 'completed';
      const outcome = score >= 0 ? `${side}_made` : `${side}_down`;
      events.push({ kind: 'bridge_board_complete', outcome, contract_score: score, tricks, scores: { ...state.scores } });
      return { state, events, completed: true, outcome };
    }

    return {
      supported_control_modes: () => ['autonomous', 'hybrid', 'human'],
      proto_host_metadata: () => ['Contract Bridge', 'game,cards,multiplayer,bridge,partnership', 'supply', {}],

      proto_group_initial_state(members: GroupMember[]): GroupState {
        const raw = ctx.options['board_number'] ?? 1;
        if (typeof raw !== 'number' || !Number.isInteger(raw) || raw < 1 || raw > 32) throw new Error('board_number must be between 1 and 32');
        return newBoard(members, raw, { ns: 0, ew: 0 }, 0, '');
      },

      ...fixedSeats,

      // A member whose turn ran out passes in the auction, and in the play plays the lowest card it may
      // from the hand on turn (following the led suit when it can); the declarer's turn for the dummy
      // is the declarer's, so the dummy's card is chosen the same way.
      proto_group_timeout_action(s: GroupState, member: GroupMember): Record<string, unknown> | null {
        const state = s as BridgeState;
        if (state.current_player !== member.public_key) return null;
        if (state.phase === 'auction') return { kind: 'pass' };
        if (state.phase !== 'playing') return null;
        const hand = (state.deck.hands[state.current_hand_owner] ?? []).map((id) => state.deck.catalog[id]!);
        const led = state.current_trick[0]?.card.suit;
        const following = hand.filter((c) => c.suit === led);
        const lowest = (following.length ? following : hand).reduce<Card | undefined>(
          (best, c) => (best === undefined || c.rank < best.rank ? c : best),
          undefined,
        );
        return lowest ? { kind: 'play', card_id: lowest.card_id } : null;
      },

      proto_group_handle(s: GroupState, actor: GroupMember, action: Record<string, unknown>): GroupHookResult {
        const state = s as BridgeState;
        if (state.phase === 'completed') throw new Error('the board is complete');
        if (state.phase === 'auction') {
          if (actor.public_key !== state.current_player) throw new Error("it is not this Member's turn to call");
          return handleCall(state, actor, action);
        }
        if (state.phase === 'playing') return handlePlay(state, actor, action);
        throw new Error('the bridge table is not accepting actions');
      },

      proto_group_view(s: GroupState, viewer: GroupMember): Record<string, unknown> {
        const state = s as BridgeState;
        const deck = privateDeckView(state.deck, viewer.public_key);
        // The dummy's hand is public once the opening lead is down; every other hand stays with its owner.
        const dummyHand = state.dummy_revealed && state.dummy ? state.deck.hands[state.dummy]!.map((id) => structuredClone(state.deck.catalog[id]!)) : [];
        const declarerForDummy = state.phase === 'playing' && state.current_hand_owner === state.dummy && viewer.public_key === state.declarer;
        // The committed state is frozen and shared: the view copies what it hands out.
        const view: BridgeView = {
          phase: state.phase,
          board_number: state.board_number,
          restart_count: state.restart_count,
          recovery_notice: state.recovery_notice,
          players: structuredClone(state.players),
          turn_order: [...state.turn_order],
          dealer: state.dealer,
          vulnerability: state.vulnerability,
          current_player: state.current_player,
          current_hand_owner: state.current_hand_owner,
          auction: structuredClone(state.auction),
          last_bid: structuredClone(state.last_bid),
          doubled: state.doubled,
          contract: structuredClone(state.contract),
          declarer: state.declarer,
          dummy: state.dummy,
          dummy_revealed: state.dummy_revealed,
          dummy_hand: dummyHand,
          current_trick: structuredClone(state.current_trick),
          trick_history: structuredClone(state.trick_history),
          tricks: { ...state.tricks },
          scores: { ...state.scores },
          my_hand: deck.my_hand,
          playable_hand: declarerForDummy ? structuredClone(dummyHand) : structuredClone(deck.my_hand),
          hand_counts: deck.hand_counts,
          you: { public_key: viewer.public_key, seat: viewer.seat, compass: COMPASS[viewer.seat]!, partnership: partnershipOf(viewer.seat) },
        };
        return view;
      },

      // Only public facts survive a leader change: the hidden deal is never copied to failover candidates.
      proto_group_recovery_snapshot(s: GroupState): GroupState {
        const state = s as BridgeState;
        return { board_number: state.board_number, restart_count: state.restart_count, scores: { ...state.scores } };
      },

      proto_group_restore(checkpoint: GroupState, members: GroupMember[]): GroupState {
        const saved = (checkpoint['scores'] ?? {}) as Record<string, unknown>;
        return newBoard(
          members,
          pyInt(checkpoint['board_number'], 1),
          { ns: pyInt(saved['ns'], 0), ew: pyInt(saved['ew'], 0) },
          pyInt(checkpoint['restart_count'], 0) + 1,
          'The previous private board was discarded after a Leader change.',
        );
      },

      proto_group_on_leader_changed(s: GroupState, oldLeader: string, newLeader: string): GroupHookResult {
        const state = s as BridgeState;
        state.recovery_notice = `Leader changed from ${oldLeader.slice(0, 8)} to ${newLeader.slice(0, 8)}; the private board was redealt.`;
        return {
          state,
          events: [{ kind: 'board_restarted_after_leader_change', old_leader: oldLeader, new_leader: newLeader, board_number: state.board_number }],
        };
      },
    };
  },
  autoplay,
);

/** The calls the auction allows the viewer now (its turn assumed), read from the public auction. */
export function legalCalls(view: BridgeView): Record<string, unknown>[] {
  const me = view.you.public_key;
  const calls: Record<string, unknown>[] = [{ kind: 'pass' }];
  const last = view.last_bid;
  const from = last ? last.value + 1 : 0;
  for (let value = from; value < 35; value++)
    calls.push({ kind: 'bid', level: Math.floor(value / 5) + 1, denomination: ['clubs', 'diamonds', 'hearts', 'spades', 'nt'][value % 5] });
  const lastNonPass = [...view.auction].reverse().find((c) => c.kind !== 'pass')?.kind;
  if (last) {
    const sameSide = view.players[me]!.partnership === view.players[last.public_key]!.partnership;
    if (view.doubled === 0 && lastNonPass === 'bid' && !sameSide) calls.push({ kind: 'double' });
    if (view.doubled === 1 && lastNonPass === 'double' && sameSide) calls.push({ kind: 'redouble' });
  }
  return calls;
}

/** The cards the viewer may play now (its turn assumed): the playable hand, kept to the led suit when it holds any. */
export function legalCards(view: BridgeView): Card[] {
  const led = view.current_trick[0]?.card.suit;
  const following = view.playable_hand.filter((c) => c.suit === led);
  return following.length ? following : view.playable_hand;
}

/**
 * A random legal call or card from the member's own view. The auction leans to passing and to bids just
 * above the last one, so contracts stay makeable-looking and auctions end; doubles are occasional.
 */
function autoplay(v: Record<string, unknown>, me: GroupMember, random: () => number): Record<string, unknown> | null {
  const view = v as BridgeView;
  if (view.phase === 'completed' || view.current_player !== me.public_key) return null;
  if (view.phase === 'auction') {
    const calls = legalCalls(view);
    const special = calls.filter((c) => c['kind'] === 'double' || c['kind'] === 'redouble');
    if (special.length && random() < 0.15) return special[0]!;
    const bids = calls.filter((c) => c['kind'] === 'bid').slice(0, 4);
    const passChance = view.last_bid ? 0.6 : 0.3;
    if (!bids.length || random() < passChance) return { kind: 'pass' };
    return bids[Math.floor(random() * bids.length)]!;
  }
  if (view.phase === 'playing') {
    const cards = legalCards(view);
    if (!cards.length) return null;
    return { kind: 'play', card_id: cards[Math.floor(random() * cards.length)]!.card_id };
  }
  return null;
}
