/**
 * The one interface every flow mode implements: a state machine without I/O. A mode consumes inputs
 * (start, a peer message already through every inbound check, a timer firing, a local decision) and
 * returns effects (send, set a timer, ask for a decision, emit an event, write a session file, end).
 * The session core signs and checks what a mode sends; the driver owns the transport, the clock, the
 * record and the decision bus. Code implementing a mode imports no `node:*`, reads no `Date`, sets no
 * timers and draws no OS randomness: time comes in as `now()` and timer inputs, randomness as
 * `randomBytes`, so a test on a virtual clock replays a session exactly.
 */
import type { Crypto, Ed25519Keypair } from '../crypto/backend.js';
import type { ControlMode, DecisionConfig, HooksByMode, HooksModule, Message, Role } from '../hooks/types.js';
import type { FlowMode, Spec } from '../spec/types.js';
import type { MessageError } from '../spec/messages.js';
import type { DecisionRecord } from './decision-window.js';
import type { ModeInputs } from './modes/index.js';

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
  | 'bad_peer_material'
  /** authoritative_realtime: the host refused the join (wire version, ruleset or match config differ). */
  | 'realtime_rejected'
  /** authoritative_realtime: a host frame breaks the chain, skips a tick, or drops or alters an acknowledged command. */
  | 'realtime_integrity_failed';

/** What a mode asks the driver to settle locally: the hooks' choice is the fallback. */
export interface DecideRequest {
  expects: 'value' | 'message';
  /** Window key and number (NOTES A10 match_key / match_value). */
  key: string;
  value: number;
  fallback: unknown;
  /** Why a recorded decision is refused, or undefined when it is acceptable. */
  check(r: DecisionRecord): string | undefined;
  take(r: DecisionRecord): unknown;
  /**
   * The peer's frames are taken while the window is open and queued for the mode (free mode: the
   * conversation goes on while a person types). Without it they wait in the transport.
   */
  listen?: boolean;
}

/** Evidence a mode hands the core for proof.json; the core adds the session's identity. */
export interface ProofRequest {
  kind: string;
  offender: Role;
  /** Signed wire lines, or 'all' for every frame so far in this side's order. */
  frames: string[] | 'all';
  detail: Record<string, unknown>;
}

export type ModeInput =
  | { kind: 'start' }
  /** `invalid`: the spec's refusal, for a mode whose definition takes invalid messages itself. */
  | { kind: 'message'; from: Role; msg: Message; line: string; invalid?: readonly MessageError[] }
  | { kind: 'timer'; id: string }
  | { kind: 'decision'; value: unknown };

export type ModeEffect =
  | { kind: 'send'; msg: Message }
  | { kind: 'timer'; id: string; at: number }
  | { kind: 'decide'; request: DecideRequest }
  | { kind: 'event'; name: string; data: Record<string, unknown> }
  | { kind: 'write'; file: string; value: unknown }
  | { kind: 'end'; reason: EndReason; detail?: string; step?: string; proof?: ProofRequest; outcome?: Outcome };

/**
 * Who won a completed session, as the registry's result takes it (NOTES A7). A mode that knows it (mental
 * poker's audited winner, a realtime frame's outcome) puts it on its `end`; otherwise the core reads the
 * last protocol message that names one, as the reference does (`winner`, then `game_winner`).
 */
export type Outcome = 'host' | 'guest' | 'draw';
export const OUTCOMES: readonly string[] = ['host', 'guest', 'draw'];
export const isOutcome = (v: unknown): v is Outcome => typeof v === 'string' && OUTCOMES.includes(v);

/** The outcome a protocol message declares (`winner` first, then `game_winner`), if it declares one. */
export function declaredOutcome(msg: Message): Outcome | undefined {
  if (isOutcome(msg['winner'])) return msg['winner'];
  if (isOutcome(msg['game_winner'])) return msg['game_winner'];
  return undefined;
}

/** Thrown inside a mode (or a hook wrapper) to end the session; the same as returning an `end` effect. */
export class ModeAbort extends Error {
  constructor(
    readonly reason: EndReason,
    readonly step: string,
    detail: string,
    readonly proof?: ProofRequest,
  ) {
    super(detail);
  }
}

/** Every frame line of the session so far, as the core keeps them (read-only to modes). */
export interface WireView {
  readonly lines: Readonly<Record<Role, readonly string[]>>;
  /** Both sides' lines in the order this side sent or accepted them. */
  readonly order: readonly string[];
  /**
   * The wire profile: `signed`, our frames (both sides sign one receipt over both chains), or `plain`, the
   * reference's bare messages (each side signs its own receipt alone; engine/plain.ts).
   */
  readonly profile: 'signed' | 'plain';
}

export interface ModeContext<M extends FlowMode = FlowMode> {
  role: Role;
  spec: Spec;
  specText: string;
  protocolId: string;
  sid: string;
  hostKey: string;
  guestKey: string;
  key: Ed25519Keypair;
  crypto: Crypto;
  options: Record<string, unknown>;
  controlMode: ControlMode;
  decision: DecisionConfig | null;
  hooks: HooksByMode[M];
  /** Calls a hook by name if the protocol has it; a throw becomes a `hook_error` abort. */
  hook(name: string, ...args: unknown[]): Promise<unknown>;
  /** Milliseconds on the driver's clock. */
  now(): number;
  /** Fresh randomness from the driver (the CSPRNG, or a seeded source in tests). */
  randomBytes(n: number): Uint8Array;
  wire: WireView;
  /** What the caller handed the session for its mode; each mode reads its own inputs and defaults the rest itself. */
  inputs: ModeInputs;
}

