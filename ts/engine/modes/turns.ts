/**
 * session_loop and request_response: the guest moves first and the two alternate (request_response:
 * one request, at most one response). Each of this side's moves may be replaced by a local decision
 * (hybrid and human control), and hooks that keep state learn of it through proto_on_decision.
 */
import { toHookResult, type HookResult, type Message, type Role } from '../../hooks/types.js';
import { ModeAbort, type ModeContext, type ModeDefinition, type WireSequence } from '../mode.js';
import { coroutineMode, type ModeEnd, type ModeIo } from './coroutine.js';
import { withOpening } from './handshake.js';
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

/** session_loop on the wire: the guest moves first, then the two alternate. */
function alternating(): WireSequence {
  let turn: Role = 'guest';
  let moves = 0;
  return {
    get complete() {
      return moves > 0;
    },
    next(from, msg) {
      if (from !== turn) return { ok: false, reason: `the ${from}'s ${msg.action} out of turn: the ${turn} moves next` };
      if (from === 'guest') moves++;
      turn = from === 'host' ? 'guest' : 'host';
      return { ok: true };
    },
  };
}

/** request_response on the wire: one guest request, at most one host response. */
function requestThenResponse(): WireSequence {
  let answered = false;
  let asked = false;
  return {
    get complete() {
      return asked;
    },
    next(from, msg) {
      const what = `the ${from}'s ${msg.action}`;
      if (answered) return { ok: false, reason: `${what} follows the end of the request_response sequence` };
      if (from !== (asked ? 'host' : 'guest'))
        return {
          ok: false,
          reason: asked ? `${what}: a request_response session has one request and at most one response` : `${what} before the guest's request`,
        };
      if (from === 'guest') asked = true;
      else answered = true;
      return { ok: true };
    },
  };
}

export const sessionLoopMode: ModeDefinition<'session_loop'> = {
  receiptFirst: 'host',
  drainAfterEnd: false,
  invalidInbound: 'abort',
  sequence: alternating,
  create: (ctx) => withOpening(ctx, () => coroutineMode(peerOf(ctx), (io) => run(ctx, io, false))),
};

export const requestResponseMode: ModeDefinition<'request_response'> = {
  receiptFirst: 'host',
  drainAfterEnd: false,
  invalidInbound: 'abort',
  sequence: requestThenResponse,
  create: (ctx) => withOpening(ctx, () => coroutineMode(peerOf(ctx), (io) => run(ctx, io, true))),
};
