/**
 * Signed, hash-chained frames: beyond the reference (which leaves 1:1 messages unsigned), every
 * protocol message travels as
 *
 *   {"v":2,"sid":…,"from":"host"|"guest","seq":n,"prev":<64 hex>,"ack":<64 hex>,"msg":{…},"sig":<128 hex>}
 *
 * one compact JSON object per line. Each sender keeps its own chain: `seq` counts its frames from 0 and
 * `prev` is the hash of its previous frame (a genesis hash for the first), so a replayed, dropped,
 * reordered or re-signed frame is caught, and both sides may send at once (free mode). `ack` is the
 * hash of the latest frame the sender had accepted from its peer (the peer's genesis hash before any):
 * it ties the two chains into one causal history, so a transcript cannot move one party's frames
 * past frames the other party had or had not yet seen. `sig` is the sender's Ed25519 signature over
 * "aigenora-frame/2\n" + JCS(frame without sig); a frame's hash is SHA-256 of those signed bytes
 * followed by the 64 signature bytes, so neither side canonicalizes a frame twice. Every message is
 * therefore attributable to its sender and checkable afterwards by anyone holding the transcript.
 */
import type { Crypto, Ed25519Keypair } from '../crypto/backend.js';
import { concatBytes, fromHex, toHex, utf8 } from '../crypto/encoding.js';
import type { Message, Role } from '../hooks/types.js';

export interface Frame {
  v: 2;
  sid: string;
  from: Role;
  seq: number;
  prev: string;
  /** Hash of the latest peer frame the sender had accepted (the peer's genesis hash before any). */
  ack: string;
  msg: Message;
  sig: string;
}

export const FRAME_VERSION = 2;
const SIGN_PREFIX = utf8('aigenora-frame/2\n');
const other = (r: Role): Role => (r === 'host' ? 'guest' : 'host');

export function genesis(crypto: Crypto, sid: string, from: Role): string {
  return toHex(crypto.sha256(utf8(`aigenora-chain/1\n${sid}\n${from}`)));
}

export function signingBytes(crypto: Crypto, f: Omit<Frame, 'sig'>): Uint8Array {
  const { v, sid, from, seq, prev, ack, msg } = f;
  // Plain JSON.stringify (no refusing replacer): every msg here either came from strict JSON text or
  // passed the spec's validator, so it holds no NaN, Infinity or bigint; the strict JCS pass still
  // refuses duplicate keys and lone surrogates.
  return concatBytes(SIGN_PREFIX, crypto.jcs(JSON.stringify({ v, sid, from, seq, prev, ack, msg })));
}

/** SHA-256(signing bytes || signature bytes): the link the next frame's `prev` names. */
export function frameHash(crypto: Crypto, signed: Uint8Array, sig: Uint8Array): string {
  return toHex(crypto.sha256(concatBytes(signed, sig)));
}

/** The hash of a parsed frame (its signature assumed well-formed hex). */
export function hashOf(crypto: Crypto, f: Frame): string {
  return frameHash(crypto, signingBytes(crypto, f), fromHex(f.sig));
}

/**
 * One sender's chain position: how many frames so far, the hash the next one must name, and the hash
 * of every frame so far (what the peer's acks may name).
 */
abstract class Chain {
  protected seq = 0;
  head: string;
  readonly genesis: string;
  private readonly hashes = new Map<string, number>();
  constructor(
    protected readonly crypto: Crypto,
    readonly sid: string,
    readonly from: Role,
  ) {
    this.head = this.genesis = genesis(crypto, sid, from);
  }
  get count(): number {
    return this.seq;
  }
  /** The seq of the frame with this hash, -1 for the genesis hash, undefined for any other. */
  indexOf(hash: string): number | undefined {
    return hash === this.genesis ? -1 : this.hashes.get(hash);
  }
  protected advance(hash: string): void {
    this.hashes.set(hash, this.seq);
    this.seq += 1;
    this.head = hash;
  }
}

/** The sending half of a chain. */
export class ChainWriter extends Chain {
  constructor(
    crypto: Crypto,
    sid: string,
    from: Role,
    private readonly key: Ed25519Keypair,
  ) {
    super(crypto, sid, from);
  }
  /**
   * Signs the next frame and advances the chain; returns the frame and its wire line. `ack` is the
   * head of the peer's chain as this side accepted it (default: nothing accepted yet).
   */
  next(msg: Message, ack: string = genesis(this.crypto, this.sid, other(this.from))): { frame: Frame; line: string; hash: string } {
    const unsigned = { v: FRAME_VERSION as 2, sid: this.sid, from: this.from, seq: this.seq, prev: this.head, ack, msg };
    const signed = signingBytes(this.crypto, unsigned);
    const sig = this.key.sign(signed);
    const frame: Frame = { ...unsigned, sig: toHex(sig) };
    const hash = frameHash(this.crypto, signed, sig);
    this.advance(hash);
    return { frame, line: JSON.stringify(frame), hash };
  }
}

export type EnvelopeFailure = { step: 'envelope' | 'sequence' | 'chain' | 'ack' | 'signature'; reason: string };

const HEX64 = /^[0-9a-f]{64}$/;
const HEX128 = /^[0-9a-f]{128}$/;
const FRAME_KEYS = 'ack,from,msg,prev,seq,sid,sig,v';

/** The chain a reader's acks point into: the other side's frames so far. */
export interface AckTarget {
  readonly from: Role;
  indexOf(hash: string): number | undefined;
}

