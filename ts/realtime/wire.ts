/**
 * The authoritative_realtime wire (NOTES A17): the match config and its hash, the host's hash-chained
 * frames and the guest's integrity check of one frame, command messages and what a frame says it
 * applied. Texts of refusals are the reference's, as a report of the guest shows them.
 */
import type { Crypto } from '../crypto/backend.js';
import type { Role } from '../hooks/types.js';
import { RealtimeError } from './errors.js';
import { rtJsonHash } from './json.js';

export const ZERO_HASH = '0'.repeat(64);
export const WIRE_VERSION = 1;
export const OUTCOMES = ['none', 'host', 'guest', 'draw'] as const;
export type Outcome = (typeof OUTCOMES)[number];
export const isOutcome = (v: unknown): v is Outcome => typeof v === 'string' && (OUTCOMES as readonly string[]).includes(v);

/** An integer as Python's json gives it: a number (safe) or a bigint. */
export type Int = number | bigint;
export const isInt = (v: unknown): v is Int => (typeof v === 'number' && Number.isInteger(v)) || typeof v === 'bigint';

export interface RealtimeConfig {
  tick_rate_hz: number;
  input_delay_ticks: number;
  snapshot_every_ticks: number;
  max_command_lead_ticks: number;
  max_commands_per_frame: number;
  disconnect_policy: string;
}

const CONFIG_INTS = ['tick_rate_hz', 'input_delay_ticks', 'snapshot_every_ticks', 'max_command_lead_ticks', 'max_commands_per_frame'] as const;

/** The spec's flow.realtime as the reference's RealtimeConfig.from_spec reads it (its int()/str()). */
export function realtimeConfig(spec: { flow?: { realtime?: Record<string, unknown> } | undefined }): RealtimeConfig {
  const rt = spec.flow?.realtime ?? {};
  const out: Record<string, unknown> = {};
  for (const k of CONFIG_INTS) {
    const v = rt[k];
    const n = typeof v === 'string' && /^\s*[+-]?\d+\s*$/.test(v) ? Number(v) : v;
    // int() truncates a float; a spec holding one is already refused by the spec validator.
    if (typeof n !== 'number' || !Number.isFinite(n)) throw new RealtimeError('RT_CONFIG', `flow.realtime.${k} is not an integer`);
    out[k] = Math.trunc(n);
  }
  if (!('disconnect_policy' in rt) || rt['disconnect_policy'] === undefined) throw new RealtimeError('RT_CONFIG', 'flow.realtime.disconnect_policy is missing');
  out['disconnect_policy'] = String(rt['disconnect_policy']);
  if ((out['tick_rate_hz'] as number) < 1) throw new RealtimeError('RT_CONFIG', 'flow.realtime.tick_rate_hz is below 1');
  return out as unknown as RealtimeConfig;
}

export function matchConfigObject(rulesetHash: string, options: unknown, config: RealtimeConfig): Record<string, unknown> {
  return { wire_version: WIRE_VERSION, ruleset_hash: rulesetHash, options, realtime: { ...config } };
}

export function matchConfigHash(crypto: Crypto, rulesetHash: string, options: unknown, config: RealtimeConfig): string {
  return rtJsonHash(crypto, matchConfigObject(rulesetHash, options, config));
}

/** What a frame says the host applied for one side at its tick. */
export interface Applied {
  side: Role;
  seq: Int | null;
  target_tick: Int;
  commands: unknown[];
  command_hash: string;
}

export interface RtCommand {
  action: 'rt_command';
  seq: Int;
  target_tick: Int;
  commands: unknown[];
  command_hash: string;
}

export function commandHash(crypto: Crypto, seq: Int | null, targetTick: Int, commands: unknown): string {
  return rtJsonHash(crypto, { seq, target_tick: targetTick, commands });
}

export function commandMessage(crypto: Crypto, seq: Int, targetTick: Int, commands: unknown[]): RtCommand {
  return { action: 'rt_command', seq, target_tick: targetTick, commands, command_hash: commandHash(crypto, seq, targetTick, commands) };
}

export function applied(side: Role, m: Pick<RtCommand, 'seq' | 'target_tick' | 'commands' | 'command_hash'>): Applied {
  return { side, seq: m.seq, target_tick: m.target_tick, commands: m.commands, command_hash: m.command_hash };
}

export function emptyApplied(crypto: Crypto, side: Role, tick: Int): Applied {
  return { side, seq: null, target_tick: tick, commands: [], command_hash: commandHash(crypto, null, tick, []) };
}

export interface RtFrame {
  tick: number;
  state: Record<string, unknown>;
  state_hash: string;
  prev_state_hash: string;
  prev_chain_hash: string;
  chain_hash: string;
  applied_commands: Record<Role, Applied>;
  events: Record<string, unknown>[];
  outcome: Outcome;
  host_time_ns: Int;
}

