/**
 * The mental-poker transcript both players build event by event, and its receipt: the SHA-256 root
 * over every event's bytes, signed with Ed25519 by each side (NOTES A16).
 *
 * Event bytes = u64be(seq, from 0) ‖ u32be(len type) ‖ type (UTF-8) ‖ u32be(len payload) ‖ payload,
 * the payload being canonical.ts's JSON of an object. The payload builders below give each event
 * type the shape the reference appends, so both sides (and an offline verifier) get equal bytes.
 */
import type { Ed25519Keypair } from '../crypto/backend.js';
import { fromHex, toHex } from '../crypto/encoding.js';
import { compareCodePoints, isWellFormed } from '../crypto/unicode.js';
import { canonicalPayload, type JsonObject, type JsonValue } from './canonical.js';
import { MpError } from './errors.js';
import type { Role, Witness } from './types.js';

/** What the transcript needs of a crypto backend (any `Crypto` is one). */
export interface TranscriptCrypto {
  sha256(data: Uint8Array): Uint8Array;
  ed25519Sign(seed: Uint8Array, message: Uint8Array): Uint8Array;
  ed25519Verify(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean;
}

export interface TranscriptEvent {
  readonly seq: number;
  readonly type: string;
  /** The canonical JSON of the payload, UTF-8. */
  readonly payload: Uint8Array;
  /** The event's bytes as hashed: header ‖ payload. */
  readonly bytes: Uint8Array;
}

const MAX_U32 = 0xffff_ffff;

/** u64be(seq) ‖ u32be(len type) ‖ type ‖ u32be(len payload): the bytes before an event's payload. */
export function eventHeader(seq: number, type: Uint8Array, payloadLength: number): Uint8Array {
  if (!Number.isSafeInteger(seq) || seq < 0) throw new RangeError(`event seq ${seq} is not a non-negative integer`);
  if (type.length > MAX_U32 || payloadLength > MAX_U32) throw new RangeError('event type or payload longer than 2^32 - 1 bytes');
  const h = new Uint8Array(16 + type.length);
  const v = new DataView(h.buffer);
  v.setUint32(0, Math.floor(seq / 2 ** 32));
  v.setUint32(4, seq >>> 0);
  v.setUint32(8, type.length);
  h.set(type, 12);
  v.setUint32(12 + type.length, payloadLength);
  return h;
}

function typeBytes(type: string): Uint8Array {
  if (typeof type !== 'string') throw new MpError('MP_JSON_UNSUPPORTED', `event type must be a string, got ${typeof type}`);
  if (!isWellFormed(type)) throw new MpError('MP_JSON_LONE_SURROGATE', 'the event type contains an unpaired UTF-16 surrogate');
  return new TextEncoder().encode(type);
}

/**
 * An append-only transcript. `append` refuses what the reference refuses (MpError, the transcript
 * unchanged), and also an unpaired surrogate at once, where the reference would fail later when
 * hashing. The root is recomputed only after an append.
 */
export class Transcript {
  private readonly list: TranscriptEvent[] = [];
  private cachedRoot: Uint8Array | null = null;

  constructor(private readonly crypto: TranscriptCrypto) {}

  /** Appends an event; no payload is encoded as `{}`. Answers the event's seq. */
  append(type: string, payload?: JsonObject | undefined): number {
    const t = typeBytes(type);
    const p = canonicalPayload(payload);
    const seq = this.list.length;
    const header = eventHeader(seq, t, p.length);
    const bytes = new Uint8Array(header.length + p.length);
    bytes.set(header);
    bytes.set(p, header.length);
    this.list.push({ seq, type, payload: p, bytes });
    this.cachedRoot = null;
    return seq;
  }

  /** Number of events, which is also the next event's seq. */
  get length(): number {
    return this.list.length;
  }

  get events(): readonly TranscriptEvent[] {
    return this.list;
  }

  /** SHA-256 over every event's bytes in order (of nothing for an empty transcript). */
  root(): Uint8Array {
    if (!this.cachedRoot) {
      const all = new Uint8Array(this.list.reduce((n, e) => n + e.bytes.length, 0));
      let at = 0;
      for (const e of this.list) {
        all.set(e.bytes, at);
        at += e.bytes.length;
      }
      this.cachedRoot = this.crypto.sha256(all);
    }
    return this.cachedRoot.slice();
  }

