/**
 * The play after the deal: turns alternate, the Host first. A play opens the card's two layers for the
 * peer to check (the nullifier rule, then the game's rules), a draw is an OT for the lowest id-B still in
 * the stock, a pass is a pass (two in a row stall the game). After every turn the hooks say whether
 * someone has won; the play also ends when both hands are empty.
 */
import { toHex } from '../crypto/encoding.js';
import type { MentalPokerAction, MentalPokerPlay, Message, Role } from '../hooks/types.js';
import { Stop, type Game, type Wait } from './game.js';
import type { OtDeal } from './ot-deal.js';
import { bad, hexBytes, int, peerCrypto, str } from './peer-fields.js';
import { drawPayload, passPayload, playPayload } from './transcript.js';

/** What follows a step of play: a wait, the end of play, or (null) the next turn. */
type Next = Wait | 'played' | null;

export class Play {
  /** Turns taken by both sides, this side's turns (its decision windows' numbers), and passes in a row. */
  private turn = 0;
  private seq = 0;
  private passes = 0;
  /** The number of the decision window open. */
  private deciding = 0;

  constructor(
    private readonly g: Game,
    private readonly ots: OtDeal,
  ) {}

  /** The deal is done: the hooks get their views of the game, and the Host moves first. */
  start(): Promise<Wait | 'played'> {
    const g = this.g;
    Object.assign(g.state, { _mp_role: g.role, _mp_hand: g.hand, _mp_hand_cards: g.myCards, _mp_deck_view: g.ledger });
    return this.resume();
  }

  /** The local decision for the open window: an explicit action replaces the hooks' choice. */
  async takeDecision(value: unknown): Promise<Wait | 'played'> {
    const { g, deciding: seq } = this;
    const hooks = g.cfg.hooks;
    let chosen: MentalPokerAction | null = null;
    if (value !== null && value !== undefined) {
      let explicit: MentalPokerAction | null = null;
      try {
        explicit = hooks.proto_mp_coerce_action!(g.hooksState, value);
      } catch (e) {
        g.emit('local_decision_rejected', { match_key: 'action_seq', match_value: seq, reason: (e as Error).message, decision: value });
      }
      if (explicit) {
        const action = explicit;
        await g.hook('proto_mp_apply_local_action', () => hooks.proto_mp_apply_local_action?.(g.hooksState, action));
        chosen = action;
      }
    }
    return this.then(await this.act(chosen ?? (await this.hooksChoice())));
  }

  /** The peer's move: a play (checked), a draw (answered) or a pass. */
  async takeMove(msg: Message, index: number): Promise<Wait | 'played'> {
    const { g } = this;
    const peer = g.peer;
    if (msg.action === 'mp_play') {
      this.passes = 0;
      this.checkPeerPlay(msg, index);
      const play = msg as MentalPokerPlay;
      const [ok, why] = await g.hook('proto_mp_validate_play', () => g.cfg.hooks.proto_mp_validate_play(g.hooksState, peer, play));
      if (!ok) {
        g.emit('play_rejected', { who: peer, reason: why });
        g.send({ action: 'error', reason: 'rule_rejected' });
        throw new Stop('rule_rejected', `peer play rule-rejected: ${why}`, {
          proof: { kind: 'mp_rule_rejected', offender: peer, message: index, reason: why, evidence: null },
        });
      }
      this.applyPlay(peer, msg);
      g.emit('play_verified', { who: peer, id_b: msg['id_b'] });
    } else if (msg.action === 'mp_ot_request') {
      this.passes = 0;
      g.emit('mp_ot_started', { ot_id: msg['id'], direction: 'received', kind: 'draw' });
      const otId = this.ots.answer(msg);
      g.transcript.append('mp_draw', drawPayload(peer, otId));
      const idB = g.ledger.nextStock();
      if (idB === undefined) throw bad('draw requested but stock is empty');
      g.ledger.dealTo(peer, idB);
      g.otIdToIdB.set(otId, idB);
      g.emit('draw_completed', { who: peer, id_b: idB });
    } else if (msg.action === 'mp_pass') {
      this.passes++;
      g.emit('pass_exchanged', { who: peer });
      g.transcript.append('mp_pass', passPayload(peer));
    } else if (msg.action === 'error') {
      throw new Stop('peer_error', `the ${peer} reported ${String(msg['reason'])}`);
    } else throw new Stop('unexpected_message', `unexpected play-loop message: ${msg.action}`);
    return this.then(await this.endTurn());
  }

  /** This side's draw came in: its turn is over. */
  async drawn(): Promise<Wait | 'played'> {
    return this.then(await this.endTurn());
  }

  /** Plays turns until one needs an input (the peer's move, a decision, the answer to a draw) or the play is over. */
  private async resume(): Promise<Wait | 'played'> {
    const { g } = this;
    const hooks = g.cfg.hooks;
    for (;;) {
      const actor: Role = this.turn % 2 === 0 ? 'host' : 'guest';
      if (actor !== g.role) return 'move';
      const seq = this.seq++;
      const legal = hooks.proto_mp_legal_actions ? await g.hook('proto_mp_legal_actions', () => hooks.proto_mp_legal_actions!(g.hooksState)) : [];
      if (g.cfg.decisions && hooks.proto_mp_coerce_action) {
        g.out.push({ kind: 'decide', key: 'action_seq', value: seq, legal });
        this.deciding = seq;
        return 'decision';
      }
      const next = await this.act(await this.hooksChoice());
      if (next !== null) return next;
    }
  }

