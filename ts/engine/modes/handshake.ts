/**
 * The join / ready exchange every two-party mode but realtime opens with (NOTES A11): the guest's
 * `join` (its hooks may shape it), the host's `ready` or a refusal that ends the session.
 */
import { toHookResult, type Message } from '../../hooks/types.js';
import { ModeAbort, type ModeContext } from '../mode.js';
import type { ModeIo } from './coroutine.js';

/** Runs the exchange and returns the ready (the host's first frame, `ctx.wire.lines.host[0]`, which proofs quote). */
export async function joinReady(ctx: ModeContext, io: ModeIo): Promise<Message> {
  if (ctx.role === 'guest') {
    const join = ((await ctx.hook('proto_guest_join_message')) as Message | null | undefined) ?? { action: 'join' };
    io.send(join);
    const { msg: ready } = await io.recv();
    if (ready.action !== 'ready') throw new ModeAbort('unexpected_message', 'engine', `expected ready, got ${ready.action}`);
    const r = toHookResult((await ctx.hook('proto_guest_handle_ready', ready)) as never);
    if (r.abort) throw new ModeAbort('abort', 'hooks', 'the guest hooks aborted after ready');
    io.event('peer_joined', {});
    return ready;
  }
  const { msg: join } = await io.recv();
  if (join.action !== 'join') throw new ModeAbort('unexpected_message', 'engine', `expected join, got ${join.action}`);
  io.event('peer_joined', {});
  const r = toHookResult((await ctx.hook('proto_host_handle_join', join)) as never);
  if (r.abort) {
    if (r.response) io.send(r.response);
    throw new ModeAbort('abort', 'hooks', 'the host hooks refused the join');
  }
  const ready = r.response ?? { action: 'ready' };
  io.send(ready);
  return ready;
}
