/** `aigenora host` and `aigenora join`: two agents, two processes, one network session. */
import { join } from 'node:path';
import { getCrypto } from '../crypto/index.js';
import { verifyTranscriptAt } from '../engine/verify.js';
import type { Window } from '../engine/decision-window.js';
import type { SessionResult } from '../engine/session.js';
import { HooksError, loadHooks } from '../hooks/load.js';
import { rulesetHashOfDir } from '../realtime/ruleset-dir.js';
import { RealtimeError } from '../realtime/errors.js';
import { flowMode } from '../spec/types.js';
import type { ControlMode, Message, Role } from '../hooks/types.js';
import { resolveDataDir } from '../library/data-dir.js';
import { IdentityError, loadIdentity } from '../library/identity.js';
import { resolveProtocol } from '../library/library.js';
import { parseAnyInvitation, parseTicketString, ticketString, type Invitation, type IrohInvitation, type Ticket } from '../net/invitation.js';
import { hostIroh, joinIroh, type IrohSessionResult, type IrohTarget } from '../net/iroh.js';
import { buildInvitation, checkInvitationBinding, RegistryClient, RegistryError } from '../registry/client.js';
import { multiaddr } from '@multiformats/multiaddr';
import { HandshakeError, host, HostError, join as joinSession, type Protocol, type SessionProof } from '../net/session.js';
import { GroupNetError, hostGroup, joinGroup, type GroupRunResult } from '../net/group.js';
import { hostGroupIroh, joinGroupIroh, type IrohGroupRunResult } from '../net/group-iroh.js';
import { verifyGroupSessionAt } from '../group/session-dir.js';
import { loadSpec } from '../spec/index.js';
import { UsageError, type Command, type Output } from './args.js';
import { readText, writeFileAtomic } from './io.js';
import { optionsFromFlag, reportOptionErrors } from './options.js';
import { progressLines } from './progress.js';
import { awaitedLine } from './decision-control.js';

const CONTROL = ['autonomous', 'hybrid', 'human'];
/** A week: an invitation is a short-lived offer, and its expiry must stay a valid date. */
const MAX_TTL_MINUTES = 7 * 24 * 60;
/** An invitation is about 1.5 KB; a file much larger is not one. */
const MAX_INVITATION_BYTES = 64 << 10;

function seconds(flags: Record<string, unknown>, name: string): number | undefined {
  if (flags[name] === undefined) return undefined;
  const n = Number(flags[name]);
  if (!(n > 0 && n <= 86_400)) throw new UsageError(`--${name} must be a number of seconds, above 0 and at most 86400`);
  return n;
}

/**
 * A group leader's turn deadline from --turn-timeout-seconds (0: turns are never timed out) or, for a
 * host, --timeout-seconds (the wait for each move, as in a two-party session); undefined leaves the
 * default. The protocol's own deadline, when it declares one, comes first (turnTimeoutFor).
 */
function turnTimeout(flags: Record<string, unknown>, fallbackSeconds?: number): number | undefined {
  if (flags['turn-timeout-seconds'] === undefined) return fallbackSeconds === undefined ? undefined : Math.round(fallbackSeconds * 1000);
  const n = Number(flags['turn-timeout-seconds']);
  if (!(n >= 0 && n <= 86_400)) throw new UsageError('--turn-timeout-seconds must be a number of seconds from 0 (never) to 86400');
  return Math.round(n * 1000);
}

function listenAddrs(flag: unknown): string[] | undefined {
  if (typeof flag !== 'string') return undefined;
  const addrs = flag.split(',').map((a) => a.trim());
  for (const a of addrs) {
    try {
      multiaddr(a);
    } catch {
      throw new UsageError(`--listen: ${JSON.stringify(a)} is not a multiaddr (e.g. /ip4/127.0.0.1/tcp/0 or /ip4/127.0.0.1/tcp/0/ws)`);
    }
  }
  return addrs;
}

