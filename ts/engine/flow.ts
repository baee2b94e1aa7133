/**
 * The message sequence of a session (NOTES A11): the opening every two-party mode shares (the guest's
 * `join`, then the host's `ready`; any other host reply refuses the join and ends the session), then
 * the mode's own sequence (`ModeDefinition.sequence`, in the mode's module). One machine fed every
 * protocol message in the order a transcript records them, live by the core and offline by the
 * transcript check. Messages starting with `_` (receipts, aborts) are the engine's and are not fed here.
 */
import type { Crypto } from '../crypto/backend.js';
import type { Message, Role } from '../hooks/types.js';
import { flowMode, type FlowMode, type Spec } from '../spec/types.js';
import type { FlowStep, WireSequence } from './mode.js';
import { modeDefinition } from './modes/index.js';

export type { FlowStep } from './mode.js';
export { commitText } from './modes/rounds-wire.js';

export class FlowReplay {
  readonly mode: FlowMode;
  readonly sequence: WireSequence;
  private phase: 'join' | 'ready' | 'play' | 'closed';

  constructor(crypto: Crypto, spec: Spec) {
    this.mode = flowMode(spec);
    const def = modeDefinition(this.mode);
    this.sequence = def.sequence(crypto, spec);
    this.phase = def.ownOpening ? 'play' : 'join';
  }

  /** The session may end here with receipts: the mode's sequence is whole. */
  get complete(): boolean {
    return this.phase === 'play' && this.sequence.complete;
  }

  /** After a refused message the flow is over: nothing more is accepted. */
  halt(): void {
    this.phase = 'closed';
  }

  next(from: Role, msg: Message): FlowStep {
    const what = `the ${from}'s ${msg.action}`;
    switch (this.phase) {
      case 'closed':
        return { ok: false, reason: `${what} follows the end of the session` };
      case 'join':
        if (from !== 'guest' || msg.action !== 'join') return { ok: false, reason: `the session starts with the guest's join, not ${what}` };
        this.phase = 'ready';
        return { ok: true };
      case 'ready':
        if (from !== 'host') return { ok: false, reason: `${what} before the host answered the join` };
        // Any other answer refuses the join: the host then aborts.
        this.phase = msg.action === 'ready' ? 'play' : 'closed';
        return { ok: true };
      case 'play':
        return this.sequence.next(from, msg);
    }
  }
}
