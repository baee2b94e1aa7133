/**
 * The session engine: runs one side of a two-party session from spec.flow, for session_loop,
 * request_response, free, simultaneous_round (NOTES A11 wire sequences, engine-managed commit-reveal)
 * and mental_poker (the I/O-free mode of ts/mp/mode.ts, whose messages travel as ordinary protocol
 * messages). The hooks decide moves and judge; the engine owns ordering, commit-reveal,
 * validation, timing and termination.
 *
 * Every inbound line passes, in order: a size limit, strict JSON (duplicate keys refused), the signed
 * frame envelope (session, sender, sequence, chain, acknowledgement, signature), the spec's message
 * validator, the mode's message sequence (flow.ts), and only then a hook. A line failing a step never
 * reaches a hook: the session ends with a typed reason naming the step (free mode drops invalid chat
 * messages instead, as the reference does). Outgoing messages pass the validator and the sequence too,
 * so a hook cannot send what the spec or the flow does not allow.
 */
import type { Crypto, Ed25519Keypair } from '../crypto/backend.js';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fromHex, toHex, utf8 } from '../crypto/encoding.js';
import { CryptoError } from '../crypto/errors.js';
import { instantiateHooks } from '../hooks/load.js';
import { toHookResult, type ControlMode, type HookContext, type HookResult, type HooksModule, type Message, type Role, type RoundState, type RoundValue } from '../hooks/types.js';
import { messageValidator } from '../spec/messages.js';
import { flowMode, type Spec, type WireDirection } from '../spec/types.js';
import { systemClock, type Clock } from './clock.js';
import { ChainReader, ChainWriter, unsignableInteger, type Frame } from './frame.js';
import { commitText, FlowReplay } from './flow.js';
import { SessionRecord, type Durability } from './record.js';
import { DecisionBus, decisionConfig, type DecisionRecord, type Window } from './decision.js';
import { createMpMode, type MpCrypto, type MpMode } from '../mp/mode.js';
import { driveMpMode } from '../mp/mode-driver.js';
import { randomSecrets, type MpSecrets } from '../mp/secrets.js';
import type { MentalPokerHooks } from '../hooks/types.js';
import type { Transport } from './transport.js';

export { commitText };

/** The line transport's limit: a frame must have room for what a spec allows (a 1 MiB `json` field and the envelope). */
export const DEFAULT_MAX_FRAME_BYTES = 8 << 20;
/** round_result fields a guest's shadow judge compares (NOTES A11). */
export const SHADOW_FIELDS = [
  'host_hp', 'guest_hp', 'host_mana', 'guest_mana', 'host_damage_dealt', 'guest_damage_dealt',
  'host_cd_a', 'host_cd_b', 'host_cd_ult', 'guest_cd_a', 'guest_cd_b', 'guest_cd_ult',
  'round_winner', 'game_over', 'game_winner',
];

export type EndReason =
  | 'completed'
  | 'request_response_complete'
  | 'abort'
  | 'peer_aborted'
  | 'peer_disconnected'
  | 'peer_timeout'
  | 'frame_too_large'
  | 'malformed_json'
  | 'bad_envelope'
  | 'bad_sequence'
  | 'bad_chain'
  | 'bad_ack'
  | 'bad_signature'
  | 'invalid_message'
  | 'unexpected_message'
  | 'commit_mismatch'
  | 'balance_mismatch'
  | 'hook_error'
  | 'hook_invalid_message'
  | 'receipt_mismatch'
  | 'decision_timeout'
  | 'control_mode_unsupported'
  | 'local_abort'
  /** mental_poker: a peer play failed the card check, or the game's rules. */
  | 'play_rejected'
  | 'rule_rejected'
  /** mental_poker: the post-game audit caught a cheat, or the peer's terminal receipt does not verify. */
  | 'audit_failed'
  /** mental_poker: the peer withheld its opening, witnesses or receipt. */
  | 'audit_refused'
  /** mental_poker: peer material the game cannot go on with (a key that does not decode, an OT that does not open). */
  | 'bad_peer_material';

