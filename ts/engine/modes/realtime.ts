/**
 * authoritative_realtime (NOTES A17): the host runs the simulation on a fixed cadence and is the only
 * referee; the guest streams commands for future ticks and checks every frame. The wire is the
 * reference's (rt_join, rt_reject | rt_ready, rt_command, rt_command_ack, rt_frame); the work is in
 * ts/realtime, this module only turns inputs into its calls and its answers into effects.
 *
 * Host: answers rt_join with rt_reject (then ends `realtime_rejected`) or rt_ready carrying the tick-0
 * frame, then sets a `timer` per tick at start + n·1000/tick_rate_hz (a late tick fires at once and the
 * cadence catches up, as the reference's deadline does). Each firing steps the hooks and sends rt_frame;
 * each rt_command is acknowledged at once, accepted or rejected with the reference's reason.
 * Guest: sends rt_join, checks rt_ready, then after each verified frame sends its commands for
 * tick + input_delay_ticks. A frame that breaks the chain, skips a tick, or drops, alters or invents a
 * command the host acknowledged ends the session `realtime_integrity_failed`, with every line so far as
 * the proof's evidence (ts/realtime/transcript.ts checks it again offline).
 * Both complete on the first frame whose outcome is not "none"; the guest signs the closing receipt
 * first, so commands it sent before seeing that frame reach a host that has stopped and are drained.
 *
 * Where this differs from the reference in what a peer can observe:
 * - host_time_ns is nanoseconds since the match started on the driver's clock, an integer ≤ 2^53: our
 *   frames are signed over RFC 8785, which cannot carry an integer the size of Python's time_ns exactly.
 * - As the reference, the host answers a guest message failing the spec once play began with a rejected
 *   ack whose reason is the reference's validation text, and plays on. When that ack itself would fail
 *   the spec (seq 0) the reference's command receiver dies and its match plays on without the guest's
 *   input; here the session ends (hook_invalid_message). Any other message failing the spec (a join, a
 *   host message) ends the session as invalid_message, where the reference raises; neither sends more.
 * - The guest's command lead is input_delay_ticks: there is no RTT probe to lengthen it.
 * - proto_realtime_validate_commands is called in line while a command is judged, so it must answer
 *   synchronously (a Promise is not a list: the command is refused). Snapshots
 *   (proto_realtime_snapshot, snapshot_every_ticks) and disconnect_policy other than abort are not run.
 */
import { RealtimeError } from '../../realtime/errors.js';
import { RealtimeGuest, type RealtimeFault } from '../../realtime/guest.js';
import { normaliseCommands, RealtimeHookError, RealtimeHost } from '../../realtime/host.js';
import { parseRealtimeJson, plainValue } from '../../realtime/json.js';
import { rulesetHashOfSpec } from '../../realtime/ruleset.js';
import { matchConfigHash, realtimeConfig, type RealtimeConfig } from '../../realtime/wire.js';
import { msSummary } from '../latency.js';
import { referenceValidationText } from '../../realtime/validation-text.js';
import { isOutcome, ModeAbort, type Mode, type ModeContext, type ModeDefinition, type ModeEffect, type ModeInput } from '../mode.js';
import { REALTIME_PROOFS, realtimeSequence } from './realtime-wire.js';

/**
 * The one-line reason a person needs for the refusal every cross-implementation match meets: the
 * ruleset hash covers every file of the protocol folder, hooks included (NOTES A17), so two
 * implementations' folders never hash alike.
 */
const why = (reason: unknown): string =>
  reason === 'ruleset_hash_mismatch'
    ? ' (the two sides hold different rule files: the ruleset hash covers the whole protocol folder, hooks included, so aigenora and the reference, whose folder holds hooks.py, can never play realtime together)'
    : '';

/** The id of the host's tick timer. */
export const TICK_TIMER = 'rt_tick';

type Ctx = ModeContext<'authoritative_realtime'>;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** What a caller may hand an authoritative_realtime session. */
export interface RealtimeInputs {
  /** SHA-256 over the protocol folder as the reference defines it (default: over spec.json alone, a folder without rule files). */
  rulesetHash?: string;
}

function setup(ctx: Ctx): { config: RealtimeConfig; rulesetHash: string; matchConfigHash: string } {
  try {
    const config = realtimeConfig(ctx.spec as never);
    const rulesetHash = ctx.inputs.rulesetHash ?? rulesetHashOfSpec(ctx.crypto, ctx.specText);
    return { config, rulesetHash, matchConfigHash: matchConfigHash(ctx.crypto, rulesetHash, ctx.options, config) };
  } catch (e) {
    if (e instanceof RealtimeError) throw new ModeAbort('hook_error', 'realtime', `the realtime config cannot be used: ${e.message}`);
    throw e;
  }
}

