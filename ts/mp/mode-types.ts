/**
 * What the mental_poker mode takes and gives: its configuration, its inputs (start, a verified peer
 * message, a local decision), its effects (send, event, decide, end) and the end it reports. The
 * engine's adapter (engine/modes/mental-poker.ts) maps these onto the engine's own mode interface.
 */
import type { Ed25519Keypair } from '../crypto/backend.js';
import type { Deck } from '../crypto/deck.js';
import type { Ot } from '../crypto/ot.js';
import type { MentalPokerHooks, MentalPokerLegalAction, MentalPokerOutcome, Message, Role } from '../hooks/types.js';
import type { AuditEvidence, AuditReason } from './audit.js';
import type { Transcript, TranscriptCrypto } from './transcript.js';
import type { MpSecrets } from './secrets.js';

/** What the mode needs of a crypto backend: the deck layers, the OT, SHA-256 and Ed25519. */
export type MpCrypto = TranscriptCrypto & { readonly deck: Deck; readonly ot: Ot };

export interface MpModeConfig {
  role: Role;
  crypto: MpCrypto;
  hooks: MentalPokerHooks;
  secrets: MpSecrets;
  /**
   * What the OT context binds as the protocol id: the spec's `protocol_id` if it has one, else its
   * `name` (the reference's quirk; spec.json never holds a protocol_id).
   */
  otProtocolId: string;
  /** The handshake's session id. */
  sessionId: string;
  /** This side's Ed25519 identity: it signs the terminal receipt. */
  signer: Uint8Array | Ed25519Keypair;
  publicKey: string;
  /** The peer's public key from the handshake (lowercase hex): its receipt must be signed by exactly it. */
  peerPublicKey: string;
  /** Ask the driver for a local decision before each own turn (hybrid and human control). */
  decisions?: boolean;
}

export type MpInput = { kind: 'start' } | { kind: 'message'; msg: Message } | { kind: 'decision'; value: unknown };

/** The session result in the reference's shape. */
export interface MpResult {
  completed: true;
  outcome: MentalPokerOutcome;
  metadata: unknown[];
  audit_passed: boolean;
}

/** What `<state_dir>/transcript_receipt.json` holds after a passed audit and a verified peer receipt. */
export interface TranscriptReceipt {
  transcript_hash: string;
  signature: string;
  peer_signature: string;
  audit_status: 'passed';
}

export type MpEndReason =
  /** Audit passed and the peer's receipt verified. */
  | 'completed'
  /** The audit found a cheat, or the peer's receipt does not verify (`audit.reason` says which). */
  | 'audit_failed'
  /** The peer sent something else where its opening, witnesses or receipt were due. */
  | 'audit_refused'
  /** A peer play failed the cryptographic check (nullifier rule); `{"action":"error","reason":"play_rejected"}` was sent. */
  | 'play_rejected'
  /** A peer play broke the game's rules; `{"action":"error","reason":"rule_rejected"}` was sent. */
  | 'rule_rejected'
  /** The peer reported an error. */
  | 'peer_error'
  /** A peer message out of the mode's sequence. */
  | 'unexpected_message'
  /** Peer material the game cannot go on with (a key that does not decode, an OT that does not open, audit material that cannot be read). */
  | 'bad_peer_material'
  /** This side's hooks threw or asked for something impossible. */
  | 'hook_error';

/** A claim the driver turns into a proof file: who cheated, where, and the failed step. */
export interface MpProofClaim {
  kind: 'mp_play_rejected' | 'mp_rule_rejected' | 'mp_audit_failed';
  offender: Role;
  /** The index, among the peer messages fed to the mode (from 0), of the message that completed the evidence. */
  message: number;
  reason: string;
  evidence: AuditEvidence | null;
}

export interface MpEnd {
  reason: MpEndReason;
  detail: string;
  /** The reference's result object, or null where the reference raises (play rejections, bad material). */
  result: MpResult | null;
  /** The failed audit step, or the refused receipt. */
  audit: { reason: AuditReason; evidence: AuditEvidence | null } | null;
  proof: MpProofClaim | null;
  receipt: TranscriptReceipt | null;
  /** The mental-poker transcript root as far as the game got. */
  transcriptHash: string;
  /** The deal plan the game used (an offline verifier needs it to know which OT fetched which card), once known. */
  deal: { host: number; guest: number } | null;
}

export type MpEffect =
  | { kind: 'send'; msg: Message }
  | { kind: 'event'; name: string; data: Record<string, unknown> }
  | { kind: 'decide'; key: 'action_seq'; value: number; legal: MentalPokerLegalAction[] }
  | { kind: 'end'; end: MpEnd };

export interface MpMode {
  /** Feeds one input; answers the effects up to the point where the mode waits for the next one. */
  step(input: MpInput): Promise<MpEffect[]>;
  /** The mental-poker transcript built so far (both sides build identical ones). */
  readonly transcript: Transcript;
  readonly ended: boolean;
}