export interface Mode {
  step(input: ModeInput): Promise<ModeEffect[]>;
}

/** A message the spec or a mode's own checks refuse, found when a transcript is checked offline. */
export interface Violation {
  frame: number;
  from: Role;
  codes: string[];
  reason?: string;
}

/**
 * One message fed to a mode's wire sequence: allowed, or refused with the reason. An allowed message
 * may still be a violation the mode names (a reveal that does not open its commit): the session goes
 * on to its abort, and the offline check reports the offender.
 */
export type FlowStep = { ok: true; violation?: { codes: string[]; reason: string } } | { ok: false; reason: string };

/** What a mode's offline checks may read beside the frames: the transcript's header and the mode's own files. */
export interface OfflineEvidence {
  header: { role: Role; host_key: string; guest_key: string };
  /** mental_poker: transcript_receipt.json's text, or null when it is absent. */
  mpReceiptText: string | null;
}

/**
 * The message sequence a mode allows (NOTES A11), fed every protocol message that passed the spec in
 * the order a transcript records them. The core feeds it live (a peer message it refuses ends the
 * session as unexpected_message, and this side never sends one it refuses) and the offline check
 * replays it over a transcript, so what one side accepted and what a third party accepts are the same
 * by construction. Messages starting with `_` (receipts, aborts) are the engine's and are not fed here.
 */
export interface WireSequence {
  next(from: Role, msg: Message): FlowStep;
  /** The session may end here with receipts: the mode's sequence is whole. */
  readonly complete: boolean;
  /** Offline: a message the spec refuses that the mode takes (`invalidInbound: 'mode'`); true when taken. */
  takeInvalid?(from: Role, line: string): boolean;
  /** Offline: every allowed protocol frame's line, in transcript order, for the checks below. */
  record?(from: Role, msg: Message, line: string): void;
  /** Offline, after the last frame, when no message was refused: the mode's own checks over the frames. */
  checkFrames?(crypto: Crypto): Violation | undefined;
  /** Offline, once both receipts and receipt.json hold: the mode's own closing evidence; why not, or undefined. */
  checkClose?(crypto: Crypto, evidence: OfflineEvidence): string | undefined;
}

/** A cheat proof's frames (each signature already checked) and claim, for the mode that wrote that kind. */
export interface ProofClaim {
  kind: string;
  sid: string;
  protocolId: string;
  offender: Role;
  host_key: string;
  guest_key: string;
  /** The frames' lines as the proof holds them. */
  lines: readonly string[];
  frames: readonly { from: Role; seq: number; msg: Message }[];
  detail: Record<string, unknown>;
}

export type ProofCheck = { proven: boolean; reason: string };

/** How a mode rechecks a proof kind it writes: from the signed frames alone, with the protocol's hooks where the rules are the protocol's. */
export interface ProofJudge {
  /** The most frames a proof of this kind may hold (a mental-poker proof holds the whole game). */
  maxFrames: number;
  judge(crypto: Crypto, claim: ProofClaim, spec: Spec, hooks: HooksModule | undefined): ProofCheck;
}

export interface ModeDefinition<M extends FlowMode = FlowMode> {
  /**
   * Who signs the closing receipt first once the mode completes. The second side compares it with
   * its own chain heads and answers; with `drainAfterEnd`, protocol frames the first side sent before
   * its receipt (a realtime command in flight at the final tick) are recorded and not acted on.
   */
  receiptFirst: Role;
  drainAfterEnd: boolean;
  /**
   * What an inbound message failing the spec does: end the session, be dropped (free mode, as the
   * reference), or go to the mode with the refusal (realtime: the host acks a bad command rejected).
   */
  invalidInbound: 'abort' | 'drop' | 'mode';
  /**
   * The mode's wire sequence, a fresh one per session. Unless `ownOpening`, the session opens with the
   * guest's `join` and the host's `ready` (any other host reply refuses the join and ends the session)
   * before the sequence sees a message.
   */
  sequence(crypto: Crypto, spec: Spec): WireSequence;
  /** The sequence has its own opening exchange (realtime's rt_join / rt_ready). */
  ownOpening?: boolean;
  /** The cheat proofs this mode writes, by kind, and how a third party rechecks each. */
  proofs?: Record<string, ProofJudge>;
  create(ctx: ModeContext<M>): Mode;
}

/** Both senders' frames from their first, each in order, or why not: a proof may not leave out what would clear the offender. */
export function wholeChains(frames: ProofClaim['frames']): string | undefined {
  const seqs: Record<Role, number> = { host: 0, guest: 0 };
  for (const f of frames) {
    if (f.seq !== seqs[f.from]) return `the ${f.from}'s frames are not the whole chain from its first (expected seq ${seqs[f.from]}, got ${f.seq})`;
    seqs[f.from]++;
  }
  return undefined;
}
