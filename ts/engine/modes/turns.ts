/**
 * session_loop and request_response: the guest moves first and the two alternate (request_response:
 * one request, at most one response). Each of this side's moves may be replaced by a local decision
 * (hybrid and human control), and hooks that keep state learn of it through proto_on_decision.
 */
import { toHookResult, type HookResult, type Message } from '../../hooks/types.js';
import { ModeAbort, type ModeContext, type ModeDefinition } from '../mode.js';
import { coroutineMode, type ModeEnd, type ModeIo } from './coroutine.js';
import { joinReady } from './handshake.js';
import { checkDecidedMessage } from './decide.js';

type TurnMode = 'session_loop' | 'request_response';

function run(ctx: ModeContext<TurnMode>, io: ModeIo, rr: boolean): Promise<ModeEnd> {
  let turns = 0;
  const hookStep = async (name: string, ...args: unknown[]) => toHookResult((await ctx.hook(name, ...args)) as never);
  const aborted = (): never => {
    throw new ModeAbort('abort', 'hooks', `the ${ctx.role} hooks aborted`);
  };
  const end = (r: HookResult): ModeEnd | undefined => {
    if (r.abort) aborted();
    return r.completed ? { reason: 'completed' } : undefined;
  };
  async function turn(step: HookResult): Promise<HookResult> {
    if (!step.response || step.abort) return step;
    const n = turns++;
    const decided = (await io.decide({
      expects: 'message',
      key: 'turn',
      value: n,
      fallback: step,
      check: (r) => checkDecidedMessage(ctx, r),
      take: (r) => ({ ...step, response: r.message as Message }),
    })) as HookResult;
    if (decided !== step) await ctx.hook('proto_on_decision', decided.response, step.response);
    return decided;
  }
  return (async () => {
    await joinReady(ctx, io);
    if (ctx.role === 'guest') {
      let step = await turn(await hookStep('proto_guest_first_action'));
      for (;;) {
        if (step.response) io.send(step.response);
        if (step.abort) aborted();
        if (step.completed || !step.response) return { reason: 'completed' };
        const { msg: reply } = await io.recv();
        step = await turn(await hookStep('proto_guest_handle', reply));
        if (rr) {
          if (step.abort) aborted();
          return { reason: 'request_response_complete' };
        }
        if (!step.response) return end(step) ?? { reason: 'completed' };
      }
    }
    for (;;) {
      const { msg } = await io.recv();
      const r = await turn(await hookStep('proto_host_handle', msg));
      if (r.response) io.send(r.response);
      if (rr) {
        end(r);
        return { reason: 'request_response_complete' };
      }
      const e = end(r);
      if (e) return e;
      if (!r.response) return { reason: 'completed' };
    }
  })();
}

const peerOf = (ctx: ModeContext) => (ctx.role === 'host' ? 'guest' : 'host');

export const sessionLoopMode: ModeDefinition<'session_loop'> = {
  receiptFirst: 'host',
  drainAfterEnd: false,
  invalidInbound: 'abort',
  create: (ctx) => coroutineMode(peerOf(ctx), (io) => run(ctx, io, false)),
};

export const requestResponseMode: ModeDefinition<'request_response'> = {
  receiptFirst: 'host',
  drainAfterEnd: false,
  invalidInbound: 'abort',
  create: (ctx) => coroutineMode(peerOf(ctx), (io) => run(ctx, io, true)),
};
