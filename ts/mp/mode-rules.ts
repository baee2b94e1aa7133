/**
 * The game's rules replayed over a finished or aborted mental-poker game's messages, from one side's
 * point of view, with a fresh instance of the game's hooks: the deal, draws and passes move the deck
 * ledger as the engine moved it, this side's plays go to `proto_mp_apply_local_action` (their faces are
 * on the wire), the peer's to `proto_mp_validate_play`, and `proto_mp_check_winner` runs after every
 * turn as in the engine. An offline verifier uses it to check a `rule_rejected` claim: the first peer
 * play the rules refuse, and why.
 */
import type { MentalPokerCard, MentalPokerHooks, MentalPokerPlay, Message, Role } from '../hooks/types.js';
import { Ledger } from './mode-ledger.js';

export type RulesVerdict = { ok: true } | { ok: false; index: number; reason: string } | { ok: null; error: string };

export function replayRules(
  hooks: MentalPokerHooks,
  messages: readonly { readonly from: Role; readonly msg: Message }[],
  side: Role,
  deal: { readonly host: number; readonly guest: number },
): RulesVerdict {
  const peer: Role = side === 'host' ? 'guest' : 'host';
  const ledger = new Ledger();
  const cards = new Map<string, MentalPokerCard>();
  const state: Record<string, unknown> = {};
  const deals: Record<Role, string[]> = { guest: [], host: [] };
  let pending: { from: Role; idB: string; draw: boolean } | null = null;
  let passes = 0;
  let injected = false;
  const turnDone = () => {
    if (passes >= 2) state['_mp_stalled'] = true;
    hooks.proto_mp_check_winner(state as never);
  };
  try {
    for (const [index, { from, msg }] of messages.entries()) {
      const a = msg.action;
      if (a === 'join' || a === 'ready' || a === 'mp_setup_b') continue;
      if (a === 'mp_setup_a') {
        const n = Array.isArray(msg['blobs']) ? msg['blobs'].length : 0;
        if (deal.host + deal.guest > n) return { ok: null, error: 'the deal plan asks for more cards than the deck' };
        ledger.reset(n);
        const ids = Array.from({ length: n }, (_, i) => String(i));
        deals.guest = ids.slice(0, deal.guest);
        deals.host = ids.slice(deal.guest, deal.guest + deal.host);
        continue;
      }
      if (a === 'mp_ot_request') {
        const dealing = deals.guest.length ? 'guest' : deals.host.length ? 'host' : null;
        if (dealing && from !== dealing) return { ok: null, error: `a ${from} OT request during the ${dealing}'s deal` };
        const idB = dealing ? deals[dealing].shift() : ledger.nextStock();
        if (idB === undefined) return { ok: null, error: 'a draw from an empty stock' };
        pending = { from, idB, draw: !dealing };
        continue;
      }
      if (a === 'mp_ot_response') {
        if (!pending) return { ok: null, error: 'an OT response with no request' };
        ledger.dealTo(pending.from, pending.idB);
        if (pending.draw) {
          passes = 0;
          turnDone();
        }
        pending = null;
        continue;
      }
      if (!injected) {
        Object.assign(state, { _mp_role: side, _mp_hand: ledger.hand_of(side), _mp_hand_cards: cards, _mp_deck_view: ledger });
        injected = true;
      }
      if (a === 'mp_play') {
        const idB = msg['id_b'] as string;
        const play = msg as MentalPokerPlay;
        if (from === side) {
          cards.set(idB, [play.rank, play.suit]);
          hooks.proto_mp_apply_local_action?.(
            state as never,
            play.call_suit === undefined ? { kind: 'play', id_b: idB } : { kind: 'play', id_b: idB, call_suit: play.call_suit },
          );
          cards.delete(idB);
        } else if (from === peer) {
          const [ok, why] = hooks.proto_mp_validate_play(state as never, peer, play);
          if (!ok) return { ok: false, index, reason: why };
        }
        if (!ledger.play(from, idB)) return { ok: null, error: `the ${from} played ${idB}, which it does not hold` };
        passes = 0;
        turnDone();
        continue;
      }
      if (a === 'mp_pass') {
        passes++;
        turnDone();
        continue;
      }
      // Openings, witnesses, receipts and errors end the play.
      break;
    }
  } catch (e) {
    return { ok: null, error: `the game's hooks threw: ${(e as Error).message}` };
  }
  return { ok: true };
}
