/**
 * Every flow mode and the module that runs it. The `satisfies` clause makes a mode added to
 * FLOW_MODES without a definition here a compile error.
 */
import type { FlowMode } from '../../spec/types.js';
import { ModeAbort, type ModeDefinition, type ProofJudge } from '../mode.js';
import { freeMode, type FreeInputs } from './free.js';
import { mentalPokerMode, type MentalPokerInputs } from './mental-poker.js';
import { realtimeMode, type RealtimeInputs } from './realtime.js';
import { roundsMode } from './rounds.js';
import { requestResponseMode, sessionLoopMode } from './turns.js';

/**
 * A mode that is not a two-party session: a group has a leader and up to 32 members, and runs on the
 * group engine (ts/group for the leader and replicas, ts/net/group.ts over the network). A two-party
 * session of it ends at start with a typed reason.
 */
const notTwoParty = <M extends FlowMode>(mode: M): ModeDefinition<M> => ({
  receiptFirst: 'host',
  drainAfterEnd: false,
  invalidInbound: 'abort',
  sequence: () => ({ complete: false, next: () => ({ ok: false, reason: `flow mode ${mode} has no replay` }) }),
  create: () => ({
    step: () =>
      Promise.reject(
        new ModeAbort(
          'hook_error',
          'engine',
          `flow mode ${mode} is not a two-party session; it runs on the group engine (protocol test, host and join run it)`,
        ),
      ),
  }),
});

/** What a caller may hand a session for its mode, each part read by its own mode only. */
export type ModeInputs = FreeInputs & RealtimeInputs & MentalPokerInputs;

export const MODES = {
  session_loop: sessionLoopMode,
  request_response: requestResponseMode,
  free: freeMode,
  simultaneous_round: roundsMode,
  mental_poker: mentalPokerMode,
  authoritative_realtime: realtimeMode,
  authoritative_group: notTwoParty('authoritative_group'),
} satisfies { [M in FlowMode]: ModeDefinition<M> };

export function modeDefinition<M extends FlowMode>(mode: M): ModeDefinition<M> {
  return MODES[mode] as ModeDefinition<M>;
}

/** Every cheat-proof kind a mode writes, with the judge that rechecks it. */
export function proofJudges(): Record<string, ProofJudge> {
  return Object.assign({}, ...Object.values(MODES).map((d: ModeDefinition) => d.proofs ?? {})) as Record<string, ProofJudge>;
}
