/**
 * The guest's side of a realtime match, without I/O: it checks the host's rt_ready, every ack and every
 * frame, and numbers its own commands. Beyond the reference's verify_frame (chain, contiguous ticks,
 * hashes), it holds the host to its acks: a frame must apply, at a tick, exactly the guest command the
 * host acknowledged as accepted for that tick (same seq, the acked hash, and commands that hash to it),
 * and nothing when none was accepted, since an ack always travels ahead of the frame that applies it.
 * An omitted, delayed, altered or invented guest command is therefore caught at its tick.
 */
import type { Crypto } from '../crypto/backend.js';
import type { Role } from '../hooks/types.js';
import { rtCanonical } from './json.js';
import {
  commandHash,
  commandMessage,
  isInt,
  verifyFrame,
  WIRE_VERSION,
  type Fault,
  type FrameFault,
  type Int,
  type RealtimeConfig,
  type RtCommand,
  type RtFrame,
} from './wire.js';

export const GUEST_FAULTS = [
  /** rt_ready names another wire version, ruleset, match config or config: a refusal, not a cheat. */
  'ready_mismatch',
  /** An applied_commands entry that is not {side, seq, target_tick, commands, command_hash} of its side and tick, hashing right. */
  'applied_malformed',
  /** The host acked a guest command as accepted for this tick and the frame applies none or another. */
  'acked_command_dropped',
  /** The frame applies the acked command (same seq) with other commands or another hash. */
  'acked_command_altered',
  /** The frame applies a guest command the host never acked as accepted for this tick. */
  'unacked_command_applied',
  /** An ack for a command the guest never sent, for a tick already played, or a second accepted one for a tick. */
  'ack_invalid',
  /** A frame after the one that ended the match. */
  'frame_after_end',
] as const;
export type GuestFault = (typeof GUEST_FAULTS)[number];
export type RealtimeFault = Fault<FrameFault | GuestFault> & { tick?: number };

export interface RealtimeGuestOptions {
  crypto: Crypto;
  /** What the guest expects rt_ready to repeat; without them (an offline replay) rt_ready must repeat the join. */
  config?: RealtimeConfig;
  rulesetHash?: string;
  matchConfigHash?: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const key = (v: unknown) => (isInt(v) ? String(v) : '');

export class RealtimeGuest {
  private readonly crypto: Crypto;
  previous: RtFrame | undefined;
  config: RealtimeConfig | undefined;
  private join: { ruleset_hash: string; match_config_hash: string } | undefined;
  private seq = 0;
  /** Commands this guest sent, by seq. */
  private readonly sentBySeq = new Map<string, RtCommand>();
  /** Accepted acks not yet applied, by target tick. */
  private readonly accepted = new Map<number, { seq: Int; command_hash: string }>();

  constructor(o: RealtimeGuestOptions) {
    this.crypto = o.crypto;
    this.config = o.config;
    if (o.rulesetHash !== undefined && o.matchConfigHash !== undefined) this.join = { ruleset_hash: o.rulesetHash, match_config_hash: o.matchConfigHash };
  }

  joinMessage(): { action: 'rt_join'; wire_version: number; ruleset_hash: string; match_config_hash: string } {
    if (!this.join) throw new Error('a guest without its hashes cannot join');
    return { action: 'rt_join', wire_version: WIRE_VERSION, ...this.join };
  }

  /** An offline replay: the join as the guest sent it is what rt_ready must repeat. */
  joined(msg: Record<string, unknown>): void {
    this.join ??= { ruleset_hash: String(msg['ruleset_hash']), match_config_hash: String(msg['match_config_hash']) };
  }

  get lastTick(): number {
    return this.previous?.tick ?? -1;
  }

  get over(): boolean {
    return this.previous !== undefined && this.previous.outcome !== 'none';
  }

  ready(msg: Record<string, unknown>): RealtimeFault | undefined {
    const mismatch = (message: string): RealtimeFault => ({ code: 'ready_mismatch', message });
    if (msg['wire_version'] !== WIRE_VERSION) return mismatch('wire_version_mismatch');
    if (!this.join || msg['ruleset_hash'] !== this.join.ruleset_hash || msg['match_config_hash'] !== this.join.match_config_hash)
      return mismatch('host real-time bundle/config mismatch');
    if (this.config) {
      if (!sameJson(msg['config'], this.config)) return mismatch('host real-time config mismatch');
    } else {
      const c = msg['config'];
      if (!isObject(c) || !['input_delay_ticks', 'max_command_lead_ticks', 'max_commands_per_frame', 'tick_rate_hz'].every((k) => typeof c[k] === 'number'))
        return mismatch('host real-time config is malformed');
      this.config = c as unknown as RealtimeConfig;
    }
    return this.frame(msg['frame']);
  }

