/**
 * A guest session run from a browser page: the invitation's host dialled over WebSockets, the session
 * handshake (NOTES A7), the engine with its validation and signed frames, the record kept in memory,
 * and at the end the same transcript and receipt check `aigenora receipt verify` runs.
 */
import type { Libp2p } from 'libp2p';
import type { Crypto } from '../crypto/backend.js';
import { toHex } from '../crypto/encoding.js';
import type { Window } from '../engine/decision-window.js';
import { driveSession, transcriptHeader } from '../engine/driver.js';
import { MemoryStore, type StoredEvent } from '../engine/memory-store.js';
import { verifyTranscript, type TranscriptCheck } from '../engine/transcript-check.js';
import type { ControlMode, HooksModule, Message, Role } from '../hooks/types.js';
import { createBrowserNode, isWebSocketAddr } from '../net/browser-node.js';
import { dialHost } from '../net/dial.js';
import { DEFAULT_HANDSHAKE_TIMEOUT_MS, guestHandshake, HANDSHAKE_MAX_LINE_BYTES, HandshakeError } from '../net/handshake.js';
import { InvitationRefused, parseInvitation, type Invitation } from '../net/invitation.js';
import { LineTransport, type ByteStream } from '../net/line-transport.js';
import type { Spec } from '../spec/types.js';
import { PageDecisions, type Answer } from './decisions.js';

export interface PageProtocol {
  alias: string;
  spec: Spec;
  specText: string;
  protocolId: string;
  hooks: HooksModule;
}

export type AgentErrorCode = 'INVITATION_INVALID' | 'PROTOCOL_UNKNOWN' | 'NO_WEBSOCKET_ADDRESS' | 'HOST_UNREACHABLE' | HandshakeError['code'];

export class AgentError extends Error {
  override readonly name = 'AgentError';
  constructor(
    readonly code: AgentErrorCode,
    message: string,
  ) {
    super(`${code}: ${message}`);
  }
}

export interface JoinOptions {
  crypto: Crypto;
  /** The page's Ed25519 seed (keystore.ts keeps one per browser profile). */
  seed: Uint8Array;
  /** An `aigenora1.…` invitation. */
  invitation: string;
  /** The protocols this page can play; the invitation's protocol_id picks one. */
  protocols: PageProtocol[];
  controlMode: ControlMode;
  onMessage?: (from: Role, msg: Message) => void;
  onEvent?: (e: StoredEvent) => void;
  /** A decision window opened (or closed: null), with why the last answer was refused. */
  onWindow?: (w: Window | null, submit: (a: Answer) => string | undefined, refused?: string) => void;
  /** Connected and handshaken: the session starts. */
  onReady?: (info: { sid: string; protocol: PageProtocol; invitation: Invitation; guestKey: string }) => void;
  /** Abort the session (it tells the host and ends with local_abort). */
  signal?: AbortSignal;
  /**
   * Makes crypto.protocolId available (in a browser, fetching the pyjson WASM module): awaited after the
   * session, before the receipt check, which computes the spec's protocol_id as `receipt verify` does.
   * If it fails, the check runs anyway and reports the protocol_id it could not compute.
   */
  loadProtocolId?: () => Promise<unknown>;
  handshakeTimeoutMs?: number;
}

export interface PageSessionResult {
  completed: boolean;
  reason: string;
  detail?: string;
  sid: string;
  protocol: PageProtocol;
  /** transcript.jsonl, spec.json and receipt.json (null when none was made) as the CLI writes them. */
  transcript: string;
  receipt: string | null;
  proof: string | null;
  /** The in-page `receipt verify`. */
  check: TranscriptCheck;
  events: StoredEvent[];
}

