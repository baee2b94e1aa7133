/**
 * Briscola (mental_poker), two players, 40-card Italian deck, 3-card hands. The engine deals, draws (by
 * oblivious transfer), checks every play's keys and card face, and audits the game; these hooks hold the
 * rules. As in the reference (spec.description): the trump suit is the same every game (the suit of the
 * deck's first card, clubs) with no indicator card; the Host always leads and the Guest always follows,
 * which maps one trick onto two turns of the engine's strict alternation; after a trick each side
 * refills to three on its next turn (Host first) while the stock lasts. Following suit is never forced.
 * A trick goes to the higher card of the led suit unless the follower trumps; card points (A 11, 3 10,
 * K 4, Q 3, J 2) decide the game once the stock and both hands are empty, equal points a draw.
 *
 * The trick in progress, points and trick count live here, kept in step on both sides by the plays each
 * side makes (choose_action / apply_local_action) and verifies (validate_play); check_winner resolves a
 * trick on the turn that completes it. The autonomous player is the reference's, deterministic.
 */
// Types only: a checkout runs this file from source, where the package entry (dist/) may not exist yet.
import type { HooksModule, MentalPokerCard, MentalPokerLegalAction, MentalPokerOutcome, MentalPokerState, Narrator, Role } from 'aigenora/hooks';
import { byText, cardNarrator, cardText, coerceDecision, displayCommon } from '../card-game.js';

export const RANKS = ['A', '2', '3', '4', '5', '6', '7', 'J', 'Q', 'K'] as const;
export const SUITS = ['C', 'D', 'H', 'S'] as const;
export const HAND_SIZE = 3;

/** Trick strength, not points: A > 3 > K > Q > J > 7 > 6 > 5 > 4 > 2. */
const STRENGTH: Record<string, number> = { A: 10, '3': 9, K: 8, Q: 7, J: 6, '7': 5, '6': 4, '5': 3, '4': 2, '2': 1 };
const POINTS: Record<string, number> = { A: 11, '3': 10, K: 4, Q: 3, J: 2 };

/** The 40 cards, rank-major: index 4·rank + suit, which is what the Host's table labels h-<i> number. */
export function makeDeck(): MentalPokerCard[] {
  return RANKS.flatMap((_, r) => SUITS.map((_s, s) => [r, s] as const));
}

/** The trump suit: that of the deck's first card, the same every game. */
export const BRISCOLA = makeDeck()[0]![1];

export const strength = (rank: number): number => STRENGTH[RANKS[rank] ?? ''] ?? 0;
export const points = (rank: number): number => POINTS[RANKS[rank] ?? ''] ?? 0;

/**
 * Who takes a trick the Host led: the higher card when both share a suit; otherwise the Guest only by
 * trumping.
 */
export function trickWinner([leadRank, leadSuit]: MentalPokerCard, [followRank, followSuit]: MentalPokerCard, trump = BRISCOLA): Role {
  if (leadSuit === followSuit) return strength(leadRank) > strength(followRank) ? 'host' : 'guest';
  return followSuit === trump ? 'guest' : 'host';
}

type Entry = [id: string, card: MentalPokerCard];
/** Cheapest first: fewer points, then weaker, then id-B as text. */
const cheapest = (a: Entry, b: Entry) => points(a[1][0]) - points(b[1][0]) || strength(a[1][0]) - strength(b[1][0]) || byText(a[0], b[0]);

/** The leader keeps trumps and points: the cheapest non-trump, else the cheapest trump. */
export function pickLead(hand: ReadonlyMap<string, MentalPokerCard>, trump = BRISCOLA): string | undefined {
  const isTrump = (e: Entry) => (e[1][1] === trump ? 1 : 0);
  return [...hand].sort((a, b) => isTrump(a) - isTrump(b) || cheapest(a, b))[0]?.[0];
}

/** The follower takes the trick with its cheapest winning card if it has one, else throws its cheapest card. */
export function pickFollow(hand: ReadonlyMap<string, MentalPokerCard>, lead: MentalPokerCard, trump = BRISCOLA): string | undefined {
  const all = [...hand];
  const winners = all.filter(([, card]) => trickWinner(lead, card, trump) === 'guest');
  return (winners.length ? winners : all).sort(cheapest)[0]?.[0];
}

/**
 * Each card played and, on the trick's second card, who takes it, for how many points, and the score;
 * then the end of the game. The refills after a trick are bookkeeping and get no line.
 */