  /** A command this guest sends next, from the frame it just verified: seq + 1, for tick + input delay. */
  nextCommand(commands: unknown[]): RtCommand {
    const delay = Math.max(1, this.config?.input_delay_ticks ?? 1);
    const m = commandMessage(this.crypto, ++this.seq, this.lastTick + delay, commands);
    this.sent(m as unknown as Record<string, unknown>);
    return m;
  }

  get nextTarget(): number {
    return this.lastTick + Math.max(1, this.config?.input_delay_ticks ?? 1);
  }

  /** Records a command this guest sent (nextCommand does; an offline replay feeds the guest's messages). */
  sent(m: Record<string, unknown>): void {
    this.sentBySeq.set(key(m['seq']), m as unknown as RtCommand);
    if (typeof m['seq'] === 'number' && m['seq'] > this.seq) this.seq = m['seq'];
  }

  ack(msg: Record<string, unknown>): RealtimeFault | undefined {
    const bad = (message: string): RealtimeFault => ({ code: 'ack_invalid', message });
    const sent = this.sentBySeq.get(key(msg['seq']));
    if (!sent || key(sent.target_tick) !== key(msg['target_tick']))
      return bad(`an ack for seq ${String(msg['seq'])} and tick ${String(msg['target_tick'])}, a command this guest did not send`);
    if (msg['status'] !== 'accepted') return undefined;
    const t = Number(msg['target_tick']);
    if (t <= this.lastTick) return bad(`an accepted ack for tick ${t}, already played`);
    if (this.accepted.has(t)) return bad(`a second accepted ack for tick ${t}`);
    this.accepted.set(t, { seq: sent.seq, command_hash: String(msg['command_hash']) });
    return undefined;
  }

  /** One frame (rt_ready's or rt_frame's), a lossless value: the first fault, or undefined once recorded. */
  frame(frame: unknown): RealtimeFault | undefined {
    if (this.over) return { code: 'frame_after_end', message: `a frame after the match ended at tick ${this.lastTick}` };
    const f = verifyFrame(this.crypto, frame, this.previous);
    if (f) return { ...f, tick: this.lastTick + 1 };
    const fr = frame as RtFrame;
    const tick = this.lastTick + 1;
    const fault = this.appliedFault(fr.applied_commands, tick);
    if (fault) return { ...fault, tick };
    this.accepted.delete(tick);
    this.previous = { ...fr, tick };
    return undefined;
  }

  private appliedFault(ac: Record<string, unknown>, tick: number): Fault<GuestFault> | undefined {
    for (const side of ['host', 'guest'] as Role[]) {
      const a = ac[side];
      const malformed = (why: string): Fault<GuestFault> => ({ code: 'applied_malformed', message: `applied_commands.${side} ${why} at tick ${tick}` });
      if (!isObject(a) || Object.keys(a).sort().join() !== 'command_hash,commands,seq,side,target_tick')
        return malformed('is not {side, seq, target_tick, commands, command_hash}');
      if (a['side'] !== side || key(a['target_tick']) !== String(tick)) return malformed('names another side or tick');
      if (!Array.isArray(a['commands']) || !(a['seq'] === null || isInt(a['seq']))) return malformed('has no command list or seq');
      if (a['seq'] === null && a['commands'].length > 0) return malformed('applies commands without a seq');
      if (a['command_hash'] !== commandHash(this.crypto, a['seq'] as Int | null, a['target_tick'] as Int, a['commands']))
        return malformed('does not hash to its command_hash');
    }
    if (Object.keys(ac).sort().join() !== 'guest,host')
      return { code: 'applied_malformed', message: `applied_commands has sides other than host and guest at tick ${tick}` };
    const g = ac['guest'] as Record<string, unknown>;
    const acked = this.accepted.get(tick);
    if (!acked) {
      if (g['seq'] !== null)
        return {
          code: 'unacked_command_applied',
          message: `tick ${tick} applies guest seq ${String(g['seq'])}, which the host never acked as accepted for it`,
        };
      return undefined;
    }
    if (key(g['seq']) !== key(acked.seq))
      return { code: 'acked_command_dropped', message: `tick ${tick} does not apply guest seq ${String(acked.seq)}, acked as accepted for it` };
    if (g['command_hash'] !== acked.command_hash)
      return {
        code: 'acked_command_altered',
        message: `tick ${tick} applies guest seq ${String(acked.seq)} with hash ${String(g['command_hash'])}, not the acked ${acked.command_hash}`,
      };
    return undefined;
  }
}

function sameJson(a: unknown, b: unknown): boolean {
  try {
    return rtCanonical(a) === rtCanonical(b);
  } catch {
    return false;
  }
}
