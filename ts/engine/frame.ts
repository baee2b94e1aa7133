/**
 * Signed, hash-chained frames: beyond the reference (which leaves 1:1 messages unsigned), every
 * protocol message travels as
 *
 *   {"v":1,"sid":…,"from":"host"|"guest","seq":n,"prev":<64 hex>,"msg":{…},"sig":<128 hex>}
 *
 * one compact JSON object per line. Each sender keeps its own chain: `seq` counts its frames from 0 and
 * `prev` is the hash of its previous frame (a genesis hash for the first), so a replayed, dropped,
 * reordered or re-signed frame is caught, and both sides may send at once (free mode). `sig` is the
 * sender's Ed25519 signature over "aigenora-frame/1\n" + JCS(frame without sig); a frame's hash is
 * SHA-256 of those signed bytes followed by the 64 signature bytes, so neither side canonicalizes a
 * frame twice. Every message is therefore attributable to its sender and checkable
 * afterwards by anyone holding the transcript.
 */
import type { Crypto, Ed25519Keypair } from '../crypto/backend.js';
import { concatBytes, fromHex, toHex, utf8 } from '../crypto/encoding.js';
import type { Message, Role } from '../hooks/types.js';

export interface Frame {
  v: 1;
  sid: string;
  from: Role;
  seq: number;
  prev: string;
  msg: Message;
  sig: string;
}

const SIGN_PREFIX = utf8('aigenora-frame/1\n');

export function genesis(crypto: Crypto, sid: string, from: Role): string {
  return toHex(crypto.sha256(utf8(`aigenora-chain/1\n${sid}\n${from}`)));
}

export function signingBytes(crypto: Crypto, f: Omit<Frame, 'sig'>): Uint8Array {
  const { v, sid, from, seq, prev, msg } = f;
  // Plain JSON.stringify (no refusing replacer): every msg here either came from strict JSON text or
  // passed the spec's validator, so it holds no NaN, Infinity or bigint; the strict JCS pass still
  // refuses duplicate keys and lone surrogates.
  return concatBytes(SIGN_PREFIX, crypto.jcs(JSON.stringify({ v, sid, from, seq, prev, msg })));
}

/** SHA-256(signing bytes || signature bytes): the link the next frame's `prev` names. */
export function frameHash(crypto: Crypto, signed: Uint8Array, sig: Uint8Array): string {
  return toHex(crypto.sha256(concatBytes(signed, sig)));
}

/** One sender's chain position: how many frames so far, and the hash the next one must name. */
abstract class Chain {
  protected seq = 0;
  head: string;
  constructor(
    protected readonly crypto: Crypto,
    readonly sid: string,
    readonly from: Role,
  ) {
    this.head = genesis(crypto, sid, from);
  }
  get count(): number {
    return this.seq;
  }
}

/** The sending half of a chain. */
export class ChainWriter extends Chain {
  constructor(crypto: Crypto, sid: string, from: Role, private readonly key: Ed25519Keypair) {
    super(crypto, sid, from);
  }
  /** Signs the next frame and advances the chain; returns the frame and its wire line. */
  next(msg: Message): { frame: Frame; line: string } {
    const unsigned = { v: 1 as const, sid: this.sid, from: this.from, seq: this.seq, prev: this.head, msg };
    const signed = signingBytes(this.crypto, unsigned);
    const sig = this.key.sign(signed);
    const frame: Frame = { ...unsigned, sig: toHex(sig) };
    this.seq += 1;
    this.head = frameHash(this.crypto, signed, sig);
    return { frame, line: JSON.stringify(frame) };
  }
}

export type EnvelopeFailure = { step: 'envelope' | 'sequence' | 'chain' | 'signature'; reason: string };

const HEX64 = /^[0-9a-f]{64}$/;
const HEX128 = /^[0-9a-f]{128}$/;

/** The receiving half: checks each frame of one sender in order. */
export class ChainReader extends Chain {
  constructor(crypto: Crypto, sid: string, from: Role, private readonly publicKey: Uint8Array) {
    super(crypto, sid, from);
  }
  /** Checks a parsed object as the next frame; advances only when it is accepted. */
  accept(x: unknown): { ok: true; frame: Frame } | ({ ok: false } & EnvelopeFailure) {
    const f = x as Partial<Frame>;
    if (typeof x !== 'object' || x === null || Array.isArray(x)) return { ok: false, step: 'envelope', reason: 'a frame must be a JSON object' };
    const keys = Object.keys(x).sort().join(',');
    if (keys !== 'from,msg,prev,seq,sid,sig,v') return { ok: false, step: 'envelope', reason: `a frame has exactly v, sid, from, seq, prev, msg, sig (got ${keys})` };
    if (f.v !== 1 || typeof f.sid !== 'string' || typeof f.seq !== 'number' || typeof f.prev !== 'string' || typeof f.sig !== 'string' || typeof f.msg !== 'object' || f.msg === null || Array.isArray(f.msg))
      return { ok: false, step: 'envelope', reason: 'frame fields have the wrong types' };
    if (f.sid !== this.sid) return { ok: false, step: 'envelope', reason: 'frame belongs to another session' };
    if (f.from !== this.from) return { ok: false, step: 'envelope', reason: `frame claims to be from ${String(f.from)}, not the peer (${this.from})` };
    if (f.seq !== this.seq) return { ok: false, step: 'sequence', reason: `expected frame ${this.seq} of ${this.from}, got ${f.seq} (replayed, dropped or reordered)` };
    if (!HEX64.test(f.prev) || f.prev !== this.head) return { ok: false, step: 'chain', reason: 'prev does not match the hash of the previous frame' };
    if (!HEX128.test(f.sig)) return { ok: false, step: 'signature', reason: 'sig must be 128 lowercase hex' };
    const signed = signingBytes(this.crypto, f as Frame);
    const sig = fromHex(f.sig);
    if (!this.crypto.ed25519Verify(this.publicKey, signed, sig)) return { ok: false, step: 'signature', reason: `signature does not verify under ${this.from}'s key` };
    this.seq += 1;
    this.head = frameHash(this.crypto, signed, sig);
    return { ok: true, frame: f as Frame };
  }
}

/**
 * session_id as the reference computes it (NOTES A7): SHA-256 of the session canonical
 * `post_id:host_pub:guest_pub:protocol_id:nonce`, the string both sides sign in the handshake.
 */
export function sessionCanonical(postId: string, protocolId: string, hostKey: string, guestKey: string, nonce: string): string {
  return `${postId}:${hostKey}:${guestKey}:${protocolId}:${nonce}`;
}

export function sessionId(crypto: Crypto, postId: string, protocolId: string, hostKey: string, guestKey: string, nonce: string): string {
  return toHex(crypto.sha256(utf8(sessionCanonical(postId, protocolId, hostKey, guestKey, nonce))));
}
