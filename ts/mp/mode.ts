/**
 * The `mental_poker` flow mode (NOTES A16) for one side, as a state machine without I/O: it is fed
 * inputs (start, a peer message already verified by the driver, a local decision) and answers effects
 * (send, event, decide, end). It reads no clock, sets no timer and draws no randomness: every secret
 * comes from the injected `MpSecrets`, so a recorded game replays byte for byte.
 *
 * After the driver's join/ready the game goes through its phases, each in its own module: the deck
 * setup (deck-setup.ts), the deal by OT (ot-deal.ts), the play (play.ts) and the finalisation with
 * its audit and receipts (finalise.ts). This module only says which phase takes the next input.
 */
import { openSetup, takeTable } from './deck-setup.js';
import { MpError } from './errors.js';
import { Finalisation } from './finalise.js';
import { Game, Stop, type Wait } from './game.js';
import type { MpEnd, MpInput, MpMode, MpModeConfig, MpEffect } from './mode-types.js';
import { OtDeal } from './ot-deal.js';
import { bad } from './peer-fields.js';
import { Play } from './play.js';

export type { MpCrypto, MpEffect, MpEnd, MpEndReason, MpInput, MpMode, MpModeConfig, MpProofClaim, MpResult, TranscriptReceipt } from './mode-types.js';

export function createMpMode(cfg: MpModeConfig): MpMode {
  const g = new Game(cfg);
  const ots = new OtDeal(g);
  const play = new Play(g, ots);
  const fin = new Finalisation(g);
  let wait: Wait | 'start' | 'ended' = 'start';

  /** Moves the game on from a finished phase to the point where it waits. */
  async function settle(next: Wait | 'dealt' | 'played'): Promise<Wait> {
    if (next === 'dealt') next = await play.start();
    if (next === 'played') {
      if (g.role === 'guest') await g.readMetadata();
      fin.open();
      return 'opening';
    }
    return next;
  }

  /** The input the game waits for, to the phase that takes it; answers the next wait, or the end. */
  async function take(input: MpInput): Promise<Wait | MpEnd> {
    if (wait === 'start') {
      if (g.role === 'host') await g.readMetadata();
      await openSetup(g);
      return 'table';
    }
    if (wait === 'decision') {
      if (input.kind !== 'decision') throw new Stop('hook_error', `the driver fed a ${input.kind} where a decision was due`);
      return settle(await play.takeDecision(input.value));
    }
    if (input.kind !== 'message') throw new Stop('hook_error', `the driver fed a ${input.kind} where a peer message was due`);
    const msg = input.msg;
    if (typeof msg !== 'object' || msg === null || typeof msg.action !== 'string') throw bad('a peer message without an action');
    const index = g.received++;
    switch (wait) {
      case 'table':
        await takeTable(g, msg);
        await ots.plan();
        return settle(ots.next());
      case 'deal_request':
        return settle(ots.takeDealRequest(msg));
      case 'ot_response':
        return settle(ots.takeResponse(msg) ? await play.drawn() : ots.next());
      case 'move':
        return settle(await play.takeMove(msg, index));
      case 'opening':
        fin.takeOpening(msg);
        return 'witnesses';
      case 'witnesses':
        await fin.takeWitnesses(msg, index);
        return 'receipt';
      case 'receipt':
        return fin.takeReceipt(msg, index);
      default:
        throw new Error(`the mental_poker mode cannot take input in state ${wait}`);
    }
  }

  /** How the game ended, for an error thrown by a phase. */
  function stopped(e: unknown): MpEnd {
    const none = { result: null, audit: null, proof: null, receipt: null };
    const at = { transcriptHash: g.transcript.rootHex(), deal: g.deal };
    if (e instanceof Stop) return { reason: e.reason, detail: e.message, ...none, ...e.extra, ...at };
    // Peer material the transcript refuses (a float, a lone surrogate), where the reference raises.
    if (e instanceof MpError) return { reason: 'bad_peer_material', detail: e.message, ...none, ...at };
    return { reason: 'hook_error', detail: `internal error: ${(e as Error)?.message ?? String(e)}`, ...none, ...at };
  }

  return {
    transcript: g.transcript,
    get ended() {
      return wait === 'ended';
    },
    async step(input: MpInput): Promise<MpEffect[]> {
      if (wait === 'ended') return [];
      if (wait === 'start' && input.kind !== 'start') throw new Error('the mental_poker mode starts with a start input');
      let end: MpEnd | null = null;
      try {
        const next = await take(input);
        if (typeof next === 'string') wait = next;
        else end = next;
      } catch (e) {
        end = stopped(e);
      }
      if (end) {
        wait = 'ended';
        // The game's private key is of no further use: wipe it (the wasm backend holds it outside JS).
        try {
          g.rsa?.dispose();
        } catch {
          // already disposed
        }
        g.rsa = null;
        // A key still being made when the game ended early is wiped once it is done.
        void g.rsaPending?.then(
          (k) => k.dispose(),
          () => undefined,
        );
        g.rsaPending = null;
        g.out.push({ kind: 'end', end });
      }
      const effects = g.out;
      g.out = [];
      return effects;
    },
  };
}
