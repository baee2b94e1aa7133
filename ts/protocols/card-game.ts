/**
 * What the mental_poker card games share: reading a person's decision into an action (the reference's
 * base coerce, whose messages a person sees when a decision is refused) and the few display lines.
 */
import type { MentalPokerAction, MentalPokerState, Message } from 'aigenora/hooks';

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