async function protocolFrom(dataDir: string, flags: Record<string, unknown>, expectId?: string): Promise<Protocol> {
  let dir: string;
  if (typeof flags['protocol-dir'] === 'string') dir = flags['protocol-dir'];
  else {
    const ref = (flags['protocol'] as string | undefined) ?? expectId;
    if (!ref) throw new UsageError('give --protocol-dir DIR or --protocol ALIAS');
    const r = resolveProtocol(dataDir, ref);
    if ('error' in r) throw new UsageError(r.error);
    dir = r.dir;
  }
  const c = getCrypto();
  const l = loadSpec(c, dir);
  if (!l.ok || !l.protocolId) throw new UsageError(`${dir}: ${l.issues.map((i) => `${i.code} at ${i.pointer}`).join('; ')}`);
  if (expectId && l.protocolId !== expectId) throw new UsageError(`${dir} is protocol ${l.protocolId}, the invitation names ${expectId}`);
  try {
    const hooks = await loadHooks(c, l.dir, l.spec, { allowSkeleton: flags['allow-skeleton-hooks'] === true });
    // Both sides of a realtime match must hold the same rule files (NOTES A17): the join names their hash.
    const rulesetHash = flowMode(l.spec) === 'authoritative_realtime' ? rulesetHashOfDir(c, l.dir) : undefined;
    return { spec: l.spec, specText: l.text, protocolId: l.protocolId, hooks, ...(rulesetHash && { rulesetHash }) };
  } catch (e) {
    if (e instanceof HooksError || e instanceof RealtimeError) throw new UsageError(e.message);
    throw e;
  }
}

function identity(dataDir: string): Uint8Array {
  try {
    return loadIdentity(getCrypto(), dataDir).seed;
  } catch (e) {
    if (e instanceof IdentityError) throw new UsageError(`${e.message} (data dir ${dataDir})`);
    throw e;
  }
}

/** What a person following the session reads of each message: the protocol's narration (./progress.ts). */
function progress(out: Output, quiet: boolean, me: Role, protocol: Protocol) {
  if (quiet) return () => {};
  const lines = progressLines(protocol, me);
  return (from: Role, msg: Message) => {
    for (const l of lines(from, msg)) out.line(l);
  };
}

/**
 * The line that tells this side's person a decision window is open (hybrid and human control): what is
 * asked, what is allowed, until when, and the `session decide` command that answers it. With --json,
 * stdout holds only JSON lines (the invitation, the results): the line goes to stderr.
 */
function decisionPrompt(out: Output, json: boolean, me: Role, protocol: Protocol) {
  return (w: Window, dir: string) => {
    const line = awaitedLine(protocol.spec, me, w, dir);
    if (line === undefined) return;
    if (json) out.error(line);
    else out.line(line);
  };
}

/**
 * A result as JSON: one document, or (`oneLine`, for `host`, which prints its invitation and then each
 * session's result) one line of JSON per result.
 */
function emitJson(out: Output, oneLine: boolean, value: unknown): void {
  if (oneLine) out.line(JSON.stringify(value));
  else out.json(value);
}

/**
 * The session's result on stdout (where its transcript is, the offline receipt check); a session that
 * did not complete, or whose receipt does not verify, is also said on stderr in the CLI's one line,
 * `aigenora <command>: <REASON>: …`, and exits 1.
 */
function report(out: Output, json: boolean, r: SessionResult, extra: Record<string, unknown>, oneLine = false): number {
  const c = getCrypto();
  const v = verifyTranscriptAt(c, r.dir);
  const winner = r.outcome;
  if (json) emitJson(out, oneLine, { ...extra, completed: r.completed, reason: r.reason, detail: r.detail, winner, session_id: r.sid, dir: r.dir, receipt: v });
  else {
    if (r.completed) out.line(`session completed${winner ? `: winner ${winner}` : ''}`);
    out.line(`transcript ${join(r.dir, 'transcript.jsonl')}`);
    out.line(
      v.ok && v.receipt
        ? v.wire === 'plain'
          ? `receipt verified offline: ${v.frames} frames, signed by this side (the peer's messages as it received them: the iroh wire is unsigned)`
          : `receipt verified offline: ${v.frames} frames signed by both sides`
        : `receipt: ${v.reason ?? 'not verified'}`,
    );
  }
  const which = extra['session'] !== undefined ? `session ${String(extra['session'])}` : 'the session';
  if (!r.completed) out.refuse(r.reason, `${which} ended without completing${r.detail ? `: ${r.detail}` : ''}`);
  else if (!(v.ok && v.receipt)) out.refuse('RECEIPT_NOT_VERIFIED', `${which} completed, but its receipt does not verify: ${v.reason ?? 'not verified'}`);
  return r.completed && v.ok && v.receipt ? 0 : 1;
}

function actionDelay(flags: Record<string, unknown>): number | undefined {
  if (flags['action-delay-ms'] === undefined) return undefined;
  const n = Number(flags['action-delay-ms']);
  if (!Number.isInteger(n) || n < 0 || n > 60_000) throw new UsageError('--action-delay-ms must be an integer from 0 to 60000');
  return n;
}

