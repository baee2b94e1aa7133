/**
 * One side of a two-party session without I/O: the signed chains, the inbound checks, the message
 * sequence, the flow mode and the closing receipts. The driver (session.ts) feeds it lines, timer
 * firings and decisions and carries out what it asks through `CoreSinks`; a test harness can do the
 * same on a virtual clock.
 *
 * Every inbound line passes, in order: a size limit, strict JSON (duplicate keys refused), the signed
 * frame envelope (session, sender, sequence, chain, acknowledgement, signature), the spec's message
 * validator, the mode's message sequence (flow.ts), and only then the mode and its hooks. A line
 * failing a step never reaches a hook: the session ends with a typed reason naming the step (free
 * mode drops invalid messages instead, as the reference does). Outgoing messages pass the validator
 * and the sequence too, so a hook cannot send what the spec or the flow does not allow.
 */
import type { Crypto, Ed25519Keypair } from '../crypto/backend.js';
import { fromHex, toHex, utf8 } from '../crypto/encoding.js';
import { CryptoError } from '../crypto/errors.js';
import { instantiateHooks } from '../hooks/instantiate.js';
import type { ControlMode, DecisionConfig, HookContext, HooksModule, Message, Role } from '../hooks/types.js';
import type { ModeInputs } from './modes/index.js';
import { messageValidator, type MessageValidator } from '../spec/messages.js';
import { flowMode, type FlowMode, type Spec, type WireDirection } from '../spec/types.js';
import { ChainReader, ChainWriter, unsignableInteger } from './frame.js';
import { PlainWitness, plainWireLine, type Wire } from './plain.js';
import { FlowReplay } from './flow.js';
import {
  declaredOutcome,
  ModeAbort,
  type DecideRequest,
  type EndReason,
  type Mode,
  type ModeContext,
  type ModeDefinition,
  type ModeEffect,
  type ModeInput,
  type Outcome,
  type ProofRequest,
} from './mode.js';
import { modeDefinition } from './modes/index.js';

export type { EndReason } from './mode.js';

/** The line transport's limit: a frame must have room for what a spec allows (a 1 MiB `json` field and the envelope). */
export const DEFAULT_MAX_FRAME_BYTES = 8 << 20;

const UNSIGNABLE = 'an integer beyond 2^53 - 1, which signed frames (RFC 8785: numbers are doubles) cannot carry exactly';

export interface CoreParams {
  crypto: Crypto;
  role: Role;
  spec: Spec;
  specText: string;
  protocolId: string;
  hooks: HooksModule;
  options: Record<string, unknown>;
  key: Ed25519Keypair;
  hostKey: string;
  guestKey: string;
  sid: string;
  postId: string;
  nonce: string;
  stateDir: string;
  maxFrameBytes?: number;
  /** The hooks' random source (ctx.random): seeded in tests so a game replays. */
  random: () => number;
  randomBytes(n: number): Uint8Array;
  now(): number;
  /** Who decides this side's moves (NOTES A13): autonomous, hybrid or human. */
  controlMode: ControlMode;
  decision: DecisionConfig | null;
  /** What the caller hands the mode (a chat script, a ruleset hash, a pinned deal); the mode defaults the rest. */
  inputs: ModeInputs;
  /** Wraps the flow mode (tests play a cheating side with it). */
  wrapMode?: (mode: Mode) => Mode;
  /** 'signed' (default): signed frames on the wire. 'plain': the reference's bare messages (plain.ts). */
  wire?: Wire;
}

/** Where the core's output goes. `transmit` throws when the peer is gone. */
export interface CoreSinks {
  transmit(line: string): void;
  frame(line: string): void;
  event(name: string, data: Record<string, unknown>): void;
  snapshot(phase: string, data: Record<string, unknown>): void;
  writeJson(file: string, value: unknown): void;
  onMessage?(from: Role, msg: Message): void;
}

export interface CoreEnd {
  completed: boolean;
  reason: EndReason;
  step: string;
  detail?: string;
  proof?: Record<string, unknown>;
  /** Who won, for a completed session that has a winner (or a draw). */
  outcome?: Outcome;
}

