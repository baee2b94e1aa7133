/**
 * The host's authority, without I/O or clock: it answers the guest's join, queues guest commands by
 * target tick (every refusal the reference makes, in its order and with its text), queues its own
 * commands with the same input delay, and steps the simulation one tick per call, chaining frames.
 * The caller decides when a tick happens (a timer in the engine, "after tick n" in the vectors) and
 * what host_time_ns a frame records.
 */
import type { Crypto } from '../crypto/backend.js';
import type { Message, Role } from '../hooks/types.js';
import { plainValue, rtCanonical } from './json.js';
import {
  applied,
  commandHash,
  commandMessage,
  emptyApplied,
  isInt,
  isOutcome,
  makeFrame,
  WIRE_VERSION,
  ZERO_HASH,
  type Int,
  type Outcome,
  type RealtimeConfig,
  type RtCommand,
  type RtFrame,
} from './wire.js';

/** The protocol's realtime hooks, synchronous, for callers that run them in line (tests, the vectors). */
export interface RealtimeHostHooks {
  initialState(): unknown;
  commands(state: Record<string, unknown>, targetTick: number): unknown;
  /** The commands as they will be applied; a throw refuses them with its message. */
  validateCommands(side: Role, commands: unknown[], state: Record<string, unknown>, targetTick: number): unknown;
  step(state: Record<string, unknown>, tick: number, commands: { host: unknown[]; guest: unknown[] }): unknown;
}

export interface RealtimeHostOptions {
  crypto: Crypto;
  config: RealtimeConfig;
  rulesetHash: string;
  matchConfigHash: string;
  /**
   * proto_realtime_validate_commands, called in line while a command is judged (a throw, or anything
   * but a list, refuses the command, as the reference's does).
   */
  validateCommands: RealtimeHostHooks['validateCommands'];
  /**
   * The spec's check of an inbound rt_command: the reference's validation text, or undefined. The
   * engine's core checks every message before the mode sees it, so only a caller feeding messages
   * straight in (the conformance vectors) passes one.
   */
  check?(msg: Record<string, unknown>): string | undefined;
}

export type JoinReason = 'wire_version_mismatch' | 'ruleset_hash_mismatch' | 'match_config_mismatch';

export interface CommandAnswer {
  /** The rt_command_ack to send; none when the message has no integer seq and target_tick to name. */
  ack: Message | undefined;
  /** Why it was refused, if it was. */
  rejected: string | undefined;
}

/**
 * The reference's _normalize_commands: the commands as proto_realtime_validate_commands normalises
 * them, or a throw whose message is the refusal. The hook sees plain values (a peer's float as a number).
 */
export function normaliseCommands(
  validate: RealtimeHostHooks['validateCommands'],
  max: number,
  side: Role,
  commands: unknown,
  state: Record<string, unknown>,
  targetTick: number,
): unknown[] {
  if (!Array.isArray(commands)) throw new Error('commands must be a list');
  if (commands.length > max) throw new Error('command frame exceeds max_commands_per_frame');
  const normalised = validate(side, plainValue(commands) as unknown[], state, targetTick);
  if (!Array.isArray(normalised)) throw new Error('proto_realtime_validate_commands must return a list');
  if (normalised.length > max) throw new Error('normalized command frame exceeds max_commands_per_frame');
  rtCanonical(normalised);
  return structuredClone(normalised);
}

/** A failure a protocol's hook made that the reference turns into an exception of the host's run. */
export class RealtimeHookError extends Error {
  constructor(
    readonly hook: string,
    message: string,
  ) {
    super(`${hook}: ${message}`);
    this.name = 'RealtimeHookError';
  }
}

