/**
 * Two-party sessions over iroh, on the reference's wire (NOTES A7, A11): ALPN `/agent-chat/1`, one
 * bidirectional stream, JSON lines (heartbeat `_sys` frames answered by the line transport), the
 * handshake `_session_init` → `_session_proof` → `_session_ready`, then the protocol's bare messages
 * (the engine's plain profile: each side keeps its own signed transcript, see engine/plain.ts).
 *
 * Toward the reference the handshake is exactly A7: its guest signs only in the SessionProof it posts
 * to the server, so a host accepts an unsigned `_session_init`. Our guest also sends `guest_signature`
 * in `_session_init` and `_session_ready` (extra keys the reference ignores); when present it must verify.
 */
import { join as joinPath } from 'node:path';
import { toHex, utf8 } from '../crypto/encoding.js';
import { sessionCanonical, sessionId } from '../engine/frame.js';
import { runSession, type SessionResult } from '../engine/session.js';
import { ensureWritableDir } from '../files/write.js';
import { createIrohInvitation, encodeInvitation, type IrohInvitation } from './invitation.js';
import { createIrohEndpoint, type IrohEndpoint } from './iroh-node.js';
import { decodeNodeTicket, encodeNodeTicket } from './iroh-ticket.js';
import { DEFAULT_MAX_LINE_BYTES, LineTransport, type ByteStream } from './line-transport.js';
import {
  decisionWindowFor,
  DEFAULT_HANDSHAKE_TIMEOUT_MS,
  HANDSHAKE_MAX_LINE_BYTES,
  guestHandshake,
  HandshakeError,
  HostError,
  next,
  saveHandshake,
  say,
  sigOk,
  type NetSessionOptions,
  type SessionProof as IrohSessionProof,
} from './session.js';

export type { SessionProof as IrohSessionProof } from './session.js';

export interface IrohSessionResult extends SessionResult {
  /** The guest's signature is known to the host only when the guest sent it (ours do; the reference's do not). */
  sessionProof: Omit<IrohSessionProof, 'guest_signature'> & { guest_signature?: string };
}

const HEX64 = /^[0-9a-f]{64}$/;
const CONTROL_MODES = ['autonomous', 'hybrid', 'human'];

const lineTransport = (stream: ByteStream, o: NetSessionOptions) =>
  new LineTransport(stream, {
    maxLineBytes: HANDSHAKE_MAX_LINE_BYTES,
    heartbeatIntervalMs: o.heartbeatIntervalMs ?? 10_000,
    onEvent: (type, data) => o.onEvent?.(type, data),
  });