/**
 * The receiving half: checks each frame of one sender in order. With `acked` (the chain the sender's
 * acks name: this side's own writer, or in a verifier the other sender's reader), every ack must name
 * a frame of that chain already there, and never an older one than the sender's previous ack.
 */
export class ChainReader extends Chain {
  /** The seq of the frame the sender's latest ack named (-1: none yet). */
  lastAck = -1;
  constructor(
    crypto: Crypto,
    sid: string,
    from: Role,
    private readonly publicKey: Uint8Array,
    private readonly acked?: AckTarget,
  ) {
    super(crypto, sid, from);
  }
  /** Checks a parsed object as the next frame; advances only when it is accepted. */
  accept(x: unknown): { ok: true; frame: Frame; hash: string; acks: number } | ({ ok: false } & EnvelopeFailure) {
    if (typeof x !== 'object' || x === null || Array.isArray(x)) return { ok: false, step: 'envelope', reason: 'a frame must be a JSON object' };
    const f = x as Partial<Frame>;
    const keys = Object.keys(x).sort().join(',');
    if (f.v !== FRAME_VERSION && keys !== FRAME_KEYS)
      return { ok: false, step: 'envelope', reason: `frame version ${JSON.stringify(f.v)} is not ${FRAME_VERSION}` };
    if (keys !== FRAME_KEYS) return { ok: false, step: 'envelope', reason: `a frame has exactly v, sid, from, seq, prev, ack, msg, sig (got ${keys})` };
    if (
      f.v !== FRAME_VERSION ||
      typeof f.sid !== 'string' ||
      typeof f.seq !== 'number' ||
      typeof f.prev !== 'string' ||
      typeof f.ack !== 'string' ||
      typeof f.sig !== 'string' ||
      typeof f.msg !== 'object' ||
      f.msg === null ||
      Array.isArray(f.msg) ||
      typeof (f.msg as { action?: unknown }).action !== 'string'
    )
      return { ok: false, step: 'envelope', reason: 'frame fields have the wrong types' };
    if (f.sid !== this.sid) return { ok: false, step: 'envelope', reason: 'frame belongs to another session' };
    if (f.from !== this.from) return { ok: false, step: 'envelope', reason: `frame claims to be from ${String(f.from)}, not the peer (${this.from})` };
    if (f.seq !== this.seq)
      return { ok: false, step: 'sequence', reason: `expected frame ${this.seq} of ${this.from}, got ${f.seq} (replayed, dropped or reordered)` };
    if (!HEX64.test(f.prev) || f.prev !== this.head) return { ok: false, step: 'chain', reason: 'prev does not match the hash of the previous frame' };
    let acks = -1;
    if (this.acked) {
      const k = HEX64.test(f.ack) ? this.acked.indexOf(f.ack) : undefined;
      if (k === undefined)
        return { ok: false, step: 'ack', reason: `frame ${f.seq} of ${this.from} acknowledges a ${this.acked.from} frame that does not precede it` };
      if (k < this.lastAck)
        return {
          ok: false,
          step: 'ack',
          reason: `frame ${f.seq} of ${this.from} acknowledges ${this.acked.from} frame ${k}, older than the ${this.lastAck} it had acknowledged`,
        };
      acks = k;
    } else if (!HEX64.test(f.ack)) return { ok: false, step: 'ack', reason: 'ack must be 64 lowercase hex' };
    if (!HEX128.test(f.sig)) return { ok: false, step: 'signature', reason: 'sig must be 128 lowercase hex' };
    const signed = signingBytes(this.crypto, f as Frame);
    const sig = fromHex(f.sig);
    if (!this.crypto.ed25519Verify(this.publicKey, signed, sig))
      return { ok: false, step: 'signature', reason: `signature does not verify under ${this.from}'s key` };
    const hash = frameHash(this.crypto, signed, sig);
    this.advance(hash);
    this.lastAck = acks;
    return { ok: true, frame: f as Frame, hash, acks };
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

/**
 * The first integer beyond ±(2^53 − 1) in a message, as a JSON pointer and its digits. Frames are signed
 * over RFC 8785, whose numbers are IEEE doubles: 2^53 + 1 is signed as 2^53 (its literal would be
 * unsigned text anyone could change), and 10^21 is written 1e+21 where the reference's commitments read
 * its digits. So the engine refuses such integers both ways, rather than sign, commit to or act on a
 * value the two sides would read differently. The validator gives them as bigint (exact); a hook's own
 * message holds them as numbers.
 */
export function unsignableInteger(value: unknown, at = ''): { pointer: string; digits: string } | undefined {
  const path: string[] = [];
  const digits = unsignableDigits(value, path);
  if (digits === undefined) return undefined;
  const pointer =
    at +
    path
      .reverse()
      .map((k) => `/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`)
      .join('');
  return { pointer: pointer || '/', digits };
}

/** The digits of the first unsignable integer in `value`, its keys pushed on `path` innermost first (the pointer is built only for a hit). */
function unsignableDigits(value: unknown, path: string[]): string | undefined {
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number') return Number.isInteger(value) && !Number.isSafeInteger(value) ? BigInt(value).toString() : undefined;
  if (typeof value !== 'object' || value === null) return undefined;
  for (const [k, v] of Object.entries(value)) {
    const digits = unsignableDigits(v, path);
    if (digits !== undefined) {
      path.push(k);
      return digits;
    }
  }
  return undefined;
}