const FRAME_KEYS = [
  'applied_commands',
  'chain_hash',
  'events',
  'host_time_ns',
  'outcome',
  'prev_chain_hash',
  'prev_state_hash',
  'state',
  'state_hash',
  'tick',
].join();

/** The frame without `state` and `chain_hash`: what chain_hash is the json_hash of. */
export function frameCore(f: Omit<RtFrame, 'state' | 'chain_hash'>): Record<string, unknown> {
  return {
    tick: f.tick,
    state_hash: f.state_hash,
    prev_state_hash: f.prev_state_hash,
    prev_chain_hash: f.prev_chain_hash,
    applied_commands: f.applied_commands,
    events: f.events,
    outcome: f.outcome,
    host_time_ns: f.host_time_ns,
  };
}

export interface MakeFrame {
  tick: number;
  state: Record<string, unknown>;
  previous: Pick<RtFrame, 'state_hash' | 'chain_hash'> | undefined;
  applied: Record<Role, Applied>;
  events: Record<string, unknown>[];
  outcome: Outcome;
  hostTimeNs: Int;
}

export function makeFrame(crypto: Crypto, m: MakeFrame): RtFrame {
  const core = {
    tick: m.tick,
    state_hash: rtJsonHash(crypto, m.state),
    prev_state_hash: m.previous?.state_hash ?? ZERO_HASH,
    prev_chain_hash: m.previous?.chain_hash ?? ZERO_HASH,
    applied_commands: m.applied,
    events: m.events,
    outcome: m.outcome,
    host_time_ns: m.hostTimeNs,
  };
  return { ...core, state: m.state, chain_hash: rtJsonHash(crypto, frameCore(core)) };
}

export const FRAME_FAULTS = [
  'frame_fields',
  'frame_tick',
  'frame_tick_gap',
  'frame_state',
  'frame_state_hash',
  'frame_prev_state_hash',
  'frame_prev_chain_hash',
  'frame_outcome',
  'frame_shape',
  'frame_chain_hash',
] as const;
export type FrameFault = (typeof FRAME_FAULTS)[number];

export interface Fault<C extends string = string> {
  code: C;
  /** The reference's text where it has one. */
  message: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The guest's cheap in-band check of one frame (the reference's verify_frame, its checks in its
 * order): undefined when it holds, else the first fault. `frame` is a lossless value (parseRealtimeJson);
 * `previous` is the last frame that passed, undefined for tick 0.
 */
export function verifyFrame(crypto: Crypto, frame: unknown, previous: RtFrame | undefined): Fault<FrameFault> | undefined {
  const fault = (code: FrameFault, message: string) => ({ code, message });
  if (!isObject(frame) || Object.keys(frame).sort().join() !== FRAME_KEYS) return fault('frame_fields', 'real-time frame has missing or unknown fields');
  const tick = frame['tick'];
  if (!isInt(tick) || tick < 0) return fault('frame_tick', 'real-time frame tick is invalid');
  const expected = previous === undefined ? 0 : previous.tick + 1;
  if (BigInt(tick) !== BigInt(expected)) return fault('frame_tick_gap', `real-time frame tick discontinuity: expected ${expected}, got ${tick}`);
  if (!isObject(frame['state'])) return fault('frame_state', 'real-time frame state must be an object');
  let stateHash: string;
  try {
    stateHash = rtJsonHash(crypto, frame['state']);
  } catch (e) {
    if (e instanceof RealtimeError) return fault('frame_state_hash', `real-time frame state_hash mismatch (${e.message})`);
    throw e;
  }
  if (stateHash !== frame['state_hash']) return fault('frame_state_hash', 'real-time frame state_hash mismatch');
  if (frame['prev_state_hash'] !== (previous?.state_hash ?? ZERO_HASH)) return fault('frame_prev_state_hash', 'real-time frame prev_state_hash mismatch');
  if (frame['prev_chain_hash'] !== (previous?.chain_hash ?? ZERO_HASH)) return fault('frame_prev_chain_hash', 'real-time frame prev_chain_hash mismatch');
  if (!isOutcome(frame['outcome'])) return fault('frame_outcome', 'real-time frame outcome is invalid');
  if (!Array.isArray(frame['events']) || !isObject(frame['applied_commands'])) return fault('frame_shape', 'real-time frame events/commands shape is invalid');
  let chain: string;
  try {
    chain = rtJsonHash(crypto, frameCore(frame as unknown as RtFrame));
  } catch (e) {
    if (e instanceof RealtimeError) return fault('frame_chain_hash', `real-time frame chain_hash mismatch (${e.message})`);
    throw e;
  }
  if (chain !== frame['chain_hash']) return fault('frame_chain_hash', 'real-time frame chain_hash mismatch');
  return undefined;
}