export interface IrohHostHandle {
  invitation: IrohInvitation;
  /** The out-of-band form ("aigenora1.…"). */
  text: string;
  /** The NodeTicket guests dial. */
  ticket: string;
  /** The session, or HostError INVITATION_EXPIRED when no guest completed the handshake in time. */
  done: Promise<IrohSessionResult>;
  /** Resolves once a guest completed the handshake (the invitation is then taken). */
  paired: Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts an iroh endpoint keyed by the agent's seed and serves one session: the first guest whose
 * handshake completes. `publish` (a registry) is given the ticket and answers the post_id the session
 * is bound to; without it the post_id is random and the invitation travels out of band.
 */
export async function hostIroh(
  o: NetSessionOptions & {
    ttlMinutes?: number;
    type?: IrohInvitation['type'];
    handshakeTimeoutMs?: number;
    /** IPv4 socket address to bind (default: iroh's, all interfaces on a free port). */
    bind?: string;
    publish?: (ticket: string) => Promise<{ postId: string }>;
  },
): Promise<IrohHostHandle> {
  const c = o.crypto;
  ensureWritableDir(o.sessionsDir, 'sessions directory');
  const handshakeMs = o.handshakeTimeoutMs ?? DEFAULT_HANDSHAKE_TIMEOUT_MS;
  const key = c.ed25519Keypair(o.seed);
  const hostKey = toHex(key.publicKey);
  const control = o.controlMode ?? 'autonomous';
  let taken = false;
  let settle!: (r: IrohSessionResult) => void;
  let fail!: (e: unknown) => void;
  const done = new Promise<IrohSessionResult>((a, b) => {
    settle = a;
    fail = b;
  });
  done.catch(() => undefined);
  let markPaired!: () => void;
  const paired = new Promise<void>((r) => (markPaired = r));
  // Set once the invitation exists; a guest that arrives earlier is refused.
  let invitation: IrohInvitation | undefined;
  const emit = (type: string, data: Record<string, unknown>) => {
    try {
      o.onEvent?.(type, data);
    } catch {
      // a reporting callback must not end the host
    }
  };

  const serve = async (stream: ByteStream): Promise<void> => {
    const t = lineTransport(stream, o);
    let started = false;
    let mine = false;
    try {
      const inv = invitation;
      if (!inv || taken || Date.parse(inv.expires_at) <= Date.now()) {
        say(t, { _session_refused: true, reason: taken ? 'invitation already paired' : 'invitation not available' });
        t.close();
        return;
      }
      const init = await next(t, handshakeMs);
      const guestKey = init['guest_public_key'];
      const nonce = init['session_nonce'];
      if (
        init['_session_init'] !== true ||
        typeof guestKey !== 'string' ||
        !HEX64.test(guestKey) ||
        typeof nonce !== 'string' ||
        !/^[0-9a-f]{16,64}$/.test(nonce)
      )
        throw new HandshakeError('HANDSHAKE_INVALID', 'expected _session_init with guest_public_key and session_nonce');
      const canonical = sessionCanonical(inv.post_id, o.protocol.protocolId, hostKey, guestKey, nonce);
      if (init['guest_signature'] !== undefined && !sigOk(c, guestKey, init['guest_signature'], canonical))
        throw new HandshakeError('HANDSHAKE_BAD_SIGNATURE', "the _session_init signature does not verify over this invitation's session canonical");
      if (taken) {
        say(t, { _session_refused: true, reason: 'invitation already paired' });
        t.close();
        return;
      }
      taken = mine = true;
      const hostSignature = toHex(key.sign(utf8(canonical)));
      say(t, { _session_proof: true, host_public_key: hostKey, host_signature: hostSignature, protocol_id: o.protocol.protocolId, host_control_mode: control });
      const ready = await next(t, handshakeMs);
      const sid = sessionId(c, inv.post_id, o.protocol.protocolId, hostKey, guestKey, nonce);
      if (ready['_session_ready'] !== true || ready['session_id'] !== sid)
        throw new HandshakeError('HANDSHAKE_INVALID', "the guest's _session_ready does not name this session");
      const guestSig = ready['guest_signature'] ?? init['guest_signature'];
      if (guestSig !== undefined && !sigOk(c, guestKey, guestSig, canonical))
        throw new HandshakeError('HANDSHAKE_BAD_SIGNATURE', 'the guest signature over the session canonical does not verify');
      started = true;
      markPaired();
      t.setMaxLineBytes(DEFAULT_MAX_LINE_BYTES);
      const dir = joinPath(o.sessionsDir, sid.slice(0, 16), 'host');
      const proof = {
        post_id: inv.post_id,
        host_public_key: hostKey,
        guest_public_key: guestKey,
        protocol_id: o.protocol.protocolId,
        session_nonce: nonce,
        host_signature: hostSignature,
        ...(typeof guestSig === 'string' && { guest_signature: guestSig }),
      };
      saveHandshake(dir, { transport: 'iroh', wire: 'plain', canonical, session_id: sid, ...proof });
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
        postId: inv.post_id,
        nonce,
        stateDir: dir,
        controlMode: control,
        wire: 'plain',
        ...(o.timeoutMs !== undefined && { timeoutMs: o.timeoutMs }),
        ...(o.onMessage && { onMessage: o.onMessage }),
        ...decisionWindowFor(o, dir),
      });
      settle({ ...result, sessionProof: proof });
    } catch (e) {
      t.close();
      if (!started) {
        if (mine) taken = false;
        const he = e instanceof HandshakeError ? e : new HandshakeError('HANDSHAKE_INVALID', (e as Error)?.message ?? String(e));
        emit('handshake_failed', { code: he.code, message: he.message });
      } else fail(e);
    }
  };

  let ep: IrohEndpoint;
  try {
    ep = await createIrohEndpoint(o.seed, { ...(o.bind && { bind: o.bind }), onStream: (s) => void serve(s) });
  } catch (e) {
    key.dispose();
    throw e;
  }
  let expiry: ReturnType<typeof setTimeout> | undefined;
  const stop = async () => {
    if (expiry) clearTimeout(expiry);
    await ep.shutdown();
    key.dispose();
  };
  try {
    const ticket = encodeNodeTicket(await ep.address());
    const published = o.publish ? await o.publish(ticket) : undefined;
    invitation = createIrohInvitation(c, {
      host: key,
      protocolId: o.protocol.protocolId,
      ticket,
      options: o.options,
      ttlMinutes: o.ttlMinutes ?? 30,
      controlMode: control,
      ...(o.type && { type: o.type }),
      ...(published && { postId: published.postId }),
    });
    const inv = invitation;
    expiry = setTimeout(
      () => {
        if (!taken) fail(new HostError('INVITATION_EXPIRED', `the invitation expired at ${inv.expires_at} and no guest joined`));
      },
      Math.min(Date.parse(inv.expires_at) - Date.now(), 2 ** 31 - 1),
    );
    expiry.unref?.();
    return { invitation: inv, text: encodeInvitation(c, inv), ticket, done, paired, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

/** Where the guest dials and what it checks: from an out-of-band invitation or a registry post. */
export interface IrohTarget {
  post_id: string;
  host_public_key: string;
  protocol_id: string;
  ticket: string;
  options: Record<string, unknown>;
}

/**
 * Joins the iroh session `target` offers (its binding signature already checked by the caller).
 * `onProof` (a registry) receives the SessionProof before `_session_ready` is sent, as the reference's
 * guest posts it; a failure there ends the join.
 */
export async function joinIroh(
  o: NetSessionOptions & { target: IrohTarget; handshakeTimeoutMs?: number; onProof?: (p: IrohSessionProof) => Promise<void> },
): Promise<IrohSessionResult> {
  const c = o.crypto;
  const inv = o.target;
  ensureWritableDir(o.sessionsDir, 'sessions directory');
  const handshakeMs = o.handshakeTimeoutMs ?? DEFAULT_HANDSHAKE_TIMEOUT_MS;
  const addr = decodeNodeTicket(inv.ticket);
  const key = c.ed25519Keypair(o.seed);
  const guestKey = toHex(key.publicKey);
  // The guest's own node: a fresh key, as the reference's guests use (its identity is the session key).
  let ep: IrohEndpoint | undefined;
  try {
    ep = await createIrohEndpoint(globalThis.crypto.getRandomValues(new Uint8Array(32)));
    let stream: ByteStream;
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      // iroh keeps trying relays and addresses for a long time; the handshake deadline bounds the dial too.
      const gaveUp = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${handshakeMs} ms`)), handshakeMs)));
      stream = (await Promise.race([ep.connect(addr), gaveUp])).stream;
    } catch (e) {
      throw new HandshakeError('HOST_UNREACHABLE', `cannot reach the host (${((e as Error)?.message ?? String(e)).split('\n')[0]})`);
    } finally {
      clearTimeout(timer);
    }
    const t = lineTransport(stream, o);
    const control = o.controlMode ?? 'autonomous';
    const {
      sid,
      nonce,
      canonical,
      proof: sessionProof,
      hostControlMode: peerMode,
    } = await guestHandshake({
      crypto: c,
      key,
      transport: t,
      invitation: inv,
      protocolId: o.protocol.protocolId,
      controlMode: control,
      timeoutMs: handshakeMs,
      ...(o.onProof && { onProof: o.onProof }),
    });
    const dir = joinPath(o.sessionsDir, sid.slice(0, 16), 'guest');
    saveHandshake(dir, { transport: 'iroh', wire: 'plain', canonical, session_id: sid, ...sessionProof });
    o.onEvent?.('connected', { session_id: sid, host_public_key: inv.host_public_key });
    if (typeof peerMode === 'string' && !CONTROL_MODES.includes(peerMode)) o.onEvent?.('warning', { message: 'the host names an unknown control mode' });
    const result = await runSession({
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
      controlMode: control,
      wire: 'plain',
      ...(o.timeoutMs !== undefined && { timeoutMs: o.timeoutMs }),
      ...(o.onMessage && { onMessage: o.onMessage }),
      ...decisionWindowFor(o, dir),
    });
    return { ...result, sessionProof };
  } finally {
    key.dispose();
    await ep?.shutdown();
  }
}
