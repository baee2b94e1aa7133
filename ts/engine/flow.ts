/**
 * The message sequence each flow mode allows (NOTES A11), as one state machine fed every protocol
 * message in the order a transcript records them. The engine feeds it live (a peer message it refuses
 * ends the session as unexpected_message, and this side never sends one it refuses), and the offline
 * verifier replays it over a transcript, so what one side accepted and what a third party accepts are
 * the same by construction.
 *
 * - every mode: the guest's `join`, then the host's `ready` (any other host reply refuses the join and
 *   ends the session);
 * - session_loop: the guest moves first, then the two alternate;
 * - request_response: one guest request, at most one host response;
 * - free: either side, any message, until that side's own `end`; the sequence is whole after the first
 *   `end` of either side (end_when: either_ends, the only value a spec may give), while the other side's
 *   messages already on their way may still follow it;
 * - simultaneous_round, round r from 0: host commit, guest commit, host reveal, guest reveal, host
 *   round_result, all naming round r; then the next round's commit or `end` (only `end` after a
 *   result with game_over). A reveal must open its sender's commit: after a host reveal that does
 *   not, nothing may follow; after a guest reveal that does not, only the host's `error`.
 *
 * - mental_poker: the host's `mp_setup_a`, the guest's `mp_setup_b`, then any mp message of either side,
 *   except that an `mp_ot_request` must be answered by the other side's `mp_ot_response` with its id
 *   (or an `error`) before anything else, and nothing follows an `error`; the sequence is whole once
 *   both sides sent their `mp_terminal_receipt`. Turns, deals and draws are the mode's own checks.
 *
 * - authoritative_realtime: its own sequence (ts/realtime/flow.ts).
 *
 * Messages starting with `_` (receipts, aborts) are the engine's and are not fed here.
 */
import type { Crypto } from '../crypto/backend.js';
import type { Message, Role, RoundValue } from '../hooks/types.js';
import { RealtimeFlow } from '../realtime/flow.js';
import { flowMode, type FlowMode, type Spec } from '../spec/types.js';

/** The value as the reference stringifies it for a commitment (Python str(): True/False for booleans). */
export const commitText = (v: RoundValue) => (v === true ? 'True' : v === false ? 'False' : String(v));

export type FlowStep = { ok: true } | { ok: false; reason: string };

type RoundStep = 'host_commit' | 'guest_commit' | 'host_reveal' | 'guest_reveal' | 'result' | 'end' | 'host_error';

const refuse = (reason: string): FlowStep => ({ ok: false, reason });
const OK: FlowStep = { ok: true };

export class FlowReplay {
  readonly mode: FlowMode;
  private phase: 'join' | 'ready' | 'play' | 'done' | 'closed' = 'join';
  /** session_loop: whose move it is; request_response: who may still speak. */
  private turn: Role = 'guest';
  private moves = 0;
  private readonly ended: Record<Role, boolean> = { host: false, guest: false };
  private round = 0;
  private step: RoundStep = 'host_commit';
  private readonly commits: Record<Role, string> = { host: '', guest: '' };
  private readonly valueField: string;
  /** mental_poker: the setups seen, the OT request awaiting its response, the receipts sent. */
  private mpSetup: 0 | 1 | 2 = 0;
  private mpPending: { from: Role; id: unknown } | undefined;
  private readonly mpReceipts: Record<Role, boolean> = { host: false, guest: false };
  /** The sender whose reveal did not open its commit, if one did not. */
  mismatch: { by: Role; round: number } | undefined;
  private readonly realtime: RealtimeFlow | undefined;

  constructor(
    private readonly crypto: Crypto,
    spec: Spec,
  ) {
    this.mode = flowMode(spec);
    this.valueField = spec.flow?.round?.value_field || 'value';
    this.realtime = this.mode === 'authoritative_realtime' ? new RealtimeFlow() : undefined;
  }

  /** The session may end here with receipts: the mode's sequence is whole. */
  get complete(): boolean {
    if (this.realtime) return this.phase !== 'closed' && this.realtime.complete;
    if (this.phase === 'done') return true;
    if (this.phase !== 'play') return false;
    if (this.mode === 'session_loop' || this.mode === 'request_response') return this.moves > 0;
    if (this.mode === 'free') return this.ended.host || this.ended.guest;
    if (this.mode === 'mental_poker') return this.mpReceipts.host && this.mpReceipts.guest;
    return false;
  }

  /** After a refused message the flow is over: nothing more is accepted. */
  halt(): void {
    this.phase = 'closed';
  }