  /** The root in lowercase hex: the receipt's `transcript_hash`. */
  rootHex(): string {
    return toHex(this.root());
  }

  /** Ed25519 signature over the raw 32-byte root, by a 32-byte seed or an expanded key pair. */
  sign(signer: Uint8Array | Ed25519Keypair): Uint8Array {
    const root = this.root();
    return signer instanceof Uint8Array ? this.crypto.ed25519Sign(signer, root) : signer.sign(root);
  }

  /** Whether `signature` is a valid Ed25519 signature of the root by `publicKey` (false for malformed input). */
  verify(publicKey: Uint8Array, signature: Uint8Array): boolean {
    return this.crypto.ed25519Verify(publicKey, this.root(), signature);
  }
}

// Payload builders, one per event type, in the shapes the reference appends.

/**
 * `mp_setup_a` / `mp_setup_b`: `rsaPub` is the object as the side holds it: its own
 * `{e: 65537, n: "<512 hex>"}`, or the peer's `rsa_pub` string parsed as received (the reference
 * records what was sent, not a re-encoding). `blobs` are the hex strings as sent; `sealed` maps each
 * label to its `c` as sent.
 */
export function setupPayload(rsaPub: JsonObject, blobs: readonly string[], sealed: Readonly<Record<string, JsonValue>>): JsonObject {
  return { rsa_pub: rsaPub, blobs: [...blobs], sealed: { ...sealed } };
}

/** `mp_ot`: z and y as JSON integers (bigints, 617 digits for 2048 bits). */
export function otPayload(otId: string, z: bigint, y: bigint): JsonObject {
  return { ot_id: otId, z, y };
}

/** `mp_draw`, appended after the draw's `mp_ot`. */
export function drawPayload(who: Role, otId: string): JsonObject {
  return { who, ot_id: otId };
}

/** `mp_play`; `call_suit` only when the play carries one. */
export function playPayload(who: Role, idB: string, rank: number, suit: number, callSuit?: number | null): JsonObject {
  const p: Record<string, JsonValue> = { who, id_b: idB, rank, suit };
  if (callSuit !== undefined && callSuit !== null) p['call_suit'] = callSuit;
  return p;
}

/** `mp_pass`. */
export function passPayload(who: Role): JsonObject {
  return { who };
}

/**
 * `mp_opening` of one side (the Host's is appended first): `entries` are that side's opening entries
 * as parsed from its `mp_opening` strings, in the order sent.
 */
export function openingPayload(role: Role, entries: readonly JsonValue[]): JsonObject {
  return { role, entries: [...entries] };
}

/** One `mp_witness` payload: the witnesses in ot_id order (code-point order of the strings). */
export function witnessPayload(role: Role, witnesses: readonly Witness[]): JsonObject {
  const sorted = [...witnesses].sort((a, b) => compareCodePoints(a.otId, b.otId));
  return { role, witnesses: sorted.map((w) => ({ ot_id: w.otId, label: w.label, r: w.r })) };
}

/**
 * Both `mp_witness` payloads, Host's then Guest's, from every witness a side holds (its own and the
 * peer's): as in the reference, a witness goes to the Host's list when its ot_id starts with `host-`,
 * to the Guest's when it starts with `guest-`, and to neither otherwise, whoever sent it.
 */
export function witnessPayloads(all: readonly Witness[]): [JsonObject, JsonObject] {
  return [
    witnessPayload(
      'host',
      all.filter((w) => w.otId.startsWith('host-')),
    ),
    witnessPayload(
      'guest',
      all.filter((w) => w.otId.startsWith('guest-')),
    ),
  ];
}

/**
 * The check of a peer's `mp_terminal_receipt`, as the reference makes it: its transcript_hash is this
 * transcript's root, its public_key is the peer's key from the session handshake, and its signature
 * verifies under that key. Fields of the wrong type or hex that does not parse answer false.
 */
export function verifyPeerReceipt(t: Transcript, receipt: { readonly [key: string]: unknown }, peerPublicKey: Uint8Array): boolean {
  const { transcript_hash: hash, public_key: key, signature } = receipt;
  if (typeof hash !== 'string' || typeof key !== 'string' || typeof signature !== 'string') return false;
  if (!/^[0-9a-fA-F]{128}$/.test(signature)) return false;
  return hash === t.rootHex() && key === toHex(peerPublicKey) && t.verify(peerPublicKey, fromHex(signature));
}
