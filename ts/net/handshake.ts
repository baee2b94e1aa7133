/**
 * The session handshake of NOTES A7 on a connected line transport, with no file or socket access:
 * the guest's half runs the same in a browser page as on Node.
 */
import type { Crypto, Ed25519Keypair } from '../crypto/backend.js';
import { fromHex, toHex, utf8 } from '../crypto/encoding.js';
import { sessionCanonical, sessionId } from '../engine/frame.js';
import type { ControlMode } from '../hooks/types.js';
import type { SessionProof } from '../registry/client.js';
import type { Invitation } from './invitation.js';
import { DEFAULT_MAX_LINE_BYTES, type LineTransport } from './line-transport.js';

export class HandshakeError extends Error {
  override readonly name = 'HandshakeError';
  constructor(
    readonly code:
      | 'HANDSHAKE_TIMEOUT'
      | 'HANDSHAKE_INVALID'
      | 'HANDSHAKE_KEY_MISMATCH'
      | 'HANDSHAKE_PROTOCOL_MISMATCH'
      | 'HANDSHAKE_BAD_SIGNATURE'
      | 'HANDSHAKE_REFUSED'
      | 'CONNECTION_REFUSED'
      | 'HOST_UNREACHABLE',
    message: string,
  ) {
    super(`${code}: ${message}`);
  }
}

/** Handshake lines are well under 1 KiB; a peer that is not yet authenticated gets no more than this. */
export const HANDSHAKE_MAX_LINE_BYTES = 64 << 10;
export const DEFAULT_HANDSHAKE_TIMEOUT_MS = 10_000;
/** The peer's next handshake line as a JSON object (shared with the iroh transport). */
export async function next(t: LineTransport, timeoutMs: number): Promise<Record<string, unknown>> {
  const r = await t.recv(timeoutMs);
  if (r.line === null)
    throw new HandshakeError('HANDSHAKE_TIMEOUT', r.timedOut ? 'the peer said nothing during the handshake' : 'the peer left during the handshake');
  // The transport hands over a line beyond its limit only to have it refused.
  if (r.line.length > HANDSHAKE_MAX_LINE_BYTES) throw new HandshakeError('HANDSHAKE_INVALID', `a handshake line exceeds ${HANDSHAKE_MAX_LINE_BYTES} bytes`);
  let v: unknown;
  try {
    v = JSON.parse(r.line);
  } catch {
    throw new HandshakeError('HANDSHAKE_INVALID', 'a handshake line is not JSON');
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new HandshakeError('HANDSHAKE_INVALID', 'a handshake line is not a JSON object');
  return v as Record<string, unknown>;
}

/** Sends a handshake line; a peer that is already gone fails the handshake. */
export function say(t: LineTransport, msg: Record<string, unknown>): void {
  try {
    t.send(JSON.stringify(msg));
  } catch {
    throw new HandshakeError('HANDSHAKE_TIMEOUT', 'the peer left during the handshake');
  }
}

export const sigOk = (crypto: Crypto, keyHex: string, sig: unknown, msg: string) =>
  typeof sig === 'string' && /^[0-9a-f]{128}$/.test(sig) && crypto.ed25519Verify(fromHex(keyHex), utf8(msg), fromHex(sig));

/**
 * The guest's half of the handshake on a connected transport, the same on every transport: a signed
 * `_session_init`, the host's `_session_proof` checked against the invitation (key, protocol, signature
 * over the session canonical), the SessionProof handed to `onProof`, then `_session_ready`. Afterwards
 * the transport takes session-sized lines.
 */
export async function guestHandshake(o: {
  crypto: Crypto;
  key: Ed25519Keypair;
  transport: LineTransport;
  invitation: Pick<Invitation, 'post_id' | 'host_public_key' | 'protocol_id'>;
  protocolId: string;
  controlMode: ControlMode;
  timeoutMs: number;
  onProof?: (p: SessionProof) => Promise<void>;
}): Promise<{ sid: string; nonce: string; canonical: string; proof: SessionProof & { guest_signature: string }; hostControlMode: unknown }> {
  const { crypto: c, transport: t, invitation: inv } = o;
  const guestKey = toHex(o.key.publicKey);
  const nonce = toHex(globalThis.crypto.getRandomValues(new Uint8Array(8)));
  const canonical = sessionCanonical(inv.post_id, inv.protocol_id, inv.host_public_key, guestKey, nonce);
  const guestSignature = toHex(o.key.sign(utf8(canonical)));
  say(t, { _session_init: true, guest_public_key: guestKey, session_nonce: nonce, guest_control_mode: o.controlMode, guest_signature: guestSignature });
  const answer = await next(t, o.timeoutMs);
  if (answer['_session_refused'] === true) throw new HandshakeError('HANDSHAKE_REFUSED', String(answer['reason'] ?? 'refused').slice(0, 200));
  if (answer['_session_proof'] !== true) throw new HandshakeError('HANDSHAKE_INVALID', 'expected _session_proof');
  if (answer['host_public_key'] !== inv.host_public_key)
    throw new HandshakeError('HANDSHAKE_KEY_MISMATCH', 'the host key in the handshake differs from the invitation');
  if (answer['protocol_id'] !== inv.protocol_id || inv.protocol_id !== o.protocolId)
    throw new HandshakeError('HANDSHAKE_PROTOCOL_MISMATCH', 'the host runs another protocol than the invitation names');
  if (!sigOk(c, inv.host_public_key, answer['host_signature'], canonical))
    throw new HandshakeError('HANDSHAKE_BAD_SIGNATURE', 'the host signature over the session canonical does not verify');
  const sid = sessionId(c, inv.post_id, inv.protocol_id, inv.host_public_key, guestKey, nonce);
  const proof = {
    post_id: inv.post_id,
    host_public_key: inv.host_public_key,
    guest_public_key: guestKey,
    protocol_id: inv.protocol_id,
    session_nonce: nonce,
    host_signature: answer['host_signature'] as string,
    guest_signature: guestSignature,
  };
  await deliverProof(t, proof, o.onProof);
  say(t, { _session_ready: true, session_id: sid, guest_signature: guestSignature });
  t.setMaxLineBytes(DEFAULT_MAX_LINE_BYTES);
  return { sid, nonce, canonical, proof, hostControlMode: answer['host_control_mode'] };
}

/** Hands the SessionProof to `onProof` (a registry) before `_session_ready`; a failure there ends the join. */
export async function deliverProof(t: LineTransport, proof: SessionProof, onProof?: (p: SessionProof) => Promise<void>): Promise<void> {
  if (!onProof) return;
  try {
    await onProof(proof);
  } catch (e) {
    t.close();
    throw e;
  }
}
