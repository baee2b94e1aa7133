/**
 * mental_poker: the card game's own step machine (ts/mp/mode.ts) behind the join / ready exchange.
 * Its messages travel as ordinary protocol messages; its end becomes the session's, with the whole
 * game as evidence when the peer is caught.
 */
import type { MentalPokerHooks } from '../../hooks/types.js';
import { createMpMode, type MpCrypto } from '../../mp/mode.js';
import { driveMpMode } from '../../mp/mode-driver.js';
import type { DecisionRecord } from '../decision.js';
import { isOutcome, ModeAbort, type ModeDefinition } from '../mode.js';
import { coroutineMode } from './coroutine.js';
import { joinReady } from './handshake.js';

const accepts = (r: DecisionRecord) =>
  typeof r.value === 'object' && r.value !== null ? undefined : 'a decision for this move is {"value": {"kind": "play" | "draw" | "pass", ...}}';

export const mentalPokerMode: ModeDefinition<'mental_poker'> = {
  receiptFirst: 'host',
  drainAfterEnd: false,
  invalidInbound: 'abort',
  create: (ctx) =>
    coroutineMode(ctx.role === 'host' ? 'guest' : 'host', async (io) => {
      await joinReady(ctx, io);
      const c: MpCrypto = ctx.crypto;
      const specId = (ctx.spec as { protocol_id?: unknown }).protocol_id;
      let mode = createMpMode({
        role: ctx.role,
        crypto: c,
        hooks: ctx.hooks as MentalPokerHooks,
        secrets: ctx.mpSecrets,
        otProtocolId: typeof specId === 'string' && specId ? specId : ctx.spec.name || 'mental-poker',
        sessionId: ctx.sid,
        signer: ctx.key,
        publicKey: ctx.role === 'host' ? ctx.hostKey : ctx.guestKey,
        peerPublicKey: ctx.role === 'host' ? ctx.guestKey : ctx.hostKey,
        decisions: ctx.controlMode !== 'autonomous' && !!ctx.decision,
      });
      if (ctx.mpWrap) mode = ctx.mpWrap(mode);
      const end = await driveMpMode(mode, {
        send: io.send,
        recv: async () => (await io.recv()).msg,
        decide: (seq) => io.decide({ expects: 'value', key: 'action_seq', value: seq, fallback: null, check: accepts, take: (r) => r.value }),
        event: io.event,
      });
      if (end.receipt) io.write('transcript_receipt.json', end.receipt);
      // The audited winner (NOTES A14: reported only after the audit and both receipts).
      if (end.reason === 'completed') return { reason: 'completed', ...(isOutcome(end.result?.outcome) && { outcome: end.result.outcome }) };
      switch (end.reason) {
        case 'peer_error':
          throw new ModeAbort('peer_aborted', 'peer', end.detail);
        case 'unexpected_message':
          throw new ModeAbort('unexpected_message', 'engine', end.detail);
        case 'hook_error':
          throw new ModeAbort('hook_error', 'hooks', end.detail);
        default: {
          const proof = end.proof
            ? {
                kind: end.proof.kind,
                offender: end.proof.offender,
                frames: 'all' as const,
                detail: { reason: end.proof.reason, evidence: end.proof.evidence, verifier: ctx.role, deal: end.deal, transcript_hash: end.transcriptHash },
              }
            : undefined;
          throw new ModeAbort(end.reason, end.reason === 'audit_failed' || end.reason === 'audit_refused' ? 'mp_audit' : 'mp_play', end.detail, proof);
        }
      }
    }),
};
