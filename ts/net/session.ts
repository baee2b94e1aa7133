/**
 * Two agents in two processes: the host serves one session for an invitation, the guest joins it.
 * Before the engine starts, the session handshake of NOTES A7 binds the session to both keys:
 * `_session_init` (guest key, nonce) → `_session_proof` (host key, its signature over the session
 * canonical, protocol_id) → `_session_ready` (session_id, the guest's signature over the same canonical).
 * Beyond A7, `_session_init` already carries the guest's signature: the guest can compute the
 * canonical from the invitation, and the host then gives its single slot only to a peer that holds
 * the invitation, not to anyone who found the port.
 */
import './polyfill.js';
import type { Multiaddr } from '@multiformats/multiaddr';
import type { Libp2p } from 'libp2p';
import { writeFileSync, mkdirSync } from 'node:fs';
import { ensureWritableDir } from '../files/write.js';
import { join as joinPath } from 'node:path';
import type { Crypto } from '../crypto/backend.js';
import type { SessionProof } from '../registry/client.js';
import { toHex, utf8 } from '../crypto/encoding.js';
import { sessionCanonical, sessionId } from '../engine/frame.js';
import { runSession, type SessionResult } from '../engine/session.js';
import type { Window } from '../engine/decision-window.js';
import type { ControlMode, HooksModule, Message, Role } from '../hooks/types.js';
import type { Spec } from '../spec/types.js';
import { createInvitation, encodeInvitation, type Invitation, type Ticket } from './invitation.js';
import { SocketGuard, type GuardLimits } from './guard.js';
import { DEFAULT_MAX_LINE_BYTES, LineTransport, type ByteStream } from './line-transport.js';
import { DEFAULT_HANDSHAKE_TIMEOUT_MS, guestHandshake, HANDSHAKE_MAX_LINE_BYTES, HandshakeError, next, say, sigOk } from './handshake.js';
import { dialHost } from './dial.js';
import { createNode, DEFAULT_LISTEN, ipAndPort, peerKeyHex, SESSION_PROTOCOL, sessionStream } from './node.js';

export interface Protocol {
  spec: Spec;
  specText: string;
  protocolId: string;
  hooks: HooksModule;
  /** authoritative_realtime: the protocol folder's ruleset hash (default: over spec.json alone). */
  rulesetHash?: string;
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
  /** A decision window opened on one session side (hybrid and human control); `dir` is that side's directory. */
  onDecisionWindow?: (w: Window, dir: string) => void;
}

/** The engine's window callback for the side in `dir`: who answers must know where to write. */
export function decisionWindowFor(o: Pick<NetSessionOptions, 'onDecisionWindow'>, dir: string): { onDecisionWindow?: (w: Window) => void } {
  const show = o.onDecisionWindow;
  return show ? { onDecisionWindow: (w) => show(w, dir) } : {};
}

/** The host's own end: its invitation expired before any guest completed the handshake. */
export class HostError extends Error {
  override readonly name = 'HostError';
  constructor(
    readonly code: 'INVITATION_EXPIRED',
    message: string,
  ) {
    super(`${code}: ${message}`);
  }
}

export const DEFAULT_MAX_SESSIONS = 8;

export function saveHandshake(dir: string, record: Record<string, unknown>): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileSync(joinPath(dir, 'handshake.json'), `${JSON.stringify(record, null, 2)}\n`);
}

/** Calls `fn` at `when` (epoch ms), however far away (setTimeout alone overflows past 24.8 days). */
function at(when: number, fn: () => void): { clear(): void } {
  let timer: ReturnType<typeof setTimeout>;
  const arm = () => {
    const left = when - Date.now();
    timer = left > 0 ? setTimeout(arm, Math.min(left, 2 ** 31 - 1)) : setTimeout(fn, 0);
  };
  arm();
  return { clear: () => clearTimeout(timer) };
}

export interface HostHandle {
  invitation: Invitation;
  text: string;
  node: Libp2p;
  guard: SocketGuard;
  /**
   * Without `daemon`: the session with the guest, or a HostError INVITATION_EXPIRED when the
   * invitation expires before a guest completes the handshake. With `daemon`: never settles.
   */
  done: Promise<SessionResult>;
  /** Resolves when the invitation expires (from then on every guest is refused). */
  expired: Promise<void>;
  /** Sessions running or being set up now. */
  active(): number;
  /** Resolves once no session is running or being set up. */
  idle(): Promise<void>;
  stop(): Promise<void>;
}

