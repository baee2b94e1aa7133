/**
 * Offline checks of a realtime session: the guest's checks replayed over every message in transcript
 * order, and the judgement of a realtime_integrity_failed proof (its evidence lines replayed the same
 * way). Lines are the engine's signed frames ({"v":2,…,"from","msg",…,"sig"}); checking their
 * signatures and chains is the caller's part (the receipt / proof verifier), this module re-reads the
 * messages losslessly and judges the host's frames.
 */
import type { Crypto } from '../crypto/backend.js';
import type { Role } from '../hooks/types.js';
import { RealtimeError } from './errors.js';
import { RealtimeGuest, type RealtimeFault } from './guest.js';
import { parseRealtimeJson } from './json.js';
import type { Outcome, RealtimeConfig } from './wire.js';

export interface RealtimeMessage {
  from: Role;
  /** A lossless value (parseRealtimeJson), so that a peer's `1.0` hashes as written. */
  msg: Record<string, unknown>;
}

export type TranscriptVerdict =
  | { ok: true; ticks: number; outcome: Outcome | undefined; rejected: string | undefined }
  | { ok: false; index: number; offender: Role; fault: RealtimeFault | { code: 'sequence'; message: string } };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The sender and message of each signed frame line, read losslessly. Throws RealtimeError. */
export function realtimeMessagesOfLines(lines: readonly string[]): RealtimeMessage[] {
  return lines.map((line, i) => {
    const f = parseRealtimeJson(line);
    if (!isObject(f) || (f['from'] !== 'host' && f['from'] !== 'guest') || !isObject(f['msg']))
      throw new RealtimeError('RT_JSON_SYNTAX', `line ${i + 1} is not a frame with from and msg`);
    return { from: f['from'], msg: f['msg'] };
  });
}

/**
 * The guest's checks over a whole session: rt_join, the host's rt_ready (or rt_reject), then every
 * command, ack and frame in order. Engine messages (`_receipt`, `_abort`) are skipped. With `expect`,
 * rt_ready must also name that ruleset, match config and config.
 */
export function verifyRealtimeTranscript(
  crypto: Crypto,
  messages: readonly RealtimeMessage[],
  expect: { config?: RealtimeConfig; rulesetHash?: string; matchConfigHash?: string } = {},
): TranscriptVerdict {
  const guest = new RealtimeGuest({ crypto, ...expect });
  let phase: 'join' | 'ready' | 'play' | 'rejected' = 'join';
  let rejected: string | undefined;
  for (const [index, { from, msg }] of messages.entries()) {
    const action = msg['action'];
    if (typeof action === 'string' && action.startsWith('_')) continue;
    const seqFault = (message: string): TranscriptVerdict => ({ ok: false, index, offender: from, fault: { code: 'sequence', message } });
    const judged = (fault: RealtimeFault | undefined): TranscriptVerdict | undefined => (fault ? { ok: false, index, offender: 'host', fault } : undefined);
    if (phase === 'join') {
      if (from !== 'guest' || action !== 'rt_join') return seqFault(`the session starts with the guest's rt_join, not the ${from}'s ${String(action)}`);
      if (!expect.rulesetHash) guest.joined(msg);
      phase = 'ready';
      continue;
    }
    if (phase === 'rejected') return seqFault(`the ${from}'s ${String(action)} after rt_reject`);
    if (from === 'guest') {
      if (phase !== 'play' || action !== 'rt_command') return seqFault(`the guest's ${String(action)} where only rt_command may come`);
      guest.sent(msg);
      continue;
    }
    if (phase === 'ready') {
      if (action === 'rt_reject') {
        phase = 'rejected';
        rejected = String(msg['reason']);
        continue;
      }
      if (action !== 'rt_ready') return seqFault(`the host's ${String(action)} before rt_ready`);
      const bad = judged(guest.ready(msg));
      if (bad) return bad;
      phase = 'play';
      continue;
    }
    if (action !== 'rt_command_ack' && action !== 'rt_frame') return seqFault(`the host's ${String(action)} where only rt_command_ack and rt_frame may come`);
    const bad = judged(action === 'rt_command_ack' ? guest.ack(msg) : guest.frame(msg['frame']));
    if (bad) return bad;
  }
  return { ok: true, ticks: guest.lastTick + 1, outcome: guest.previous?.outcome, rejected };
}

export type ProofJudgement = { proven: true; reason: string; code: string } | { proven: false; reason: string };

/**
 * A realtime_integrity_failed proof: its evidence lines (every frame of the session up to the bad one,
 * both senders, in the order the guest accepted them) replayed; proven when the host's messages fail
 * the guest's checks. `code`, when the proof names one, must be the fault found.
 */
export function checkRealtimeProof(crypto: Crypto, lines: readonly string[], detail: { code?: unknown } = {}): ProofJudgement {
  let messages: RealtimeMessage[];
  try {
    messages = realtimeMessagesOfLines(lines);
  } catch (e) {
    if (e instanceof RealtimeError) return { proven: false, reason: e.message };
    throw e;
  }
  const v = verifyRealtimeTranscript(crypto, messages);
  if (v.ok) return { proven: false, reason: `every host frame and ack checks out (${v.ticks} ticks)` };
  if (v.offender !== 'host' || v.fault.code === 'sequence' || v.fault.code === 'ready_mismatch')
    return { proven: false, reason: `the evidence is no host cheat: ${v.fault.message}` };
  if (detail.code !== undefined && detail.code !== v.fault.code)
    return { proven: false, reason: `the proof names ${String(detail.code)} but the evidence shows ${v.fault.code}: ${v.fault.message}` };
  return { proven: true, code: v.fault.code, reason: `the host's message ${v.index + 1} fails the guest's check: ${v.fault.message}` };
}