/** The invitation checked (signature, expiry) and the protocol it names found among the page's. */
export function openInvitation(crypto: Crypto, text: string, protocols: PageProtocol[]): { invitation: Invitation; protocol: PageProtocol } {
  let invitation: Invitation;
  try {
    invitation = parseInvitation(crypto, text.trim());
  } catch (e) {
    throw new AgentError('INVITATION_INVALID', e instanceof InvitationRefused ? e.message : 'not an aigenora1 invitation');
  }
  const protocol = protocols.find((p) => p.protocolId === invitation.protocol_id);
  if (!protocol)
    throw new AgentError(
      'PROTOCOL_UNKNOWN',
      `this page plays the built-in protocols only (${protocols.map((p) => p.alias).join(', ')}); use the CLI for protocol ${invitation.protocol_id.slice(0, 16)}…`,
    );
  return { invitation, protocol };
}

/** The host's session stream over one of its WebSocket addresses, the only ones a page can dial. */
async function dial(node: Libp2p, inv: Invitation): Promise<ByteStream> {
  const addrs = inv.ticket.addrs.filter(isWebSocketAddr);
  if (!addrs.length) throw new AgentError('NO_WEBSOCKET_ADDRESS', 'the host offers no WebSocket address (a page can only dial ws:// or wss://)');
  const dialled = await dialHost(node, inv, addrs).catch(asAgentError);
  if ('unreachable' in dialled) throw new AgentError('HOST_UNREACHABLE', dialled.unreachable);
  return dialled.stream;
}

/** A HandshakeError as the page's own error, with the same code; anything else as it is. */
function asAgentError(e: unknown): never {
  if (e instanceof HandshakeError) throw new AgentError(e.code, e.message.replace(/^[A-Z_]+: /, ''));
  throw e;
}

export async function joinFromPage(o: JoinOptions): Promise<PageSessionResult> {
  const c = o.crypto;
  const { invitation: inv, protocol } = openInvitation(c, o.invitation, o.protocols);
  const key = c.ed25519Keypair(o.seed);
  const guestKey = toHex(key.publicKey);
  let node: Libp2p | undefined;
  try {
    node = await createBrowserNode(o.seed, c);
    const t = new LineTransport(await dial(node, inv), { maxLineBytes: HANDSHAKE_MAX_LINE_BYTES });
    const { sid, nonce } = await guestHandshake({
      crypto: c,
      key,
      transport: t,
      invitation: inv,
      protocolId: protocol.protocolId,
      controlMode: o.controlMode,
      timeoutMs: o.handshakeTimeoutMs ?? DEFAULT_HANDSHAKE_TIMEOUT_MS,
    }).catch((e: unknown) => {
      t.close();
      return asAgentError(e);
    });
    o.onReady?.({ sid, protocol, invitation: inv, guestKey });
    const session = {
      crypto: c,
      role: 'guest' as const,
      spec: protocol.spec,
      specText: protocol.specText,
      protocolId: protocol.protocolId,
      hooks: protocol.hooks,
      options: inv.options,
      transport: t,
      key,
      hostKey: inv.host_public_key,
      guestKey,
      sid,
      postId: inv.post_id,
      nonce,
      stateDir: '',
      controlMode: o.controlMode,
    };
    const store = new MemoryStore(transcriptHeader(session), protocol.specText, (kind, v) => {
      if (kind === 'event') o.onEvent?.(v as StoredEvent);
    });
    const decisions = o.controlMode === 'autonomous' ? undefined : new PageDecisions((w, refused) => o.onWindow?.(w, (a) => decisions!.submit(a), refused));
    const end = await driveSession({
      ...session,
      store,
      ...(decisions && { decisions }),
      abortRequested: () => o.signal?.aborted === true,
      ...(o.onMessage && { onMessage: o.onMessage }),
    });
    const transcript = store.transcript();
    const receipt = store.files.get('receipt.json') ?? null;
    await o.loadProtocolId?.().catch(() => undefined);
    const check = verifyTranscript(c, transcript, protocol.specText, receipt, store.files.get('transcript_receipt.json') ?? null);
    return {
      completed: end.completed,
      reason: end.reason,
      ...(end.detail !== undefined && { detail: end.detail }),
      sid,
      protocol,
      transcript,
      receipt,
      proof: end.proofFile ? (store.files.get(end.proofFile) ?? null) : null,
      check,
      events: store.events,
    };
  } finally {
    key.dispose();
    await node?.stop();
  }
}