/** The message of a line read losslessly (a peer's `1.0` stays a float for hashing); the checked value if that fails. */
function exact(input: Extract<ModeInput, { kind: 'message' }>): Record<string, unknown> {
  try {
    const f = parseRealtimeJson(input.line);
    if (isObject(f) && isObject(f['msg'])) return f['msg'];
  } catch {
    // The core has already read this line strictly; fall back to its value.
  }
  return input.msg;
}

const hookAbort = (e: unknown): never => {
  if (e instanceof RealtimeHookError) throw new ModeAbort('hook_error', 'hooks', e.message);
  throw e;
};

/**
 * A message the spec refuses ends the session as the core would end it, except the guest's rt_command
 * once play began: the host answers that with a rejected ack in the reference's words and plays on.
 */
function invalidFrom(input: Extract<ModeInput, { kind: 'message' }>): ModeEffect[] {
  const errors = input.invalid ?? [];
  return [
    {
      kind: 'end',
      reason: 'invalid_message',
      step: 'spec',
      detail: `the ${input.from}'s ${input.msg.action} fails the spec: ${errors.map((e) => `${e.code} at ${e.pointer}`).join('; ')}`,
      proof: { kind: 'invalid_message', offender: input.from, frames: [input.line], detail: { errors } },
    },
  ];
}

function hostMode(ctx: Ctx): Mode {
  const { config, rulesetHash, matchConfigHash: mch } = setup(ctx);
  const hooks = ctx.hooks;
  const host = new RealtimeHost({
    crypto: ctx.crypto,
    config,
    rulesetHash,
    matchConfigHash: mch,
    validateCommands: (side, commands, state, tick) => hooks.proto_realtime_validate_commands(side, commands, state, tick),
    check: () => refusal,
  });
  /** The spec's refusal of the message being judged, in the reference's words (it becomes the ack's reason). */
  let refusal: string | undefined;
  const period = 1000 / config.tick_rate_hz;
  let start = 0;
  let deadline = 0;
  let started = false;
  const elapsedNs = () => Math.min(Number.MAX_SAFE_INTEGER, Math.max(0, Math.round((ctx.now() - start) * 1e6)));

  async function queueCommands(): Promise<void> {
    const { state, targetTick } = host.hostCommandsWanted();
    let raw: unknown;
    try {
      raw = await hooks.proto_realtime_commands(state, targetTick);
    } catch (e) {
      host.queueHostCommands(undefined, e);
      return;
    }
    host.queueHostCommands(raw);
  }

  return {
    async step(input) {
      if (input.kind === 'message' && input.invalid && !started) return invalidFrom(input);
      if (input.kind === 'message' && !started) {
        const no = host.answerJoin(input.msg);
        if (no)
          return [
            { kind: 'send', msg: no.reject },
            { kind: 'end', reason: 'realtime_rejected', step: 'realtime', detail: `the guest's rt_join was refused: ${no.reason}${why(no.reason)}` },
          ];
        start = ctx.now();
        const initial = await ctx.hook('proto_realtime_initial_state');
        let ready;
        try {
          ready = host.start(initial, 0).ready;
        } catch (e) {
          hookAbort(e);
        }
        started = true;
        await queueCommands();
        deadline = start + period;
        return [
          { kind: 'send', msg: ready! },
          { kind: 'event', name: 'realtime_started', data: { role: 'host', tick_rate_hz: config.tick_rate_hz } },
          { kind: 'timer', id: TICK_TIMER, at: deadline },
        ];
      }
      if (input.kind === 'message') {
        refusal = input.invalid ? referenceValidationText(input.invalid) : undefined;
        const a = host.command(exact(input));
        refusal = undefined;
        const out: ModeEffect[] = [];
        if (a.rejected !== undefined) out.push({ kind: 'event', name: 'realtime_command_rejected', data: { reason: a.rejected } });
        if (a.ack) out.push({ kind: 'send', msg: a.ack });
        return out;
      }
      if (input.kind !== 'timer' || input.id !== TICK_TIMER || !started || host.outcome !== 'none') return [];
      const s = host.stepInput();
      const result = await ctx.hook('proto_realtime_step', s.state, s.tick, s.commands);
      let sent;
      try {
        sent = host.applyStep(result, elapsedNs());
      } catch (e) {
        hookAbort(e);
      }
      const out: ModeEffect[] = [{ kind: 'send', msg: sent!.message }];
      if (host.outcome !== 'none') {
        out.push(
          { kind: 'event', name: 'realtime_ended', data: { role: 'host', tick: host.tick, outcome: host.outcome } },
          { kind: 'end', reason: 'completed', ...(isOutcome(host.outcome) && { outcome: host.outcome }) },
        );
        return out;
      }
      await queueCommands();
      deadline += period;
      out.push({ kind: 'timer', id: TICK_TIMER, at: deadline });
      return out;
    },
  };
}