const other = (r: Role): Role => (r === 'host' ? 'guest' : 'host');
const dirFrom = (r: Role): WireDirection => (r === 'host' ? 'host_to_guest' : 'guest_to_host');
/** Steps at which a frame is refused as it arrives (logged as frame_rejected). */
const WIRE_STEPS = ['size', 'json', 'envelope', 'sequence', 'chain', 'signature', 'spec'];

export class SessionCore {
  readonly mode: FlowMode;
  /** Set once the session is over; `finish` then records it. */
  ending: CoreEnd | undefined;
  /** Timers the mode asked for, by id: absolute times on the driver's clock. */
  readonly timers = new Map<string, number>();
  /** A local decision the mode waits for. */
  decision: DecideRequest | undefined;
  private readonly peer: Role;
  private readonly def: ModeDefinition;
  private readonly validator: MessageValidator;
  private readonly writer: ChainWriter;
  private readonly reader: ChainReader;
  /** The plain profile: the peer's chain as this side witnessed it (the reader then stays empty). */
  private readonly witness: PlainWitness | undefined;
  private readonly flow: FlowReplay;
  private readonly lines: Record<Role, string[]> = { host: [], guest: [] };
  private readonly order: string[] = [];
  private readonly maxBytes: number;
  private readonly instance: Mode;
  private readonly hookFns: Record<string, ((...a: unknown[]) => unknown) | undefined>;
  private phase: 'mode' | 'receipts' = 'mode';
  private receiptSent: Message | undefined;

  constructor(
    private readonly p: CoreParams,
    private readonly out: CoreSinks,
  ) {
    this.peer = other(p.role);
    this.mode = flowMode(p.spec);
    this.def = modeDefinition(this.mode) as ModeDefinition;
    this.validator = messageValidator(p.protocolId, p.spec, p.specText);
    this.writer = new ChainWriter(p.crypto, p.sid, p.role, p.key);
    // The peer's acks name this side's frames.
    this.reader = new ChainReader(p.crypto, p.sid, this.peer, fromHex(p.role === 'host' ? p.guestKey : p.hostKey), this.writer);
    this.witness = p.wire === 'plain' ? new PlainWitness(p.crypto, p.sid, this.peer, p.key) : undefined;
    this.flow = new FlowReplay(p.crypto, p.spec);
    this.maxBytes = p.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
    const hctx: HookContext = { role: p.role, options: p.options, args: [], stateDir: p.stateDir, decision: p.decision, random: p.random };
    this.hookFns = instantiateHooks(p.hooks, hctx) as unknown as Record<string, ((...a: unknown[]) => unknown) | undefined>;
    const ctx: ModeContext = {
      role: p.role,
      spec: p.spec,
      specText: p.specText,
      protocolId: p.protocolId,
      sid: p.sid,
      hostKey: p.hostKey,
      guestKey: p.guestKey,
      key: p.key,
      crypto: p.crypto,
      options: p.options,
      controlMode: p.controlMode,
      decision: p.decision,
      hooks: this.hookFns as never,
      hook: (name, ...args) => this.hook(name, ...args),
      now: p.now,
      randomBytes: p.randomBytes,
      wire: { lines: this.lines, order: this.order, profile: p.wire === 'plain' ? 'plain' : 'signed' },
      inputs: p.inputs,
    };
    const instance = this.def.create(ctx);
    this.instance = p.wrapMode ? p.wrapMode(instance) : instance;
  }

  /** The head of the peer's chain as this side holds it (its frames, or its witnessed messages). */
  private get peerHead(): string {
    return this.witness ? this.witness.head : this.reader.head;
  }

  /** Every frame line of both sides in the order this side sent or accepted it. */
  get frames(): readonly string[] {
    return this.order;
  }

  private async hook(name: string, ...args: unknown[]): Promise<unknown> {
    const f = this.hookFns[name];
    if (!f) return undefined;
    try {
      return await f(...args);
    } catch (e) {
      throw new ModeAbort('hook_error', 'hooks', `${name} threw: ${(e as Error).message}`);
    }
  }

