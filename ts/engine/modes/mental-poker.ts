/**
 * mental_poker: the card game of ts/mp behind the join / ready exchange (NOTES A11), as an engine mode.
 * The exchange is this mode's own first steps (the guest's `join`, which its hooks may shape, the host's
 * `ready` or a refusal that ends the session); after it every input goes to the game, and the game's
 * effects come back as the engine's. Its messages travel as ordinary protocol messages; its end becomes
 * the session's, with the whole game as evidence when the peer is caught.
 */
import type { Role } from '../../hooks/types.js';
import { randomSecrets, type MpSecrets } from '../../mp/secrets.js';
import { createMpMode, type MpEffect, type MpEnd } from '../../mp/mode.js';
import type { DecisionRecord } from '../decision.js';
import { isOutcome, ModeAbort, type EndReason, type ModeContext, type ModeDefinition, type ModeEffect, type ModeInput } from '../mode.js';
import { withOpening } from './handshake.js';
import { MENTAL_POKER_PROOFS, mentalPokerSequence } from './mental-poker-wire.js';

const accepts = (r: DecisionRecord) =>
  typeof r.value === 'object' && r.value !== null ? undefined : 'a decision for this move is {"value": {"kind": "play" | "draw" | "pass", ...}}';

/** The game's end as the session's: the receipt file, and the audited winner or the reason and proof. */
function ending(ctx: ModeContext, end: MpEnd): ModeEffect[] {
  const out: ModeEffect[] = end.receipt ? [{ kind: 'write', file: 'transcript_receipt.json', value: end.receipt }] : [];
  // The audited winner (NOTES A14: reported only after the audit and both receipts).
  if (end.reason === 'completed') return [...out, { kind: 'end', reason: 'completed', ...(isOutcome(end.result?.outcome) && { outcome: end.result.outcome }) }];
  const [reason, step]: [EndReason, string] =
    end.reason === 'peer_error'
      ? ['peer_aborted', 'peer']
      : end.reason === 'unexpected_message'
        ? ['unexpected_message', 'engine']
        : end.reason === 'hook_error'
          ? ['hook_error', 'hooks']
          : [end.reason, end.reason === 'audit_failed' || end.reason === 'audit_refused' ? 'mp_audit' : 'mp_play'];
  const proof = end.proof && {
    kind: end.proof.kind,
    offender: end.proof.offender,
    frames: 'all' as const,
    detail: { reason: end.proof.reason, evidence: end.proof.evidence, verifier: ctx.role, deal: end.deal, transcript_hash: end.transcriptHash },
  };
  return [...out, { kind: 'end', reason, step, detail: end.detail, ...(proof && { proof }) }];
}

/** What a caller may hand a mental_poker session. */
export interface MentalPokerInputs {
  /** This side's secret material (default: fresh, from the session's randomness), for tests that play a pinned deal. */
  mpSecrets?: MpSecrets;
}

export const mentalPokerMode: ModeDefinition<'mental_poker'> = {
  receiptFirst: 'host',
  drainAfterEnd: false,
  invalidInbound: 'abort',
  sequence: mentalPokerSequence,
  proofs: MENTAL_POKER_PROOFS,
  create(ctx) {
    const peer: Role = ctx.role === 'host' ? 'guest' : 'host';
    const specId = (ctx.spec as { protocol_id?: unknown }).protocol_id;
    const game = createMpMode({
      role: ctx.role,
      crypto: ctx.crypto,
      hooks: ctx.hooks,
      secrets: ctx.inputs.mpSecrets ?? randomSecrets(ctx.crypto.ot, ctx.randomBytes),
      otProtocolId: typeof specId === 'string' && specId ? specId : ctx.spec.name || 'mental-poker',
      sessionId: ctx.sid,
      signer: ctx.key,
      publicKey: ctx.role === 'host' ? ctx.hostKey : ctx.guestKey,
      peerPublicKey: ctx.role === 'host' ? ctx.guestKey : ctx.hostKey,
      decisions: ctx.controlMode !== 'autonomous' && !!ctx.decision,
    });
    /** What the game waits for. */
    let phase: 'start' | 'message' | 'decision' | 'ended' = 'start';

    /** The game's effects as the engine's; the next phase follows from them. */
    const played = (effects: MpEffect[], out: ModeEffect[]) => {
      phase = 'message';
      for (const e of effects) {
        if (e.kind === 'send') out.push({ kind: 'send', msg: e.msg });
        else if (e.kind === 'event') out.push({ kind: 'event', name: e.name, data: e.data });
        else if (e.kind === 'decide') {
          phase = 'decision';
          const request = { expects: 'value' as const, key: e.key, value: e.value, fallback: null, check: accepts, take: (r: DecisionRecord) => r.value };
          out.push({ kind: 'decide', request });
        } else {
          phase = 'ended';
          out.push(...ending(ctx, e.end));
        }
      }
    };

    const take = async (input: ModeInput, out: ModeEffect[]): Promise<void> => {
      if (input.kind === 'start' && phase === 'start') played(await game.step({ kind: 'start' }), out);
      else if (input.kind === 'message' && input.from === peer && phase === 'message') played(await game.step({ kind: 'message', msg: input.msg }), out);
      else if (input.kind === 'decision' && phase === 'decision') played(await game.step({ kind: 'decision', value: input.value }), out);
      else throw new ModeAbort('unexpected_message', 'engine', `this mode is not waiting for a ${input.kind}`);
    };

    return withOpening(ctx, () => ({
      async step(input) {
        const out: ModeEffect[] = [];
        try {
          await take(input, out);
        } catch (e) {
          if (!(e instanceof ModeAbort)) throw e;
          phase = 'ended';
          out.push({ kind: 'end', reason: e.reason, step: e.step, detail: e.message, ...(e.proof && { proof: e.proof }) });
        }
        return out;
      },
    }));
  },
};
