/**
 * simultaneous_round as a third party checks it: the message sequence, round r from 0: host commit,
 * guest commit, host reveal, guest reveal, host round_result, all naming round r; then the next
 * round's commit or `end` (only `end` after a result with game_over). A reveal must open its sender's
 * commit: after a host reveal that does not, nothing may follow; after a guest reveal that does not,
 * only the host's `error`. And the two cheat proofs the mode writes: a reveal that does not open its
 * commit, and a host's round_result that the protocol's pure judge contradicts.
 */
import type { Crypto } from '../../crypto/backend.js';
import { instantiateHooks } from '../../hooks/instantiate.js';
import type { Message, Role, RoundValue, SimultaneousRoundHooks } from '../../hooks/types.js';
import type { Spec } from '../../spec/types.js';
import type { FlowStep, ProofCheck, ProofJudge, WireSequence } from '../mode.js';

/** The value as the reference stringifies it for a commitment (Python str(): True/False for booleans). */
export const commitText = (v: RoundValue) => (v === true ? 'True' : v === false ? 'False' : String(v));

export interface ShadowMismatch {
  field: string;
  expected: unknown;
  actual: unknown;
}

/**
 * The fields of a host's round_result that differ from the pure judge's: those the protocol names
 * (proto_round_shadow_fields), else every field the pure judge sets.
 */
export function shadowMismatches(hooks: Pick<SimultaneousRoundHooks, 'proto_round_shadow_fields'>, expected: Message, actual: Message): ShadowMismatch[] {
  const fields = hooks.proto_round_shadow_fields?.() ?? Object.keys(expected).filter((f) => f !== 'action');
  return fields
    .filter((f) => f in actual || f in expected)
    .filter((f) => JSON.stringify(actual[f]) !== JSON.stringify(expected[f]))
    .map((f) => ({ field: f, expected: expected[f], actual: actual[f] }));
}

type RoundStep = 'host_commit' | 'guest_commit' | 'host_reveal' | 'guest_reveal' | 'result' | 'end' | 'host_error' | 'done' | 'closed';

const OK: FlowStep = { ok: true };
const refuse = (reason: string): FlowStep => ({ ok: false, reason });

export function roundsSequence(crypto: Crypto, spec: Spec): WireSequence {
  const valueField = spec.flow?.round?.value_field || 'value';
  const commits: Record<Role, string> = { host: '', guest: '' };
  let round = 0;
  let step: RoundStep = 'host_commit';

  const reveal = (from: Role, msg: Message, then: RoundStep): FlowStep => {
    let opens = false;
    try {
      opens = crypto.verifyReveal(commits[from], commitText(msg[valueField] as RoundValue), String(msg['nonce']));
    } catch {
      opens = false;
    }
    if (opens) {
      step = then;
      return OK;
    }
    // The host answers a guest's false reveal with an error; a guest facing the host's just aborts.
    step = from === 'guest' ? 'host_error' : 'closed';
    return { ok: true, violation: { codes: ['COMMIT_MISMATCH'], reason: `the ${from}'s reveal in round ${round} does not open its commit` } };
  };

  return {
    get complete() {
      return step === 'done';
    },
    next(from, msg) {
      const what = `the ${from}'s ${msg.action}`;
      const r = round;
      const expect = (sender: Role, action: string): FlowStep | undefined => {
        if (from !== sender || msg.action !== action) return refuse(`expected the ${sender}'s ${action} of round ${r}, got ${what}`);
        if (msg['round'] !== r) return refuse(`expected the ${sender}'s ${action} of round ${r}, got one of round ${JSON.stringify(msg['round'])}`);
        return undefined;
      };
      const commit = (then: RoundStep): FlowStep => {
        commits[from] = String(msg['hash']);
        step = then;
        return OK;
      };
      switch (step) {
        case 'closed':
          return refuse(`${what} follows the end of the session`);
        case 'done':
          return refuse(`${what} follows the end of the simultaneous_round sequence`);
        case 'host_commit':
          if (from === 'host' && msg.action === 'end' && r > 0) {
            step = 'done';
            return OK;
          }
          return expect('host', 'commit') ?? commit('guest_commit');
        case 'guest_commit':
          return expect('guest', 'commit') ?? commit('host_reveal');
        case 'host_reveal':
          return expect('host', 'reveal') ?? reveal('host', msg, 'guest_reveal');
        case 'guest_reveal':
          return expect('guest', 'reveal') ?? reveal('guest', msg, 'result');
        case 'result': {
          const bad = expect('host', 'round_result');
          if (bad) return bad;
          round++;
          step = msg['game_over'] === true ? 'end' : 'host_commit';
          return OK;
        }
        case 'end':
          if (from !== 'host' || msg.action !== 'end') return refuse(`expected the host's end after the last round, got ${what}`);
          step = 'done';
          return OK;
        case 'host_error':
          if (from !== 'host' || msg.action !== 'error')
            return refuse(`only the host's error may follow the guest's reveal that does not open its commit, not ${what}`);
          step = 'closed';
          return OK;
      }
    },
  };
}

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);
const no = (reason: string): ProofCheck => ({ proven: false, reason });