  async start(): Promise<void> {
    await this.guard(async () => {
      const supported = ((await this.hook('supported_control_modes')) as ControlMode[] | undefined) ?? ['autonomous', 'hybrid'];
      if (!supported.includes(this.p.controlMode))
        throw new ModeAbort('control_mode_unsupported', 'hooks', `these hooks support ${supported.join(', ')}, not ${this.p.controlMode}`);
      await this.hook('proto_init', this.p.options, this.p.role, [], this.p.stateDir, this.p.decision);
      await this.feed({ kind: 'start' });
    });
  }

  /** A line from the peer. */
  async receive(line: string): Promise<void> {
    await this.guard(() => this.inbound(line));
  }

  async timer(id: string): Promise<void> {
    this.timers.delete(id);
    await this.guard(() => this.feed({ kind: 'timer', id }));
  }

  async decided(value: unknown): Promise<void> {
    this.decision = undefined;
    await this.guard(() => this.feed({ kind: 'decision', value }));
  }

  /** The transport reported the peer gone, or silent past the driver's timeout. */
  transportEnded(timedOut: boolean, timeoutMs: number): void {
    this.stop(
      new ModeAbort(
        timedOut ? 'peer_timeout' : 'peer_disconnected',
        'transport',
        timedOut ? `no frame from the ${this.peer} within ${timeoutMs} ms` : `the ${this.peer} disconnected`,
      ),
    );
  }

  /** Ends the session for a reason the driver found (a decision deadline passed). */
  abort(reason: EndReason, step: string, detail: string): void {
    this.stop(new ModeAbort(reason, step, detail));
  }

  /**
   * The peer's `_abort` among the lines it sent before leaving while this side was busy: the better
   * reason than a disconnect. The frames before it are taken as any received frame is, up to the
   * spec (checked and recorded, so the transcript keeps its chain); a line that fails ends the search.
   */
  private lastWords(lines: readonly string[]): CoreEnd | undefined {
    for (const line of lines) {
      let msg: Message;
      try {
        ({ msg } = this.takeFrame(line));
      } catch {
        return undefined;
      }
      if (msg.action === '_abort')
        return { completed: false, reason: 'peer_aborted', step: 'peer', detail: `the ${this.peer} aborted: ${String(msg['reason'])}` };
    }
    return undefined;
  }

  /** `aigenora session abort`: tells the peer and ends; the line to send is returned (already recorded). */
  localAbort(): string | undefined {
    if (this.ending) return undefined;
    this.stop(new ModeAbort('local_abort', 'local', 'aborted by `aigenora session abort`'));
    return this.abortLine('local_abort');
  }

  /**
   * Records the end (events, snapshot, proof, receipt state) and tells the peer why when that still
   * makes sense. `pending` are the lines the driver found waiting after a disconnect: the peer's
   * `_abort` among them is the better reason.
   */
  finish(pending: readonly string[] = []): CoreEnd & { proofFile?: string } {
    let e = this.ending ?? { completed: false, reason: 'local_abort' as EndReason, step: 'local', detail: 'the session was stopped' };
    if (e.reason === 'peer_disconnected' && !this.witness) e = this.lastWords(pending) ?? e;
    const { role, sid } = this.p;
    if (e.completed) {
      this.out.event('session_ended', { completed: true, reason: e.reason, ...(e.outcome && { outcome: e.outcome }) });
      this.out.snapshot('ended', { role, sid, completed: true, reason: e.reason, ...(e.outcome && { outcome: e.outcome }) });
      return e;
    }
    let proofFile: string | undefined;
    if (e.proof) {
      this.out.writeJson('proof.json', e.proof);
      proofFile = 'proof.json';
    }
    this.out.event(WIRE_STEPS.includes(e.step) ? 'frame_rejected' : 'session_aborting', { step: e.step, reason: e.reason, detail: e.detail });
    this.out.event('session_ended', { completed: false, reason: e.reason, step: e.step });
    this.out.snapshot('aborted', { role, sid, completed: false, reason: e.reason, step: e.step, detail: e.detail });
    // Tell the peer why, when the transport still works and the fault is not the peer's transport.
    if (!['peer_disconnected', 'peer_aborted', 'local_abort'].includes(e.reason)) {
      const line = this.abortLine(e.reason);
      if (line !== undefined) {
        try {
          this.out.transmit(line);
        } catch {
          // the peer is gone already
        }
      }
    }
    return { ...e, ...(proofFile && { proofFile }) };
  }

