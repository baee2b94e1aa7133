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
import type { Crypto, Ed25519Keypair } from '../crypto/backend.js';
import type { SessionProof } from '../registry/client.js';
import { toHex, utf8 } from '../crypto/encoding.js';
import { sessionCanonical, sessionId } from '../engine/frame.js';
import { runSession, type SessionResult } from '../engine/session.js';
import type { Window } from '../engine/decision-window.js';
import type { ControlMode, HooksModule, Message, Role } from '../hooks/types.js';
import type { Spec } from '../spec/types.js';
import { createInvitation, encodeInvitation, type Invitation, type Ticket } from './invitation.js';
import { DEFAULT_GUARD_LIMITS, SocketGuard, type GuardLimits } from './guard.js';
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

/** Sessions a daemon host runs at once unless told otherwise (`aigenora host --max-sessions`). */
export const DEFAULT_MAX_SESSIONS = 8;
/** How long a side that ends waits for its last frames to leave before it stops its node. */
const CLOSE_FLUSH_MS = 5_000;
/**
 * The most a daemon host may be asked to run at once. Each session holds one socket, a few timers and
 * its engine state (tens of KiB idle); the node's connection limit is raised to match (createNode).
 */
export const MAX_SESSIONS_LIMIT = 1000;

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

type HostOptions = NetSessionOptions & {
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
};

/**
 * Starts a node, publishes an invitation and serves one session: the first guest whose signed
 * `_session_init` arrives (with `daemon`, every guest until the invitation expires, at most
 * `maxSessions` at a time). The `_session_init` must be signed by the key the connection is
 * authenticated with, over the session canonical, which names the invitation's post_id: a peer that
 * only knows IP:port cannot take the slot. Each step of the handshake has `handshakeTimeoutMs`.
 */
export async function host(o: HostOptions): Promise<HostHandle> {
  const c = o.crypto;
  // A guest who arrives must find a place for its session: check before the invitation is published.
  ensureWritableDir(o.sessionsDir, 'sessions directory');
  const handshakeMs = o.handshakeTimeoutMs ?? DEFAULT_HANDSHAKE_TIMEOUT_MS;
  const maxSessions = o.daemon ? (o.maxSessions ?? DEFAULT_MAX_SESSIONS) : 1;
  if (!(Number.isInteger(maxSessions) && maxSessions >= 1 && maxSessions <= MAX_SESSIONS_LIMIT))
    throw new RangeError(`maxSessions must be an integer from 1 to ${MAX_SESSIONS_LIMIT}`);
  // Room for every session's guest to be in its handshake at once, besides the default's room for
  // sockets that never become sessions (the default total already covers 8 sessions).
  const total = DEFAULT_GUARD_LIMITS.total + Math.max(0, maxSessions - DEFAULT_MAX_SESSIONS);
  const guard = new SocketGuard({ total, ...o.guardLimits, deadlineMs: handshakeMs });
  const key = c.ed25519Keypair(o.seed);
  const { node, invitation } = await publishHost(o, key, guard, maxSessions);
  const sessions = new HostSessions(o, { key, node, guard, invitation, handshakeMs, maxSessions });
  await node.handle(SESSION_PROTOCOL, (stream: unknown, connection?: unknown) => sessions.serve(stream, connection as Connection | undefined), {
    runOnLimitedConnection: false,
    maxInboundStreams: 2,
  });
  return sessions.handle();
}

/** The host's node and its signed invitation (published first, when there is a registry); on failure the key and node are let go. */
async function publishHost(o: HostOptions, key: Ed25519Keypair, guard: SocketGuard, sessions: number): Promise<{ node: Libp2p; invitation: Invitation }> {
  const c = o.crypto;
  let node: Libp2p;
  try {
    node = await createNode(o.seed, { listen: o.listen ?? DEFAULT_LISTEN, guard, crypto: c, sessions });
  } catch (e) {
    key.dispose();
    throw e;
  }
  const ticket = { peer_id: node.peerId.toString(), addrs: node.getMultiaddrs().map(String) };
  try {
    const published = o.publish ? await o.publish(ticket) : undefined;
    const invitation = createInvitation(c, {
      host: key,
      protocolId: o.protocol.protocolId,
      ticket,
      options: o.options,
      ttlMinutes: o.ttlMinutes ?? 30,
      controlMode: o.controlMode ?? 'autonomous',
      ...(o.type && { type: o.type }),
      ...(published && { postId: published.postId }),
    });
    return { node, invitation };
  } catch (e) {
    key.dispose();
    await node.stop();
    throw e;
  }
}

/** What a guest's verified `_session_init` binds the session to. */
interface GuestInit {
  guestKey: string;
  nonce: string;
  canonical: string;
}