function guestMode(ctx: Ctx): Mode {
  const { config, rulesetHash, matchConfigHash: mch } = setup(ctx);
  const hooks = ctx.hooks;
  const guest = new RealtimeGuest({ crypto: ctx.crypto, config, rulesetHash, matchConfigHash: mch });
  /** When each command went out, by seq, and how long its ack took: the command round trip. */
  const sentAt = new Map<number, number>();
  const roundTrips: number[] = [];

  const integrity = (fault: RealtimeFault): ModeEffect[] => {
    const audit = { status: 'integrity_failed', code: fault.code, reason: fault.message, last_valid_tick: guest.lastTick };
    return [
      { kind: 'event', name: 'realtime_integrity_failed', data: audit },
      { kind: 'write', file: 'realtime-audit.json', value: audit },
      {
        kind: 'end',
        reason: 'realtime_integrity_failed',
        step: 'realtime',
        detail: fault.message,
        proof: {
          kind: 'realtime_integrity_failed',
          offender: 'host',
          frames: [...ctx.wire.order],
          detail: { ...audit, ...(fault.tick !== undefined && { tick: fault.tick }) },
        },
      },
    ];
  };

  /** The commands for the next target tick, as the reference's guest makes them (a failure sends none). */
  async function commands(): Promise<ModeEffect[]> {
    const target = guest.nextTarget;
    const state = plainValue(guest.previous!.state) as Record<string, unknown>;
    let list: unknown[] = [];
    try {
      const raw = await hooks.proto_realtime_commands(state, target);
      list = normaliseCommands(
        (side, c, st, t) => hooks.proto_realtime_validate_commands(side, c, st, t),
        config.max_commands_per_frame,
        'guest',
        raw,
        state,
        target,
      );
    } catch {
      list = [];
    }
    const command = guest.nextCommand(list);
    if (typeof command.seq === 'number') sentAt.set(command.seq, ctx.now());
    return [{ kind: 'send', msg: { ...command } }];
  }

  async function afterFrame(): Promise<ModeEffect[]> {
    const frame = guest.previous!;
    if (frame.outcome === 'none') return commands();
    let audit: Record<string, unknown> = { status: 'deferred' };
    try {
      const semantic = await hooks.proto_realtime_audit_outcome?.(plainValue(frame));
      if (isObject(semantic)) audit = semantic;
    } catch (e) {
      audit = {
        status: 'audit_error',
        reason: Array.from((e as Error)?.message ?? String(e))
          .slice(0, 200)
          .join(''),
      };
    }
    audit = { ...audit, integrity: 'verified', tick: frame.tick, outcome: frame.outcome, chain_hash: frame.chain_hash };
    return [
      { kind: 'write', file: 'realtime-audit.json', value: audit },
      { kind: 'event', name: 'realtime_command_rtt', data: { ...msSummary(roundTrips) } },
      { kind: 'event', name: 'realtime_ended', data: { role: 'guest', tick: frame.tick, outcome: frame.outcome } },
      { kind: 'end', reason: 'completed', ...(isOutcome(frame.outcome) && { outcome: frame.outcome }) },
    ];
  }

  return {
    async step(input) {
      if (input.kind === 'start') return [{ kind: 'send', msg: guest.joinMessage() }];
      if (input.kind !== 'message') return [];
      if (input.invalid) return invalidFrom(input);
      const msg = exact(input);
      switch (msg['action']) {
        case 'rt_reject':
          return [
            { kind: 'end', reason: 'realtime_rejected', step: 'realtime', detail: `the host refused the join: ${String(msg['reason'])}${why(msg['reason'])}` },
          ];
        case 'rt_ready': {
          const fault = guest.ready(msg);
          if (fault?.code === 'ready_mismatch')
            return [{ kind: 'end', reason: 'realtime_rejected', step: 'realtime', detail: `the host's rt_ready does not match this side: ${fault.message}` }];
          if (fault) return integrity(fault);
          return [{ kind: 'event', name: 'realtime_started', data: { role: 'guest', tick_rate_hz: config.tick_rate_hz } }, ...(await afterFrame())];
        }
        case 'rt_command_ack': {
          const fault = guest.ack(msg);
          if (fault) return integrity(fault);
          const at = typeof msg['seq'] === 'number' ? sentAt.get(msg['seq']) : undefined;
          if (at !== undefined) {
            roundTrips.push(ctx.now() - at);
            sentAt.delete(msg['seq'] as number);
          }
          return [];
        }
        case 'rt_frame': {
          const fault = guest.frame(msg['frame']);
          return fault ? integrity(fault) : afterFrame();
        }
        default:
          return [];
      }
    },
  };
}

export const realtimeMode: ModeDefinition<'authoritative_realtime'> = {
  // The guest learns the end from the final frame and signs first; the host, stopped, drains the
  // commands the guest sent before it saw that frame.
  receiptFirst: 'guest',
  drainAfterEnd: true,
  invalidInbound: 'mode',
  sequence: realtimeSequence,
  ownOpening: true,
  proofs: REALTIME_PROOFS,
  create: (ctx) => (ctx.role === 'host' ? hostMode(ctx) : guestMode(ctx)),
};
