/**
 * free: either side says any declared message, in any order, and the first `end`, of either side, ends
 * the session as completed for both (flow.end_when "either_ends", the only value a spec may give). This
 * side says its lines (typing `/quit` ends them, as the reference), then sends `end`; the peer's lines
 * are taken as they come, and the peer's `end` ends this side at once, even while a person is still
 * typing. An invalid peer message is dropped rather than fatal, as the reference does (the core applies
 * that policy). Under hybrid or human control each line is a decision (window `chat` n: {"message":
 * {"action": "chat", "text": …}} or {"message": {"action": "end"}}) taken while the peer's lines keep
 * coming; a hybrid window that closes undecided says the next scripted line, or ends.
 *
 * How an end closes depends on the peer (reference: proto/engine.py, `_run_free_async`). The reference
 * neither answers an `end` nor waits for one: its sender stops after sending `end`, and its receiver
 * stops on the peer's `end` without a word. Against it (the plain profile, engine/plain.ts) this side
 * does the same; each side then signs its own receipt alone. Between two of our agents (the signed
 * profile) both sides sign one receipt over both chains, so both chains must stop at frames both sides
 * have seen: the side that receives the first `end` answers with its own, and the side that sent the
 * first `end` waits for that answer, taking the lines the peer sent before it saw the `end`.
 */
import type { Message, Role } from '../../hooks/types.js';
import type { ModeContext, ModeDefinition, ModeEffect, WireSequence } from '../mode.js';
import type { DecisionRecord } from '../decision-window.js';
import { coroutineMode } from './coroutine.js';
import { checkDecidedMessage } from './decide.js';
import { withOpening } from './handshake.js';

/**
 * free on the wire: either side, any message, until that side's own `end`; the sequence is whole after
 * the first `end` of either side, while the other side's messages already on their way may still follow it.
 */
function eitherEnds(): WireSequence {
  const ended: Record<Role, boolean> = { host: false, guest: false };
  return {
    get complete() {
      return ended.host || ended.guest;
    },
    next(from, msg) {
      if (ended[from]) return { ok: false, reason: `the ${from}'s ${msg.action} after its own end` };
      if (msg.action === 'end') ended[from] = true;
      return { ok: true };
    },
  };
}

/** What a caller may hand a free session. */
export interface FreeInputs {
  /** The lines this side says, in order, before it ends (default: none; `/quit` ends them early). */
  chat?: readonly string[];
}

export const freeMode: ModeDefinition<'free'> = {
  receiptFirst: 'host',
  drainAfterEnd: false,
  invalidInbound: 'drop',
  sequence: eitherEnds,
  create(ctx) {
    const peer: Role = ctx.role === 'host' ? 'guest' : 'host';
    /** Set once this side's mode is over: nothing after it (a decision that comes late, say) does anything. */
    let over = false;
    /** A listening decision window is open: the peer's messages are taken here, not queued for the chat loop. */
    let listening = false;
    let endSent = false;
    const closes = (): ModeEffect[] => {
      over = true;
      return [{ kind: 'end', reason: 'completed' }];
    };
    /** The peer's `end`: this side is done; between our agents it answers with its own `end` first. */
    const peerEnded = async (): Promise<ModeEffect[]> => {
      await ctx.hook('proto_on_end');
      const answer: ModeEffect[] = !endSent && peerSigns(ctx) ? [{ kind: 'send', msg: { action: 'end' } }] : [];
      endSent = true;
      return [...answer, ...closes()];
    };
    const chat = withOpening(ctx, () =>
      coroutineMode(peer, async (io) => {
        let seq = 0;
        const say = async (text: string) => {
          const msg: Message = { action: 'chat', text, seq: ++seq };
          await ctx.hook('proto_on_send', msg);
          io.send(msg);
        };
        const lines = ctx.inputs.chat ?? [];
        const quit = lines.findIndex((t) => t.trim() === '/quit');
        const scripted = quit < 0 ? [...lines] : lines.slice(0, quit);
        if (ctx.decision) {
          for (let n = 0; ; n++) {
            const next = scripted[n];
            listening = true;
            const line = (await io.decide({
              expects: 'message',
              key: 'chat',
              value: n,
              listen: true,
              fallback: next === undefined ? { action: 'end' } : { action: 'chat', text: next },
              check: (r) => checkLine(ctx, r, seq + 1),
              take: (r) => r.message,
            })) as Message;
            listening = false;
            if (line.action !== 'chat') break;
            await say(line['text'] as string);
          }
        } else for (const text of scripted) await say(text);
        io.send({ action: 'end' });
        endSent = true;
        await ctx.hook('proto_on_end');
        if (peerSigns(ctx)) {
          for (;;) {
            const { msg } = await io.recv();
            if (msg.action === 'end') break;
            await ctx.hook('proto_on_message', msg);
          }
        }
        over = true;
        return { reason: 'completed' };
      }),
    );
    return {
      async step(input) {
        if (over) return [];
        // While a person types, the conversation goes on: each peer line reaches the hooks as it comes,
        // and the peer's `end` ends this side without waiting for the person.
        if (listening && input.kind === 'message' && input.from === peer) {
          if (input.msg.action === 'end') return peerEnded();
          await ctx.hook('proto_on_message', input.msg);
          return [];
        }
        return chat.step(input);
      },
    };
  },
};

/** Whether the peer signs frames of its own (our signed profile) rather than sending the reference's bare messages. */
const peerSigns = (ctx: ModeContext): boolean => ctx.wire.profile === 'signed';

/** A chat decision: a line the spec allows (numbered here, whatever number it came with), or the end. */
function checkLine(ctx: Parameters<typeof checkDecidedMessage>[0], r: DecisionRecord, seq: number): string | undefined {
  const m = r.message;
  if (m?.['action'] === 'end') return undefined;
  if (m?.['action'] !== 'chat' || typeof m['text'] !== 'string')
    return 'a chat decision is {"message": {"action": "chat", "text": "…"}} or {"message": {"action": "end"}}';
  return checkDecidedMessage(ctx, { ...r, message: { action: 'chat', text: m['text'], seq } });
}