  next(from: Role, msg: Message): FlowStep {
    const what = `the ${from}'s ${msg.action}`;
    if (this.realtime) return this.phase === 'closed' ? refuse(`${what} follows the end of the session`) : this.realtime.next(from, msg);
    switch (this.phase) {
      case 'closed':
        return refuse(`${what} follows the end of the session`);
      case 'done':
        return refuse(`${what} follows the end of the ${this.mode} sequence`);
      case 'join':
        if (from !== 'guest' || msg.action !== 'join') return refuse(`the session starts with the guest's join, not ${what}`);
        this.phase = 'ready';
        return OK;
      case 'ready':
        if (from !== 'host') return refuse(`${what} before the host answered the join`);
        // Any other answer refuses the join: the host then aborts.
        this.phase = msg.action === 'ready' ? 'play' : 'closed';
        return OK;
      case 'play':
        break;
    }
    switch (this.mode) {
      case 'session_loop':
        if (from !== this.turn) return refuse(`${what} out of turn: the ${this.turn} moves next`);
        if (from === 'guest') this.moves++;
        this.turn = from === 'host' ? 'guest' : 'host';
        return OK;
      case 'request_response':
        if (from !== this.turn)
          return refuse(this.moves ? `${what}: a request_response session has one request and at most one response` : `${what} before the guest's request`);
        if (from === 'guest') {
          this.moves++;
          this.turn = 'host';
        } else this.phase = 'done';
        return OK;
      case 'free':
        if (this.ended[from]) return refuse(`${what} after its own end`);
        if (msg.action === 'end') this.ended[from] = true;
        return OK;
      case 'simultaneous_round':
        return this.roundStep(from, msg, what);
      case 'mental_poker':
        return this.mpStep(from, msg, what);
      default:
        return refuse(`flow mode ${this.mode} has no replay`);
    }
  }

  private mpStep(from: Role, msg: Message, what: string): FlowStep {
    if (msg.action === 'error') {
      this.phase = 'closed';
      return OK;
    }
    if (this.mpSetup < 2) {
      const [sender, action] = this.mpSetup === 0 ? (['host', 'mp_setup_a'] as const) : (['guest', 'mp_setup_b'] as const);
      if (from !== sender || msg.action !== action) return refuse(`expected the ${sender}'s ${action}, got ${what}`);
      this.mpSetup++;
      return OK;
    }
    if (this.mpReceipts[from]) return refuse(`${what} follows its own mp_terminal_receipt`);
    const pending = this.mpPending;
    if (pending) {
      if (from === pending.from) return refuse(`${what} before the answer to its mp_ot_request ${JSON.stringify(pending.id)}`);
      if (msg.action !== 'mp_ot_response' || msg['id'] !== pending.id)
        return refuse(`expected the ${from}'s mp_ot_response to ${JSON.stringify(pending.id)}, got ${what}`);
      this.mpPending = undefined;
      return OK;
    }
    if (msg.action === 'mp_ot_response') return refuse(`${what} answers no mp_ot_request`);
    if (msg.action === 'mp_ot_request') this.mpPending = { from, id: msg['id'] };
    if (msg.action === 'mp_terminal_receipt') this.mpReceipts[from] = true;
    if (this.mpReceipts.host && this.mpReceipts.guest) this.phase = 'done';
    return OK;
  }

  private roundStep(from: Role, msg: Message, what: string): FlowStep {
    const r = this.round;
    const expect = (sender: Role, action: string): FlowStep | undefined => {
      if (from !== sender || msg.action !== action) return refuse(`expected the ${sender}'s ${action} of round ${r}, got ${what}`);
      if (msg['round'] !== r) return refuse(`expected the ${sender}'s ${action} of round ${r}, got one of round ${JSON.stringify(msg['round'])}`);
      return undefined;
    };
    switch (this.step) {
      case 'host_commit':
        if (from === 'host' && msg.action === 'end' && r > 0) {
          this.phase = 'done';
          return OK;
        }
        return expect('host', 'commit') ?? this.commit('host', msg, 'guest_commit');
      case 'guest_commit':
        return expect('guest', 'commit') ?? this.commit('guest', msg, 'host_reveal');
      case 'host_reveal':
        return expect('host', 'reveal') ?? this.reveal('host', msg, 'guest_reveal');
      case 'guest_reveal':
        return expect('guest', 'reveal') ?? this.reveal('guest', msg, 'result');
      case 'result': {
        const bad = expect('host', 'round_result');
        if (bad) return bad;
        this.round++;
        this.step = msg['game_over'] === true ? 'end' : 'host_commit';
        return OK;
      }
      case 'end':
        if (from !== 'host' || msg.action !== 'end') return refuse(`expected the host's end after the last round, got ${what}`);
        this.phase = 'done';
        return OK;
      case 'host_error':
        if (from !== 'host' || msg.action !== 'error')
          return refuse(`only the host's error may follow the guest's reveal that does not open its commit, not ${what}`);
        this.phase = 'closed';
        return OK;
    }
  }

  private commit(from: Role, msg: Message, then: RoundStep): FlowStep {
    this.commits[from] = String(msg['hash']);
    this.step = then;
    return OK;
  }

  private reveal(from: Role, msg: Message, then: RoundStep): FlowStep {
    let opens = false;
    try {
      opens = this.crypto.verifyReveal(this.commits[from], commitText(msg[this.valueField] as RoundValue), String(msg['nonce']));
    } catch {
      opens = false;
    }
    if (opens) this.step = then;
    else {
      this.mismatch = { by: from, round: this.round };
      // The host answers a guest's false reveal with an error; a guest facing the host's just aborts.
      if (from === 'guest') this.step = 'host_error';
      else this.phase = 'closed';
    }
    return OK;
  }
}
