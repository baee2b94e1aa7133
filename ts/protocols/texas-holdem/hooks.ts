/**
 * Four-seat No-limit Texas Hold'em (authoritative_group). The leader holds the whole hand, deck
 * included; a member's view carries only its own hole cards. The authority state, the views, the
 * events and the refusal texts are the reference's, field for field, and a seeded deal (`deal_seed`)
 * deals the same cards as the reference's leader, so either implementation can lead or take over.
 * Without `deal_seed` the deal's seed comes from ctx.random (the reference uses OS randomness there).
 */
import { defineHooks, type GroupHookResult, type GroupMember, type GroupState } from '../../hooks/types.js';
import { fixedSeats, fourActiveMembers } from '../fixed-seats.js';
import { dealSeed } from '../shared-deck.js';
import { createDeck, drawTo, drawToZone, faceOf, type CardFace, type Deck } from './deck.js';
import { bestPokerHand, buildSidePots, compareRanks, normalizeUncalled } from './poker.js';

const STREETS = ['preflop', 'flop', 'turn', 'river'] as const;
type Street = (typeof STREETS)[number];

export interface Player {
  seat: number;
  stack: number;
  folded: boolean;
  all_in: boolean;
  street_contribution: number;
  total_contribution: number;
}

export interface PotResult {
  pot_index: number;
  amount: number;
  eligible: string[];
  winners: string[];
  share: number;
  odd_chips: string[];
}

export interface ShowdownHand {
  cards: CardFace[];
  category: string;
  rank: number[];
}

export interface LogEntry {
  street: Street;
  public_key: string;
  seat: number;
  kind: string;
  amount: number;
  stack: number;
}

export interface HoldemState extends GroupState {
  phase: 'betting' | 'completed';
  street: Street;
  hand_number: number;
  button_index: number;
  restart_count: number;
  recovery_notice: string;
  turn_order: string[];
  players: Record<string, Player>;
  button: string;
  small_blind_player: string;
  big_blind_player: string;
  current_player: string;
  current_bet: number;
  last_full_raise: number;
  pending: string[];
  acted_since_full_raise: string[];
  contributions: Record<string, number>;
  hand_start_stacks: Record<string, number>;
  action_log: LogEntry[];
  showdown_hands: Record<string, ShowdownHand>;
  pot_results: PotResult[];
  uncalled_refunds: Record<string, number>;
  deck: Deck;
}

type Events = Record<string, unknown>[];
interface Result extends GroupHookResult {
  state: HoldemState;
}

const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v);

/** Python's int() of a checkpoint number (an integer, or the decimal text of one). */
function pyInt(v: unknown): number {
  const n = typeof v === 'string' && /^\s*[+-]?\d+\s*$/.test(v) ? Number(v) : v;
  if (!isInt(n)) throw new Error(`invalid integer: ${String(v)}`);
  return n;
}

const nextKey = (order: readonly string[], key: string): string => order[(order.indexOf(key) + 1) % order.length] as string;

const activeMembers = (members: readonly GroupMember[]): GroupMember[] => fourActiveMembers(members, "Texas Hold'em");