  private abortLine(reason: string): string | undefined {
    try {
      const { line } = this.writer.next({ action: '_abort', reason }, this.peerHead);
      this.out.frame(line);
      // The plain profile has no abort frame: the reference peer sees the connection end.
      return this.witness ? undefined : line;
    } catch {
      return undefined;
    }
  }

  private stop(e: ModeAbort): void {
    if (this.ending) return;
    this.timers.clear();
    this.decision = undefined;
    this.ending = { completed: false, reason: e.reason, step: e.step, detail: e.message, ...(e.proof && { proof: this.proofOf(e.proof) }) };
  }

  private proofOf(r: ProofRequest): Record<string, unknown> {
    const p = this.p;
    return {
      v: 1,
      kind: r.kind,
      sid: p.sid,
      post_id: p.postId,
      protocol_id: p.protocolId,
      nonce: p.nonce,
      host_key: p.hostKey,
      guest_key: p.guestKey,
      offender: r.offender,
      frames: r.frames === 'all' ? [...this.order] : r.frames,
      detail: r.detail,
    };
  }

  private async guard(f: () => Promise<void>): Promise<void> {
    if (this.ending) return;
    try {
      await f();
    } catch (e) {
      if (!(e instanceof ModeAbort)) throw e;
      this.stop(e);
    }
  }

  private async feed(input: ModeInput): Promise<void> {
    this.apply(await this.instance.step(input));
  }

  private apply(effects: ModeEffect[]): void {
    for (const e of effects) {
      if (this.ending) return;
      switch (e.kind) {
        case 'send':
          this.send(e.msg);
          break;
        case 'timer':
          this.timers.set(e.id, e.at);
          break;
        case 'decide':
          this.decision = e.request;
          break;
        case 'event':
          this.out.event(e.name, e.data);
          break;
        case 'write':
          this.out.writeJson(e.file, e.value);
          break;
        case 'end':
          if (e.reason === 'completed' || e.reason === 'request_response_complete') this.modeCompleted(e.reason, e.outcome);
          else throw new ModeAbort(e.reason, e.step ?? 'mode', e.detail ?? e.reason, e.proof);
      }
    }
  }

  private send(msg: Message): void {
    if (!msg.action.startsWith('_')) {
      const check = this.validator.check(msg, dirFrom(this.p.role));
      if (!check.ok)
        throw new ModeAbort('hook_invalid_message', 'hooks', `this side's hooks produced a message the spec does not allow: ${JSON.stringify(check.errors)}`);
      const big = unsignableInteger(msg);
      if (big) throw new ModeAbort('hook_invalid_message', 'hooks', `this side's hooks produced ${big.pointer} = ${big.digits}, ${UNSIGNABLE}`);
      const step = this.flow.next(this.p.role, msg);
      if (!step.ok)
        throw new ModeAbort('hook_invalid_message', 'flow', `this side's hooks produced a message out of the ${this.mode} sequence: ${step.reason}`);
    }
    const { line } = this.writer.next(msg, this.peerHead);
    this.out.frame(line);
    this.lines[this.p.role].push(line);
    this.order.push(line);
    this.out.onMessage?.(this.p.role, msg);
    if (!msg.action.startsWith('_')) this.declared = declaredOutcome(msg) ?? this.declared;
    // The transcript line above is written ahead of the wire (a frame the peer holds is never one this
    // side could forget); the event line is a log, written after the frame is on its way so that its
    // write does not delay the peer. It is written either way, as before.
    const wire = this.witness ? plainWireLine(msg) : line;
    try {
      if (wire !== undefined) this.out.transmit(wire);
    } catch {
      throw new ModeAbort('peer_disconnected', 'transport', 'the peer is gone');
    } finally {
      if (!msg.action.startsWith('_')) this.out.event('protocol_message', { direction: 'sent', msg });
    }
  }