/** Python's str(exc)[:200]: the first 200 code points of the message. */
export function reasonOf(e: unknown): string {
  const text = e instanceof Error ? e.message : String(e);
  return Array.from(text).slice(0, 200).join('');
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const copy = <T>(v: T): T => structuredClone(v);

export class RealtimeHost {
  private readonly crypto: Crypto;
  private readonly o: RealtimeHostOptions;
  tick = 0;
  state: Record<string, unknown> = {};
  previous: RtFrame | undefined;
  outcome: Outcome = 'none';
  private hostSeq = 0;
  private lastGuestSeq: Int = -1;
  private readonly pending = new Map<number, RtCommand>();
  private readonly hostPending = new Map<number, RtCommand>();
  /** Local command generation that failed (the host then applies none), as the reference journals it. */
  readonly generationFailures: { seq: number; target_tick: number; reason: string }[] = [];

  constructor(o: RealtimeHostOptions) {
    this.o = o;
    this.crypto = o.crypto;
  }

  /** The guest's rt_join: the first mismatch as rt_reject, or undefined when the host may start. */
  answerJoin(join: Record<string, unknown>): { reason: JoinReason; reject: Message } | undefined {
    const reason: JoinReason | undefined =
      join['wire_version'] !== WIRE_VERSION
        ? 'wire_version_mismatch'
        : join['ruleset_hash'] !== this.o.rulesetHash
          ? 'ruleset_hash_mismatch'
          : join['match_config_hash'] !== this.o.matchConfigHash
            ? 'match_config_mismatch'
            : undefined;
    return reason && { reason, reject: { action: 'rt_reject', reason } };
  }

  /** The tick-0 frame from proto_realtime_initial_state's result, in rt_ready. Then queue the host's first commands. */
  start(initialState: unknown, hostTimeNs: Int): { ready: Message; frame: RtFrame } {
    if (!isObject(initialState)) throw new RealtimeHookError('proto_realtime_initial_state', 'proto_realtime_initial_state must return an object');
    this.checkJson('proto_realtime_initial_state', initialState);
    this.state = copy(initialState);
    const frame = makeFrame(this.crypto, {
      tick: 0,
      state: this.state,
      previous: undefined,
      applied: { host: emptyApplied(this.crypto, 'host', 0), guest: emptyApplied(this.crypto, 'guest', 0) },
      events: [],
      outcome: 'none',
      hostTimeNs,
    });
    this.previous = frame;
    const ready: Message = {
      action: 'rt_ready',
      wire_version: WIRE_VERSION,
      ruleset_hash: this.o.rulesetHash,
      match_config_hash: this.o.matchConfigHash,
      config: { ...this.o.config },
      frame,
    };
    return { ready, frame };
  }

  private checkJson(hook: string, v: unknown): void {
    try {
      rtCanonical(v);
    } catch (e) {
      throw new RealtimeHookError(hook, reasonOf(e));
    }
  }

  private normalise(side: Role, commands: unknown, state: Record<string, unknown>, targetTick: number): unknown[] {
    return normaliseCommands(this.o.validateCommands, this.o.config.max_commands_per_frame, side, commands, copy(state), targetTick);
  }

  /** One rt_command (any message from the guest once play began): its ack, accepted or rejected. */
  command(message: Record<string, unknown>): CommandAnswer {
    const current = this.tick;
    try {
      const invalid = this.o.check?.(message);
      if (invalid !== undefined) throw new Error(invalid);
      if (message['action'] !== 'rt_command') throw new Error('unexpected real-time guest message');
      const seq = message['seq'] as Int;
      const target = message['target_tick'] as Int;
      if (!isInt(seq) || !isInt(target) || !Array.isArray(message['commands'])) throw new Error('rt_command fields are malformed');
      if (message['command_hash'] !== commandHash(this.crypto, seq, target, message['commands'])) throw new Error('command_hash_mismatch');
      if (seq <= this.lastGuestSeq) throw new Error('non_monotonic_sequence');
      if (target <= current) throw new Error('late_target_tick');
      if (target > current + this.o.config.max_command_lead_ticks) throw new Error('target_tick_too_far');
      const t = Number(target);
      if (this.pending.has(t)) throw new Error('target_tick_already_queued');
      const normalised = this.normalise('guest', message['commands'], this.state, t);
      const accepted = commandMessage(this.crypto, seq, t, normalised);
      this.pending.set(t, accepted);
      this.lastGuestSeq = seq;
      return {
        ack: { action: 'rt_command_ack', seq, target_tick: t, status: 'accepted', received_at_tick: current, command_hash: accepted.command_hash },
        rejected: undefined,
      };
    } catch (e) {
      const reason = reasonOf(e);
      const seq = message['seq'];
      const target = message['target_tick'];
      if (!isInt(seq) || !isInt(target)) return { ack: undefined, rejected: reason };
      const hash = 'command_hash' in message ? message['command_hash'] : ZERO_HASH;
      return {
        ack: { action: 'rt_command_ack', seq, target_tick: target, status: 'rejected', received_at_tick: this.tick, command_hash: hash, reason },
        rejected: reason,
      };
    }
  }

  /** What proto_realtime_commands is asked for the host's next commands: the state the guest also sees, and tick + input delay. */
  hostCommandsWanted(): { state: Record<string, unknown>; targetTick: number } {
    return { state: copy(this.state), targetTick: this.tick + this.o.config.input_delay_ticks };
  }

  /**
   * The host's own commands for tick + input_delay_ticks (what proto_realtime_commands returned, or
   * the error it threw): normalised like the guest's; a failure applies none, as the reference's does.
   */
  queueHostCommands(raw: unknown, failure?: unknown): void {
    const target = this.tick + this.o.config.input_delay_ticks;
    const seq = ++this.hostSeq;
    let commands: unknown[] = [];
    try {
      if (failure !== undefined) throw failure;
      commands = this.normalise('host', raw, this.state, target);
    } catch (e) {
      this.generationFailures.push({ seq, target_tick: target, reason: reasonOf(e) });
    }
    this.hostPending.set(target, commandMessage(this.crypto, seq, target, commands));
  }

  /** The next tick's input to proto_realtime_step: both sides' commands queued for it. */
  stepInput(): { state: Record<string, unknown>; tick: number; commands: { host: unknown[]; guest: unknown[] } } {
    const tick = this.nextTick();
    return {
      state: copy(this.state),
      tick,
      commands: { host: copy(this.hostPending.get(tick)?.commands ?? []), guest: copy(this.pending.get(tick)?.commands ?? []) },
    };
  }

  /** The tick the next step makes (throws where the host cannot step). */
  private nextTick(): number {
    if (!this.previous) throw new Error('the host steps only after the join');
    if (this.outcome !== 'none') throw new Error('the match is over');
    return this.tick + 1;
  }

  /** proto_realtime_step's result for stepInput's tick: that tick's frame, in rt_frame. */
  applyStep(result: unknown, hostTimeNs: Int): { frame: RtFrame; message: Message } {
    const tick = this.nextTick();
    const { state, events, outcome } = this.stepResult(result);
    const host = this.hostPending.get(tick);
    const guest = this.pending.get(tick);
    this.hostPending.delete(tick);
    this.pending.delete(tick);
    const frame = makeFrame(this.crypto, {
      tick,
      state,
      previous: this.previous,
      applied: {
        host: host ? applied('host', host) : emptyApplied(this.crypto, 'host', tick),
        guest: guest ? applied('guest', guest) : emptyApplied(this.crypto, 'guest', tick),
      },
      events,
      outcome,
      hostTimeNs,
    });
    this.tick = tick;
    this.state = state;
    this.previous = frame;
    this.outcome = outcome;
    return { frame, message: { action: 'rt_frame', frame } };
  }

  /** The reference's _normalize_step_result, its texts. */
  private stepResult(result: unknown): { state: Record<string, unknown>; events: Record<string, unknown>[]; outcome: Outcome } {
    const hook = 'proto_realtime_step';
    if (!isObject(result) || !isObject(result['state'])) throw new RealtimeHookError(hook, 'proto_realtime_step must return an object containing state');
    const events = result['events'] ?? [];
    const outcome = result['outcome'] ?? 'none';
    if (!Array.isArray(events) || !events.every(isObject)) throw new RealtimeHookError(hook, 'proto_realtime_step events must be a list of objects');
    if (!isOutcome(outcome)) throw new RealtimeHookError(hook, 'proto_realtime_step outcome is invalid');
    this.checkJson(hook, result['state']);
    this.checkJson(hook, events);
    return { state: copy(result['state']), events: copy(events) as Record<string, unknown>[], outcome };
  }
}

/**
 * Runs a host with synchronous hooks in line: the join (rt_reject, or rt_ready and the host's first
 * commands). Throws RealtimeHookError where the reference's host run raises.
 */
export function joinInline(host: RealtimeHost, hooks: RealtimeHostHooks, join: Record<string, unknown>, hostTimeNs: Int): Message {
  const no = host.answerJoin(join);
  if (no) return no.reject;
  const { ready } = host.start(hooks.initialState(), hostTimeNs);
  queueInline(host, hooks);
  return ready;
}

/** One tick with synchronous hooks, then the host's next commands if the match goes on. */
export function tickInline(host: RealtimeHost, hooks: RealtimeHostHooks, hostTimeNs: (tick: number) => Int): { frame: RtFrame; message: Message } {
  const input = host.stepInput();
  const out = host.applyStep(hooks.step(input.state, input.tick, input.commands), hostTimeNs(input.tick));
  if (host.outcome === 'none') queueInline(host, hooks);
  return out;
}

function queueInline(host: RealtimeHost, hooks: RealtimeHostHooks): void {
  const { state, targetTick } = host.hostCommandsWanted();
  try {
    host.queueHostCommands(hooks.commands(state, targetTick));
  } catch (e) {
    host.queueHostCommands(undefined, e);
  }
}
