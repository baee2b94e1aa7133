/**
 * The agent page's stand-ins for the engine's mental-poker and realtime modes (scripts/build-web.mjs
 * bundles this module in their place): none of the built-ins the page plays (PAGE_HOOKS) has either
 * flow mode, and openInvitation refuses every other protocol, so their code (ts/mp, ts/realtime) would
 * only weigh on the page. Should one be reached all the same, the session ends at start, typed.
 */
import { ModeAbort, type ModeDefinition } from '../engine/mode.js';
import type { FlowMode } from '../spec/types.js';

const notOnThePage = <M extends FlowMode>(mode: M): ModeDefinition<M> => ({
  receiptFirst: 'host',
  drainAfterEnd: false,
  invalidInbound: 'abort',
  sequence: () => ({ complete: false, next: () => ({ ok: false, reason: `flow mode ${mode} has no replay on the agent page` }) }),
  create: () => ({
    step: () => Promise.reject(new ModeAbort('hook_error', 'engine', `flow mode ${mode} is not played by the agent page; the CLI plays it`)),
  }),
});

export const mentalPokerMode = notOnThePage('mental_poker');
export const realtimeMode = notOnThePage('authoritative_realtime');
