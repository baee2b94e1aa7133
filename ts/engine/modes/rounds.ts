/**
 * simultaneous_round (NOTES A11): per round, host commit, guest commit, host reveal, guest reveal, host
 * round_result; the engine commits and checks reveals, the hooks choose values and judge. A guest
 * with a pure judge and spec.shadow_judge reruns every round and proves a host that misreports one.
 */
import { toHex } from '../../crypto/encoding.js';
import { toHookResult, type Message, type RoundState, type RoundValue } from '../../hooks/types.js';
import { messageValidator } from '../../spec/messages.js';
import type { DecisionRecord } from '../decision.js';
import { commitText, ROUND_PROOFS, roundsSequence, shadowMismatches } from './rounds-wire.js';
import { ModeAbort, type ModeContext, type ModeDefinition, type ProofRequest } from '../mode.js';
import { coroutineMode, type Inbound, type ModeIo } from './coroutine.js';
import { withOpening } from './handshake.js';

function run(ctx: ModeContext<'simultaneous_round'>, io: ModeIo, ready: Message) {
  const { crypto, role } = ctx;
  const peer = role === 'host' ? 'guest' : 'host';
  const field = ctx.spec.flow!.round!.value_field;
  const validator = messageValidator(ctx.protocolId, ctx.spec, ctx.specText);
  const proof = (kind: string, offender: 'host' | 'guest', frames: string[], detail: Record<string, unknown>): ProofRequest => ({
    kind,
    offender,
    frames,
    detail,
  });

  async function expect(action: string, round: number): Promise<Inbound>;
  async function expect(action: string, round: number, endOk: true): Promise<Inbound | undefined>;
  async function expect(action: string, round: number, endOk = false): Promise<Inbound | undefined> {
    const got = await io.recv();
    const msg = got.msg;
    if (endOk && msg.action === 'end') return undefined;
    if (msg.action === 'error') throw new ModeAbort('peer_aborted', 'peer', `the ${peer} reported ${String(msg['reason'])}`);
    if (msg.action !== action || msg['round'] !== round)
      throw new ModeAbort(
        'unexpected_message',
        'engine',
        `expected ${action} of round ${round}, got ${msg.action}${msg['round'] !== undefined ? ` of round ${String(msg['round'])}` : ''}`,
      );
    return got;
  }

  const opens = (commit: Message, reveal: Message) =>
    crypto.verifyReveal(commit['hash'] as string, commitText(reveal[field] as RoundValue), reveal['nonce'] as string);
  const mismatchEvent = (round: number, who: 'host' | 'guest', commit: Message, reveal: Message) =>
    io.event('commit_mismatch_detected', {
      round,
      role: who,
      expected: commit['hash'],
      actual: crypto.commit(commitText(reveal[field] as RoundValue), reveal['nonce'] as string),
    });

  return (async () => {
    let lastResultLine: string | undefined;
    const state: RoundState & { results: Message[] } = { results: [], last_result: null, ready };
    for (let round = 0; ; round++) {
      const suggested = (await ctx.hook('proto_round_value', round, state)) as RoundValue;
      const checkValue = (r: DecisionRecord): string | undefined => {
        const v = validator.check({ action: 'reveal', round, [field]: r.value, nonce: '0'.repeat(16) }, role === 'host' ? 'host_to_guest' : 'guest_to_host');
        return v.ok ? undefined : `not a valid ${field}: ${v.errors.map((e) => e.code).join(', ')}`;
      };
      const value = (await io.decide({
        expects: 'value',
        key: 'round',
        value: round,
        fallback: suggested,
        check: checkValue,
        take: (r) => r.value,
      })) as RoundValue;
      const nonce = toHex(ctx.randomBytes(8));
      const hash = crypto.commit(commitText(value), nonce);
      if (role === 'host') {
        io.send({ action: 'commit', round, hash });
        const gc = await expect('commit', round);
        io.send({ action: 'reveal', round, [field]: value, nonce });
        const gr = await expect('reveal', round);
        const gv = gr.msg[field] as RoundValue;
        if (!opens(gc.msg, gr.msg)) {
          mismatchEvent(round, 'guest', gc.msg, gr.msg);
          io.send({ action: 'error', round, reason: 'commit_mismatch' });
          throw new ModeAbort(
            'commit_mismatch',
            'commit_reveal',
            `the guest's reveal in round ${round} does not match its commit`,
            proof('commit_mismatch', 'guest', [gc.line, gr.line], { round, value_field: field }),
          );
        }
        const r = toHookResult((await ctx.hook('proto_round_judge', round, value, gv, state)) as never);
        if (!r.response) throw new ModeAbort('hook_error', 'hooks', 'proto_round_judge returned no round_result');
        io.send(r.response);
        state.results.push(r.response);
        state.last_result = r.response;
        if (r.abort) {
          io.send({ action: 'end' });
          throw new ModeAbort('abort', 'hooks', 'the host hooks aborted');
        }
        if (r.completed) {
          io.send({ action: 'end' });
          return { reason: 'completed' as const };
        }
        continue;
      }
      // The guest: the host commits first; its first frame of a round may also be `end` (NOTES A11).
      const hc = await expect('commit', round, true);
      if (!hc) return { reason: 'completed' as const };
      io.send({ action: 'commit', round, hash });
      const hr = await expect('reveal', round);
      const hv = hr.msg[field] as RoundValue;
      if (!opens(hc.msg, hr.msg)) {
        mismatchEvent(round, 'host', hc.msg, hr.msg);
        throw new ModeAbort(
          'commit_mismatch',
          'commit_reveal',
          `the host's reveal in round ${round} does not match its commit`,
          proof('commit_mismatch', 'host', [hc.line, hr.line], { round, value_field: field }),
        );
      }
      io.send({ action: 'reveal', round, [field]: value, nonce });
      const res = await expect('round_result', round);
      const pure = ctx.hooks.proto_round_judge_pure;
      if (ctx.spec.shadow_judge === true && pure) {
        const mismatches = shadowMismatches(ctx.hooks, pure(round, hv, value, state), res.msg);
        if (mismatches.length) {
          io.event('balance_mismatch_detected', { round, role: 'host', mismatches });
          // Everything a third party needs to rejudge the round: the ready (setup), the previous result,
          // both reveals and the disputed result, each signed by its sender.
          const frames = [ctx.wire.lines.host[0]!, ...(lastResultLine ? [lastResultLine] : []), hr.line, ctx.wire.lines.guest.at(-1)!, res.line];
          throw new ModeAbort(
            'balance_mismatch',
            'shadow_judge',
            `the host's round_result for round ${round} differs from the guest's own judgement in ${mismatches.map((m) => m.field).join(', ')}`,
            proof('balance_mismatch', 'host', frames, { round, mismatches, value_field: field }),
          );
        }
      }
      state.results.push(res.msg);
      state.last_result = res.msg;
      lastResultLine = res.line;
      if (res.msg['game_over'] === true) {
        const { msg: next } = await io.recv();
        if (next.action !== 'end') throw new ModeAbort('unexpected_message', 'engine', `expected end after the last round, got ${next.action}`);
        return { reason: 'completed' as const };
      }
    }
  })();
}

export const roundsMode: ModeDefinition<'simultaneous_round'> = {
  receiptFirst: 'host',
  drainAfterEnd: false,
  invalidInbound: 'abort',
  sequence: roundsSequence,
  proofs: ROUND_PROOFS,
  create: (ctx) => withOpening(ctx, (ready) => coroutineMode(ctx.role === 'host' ? 'guest' : 'host', (io) => run(ctx, io, ready))),
};

export { shadowMismatches, type ShadowMismatch } from './rounds-wire.js';
