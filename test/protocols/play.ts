// A minimal driver that plays two sessions of a built-in protocol's hooks against each other in
// memory, validating every message against the spec in both directions and replaying the mode's
// message sequence (the engine's FlowReplay) over the exchange. It follows the wire sequences of
// NOTES A11 closely enough to check that hooks and specs agree; the real engine (with signing,
// transcripts, timing and faults) is ts/engine's job. A game counts as completed only when a hook
// said so and the sequence is whole: a side that just stops sending has stalled.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { getCrypto } from '../../ts/crypto/index.js';
import { commitText, FlowReplay } from '../../ts/engine/flow.js';
import { seeded } from '../../ts/engine/local.js';
import { instantiateHooks } from '../../ts/hooks/load.js';
import {
  toHookResult,
  type HookContext,
  type HooksModule,
  type Message,
  type RoundState,
  type SessionLoopHooks,
  type SimultaneousRoundHooks,
} from '../../ts/hooks/types.js';
import { MessageValidator, type Spec } from '../../ts/spec/index.js';

export interface Played {
  frames: { from: 'host' | 'guest'; msg: Message }[];
  outcome: 'completed' | 'aborted' | 'stalled';
}

export function loadBuiltinSpec(folder: string): Spec {
  return JSON.parse(readFileSync(join(new URL('../../ts/protocols/', import.meta.url).pathname, folder, 'spec.json'), 'utf8')) as Spec;
}

export async function play(spec: Spec, module: HooksModule, options: Record<string, unknown>, seed = 1, maxFrames = 2000): Promise<Played> {
  const crypto = getCrypto();
  const v = new MessageValidator(spec);
  const flow = new FlowReplay(crypto, spec);
  const frames: Played['frames'] = [];
  const send = (from: 'host' | 'guest', msg: Message) => {
    const check = v.check(msg, from === 'host' ? 'host_to_guest' : 'guest_to_host');
    if (!check.ok) throw new Error(`${from} sent an invalid ${msg.action}: ${JSON.stringify(check.errors)}`);
    const step = flow.next(from, msg);
    if (!step.ok) throw new Error(`${from} sent ${msg.action} out of sequence: ${step.reason}`);
    frames.push({ from, msg });
    if (frames.length > maxFrames) throw new Error('too many frames');
    return msg;
  };
  /** The end of a game: completed only if a hook said so and the mode's sequence is whole. */
  const finish = (r: { abort?: boolean; completed?: boolean }): Played => ({
    frames,
    outcome: r.abort ? 'aborted' : r.completed && flow.complete ? 'completed' : 'stalled',
  });
  const ctx = (role: 'host' | 'guest', salt: number): HookContext => ({
    role,
    options,
    args: [],
    stateDir: '/nonexistent',
    decision: null,
    random: seeded(seed * 31 + salt),
  });
  const host = instantiateHooks(module, ctx('host', 1)) as unknown as Record<string, (...a: unknown[]) => unknown>;
  const guest = instantiateHooks(module, ctx('guest', 2)) as unknown as Record<string, (...a: unknown[]) => unknown>;
  const join = send('guest', ((await guest['proto_guest_join_message']?.()) as Message | null) ?? { action: 'join' });
  const readyR = toHookResult((await host['proto_host_handle_join']?.(join)) as never);
  const ready = send('host', readyR.response ?? { action: 'ready' });
  const gReady = toHookResult((await guest['proto_guest_handle_ready']?.(ready)) as never);
  if (gReady.abort) return { frames, outcome: 'aborted' };

  if (module.mode === 'simultaneous_round') {
    const h = host as unknown as SimultaneousRoundHooks;
    const g = guest as unknown as SimultaneousRoundHooks;
    const state: RoundState & { results: Message[] } = { results: [], last_result: null, ready };
    for (let round = 0; ; round++) {
      const hv = await h.proto_round_value(round, state);
      const gv = await g.proto_round_value(round, state);
      const field = spec.flow!.round!.value_field;
      const [hn, gn] = ['1'.repeat(16), '2'.repeat(16)];
      send('host', { action: 'commit', round, hash: crypto.commit(commitText(hv), hn) });
      send('guest', { action: 'commit', round, hash: crypto.commit(commitText(gv), gn) });
      send('host', { action: 'reveal', round, [field]: hv, nonce: hn });
      send('guest', { action: 'reveal', round, [field]: gv, nonce: gn });
      const r = toHookResult(await h.proto_round_judge(round, hv, gv, state));
      const result = send('host', r.response!);
      if (spec.shadow_judge && g.proto_round_judge_pure) {
        const mine = g.proto_round_judge_pure(round, hv, gv, state);
        if (JSON.stringify(mine) !== JSON.stringify(result)) throw new Error(`shadow judge disagrees in round ${round}`);
      }
      state.results.push(result);
      state.last_result = result;
      if (r.abort) return finish(r);
      if (r.completed) {
        send('host', { action: 'end' });
        return finish(r);
      }
    }
  }

  const h = host as unknown as SessionLoopHooks;
  const g = guest as unknown as SessionLoopHooks;
  let step = toHookResult(await g.proto_guest_first_action());
  for (;;) {
    // A guest with nothing to send ends the game only if it says it is over.
    if (!step.response) return finish(step);
    const req = send('guest', step.response);
    if (step.abort || step.completed) return finish(step);
    const reply = toHookResult(await h.proto_host_handle(req));
    if (reply.response) send('host', reply.response);
    if (reply.abort) return finish(reply);
    if (module.mode === 'request_response') {
      // One request, at most one response; the guest still judges the response it got.
      if (!reply.response) return finish(reply);
      return finish(toHookResult(await g.proto_guest_handle(reply.response)));
    }
    if (!reply.response) return finish(reply);
    step = toHookResult(await g.proto_guest_handle(reply.response));
    if (reply.completed) return finish({ abort: step.abort ?? false, completed: true });
  }
}
