/**
 * One side's mental-poker game as its phases (deck setup, OT deal, play, finalisation) share it: the
 * transcript and deck ledger both sides keep in step, this side's secrets and both OT tables, the OT
 * records the audit reads, and the effects the current step produces. A phase ends the game by
 * throwing a `Stop`.
 */
import type { RsaKey, RsaPublicKey } from '../crypto/ot.js';
import { PAYLOAD_K_INNER, PAYLOAD_K_OUTER, ROLE_GUEST, ROLE_HOST } from '../crypto/ot.js';
import type { MentalPokerCard, MentalPokerOutcome, MentalPokerState, Message, Role } from '../hooks/types.js';
import type { OtRecord } from './audit.js';
import type { JsonObject } from './canonical.js';
import { Ledger } from './mode-ledger.js';
import type { MpEffect, MpEnd, MpEndReason, MpModeConfig, MpResult } from './mode-types.js';
import { Transcript } from './transcript.js';
import type { Witness } from './types.js';

/** What the game waits for between two steps. */
export type Wait =
  /** The peer's `mp_setup_a` / `mp_setup_b`. */
  | 'table'
  /** The peer's OT request for its next deal card. */
  | 'deal_request'
  /** The peer's answer to this side's OT (a deal card or a draw). */
  | 'ot_response'
  /** A local decision for this side's turn. */
  | 'decision'
  /** The peer's move: a play, a draw or a pass. */
  | 'move'
  | 'opening'
  | 'witnesses'
  | 'receipt';

/** Ends the game with a reason; thrown inside a phase, turned into an `end` effect. */
export class Stop extends Error {
  constructor(
    readonly reason: MpEndReason,
    detail: string,
    readonly extra: Partial<Omit<MpEnd, 'reason' | 'detail' | 'transcriptHash'>> = {},
  ) {
    super(detail);
  }
}

/** One side's OT table as this side holds it. */
export interface Table {
  pub: RsaPublicKey;
  /** The `rsa_pub` object as recorded in the transcript. */
  pubObject: JsonObject;
  blobs: Uint8Array[];
  blobsHex: string[];
  /** label → the sealed entry's hex as sent. */
  sealed: Map<string, string>;
}

const DEFAULT_METADATA = ['Game', 'game', 'supply', {}];

export class Game {
  readonly role: Role;
  readonly peer: Role;
  readonly transcript: Transcript;
  readonly ledger = new Ledger();
  /** The faces of this side's cards, by id-B, and the two keys that open each. */
  readonly myCards = new Map<string, MentalPokerCard>();
  readonly myKeys = new Map<string, { kInner: Uint8Array; kOuter: Uint8Array }>();
  /** The hooks' game state; the `_mp_*` views join it once the deal is done. */
  readonly state: Record<string, unknown> = {};
  /** This side's OT key for the game; disposed when the game ends. */
  rsa: RsaKey | null = null;
  /** The key while it is being made (from the game's start), until its table takes it. */
  rsaPending: Promise<RsaKey> | null = null;
  /** This side's sealed-table tokens by label, and its card keys by index: both disclosed in its opening. */
  readonly ownTokens = new Map<string, Uint8Array>();
  readonly cardKeys: Uint8Array[] = [];
  readonly tables: Partial<Record<Role, Table>> = {};
  /** Guest: id-B → id-A from its own shuffle; Host: learned as its own cards arrive. */
  readonly idAOfIdB = new Map<string, number>();
  /** OTs this side has requested so far (its ot_ids count from 0). */
  otCount = 0;
  readonly ownWitnesses: Witness[] = [];
  /** Every OT both ways, in transcript order, and the id-B each was meant to fetch. */
  readonly otRecords: OtRecord[] = [];
  readonly otIdToIdB = new Map<string, string>();
  metadata: unknown[] = DEFAULT_METADATA;
  outcome: MentalPokerOutcome = null;
  deal: { host: number; guest: number } | null = null;
  /** Peer messages taken so far: a proof claim names its message by its index among them. */
  received = 0;
  /** The effects of the step under way. */
  out: MpEffect[] = [];

  constructor(readonly cfg: MpModeConfig) {
    this.role = cfg.role;
    this.peer = cfg.role === 'host' ? 'guest' : 'host';
    this.transcript = new Transcript(cfg.crypto);
  }

  /** The deck size. */
  get n(): number {
    return this.ledger.size;
  }

  get hand(): Set<string> {
    return this.ledger.hand_of(this.role);
  }

  get hooksState(): MentalPokerState {
    return this.state as unknown as MentalPokerState;
  }

  /** A side's table; every phase after the setup has both. */
  table(side: Role): Table {
    return this.tables[side]!;
  }

  emit(name: string, data: Record<string, unknown> = {}): void {
    this.out.push({ kind: 'event', name, data });
  }

  send(msg: Message): void {
    this.out.push({ kind: 'send', msg });
  }

  /** Runs one of this side's hooks (or its secrets source): a throw is the hooks' fault. */
  async hook<T>(name: string, f: () => T | Promise<T>): Promise<T> {
    try {
      return await f();
    } catch (e) {
      if (e instanceof Stop) throw e;
      throw new Stop('hook_error', `${name} threw: ${(e as Error).message}`);
    }
  }

  /** The OT context of `label` in `sender`'s table. */
  otContext(sender: Role, label: string): Uint8Array {
    return this.cfg.crypto.ot.context({
      protocolId: this.cfg.otProtocolId,
      sessionId: this.cfg.sessionId,
      senderRole: sender === 'host' ? ROLE_HOST : ROLE_GUEST,
      payloadType: sender === 'host' ? PAYLOAD_K_INNER : PAYLOAD_K_OUTER,
      label,
    });
  }

  /** The host's metadata hook (each side calls it: the Host before its setup, the Guest after play). */
  async readMetadata(): Promise<void> {
    this.metadata = (await this.hook('proto_host_metadata', () => this.cfg.hooks.proto_host_metadata?.())) ?? DEFAULT_METADATA;
  }

  result(auditPassed: boolean): MpResult {
    return { completed: true, outcome: this.outcome, metadata: this.metadata, audit_passed: auditPassed };
  }
}