function groupEvents(out: Output, json: boolean) {
  return (type: string, data: Record<string, unknown>) => {
    if (json || type === 'dial_retry') return;
    const detail = ['seat', 'epoch', 'message', 'reason'].filter((k) => data[k] !== undefined).map((k) => `${k} ${String(data[k]).slice(0, 120)}`);
    out.line(`(${type}${detail.length ? `: ${detail.join(', ')}` : ''})`);
  };
}

/** A group's result, as report() gives a session's: stdout, and a group that failed said on stderr too. */
function groupReport(out: Output, json: boolean, r: GroupRunResult, extra: Record<string, unknown>, oneLine = false): number {
  const v = verifyGroupSessionAt(getCrypto(), r.dir);
  if (json)
    emitJson(out, oneLine, { ...extra, completed: r.completed, outcome: r.outcome, epochs: r.epochs, reason: r.reason ?? null, dir: r.dir, receipt: v });
  else {
    if (r.completed) out.line(`group completed: ${r.outcome ?? 'no outcome'}`);
    out.line(`transcript ${join(r.dir, 'transcript.jsonl')}`);
    out.line(v.ok && v.receipt ? `receipt verified offline: ${v.entries} entries, signed by this member` : `receipt: ${v.reason ?? 'not verified'}`);
  }
  if (!r.completed) out.refuse('GROUP_NOT_COMPLETED', `the group ended without completing: ${r.reason ?? 'no reason given'}`);
  else if (!(v.ok && v.receipt))
    out.refuse('RECEIPT_NOT_VERIFIED', `the group completed, but this member's receipt does not verify: ${v.reason ?? 'not verified'}`);
  return r.completed && v.ok && v.receipt ? 0 : 1;
}

/**
 * Leads a new group over iroh through the registry's groups API, as the reference's host does: the
 * invitation is posted and the group opened there, members are admitted through it, the lease renewed.
 */
async function hostGroupOverIroh(
  flags: Record<string, unknown>,
  out: Output,
  x: {
    dataDir: string;
    protocol: Protocol;
    options: Record<string, unknown>;
    control: ControlMode;
    ttl: number;
    json: boolean;
    turnTimeoutMs: number | undefined;
  },
): Promise<number> {
  const seed = identity(x.dataDir);
  const client = registryClient(flags, seed);
  if (!client) throw new UsageError("a group over iroh needs --server URL: the registry's groups API admits its members and arbitrates its leader");
  if (typeof flags['invitation-file'] === 'string')
    throw new UsageError("--invitation-file: an iroh group's invitation is its registry post (members join with --server URL POST_ID)");
  const delay = actionDelay(flags);
  const g = await hostGroupIroh({
    crypto: getCrypto(),
    seed,
    protocol: x.protocol,
    options: x.options,
    sessionsDir: join(x.dataDir, 'sessions'),
    client,
    controlMode: x.control,
    ttlMinutes: x.ttl,
    ...(delay && { actionDelayMs: delay }),
    ...(x.turnTimeoutMs !== undefined && { turnTimeoutMs: x.turnTimeoutMs }),
    onEvent: groupEvents(out, x.json),
  });
  try {
    // The post id first: what members (and scripts) wait for; with --json the first line of JSON.
    if (x.json) out.line(JSON.stringify({ role: 'leader', transport: 'iroh', post_id: g.postId, group_id: g.groupId, ticket: g.ticket }));
    else {
      out.line(`post_id: ${g.postId}\ngroup_id: ${g.groupId}`);
      out.line(`leading group ${g.groupId} over iroh (ticket ${g.ticket}); members join with: aigenora join --server ${String(flags['server'])} ${g.postId}`);
    }
    const r = await g.done;
    return groupReport(out, x.json, r, irohGroupExtra(r, g.postId), true);
  } finally {
    await g.stop();
  }
}

const irohGroupExtra = (r: IrohGroupRunResult, postId: string) => ({
  role: r.role,
  transport: 'iroh',
  post_id: postId,
  group_id: r.groupId,
  ...(r.statusPosted && { status_posted: r.statusPosted }),
});

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

/**
 * A join that never became a session: the host (or the group) refused it, or could not be reached.
 * Nothing ran, so there is no result: the CLI's one line on stderr, with or without --json, and exit 1.
 */
function refusedBy(out: Output, e: { code: string; message: string }): number {
  out.refuse(e.code, e.message);
  return 1;
}

