/**
 * The `mental_poker` flow mode (NOTES A16) for one side, as a state machine without I/O: it is fed
 * inputs (start, a peer message already verified by the driver, a local decision) and answers effects
 * (send, event, decide, end). It reads no clock, sets no timer and draws no randomness: every secret
 * comes from the injected `MpSecrets`, so a recorded game replays byte for byte.
 *
 * After the driver's join/ready: the Host sends `mp_setup_a` (blob_A of every card and its k_inner
 * table), the Guest answers `mp_setup_b` (every blob_A wrapped in blob_B, shuffled, and its k_outer
 * table); the hooks' deal plan is dealt by OT, the Guest's cards first; then turns alternate, the Host
 * first: a play opens the card's two layers for the peer to check (the nullifier rule, then the game's
 * rules), a draw is an OT for the lowest id-B still in the stock, a pass is a pass (two in a row
 * stall the game). At the end both sides open their tables, publish their OT witnesses, audit the whole
 * game (`auditGame`) and exchange Ed25519 receipts over the mental-poker transcript.
 */
import type { Ed25519Keypair } from '../crypto/backend.js';
import type { Deck } from '../crypto/deck.js';
import { fromHex, toHex } from '../crypto/encoding.js';
import { CryptoError } from '../crypto/errors.js';
import { intFromHex, intToHex, PAYLOAD_K_INNER, PAYLOAD_K_OUTER, ROLE_GUEST, ROLE_HOST, type Ot, type RsaKey, type RsaPublicKey } from '../crypto/ot.js';
import { compareCodePoints } from '../crypto/unicode.js';
import type {
  MentalPokerAction,
  MentalPokerCard,
  MentalPokerHooks,
  MentalPokerLegalAction,
  MentalPokerOutcome,
  MentalPokerPlay,
  MentalPokerState,
  Message,
  Role,
} from '../hooks/types.js';
import { auditGame, type AuditEvidence, type AuditInput, type AuditReason, type OtRecord, type SetupTables } from './audit.js';
import { parseJsonExact, type JsonObject, type JsonValue } from './canonical.js';
import { MpError } from './errors.js';
import { Ledger } from './mode-ledger.js';
import { bytesToBigint } from './numbers.js';
import type { MpSecrets } from './secrets.js';
import {
  drawPayload,
  openingPayload,
  otPayload,
  passPayload,
  playPayload,
  setupPayload,
  Transcript,
  verifyPeerReceipt,
  witnessPayloads,
  type TranscriptCrypto,
} from './transcript.js';
import type { OpeningEntry, Witness } from './types.js';

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

const DEFAULT_METADATA = ['Game', 'game', 'supply', {}];

/** Ends the game with a reason; thrown inside the mode, turned into an `end` effect. */
class Stop extends Error {
  constructor(
    readonly reason: MpEndReason,
    detail: string,
    readonly extra: Partial<Omit<MpEnd, 'reason' | 'detail' | 'transcriptHash'>> = {},
  ) {
    super(detail);
  }
}

const bad = (detail: string) => new Stop('bad_peer_material', detail);

function str(m: Message, field: string): string {
  const v = m[field];
  if (typeof v !== 'string') throw bad(`${m.action}.${field} is not a string`);
  return v;
}

function list(m: Message, field: string): readonly unknown[] {
  const v = m[field];
  if (!Array.isArray(v)) throw bad(`${m.action}.${field} is not a list`);
  return v;
}

function int(m: Message, field: string): number {
  const v = m[field];
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw bad(`${m.action}.${field} is not an integer`);
  return v;
}

function parse(text: unknown, what: string): JsonValue {
  if (typeof text !== 'string') throw bad(`${what} is not a string`);
  try {
    return parseJsonExact(text);
  } catch (e) {
    throw bad(`${what} is not JSON: ${(e as Error).message}`);
  }
}

function object(v: JsonValue, what: string): JsonObject {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw bad(`${what} is not an object`);
  return v as JsonObject;
}

/** A 2048-bit integer as the wire writes it (hex, the reference reads it with int(s, 16)). */
function wireInt(m: Message, field: string): Uint8Array {
  const s = str(m, field);
  try {
    return intFromHex(s);
  } catch {
    throw bad(`${m.action}.${field} is not a hex integer of at most 2048 bits`);
  }
}