function narrator(): Narrator {
  let lead: MentalPokerCard | undefined;
  const score = { host: 0, guest: 0 };
  const name = (c: MentalPokerCard) => cardText(RANKS, SUITS, c[0], c[1]);
  return cardNarrator({
    intro: `trumps are ${SUITS[BRISCOLA]}; the host leads every trick`,
    play(msg, from, tally) {
      const card: MentalPokerCard = [msg['rank'] as number, msg['suit'] as number];
      if (!lead) {
        lead = card;
        return `${from} leads ${name(card)}`;
      }
      const winner = trickWinner(lead, card);
      const won = points(lead[0]) + points(card[0]);
      score[winner] += won;
      lead = undefined;
      const line = `${from} plays ${name(card)}: ${winner} takes the trick (+${won}) — points host ${score.host}, guest ${score.guest}; stock ${tally.stock}`;
      if (tally.stock > 0 || tally.hands.host > 0 || tally.hands.guest > 0) return line;
      const outcome = score.host === score.guest ? 'a draw' : `${score.host > score.guest ? 'host' : 'guest'} wins`;
      return [line, `game over: ${outcome}, ${score.host} to ${score.guest}`];
    },
  });
}

const create: HooksModule<'mental_poker'>['create'] = () => {
  let trick: [Role, MentalPokerCard][] = [];
  let score = { host: 0, guest: 0 };
  let tricksDone = 0;
  /** After a completed trick, before the next lead: a short hand refills while the stock lasts. */
  const mustRefill = (state: MentalPokerState) =>
    trick.length === 0 && tricksDone > 0 && state._mp_hand_cards.size < HAND_SIZE && state._mp_deck_view.stock.size > 0;
  const legal = (state: MentalPokerState): MentalPokerLegalAction[] =>
    mustRefill(state)
      ? [{ kind: 'draw' }]
      : [...state._mp_hand_cards].sort(([a], [b]) => byText(a, b)).map(([id, [rank, suit]]) => ({ kind: 'play', id_b: id, rank, suit }));
  const playOwn = (state: MentalPokerState, id: string) => {
    const card = state._mp_hand_cards.get(id);
    if (!card) throw new Error(`id_b ${id} is not a card in the local hand`);
    trick.push([state._mp_role, card]);
  };

  return {
    proto_init() {
      trick = [];
      score = { host: 0, guest: 0 };
      tricksDone = 0;
    },
    proto_host_metadata: () => ['Briscola', 'game,briscola,cards,trick-taking', 'supply', {}],
    supported_control_modes: () => ['autonomous', 'hybrid', 'human'],
    proto_display(msg) {
      if (msg.action !== 'mp_play') return displayCommon(msg);
      const r = msg['rank'] as number;
      const s = msg['suit'] as number;
      return `play ${RANKS[r] ?? r}${SUITS[s] ?? s}`;
    },

    proto_mp_deck_universe: makeDeck,
    proto_mp_initial_deal: () => ({ host: HAND_SIZE, guest: HAND_SIZE }),

    proto_mp_choose_action(state) {
      if (mustRefill(state)) return { kind: 'draw' };
      const lead = trick[0];
      const id = lead ? pickFollow(state._mp_hand_cards, lead[1]) : pickLead(state._mp_hand_cards);
      // An empty hand has nothing to play; the game ends before that in a whole game.
      if (id === undefined) return { kind: 'pass' };
      playOwn(state, id);
      return { kind: 'play', id_b: id };
    },

    proto_mp_legal_actions: legal,

    proto_mp_coerce_action(state, decision) {
      const action = coerceDecision(state, decision);
      const options = legal(state);
      if (action.kind === 'draw') {
        if (!options.some((o) => o.kind === 'draw')) throw new Error('draw is not legal in the current state');
        return action;
      }
      if (action.kind !== 'play') throw new Error('Briscola only supports play and refill draw actions');
      if (!options.some((o) => o.kind === 'play' && o.id_b === action.id_b)) throw new Error('selected card is not legal in the current state');
      // The spec's mp_play has no call_suit: a play carrying one could not be sent.
      if (action.call_suit !== undefined) throw new Error('call_suit is not part of a Briscola play');
      return action;
    },

    proto_mp_apply_local_action(state, action) {
      if (action.kind === 'play') playOwn(state, action.id_b);
    },

    // Any card in hand may be played (the engine has checked it is); the play joins the trick.
    proto_mp_validate_play(_state, who, play) {
      trick.push([who, [play.rank, play.suit]]);
      return [true, ''];
    },

    proto_mp_check_winner(state): MentalPokerOutcome {
      const [lead, follow] = trick;
      if (lead && follow) {
        const winner = trickWinner(lead[1], follow[1]);
        score[winner] += points(lead[1][0]) + points(follow[1][0]);
        tricksDone += 1;
        trick = [];
      }
      const deck = state._mp_deck_view;
      if (deck && deck.stock.size === 0 && deck.hand_of('host').size === 0 && deck.hand_of('guest').size === 0)
        return score.host > score.guest ? 'host' : score.guest > score.host ? 'guest' : 'draw';
      return null;
    },
  };
};

export default { mode: 'mental_poker', create, narrator } satisfies HooksModule<'mental_poker'>;