export interface SessionConfig {
  crypto: Crypto;
  role: Role;
  spec: Spec;
  specText: string;
  protocolId: string;
  hooks: HooksModule;
  options: Record<string, unknown>;
  transport: Transport;
  key: Ed25519Keypair;
  hostKey: string;
  guestKey: string;
  sid: string;
  postId: string;
  nonce: string;
  stateDir: string;
  /** Longest wait for the peer's next frame (default: decision.timeout_seconds, else 30 s). */
  timeoutMs?: number;
  maxFrameBytes?: number;
  random?: () => number;
  /** free mode: the lines this side says, in order, before it ends. */
  chat?: readonly string[];
  /** Who decides this side's moves (NOTES A13): autonomous, hybrid (the default) or human. */
  controlMode?: ControlMode;
  /** Overrides, mostly for tests: the hybrid/human hold (timing.min_think_seconds) and the human deadline (decision.timeout_seconds). */
  minThinkMs?: number;
  decisionTimeoutMs?: number;
  /** "process" (default): each frame is written before the next step; "fsync": also forced to disk. */
  durability?: Durability;
  /** Called for every frame sent or accepted, for display. */
  onMessage?: (from: Role, msg: Message) => void;
  /** The clock decision windows run on (default: the system clock). */
  clock?: Clock;
  /** mental_poker: where this side's secrets come from (default: the CSPRNG), and a wrapper around the mode (tests play cheats with it). */
  mpSecrets?: MpSecrets;
  mpWrap?: (mode: MpMode) => MpMode;
}

export interface SessionResult {
  completed: boolean;
  reason: EndReason;
  detail?: string;
  sid: string;
  dir: string;
  /** Path of proof.json when the peer was caught cheating. */
  proof?: string;
}

const UNSIGNABLE = 'an integer beyond 2^53 - 1, which signed frames (RFC 8785: numbers are doubles) cannot carry exactly';

class Abort extends Error {
  constructor(
    readonly reason: EndReason,
    readonly step: string,
    detail: string,
    readonly proof?: Record<string, unknown>,
  ) {
    super(detail);
  }
}

const other = (r: Role): Role => (r === 'host' ? 'guest' : 'host');
const dirFrom = (r: Role): WireDirection => (r === 'host' ? 'host_to_guest' : 'guest_to_host');