type Connection = { remotePeer?: { publicKey?: { raw: Uint8Array } }; remoteAddr?: Multiaddr };

/**
 * Starts a node, publishes an invitation and serves one session: the first guest whose signed
 * `_session_init` arrives (with `daemon`, every guest until the invitation expires, at most
 * `maxSessions` at a time). The `_session_init` must be signed by the key the connection is
 * authenticated with, over the session canonical, which names the invitation's post_id: a peer that
 * only knows IP:port cannot take the slot. Each step of the handshake has `handshakeTimeoutMs`.
 */
export async function host(
  o: NetSessionOptions & {
    listen?: string[];
    ttlMinutes?: number;
    type?: Invitation['type'];
    /** Serve every guest that presents the invitation until it expires, each in its own session. */
    daemon?: boolean;
    /** With `daemon`: sessions at once; more guests are refused as busy. */
    maxSessions?: number;
    /** Each handshake step, and (for the socket guard) accept to authenticated session. */
    handshakeTimeoutMs?: number;
    guardLimits?: Partial<Omit<GuardLimits, 'deadlineMs'>>;
    onSession?: (r: SessionResult) => void;
    /** A registry: given the ticket, answers the post_id sessions are then bound to. */
    publish?: (ticket: Ticket) => Promise<{ postId: string }>;
  },
): Promise<HostHandle> {
  const c = o.crypto;
  // A guest who arrives must find a place for its session: check before the invitation is published.
  ensureWritableDir(o.sessionsDir, 'sessions directory');
  const handshakeMs = o.handshakeTimeoutMs ?? DEFAULT_HANDSHAKE_TIMEOUT_MS;
  const maxSessions = o.daemon ? (o.maxSessions ?? DEFAULT_MAX_SESSIONS) : 1;
  const guard = new SocketGuard({ ...o.guardLimits, deadlineMs: handshakeMs });
  const key = c.ed25519Keypair(o.seed);
  let node: Libp2p;
  try {
    node = await createNode(o.seed, { listen: o.listen ?? DEFAULT_LISTEN, guard, crypto: c });
  } catch (e) {
    key.dispose();
    throw e;
  }
  const ticket = { peer_id: node.peerId.toString(), addrs: node.getMultiaddrs().map(String) };
  let invitation: Invitation;
  try {
    const published = o.publish ? await o.publish(ticket) : undefined;
    invitation = createInvitation(c, {
      host: key,
      protocolId: o.protocol.protocolId,
      ticket,
      options: o.options,
      ttlMinutes: o.ttlMinutes ?? 30,
      controlMode: o.controlMode ?? 'autonomous',
      ...(o.type && { type: o.type }),
      ...(published && { postId: published.postId }),
    });
  } catch (e) {
    key.dispose();
    await node.stop();
    throw e;
  }
  const hostKey = toHex(key.publicKey);
  const emit = (type: string, data: Record<string, unknown>) => {
    try {
      o.onEvent?.(type, data);
    } catch {
      // a reporting callback must not end the host
    }
  };

  let settle!: (r: SessionResult) => void;
  let fail!: (e: unknown) => void;
  const done = new Promise<SessionResult>((a, b) => {
    settle = a;
    fail = b;
  });
  done.catch(() => undefined); // with `daemon` nobody awaits it

  // The slot: claimed by a signed _session_init, released if that guest's handshake fails; without
  // `daemon`, kept once a session has started.
  let claimed = 0;
  let startedOnce = false;
  let isExpired = false;
  let idleWaiters: (() => void)[] = [];
  const release = () => {
    claimed--;
    if (claimed === 0) {
      for (const w of idleWaiters) w();
      idleWaiters = [];
    }
    if (!o.daemon && !startedOnce && isExpired)
      fail(new HostError('INVITATION_EXPIRED', `the invitation expired at ${invitation.expires_at} before a guest completed the handshake`));
  };
  const unavailable = (): string | undefined => {
    if (isExpired) return 'invitation expired';
    if (!o.daemon && (startedOnce || claimed > 0)) return 'invitation already paired';
    if (claimed >= maxSessions) return 'host busy';
    return undefined;
  };

  let expire!: () => void;
  const expired = new Promise<void>((resolve) => (expire = resolve));
  const expiry = at(Date.parse(invitation.expires_at), () => {
    isExpired = true;
    expire();
    if (!o.daemon && !startedOnce && claimed === 0)
      fail(new HostError('INVITATION_EXPIRED', `the invitation expired at ${invitation.expires_at} and no guest joined`));
  });

  const serve = async (stream: unknown, connection: Connection | undefined): Promise<void> => {
    const t = new LineTransport(sessionStream(stream as ByteStream), {
      maxLineBytes: HANDSHAKE_MAX_LINE_BYTES,
      heartbeatIntervalMs: o.heartbeatIntervalMs ?? 10_000,
      onEvent: emit,
    });
    const refuse = (reason: string) => {
      try {
        t.send(JSON.stringify({ _session_refused: true, reason }));
      } catch {
        // already gone
      }
      t.close();
    };
    let mine = false;
    let started = false;
    try {
      const no = unavailable();
      if (no) return refuse(no);
      const init = await next(t, handshakeMs);
      const guestKey = init['guest_public_key'];
      const nonce = init['session_nonce'];
      if (
        init['_session_init'] !== true ||
        typeof guestKey !== 'string' ||
        !/^[0-9a-f]{64}$/.test(guestKey) ||
        typeof nonce !== 'string' ||
        !/^[0-9a-f]{16,64}$/.test(nonce)
      )
        throw new HandshakeError('HANDSHAKE_INVALID', 'expected _session_init with guest_public_key, session_nonce and guest_signature');
      if (peerKeyHex(connection?.remotePeer ?? {}) !== guestKey)
        throw new HandshakeError('HANDSHAKE_KEY_MISMATCH', 'the guest_public_key is not the key its connection is authenticated with');
      const canonical = sessionCanonical(invitation.post_id, o.protocol.protocolId, hostKey, guestKey, nonce);
      if (!sigOk(c, guestKey, init['guest_signature'], canonical))
        throw new HandshakeError('HANDSHAKE_BAD_SIGNATURE', "the _session_init is not signed over this invitation's session canonical");
      const now = unavailable();
      if (now) return refuse(now);
      claimed++;
      mine = true;
      const hostSignature = toHex(key.sign(utf8(canonical)));
      say(t, {
        _session_proof: true,
        host_public_key: hostKey,
        host_signature: hostSignature,
        protocol_id: o.protocol.protocolId,
        host_control_mode: o.controlMode ?? 'autonomous',
      });
      const ready = await next(t, handshakeMs);
      const sid = sessionId(c, invitation.post_id, o.protocol.protocolId, hostKey, guestKey, nonce);
      if (ready['_session_ready'] !== true || ready['session_id'] !== sid)
        throw new HandshakeError('HANDSHAKE_INVALID', "the guest's session_id does not match");
      if (!sigOk(c, guestKey, ready['guest_signature'], canonical))
        throw new HandshakeError('HANDSHAKE_BAD_SIGNATURE', 'the guest signature over the session canonical does not verify');
      started = true;
      startedOnce = true;
      const endpoint = connection?.remoteAddr && ipAndPort(connection.remoteAddr);
      if (!endpoint || !guard.authenticate(endpoint.address, endpoint.port))
        emit('warning', { message: `no guarded socket matches ${String(connection?.remoteAddr)}: the handshake deadline may end this session` });
      t.setMaxLineBytes(DEFAULT_MAX_LINE_BYTES);
      const dir = joinPath(o.sessionsDir, sid.slice(0, 16), 'host');
      saveHandshake(dir, { canonical, session_id: sid, host_signature: hostSignature, guest_signature: ready['guest_signature'] });
      emit('connected', { session_id: sid, guest_public_key: guestKey });
      const result = await runSession({
        crypto: c,
        role: 'host',
        spec: o.protocol.spec,
        specText: o.protocol.specText,
        protocolId: o.protocol.protocolId,
        hooks: o.protocol.hooks,
        options: o.options,
        ...(o.protocol.rulesetHash && { rulesetHash: o.protocol.rulesetHash }),
        transport: t,
        key,
        hostKey,
        guestKey,
        sid,
        postId: invitation.post_id,
        nonce,
        stateDir: dir,
        controlMode: o.controlMode ?? 'autonomous',
        ...(o.timeoutMs !== undefined && { timeoutMs: o.timeoutMs }),
        ...(o.onMessage && { onMessage: o.onMessage }),
        ...decisionWindowFor(o, dir),
      });
      if (!o.daemon) settle(result);
      else {
        try {
          o.onSession?.(result);
        } catch (e) {
          emit('session_failed', { message: (e as Error).message });
        }
      }
    } catch (e) {
      t.close();
      if (!started) {
        // Whatever went wrong before the session started came from the peer (or its going away).
        const he = e instanceof HandshakeError ? e : new HandshakeError('HANDSHAKE_INVALID', (e as Error)?.message ?? String(e));
        emit('handshake_failed', { code: he.code, message: he.message });
      } else if (o.daemon) emit('session_failed', { message: (e as Error)?.message ?? String(e) });
      else fail(e);
    } finally {
      if (mine && (o.daemon || !started)) release();
    }
  };

  await node.handle(SESSION_PROTOCOL, (stream: unknown, connection?: unknown) => serve(stream, connection as Connection | undefined), {
    runOnLimitedConnection: false,
    maxInboundStreams: 2,
  });
  let stopped = false;
  return {
    invitation,
    text: encodeInvitation(c, invitation),
    node,
    guard,
    done,
    expired,
    active: () => claimed,
    idle: () => (claimed === 0 ? Promise.resolve() : new Promise<void>((r) => idleWaiters.push(r))),
    stop: async () => {
      if (stopped) return;
      stopped = true;
      expiry.clear();
      guard.close();
      key.dispose();
      await node.stop();
    },
  };
}

