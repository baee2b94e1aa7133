/**
 * Two agents in two processes: the host serves one session for an invitation, the guest joins it.
 * Before the engine starts, the session handshake of NOTES A7 binds the session to both keys:
 * `_session_init` (guest key, nonce) → `_session_proof` (host key, its signature over the session
 * canonical, protocol_id) → `_session_ready` (session_id, the guest's signature over the same canonical).
 */
import './polyfill.js';
import { peerIdFromString } from '@libp2p/peer-id';
import { multiaddr } from '@multiformats/multiaddr';
import type { Libp2p } from 'libp2p';
import { writeFileSync, mkdirSync } from 'node:fs';
import { join as joinPath } from 'node:path';
import type { Crypto } from '../crypto/backend.js';
import { fromHex, toHex, utf8 } from '../crypto/encoding.js';
import { sessionCanonical, sessionId } from '../engine/frame.js';
import { runSession, type SessionResult } from '../engine/session.js';
import type { ControlMode, HooksModule, Message, Role } from '../hooks/types.js';
import type { Spec } from '../spec/types.js';
import { createInvitation, encodeInvitation, type Invitation } from './invitation.js';
import { LineTransport, type ByteStream } from './line-transport.js';
import { createNode, peerKeyHex, SESSION_PROTOCOL } from './node.js';

export interface Protocol {
  spec: Spec;
  specText: string;
  protocolId: string;
  hooks: HooksModule;
}

export interface NetSessionOptions {
  crypto: Crypto;
  seed: Uint8Array;
  protocol: Protocol;
  options: Record<string, unknown>;
  sessionsDir: string;
  controlMode?: ControlMode;
  timeoutMs?: number;
  heartbeatIntervalMs?: number;
  onMessage?: (from: Role, msg: Message) => void;
  onEvent?: (type: string, data: Record<string, unknown>) => void;
}

export class HandshakeError extends Error {
  override readonly name = 'HandshakeError';
  constructor(
    readonly code: 'HANDSHAKE_TIMEOUT' | 'HANDSHAKE_INVALID' | 'HANDSHAKE_KEY_MISMATCH' | 'HANDSHAKE_PROTOCOL_MISMATCH' | 'HANDSHAKE_BAD_SIGNATURE' | 'HANDSHAKE_REFUSED',
    message: string,
  ) {
    super(`${code}: ${message}`);
  }
}

async function next(t: LineTransport, timeoutMs: number): Promise<Record<string, unknown>> {
  const r = await t.recv(timeoutMs);
  if (r.line === null) throw new HandshakeError('HANDSHAKE_TIMEOUT', r.timedOut ? 'the peer said nothing during the handshake' : 'the peer left during the handshake');
  try {
    return JSON.parse(r.line) as Record<string, unknown>;
  } catch {
    throw new HandshakeError('HANDSHAKE_INVALID', 'a handshake line is not JSON');
  }
}

const sigOk = (crypto: Crypto, keyHex: string, sig: unknown, msg: string) =>
  typeof sig === 'string' && /^[0-9a-f]{128}$/.test(sig) && crypto.ed25519Verify(fromHex(keyHex), utf8(msg), fromHex(sig));

function saveHandshake(dir: string, record: Record<string, unknown>): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileSync(joinPath(dir, 'handshake.json'), `${JSON.stringify(record, null, 2)}\n`);
}

export interface HostHandle {
  invitation: Invitation;
  text: string;
  node: Libp2p;
  /** Resolves when the session (with the first guest) ends. */
  done: Promise<SessionResult>;
  stop(): Promise<void>;
}