  /**
   * One line from the peer, checked as far as the wire goes (size, I-JSON, envelope and chain) and
   * recorded; a ModeAbort says why not. The spec and the flow are the caller's.
   */
  private takeFrame(line: string): { msg: Message; frameLine: string } {
    const size = utf8(line).length;
    if (size > this.maxBytes) throw new ModeAbort('frame_too_large', 'size', `a frame of ${size} bytes exceeds the ${this.maxBytes}-byte limit`);
    try {
      this.p.crypto.jcs(line);
    } catch (e) {
      if (e instanceof CryptoError) throw new ModeAbort('malformed_json', 'json', e.message);
      throw e;
    }
    let msg: Message;
    // The frame as recorded: the wire line itself, or (plain profile) this side's witness frame of it.
    let frameLine = line;
    if (this.witness) {
      const w = this.witness.accept(JSON.parse(line), this.writer.head);
      if (!w.ok) throw new ModeAbort('bad_envelope', 'envelope', w.reason);
      msg = w.msg;
      frameLine = w.line;
    } else {
      const a = this.reader.accept(JSON.parse(line));
      if (!a.ok) throw new ModeAbort(`bad_${a.step}` as EndReason, a.step, a.reason);
      msg = a.frame.msg;
    }
    this.out.frame(frameLine);
    this.lines[this.peer].push(frameLine);
    this.order.push(frameLine);
    return { msg, frameLine };
  }

  private async inbound(line: string): Promise<void> {
    const peer = this.peer;
    // The chain heads before this frame: in the receipts phase the peer's receipt must sign them.
    const before = this.phase === 'receipts' ? this.heads() : undefined;
    const { msg, frameLine } = this.takeFrame(line);
    if (msg.action === '_abort') throw new ModeAbort('peer_aborted', 'peer', `the ${peer} aborted: ${String(msg['reason'])}`);
    if (before) return this.closing(msg, before);
    if (msg.action.startsWith('_')) throw new ModeAbort('unexpected_message', 'engine', `unexpected ${msg.action} during the protocol`);
    // On the numbers as the peer wrote them (1.0 is not an integer), as the reference reads them.
    const check = this.witness ? this.validator.checkText(line, dirFrom(peer)) : this.validator.checkText(line, dirFrom(peer), undefined, 'msg');
    // Valid by the spec but not something a signature binds: no proof (it is no cheat), no hook sees it.
    const big = check.ok ? unsignableInteger(check.value) : undefined;
    if (!check.ok && this.def.invalidInbound === 'mode') {
      this.out.event('protocol_message', { direction: 'received', msg, invalid: check.errors.map((e) => e.code) });
      await this.feed({ kind: 'message', from: peer, msg, line: frameLine, invalid: check.errors });
      return;
    }
    if (!check.ok || big) {
      if (this.def.invalidInbound === 'drop') {
        this.out.event('message_dropped', { reason: check.ok ? 'INTEGER_UNSIGNABLE' : check.errors.map((e) => e.code).join(','), line: line.slice(0, 200) });
        return;
      }
      if (!check.ok) {
        throw new ModeAbort(
          'invalid_message',
          'spec',
          `the ${peer}'s ${msg.action} fails the spec: ${check.errors.map((e) => `${e.code} at ${e.pointer}`).join('; ')}`,
          { kind: 'invalid_message', offender: peer, frames: [frameLine], detail: { errors: check.errors } },
        );
      }
      throw new ModeAbort('invalid_message', 'spec', `the ${peer}'s ${msg.action} carries ${big!.pointer} = ${big!.digits}, ${UNSIGNABLE}`);
    }
    const step = this.flow.next(peer, msg);
    if (!step.ok) throw new ModeAbort('unexpected_message', 'flow', step.reason);
    this.out.onMessage?.(peer, msg);
    this.declared = declaredOutcome(msg) ?? this.declared;
    this.out.event('protocol_message', { direction: 'received', msg });
    await this.feed({ kind: 'message', from: peer, msg, line: frameLine });
  }

