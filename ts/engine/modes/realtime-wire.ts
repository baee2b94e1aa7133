/**
 * authoritative_realtime as a third party checks it: its own sequence (ts/realtime/flow.ts, opening
 * with rt_join / rt_ready), the guest's checks replayed over every protocol frame once the session is
 * read (a guest command the spec refuses during play is part of it: the host acks it rejected), and
 * the cheat proof the mode writes when a host breaks its frame chain or the commands it acknowledged.
 */
import type { Crypto } from '../../crypto/backend.js';
import { RealtimeError } from '../../realtime/errors.js';
import { RealtimeFlow } from '../../realtime/flow.js';
import { checkRealtimeProof, realtimeMessagesOfLines, verifyRealtimeTranscript } from '../../realtime/transcript.js';
import { wholeChains, type ProofJudge, type Violation, type WireSequence } from '../mode.js';

export function realtimeSequence(): WireSequence {
  const flow = new RealtimeFlow();
  const lines: string[] = [];
  let playing = false;
  return {
    get complete() {
      return flow.complete;
    },
    next: (from, msg) => flow.next(from, msg),
    takeInvalid(from, line) {
      if (from !== 'guest' || !playing) return false;
      lines.push(line);
      return true;
    },
    record(from, msg, line) {
      lines.push(line);
      if (from === 'host' && msg.action === 'rt_ready') playing = true;
    },
    checkFrames: (crypto) => realtimeVerdict(crypto, lines),
  };
}

/** The guest's checks replayed over a realtime session's protocol frames; undefined when they all hold. */
function realtimeVerdict(crypto: Crypto, lines: string[]): Violation | undefined {
  try {
    const v = verifyRealtimeTranscript(crypto, realtimeMessagesOfLines(lines));
    if (v.ok) return undefined;
    return { frame: v.index + 1, from: v.offender, codes: [`REALTIME_${v.fault.code.toUpperCase()}`], reason: v.fault.message };
  } catch (e) {
    if (e instanceof RealtimeError) return { frame: 0, from: 'host', codes: [e.code], reason: e.message };
    throw e;
  }
}

export const REALTIME_PROOFS: Record<string, ProofJudge> = {
  // Every frame of the session up to the failure, replayed through the guest's own checks.
  realtime_integrity_failed: {
    maxFrames: 64,
    judge(crypto, claim) {
      if (claim.offender !== 'host') return { proven: false, reason: 'only the host runs a realtime match: an integrity failure names the host' };
      const gap = wholeChains(claim.frames);
      if (gap) return { proven: false, reason: gap };
      const j = checkRealtimeProof(crypto, claim.lines, { code: claim.detail['code'] });
      return j.proven ? { proven: true, reason: j.reason } : { proven: false, reason: j.reason };
    },
  },
};
