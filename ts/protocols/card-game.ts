/**
 * What the mental_poker card games share: reading a person's decision into an action (the reference's
 * base coerce, whose messages a person sees when a decision is refused), the few display lines, and the
 * narration of a game as it runs.
 */
import type { MentalPokerAction, MentalPokerState, Message, Narration, Narrator, Role } from 'aigenora/hooks';

/** An explicit decision ({kind, id_b?, call_suit?}) as an action, before the game's own legality checks. */
export function coerceDecision(state: MentalPokerState, decision: unknown): MentalPokerAction {
  if (typeof decision !== 'object' || decision === null || Array.isArray(decision)) throw new Error('action decision must be an object');
  const d = decision as Record<string, unknown>;
  const kind = d['kind'];
  if (kind === 'draw' || kind === 'pass') return { kind };
  if (kind !== 'play') throw new Error('kind must be play, draw, or pass');
  const idB = d['id_b'];
  if (typeof idB !== 'string' || !state._mp_hand.has(idB)) throw new Error('id_b is not a card in the local hand');
  const call = d['call_suit'];
  if (call === undefined || call === null) return { kind, id_b: idB };
  // As Python's int(): an integer, or the decimal text of one.
  const n = typeof call === 'string' && /^\s*[+-]?\d+\s*$/.test(call) ? Number(call) : call;
  if (typeof n !== 'number' || !Number.isSafeInteger(n)) throw new Error('call_suit must be an integer');
  return { kind, id_b: idB, call_suit: n };
}

/** The display line of the messages both games share, or undefined for the engine's default. */
export function displayCommon(msg: Message): string | undefined {
  if (msg.action === 'mp_pass') return 'PASS';
  if (msg.action === 'error') return `illegal: ${String(msg['reason'])}`;
  return undefined;
}

/** Python's sorted() order for id-B strings (code points; the same as UTF-16 units for ASCII digits). */
export const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** A card as the games print it, e.g. "10H": the rank's and the suit's names (their index if unnamed). */
export const cardText = (ranks: readonly string[], suits: readonly string[], rank: unknown, suit: unknown): string =>
  `${ranks[rank as number] ?? String(rank)}${suits[suit as number] ?? String(suit)}`;

/**
 * What a narrator can follow of the deck from the messages alone: the cards each side holds and those
 * left in the stock. Each card reaches a hand by an oblivious transfer its taker asks for
 * (mp_ot_request): the deal's before the first play or pass, a draw's after it.
 */
export class DeckTally {
  readonly hands: Record<Role, number> = { host: 0, guest: 0 };
  stock = 0;
  /** Play has begun (a card was played or a turn passed): a transfer now is a draw. */
  playing = false;
  /** Passes in a row: two end the play loop. */
  passes = 0;

  /** Follows one message and says what it was to the game. */
  see(msg: Message, from: Role): 'setup' | 'deal' | 'draw' | 'play' | 'pass' | 'other' {
    switch (msg.action) {
      case 'mp_setup_a':
        this.stock = Array.isArray(msg['blobs']) ? msg['blobs'].length : 0;
        this.hands.host = this.hands.guest = this.passes = 0;
        this.playing = false;
        return 'setup';
      case 'mp_ot_request':
        this.hands[from] += 1;
        this.stock = Math.max(0, this.stock - 1);
        if (!this.playing) return 'deal';
        this.passes = 0;
        return 'draw';
      case 'mp_play':
        this.playing = true;
        this.passes = 0;
        this.hands[from] = Math.max(0, this.hands[from] - 1);
        return 'play';
      case 'mp_pass':
        this.playing = true;
        this.passes += 1;
        return 'pass';
      default:
        return 'other';
    }
  }

  /** "host 4 cards, guest 5, stock 37". */
  toString(): string {
    return `host ${this.hands.host} card${this.hands.host === 1 ? '' : 's'}, guest ${this.hands.guest}, stock ${this.stock}`;
  }
}

/** What one card game says of its own moves; the deck's traffic and the audit are cardNarrator's. */
export interface CardGameNarration {
  /** Said with the sealed deck, e.g. the trump suit. */
  intro: string;
  play(msg: Message, from: Role, tally: DeckTally): Narration;
  /** A draw's line (none: draws are bookkeeping, as Briscola's refills). */
  draw?(from: Role, tally: DeckTally): Narration;
  /** After a pass, e.g. the end of a stalled game. */
  pass?(from: Role, tally: DeckTally): Narration;
}

/**
 * The narrator of a mental-poker card game: one line when the deck is sealed, one for the deal, one per
 * card played (and per draw or pass where the game says so), and each side's audit. The transfers,
 * openings and witnesses, most of the messages, carry keys rather than moves and get no line.
 */
export function cardNarrator(game: CardGameNarration): Narrator {
  const tally = new DeckTally();
  return (msg, from) => {
    const lines: string[] = [];
    const say = (n: Narration) => lines.push(...(typeof n === 'string' ? [n] : (n ?? [])));
    // The deal ends where play begins: its line comes before the first move's, with the hands as dealt.
    const dealt = tally.playing ? undefined : `dealt: ${tally.toString()}`;
    const kind = tally.see(msg, from);
    if (dealt && tally.playing) say(dealt);
    switch (kind) {
      case 'setup':
        say(`the host sealed the deck (${tally.stock} cards); ${game.intro}`);
        break;
      case 'draw':
        say(game.draw?.(from, tally));
        break;
      case 'play':
        say(game.play(msg, from, tally));
        break;
      case 'pass':
        say(`${from} passes`);
        say(game.pass?.(from, tally));
        break;
      default:
        if (msg.action === 'mp_setup_b') say('the guest shuffled it and sealed it again: neither side can see the order');
        else if (msg.action === 'mp_terminal_receipt') say(`${from} audited the game: ${String(msg['audit_status'])}`);
        else if (msg.action === 'error') say(`${from} refuses the last play: ${String(msg['reason'])}`);
    }
    return lines.length ? lines : undefined;
  };
}