  /**
   * Both sides sign the chain heads they agree on, the mode's first signer first. The first signer
   * states its heads as they stand at completion; the second compares them with its own heads as they
   * stood before that receipt arrived, and answers with the same.
   */
  private modeCompleted(reason: 'completed' | 'request_response_complete', outcome: Outcome | undefined): void {
    if (!this.flow.complete)
      throw new ModeAbort('hook_error', 'flow', `the ${this.p.role} hooks ended the session before the ${this.mode} sequence was complete`);
    this.phase = 'receipts';
    this.completedAs = reason;
    this.outcome = outcome ?? this.declared;
    this.timers.clear();
    if (this.witness) return this.plainReceipt();
    if (this.def.receiptFirst === this.p.role) {
      this.receiptSent = this.heads();
      this.send(this.receiptSent);
    }
  }

  private heads(): Message {
    const mine = { count: this.writer.count, head: this.writer.head };
    const theirs = this.witness ? { count: this.witness.count, head: this.witness.head } : { count: this.reader.count, head: this.reader.head };
    const [h, g] = this.p.role === 'host' ? [mine, theirs] : [theirs, mine];
    return { action: '_receipt', host_count: h.count, host_head: h.head, guest_count: g.count, guest_head: g.head };
  }

  /** A peer frame once this side's mode is done: its receipt, or (drainAfterEnd) a frame sent before it. */
  private closing(msg: Message, before: Message): void {
    if (!this.receiptSent && this.def.drainAfterEnd && !msg.action.startsWith('_')) {
      this.out.event('message_after_end', { action: msg.action });
      return;
    }
    const mine = this.receiptSent ?? before;
    // Compared canonically, as the verifier does: key order is not part of what was signed.
    const canonical = (m: unknown) => toHex(this.p.crypto.jcs(JSON.stringify(m)));
    if (msg.action !== '_receipt' || canonical(msg) !== canonical(mine))
      throw new ModeAbort('receipt_mismatch', 'receipt', `the ${this.peer}'s receipt does not match this side's chain heads`);
    if (!this.receiptSent) {
      this.receiptSent = mine;
      this.send(mine);
    }
    const p = this.p;
    this.out.writeJson('receipt.json', {
      v: 1,
      sid: p.sid,
      protocol_id: p.protocolId,
      host_key: p.hostKey,
      guest_key: p.guestKey,
      heads: mine,
      frames: { [p.role]: this.lines[p.role].at(-1), [this.peer]: this.lines[this.peer].at(-1) },
    });
    this.ending = { completed: true, reason: this.completedAs, step: 'receipt', ...(this.outcome && { outcome: this.outcome }) };
  }

  private completedAs: 'completed' | 'request_response_complete' = 'completed';
  /** The outcome the last protocol message declared, either way (the fallback for modes that name none). */
  private declared: Outcome | undefined;
  private outcome: Outcome | undefined;

  /**
   * The plain profile's end: the reference exchanges no receipts, so this side alone signs its
   * `_receipt` over both heads (its own chain and its witness of the peer's) and records it; nothing
   * goes on the wire.
   */
  private plainReceipt(): void {
    const heads = this.heads();
    this.send(heads);
    const p = this.p;
    this.out.writeJson('receipt.json', {
      v: 1,
      wire: 'plain',
      sid: p.sid,
      protocol_id: p.protocolId,
      host_key: p.hostKey,
      guest_key: p.guestKey,
      heads,
      frames: { [p.role]: this.lines[p.role].at(-1) },
    });
    this.ending = { completed: true, reason: this.completedAs, step: 'receipt', ...(this.outcome && { outcome: this.outcome }) };
  }
}
