/**
 * The join / ready exchange every two-party mode but realtime opens with (NOTES A11): the guest's
 * `join` (its hooks may shape it), the host's `ready` or a refusal that ends the session. It is the
 * first steps of those modes' state machines; the mode proper starts once the exchange is done.
 */
import { toHookResult, type Message, type Role } from '../../hooks/types.js';
import { ModeAbort, type Mode, type ModeContext, type ModeEffect, type ModeInput } from '../mode.js';

/** The guest's side of the exchange: its join. */
async function join(ctx: ModeContext, out: ModeEffect[]): Promise<void> {
  const msg = ((await ctx.hook('proto_guest_join_message')) as Message | null | undefined) ?? { action: 'join' };
  out.push({ kind: 'send', msg });
}

/** The peer's half: the host answers the join with its ready, the guest takes the ready. Returns the ready. */
async function joined(ctx: ModeContext, msg: Message, out: ModeEffect[]): Promise<Message> {
  if (ctx.role === 'guest') {
    if (msg.action !== 'ready') throw new ModeAbort('unexpected_message', 'engine', `expected ready, got ${msg.action}`);
    const r = toHookResult((await ctx.hook('proto_guest_handle_ready', msg)) as never);
    if (r.abort) throw new ModeAbort('abort', 'hooks', 'the guest hooks aborted after ready');
    out.push({ kind: 'event', name: 'peer_joined', data: {} });
    return msg;
  }
  if (msg.action !== 'join') throw new ModeAbort('unexpected_message', 'engine', `expected join, got ${msg.action}`);
  out.push({ kind: 'event', name: 'peer_joined', data: {} });
  const r = toHookResult((await ctx.hook('proto_host_handle_join', msg)) as never);
  if (r.abort) {
    if (r.response) out.push({ kind: 'send', msg: r.response });
    throw new ModeAbort('abort', 'hooks', 'the host hooks refused the join');
  }
  const ready = r.response ?? { action: 'ready' };
  out.push({ kind: 'send', msg: ready });
  return ready;
}

/**
 * A mode that opens with the exchange: its first steps run the exchange, then `then(ready)` makes the
 * mode proper, which is started at once and takes every later input. `ready` is the host's first frame
 * (`ctx.wire.lines.host[0]`, which proofs quote).
 */
export function withOpening(ctx: ModeContext, then: (ready: Message) => Mode): Mode {
  const peer: Role = ctx.role === 'host' ? 'guest' : 'host';
  let phase: 'start' | 'joining' | 'open' = 'start';
  let inner: Mode | undefined;
  const open = async (input: ModeInput, out: ModeEffect[]): Promise<void> => {
    if (input.kind === 'start') {
      if (phase !== 'start') throw new ModeAbort('hook_error', 'engine', 'the mode was started twice');
      phase = 'joining';
      if (ctx.role === 'guest') await join(ctx, out);
      return;
    }
    if (phase !== 'joining' || input.kind !== 'message' || input.from !== peer)
      throw new ModeAbort('unexpected_message', 'engine', `this mode is not waiting for a ${input.kind}`);
    const ready = await joined(ctx, input.msg, out);
    phase = 'open';
    inner = then(ready);
    out.push(...(await inner.step({ kind: 'start' })));
  };
  return {
    async step(input) {
      if (inner) return inner.step(input);
      const out: ModeEffect[] = [];
      try {
        await open(input, out);
      } catch (e) {
        // What the mode did before it gave up still happens (the host's refusal of a join is sent).
        if (!(e instanceof ModeAbort)) throw e;
        out.push({ kind: 'end', reason: e.reason, step: e.step, detail: e.message, ...(e.proof && { proof: e.proof }) });
      }
      return out;
    },
  };
}