export default defineHooks(
  'authoritative_group',
  (ctx) => {
    function optionInt(name: string, fallback: number, min: number, max: number): number {
      const v = ctx.options[name] ?? fallback;
      if (!isInt(v) || v < min || v > max) throw new Error(`${name} must be between ${min} and ${max}`);
      return v;
    }
    const startingStack = () => optionInt('starting_stack', 1000, 100, 100000);
    const smallBlind = () => optionInt('small_blind', 5, 1, 10000);
    const bigBlind = () => optionInt('big_blind', 10, 2, 20000);
    const maxHands = () => optionInt('max_hands', 8, 1, 100);

    /** Moves up to `amount` chips from a stack into the pot; an emptied stack is all-in. */
    function commit(state: HoldemState, key: string, amount: number): number {
      if (amount < 0) throw new Error('chip commitment cannot be negative');
      const p = state.players[key] as Player;
      const chips = Math.min(amount, p.stack);
      p.stack -= chips;
      p.street_contribution += chips;
      p.total_contribution += chips;
      state.contributions[key] = (state.contributions[key] as number) + chips;
      if (p.stack === 0) p.all_in = true;
      return chips;
    }

    /** The members still to act, clockwise from `start`: neither folded nor all-in. */
    function orderedEligible(state: HoldemState, start: string): string[] {
      const i = state.turn_order.indexOf(start);
      const rotated = [...state.turn_order.slice(i), ...state.turn_order.slice(0, i)];
      return rotated.filter((k) => !state.players[k]!.folded && !state.players[k]!.all_in);
    }

    function clockwiseFromButton(state: HoldemState): string[] {
      const i = state.turn_order.indexOf(nextKey(state.turn_order, state.button));
      return [...state.turn_order.slice(i), ...state.turn_order.slice(0, i)];
    }

    function nextLive(order: readonly string[], stacks: Record<string, number>, key: string): string {
      let k = nextKey(order, key);
      while ((stacks[k] as number) <= 0) k = nextKey(order, k);
      return k;
    }

    interface HandStart {
      stacks: Record<string, number>;
      hand_number: number;
      button_index: number;
      restart_count: number;
      recovery_notice: string;
    }

    function newHand(members: readonly GroupMember[], h: HandStart): HoldemState {
      if (members.length !== 4) throw new Error("Texas Hold'em requires exactly four active Members");
      const order = members.map((m) => m.public_key);
      if (order.some((k) => !(k in h.stacks) || pyInt(h.stacks[k]) < 0)) throw new Error('every Member must have a non-negative stack');
      const stacks: Record<string, number> = {};
      for (const k of order) stacks[k] = pyInt(h.stacks[k]);
      const live = order.filter((k) => (stacks[k] as number) > 0);
      if (live.length < 2) throw new Error('at least two Members need chips to start a hand');
      let buttonIndex = ((h.button_index % 4) + 4) % 4;
      while (!live.includes(order[buttonIndex] as string)) buttonIndex = (buttonIndex + 1) % 4;
      const button = order[buttonIndex] as string;
      const sbPlayer = nextLive(order, stacks, button);
      const bbPlayer = nextLive(order, stacks, sbPlayer);
      const seed = dealSeed(ctx.options['deal_seed'], [h.hand_number, h.restart_count], ctx.random);
      const deck = createDeck(
        seed,
        members
          .filter((m) => m.status === 'active')
          .sort((a, b) => a.seat - b.seat)
          .map((m) => m.public_key),
      );
      for (let round = 0; round < 2; round++) for (const k of order) if (live.includes(k)) drawTo(deck, k);
      const players: Record<string, Player> = {};
      for (const m of members) {
        players[m.public_key] = {
          seat: m.seat,
          stack: stacks[m.public_key] as number,
          folded: !live.includes(m.public_key),
          all_in: false,
          street_contribution: 0,
          total_contribution: 0,
        };
      }
      const zeros = (): Record<string, number> => Object.fromEntries(order.map((k) => [k, 0]));
      const state: HoldemState = {
        phase: 'betting',
        street: 'preflop',
        hand_number: h.hand_number,
        button_index: buttonIndex,
        restart_count: h.restart_count,
        recovery_notice: h.recovery_notice,
        turn_order: order,
        players,
        button,
        small_blind_player: sbPlayer,
        big_blind_player: bbPlayer,
        current_player: '',
        current_bet: 0,
        last_full_raise: bigBlind(),
        pending: [],
        acted_since_full_raise: [],
        contributions: zeros(),
        hand_start_stacks: { ...stacks },
        action_log: [],
        showdown_hands: {},
        pot_results: [],
        uncalled_refunds: zeros(),
        deck,
      };
      commit(state, sbPlayer, smallBlind());
      commit(state, bbPlayer, bigBlind());
      state.current_bet = Math.max(players[sbPlayer]!.street_contribution, players[bbPlayer]!.street_contribution);
      state.pending = orderedEligible(state, nextKey(order, bbPlayer));
      // Every live member is all-in on the blinds: the board runs out now. As in the reference, the
      // events of that run (and a completion it may reach) are not reported, only the resulting state.
      if (!state.pending.length) return runRemainingBoard(state, []).state;
      state.current_player = state.pending[0] as string;
      return state;
    }

    /** Raises the wager to `target`; returns [full raise, wager increased]. */
    function raiseTo(state: HoldemState, key: string, target: number, forceAllIn = false): [boolean, boolean] {
      const p = state.players[key] as Player;
      const maximum = p.street_contribution + p.stack;
      if (target <= state.current_bet || target > maximum) throw new Error('raise target must exceed the wager and fit the stack');
      if (state.acted_since_full_raise.includes(key)) throw new Error("a short all-in did not reopen this Member's raise");
      const size = target - state.current_bet;
      const minimum = state.current_bet === 0 ? bigBlind() : state.last_full_raise;
      if (size < minimum && !(target === maximum || forceAllIn)) throw new Error('raise target is below the minimum full raise');
      commit(state, key, target - p.street_contribution);
      state.current_bet = target;
      if (size >= minimum) {
        state.last_full_raise = size;
        return [true, true];
      }
      return [false, true];
    }

    function handleBet(state: HoldemState, actor: GroupMember, action: Record<string, unknown>): Result {
      const key = actor.public_key;
      const p = state.players[key] as Player;
      const kind = action['kind'];
      const toCall = Math.max(0, state.current_bet - p.street_contribution);
      let full = false;
      let increased = false;
      if (kind === 'fold') {
        p.folded = true;
      } else if (kind === 'check') {
        if (toCall !== 0) throw new Error('check is illegal while facing a wager');
      } else if (kind === 'call') {
        if (toCall <= 0) throw new Error('there is no wager to call');
        commit(state, key, Math.min(toCall, p.stack));
      } else if (kind === 'bet' || kind === 'raise') {
        const target = action['amount'];
        if (!isInt(target)) throw new Error('bet or raise amount must be an integer target');
        if (kind === 'bet' && state.current_bet !== 0) throw new Error('bet is legal only when no wager exists');
        if (kind === 'raise' && state.current_bet === 0) throw new Error('use bet when no wager exists');
        [full, increased] = raiseTo(state, key, target);
      } else if (kind === 'all_in') {
        const target = p.street_contribution + p.stack;
        if (target <= state.current_bet) commit(state, key, p.stack);
        else [full, increased] = raiseTo(state, key, target, true);
      } else {
        throw new Error('betting accepts fold, check, call, bet, raise, or all_in');
      }
      const log: LogEntry = { street: state.street, public_key: key, seat: actor.seat, kind: kind as string, amount: p.street_contribution, stack: p.stack };
      state.action_log.push(log);
      // The reference spreads the log over {kind: "holdem_action"}, so the event's kind is the action's.
      const events: Events = [{ ...log }];

      const remaining = state.turn_order.filter((k) => !state.players[k]!.folded);
      if (remaining.length === 1) return awardUncontested(state, remaining[0] as string, events);

      if (full) {
        state.acted_since_full_raise = [key];
        state.pending = orderedEligible(state, nextKey(state.turn_order, key)).filter((k) => k !== key);
      } else if (increased) {
        if (!state.acted_since_full_raise.includes(key)) state.acted_since_full_raise.push(key);
        state.pending = orderedEligible(state, nextKey(state.turn_order, key)).filter((k) => state.players[k]!.street_contribution < state.current_bet);
      } else {
        if (!state.acted_since_full_raise.includes(key)) state.acted_since_full_raise.push(key);
        state.pending = state.pending.filter((k) => k !== key && !state.players[k]!.folded && !state.players[k]!.all_in);
      }
      if (state.pending.length) {
        state.current_player = state.pending[0] as string;
        return { state, events };
      }
      return advanceStreet(state, events);
    }

    /** Burns one card and reveals the next street's board cards; returns the revealed faces. */
    function dealStreet(state: HoldemState, street: Street): CardFace[] {
      drawToZone(state.deck, 'burn', 'table', 1);
      const cards = drawToZone(state.deck, 'board', 'table', street === 'flop' ? 3 : 1);
      state.street = street;
      return cards;
    }

    function advanceStreet(state: HoldemState, events: Events): Result {
      const eligible = state.turn_order.filter((k) => !state.players[k]!.folded && !state.players[k]!.all_in);
      const index = STREETS.indexOf(state.street);
      if (index === STREETS.length - 1) return showdown(state, events);
      const next = STREETS[index + 1] as Street;
      const cards = dealStreet(state, next);
      state.current_bet = 0;
      state.last_full_raise = bigBlind();
      state.acted_since_full_raise = [];
      for (const p of Object.values(state.players)) p.street_contribution = 0;
      events.push({ kind: 'holdem_street', street: next, cards });
      if (eligible.length <= 1) return runRemainingBoard(state, events);
      state.pending = orderedEligible(state, nextKey(state.turn_order, state.button));
      state.current_player = state.pending[0] as string;
      return { state, events };
    }

    function runRemainingBoard(state: HoldemState, events: Events): Result {
      while (state.street !== 'river') {
        const next = STREETS[STREETS.indexOf(state.street) + 1] as Street;
        const cards = dealStreet(state, next);
        events.push({ kind: 'holdem_street', street: next, cards });
      }
      return showdown(state, events);
    }

    function showdown(state: HoldemState, events: Events): Result {
      const board = (state.deck.zones['board']?.['table'] ?? []).map((id) => faceOf(state.deck, id));
      const contenders = state.turn_order.filter((k) => !state.players[k]!.folded);
      const ranks: Record<string, number[]> = {};
      for (const k of contenders) {
        const hole = (state.deck.hands[k] ?? []).map((id) => faceOf(state.deck, id));
        const best = bestPokerHand([...hole, ...board]);
        ranks[k] = best.rank;
        state.showdown_hands[k] = { cards: hole, category: best.category, rank: best.rank };
      }
      const normalized = normalizeUncalled(state.contributions);
      state.contributions = normalized.contributions;
      state.uncalled_refunds = normalized.refunds;
      for (const [k, refund] of Object.entries(state.uncalled_refunds)) {
        if (refund) {
          state.players[k]!.stack += refund;
          state.players[k]!.total_contribution -= refund;
        }
      }
      const pots = buildSidePots(
        state.contributions,
        state.turn_order.filter((k) => state.players[k]!.folded),
      );
      pots.forEach((pot, index) => {
        const best = pot.eligible.map((k) => ranks[k] as number[]).reduce((a, b) => (compareRanks(b, a) > 0 ? b : a));
        const winners = pot.eligible.filter((k) => compareRanks(ranks[k] as number[], best) === 0);
        const share = Math.floor(pot.amount / winners.length);
        const odd = pot.amount % winners.length;
        for (const k of winners) state.players[k]!.stack += share;
        const oddChips = clockwiseFromButton(state)
          .filter((k) => winners.includes(k))
          .slice(0, odd);
        for (const k of oddChips) state.players[k]!.stack += 1;
        state.pot_results.push({ pot_index: index, amount: pot.amount, eligible: pot.eligible, winners, share, odd_chips: oddChips });
      });
      events.push({
        kind: 'holdem_showdown',
        hands: structuredClone(state.showdown_hands),
        pots: structuredClone(state.pot_results),
        uncalled_refunds: { ...state.uncalled_refunds },
      });
      return finishHand(state, events);
    }

    function awardUncontested(state: HoldemState, winner: string, events: Events): Result {
      const amount = Object.values(state.contributions).reduce((a, b) => a + b, 0);
      state.players[winner]!.stack += amount;
      state.pot_results = [{ pot_index: 0, amount, eligible: [winner], winners: [winner], share: amount, odd_chips: [] }];
      events.push({ kind: 'holdem_uncontested', winner, amount });
      return finishHand(state, events);
    }

    function finishHand(state: HoldemState, events: Events): Result {
      const stacks: Record<string, number> = {};
      for (const [k, p] of Object.entries(state.players)) stacks[k] = p.stack;
      const live = Object.values(stacks).filter((v) => v > 0);
      if (state.hand_number >= maxHands() || live.length <= 1) {
        state.phase = 'completed';
        // The largest stack wins; equal stacks go to the earlier seat.
        const winner = state.turn_order.reduce((a, b) => ((stacks[b] as number) > (stacks[a] as number) ? b : a));
        events.push({ kind: 'holdem_match_complete', winner, stacks });
        return { state, events, completed: true, outcome: winner };
      }
      const members: GroupMember[] = state.turn_order.map((k) => ({ member_id: '', public_key: k, seat: state.players[k]!.seat, status: 'active' }));
      const replacement = newHand(members, {
        stacks,
        hand_number: state.hand_number + 1,
        button_index: (state.button_index + 1) % 4,
        restart_count: state.restart_count,
        recovery_notice: state.recovery_notice,
      });
      events.push({ kind: 'holdem_hand_started', hand_number: replacement.hand_number, button: replacement.button });
      return { state: replacement, events };
    }

    return {
      supported_control_modes: () => ['autonomous', 'hybrid', 'human'],
      proto_host_metadata: () => ["Four-seat No-limit Texas Hold'em", 'game,cards,multiplayer,poker,holdem', 'supply', {}],

      proto_group_initial_state(members: GroupMember[]): GroupState {
        const stack = startingStack();
        const sb = smallBlind();
        const bb = bigBlind();
        if (sb >= bb) throw new Error('small_blind must be lower than big_blind');
        if (bb > stack) throw new Error('big_blind cannot exceed starting_stack');
        maxHands();
        const ordered = activeMembers(members);
        const stacks = Object.fromEntries(ordered.map((m) => [m.public_key, stack]));
        return newHand(ordered, { stacks, hand_number: 1, button_index: 0, restart_count: 0, recovery_notice: '' });
      },

      // Seats are fixed for the match: a member who leaves keeps its seat and chips (the hand waits for
      // it if it is to act), and a returning member simply resumes.
      ...fixedSeats,

      // A member whose turn ran out (silent, or gone) checks when it owes nothing and folds otherwise:
      // it never puts chips in on its own behalf, and a folded hand cannot hold up the table.
      proto_group_timeout_action(s: GroupState, member: GroupMember): Record<string, unknown> | null {
        const state = s as HoldemState;
        if (state.phase !== 'betting' || state.current_player !== member.public_key) return null;
        const p = state.players[member.public_key];
        if (!p) return null;
        return { kind: state.current_bet - p.street_contribution > 0 ? 'fold' : 'check' };
      },

      proto_group_handle(s: GroupState, actor: GroupMember, action: Record<string, unknown>): GroupHookResult {
        const state = s as HoldemState;
        if (state.phase === 'completed') throw new Error("the Hold'em match is complete");
        if (actor.public_key !== state.current_player) throw new Error("it is not this Member's turn to act");
        if (state.phase !== 'betting') throw new Error('the table is not accepting betting actions');
        return handleBet(state, actor, action);
      },

      proto_group_view(s: GroupState, viewer: GroupMember): Record<string, unknown> {
        const state = s as HoldemState;
        const key = viewer.public_key;
        const hand = state.deck.hands[key];
        const player = state.players[key];
        if (!hand || !player) throw new Error('viewer does not own a hand');
        const board = (state.deck.zones['board']?.['table'] ?? []).map((id) => faceOf(state.deck, id));
        const toCall = Math.max(0, state.current_bet - player.street_contribution);
        return {
          phase: state.phase,
          street: state.street,
          hand_number: state.hand_number,
          restart_count: state.restart_count,
          recovery_notice: state.recovery_notice,
          turn_order: state.turn_order,
          players: state.players,
          button: state.button,
          small_blind_player: state.small_blind_player,
          big_blind_player: state.big_blind_player,
          current_player: state.current_player,
          current_bet: state.current_bet,
          last_full_raise: state.last_full_raise,
          pot_total: Object.values(state.contributions).reduce((a, b) => a + b, 0),
          contributions: state.contributions,
          board,
          board_count: board.length,
          my_hand: hand.map((id) => faceOf(state.deck, id)),
          hand_counts: Object.fromEntries(Object.entries(state.deck.hands).map(([k, ids]) => [k, ids.length])),
          action_log: state.action_log,
          showdown_hands: state.showdown_hands,
          pot_results: state.pot_results,
          uncalled_refunds: state.uncalled_refunds,
          legal: {
            to_call: toCall,
            min_raise_to: state.current_bet + state.last_full_raise,
            max_to: player.street_contribution + player.stack,
            can_raise: !state.acted_since_full_raise.includes(key) && player.stack > toCall,
          },
          you: { public_key: key, seat: viewer.seat },
        };
      },

      // Only what a successor needs to refund the hand: never the deal, so no hidden card survives.
      proto_group_recovery_snapshot(s: GroupState): GroupState {
        const state = s as HoldemState;
        return {
          hand_number: state.hand_number,
          button_index: state.button_index,
          restart_count: state.restart_count,
          hand_start_stacks: state.hand_start_stacks,
        };
      },

      proto_group_restore(checkpoint: GroupState, members: GroupMember[]): GroupState {
        const ordered = activeMembers(members);
        const saved = (
          typeof checkpoint['hand_start_stacks'] === 'object' && checkpoint['hand_start_stacks'] !== null ? checkpoint['hand_start_stacks'] : {}
        ) as Record<string, unknown>;
        const stacks: Record<string, number> = {};
        for (const m of ordered) stacks[m.public_key] = pyInt(m.public_key in saved ? saved[m.public_key] : startingStack());
        return newHand(ordered, {
          stacks,
          hand_number: pyInt(checkpoint['hand_number'] ?? 1),
          button_index: pyInt(checkpoint['button_index'] ?? 0),
          restart_count: pyInt(checkpoint['restart_count'] ?? 0) + 1,
          recovery_notice: 'The interrupted hand was refunded and redealt after a Leader change.',
        });
      },

      proto_group_on_leader_changed(s: GroupState, oldLeader: string, newLeader: string): GroupHookResult {
        const state = s as HoldemState;
        const prefix = (t: string) => Array.from(t).slice(0, 8).join('');
        state.recovery_notice = `Leader changed from ${prefix(oldLeader)} to ${prefix(newLeader)}; the interrupted hand was refunded.`;
        return {
          state,
          events: [{ kind: 'hand_restarted_after_leader_change', old_leader: oldLeader, new_leader: newLeader, hand_number: state.hand_number }],
        };
      },
    };
  },
  autoplay,
);