function hexBytes(s: string, what: string): Uint8Array {
  if (s.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(s)) throw bad(`${what} is not hex`);
  return fromHex(s.toLowerCase());
}

/** Runs crypto on peer material: a CryptoError is the peer's fault. */
function peerCrypto<T>(what: string, f: () => T): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof CryptoError) throw bad(`${what}: ${e.message}`);
    throw e;
  }
}

/** One side's OT table as this side holds it. */
interface Table {
  pub: RsaPublicKey;
  /** The `rsa_pub` object as recorded in the transcript. */
  pubObject: JsonObject;
  blobs: Uint8Array[];
  blobsHex: string[];
  /** label → the sealed entry's hex as sent. */
  sealed: Map<string, string>;
}

export function createMpMode(cfg: MpModeConfig): MpMode {
  const { role, crypto, hooks, secrets } = cfg;
  const peer: Role = role === 'host' ? 'guest' : 'host';
  const transcript = new Transcript(crypto);
  const ledger = new Ledger();
  const myHand = ledger.hand_of(role);
  const myCards = new Map<string, MentalPokerCard>();
  const state: Record<string, unknown> = {};
  const hooksState = state as unknown as MentalPokerState;

  let out: MpEffect[] = [];
  let ended = false;
  let received = 0;
  let inbox: ((i: MpInput) => void) | null = null;
  let parked: (() => void) | null = null;
  let started = false;

  const emit = (name: string, data: Record<string, unknown> = {}) => out.push({ kind: 'event', name, data });
  const send = (msg: Message) => out.push({ kind: 'send', msg });

  // This side's secrets and both tables.
  let rsa: RsaKey | null = null;
  const ownTokens = new Map<string, Uint8Array>();
  const cardKeys: Uint8Array[] = [];
  let hostTable: Table | null = null;
  let guestTable: Table | null = null;
  /** Guest: id-B → id-A from its own shuffle; Host: learned as its own cards arrive. */
  const idAOfIdB = new Map<string, number>();
  const myKeys = new Map<string, { kInner: Uint8Array; kOuter: Uint8Array }>();
  const otSeq: Record<Role, number> = { host: 0, guest: 0 };
  const ownWitnesses: Witness[] = [];
  const otRecords: OtRecord[] = [];
  const otIdToIdB = new Map<string, string>();
  let metadata: unknown[] = DEFAULT_METADATA;
  let outcome: MentalPokerOutcome = null;
  let deal: { host: number; guest: number } | null = null;
  const n = () => ledger.size;

  /** The next input; the caller's step returns the effects gathered so far. */
  function nextInput(): Promise<MpInput> {
    return new Promise((resolve) => {
      inbox = resolve;
      const p = parked;
      parked = null;
      p?.();
    });
  }

  /** The peer's next message; `index` is its position among the peer's messages. */
  async function recv(): Promise<{ msg: Message; index: number }> {
    const i = await nextInput();
    if (i.kind !== 'message') throw new Stop('hook_error', `the driver fed a ${i.kind} where a peer message was due`);
    const msg = i.msg;
    if (typeof msg !== 'object' || msg === null || typeof msg.action !== 'string') throw bad('a peer message without an action');
    return { msg, index: received++ };
  }

  async function hook<T>(name: string, f: () => T | Promise<T>): Promise<T> {
    try {
      return await f();
    } catch (e) {
      if (e instanceof Stop) throw e;
      throw new Stop('hook_error', `${name} threw: ${(e as Error).message}`);
    }
  }

  const context = (sender: Role, label: string) =>
    crypto.ot.context({
      protocolId: cfg.otProtocolId,
      sessionId: cfg.sessionId,
      senderRole: sender === 'host' ? ROLE_HOST : ROLE_GUEST,
      payloadType: sender === 'host' ? PAYLOAD_K_INNER : PAYLOAD_K_OUTER,
      label,
    });

  // ── setup ──

  /** Builds this side's table: the Host's blob_A over the universe, the Guest's blob_B over the shuffled blob_As. */
  async function buildTable(plain: (i: number) => Uint8Array): Promise<Message> {
    rsa = await hook('rsaKey', () => secrets.rsaKey());
    const prefix = role === 'host' ? 'h-' : 'g-';
    const blobs: Uint8Array[] = [];
    const sealed = new Map<string, string>();
    for (let i = 0; i < n(); i++) {
      const k = secrets.cardKey(i);
      cardKeys.push(k);
      // sealOuter takes only a 44-byte blob_A: a Host blob of another size (which would mark its card) is refused.
      blobs.push(
        role === 'host'
          ? crypto.deck.sealInner(k, secrets.blobNonce(i), plain(i))
          : peerCrypto(`blob_A ${i}`, () => crypto.deck.sealOuter(k, secrets.blobNonce(i), plain(i))),
      );
      const label = `${prefix}${i}`;
      const s = rsa.sealLabel(context(role, label), k, secrets.sealNonce(label));
      ownTokens.set(label, s.token);
      sealed.set(label, toHex(s.sealed));
    }
    const table: Table = { pub: { e: 65537, n: rsa.n }, pubObject: object(parseJsonExact(rsa.rsaPub), 'rsa_pub'), blobs, blobsHex: blobs.map(toHex), sealed };
    if (role === 'host') hostTable = table;
    else guestTable = table;
    const action = role === 'host' ? 'mp_setup_a' : 'mp_setup_b';
    transcript.append(action, setupPayload(table.pubObject, table.blobsHex, Object.fromEntries(sealed)));
    return {
      action,
      rsa_pub: rsa.rsaPub,
      blobs: table.blobsHex,
      sealed_keys: table.blobsHex.map((_, i) => JSON.stringify({ label: `${prefix}${i}`, c: sealed.get(`${prefix}${i}`) })),
    };
  }

  /** Reads the peer's `mp_setup_a` / `mp_setup_b`. */
  function applyTable(m: Message): Table {
    const action = role === 'host' ? 'mp_setup_b' : 'mp_setup_a';
    if (m.action !== action) throw new Stop('unexpected_message', `expected the ${peer}'s ${action}, got ${m.action}`);
    const prefix = role === 'host' ? 'g-' : 'h-';
    const pubObject = object(parse(m['rsa_pub'], `${action}.rsa_pub`), `${action}.rsa_pub`);
    const pub = peerCrypto(`${action}.rsa_pub`, () => crypto.ot.decodeRsaPub(pubObject));
    const blobsHex = list(m, 'blobs').map((b, i) => {
      if (typeof b !== 'string') throw bad(`${action}.blobs[${i}] is not a string`);
      return b;
    });
    const keys = list(m, 'sealed_keys');
    if (keys.length !== blobsHex.length || (role === 'host' && blobsHex.length !== n()))
      throw bad(`${action}: sealed_keys and blobs differ in length${role === 'host' ? ' or from the deck' : ''}`);
    const sealed = new Map<string, string>();
    keys.forEach((k, i) => {
      const o = object(parse(k, `${action}.sealed_keys[${i}]`), `${action}.sealed_keys[${i}]`);
      if (o['label'] !== `${prefix}${i}`) throw bad(`${action}: sealed_keys[${i}] label mismatch`);
      if (typeof o['c'] !== 'string') throw bad(`${action}: sealed_keys[${i}].c is not a string`);
      sealed.set(`${prefix}${i}`, o['c']);
    });
    const blobs = blobsHex.map((h, i) => hexBytes(h, `${action}.blobs[${i}]`));
    transcript.append(action, setupPayload(pubObject, blobsHex, Object.fromEntries(sealed)));
    return { pub, pubObject, blobs, blobsHex, sealed };
  }

  // ── OT ──

  const record = (otId: string, z: Uint8Array, y: Uint8Array) => {
    const zi = bytesToBigint(z);
    otRecords.push({ otId, z: zi });
    transcript.append('mp_ot', otPayload(otId, zi, bytesToBigint(y)));
  };

  /** This side's OT for card id-B `idB` from the peer's table; answers the card's face. */
  async function fetchCard(idB: string, draw: boolean): Promise<void> {
    const table = (role === 'host' ? guestTable : hostTable)!;
    const label = role === 'host' ? `g-${idB}` : `h-${idAOfIdB.get(idB)!}`;
    const otId = `${role}-${otSeq[role]++}`;
    otIdToIdB.set(otId, idB);
    const ctx = context(peer, label);
    const r = secrets.blinding(otId, table.pub.n);
    const z = crypto.ot.blind(table.pub.n, ctx, r);
    emit('mp_ot_started', { ot_id: otId, direction: 'sent', ...(draw ? { kind: 'draw' } : {}) });
    send({ action: 'mp_ot_request', id: otId, z: intToHex(z) });
    const { msg } = await recv();
    if (msg.action !== 'mp_ot_response' || msg['id'] !== otId)
      throw new Stop(
        'unexpected_message',
        `expected the ${peer}'s mp_ot_response to ${otId}, got ${msg.action}${typeof msg['id'] === 'string' ? ` ${msg['id']}` : ''}`,
      );
    const y = wireInt(msg, 'y');
    const sealedHex = table.sealed.get(label);
    const sealed = sealedHex === undefined ? null : hexBytes(sealedHex, `sealed entry ${label}`);
    const key = peerCrypto(`OT ${otId}`, () => crypto.ot.openSealed(crypto.ot.unblind(table.pub.n, y, r), ctx, sealed ?? new Uint8Array(0)));
    const blobB = guestTable!.blobs[Number(idB)]!;
    let kInner: Uint8Array;
    let kOuter: Uint8Array;
    let blobA: Uint8Array;
    if (role === 'guest') {
      kInner = key;
      kOuter = cardKeys[Number(idB)]!;
      blobA = crypto.deck.openLayer(kOuter, blobB);
    } else {
      kOuter = key;
      blobA = peerCrypto(`blob_B of id-B ${idB}`, () => crypto.deck.openLayer(kOuter, blobB));
      const hex = toHex(blobA);
      const idA = hostTable!.blobsHex.indexOf(hex);
      if (idA < 0) throw bad(`blob_A of id-B ${idB} is not in the Host's table`);
      idAOfIdB.set(idB, idA);
      kInner = cardKeys[idA]!;
    }
    const plain = peerCrypto(`card ${idB}`, () => crypto.deck.openLayer(kInner, blobA));
    record(otId, z, y);
    if (draw) transcript.append('mp_draw', drawPayload(role, otId));
    ownWitnesses.push({ otId, label, r: bytesToBigint(r) });
    ledger.dealTo(role, idB);
    myKeys.set(idB, { kInner, kOuter });
    myCards.set(idB, [plain[0]!, plain[1]!]);
    // Not the label: a Guest's label names the id-A behind one of its id-Bs (its shuffle), and events are
    // written to disk while the game runs; the label is disclosed in the witnesses, after play.
    emit('mp_ot_completed', { ot_id: otId, ...(draw ? { kind: 'draw' } : {}) });
  }

  /** Answers the peer's OT request from this side's table and records the OT; answers its ot_id. */
  function answer(msg: Message): string {
    if (msg.action !== 'mp_ot_request') throw new Stop('unexpected_message', `expected the ${peer}'s mp_ot_request, got ${msg.action}`);
    const otId = str(msg, 'id');
    const z = wireInt(msg, 'z');
    const y = peerCrypto(`mp_ot_request ${otId}`, () => rsa!.privateOp(z));
    send({ action: 'mp_ot_response', id: otId, y: intToHex(y) });
    record(otId, z, y);
    return otId;
  }

  // ── play ──

  function buildPlay(action: Extract<MentalPokerAction, { kind: 'play' }>): Message {
    const card = myCards.get(action.id_b);
    const keys = myKeys.get(action.id_b);
    if (!card || !keys) throw new Stop('hook_error', `the hooks chose id_b ${JSON.stringify(action.id_b)}, which is not in this side's hand`);
    const v = crypto.deck.validatePlay({
      hand: [...myHand],
      played: [...ledger.played],
      idB: action.id_b,
      declaredCard: crypto.deck.encodeCard(card[0], card[1]),
      kInner: keys.kInner,
      kOuter: keys.kOuter,
      blobB: guestTable!.blobs[Number(action.id_b)]!,
    });
    if (!v.ok) throw new Stop('hook_error', `local play validation failed for ${action.id_b}: ${v.reason}`);
    const msg: Message = { action: 'mp_play', id_b: action.id_b, k_inner: toHex(keys.kInner), k_outer: toHex(keys.kOuter), rank: card[0], suit: card[1] };
    if (action.call_suit !== undefined && action.call_suit !== null) msg['call_suit'] = action.call_suit;
    return msg;
  }

  function applyPlay(who: Role, msg: Message): void {
    const idB = msg['id_b'] as string;
    if (!ledger.play(who, idB)) throw new Stop(who === role ? 'hook_error' : 'bad_peer_material', `deck.play failed for ${who} ${idB}`);
    if (who === role) myCards.delete(idB);
    const call = msg['call_suit'];
    transcript.append('mp_play', playPayload(who, idB, msg['rank'] as number, msg['suit'] as number, typeof call === 'number' ? call : null));
  }

  async function localAction(seq: number): Promise<MentalPokerAction> {
    const legal = hooks.proto_mp_legal_actions ? await hook('proto_mp_legal_actions', () => hooks.proto_mp_legal_actions!(hooksState)) : [];
    if (cfg.decisions && hooks.proto_mp_coerce_action) {
      out.push({ kind: 'decide', key: 'action_seq', value: seq, legal });
      const i = await nextInput();
      if (i.kind !== 'decision') throw new Stop('hook_error', `the driver fed a ${i.kind} where a decision was due`);
      if (i.value !== null && i.value !== undefined) {
        let explicit: MentalPokerAction | null = null;
        try {
          explicit = hooks.proto_mp_coerce_action(hooksState, i.value);
        } catch (e) {
          emit('local_decision_rejected', { match_key: 'action_seq', match_value: seq, reason: (e as Error).message, decision: i.value });
        }
        if (explicit) {
          const chosen = explicit;
          await hook('proto_mp_apply_local_action', () => hooks.proto_mp_apply_local_action?.(hooksState, chosen));
          return chosen;
        }
      }
    }
    return hook('proto_mp_choose_action', () => hooks.proto_mp_choose_action(hooksState));
  }

  /** A peer's play: the nullifier rule, then the game's rules. */
  function checkPeerPlay(msg: Message, index: number): void {
    const idB = str(msg, 'id_b');
    const [rank, suit] = [int(msg, 'rank'), int(msg, 'suit')];
    const call = msg['call_suit'];
    if (call !== undefined && call !== null && (typeof call !== 'number' || !Number.isSafeInteger(call))) throw bad('mp_play.call_suit is not an integer');
    const declared = peerCrypto('mp_play card', () => crypto.deck.encodeCard(rank, suit));
    const kInner = hexBytes(str(msg, 'k_inner'), 'mp_play.k_inner');
    const kOuter = hexBytes(str(msg, 'k_outer'), 'mp_play.k_outer');
    // A card outside the deck is in no hand: the check refuses it before it looks for a blob.
    const blobB = /^(0|[1-9]\d*)$/.test(idB) && Number(idB) < n() ? guestTable!.blobs[Number(idB)]! : new Uint8Array(0);
    const v = peerCrypto('mp_play', () =>
      crypto.deck.validatePlay({ hand: [...ledger.hand_of(peer)], played: [...ledger.played], idB, declaredCard: declared, kInner, kOuter, blobB }),
    );
    if (!v.ok) {
      emit('play_rejected', { who: peer, reason: v.reason });
      send({ action: 'error', reason: 'play_rejected' });
      throw new Stop('play_rejected', `peer play rejected: ${v.reason}`, {
        proof: { kind: 'mp_play_rejected', offender: peer, message: index, reason: v.reason, evidence: null },
      });
    }
  }

  async function playLoop(): Promise<void> {
    let turn = 0;
    let seq = 0;
    let passes = 0;
    for (;;) {
      const actor: Role = turn % 2 === 0 ? 'host' : 'guest';
      if (actor === role) {
        const action = await localAction(seq++);
        if (action.kind === 'play') {
          passes = 0;
          const msg = buildPlay(action);
          send(msg);
          applyPlay(role, msg);
          emit('play_verified', { who: role, id_b: action.id_b });
        } else if (action.kind === 'draw') {
          passes = 0;
          const idB = ledger.nextStock();
          if (idB === undefined) throw new Stop('hook_error', 'draw requested but stock is empty');
          emit('draw_started', { who: role, id_b: idB });
          await fetchCard(idB, true);
        } else if (action.kind === 'pass') {
          passes++;
          send({ action: 'mp_pass' });
          emit('pass_exchanged', { who: role });
          transcript.append('mp_pass', passPayload(role));
        } else throw new Stop('hook_error', `the hooks chose an action of kind ${JSON.stringify((action as { kind: unknown }).kind)}`);
      } else {
        const { msg, index } = await recv();
        if (msg.action === 'mp_play') {
          passes = 0;
          checkPeerPlay(msg, index);
          const play = msg as MentalPokerPlay;
          const [ok, why] = await hook('proto_mp_validate_play', () => hooks.proto_mp_validate_play(hooksState, peer, play));
          if (!ok) {
            emit('play_rejected', { who: peer, reason: why });
            send({ action: 'error', reason: 'rule_rejected' });
            throw new Stop('rule_rejected', `peer play rule-rejected: ${why}`, {
              proof: { kind: 'mp_rule_rejected', offender: peer, message: index, reason: why, evidence: null },
            });
          }
          applyPlay(peer, msg);
          emit('play_verified', { who: peer, id_b: msg['id_b'] });
        } else if (msg.action === 'mp_ot_request') {
          passes = 0;
          emit('mp_ot_started', { ot_id: msg['id'], direction: 'received', kind: 'draw' });
          const otId = answer(msg);
          transcript.append('mp_draw', drawPayload(peer, otId));
          const idB = ledger.nextStock();
          if (idB === undefined) throw bad('draw requested but stock is empty');
          ledger.dealTo(peer, idB);
          otIdToIdB.set(otId, idB);
          emit('draw_completed', { who: peer, id_b: idB });
        } else if (msg.action === 'mp_pass') {
          passes++;
          emit('pass_exchanged', { who: peer });
          transcript.append('mp_pass', passPayload(peer));
        } else if (msg.action === 'error') {
          throw new Stop('peer_error', `the ${peer} reported ${String(msg['reason'])}`);
        } else throw new Stop('unexpected_message', `unexpected play-loop message: ${msg.action}`);
      }
      if (passes >= 2) state['_mp_stalled'] = true;
      const winner = await hook('proto_mp_check_winner', () => hooks.proto_mp_check_winner(hooksState));
      if (winner !== null && winner !== undefined) {
        outcome = winner;
        return;
      }
      if (passes >= 2) return;
      turn++;
      if (myHand.size === 0 && ledger.hand_of(peer).size === 0) return;
    }
  }

  // ── openings, witnesses, audit, receipt ──

  function openingEntries(): JsonObject[] {
    const entries: JsonObject[] = [];
    for (const label of [...ownTokens.keys()].sort(compareCodePoints)) entries.push({ kind: 'token', label, token: intToHex(ownTokens.get(label)!) });
    const [kind, prefix] = role === 'host' ? ['k_inner', 'h-'] : ['k_outer', 'g-'];
    cardKeys.forEach((k, i) => entries.push({ kind, label: `${prefix}${i}`, k: toHex(k) }));
    return entries;
  }

  function toOpening(v: JsonValue, i: number): OpeningEntry {
    const o = object(v, `opening ${i}`);
    if (typeof o['kind'] !== 'string' || typeof o['label'] !== 'string') throw bad(`opening ${i} has no kind and label`);
    const e: { kind: string; label: string; token?: string; k?: string } = { kind: o['kind'], label: o['label'] };
    if (typeof o['token'] === 'string') e.token = o['token'];
    if (typeof o['k'] === 'string') e.k = o['k'];
    return e;
  }

  function toWitness(v: JsonValue, i: number): Witness {
    const o = object(v, `witness ${i}`);
    const [otId, label, r] = [o['ot_id'], o['label'], o['r']];
    if (typeof otId !== 'string' || typeof label !== 'string' || typeof r !== 'string' || !/^[0-9a-fA-F]+$/.test(r))
      throw bad(`witness ${i} is not {ot_id, label, r: hex}`);
    return { otId, label, r: BigInt(`0x${r}`) };
  }

  const result = (auditPassed: boolean): MpResult => ({ completed: true, outcome, metadata, audit_passed: auditPassed });

  async function finalize(): Promise<MpEnd> {
    const mine = openingEntries();
    send({ action: 'mp_opening', openings: mine.map((e) => JSON.stringify(e)) });
    emit('mp_opening_sent', { entry_count: mine.length });
    const refused = (what: string, got: string): never => {
      emit('audit_refused', { peer_role: peer });
      throw new Stop('audit_refused', `the ${peer} sent ${got} where its ${what} was due`, { result: result(false) });
    };
    const po = await recv();
    if (po.msg.action !== 'mp_opening') refused('mp_opening', po.msg.action);
    const theirsRaw = list(po.msg, 'openings').map((s, i) => parse(s, `opening ${i}`));
    const [hostEntries, guestEntries] = role === 'host' ? [mine, theirsRaw] : [theirsRaw, mine];
    transcript.append('mp_opening', openingPayload('host', hostEntries));
    transcript.append('mp_opening', openingPayload('guest', guestEntries));
    emit('mp_opening_received', { entry_count: theirsRaw.length });

    const sorted = [...ownWitnesses].sort((a, b) => compareCodePoints(a.otId, b.otId));
    send({ action: 'mp_witness', witnesses: sorted.map((w) => JSON.stringify({ ot_id: w.otId, label: w.label, r: intToHex(bigintTo256(w.r)) })) });
    emit('mp_witness_sent', { witness_count: sorted.length });
    const pw = await recv();
    if (pw.msg.action !== 'mp_witness') refused('mp_witness', pw.msg.action);
    const theirWitnesses = list(pw.msg, 'witnesses').map((s, i) => toWitness(parse(s, `witness ${i}`), i));
    const [hw, gw] = witnessPayloads([...ownWitnesses, ...theirWitnesses]);
    transcript.append('mp_witness', hw);
    transcript.append('mp_witness', gw);
    emit('mp_witness_received', { witness_count: theirWitnesses.length });

    emit('audit_started');
    const tables = (t: Table): SetupTables => ({ rsaPub: t.pub, blobs: t.blobs, sealed: t.sealed });
    const theirs = theirsRaw.map(toOpening);
    const input: AuditInput = {
      verifier: role,
      protocolId: cfg.otProtocolId,
      sessionId: cfg.sessionId,
      universe: await hook('proto_mp_deck_universe', () => hooks.proto_mp_deck_universe()),
      host: tables(hostTable!),
      guest: tables(guestTable!),
      openings: role === 'host' ? { host: mine.map(toOpening), guest: theirs } : { host: theirs, guest: mine.map(toOpening) },
      witnesses: role === 'host' ? { host: ownWitnesses, guest: theirWitnesses } : { host: theirWitnesses, guest: ownWitnesses },
      otRecords,
      otIdToIdB,
    };
    let verdict;
    try {
      verdict = auditGame(crypto, input);
    } catch (e) {
      if (e instanceof MpError) throw new Stop('bad_peer_material', `the audit cannot be run: ${e.detail}`, { result: result(false) });
      if (e instanceof CryptoError) throw new Stop('bad_peer_material', `the audit cannot be run: ${e.message}`, { result: result(false) });
      throw e;
    }
    if (!verdict.ok) {
      emit('audit_failed', { reason: verdict.reason, evidence: verdict.evidence });
      throw new Stop('audit_failed', `audit failed: ${verdict.reason}`, {
        result: result(false),
        audit: { reason: verdict.reason, evidence: verdict.evidence },
        proof: { kind: 'mp_audit_failed', offender: peer, message: pw.index, reason: verdict.reason, evidence: verdict.evidence },
      });
    }
    emit('audit_passed');

    const hash = transcript.rootHex();
    const signature = toHex(transcript.sign(cfg.signer));
    send({ action: 'mp_terminal_receipt', transcript_hash: hash, signature, audit_status: 'passed', public_key: cfg.publicKey });
    emit('mp_terminal_receipt_signed', { transcript_hash: hash });
    const pr = await recv();
    if (pr.msg.action !== 'mp_terminal_receipt') refused('mp_terminal_receipt', pr.msg.action);
    const peerSig = pr.msg['signature'];
    const ok = verifyPeerReceipt(transcript, pr.msg, fromHex(cfg.peerPublicKey));
    emit('mp_terminal_receipt_verified', { transcript_hash: hash, peer_signature_ok: ok });
    if (!ok) {
      emit('audit_failed', { reason: 'peer_receipt_signature_invalid' });
      throw new Stop('audit_failed', "the peer's terminal receipt does not verify", {
        result: result(false),
        audit: { reason: 'peer_receipt_signature_invalid', evidence: null },
        proof: { kind: 'mp_audit_failed', offender: peer, message: pr.index, reason: 'peer_receipt_signature_invalid', evidence: null },
      });
    }
    emit('game_over', { outcome, audit_status: 'passed' });
    return {
      reason: 'completed',
      detail: 'audit passed, receipts exchanged',
      result: result(true),
      audit: null,
      proof: null,
      receipt: { transcript_hash: hash, signature, peer_signature: peerSig as string, audit_status: 'passed' },
      transcriptHash: hash,
      deal,
    };
  }

  async function run(): Promise<MpEnd> {
    if (role === 'host') metadata = (await hook('proto_host_metadata', () => hooks.proto_host_metadata?.())) ?? DEFAULT_METADATA;
    emit('mp_setup_started', { role });
    if (role === 'host') {
      const universe = await hook('proto_mp_deck_universe', () => hooks.proto_mp_deck_universe());
      ledger.reset(universe.length);
      const plain = (i: number) => {
        const [r, s] = universe[i]!;
        return crypto.deck.packInner(crypto.deck.encodeCard(r, s), secrets.pad(i));
      };
      send(await buildTable(plain));
      emit('mp_setup_completed', { role, deck_size: n() });
      guestTable = applyTable((await recv()).msg);
    } else {
      hostTable = applyTable((await recv()).msg);
      ledger.reset(hostTable.blobs.length);
      const perm = secrets.shuffle(n());
      perm.forEach((idA, idB) => idAOfIdB.set(String(idB), idA));
      send(await buildTable((j) => hostTable!.blobs[perm[j]!]!));
      emit('mp_setup_completed', { role, deck_size: n() });
    }

    const plan = await hook('proto_mp_initial_deal', () => hooks.proto_mp_initial_deal({}));
    const [g, h] = [plan?.guest ?? 0, plan?.host ?? 0];
    if (!Number.isSafeInteger(g) || !Number.isSafeInteger(h) || g < 0 || h < 0 || g + h > n())
      throw new Stop('hook_error', 'deal plan asks for more cards than the deck');
    deal = { host: h, guest: g };
    const ids = Array.from({ length: n() }, (_, i) => String(i));
    for (const [owner, deal] of [
      ['guest', ids.slice(0, g)],
      ['host', ids.slice(g, g + h)],
    ] as const) {
      for (const idB of deal) {
        emit('deal_requested', { owner });
        if (owner === role) await fetchCard(idB, false);
        else {
          const { msg } = await recv();
          emit('mp_ot_started', { ot_id: msg['id'], direction: 'received' });
          const otId = answer(msg);
          otIdToIdB.set(otId, idB);
          ledger.dealTo(peer, idB);
        }
      }
    }
    Object.assign(state, { _mp_role: role, _mp_hand: myHand, _mp_hand_cards: myCards, _mp_deck_view: ledger });
    await playLoop();
    if (role === 'guest') metadata = (await hook('proto_host_metadata', () => hooks.proto_host_metadata?.())) ?? DEFAULT_METADATA;
    return finalize();
  }

  function finish(end: MpEnd): void {
    ended = true;
    // The game's private key is of no further use: wipe it (the wasm backend holds it outside JS).
    try {
      rsa?.dispose();
    } catch {
      // already disposed
    }
    rsa = null;
    out.push({ kind: 'end', end });
    const p = parked;
    parked = null;
    p?.();
  }

  return {
    transcript,
    get ended() {
      return ended;
    },
    async step(input: MpInput): Promise<MpEffect[]> {
      if (ended) return [];
      const settled = new Promise<void>((resolve) => (parked = resolve));
      if (!started) {
        if (input.kind !== 'start') throw new Error('the mental_poker mode starts with a start input');
        started = true;
        run().then(finish, (e: unknown) => {
          if (e instanceof Stop) {
            finish({
              reason: e.reason,
              detail: e.message,
              result: null,
              audit: null,
              proof: null,
              receipt: null,
              ...e.extra,
              transcriptHash: transcript.rootHex(),
              deal,
            });
          } else if (e instanceof MpError) {
            // Peer material the transcript refuses (a float, a lone surrogate), where the reference raises.
            finish({
              reason: 'bad_peer_material',
              detail: e.message,
              result: null,
              audit: null,
              proof: null,
              receipt: null,
              transcriptHash: transcript.rootHex(),
              deal,
            });
          } else {
            finish({
              reason: 'hook_error',
              detail: `internal error: ${(e as Error)?.message ?? String(e)}`,
              result: null,
              audit: null,
              proof: null,
              receipt: null,
              transcriptHash: transcript.rootHex(),
              deal,
            });
          }
        });
      } else {
        const f = inbox;
        inbox = null;
        if (!f) throw new Error('the mental_poker mode is not waiting for input');
        f(input);
      }
      await settled;
      const effects = out;
      out = [];
      return effects;
    },
  };
}

/** A witness r back in the wire's 256-byte form. */
function bigintTo256(x: bigint): Uint8Array {
  return fromHex(x.toString(16).padStart(512, '0'));
}