/** Starts a node, publishes an invitation and serves one session: the first guest to finish the handshake. */
export async function host(
  o: NetSessionOptions & {
    listen?: string[];
    ttlMinutes?: number;
    type?: Invitation['type'];
    /** Serve every guest that presents the invitation until it expires, each in its own session. */
    daemon?: boolean;
    onSession?: (r: SessionResult) => void;
  },
): Promise<HostHandle> {
  const c = o.crypto;
  const key = c.ed25519Keypair(o.seed);
  const node = await createNode(o.seed, o.listen);
  const ticket = { peer_id: node.peerId.toString(), addrs: node.getMultiaddrs().map(String) };
  const invitation = createInvitation(c, { host: key, protocolId: o.protocol.protocolId, ticket, options: o.options, ttlMinutes: o.ttlMinutes ?? 30, controlMode: o.controlMode ?? 'autonomous', ...(o.type && { type: o.type }) });
  const hostKey = toHex(key.publicKey);
  let paired = false;
  let settle!: (r: SessionResult) => void;
  let fail!: (e: unknown) => void;
  const done = new Promise<SessionResult>((a, b) => {
    settle = a;
    fail = b;
  });
  await node.handle(SESSION_PROTOCOL, async (stream: unknown, connection?: { remotePeer?: { publicKey?: { raw: Uint8Array } } }) => {
    const s = stream as ByteStream & { remotePeer?: unknown };
    const t = new LineTransport(s, { heartbeatIntervalMs: o.heartbeatIntervalMs ?? 10_000, onEvent: (type, data) => o.onEvent?.(type, data) });
    if (paired && !o.daemon) {
      // A second guest racing for the same invitation is told so and let go.
      t.send(JSON.stringify({ _session_refused: true, reason: 'invitation already paired' }));
      t.close();
      return;
    }
    let mine = false;
    try {
      const init = await next(t, o.timeoutMs ?? 30_000);
      const guestKey = init['guest_public_key'];
      const nonce = init['session_nonce'];
      if (init['_session_init'] !== true || typeof guestKey !== 'string' || !/^[0-9a-f]{64}$/.test(guestKey) || typeof nonce !== 'string' || !/^[0-9a-f]{16,64}$/.test(nonce))
        throw new HandshakeError('HANDSHAKE_INVALID', 'expected _session_init with guest_public_key and session_nonce');
      const remote = peerKeyHex((connection as { remotePeer?: { publicKey?: { raw: Uint8Array } } } | undefined)?.remotePeer ?? {});
      if (remote && remote !== guestKey) throw new HandshakeError('HANDSHAKE_KEY_MISMATCH', 'the guest_public_key is not the key its connection is authenticated with');
      if (paired && !o.daemon) {
        t.send(JSON.stringify({ _session_refused: true, reason: 'invitation already paired' }));
        t.close();
        return;
      }
      if (o.daemon && Date.parse(invitation.expires_at) <= Date.now()) {
        t.send(JSON.stringify({ _session_refused: true, reason: 'invitation expired' }));
        t.close();
        return;
      }
      paired = true;
      mine = true;
      const canonical = sessionCanonical(invitation.post_id, o.protocol.protocolId, hostKey, guestKey, nonce);
      const hostSignature = toHex(key.sign(utf8(canonical)));
      t.send(JSON.stringify({ _session_proof: true, host_public_key: hostKey, host_signature: hostSignature, protocol_id: o.protocol.protocolId, host_control_mode: o.controlMode ?? 'autonomous' }));
      const ready = await next(t, o.timeoutMs ?? 30_000);
      const sid = sessionId(c, invitation.post_id, o.protocol.protocolId, hostKey, guestKey, nonce);
      if (ready['_session_ready'] !== true || ready['session_id'] !== sid) throw new HandshakeError('HANDSHAKE_INVALID', 'the guest\'s session_id does not match');
      if (!sigOk(c, guestKey, ready['guest_signature'], canonical)) throw new HandshakeError('HANDSHAKE_BAD_SIGNATURE', 'the guest signature over the session canonical does not verify');
      const dir = joinPath(o.sessionsDir, sid.slice(0, 16), 'host');
      saveHandshake(dir, { canonical, session_id: sid, host_signature: hostSignature, guest_signature: ready['guest_signature'] });
      o.onEvent?.('connected', { session_id: sid, guest_public_key: guestKey });
      const result = await runSession({
        crypto: c, role: 'host', spec: o.protocol.spec, specText: o.protocol.specText, protocolId: o.protocol.protocolId, hooks: o.protocol.hooks, options: o.options,
        transport: t, key, hostKey, guestKey, sid, postId: invitation.post_id, nonce, stateDir: dir, controlMode: o.controlMode ?? 'autonomous',
        ...(o.timeoutMs !== undefined && { timeoutMs: o.timeoutMs }), ...(o.onMessage && { onMessage: o.onMessage }),
      });
      if (o.daemon) o.onSession?.(result);
      else settle(result);
    } catch (e) {
      t.close();
      if (e instanceof HandshakeError) {
        o.onEvent?.('handshake_failed', { code: e.code, message: e.message });
        if (!mine) return; // keep waiting for a proper guest
        paired = false; // the guest that claimed the invitation failed its handshake: let another try
        return;
      }
      fail(e);
    }
  }, { runOnLimitedConnection: false });
  return {
    invitation,
    text: encodeInvitation(c, invitation),
    node,
    done,
    stop: async () => {
      key.dispose();
      await node.stop();
    },
  };
}

