/** `aigenora join`: a two-party session or a group, by invitation or registry post, over libp2p or iroh. */
import { join } from 'node:path';
import { getCrypto } from '../crypto/index.js';
import { parseAnyInvitation, parseTicketString, type Invitation, type IrohInvitation } from '../net/invitation.js';
import { joinIroh, type IrohTarget } from '../net/iroh.js';
import { HandshakeError, join as joinSession, type Protocol, type SessionProof } from '../net/session.js';
import { GroupNetError, joinGroup } from '../net/group.js';
import { joinGroupIroh } from '../net/group-iroh.js';
import { checkInvitationBinding, type RegistryClient, RegistryError } from '../registry/client.js';
import { resolveDataDir } from '../library/data-dir.js';
import { flowMode } from '../spec/types.js';
import { UsageError, type Output } from './args.js';
import { readText } from './io.js';
import { actionDelay, controlModeOf, identity, MAX_INVITATION_BYTES, protocolFrom, registryClient, seconds, turnTimeout } from './net-flags.js';
import { decisionPrompt, groupEvents, groupReport, irohGroupExtra, progress, refusedBy, report, reportToRegistry, sessionEvents } from './net-report.js';

/** An invitation given inline or, as @FILE, in a file. */
const invitationText = (raw: string): string => (raw.startsWith('@') ? readText(raw.slice(1), 'invitation file', MAX_INVITATION_BYTES) : raw);

/** A join through the registry (`--server URL POST_ID`, the post's transport), or of an iroh invitation. */
export async function joinByRegistryOrIroh(flags: Record<string, unknown>, out: Output, raw: string, wanted: 'libp2p' | 'iroh' | undefined): Promise<number> {
  const dataDir = resolveDataDir(flags['data-dir'] as string | undefined);
  const seed = identity(dataDir);
  const client = registryClient(flags, seed);
  let target: IrohTarget;
  if (client) {
    const t = await targetFromServer(client, raw);
    if (wanted && wanted !== t.transport) throw new UsageError(`--transport ${wanted}, but the invitation is for ${t.transport}`);
    if (t.transport === 'libp2p') return joinOverLibp2p(flags, out, { dataDir, seed, client, inv: t.target });
    target = t.target;
  } else {
    const inv = parseAnyInvitation(getCrypto(), invitationText(raw));
    if (inv.transport !== 'iroh') throw new UsageError(`--transport iroh, but the invitation is for ${inv.transport}`);
    target = irohTarget(inv);
  }
  if (wanted === 'libp2p') throw new UsageError('--transport libp2p, but the invitation is for iroh');
  return joinOverIroh(flags, out, { dataDir, seed, client, target });
}

/** A join of an invitation (inline or @FILE) without a registry. */
export async function joinInvitation(flags: Record<string, unknown>, out: Output, raw: string): Promise<number> {
  // A refused invitation (InvitationRefused, with its code) ends at the CLI's error boundary.
  const any = parseAnyInvitation(getCrypto(), invitationText(raw));
  if (any.transport === 'iroh') {
    const dataDir = resolveDataDir(flags['data-dir'] as string | undefined);
    return joinOverIroh(flags, out, { dataDir, seed: identity(dataDir), client: undefined, target: irohTarget(any) });
  }
  const inv = any;
  const dataDir = resolveDataDir(flags['data-dir'] as string | undefined);
  const protocol = await protocolFrom(dataDir, flags, inv.protocol_id);
  const json = flags['json'] === true;
  // Checked for a group member too, though it plays by the protocol's autoplay.
  controlModeOf(flags);
  const timeoutSeconds = seconds(flags, 'timeout-seconds');
  if (flowMode(protocol.spec) === 'authoritative_group') return joinGroupOverLibp2p(flags, out, { dataDir, protocol, inv, json, timeoutSeconds });
  return joinOverLibp2p(flags, out, { dataDir, seed: identity(dataDir), client: undefined, inv, protocol });
}

