/**
 * Runs a mental_poker mode over a session's I/O: effects go out (messages through the session's own
 * send, which validates and signs them; events to the record; decision windows to the decision bus),
 * and the peer's verified messages come in, until the mode ends.
 */
import type { MentalPokerLegalAction, Message } from '../hooks/types.js';
import type { MpEffect, MpEnd, MpMode } from './mode.js';

export interface MpDriverIo {
  send(msg: Message): void;
  /** The peer's next message, after every check of the session (envelope, signature, spec, flow). */
  recv(): Promise<Message>;
  /** A local decision for own turn `seq`, or null for the hooks' own choice. */
  decide(seq: number, legal: MentalPokerLegalAction[]): Promise<unknown>;
  event(name: string, data: Record<string, unknown>): void;
}

export async function driveMpMode(mode: MpMode, io: MpDriverIo): Promise<MpEnd> {
  let effects: MpEffect[] = await mode.step({ kind: 'start' });
  for (;;) {
    let decision: { seq: number; legal: MentalPokerLegalAction[] } | null = null;
    for (const e of effects) {
      if (e.kind === 'send') io.send(e.msg);
      else if (e.kind === 'event') io.event(e.name, e.data);
      else if (e.kind === 'decide') decision = { seq: e.value, legal: e.legal };
      else return e.end;
    }
    effects = decision
      ? await mode.step({ kind: 'decision', value: await io.decide(decision.seq, decision.legal) })
      : await mode.step({ kind: 'message', msg: await io.recv() });
  }
}
