/**
 * A mode written as one sequential function over a small I/O surface, run as a step machine: the
 * function's `recv` and `decide` suspend it until the next `message` or `decision` input, and every
 * `step` returns the effects it produced up to that suspension. Nothing here performs I/O; the
 * function only sees inputs the core hands it, so the sequential modes (turns, rounds, free) read as
 * their wire sequence reads while keeping the interface of every other mode.
 */
import type { Message, Role } from '../../hooks/types.js';
import { ModeAbort, type DecideRequest, type EndReason, type Mode, type ModeEffect, type ModeInput, type Outcome, type ProofRequest } from '../mode.js';

export interface Inbound {
  msg: Message;
  line: string;
}

export interface ModeIo {
  send(msg: Message): void;
  /** The peer's next message, already through every inbound check. */
  recv(): Promise<Inbound>;
  /** The local decision for a window, or the request's fallback. */
  decide(request: DecideRequest): Promise<unknown>;
  event(name: string, data: Record<string, unknown>): void;
  write(file: string, value: unknown): void;
}

export interface ModeEnd {
  reason: EndReason;
  detail?: string;
  step?: string;
  proof?: ProofRequest;
  outcome?: Outcome;
}

type Waiting = { kind: 'message'; resolve: (m: Inbound) => void } | { kind: 'decision'; resolve: (v: unknown) => void };

export function coroutineMode(peer: Role, run: (io: ModeIo) => Promise<ModeEnd>): Mode {
  let effects: ModeEffect[] = [];
  /** Peer messages that came while a listening decision was open (DecideRequest.listen), in order. */
  const inbox: Inbound[] = [];
  let listening = false;
  let waiting: Waiting | undefined;
  let finished: Promise<void> | undefined;
  /** Resolves when the function next suspends or returns. */
  let paused: (() => void) | undefined;
  let failure: unknown;
  const pause = () => {
    const p = paused;
    paused = undefined;
    p?.();
  };
  const io: ModeIo = {
    send: (msg) => void effects.push({ kind: 'send', msg }),
    event: (name, data) => void effects.push({ kind: 'event', name, data }),
    write: (file, value) => void effects.push({ kind: 'write', file, value }),
    recv: () =>
      inbox.length
        ? Promise.resolve(inbox.shift()!)
        : new Promise<Inbound>((resolve) => {
            waiting = { kind: 'message', resolve };
            pause();
          }),
    decide: (request) =>
      new Promise<unknown>((resolve) => {
        waiting = { kind: 'decision', resolve };
        listening = request.listen === true;
        effects.push({ kind: 'decide', request });
        pause();
      }),
  };
  const resume = async (wake: () => void): Promise<ModeEffect[]> => {
    const suspended = new Promise<void>((r) => (paused = r));
    wake();
    await Promise.race([suspended, finished]);
    if (failure !== undefined) {
      // What the mode did before it gave up still happens (an `error` to the peer, the event naming the cheat).
      if (!(failure instanceof ModeAbort)) throw failure;
      const { reason, step, message, proof } = failure;
      effects.push({ kind: 'end', reason, step, detail: message, ...(proof && { proof }) });
      failure = undefined;
    }
    const out = effects;
    effects = [];
    return out;
  };
  return {
    step(input: ModeInput): Promise<ModeEffect[]> {
      if (input.kind === 'start') {
        if (finished) throw new ModeAbort('hook_error', 'engine', 'the mode was started twice');
        return resume(() => {
          finished = run(io).then(
            (end) => void effects.push({ kind: 'end', ...end }),
            (e: unknown) => void (failure = e),
          );
        });
      }
      const w = waiting;
      if (input.kind === 'message' && w?.kind === 'message' && input.from === peer) {
        waiting = undefined;
        return resume(() => w.resolve({ msg: input.msg, line: input.line }));
      }
      if (input.kind === 'message' && w?.kind === 'decision' && listening && input.from === peer) {
        inbox.push({ msg: input.msg, line: input.line });
        return Promise.resolve([]);
      }
      if (input.kind === 'decision' && w?.kind === 'decision') {
        waiting = undefined;
        return resume(() => w.resolve(input.value));
      }
      return Promise.reject(new ModeAbort('unexpected_message', 'engine', `this mode is not waiting for a ${input.kind}`));
    },
  };
}