/** Joins a libp2p group as a member (--resume DIR rejoins from the member's own session directory). */
async function joinGroupOverLibp2p(
  flags: Record<string, unknown>,
  out: Output,
  x: { dataDir: string; protocol: Protocol; inv: Invitation; json: boolean; timeoutSeconds: number | undefined },
): Promise<number> {
  const { dataDir, protocol, inv, json, timeoutSeconds } = x;
  if (!json) out.line(`joining group of ${inv.ticket.peer_id} (protocol ${inv.protocol_id.slice(0, 8)}…)`);
  const resume = flags['resume'] as string | undefined;
  try {
    const delay = actionDelay(flags);
    const turn = turnTimeout(flags);
    const r = await joinGroup({
      crypto: getCrypto(),
      seed: identity(dataDir),
      protocol,
      invitation: inv,
      sessionsDir: join(dataDir, 'sessions'),
      ...(resume !== undefined && { resumeDir: resume }),
      ...(delay && { actionDelayMs: delay }),
      ...(turn !== undefined && { turnTimeoutMs: turn }),
      ...(timeoutSeconds !== undefined && { reconnectMs: timeoutSeconds * 1000 }),
      onEvent: groupEvents(out, json),
    });
    return groupReport(out, json, r, { role: 'member' });
  } catch (e) {
    if (e instanceof GroupNetError) return refusedBy(out, e);
    throw e;
  }
}

/** Joins the group a registry post opened, over iroh: admission through the groups API, failover by its claims. */
async function joinGroupOverIroh(
  flags: Record<string, unknown>,
  out: Output,
  x: { dataDir: string; seed: Uint8Array; client: RegistryClient; target: IrohTarget; protocol: Protocol },
): Promise<number> {
  if (flags['resume'] !== undefined) throw new UsageError('--resume rejoins a libp2p group; a member of an iroh group rejoins with join --server URL POST_ID');
  const { json, control, timeoutSeconds } = guestSettings(flags, out);
  const delay = actionDelay(flags);
  const turn = turnTimeout(flags);
  if (!json)
    out.line(
      `joining group of post ${x.target.post_id} over iroh (leader ${x.target.host_public_key.slice(0, 16)}…, protocol ${x.target.protocol_id.slice(0, 8)}…)`,
    );
  try {
    const r = await joinGroupIroh({
      crypto: getCrypto(),
      seed: x.seed,
      protocol: x.protocol,
      client: x.client,
      postId: x.target.post_id,
      options: x.target.options,
      sessionsDir: join(x.dataDir, 'sessions'),
      controlMode: control,
      ...(timeoutSeconds !== undefined && { reconnectMs: timeoutSeconds * 1000 }),
      ...(delay && { actionDelayMs: delay }),
      ...(turn !== undefined && { turnTimeoutMs: turn }),
      onEvent: groupEvents(out, json),
    });
    return groupReport(out, json, r, irohGroupExtra(r, x.target.post_id));
  } catch (e) {
    if (e instanceof GroupNetError) return refusedBy(out, e);
    throw e;
  }
}

type Libp2pTarget = Pick<Invitation, 'post_id' | 'host_public_key' | 'protocol_id' | 'ticket' | 'options'>;

/** The session a registry post offers, once the host's binding signature over it verified. */
async function targetFromServer(
  client: RegistryClient,
  postId: string,
): Promise<{ transport: 'iroh'; target: IrohTarget } | { transport: 'libp2p'; target: Libp2pTarget }> {
  const post = await client.getInvitation(postId);
  const b = checkInvitationBinding(getCrypto(), post);
  // An iroh post may be one's own group, which its first leader rejoins as a member after a crash (joinOverIroh refuses a session of its own).
  if (b.publicKey === client.publicKey && b.transport !== 'iroh') throw new UsageError('this is your own invitation');
  const options = post.options !== null && typeof post.options === 'object' && !Array.isArray(post.options) ? (post.options as Record<string, unknown>) : {};
  const common = { post_id: post.post_id, host_public_key: b.publicKey, protocol_id: b.protocolId, options };
  if (b.transport === 'iroh') return { transport: 'iroh', target: { ...common, ticket: b.ticket } };
  const ticket = b.transport === 'libp2p' ? parseTicketString(b.ticket) : undefined;
  if (b.transport === 'libp2p' && !ticket)
    throw new RegistryError('REGISTRY_BAD_RESPONSE', `invitation ${postId}: the libp2p ticket is not peer_id@multiaddrs`);
  if (!ticket)
    throw new RegistryError('REGISTRY_BAD_RESPONSE', `invitation ${postId}: transport ${b.transport.slice(0, 40)} is not supported (only iroh and libp2p)`);
  return { transport: 'libp2p', target: { ...common, ticket } };
}

