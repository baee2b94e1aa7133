/** What the modes accept as a local decision (NOTES A13). */
import type { Message } from '../../hooks/types.js';
import { messageValidator } from '../../spec/messages.js';
import type { DecisionRecord } from '../decision.js';
import type { ModeContext } from '../mode.js';

/** A decision replacing a whole move: a message the spec allows this side to send. */
export function checkDecidedMessage(ctx: ModeContext, r: DecisionRecord): string | undefined {
  if (!r.message || typeof r.message['action'] !== 'string') return 'a decision for this move is {"message": {...}}';
  const v = messageValidator(ctx.protocolId, ctx.spec, ctx.specText).check(r.message as Message, ctx.role === 'host' ? 'host_to_guest' : 'guest_to_host');
  return v.ok ? undefined : v.errors.map((e) => `${e.code} at ${e.pointer}`).join('; ');
}