  private async then(next: Next): Promise<Wait | 'played'> {
    return next ?? this.resume();
  }

  private hooksChoice(): Promise<MentalPokerAction> {
    const { g } = this;
    return g.hook('proto_mp_choose_action', () => g.cfg.hooks.proto_mp_choose_action(g.hooksState));
  }

  /** This side's move. */
  private async act(action: MentalPokerAction): Promise<Next> {
    const { g } = this;
    if (action.kind === 'play') {
      this.passes = 0;
      const msg = this.buildPlay(action);
      g.send(msg);
      this.applyPlay(g.role, msg);
      g.emit('play_verified', { who: g.role, id_b: action.id_b });
    } else if (action.kind === 'draw') {
      this.passes = 0;
      const idB = g.ledger.nextStock();
      if (idB === undefined) throw new Stop('hook_error', 'draw requested but stock is empty');
      g.emit('draw_started', { who: g.role, id_b: idB });
      this.ots.request(idB, true);
      return 'ot_response';
    } else if (action.kind === 'pass') {
      this.passes++;
      g.send({ action: 'mp_pass' });
      g.emit('pass_exchanged', { who: g.role });
      g.transcript.append('mp_pass', passPayload(g.role));
    } else throw new Stop('hook_error', `the hooks chose an action of kind ${JSON.stringify((action as { kind: unknown }).kind)}`);
    return this.endTurn();
  }

  /** After a turn: the winner if the hooks name one; 'played' when the game is over, else null. */
  private async endTurn(): Promise<'played' | null> {
    const { g } = this;
    if (this.passes >= 2) g.state['_mp_stalled'] = true;
    const winner = await g.hook('proto_mp_check_winner', () => g.cfg.hooks.proto_mp_check_winner(g.hooksState));
    if (winner !== null && winner !== undefined) {
      g.outcome = winner;
      return 'played';
    }
    if (this.passes >= 2) return 'played';
    this.turn++;
    if (g.hand.size === 0 && g.ledger.hand_of(g.peer).size === 0) return 'played';
    return null;
  }

  private buildPlay(action: Extract<MentalPokerAction, { kind: 'play' }>): Message {
    const { g } = this;
    const card = g.myCards.get(action.id_b);
    const keys = g.myKeys.get(action.id_b);
    if (!card || !keys) throw new Stop('hook_error', `the hooks chose id_b ${JSON.stringify(action.id_b)}, which is not in this side's hand`);
    const v = g.cfg.crypto.deck.validatePlay({
      hand: [...g.hand],
      played: [...g.ledger.played],
      idB: action.id_b,
      declaredCard: g.cfg.crypto.deck.encodeCard(card[0], card[1]),
      kInner: keys.kInner,
      kOuter: keys.kOuter,
      blobB: g.table('guest').blobs[Number(action.id_b)]!,
    });
    if (!v.ok) throw new Stop('hook_error', `local play validation failed for ${action.id_b}: ${v.reason}`);
    const msg: Message = { action: 'mp_play', id_b: action.id_b, k_inner: toHex(keys.kInner), k_outer: toHex(keys.kOuter), rank: card[0], suit: card[1] };
    if (action.call_suit !== undefined && action.call_suit !== null) msg['call_suit'] = action.call_suit;
    return msg;
  }

  private applyPlay(who: Role, msg: Message): void {
    const { g } = this;
    const idB = msg['id_b'] as string;
    if (!g.ledger.play(who, idB)) throw new Stop(who === g.role ? 'hook_error' : 'bad_peer_material', `deck.play failed for ${who} ${idB}`);
    if (who === g.role) g.myCards.delete(idB);
    const call = msg['call_suit'];
    g.transcript.append('mp_play', playPayload(who, idB, msg['rank'] as number, msg['suit'] as number, typeof call === 'number' ? call : null));
  }

  /** A peer's play against the nullifier rule: in its hand, not yet played, opening to the card it declares. */
  private checkPeerPlay(msg: Message, index: number): void {
    const { g } = this;
    const { crypto } = g.cfg;
    const peer = g.peer;
    const idB = str(msg, 'id_b');
    const [rank, suit] = [int(msg, 'rank'), int(msg, 'suit')];
    const call = msg['call_suit'];
    if (call !== undefined && call !== null && (typeof call !== 'number' || !Number.isSafeInteger(call))) throw bad('mp_play.call_suit is not an integer');
    const declared = peerCrypto('mp_play card', () => crypto.deck.encodeCard(rank, suit));
    const kInner = hexBytes(str(msg, 'k_inner'), 'mp_play.k_inner');
    const kOuter = hexBytes(str(msg, 'k_outer'), 'mp_play.k_outer');
    // A card outside the deck is in no hand: the check refuses it before it looks for a blob.
    const blobB = /^(0|[1-9]\d*)$/.test(idB) && Number(idB) < g.n ? g.table('guest').blobs[Number(idB)]! : new Uint8Array(0);
    const v = peerCrypto('mp_play', () =>
      crypto.deck.validatePlay({ hand: [...g.ledger.hand_of(peer)], played: [...g.ledger.played], idB, declaredCard: declared, kInner, kOuter, blobB }),
    );
    if (!v.ok) {
      g.emit('play_rejected', { who: peer, reason: v.reason });
      g.send({ action: 'error', reason: 'play_rejected' });
      throw new Stop('play_rejected', `peer play rejected: ${v.reason}`, {
        proof: { kind: 'mp_play_rejected', offender: peer, message: index, reason: v.reason, evidence: null },
      });
    }
  }
}