/** Joins the session an invitation offers (already parsed and verified by parseInvitation). */
export async function join(o: NetSessionOptions & { invitation: Invitation }): Promise<SessionResult> {
  const c = o.crypto;
  const inv = o.invitation;
  const key = c.ed25519Keypair(o.seed);
  const guestKey = toHex(key.publicKey);
  // The ticket's peer id must be the invitation's host key: libp2p's Noise handshake then proves the
  // connection reaches the holder of that key.
  const expected = peerIdFromString(inv.ticket.peer_id);
  if (peerKeyHex(expected as never) !== inv.host_public_key) throw new HandshakeError('HANDSHAKE_KEY_MISMATCH', 'the ticket peer id is not the invitation host key');
  const node = await createNode(o.seed, []);
  try {
    let stream: unknown;
    let lastError: unknown;
    for (const a of inv.ticket.addrs) {
      try {
        const addr = a.includes('/p2p/') ? a : `${a}/p2p/${inv.ticket.peer_id}`;
        stream = await node.dialProtocol(multiaddr(addr), SESSION_PROTOCOL);
        break;
      } catch (e) {
        lastError = e;
      }
    }
    if (!stream) throw new HandshakeError('HANDSHAKE_TIMEOUT', `cannot reach the host: ${(lastError as Error)?.message ?? 'no address'}`);
    const conn = node.getConnections(expected)[0];
    if (!conn || peerKeyHex(conn.remotePeer as never) !== inv.host_public_key) throw new HandshakeError('HANDSHAKE_KEY_MISMATCH', 'the connected peer is not the invitation host');
    const t = new LineTransport(stream as ByteStream, { heartbeatIntervalMs: o.heartbeatIntervalMs ?? 10_000, onEvent: (type, data) => o.onEvent?.(type, data) });
    const nonce = toHex(globalThis.crypto.getRandomValues(new Uint8Array(8)));
    t.send(JSON.stringify({ _session_init: true, guest_public_key: guestKey, session_nonce: nonce, guest_control_mode: o.controlMode ?? 'autonomous' }));
    const proof = await next(t, o.timeoutMs ?? 30_000);
    if (proof['_session_refused'] === true) throw new HandshakeError('HANDSHAKE_REFUSED', String(proof['reason'] ?? 'refused'));
    if (proof['_session_proof'] !== true) throw new HandshakeError('HANDSHAKE_INVALID', 'expected _session_proof');
    if (proof['host_public_key'] !== inv.host_public_key) throw new HandshakeError('HANDSHAKE_KEY_MISMATCH', 'the host key differs from the invitation');
    if (proof['protocol_id'] !== inv.protocol_id || inv.protocol_id !== o.protocol.protocolId) throw new HandshakeError('HANDSHAKE_PROTOCOL_MISMATCH', 'the host runs another protocol than the invitation names');
    const canonical = sessionCanonical(inv.post_id, inv.protocol_id, inv.host_public_key, guestKey, nonce);
    if (!sigOk(c, inv.host_public_key, proof['host_signature'], canonical)) throw new HandshakeError('HANDSHAKE_BAD_SIGNATURE', 'the host signature over the session canonical does not verify');
    const sid = sessionId(c, inv.post_id, inv.protocol_id, inv.host_public_key, guestKey, nonce);
    const guestSignature = toHex(key.sign(utf8(canonical)));
    t.send(JSON.stringify({ _session_ready: true, session_id: sid, guest_signature: guestSignature }));
    const dir = joinPath(o.sessionsDir, sid.slice(0, 16), 'guest');
    saveHandshake(dir, { canonical, session_id: sid, host_signature: proof['host_signature'], guest_signature: guestSignature });
    o.onEvent?.('connected', { session_id: sid, host_public_key: inv.host_public_key });
    return await runSession({
      crypto: c, role: 'guest', spec: o.protocol.spec, specText: o.protocol.specText, protocolId: o.protocol.protocolId, hooks: o.protocol.hooks, options: inv.options,
      transport: t, key, hostKey: inv.host_public_key, guestKey, sid, postId: inv.post_id, nonce, stateDir: dir, controlMode: o.controlMode ?? 'autonomous',
      ...(o.timeoutMs !== undefined && { timeoutMs: o.timeoutMs }), ...(o.onMessage && { onMessage: o.onMessage }),
    });
  } finally {
    key.dispose();
    await node.stop();
  }
}