/** The handshake completed: the session id and both signatures over the canonical. */
interface Paired {
  sid: string;
  hostSignature: string;
  guestSignature: unknown;
}

/** Tells a guest why it gets no session, then hangs up. */
function refuse(t: LineTransport, reason: string): void {
  try {
    t.send(JSON.stringify({ _session_refused: true, reason }));
  } catch {
    // already gone
  }
  t.close();
}

/**
 * A host's running invitation: the slot (claimed by a signed _session_init, released if that guest's
 * handshake fails; without `daemon`, kept once a session has started), the invitation's expiry, and
 * each guest's handshake and session.
 */
class HostSessions {
  private readonly c: Crypto;
  private readonly hostKey: string;
  private claimed = 0;
  private startedOnce = false;
  private isExpired = false;
  private idleWaiters: (() => void)[] = [];
  private stopped = false;
  private readonly done: Promise<SessionResult>;
  private settle!: (r: SessionResult) => void;
  private fail!: (e: unknown) => void;
  private readonly expired: Promise<void>;
  private readonly expiry: { clear(): void };

  constructor(
    private readonly o: HostOptions,
    private readonly h: { key: Ed25519Keypair; node: Libp2p; guard: SocketGuard; invitation: Invitation; handshakeMs: number; maxSessions: number },
  ) {
    this.c = o.crypto;
    this.hostKey = toHex(h.key.publicKey);
    this.done = new Promise<SessionResult>((a, b) => {
      this.settle = a;
      this.fail = b;
    });
    this.done.catch(() => undefined); // with `daemon` nobody awaits it
    let expire!: () => void;
    this.expired = new Promise<void>((resolve) => (expire = resolve));
    const invitation = h.invitation;
    this.expiry = at(Date.parse(invitation.expires_at), () => {
      this.isExpired = true;
      expire();
      if (!o.daemon && !this.startedOnce && this.claimed === 0)
        this.fail(new HostError('INVITATION_EXPIRED', `the invitation expired at ${invitation.expires_at} and no guest joined`));
    });
  }

  private emit(type: string, data: Record<string, unknown>): void {
    try {
      this.o.onEvent?.(type, data);
    } catch {
      // a reporting callback must not end the host
    }
  }

  private release(): void {
    this.claimed--;
    if (this.claimed === 0) {
      for (const w of this.idleWaiters) w();
      this.idleWaiters = [];
    }
    if (!this.o.daemon && !this.startedOnce && this.isExpired)
      this.fail(new HostError('INVITATION_EXPIRED', `the invitation expired at ${this.h.invitation.expires_at} before a guest completed the handshake`));
  }

  private unavailable(): string | undefined {
    if (this.isExpired) return 'invitation expired';
    if (!this.o.daemon && (this.startedOnce || this.claimed > 0)) return 'invitation already paired';
    if (this.claimed >= this.h.maxSessions) return 'host busy';
    return undefined;
  }

  /** One inbound stream: the handshake, then (once it completes) the session over the same transport. */
  async serve(stream: unknown, connection: Connection | undefined): Promise<void> {
    const o = this.o;
    const t = new LineTransport(sessionStream(stream as ByteStream), {
      maxLineBytes: HANDSHAKE_MAX_LINE_BYTES,
      heartbeatIntervalMs: o.heartbeatIntervalMs ?? 10_000,
      onEvent: (type, data) => this.emit(type, data),
    });
    let mine = false;
    let started = false;
    try {
      const no = this.unavailable();
      if (no) return refuse(t, no);
      const init = this.checkInit(await next(t, this.h.handshakeMs), connection);
      const now = this.unavailable();
      if (now) return refuse(t, now);
      this.claimed++;
      mine = true;
      const paired = await this.pair(t, init);
      started = true;
      this.startedOnce = true;
      await this.run(t, connection, init, paired);
    } catch (e) {
      t.close();
      if (!started) {
        // Whatever went wrong before the session started came from the peer (or its going away).
        const he = e instanceof HandshakeError ? e : new HandshakeError('HANDSHAKE_INVALID', (e as Error)?.message ?? String(e));
        this.emit('handshake_failed', { code: he.code, message: he.message });
      } else if (o.daemon) this.emit('session_failed', { message: (e as Error)?.message ?? String(e) });
      else this.fail(e);
    } finally {
      if (mine && (o.daemon || !started)) this.release();
    }
  }

  /** The guest's `_session_init`: well formed, from the key its connection is authenticated with, signed over this invitation's canonical. */
  private checkInit(init: Record<string, unknown>, connection: Connection | undefined): GuestInit {
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
    const canonical = sessionCanonical(this.h.invitation.post_id, this.o.protocol.protocolId, this.hostKey, guestKey, nonce);
    if (!sigOk(this.c, guestKey, init['guest_signature'], canonical))
      throw new HandshakeError('HANDSHAKE_BAD_SIGNATURE', "the _session_init is not signed over this invitation's session canonical");
    return { guestKey, nonce, canonical };
  }