const TRANSPORTS = ['libp2p', 'iroh'] as const;
type TransportName = (typeof TRANSPORTS)[number];

function transportOf(flags: Record<string, unknown>): TransportName | undefined {
  const t = flags['transport'];
  if (t === undefined) return undefined;
  if (!TRANSPORTS.includes(t as TransportName)) throw new UsageError('--transport must be libp2p or iroh');
  return t as TransportName;
}

function registryClient(flags: Record<string, unknown>, seed: Uint8Array): RegistryClient | undefined {
  const server = flags['server'];
  if (typeof server !== 'string') return undefined;
  try {
    return new RegistryClient(server, seed, getCrypto());
  } catch (e) {
    if (e instanceof RegistryError) throw new UsageError(`--server: ${e.message}`);
    throw e;
  }
}

/**
 * After a session, as the reference's host and guest both do (NOTES A7): its status, then its result
 * when it completed with an outcome. The registry is bookkeeping: a failure is reported, never fatal.
 */
async function reportToRegistry(
  client: RegistryClient,
  r: SessionResult,
  say: (type: string, data: Record<string, unknown>) => void,
): Promise<Record<string, unknown>> {
  const done: Record<string, unknown> = {};
  try {
    await client.postSessionStatus(r.sid, r.completed ? 'closed' : 'failed');
    done['status_posted'] = true;
  } catch (e) {
    say('session_status_failed', { code: (e as RegistryError).code ?? 'ERROR', message: (e as Error).message });
  }
  // The one outcome the session declared (SessionResult.outcome): a mental-poker winner only after its audit.
  const winner = r.completed ? r.outcome : undefined;
  if (winner) {
    try {
      await client.postSessionResult(r.sid, winner);
      done['result_posted'] = winner;
    } catch (e) {
      say('session_result_failed', { code: (e as RegistryError).code ?? 'ERROR', message: (e as Error).message });
    }
  }
  return done;
}

/** Renewal period of a posted invitation, as the reference renews (NOTES A8). */
const RENEW_MS = 120_000;

/** Renews a posted invitation every RENEW_MS until the returned stop is called (paired, or the host ended). */
function renewEvery(client: RegistryClient, postId: string, events: (type: string, data: Record<string, unknown>) => void): () => void {
  const timer = setInterval(() => {
    client.renewInvitation(postId).then(
      () => events('invitation_renewed', {}),
      (e: unknown) => events('invitation_renew_failed', { code: (e as RegistryError).code ?? 'ERROR' }),
    );
  }, RENEW_MS);
  return () => clearInterval(timer);
}

interface HostContext {
  dataDir: string;
  protocol: Protocol;
  options: Record<string, unknown>;
  control: ControlMode;
  ttl: number;
  json: boolean;
  timeoutSeconds: number | undefined;
  handshakeSeconds: number | undefined;
}