type Action = Record<string, unknown>;

/** The actions a member's own view says are legal (a bet or raise at a random size within the limits). */
export function legalActions(view: Record<string, unknown>, rnd: () => number): Action[] {
  const l = view['legal'] as { to_call: number; min_raise_to: number; max_to: number; can_raise: boolean };
  const bet = view['current_bet'] as number;
  const out: Action[] = [{ kind: 'fold' }, { kind: l.to_call === 0 ? 'check' : 'call' }];
  if (l.can_raise && l.min_raise_to < l.max_to) {
    const amount = l.min_raise_to + Math.floor(rnd() * rnd() * (l.max_to - l.min_raise_to));
    out.push({ kind: bet === 0 ? 'bet' : 'raise', amount });
  }
  if (l.max_to <= bet || l.can_raise) out.push({ kind: 'all_in' });
  return out;
}

/**
 * The unattended player: mostly checks or calls so hands reach showdowns; now and then bets, raises
 * or folds to a bet, so stacks move and a match of max_hands hands ends with a winner. It seldom moves
 * all in: callers follow, and one all-in would usually decide the whole match in its first hand.
 */
export function autoplay(view: Record<string, unknown>, me: GroupMember, random: () => number): Action | null {
  if (view['phase'] !== 'betting' || view['current_player'] !== me.public_key) return null;
  const actions = legalActions(view, random);
  const [fold, passive] = actions as [Action, Action];
  const found = actions.find((a) => a['kind'] === 'bet' || a['kind'] === 'raise');
  // A small raise (one to three minimum raises): a raise near the stack is an all-in by another name.
  const l = view['legal'] as { min_raise_to: number; max_to: number };
  const step = Math.max(1, l.min_raise_to - (view['current_bet'] as number));
  const raise = found && { ...found, amount: Math.min(l.max_to - 1, l.min_raise_to + Math.floor(random() * 3) * step) };
  const allIn = actions.find((a) => a['kind'] === 'all_in');
  const r = random();
  if (r < 0.08 && passive['kind'] === 'call') return fold;
  if (r < 0.2 && raise) return raise;
  if (r < 0.215 && allIn) return allIn;
  return passive;
}