  /** `_session_proof` out, then the guest's `_session_ready`: its session_id and its signature over the same canonical. */
  private async pair(t: LineTransport, init: GuestInit): Promise<Paired> {
    const { o, c, hostKey } = this;
    const { guestKey, nonce, canonical } = init;
    const hostSignature = toHex(this.h.key.sign(utf8(canonical)));
    say(t, {
      _session_proof: true,
      host_public_key: hostKey,
      host_signature: hostSignature,
      protocol_id: o.protocol.protocolId,
      host_control_mode: o.controlMode ?? 'autonomous',
    });
    const ready = await next(t, this.h.handshakeMs);
    const sid = sessionId(c, this.h.invitation.post_id, o.protocol.protocolId, hostKey, guestKey, nonce);
    if (ready['_session_ready'] !== true || ready['session_id'] !== sid) throw new HandshakeError('HANDSHAKE_INVALID', "the guest's session_id does not match");
    if (!sigOk(c, guestKey, ready['guest_signature'], canonical))
      throw new HandshakeError('HANDSHAKE_BAD_SIGNATURE', 'the guest signature over the session canonical does not verify');
    return { sid, hostSignature, guestSignature: ready['guest_signature'] };
  }

  /** The paired guest's session: its directory and handshake record, then the engine; the result settles `done` (or goes to onSession). */
  private async run(t: LineTransport, connection: Connection | undefined, init: GuestInit, p: Paired): Promise<void> {
    const { o, c, hostKey } = this;
    const { guestKey, nonce, canonical } = init;
    const sid = p.sid;
    const endpoint = connection?.remoteAddr && ipAndPort(connection.remoteAddr);
    if (!endpoint || !this.h.guard.authenticate(endpoint.address, endpoint.port))
      this.emit('warning', { message: `no guarded socket matches ${String(connection?.remoteAddr)}: the handshake deadline may end this session` });
    t.setMaxLineBytes(DEFAULT_MAX_LINE_BYTES);
    const dir = joinPath(o.sessionsDir, sid.slice(0, 16), 'host');
    saveHandshake(dir, { canonical, session_id: sid, host_signature: p.hostSignature, guest_signature: p.guestSignature });
    this.emit('connected', { session_id: sid, guest_public_key: guestKey });
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
      key: this.h.key,
      hostKey,
      guestKey,
      sid,
      postId: this.h.invitation.post_id,
      nonce,
      stateDir: dir,
      controlMode: o.controlMode ?? 'autonomous',
      ...(o.timeoutMs !== undefined && { timeoutMs: o.timeoutMs }),
      ...(o.onMessage && { onMessage: o.onMessage }),
      ...decisionWindowFor(o, dir),
    });
    if (!o.daemon) {
      // Whoever awaits `done` stops the node next: the last frames must have left first.
      await t.closed(CLOSE_FLUSH_MS);
      this.settle(result);
    } else {
      try {
        o.onSession?.(result);
      } catch (e) {
        this.emit('session_failed', { message: (e as Error).message });
      }
    }
  }

  handle(): HostHandle {
    const { invitation, node, guard, key } = this.h;
    return {
      invitation,
      text: encodeInvitation(this.c, invitation),
      node,
      guard,
      done: this.done,
      expired: this.expired,
      active: () => this.claimed,
      idle: () => (this.claimed === 0 ? Promise.resolve() : new Promise<void>((r) => this.idleWaiters.push(r))),
      stop: async () => {
        if (this.stopped) return;
        this.stopped = true;
        this.expiry.clear();
        guard.close();
        key.dispose();
        await node.stop();
      },
    };
  }
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
    /** The local IP address the guest's TCP connection leaves from (a machine with several). */
    localAddress?: string;
  },
): Promise<SessionResult> {
  const c = o.crypto;
  const inv = o.invitation;
  ensureWritableDir(o.sessionsDir, 'sessions directory');
  const handshakeMs = o.handshakeTimeoutMs ?? DEFAULT_HANDSHAKE_TIMEOUT_MS;
  const key = c.ed25519Keypair(o.seed);
  const guestKey = toHex(key.publicKey);
  let node: Libp2p | undefined;
  let t: LineTransport | undefined;
  try {
    node = await createNode(o.seed, { crypto: c, ...(o.localAddress !== undefined && { localAddress: o.localAddress }) });
    const dialled = await dialHost(node, inv);
    if ('unreachable' in dialled) throw new HandshakeError(dialled.code, dialled.unreachable);
    t = new LineTransport(sessionStream(dialled.stream), {
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
    await t?.closed(CLOSE_FLUSH_MS);
    await node?.stop();
  }
}
