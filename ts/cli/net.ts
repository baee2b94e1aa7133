/** `aigenora host` and `aigenora join`: two agents, two processes, one network session (net-host.ts, net-join.ts). */
import { resolveDataDir } from '../library/data-dir.js';
import { flowMode } from '../spec/types.js';
import { UsageError, type Command } from './args.js';
import { controlModeOf, listenAddrs, MAX_TTL_MINUTES, maxSessionsOf, protocolFrom, seconds, transportOf, turnTimeout } from './net-flags.js';
import { hostGroupOverIroh, hostGroupOverLibp2p, hostOverIroh, hostOverLibp2p, type HostContext } from './net-host.js';
import { joinByRegistryOrIroh, joinInvitation } from './net-join.js';
import { optionsFromFlag, reportOptionErrors } from './options.js';

export const hostCommand: Command = {
  name: 'host',
  usage:
    'aigenora host (--protocol-dir DIR | --protocol ALIAS) [--transport libp2p|iroh] [--server URL] [--options JSON] [--control-mode M] [--listen ADDR] [--invitation-ttl-minutes N] [--invitation-file F] [--daemon [--max-sessions N]] [--timeout-seconds N] [--handshake-timeout-seconds N] [--action-delay-ms N] [--turn-timeout-seconds N] [--allow-skeleton-hooks] [--data-dir DIR] [--json]',
  help: `Starts a libp2p node (TCP and WebSockets, Noise, Yamux) whose identity is this agent's key, prints a signed
invitation (one line, "aigenora1.…"; also written to --invitation-file), and serves the first guest that
completes the handshake; later guests are refused (with --daemon, every guest is served, each in its own
session, at most --max-sessions at once (default 8, up to 1000; a guest beyond is refused as "host busy"),
until the invitation expires or the process is interrupted). Prints the exchange, the outcome and
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
    'max-sessions': 'string',
    'action-delay-ms': 'string',
    'turn-timeout-seconds': 'string',
    json: 'boolean',
  },
  async run(args, out) {
    const dataDir = resolveDataDir(args.flags['data-dir'] as string | undefined);
    const protocol = await protocolFrom(dataDir, args.flags);
    const { options, errors } = optionsFromFlag(args.flags['options'], protocol.spec);
    if (errors.length) return reportOptionErrors(out, errors);
    const control = controlModeOf(args.flags);
    const ttl = args.flags['invitation-ttl-minutes'] === undefined ? 30 : Number(args.flags['invitation-ttl-minutes']);
    if (!(ttl > 0 && ttl <= MAX_TTL_MINUTES)) throw new UsageError(`--invitation-ttl-minutes must be above 0 and at most ${MAX_TTL_MINUTES}`);
    const json = args.flags['json'] === true;
    const timeoutSeconds = seconds(args.flags, 'timeout-seconds');
    const handshakeSeconds = seconds(args.flags, 'handshake-timeout-seconds');
    const listen = listenAddrs(args.flags['listen']);
    const daemon = args.flags['daemon'] === true;
    const maxSessions = maxSessionsOf(args.flags, daemon);
    const isGroup = flowMode(protocol.spec) === 'authoritative_group';
    const x: HostContext = { dataDir, protocol, options, control, ttl, json, timeoutSeconds, handshakeSeconds };
    // A group with a registry is the reference's: over iroh, through the groups API (libp2p groups are serverless).
    const transport = transportOf(args.flags) ?? (isGroup && args.flags['server'] !== undefined ? 'iroh' : 'libp2p');
    if (transport === 'iroh') {
      if (daemon) throw new UsageError('--daemon is for the libp2p transport');
      if (listen) throw new UsageError('--listen takes libp2p multiaddrs; an iroh host binds its own addresses');
      if (isGroup) return hostGroupOverIroh(args.flags, out, x, turnTimeout(args.flags, timeoutSeconds));
      return hostOverIroh(args.flags, out, x);
    }
    if (args.flags['server'] !== undefined && isGroup)
      throw new UsageError("a group with --server runs over iroh (the registry's groups API); a libp2p group needs no server");
    if (args.flags['server'] !== undefined && daemon) throw new UsageError('--server posts the invitation of one two-party session (not --daemon)');
    if (isGroup) {
      if (daemon) throw new UsageError('--daemon serves two-party sessions; a group host leads one group');
      return hostGroupOverLibp2p(args.flags, out, x, listen);
    }
    return hostOverLibp2p(args.flags, out, x, listen, daemon, maxSessions);
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
    const wanted = transportOf(args.flags);
    if (args.flags['server'] !== undefined || wanted === 'iroh') return joinByRegistryOrIroh(args.flags, out, raw, wanted);
    return joinInvitation(args.flags, out, raw);
  },
};