const irohTarget = (inv: IrohInvitation): IrohTarget => ({
  post_id: inv.post_id,
  host_public_key: inv.host_public_key,
  protocol_id: inv.protocol_id,
  ticket: inv.ticket,
  options: inv.options,
});

/** What both kinds of guest read from the flags, and how they show events. */
function guestSettings(flags: Record<string, unknown>, out: Output) {
  const json = flags['json'] === true;
  const control = controlModeOf(flags);
  const events = sessionEvents(out, json);
  return { json, control, timeoutSeconds: seconds(flags, 'timeout-seconds'), events };
}

async function joinOverLibp2p(
  flags: Record<string, unknown>,
  out: Output,
  x: { dataDir: string; seed: Uint8Array; client: RegistryClient | undefined; inv: Libp2pTarget; protocol?: Protocol },
): Promise<number> {
  const { inv, client } = x;
  const protocol = x.protocol ?? (await protocolFrom(x.dataDir, flags, inv.protocol_id));
  if (flowMode(protocol.spec) === 'authoritative_group') throw new UsageError('a group is joined with its invitation, not through --server');
  if (flags['resume'] !== undefined) throw new UsageError('--resume rejoins a group; this invitation is for a two-party session');
  const { json, control, timeoutSeconds, events } = guestSettings(flags, out);
  if (!json) out.line(`joining ${inv.ticket.peer_id} (protocol ${inv.protocol_id.slice(0, 8)}…)`);
  try {
    const r = await joinSession({
      crypto: getCrypto(),
      seed: x.seed,
      protocol,
      options: {},
      sessionsDir: join(x.dataDir, 'sessions'),
      invitation: inv,
      controlMode: control,
      ...(timeoutSeconds !== undefined && { timeoutMs: timeoutSeconds * 1000 }),
      onMessage: progress(out, json, 'guest', protocol),
      onDecisionWindow: decisionPrompt(out, json, 'guest', protocol),
      onEvent: events,
      ...(client && { onProof: async (p: SessionProof) => void (await client.postSessionProof(p)) }),
    });
    const posted = client ? await reportToRegistry(client, r, events) : {};
    return report(out, json, r, { role: 'guest', ...(client && { post_id: inv.post_id }), ...posted });
  } catch (e) {
    if (e instanceof HandshakeError) return refusedBy(out, e);
    throw e;
  }
}

async function joinOverIroh(
  flags: Record<string, unknown>,
  out: Output,
  x: { dataDir: string; seed: Uint8Array; client: RegistryClient | undefined; target: IrohTarget },
): Promise<number> {
  const c = getCrypto();
  const protocol = await protocolFrom(x.dataDir, flags, x.target.protocol_id);
  if (flowMode(protocol.spec) === 'authoritative_group') {
    if (!x.client) throw new UsageError('an iroh group is joined through its registry: join --server URL POST_ID');
    return joinGroupOverIroh(flags, out, { dataDir: x.dataDir, seed: x.seed, client: x.client, target: x.target, protocol });
  }
  if (x.client && x.target.host_public_key === x.client.publicKey) throw new UsageError('this is your own invitation');
  if (flags['resume'] !== undefined) throw new UsageError('--resume rejoins a group; this invitation is for a two-party session');
  const { json, control, timeoutSeconds, events } = guestSettings(flags, out);
  if (!json) out.line(`joining ${x.target.host_public_key.slice(0, 16)}… over iroh (post ${x.target.post_id}, protocol ${x.target.protocol_id.slice(0, 8)}…)`);
  const client = x.client;
  try {
    const r = await joinIroh({
      crypto: c,
      seed: x.seed,
      protocol,
      options: {},
      sessionsDir: join(x.dataDir, 'sessions'),
      target: x.target,
      controlMode: control,
      ...(timeoutSeconds !== undefined && { timeoutMs: timeoutSeconds * 1000 }),
      onMessage: progress(out, json, 'guest', protocol),
      onDecisionWindow: decisionPrompt(out, json, 'guest', protocol),
      onEvent: events,
      ...(client && { onProof: async (p) => void (await client.postSessionProof(p)) }),
    });
    const posted = client ? await reportToRegistry(client, r, events) : {};
    return report(out, json, r, { role: 'guest', transport: 'iroh', post_id: x.target.post_id, ...posted });
  } catch (e) {
    if (e instanceof HandshakeError) return refusedBy(out, e);
    throw e;
  }
}
