/**
 * free: either side says any declared message, in any order, until its own `end`. This side says its
 * lines (typing `/quit` ends them, as the reference), then listens until the peer's `end`. An invalid
 * peer message is dropped rather than fatal, as the reference does (the core applies that policy).
 * Under hybrid or human control each line is a decision (window `chat` n: {"message": {"action":
 * "chat", "text": …}} or {"message": {"action": "end"}}) taken while the peer's lines keep coming; a
 * hybrid window that closes undecided says the next scripted line, or ends.
 */
import type { Message } from '../../hooks/types.js';
import type { ModeDefinition } from '../mode.js';
import type { DecisionRecord } from '../decision-window.js';
import { coroutineMode } from './coroutine.js';
import { checkDecidedMessage } from './decide.js';
import { joinReady } from './handshake.js';

export const freeMode: ModeDefinition<'free'> = {
  receiptFirst: 'host',
  drainAfterEnd: false,
  invalidInbound: 'drop',
  create: (ctx) =>
    coroutineMode(ctx.role === 'host' ? 'guest' : 'host', async (io) => {
      await joinReady(ctx, io);
      let seq = 0;
      const say = async (text: string) => {
        const msg: Message = { action: 'chat', text, seq: ++seq };
        await ctx.hook('proto_on_send', msg);
        io.send(msg);
      };
      const quit = ctx.chat.findIndex((t) => t.trim() === '/quit');
      const scripted = quit < 0 ? [...ctx.chat] : ctx.chat.slice(0, quit);
      if (ctx.decision) {
        for (let n = 0; ; n++) {
          const next = scripted[n];
          const line = (await io.decide({
            expects: 'message', key: 'chat', value: n, listen: true,
            fallback: next === undefined ? { action: 'end' } : { action: 'chat', text: next },
            check: (r) => checkLine(ctx, r, seq + 1),
            take: (r) => r.message,
          })) as Message;
          if (line.action !== 'chat') break;
          await say(line['text'] as string);
        }
      } else for (const text of scripted) await say(text);
      io.send({ action: 'end' });
      for (;;) {
        const { msg } = await io.recv();
        if (msg.action === 'end') break;
        await ctx.hook('proto_on_message', msg);
      }
      await ctx.hook('proto_on_end');
      return { reason: 'completed' };
    }),
};

/** A chat decision: a line the spec allows (numbered here, whatever number it came with), or the end. */
function checkLine(ctx: Parameters<typeof checkDecidedMessage>[0], r: DecisionRecord, seq: number): string | undefined {
  const m = r.message;
  if (m?.['action'] === 'end') return undefined;
  if (m?.['action'] !== 'chat' || typeof m['text'] !== 'string') return 'a chat decision is {"message": {"action": "chat", "text": "…"}} or {"message": {"action": "end"}}';
  return checkDecidedMessage(ctx, { ...r, message: { action: 'chat', text: m['text'], seq } });
}