/** A proof names a handful of frames; more is not a proof this engine writes. */
const MAX_ROUND_PROOF_FRAMES = 64;

export const ROUND_PROOFS: Record<string, ProofJudge> = {
  commit_mismatch: {
    maxFrames: MAX_ROUND_PROOF_FRAMES,
    judge(crypto, claim, spec) {
      const field = spec.flow?.round?.value_field || 'value';
      const [commit, reveal] = claim.frames.filter((f) => f.from === claim.offender);
      if (
        !commit ||
        !reveal ||
        commit.msg.action !== 'commit' ||
        reveal.msg.action !== 'reveal' ||
        commit.msg['round'] !== reveal.msg['round'] ||
        commit.seq >= reveal.seq
      )
        return no("a commit mismatch needs the offender's commit and later reveal of the same round");
      if (typeof commit.msg['hash'] !== 'string' || typeof reveal.msg['nonce'] !== 'string') return no('the commit or the reveal lacks its hash or nonce');
      let opens: boolean;
      try {
        opens = crypto.verifyReveal(commit.msg['hash'], commitText(reveal.msg[field] as never), reveal.msg['nonce']);
      } catch {
        return no('the commit is not a commitment hash');
      }
      return opens
        ? no('the reveal matches the commit')
        : { proven: true, reason: `the ${claim.offender}'s reveal in round ${String(reveal.msg['round'])} does not open its commit` };
    },
  },
  // Rejudges the round with the protocol's pure judge from the signed frames.
  balance_mismatch: {
    maxFrames: MAX_ROUND_PROOF_FRAMES,
    judge(_crypto, claim, spec, hooks) {
      if (claim.offender !== 'host') return no('only the host judges rounds: a balance mismatch names the host');
      if (!hooks) return no("a balance mismatch is checked with the protocol's hooks: pass --protocol-dir");
      const { frames } = claim;
      const ready = frames.find((f) => f.from === 'host' && f.msg.action === 'ready');
      const results = frames.filter((f) => f.from === 'host' && f.msg.action === 'round_result');
      const disputed = results.at(-1);
      const previous = results.length > 1 ? results.at(-2)!.msg : null;
      const field = spec.flow?.round?.value_field || 'value';
      const hostReveal = frames.find((f) => f.from === 'host' && f.msg.action === 'reveal');
      const guestReveal = frames.find((f) => f.from === 'guest' && f.msg.action === 'reveal');
      if (!ready || !disputed || !hostReveal || !guestReveal) return no('a balance mismatch needs the ready, both reveals and the disputed round_result');
      const h = instantiateHooks(hooks, { role: 'guest', options: {}, args: [], stateDir: '', decision: null, random: () => 0 }) as unknown as Record<
        string,
        (...a: unknown[]) => unknown
      >;
      const pure = h['proto_round_judge_pure'];
      if (typeof pure !== 'function') return no('the protocol has no pure judge');
      const round = disputed.msg['round'];
      if (typeof round !== 'number') return no('the disputed round_result names no round');
      const state = { results: previous ? [previous] : [], last_result: previous, ready: ready.msg };
      const expected = pure(round, hostReveal.msg[field], guestReveal.msg[field], state);
      if (!isObject(expected)) return no('the pure judge returned no round_result');
      const diff = shadowMismatches(h as never, expected as Message, disputed.msg).map((m) => m.field);
      return diff.length
        ? { proven: true, reason: `the host's round ${round} result differs from the rules in ${diff.join(', ')}` }
        : no('the round_result follows the rules');
    },
  },
};