export async function runSession(cfg: SessionConfig): Promise<SessionResult> {
  const { crypto, role, spec, transport } = cfg;
  const peer = other(role);
  const mode = flowMode(spec);
  const validator = messageValidator(cfg.protocolId, spec, cfg.specText);
  const record = new SessionRecord(cfg.stateDir, { _transcript: 1, sid: cfg.sid, post_id: cfg.postId, protocol_id: cfg.protocolId, host_key: cfg.hostKey, guest_key: cfg.guestKey, nonce: cfg.nonce, role }, cfg.specText, cfg.durability);
  const writer = new ChainWriter(crypto, cfg.sid, role, cfg.key);
  const peerKey = fromHex(role === 'host' ? cfg.guestKey : cfg.hostKey);
  // The peer's acks name this side's frames.
  const reader = new ChainReader(crypto, cfg.sid, peer, peerKey, writer);
  const flow = new FlowReplay(crypto, spec);
  const clock = cfg.clock ?? systemClock;
  /** Set once the session is ending: nothing more is sent (free mode's sender may still be running). */
  let stopped = false;
  const timeoutMs = cfg.timeoutMs ?? (spec.decision?.timeout_seconds ?? 30) * 1000;
  const maxBytes = cfg.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
  const random = cfg.random ?? Math.random;
  /** Wire lines by sender and sequence, for proofs. */
  const lines: Record<Role, string[]> = { host: [], guest: [] };
  let peerEnded = false;
  /** The ready frame's wire line (the agreed settings), for proofs. */
  let readyLine = '';
  /** Every frame line of both sides in the order this side sent or accepted it, for proofs. */
  const order: string[] = [];

  const controlMode: ControlMode = cfg.controlMode ?? 'hybrid';
  const decision = decisionConfig(spec, controlMode);
  const ctx: HookContext = { role, options: cfg.options, args: [], stateDir: cfg.stateDir, decision, random };
  const hooks = instantiateHooks(cfg.hooks, ctx) as unknown as Record<string, ((...a: unknown[]) => unknown) | undefined>;
  const bus = controlMode === 'autonomous' ? undefined : new DecisionBus(crypto, cfg.stateDir, `${role}:${cfg.sid.slice(0, 8)}`);
  const timingOn = spec.timing?.mode !== 'none';
  const optSeconds = (k: string) => (typeof cfg.options[k] === 'number' ? (cfg.options[k] as number) : undefined);
  const minThinkMs = cfg.minThinkMs ?? (timingOn ? (optSeconds('min_think_seconds') ?? spec.timing?.min_think_seconds ?? 0) * 1000 : 0);
  const decisionTimeoutMs = cfg.decisionTimeoutMs ?? (decision?.timeout_seconds ?? 120) * 1000;
  let windows = 0;

  const proofOf = (kind: string, offender: Role, frames: string[], detail: Record<string, unknown>) => ({
    v: 1, kind, sid: cfg.sid, post_id: cfg.postId, protocol_id: cfg.protocolId, nonce: cfg.nonce, host_key: cfg.hostKey, guest_key: cfg.guestKey, offender, frames, detail,
  });

  async function hook(name: string, ...args: unknown[]): Promise<unknown> {
    const f = hooks[name];
    if (!f) return undefined;
    try {
      return await f(...args);
    } catch (e) {
      throw new Abort('hook_error', 'hooks', `${name} threw: ${(e as Error).message}`);
    }
  }

  function send(msg: Message): void {
    if (localAbort) throw new Abort('local_abort', 'local', 'aborted by `aigenora session abort`');
    if (stopped) throw new Abort('local_abort', 'local', 'the session is ending');
    if (!msg.action.startsWith('_')) {
      const check = validator.check(msg, dirFrom(role));
      if (!check.ok) throw new Abort('hook_invalid_message', 'hooks', `this side's hooks produced a message the spec does not allow: ${JSON.stringify(check.errors)}`);
      const big = unsignableInteger(msg);
      if (big) throw new Abort('hook_invalid_message', 'hooks', `this side's hooks produced ${big.pointer} = ${big.digits}, ${UNSIGNABLE}`);
      const step = flow.next(role, msg);
      if (!step.ok) throw new Abort('hook_invalid_message', 'flow', `this side's hooks produced a message out of the ${mode} sequence: ${step.reason}`);
    }
    const { line } = writer.next(msg, reader.head);
    record.frame(line);
    lines[role].push(line);
    order.push(line);
    cfg.onMessage?.(role, msg);
    if (!msg.action.startsWith('_')) record.event('protocol_message', { direction: 'sent', msg });
    try {
      transport.send(line);
    } catch {
      throw new Abort('peer_disconnected', 'transport', 'the peer is gone');
    }
  }

  /** The next frame from the peer, through every check; a receipt only when `receipt` says one is due. */
  async function recvFrame(receipt = false): Promise<{ frame: Frame; line: string }> {
    const r = await transport.recv(timeoutMs);
    if (localAbort) throw new Abort('local_abort', 'local', 'aborted by `aigenora session abort`');
    if (r.line === null) throw new Abort(r.timedOut ? 'peer_timeout' : 'peer_disconnected', 'transport', r.timedOut ? `no frame from the ${peer} within ${timeoutMs} ms` : `the ${peer} disconnected`);
    const line = r.line;
    if (utf8(line).length > maxBytes) throw new Abort('frame_too_large', 'size', `a frame of ${utf8(line).length} bytes exceeds the ${maxBytes}-byte limit`);
    try {
      crypto.jcs(line);
    } catch (e) {
      if (e instanceof CryptoError) throw new Abort('malformed_json', 'json', e.message);
      throw e;
    }
    const a = reader.accept(JSON.parse(line));
    if (!a.ok) throw new Abort(`bad_${a.step}` as EndReason, a.step, a.reason);
    record.frame(line);
    lines[peer].push(line);
    order.push(line);
    const action = a.frame.msg.action;
    if (action === '_abort') throw new Abort('peer_aborted', 'peer', `the ${peer} aborted: ${String(a.frame.msg['reason'])}`);
    if (action.startsWith('_') && !(receipt && action === '_receipt')) throw new Abort('unexpected_message', 'engine', `unexpected ${action} during the protocol`);
    return { frame: a.frame, line };
  }

  /** Feeds a peer's message to the mode's sequence; one out of sequence ends the session. */
  function inFlow(msg: Message): void {
    const step = flow.next(peer, msg);
    if (!step.ok) throw new Abort('unexpected_message', 'flow', step.reason);
  }

  /** The next protocol message from the peer, validated against the spec. */
  async function recv(): Promise<Message> {
    const { frame, line } = await recvFrame();
    const msg = frame.msg;
    // On the numbers as the peer wrote them (1.0 is not an integer), as the reference reads them.
    const check = validator.checkText(line, dirFrom(peer), undefined, 'msg');
    if (!check.ok) {
      throw new Abort('invalid_message', 'spec', `the ${peer}'s ${msg.action} fails the spec: ${check.errors.map((e) => `${e.code} at ${e.pointer}`).join('; ')}`,
        proofOf('invalid_message', peer, [line], { errors: check.errors }));
    }
    // Valid by the spec, but not something a signature binds: no proof (it is no cheat), no hook sees it.
    const big = unsignableInteger(check.value);
    if (big) throw new Abort('invalid_message', 'spec', `the ${peer}'s ${msg.action} carries ${big.pointer} = ${big.digits}, ${UNSIGNABLE}`);
    inFlow(msg);
    cfg.onMessage?.(peer, msg);
    record.event('protocol_message', { direction: 'received', msg });
    return msg;
  }

  /**
   * A decision window for one of this side's moves (hybrid and human control). The hooks' move is the
   * default; a local decision replaces it. Hybrid waits min_think and then plays the default; human
   * waits until the decision deadline, then applies timeout_action.
   */
  async function decide<T>(expects: 'value' | 'message', key: string, value: number, def: T, check: (r: DecisionRecord) => string | undefined, take: (r: DecisionRecord) => T): Promise<T> {
    if (!bus || !decision) return def;
    const now = clock.now();
    const human = controlMode === 'human';
    const w: Window = {
      window_id: `${key}:${value}:${++windows}`,
      match_key: key,
      match_value: value,
      expects,
      opened_at: new Date(now).toISOString(),
      release_at: new Date(now + minThinkMs).toISOString(),
      deadline_at: human ? new Date(now + decisionTimeoutMs).toISOString() : null,
    };
    bus.publish(w);
    record.event('local_decision_window_started', { ...w });
    record.snapshot('action_submitted', {
      role,
      sid: cfg.sid,
      // NOTES A10: the window as ISO times and as Unix epoch seconds.
      timing: {
        match_key: key,
        match_value: value,
        release_at: w.release_at,
        deadline_at: w.deadline_at,
        release_at_epoch: (now + minThinkMs) / 1000,
        deadline_at_epoch: human ? (now + decisionTimeoutMs) / 1000 : null,
        phase: 'deciding',
      },
    });
    const got = await bus.wait(w, human ? now + decisionTimeoutMs : now + minThinkMs, check, (id, why) => record.event('local_decision_rejected', { decision_id: id, reason: why }), clock);
    bus.publish(null);
    record.snapshot('in_progress', { role, sid: cfg.sid });
    if (got) {
      // A decision is held until the window's release time (timing.min_think_seconds).
      const hold = now + minThinkMs - clock.now();
      if (hold > 0) await clock.sleep(hold);
      record.event('local_decision_consumed', { match_key: key, match_value: value, decision_id: got.id });
      return take(got.rec);
    }
    if (human && decision.timeout_action === 'abort') throw new Abort('decision_timeout', 'decision', `no decision for ${key} ${value} within ${decisionTimeoutMs} ms`);
    record.event('local_decision_fallback', { match_key: key, match_value: value });
    return def;
  }

  const checkMessage = (r: DecisionRecord): string | undefined => {
    if (!r.message || typeof r.message['action'] !== 'string') return 'a decision for this move is {"message": {...}}';
    const v = validator.check(r.message, dirFrom(role));
    return v.ok ? undefined : v.errors.map((e) => `${e.code} at ${e.pointer}`).join('; ');
  };

  /** The hooks' step for a turn, possibly replaced by a local decision (session_loop, request_response). */
  let turns = 0;
  async function turn(step: HookResult): Promise<HookResult> {
    if (!step.response || step.abort) return step;
    const n = turns++;
    const decided = await decide('message', 'turn', n, step, checkMessage, (r) => ({ ...step, response: r.message as Message }));
    // Hooks that keep state about their own moves learn that a person chose differently.
    if (decided !== step) await hook('proto_on_decision', decided.response, step.response);
    return decided;
  }

  async function handshake(): Promise<Message> {
    if (role === 'guest') {
      const join = ((await hook('proto_guest_join_message')) as Message | null | undefined) ?? { action: 'join' };
      send(join);
      const ready = await recv();
      if (ready.action !== 'ready') throw new Abort('unexpected_message', 'engine', `expected ready, got ${ready.action}`);
      readyLine = lines.host.at(-1)!;
      const r = toHookResult((await hook('proto_guest_handle_ready', ready)) as never);
      if (r.abort) throw new Abort('abort', 'hooks', 'the guest hooks aborted after ready');
      record.event('peer_joined', {});
      return ready;
    }
    const join = await recv();
    if (join.action !== 'join') throw new Abort('unexpected_message', 'engine', `expected join, got ${join.action}`);
    record.event('peer_joined', {});
    const r = toHookResult((await hook('proto_host_handle_join', join)) as never);
    if (r.abort) {
      if (r.response) send(r.response);
      throw new Abort('abort', 'hooks', 'the host hooks refused the join');
    }
    const ready = r.response ?? { action: 'ready' };
    send(ready);
    readyLine = lines.host.at(-1)!;
    return ready;
  }

  function end(r: HookResult): EndReason | undefined {
    if (r.abort) throw new Abort('abort', 'hooks', `the ${role} hooks aborted`);
    return r.completed ? 'completed' : undefined;
  }

  async function sessionLoop(): Promise<EndReason> {
    const rr = mode === 'request_response';
    if (role === 'guest') {
      let step = await turn(toHookResult((await hook('proto_guest_first_action')) as never));
      for (;;) {
        if (step.response) send(step.response);
        if (step.abort) throw new Abort('abort', 'hooks', 'the guest hooks aborted');
        if (step.completed || !step.response) return 'completed';
        const reply = await recv();
        step = await turn(toHookResult((await hook('proto_guest_handle', reply)) as never));
        if (rr) {
          if (step.abort) throw new Abort('abort', 'hooks', 'the guest hooks aborted');
          return 'request_response_complete';
        }
        if (!step.response) return end(step) ?? 'completed';
      }
    }
    for (;;) {
      const msg = await recv();
      const r = await turn(toHookResult((await hook('proto_host_handle', msg)) as never));
      if (r.response) send(r.response);
      if (rr) {
        end(r);
        return 'request_response_complete';
      }
      const e = end(r);
      if (e) return e;
      if (!r.response) return 'completed';
    }
  }

  async function rounds(ready: Message): Promise<EndReason> {
    const field = spec.flow!.round!.value_field;
    let lastResultLine: string | undefined;
    const state: RoundState & { results: Message[] } = { results: [], last_result: null, ready };
    for (let round = 0; ; round++) {
      const suggested = (await hook('proto_round_value', round, state)) as RoundValue;
      const checkValue = (r: DecisionRecord): string | undefined => {
        const v = validator.check({ action: 'reveal', round, [field]: r.value, nonce: '0'.repeat(16) }, dirFrom(role));
        return v.ok ? undefined : `not a valid ${field}: ${v.errors.map((e) => e.code).join(', ')}`;
      };
      const value = await decide('value', 'round', round, suggested, checkValue, (r) => r.value as RoundValue);
      const nonce = toHex(globalThis.crypto.getRandomValues(new Uint8Array(8)));
      const hash = crypto.commit(commitText(value), nonce);
      if (role === 'host') {
        send({ action: 'commit', round, hash });
        const gc = await recvExpect('commit', round);
        send({ action: 'reveal', round, [field]: value, nonce });
        const gr = await recvExpect('reveal', round);
        const gv = gr.msg[field] as RoundValue;
        if (!crypto.verifyReveal(gc.msg['hash'] as string, commitText(gv), gr.msg['nonce'] as string)) {
          record.event('commit_mismatch_detected', { round, role: 'guest', expected: gc.msg['hash'], actual: crypto.commit(commitText(gv), gr.msg['nonce'] as string) });
          send({ action: 'error', round, reason: 'commit_mismatch' });
          throw new Abort('commit_mismatch', 'commit_reveal', `the guest's reveal in round ${round} does not match its commit`,
            proofOf('commit_mismatch', 'guest', [gc.line, gr.line], { round, value_field: field }));
        }
        const r = toHookResult((await hook('proto_round_judge', round, value, gv, state)) as never);
        if (!r.response) throw new Abort('hook_error', 'hooks', 'proto_round_judge returned no round_result');
        send(r.response);
        state.results.push(r.response);
        state.last_result = r.response;
        if (r.abort) {
          send({ action: 'end' });
          throw new Abort('abort', 'hooks', 'the host hooks aborted');
        }
        if (r.completed) {
          send({ action: 'end' });
          return 'completed';
        }
        continue;
      }
      // guest: the host commits first; its first frame of a round may also be `end` (NOTES A11).
      const hc = await recvExpect('commit', round, true);
      if (!hc) return 'completed';
      send({ action: 'commit', round, hash });
      const hr = await recvExpect('reveal', round);
      const hv = hr.msg[field] as RoundValue;
      if (!crypto.verifyReveal(hc.msg['hash'] as string, commitText(hv), hr.msg['nonce'] as string)) {
        record.event('commit_mismatch_detected', { round, role: 'host', expected: hc.msg['hash'], actual: crypto.commit(commitText(hv), hr.msg['nonce'] as string) });
        throw new Abort('commit_mismatch', 'commit_reveal', `the host's reveal in round ${round} does not match its commit`,
          proofOf('commit_mismatch', 'host', [hc.line, hr.line], { round, value_field: field }));
      }
      send({ action: 'reveal', round, [field]: value, nonce });
      const res = await recvExpect('round_result', round);
      const pure = hooks['proto_round_judge_pure'];
      if (spec.shadow_judge === true && pure) {
        const mine = pure(round, hv, value, state) as Message;
        const mismatches = SHADOW_FIELDS.filter((f) => f in res.msg || f in mine).filter((f) => JSON.stringify(res.msg[f]) !== JSON.stringify(mine[f]))
          .map((f) => ({ field: f, expected: mine[f], actual: res.msg[f] }));
        if (mismatches.length) {
          record.event('balance_mismatch_detected', { round, role: 'host', mismatches });
          // Everything a third party needs to rejudge the round: the ready (setup), the previous result,
          // both reveals and the disputed result, each signed by its sender.
          const frames = [readyLine, ...(lastResultLine ? [lastResultLine] : []), hr.line, lines.guest.at(-1)!, res.line];
          throw new Abort('balance_mismatch', 'shadow_judge', `the host's round_result for round ${round} differs from the guest's own judgement in ${mismatches.map((m) => m.field).join(', ')}`,
            proofOf('balance_mismatch', 'host', frames, { round, mismatches, value_field: field }));
        }
      }
      state.results.push(res.msg);
      state.last_result = res.msg;
      lastResultLine = res.line;
      if (res.msg['game_over'] === true) {
        const next = await recv();
        if (next.action !== 'end') throw new Abort('unexpected_message', 'engine', `expected end after the last round, got ${next.action}`);
        return 'completed';
      }
    }

    async function recvExpect(action: string, round: number): Promise<{ msg: Message; line: string }>;
    async function recvExpect(action: string, round: number, endOk: true): Promise<{ msg: Message; line: string } | undefined>;
    async function recvExpect(action: string, round: number, endOk = false): Promise<{ msg: Message; line: string } | undefined> {
      const before = lines[peer].length;
      const msg = await recv();
      if (endOk && msg.action === 'end') return undefined;
      if (msg.action === 'error') throw new Abort('peer_aborted', 'peer', `the ${peer} reported ${String(msg['reason'])}`);
      if (msg.action !== action || msg['round'] !== round) throw new Abort('unexpected_message', 'engine', `expected ${action} of round ${round}, got ${msg.action}${msg['round'] !== undefined ? ` of round ${String(msg['round'])}` : ''}`);
      return { msg, line: lines[peer][before]! };
    }
  }

  async function free(): Promise<EndReason> {
    let seq = 0;
    const say = async () => {
      for (const text of cfg.chat ?? []) {
        if (text.trim() === '/quit') break; // as the reference: typing /quit ends the chat
        const msg: Message = { action: 'chat', text, seq: ++seq };
        await hook('proto_on_send', msg);
        send(msg);
      }
      send({ action: 'end' });
    };
    const listen = async () => {
      while (!peerEnded) {
        const { frame, line } = await recvFrame();
        const msg = frame.msg;
        const check = validator.checkText(line, dirFrom(peer), undefined, 'msg');
        if (!check.ok || unsignableInteger(check.value)) {
          // As the reference: an invalid peer message in free mode is dropped, not fatal.
          record.event('message_dropped', { reason: check.ok ? 'INTEGER_UNSIGNABLE' : check.errors.map((e) => e.code).join(','), line: line.slice(0, 200) });
          continue;
        }
        inFlow(msg);
        cfg.onMessage?.(peer, msg);
        if (msg.action === 'end') peerEnded = true;
        else await hook('proto_on_message', msg);
      }
    };
    await Promise.all([say(), listen()]);
    await hook('proto_on_end');
    return 'completed';
  }

  /** mental_poker: the mode runs over this session's send / recv; its end becomes the session's. */
  async function mentalPoker(): Promise<EndReason> {
    const c: MpCrypto = crypto;
    const specId = (spec as { protocol_id?: unknown }).protocol_id;
    let mode = createMpMode({
      role, crypto: c, hooks: hooks as unknown as MentalPokerHooks, secrets: cfg.mpSecrets ?? randomSecrets(c.ot),
      otProtocolId: typeof specId === 'string' && specId ? specId : spec.name || 'mental-poker',
      sessionId: cfg.sid, signer: cfg.key, publicKey: role === 'host' ? cfg.hostKey : cfg.guestKey, peerPublicKey: role === 'host' ? cfg.guestKey : cfg.hostKey,
      decisions: !!bus && !!decision,
    });
    if (cfg.mpWrap) mode = cfg.mpWrap(mode);
    const accepts = (r: DecisionRecord) => (typeof r.value === 'object' && r.value !== null ? undefined : 'a decision for this move is {"value": {"kind": "play" | "draw" | "pass", ...}}');
    const end = await driveMpMode(mode, {
      send,
      recv,
      decide: (seq) => decide<unknown>('value', 'action_seq', seq, null, accepts, (r) => r.value),
      event: (name, data) => record.event(name, data),
    });
    if (end.receipt) record.writeJson('transcript_receipt.json', end.receipt);
    if (end.reason === 'completed') return 'completed';
    const proof = end.proof
      ? proofOf(end.proof.kind, end.proof.offender, [...order], { reason: end.proof.reason, evidence: end.proof.evidence, verifier: role, deal: end.deal, transcript_hash: end.transcriptHash })
      : undefined;
    switch (end.reason) {
      case 'peer_error':
        throw new Abort('peer_aborted', 'peer', end.detail);
      case 'unexpected_message':
        throw new Abort('unexpected_message', 'engine', end.detail);
      case 'hook_error':
        throw new Abort('hook_error', 'hooks', end.detail);
      default:
        throw new Abort(end.reason, end.reason === 'audit_failed' || end.reason === 'audit_refused' ? 'mp_audit' : 'mp_play', end.detail, proof);
    }
  }

  /** Both sides sign the chain heads they agree on: host first, then guest. */
  async function exchangeReceipts(): Promise<Record<string, unknown>> {
    const heads = () => {
      const mine = { count: writer.count, head: writer.head };
      const theirs = { count: reader.count, head: reader.head };
      const [h, g] = role === 'host' ? [mine, theirs] : [theirs, mine];
      return { action: '_receipt', host_count: h.count, host_head: h.head, guest_count: g.count, guest_head: g.head };
    };
    if (!flow.complete) throw new Abort('hook_error', 'flow', `the ${role} hooks ended the session before the ${mode} sequence was complete`);
    const mineReceipt = heads();
    let peerFrame: Frame;
    if (role === 'host') {
      send(mineReceipt);
      peerFrame = (await recvFrame(true)).frame;
    } else {
      peerFrame = (await recvFrame(true)).frame;
      send(mineReceipt);
    }
    // Compared canonically, as the verifier does: key order is not part of what was signed.
    const canonical = (m: unknown) => toHex(crypto.jcs(JSON.stringify(m)));
    if (peerFrame.msg.action !== '_receipt' || canonical(peerFrame.msg) !== canonical(mineReceipt))
      throw new Abort('receipt_mismatch', 'receipt', `the ${peer}'s receipt does not match this side's chain heads`);
    const receipt = { v: 1, sid: cfg.sid, protocol_id: cfg.protocolId, host_key: cfg.hostKey, guest_key: cfg.guestKey, heads: mineReceipt, frames: { [role]: lines[role].at(-1), [peer]: lines[peer].at(-1) } };
    record.writeJson('receipt.json', receipt);
    return receipt;
  }

  // `aigenora session abort <dir>` leaves abort.request here; the session then ends at its next step.
  let localAbort = false;
  const abortWatch = setInterval(() => {
    if (!localAbort && existsSync(join(cfg.stateDir, 'abort.request'))) {
      localAbort = true;
      // Tell the peer first, then close, which also wakes a pending receive.
      try {
        const { line } = writer.next({ action: '_abort', reason: 'local_abort' }, reader.head);
        record.frame(line);
        transport.send(line);
      } catch {
        // the peer is gone already
      }
      transport.close();
    }
  }, 200);
  abortWatch.unref?.();
  record.event('session_started', { role, sid: cfg.sid, protocol_id: cfg.protocolId, mode });
  record.snapshot('in_progress', { role, sid: cfg.sid });
  try {
    const supported = ((await hook('supported_control_modes')) as ControlMode[] | undefined) ?? ['autonomous', 'hybrid'];
    if (!supported.includes(controlMode)) throw new Abort('control_mode_unsupported', 'hooks', `these hooks support ${supported.join(', ')}, not ${controlMode}`);
    await hook('proto_init', cfg.options, role, [], cfg.stateDir, decision);
    const ready = await handshake();
    let reason: EndReason;
    if (mode === 'simultaneous_round') reason = await rounds(ready);
    else if (mode === 'free') reason = await free();
    else if (mode === 'session_loop' || mode === 'request_response') reason = await sessionLoop();
    else if (mode === 'mental_poker') reason = await mentalPoker();
    else throw new Abort('hook_error', 'engine', `flow mode ${mode} is not run by this engine yet`);
    await exchangeReceipts();
    record.event('session_ended', { completed: true, reason });
    record.snapshot('ended', { role, sid: cfg.sid, completed: true, reason });
    clearInterval(abortWatch);
    record.close();
    transport.close();
    return { completed: true, reason, sid: cfg.sid, dir: cfg.stateDir };
  } catch (caught) {
    if (!(caught instanceof Abort)) throw caught;
    stopped = true;
    let e = caught;
    // A peer that aborted while this side was busy (deciding, say) is seen as a closed connection on
    // the next send; its _abort frame may still be waiting to be read, and is the better reason.
    if (e.reason === 'peer_disconnected') {
      try {
        const r = await transport.recv(0);
        if (r.line !== null) {
          const a = reader.accept(JSON.parse(r.line));
          if (a.ok && a.frame.msg.action === '_abort') {
            record.frame(r.line);
            e = new Abort('peer_aborted', 'peer', `the ${peer} aborted: ${String(a.frame.msg['reason'])}`);
          }
        }
      } catch {
        // nothing readable: a plain disconnect
      }
    }
    let proofPath: string | undefined;
    if (e.proof) {
      record.writeJson('proof.json', e.proof);
      proofPath = `${cfg.stateDir}/proof.json`;
    }
    const onTheWire = ['size', 'json', 'envelope', 'sequence', 'chain', 'signature', 'spec'].includes(e.step);
    record.event(onTheWire ? 'frame_rejected' : 'session_aborting', { step: e.step, reason: e.reason, detail: e.message });
    record.event('session_ended', { completed: false, reason: e.reason, step: e.step });
    record.snapshot('aborted', { role, sid: cfg.sid, completed: false, reason: e.reason, step: e.step, detail: e.message });
    // Tell the peer why, when the transport still works and the fault is not the peer's transport.
    if (!['peer_disconnected', 'peer_aborted', 'local_abort'].includes(e.reason)) {
      try {
        const { line } = writer.next({ action: '_abort', reason: e.reason }, reader.head);
        record.frame(line);
        transport.send(line);
      } catch {
        // the peer is gone already
      }
    }
    clearInterval(abortWatch);
    record.close();
    transport.close();
    return { completed: false, reason: e.reason, detail: e.message, sid: cfg.sid, dir: cfg.stateDir, ...(proofPath ? { proof: proofPath } : {}) };
  }
}