async function hostOverIroh(flags: Record<string, unknown>, out: Output, x: HostContext): Promise<number> {
  const c = getCrypto();
  const seed = identity(x.dataDir);
  const client = registryClient(flags, seed);
  const events = (type: string, data: Record<string, unknown>) => !x.json && out.line(`(${type}${data['code'] ? `: ${String(data['code'])}` : ''})`);
  let postId: string | undefined;
  const h = await hostIroh({
    crypto: c,
    seed,
    protocol: x.protocol,
    options: x.options,
    sessionsDir: join(x.dataDir, 'sessions'),
    controlMode: x.control,
    ttlMinutes: x.ttl,
    ...(x.timeoutSeconds !== undefined && { timeoutMs: x.timeoutSeconds * 1000 }),
    ...(x.handshakeSeconds !== undefined && { handshakeTimeoutMs: x.handshakeSeconds * 1000 }),
    onMessage: progress(out, x.json, 'host', x.protocol),
    onDecisionWindow: decisionPrompt(out, x.json, 'host', x.protocol),
    onEvent: events,
    ...(client && {
      publish: async (ticket: string) => {
        const posted = await client.postInvitation(
          buildInvitation(c, seed, {
            message: x.protocol.spec.name,
            ticket,
            protocolId: x.protocol.protocolId,
            controlMode: x.control,
            options: x.options,
            transport: 'iroh',
          }),
        );
        postId = posted.postId;
        return posted;
      },
    }),
  });
  let stopRenewal = () => {};
  try {
    if (typeof flags['invitation-file'] === 'string') writeFileAtomic(flags['invitation-file'], `${h.text}\n`);
    // The invitation is the host's first result; with --json its first line of JSON (the session's result follows).
    if (x.json)
      out.line(
        JSON.stringify({
          role: 'host',
          transport: 'iroh',
          invitation: h.text,
          ...(postId && { post_id: postId }),
          ticket: h.ticket,
          expires_at: h.invitation.expires_at,
        }),
      );
    else {
      out.line(h.text);
      if (postId) out.line(`post_id: ${postId}`);
      out.line(`waiting for a guest over iroh (ticket ${h.ticket}; invitation expires ${h.invitation.expires_at})`);
    }
    if (client && postId) {
      stopRenewal = renewEvery(client, postId, events);
      void h.paired.then(() => stopRenewal());
    }
    let r: IrohSessionResult;
    try {
      r = await h.done;
    } catch (e) {
      if (!(e instanceof HostError)) throw e;
      // No session ran (the invitation expired unanswered): a refusal, said on stderr.
      out.refuse(e.code, e.message);
      return 1;
    } finally {
      stopRenewal();
    }
    const posted = client ? await reportToRegistry(client, r, events) : {};
    return report(out, x.json, r, { role: 'host', transport: 'iroh', invitation: h.text, ...(postId && { post_id: postId }), ...posted }, true);
  } finally {
    await h.stop();
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

export const hostCommand: Command = {
  name: 'host',
  usage:
    'aigenora host (--protocol-dir DIR | --protocol ALIAS) [--transport libp2p|iroh] [--server URL] [--options JSON] [--control-mode M] [--listen ADDR] [--invitation-ttl-minutes N] [--invitation-file F] [--daemon] [--timeout-seconds N] [--handshake-timeout-seconds N] [--action-delay-ms N] [--turn-timeout-seconds N] [--allow-skeleton-hooks] [--data-dir DIR] [--json]',
  help: `Starts a libp2p node (TCP and WebSockets, Noise, Yamux) whose identity is this agent's key, prints a signed
invitation (one line, "aigenora1.…"; also written to --invitation-file), and serves the first guest that
completes the handshake; later guests are refused (with --daemon, every guest is served, each in its own
session, until the invitation expires or the process is interrupted). Prints the exchange, the outcome and
the transcript. If the invitation expires before a guest completes the handshake, the host ends with
INVITATION_EXPIRED (exit 1, on stderr). --json prints one line of JSON per result on stdout: the invitation
first ({"role", "invitation", "post_id" with --server, "addrs" or "ticket", "expires_at"}), then each
session's result.
--listen takes multiaddrs (comma-separated; default 127.0.0.1 on a free TCP and WebSocket port).
--handshake-timeout-seconds (default 10): a connection that has not completed Noise and the session
handshake by then is closed; --timeout-seconds is the wait for each frame once the session runs.
For an authoritative_group protocol the host leads one group and plays seat 0; members join with the
invitation (see join). --action-delay-ms pauses before each of the leader's own actions. A member silent on its
turn (or disconnected) has its turn resolved by the protocol's rule (fold, pass, end turn…) once
--turn-timeout-seconds (else --timeout-seconds; default 60, 0 never) have passed, unless the protocol
declares its own deadline; a member gone that long sits out its later turns until it rejoins. With --server URL
a group is the reference's (--transport iroh implied): the invitation is posted and the group opened
through the registry's groups API, which admits each member (id and seat) and holds the leader's lease
(renewed every third of it, with the newest checkpoint a member acknowledged); it prints post_id and
group_id, and sets the group's status (active at the start, closed at the end). Reference agents and ours
lead and join each other's groups this way. Without --server a group runs over libp2p, serverless.
--transport iroh speaks the reference's wire instead (iroh, ALPN /agent-chat/1, the A7 handshake, unsigned
messages; each side still writes its own signed transcript): the invitation carries an iroh ticket, and
with --server URL it is also posted to that registry (renewed every 120 s until a guest pairs), and the
session's status and result are reported there. --server works on libp2p too (the post then names
transport libp2p and the peer id and multiaddrs as its ticket, which only aigenora guests dial).`,
  flags: {
    transport: 'string',
    server: 'string',
    'protocol-dir': 'string',
    protocol: 'string',
    options: 'string',
    'control-mode': 'string',
    listen: 'string',
    'invitation-ttl-minutes': 'string',
    'invitation-file': 'string',
    'data-dir': 'string',
    'allow-skeleton-hooks': 'boolean',
    'timeout-seconds': 'string',
    'handshake-timeout-seconds': 'string',
    daemon: 'boolean',
    'action-delay-ms': 'string',
    'turn-timeout-seconds': 'string',
    json: 'boolean',
  },
  async run(args, out) {
    const dataDir = resolveDataDir(args.flags['data-dir'] as string | undefined);
    const protocol = await protocolFrom(dataDir, args.flags);
    const { options, errors } = optionsFromFlag(args.flags['options'], protocol.spec);
    if (errors.length) return reportOptionErrors(out, errors);
    const control = (args.flags['control-mode'] as string | undefined) ?? 'autonomous';
    if (!CONTROL.includes(control)) throw new UsageError('--control-mode must be autonomous, hybrid or human');
    const ttl = args.flags['invitation-ttl-minutes'] === undefined ? 30 : Number(args.flags['invitation-ttl-minutes']);
    if (!(ttl > 0 && ttl <= MAX_TTL_MINUTES)) throw new UsageError(`--invitation-ttl-minutes must be above 0 and at most ${MAX_TTL_MINUTES}`);
    const json = args.flags['json'] === true;
    const timeoutSeconds = seconds(args.flags, 'timeout-seconds');
    const handshakeSeconds = seconds(args.flags, 'handshake-timeout-seconds');
    const listen = listenAddrs(args.flags['listen']);
    const daemon = args.flags['daemon'] === true;
    const isGroup = flowMode(protocol.spec) === 'authoritative_group';
    // A group with a registry is the reference's: over iroh, through the groups API (libp2p groups are serverless).
    const transport = transportOf(args.flags) ?? (isGroup && args.flags['server'] !== undefined ? 'iroh' : 'libp2p');
    if (transport === 'iroh') {
      if (daemon) throw new UsageError('--daemon is for the libp2p transport');
      if (listen) throw new UsageError('--listen takes libp2p multiaddrs; an iroh host binds its own addresses');
      if (isGroup)
        return hostGroupOverIroh(args.flags, out, {
          dataDir,
          protocol,
          options,
          control: control as ControlMode,
          ttl,
          json,
          turnTimeoutMs: turnTimeout(args.flags, timeoutSeconds),
        });
      return hostOverIroh(args.flags, out, { dataDir, protocol, options, control: control as ControlMode, ttl, json, timeoutSeconds, handshakeSeconds });
    }
    if (args.flags['server'] !== undefined && isGroup)
      throw new UsageError("a group with --server runs over iroh (the registry's groups API); a libp2p group needs no server");
    if (args.flags['server'] !== undefined && daemon) throw new UsageError('--server posts the invitation of one two-party session (not --daemon)');
    if (flowMode(protocol.spec) === 'authoritative_group') {
      if (daemon) throw new UsageError('--daemon serves two-party sessions; a group host leads one group');
      const delay = actionDelay(args.flags);
      const turn = turnTimeout(args.flags, timeoutSeconds);
      const g = await hostGroup({
        crypto: getCrypto(),
        seed: identity(dataDir),
        protocol,
        options,
        sessionsDir: join(dataDir, 'sessions'),
        ttlMinutes: ttl,
        ...(listen && { listen }),
        ...(delay && { actionDelayMs: delay }),
        ...(turn !== undefined && { turnTimeoutMs: turn }),
        onEvent: groupEvents(out, json),
      });
      try {
        if (typeof args.flags['invitation-file'] === 'string') writeFileAtomic(args.flags['invitation-file'], `${g.text}\n`);
        if (json)
          out.line(
            JSON.stringify({ role: 'leader', invitation: g.text, group_id: g.groupId, addrs: g.invitation.ticket.addrs, expires_at: g.invitation.expires_at }),
          );
        else {
          out.line(g.text);
          out.line(`leading group ${g.groupId} on ${g.invitation.ticket.addrs.join(' ')}; members join with this invitation`);
        }
        return groupReport(out, json, await g.done, { role: 'leader', group_id: g.groupId }, true);
      } finally {
        await g.stop();
      }
    }
    let served = 0;
    const seed = identity(dataDir);
    const client = registryClient(args.flags, seed);
    const events = (type: string, data: Record<string, unknown>) => !json && out.line(`(${type}${data['code'] ? `: ${String(data['code'])}` : ''})`);
    let postId: string | undefined;
    let stopRenewal = () => {};
    const h = await host({
      crypto: getCrypto(),
      seed,
      protocol,
      options,
      sessionsDir: join(dataDir, 'sessions'),
      controlMode: control as ControlMode,
      ttlMinutes: ttl,
      daemon,
      ...(client && {
        publish: async (ticket: Ticket) => {
          const posted = await client.postInvitation(
            buildInvitation(getCrypto(), seed, {
              message: protocol.spec.name,
              ticket: ticketString(ticket),
              protocolId: protocol.protocolId,
              controlMode: control,
              options,
              transport: 'libp2p',
            }),
          );
          postId = posted.postId;
          return posted;
        },
      }),
      onSession: (r) => {
        served++;
        report(out, json, r, { role: 'host', session: served }, true);
      },
      ...(listen && { listen }),
      ...(timeoutSeconds !== undefined && { timeoutMs: timeoutSeconds * 1000 }),
      ...(handshakeSeconds !== undefined && { handshakeTimeoutMs: handshakeSeconds * 1000 }),
      onMessage: progress(out, json, 'host', protocol),
      onDecisionWindow: decisionPrompt(out, json, 'host', protocol),
      onEvent: (type, data) => {
        if (type === 'connected') stopRenewal();
        events(type, data);
      },
    });
    try {
      if (typeof args.flags['invitation-file'] === 'string') writeFileAtomic(args.flags['invitation-file'], `${h.text}\n`);
      if (client && postId) stopRenewal = renewEvery(client, postId, events);
      // The invitation is the host's first result; with --json its first line of JSON (each session's result follows).
      if (json)
        out.line(
          JSON.stringify({
            role: 'host',
            invitation: h.text,
            ...(postId && { post_id: postId }),
            addrs: h.invitation.ticket.addrs,
            expires_at: h.invitation.expires_at,
          }),
        );
      else {
        out.line(h.text);
        if (postId) out.line(`post_id: ${postId}`);
        out.line(`waiting for a guest on ${h.invitation.ticket.addrs.join(' ')} (invitation expires ${h.invitation.expires_at})`);
      }
      if (daemon) {
        // Serve until the invitation expires (then let running sessions finish) or the process is told to stop.
        const why = await new Promise<'expired' | 'signal'>((resolve) => {
          void h.expired.then(() => resolve('expired'));
          for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => resolve('signal'));
        });
        if (why === 'expired') {
          if (!json) out.line(`invitation expired at ${h.invitation.expires_at}; no new guests`);
          await h.idle();
        }
        if (!json) out.line(`served ${served} session(s)`);
        return 0;
      }
      let r;
      try {
        r = await h.done;
      } catch (e) {
        if (!(e instanceof HostError)) throw e;
        // No session ran (the invitation expired unanswered): a refusal, said on stderr.
        out.refuse(e.code, e.message);
        return 1;
      } finally {
        stopRenewal();
      }
      const posted = client ? await reportToRegistry(client, r, events) : {};
      return report(out, json, r, { role: 'host', invitation: h.text, ...(postId && { post_id: postId }), ...posted }, true);
    } finally {
      stopRenewal();
      await h.stop();
    }
  },
};

export const joinCommand: Command = {
  name: 'join',
  usage:
    'aigenora join (<INVITATION | @FILE> | --server URL POST_ID) [--transport libp2p|iroh] [--protocol-dir DIR] [--data-dir DIR] [--control-mode M] [--timeout-seconds N] [--resume DIR] [--action-delay-ms N] [--turn-timeout-seconds N] [--allow-skeleton-hooks] [--json]',
  help: `Checks the invitation (both host signatures, expiry, transport), resolves its protocol_id in the local library
(or --protocol-dir, which must hash to the same id), connects to the host's key, runs the session handshake
and the protocol, then prints the outcome, where the transcript is, and the offline receipt check.
For an authoritative_group protocol the agent joins the group as a member: it is admitted by the leader,
verifies every envelope, plays its seat by the protocol's autoplay, and follows a failover to the next
leader (or becomes it). --resume DIR rejoins after a crash from the member's own session directory;
--timeout-seconds is then how long a lost leader (or its successor) is dialed before giving up;
--action-delay-ms pauses before each of this member's actions; --turn-timeout-seconds (default 60, 0 never)
is the turn deadline this member keeps if it comes to lead (see host).
A group post (--server URL POST_ID; its host used --server) is joined over iroh as the reference does: the
registry admits this member (the admission signed by leader and member) and lists its seat, the channel
is proved with this agent's key. When the leader goes silent the registry is asked again: a newer epoch
is followed, an expired lease is claimed (claim-leader, from this member's signed checkpoint) and the
winner leads; --timeout-seconds (default 120) is how long the group may go without a leader. A leader
that crashed rejoins its own group this way, as a member, in a new session directory.
An iroh invitation (host --transport iroh) is joined over iroh on the reference's wire. With --server URL
the argument is a registry post id: the invitation is fetched there, its transport binding signature
checked (refused without one), the session proof posted before the session starts, and the session's
status and result reported after it. --transport, when given, must be the invitation's.`,
  flags: {
    transport: 'string',
    server: 'string',
    'protocol-dir': 'string',
    'data-dir': 'string',
    'control-mode': 'string',
    'allow-skeleton-hooks': 'boolean',
    'timeout-seconds': 'string',
    resume: 'string',
    'action-delay-ms': 'string',
    'turn-timeout-seconds': 'string',
    json: 'boolean',
  },
  async run(args, out) {
    if (args.positional.length !== 1) throw new UsageError(args.flags['server'] === undefined ? 'expected one invitation (or @file)' : 'expected one post id');
    const raw = args.positional[0]!;
    const c = getCrypto();
    const wanted = transportOf(args.flags);
    if (args.flags['server'] !== undefined || wanted === 'iroh') {
      const dataDir = resolveDataDir(args.flags['data-dir'] as string | undefined);
      const seed = identity(dataDir);
      const client = registryClient(args.flags, seed);
      let target: IrohTarget;
      if (client) {
        const t = await targetFromServer(client, raw);
        if (wanted && wanted !== t.transport) throw new UsageError(`--transport ${wanted}, but the invitation is for ${t.transport}`);
        if (t.transport === 'libp2p') return joinOverLibp2p(args.flags, out, { dataDir, seed, client, inv: t.target });
        target = t.target;
      } else {
        const inv = parseAnyInvitation(c, raw.startsWith('@') ? readText(raw.slice(1), 'invitation file', MAX_INVITATION_BYTES) : raw);
        if (inv.transport !== 'iroh') throw new UsageError(`--transport iroh, but the invitation is for ${inv.transport}`);
        target = irohTarget(inv);
      }
      if (wanted === 'libp2p') throw new UsageError('--transport libp2p, but the invitation is for iroh');
      return joinOverIroh(args.flags, out, { dataDir, seed, client, target });
    }
    const text = raw.startsWith('@') ? readText(raw.slice(1), 'invitation file', MAX_INVITATION_BYTES) : raw;
    // A refused invitation (InvitationRefused, with its code) ends at the CLI's error boundary.
    const any = parseAnyInvitation(c, text);
    if (any.transport === 'iroh') {
      const dataDir = resolveDataDir(args.flags['data-dir'] as string | undefined);
      return joinOverIroh(args.flags, out, { dataDir, seed: identity(dataDir), client: undefined, target: irohTarget(any) });
    }
    const inv = any;
    const dataDir = resolveDataDir(args.flags['data-dir'] as string | undefined);
    const protocol = await protocolFrom(dataDir, args.flags, inv.protocol_id);
    const json = args.flags['json'] === true;
    const control = (args.flags['control-mode'] as string | undefined) ?? 'autonomous';
    if (!CONTROL.includes(control)) throw new UsageError('--control-mode must be autonomous, hybrid or human');
    const timeoutSeconds = seconds(args.flags, 'timeout-seconds');
    if (flowMode(protocol.spec) === 'authoritative_group') {
      if (!json) out.line(`joining group of ${inv.ticket.peer_id} (protocol ${inv.protocol_id.slice(0, 8)}…)`);
      const resume = args.flags['resume'] as string | undefined;
      try {
        const delay = actionDelay(args.flags);
        const turn = turnTimeout(args.flags);
        const r = await joinGroup({
          crypto: c,
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
    return joinOverLibp2p(args.flags, out, { dataDir, seed: identity(dataDir), client: undefined, inv, protocol });
  },
};

/** What both kinds of guest read from the flags, and how they show events. */
function guestSettings(flags: Record<string, unknown>, out: Output) {
  const json = flags['json'] === true;
  const control = (flags['control-mode'] as string | undefined) ?? 'autonomous';
  if (!CONTROL.includes(control)) throw new UsageError('--control-mode must be autonomous, hybrid or human');
  const events = (type: string, data: Record<string, unknown>) => !json && out.line(`(${type}${data['code'] ? `: ${String(data['code'])}` : ''})`);
  return { json, control: control as ControlMode, timeoutSeconds: seconds(flags, 'timeout-seconds'), events };
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
