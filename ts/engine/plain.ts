/**
 * The reference's unsigned per-message profile (NOTES A7, A11): on the wire a protocol message is a
 * bare JSON object with an `action`, with no signature, sequence or chain. The engine still keeps its
 * signed transcript: this side's own messages are signed frames of its chain as on the signed path,
 * and each message the peer sent is recorded as a *witness* frame — a frame `from` the peer, in a chain
 * of its own, signed by this side's key. A witness frame proves only what this side says it received,
 * in which order relative to what it sent; the transcript header says `wire: "plain"` so that a
 * verifier checks the peer chain under the writer's key and never reads it as the peer's signature.
 */
import type { Crypto, Ed25519Keypair } from '../crypto/backend.js';
import type { Message, Role } from '../hooks/types.js';
import { ChainWriter } from './frame.js';

export type Wire = 'signed' | 'plain';

export type PlainInbound = { ok: true; msg: Message; line: string } | { ok: false; reason: string };

/** Records the peer's bare messages as witness frames signed by this side. */
export class PlainWitness {
  private readonly chain: ChainWriter;
  constructor(crypto: Crypto, sid: string, peer: Role, key: Ed25519Keypair) {
    this.chain = new ChainWriter(crypto, sid, peer, key);
  }
  get head(): string {
    return this.chain.head;
  }
  get count(): number {
    return this.chain.count;
  }
  indexOf(hash: string): number | undefined {
    return this.chain.indexOf(hash);
  }
  /**
   * Witnesses one parsed wire message. `ack` is this side's own chain head: the witness frame then
   * shows which of this side's frames had been sent when the message arrived.
   */
  accept(value: unknown, ack: string): PlainInbound {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return { ok: false, reason: 'a message must be a JSON object' };
    const msg = value as Message;
    if (typeof msg.action !== 'string' || msg.action === '') return { ok: false, reason: 'a message needs a string action' };
    // Engine control frames (_receipt, _abort) belong to the signed profile; a bare one is not the peer's to send.
    if (msg.action.startsWith('_')) return { ok: false, reason: `${msg.action} is not a protocol message` };
    const { line } = this.chain.next(msg, ack);
    return { ok: true, msg, line };
  }
}

/** The wire form of a message this side sends: the bare message, or nothing for engine-only frames. */
export function plainWireLine(msg: Message): string | undefined {
  return msg.action.startsWith('_') ? undefined : JSON.stringify(msg);
}