export type { SessionProof } from '../registry/client.js';
export { DEFAULT_HANDSHAKE_TIMEOUT_MS, deliverProof, guestHandshake, HANDSHAKE_MAX_LINE_BYTES, HandshakeError, next, say, sigOk } from './handshake.js';

/**
 * Joins the session an invitation offers (already verified: by parseInvitation, or a registry post by
 * its binding signature). `onProof` (a registry) receives the SessionProof before `_session_ready`.
 */
export async function join(
  o: NetSessionOptions & {
    invitation: Pick<Invitation, 'post_id' | 'host_public_key' | 'protocol_id' | 'ticket' | 'options'>;
    handshakeTimeoutMs?: number;
    onProof?: (p: SessionProof) => Promise<void>;
  },
): Promise<SessionResult> {
  const c = o.crypto;
  const inv = o.invitation;
  ensureWritableDir(o.sessionsDir, 'sessions directory');
  const handshakeMs = o.handshakeTimeoutMs ?? DEFAULT_HANDSHAKE_TIMEOUT_MS;
  const key = c.ed25519Keypair(o.seed);
  const guestKey = toHex(key.publicKey);
  let node: Libp2p | undefined;
  try {
    node = await createNode(o.seed, { crypto: c });
    const dialled = await dialHost(node, inv);
    if ('unreachable' in dialled) throw new HandshakeError(dialled.code, dialled.unreachable);
    const t = new LineTransport(sessionStream(dialled.stream), {
      maxLineBytes: HANDSHAKE_MAX_LINE_BYTES,
      heartbeatIntervalMs: o.heartbeatIntervalMs ?? 10_000,
      onEvent: (type, data) => o.onEvent?.(type, data),
    });
    const { sid, nonce, canonical, proof } = await guestHandshake({
      crypto: c,
      key,
      transport: t,
      invitation: inv,
      protocolId: o.protocol.protocolId,
      controlMode: o.controlMode ?? 'autonomous',
      timeoutMs: handshakeMs,
      ...(o.onProof && { onProof: o.onProof }),
    });
    const dir = joinPath(o.sessionsDir, sid.slice(0, 16), 'guest');
    saveHandshake(dir, { canonical, session_id: sid, host_signature: proof.host_signature, guest_signature: proof.guest_signature });
    o.onEvent?.('connected', { session_id: sid, host_public_key: inv.host_public_key });
    return await runSession({
      crypto: c,
      role: 'guest',
      spec: o.protocol.spec,
      specText: o.protocol.specText,
      protocolId: o.protocol.protocolId,
      hooks: o.protocol.hooks,
      options: inv.options,
      ...(o.protocol.rulesetHash && { rulesetHash: o.protocol.rulesetHash }),
      transport: t,
      key,
      hostKey: inv.host_public_key,
      guestKey,
      sid,
      postId: inv.post_id,
      nonce,
      stateDir: dir,
      controlMode: o.controlMode ?? 'autonomous',
      ...(o.timeoutMs !== undefined && { timeoutMs: o.timeoutMs }),
      ...(o.onMessage && { onMessage: o.onMessage }),
      ...decisionWindowFor(o, dir),
    });
  } finally {
    key.dispose();
    await node?.stop();
  }
}
