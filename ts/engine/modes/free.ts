/**
 * free: either side says any declared message, in any order, until its own `end`. This side says its
 * lines (typing `/quit` ends them, as the reference), then listens until the peer's `end`. An invalid
 * peer message is dropped rather than fatal, as the reference does (the core applies that policy).
 */
import type { Message } from '../../hooks/types.js';
import type { ModeDefinition } from '../mode.js';
import { coroutineMode } from './coroutine.js';
import { joinReady } from './handshake.js';

export const freeMode: ModeDefinition<'free'> = {
  receiptFirst: 'host',
  drainAfterEnd: false,
  invalidInbound: 'drop',
  create: (ctx) =>
    coroutineMode(ctx.role === 'host' ? 'guest' : 'host', async (io) => {
      await joinReady(ctx, io);
      let seq = 0;
      for (const text of ctx.chat) {
        if (text.trim() === '/quit') break;
        const msg: Message = { action: 'chat', text, seq: ++seq };
        await ctx.hook('proto_on_send', msg);
        io.send(msg);
      }
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
