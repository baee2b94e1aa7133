/** `aigenora host`: one session (or, with --daemon, one per guest) or one group, over libp2p or iroh. */
import { join } from 'node:path';
import { getCrypto } from '../crypto/index.js';
import { type Ticket, ticketString } from '../net/invitation.js';
import { hostIroh } from '../net/iroh.js';
import { HostError, host, type HostHandle } from '../net/session.js';
import { hostGroup } from '../net/group.js';
import { hostGroupIroh } from '../net/group-iroh.js';
import { buildInvitation } from '../registry/client.js';
import type { ControlMode } from '../hooks/types.js';
import type { Protocol } from '../net/session.js';
import { UsageError, type Output } from './args.js';
import { writeFileAtomic } from './io.js';
import { actionDelay, identity, registryClient, turnTimeout } from './net-flags.js';
import { decisionPrompt, groupEvents, groupReport, irohGroupExtra, progress, renewEvery, report, reportToRegistry, sessionEvents } from './net-report.js';

/** What `host` read from its flags, for every transport. */
export interface HostContext {
  dataDir: string;
  protocol: Protocol;
  options: Record<string, unknown>;
  control: ControlMode;
  ttl: number;
  json: boolean;
  timeoutSeconds: number | undefined;
  handshakeSeconds: number | undefined;
}

/** Serves a two-party session over libp2p: the first guest, or with --daemon every guest until the invitation expires. */
export async function hostOverLibp2p(
  flags: Record<string, unknown>,
  out: Output,
  x: HostContext,
  listen: string[] | undefined,
  daemon: boolean,
  maxSessions?: number,
): Promise<number> {
  const { dataDir, protocol, options, control, ttl, json, timeoutSeconds, handshakeSeconds } = x;
  let served = 0;
  const seed = identity(dataDir);
  const client = registryClient(flags, seed);
  const events = sessionEvents(out, json);
  let postId: string | undefined;
  let stopRenewal = () => {};
  const h = await host({
    crypto: getCrypto(),
    seed,
    protocol,
    options,
    sessionsDir: join(dataDir, 'sessions'),
    controlMode: control,
    ttlMinutes: ttl,
    daemon,
    ...(maxSessions !== undefined && { maxSessions }),
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
    if (typeof flags['invitation-file'] === 'string') writeFileAtomic(flags['invitation-file'], `${h.text}\n`);
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
    if (daemon) return await serveUntilExpired(h, out, json, () => served);
    const r = await hostedResult(h.done, out, () => stopRenewal());
    if (r === undefined) return 1;
    const posted = client ? await reportToRegistry(client, r, events) : {};
    return report(out, json, r, { role: 'host', invitation: h.text, ...(postId && { post_id: postId }), ...posted }, true);
  } finally {
    stopRenewal();
    await h.stop();
  }
}

/** Serves until the invitation expires (then lets running sessions finish) or the process is told to stop. */
async function serveUntilExpired(h: HostHandle, out: Output, json: boolean, served: () => number): Promise<number> {
  const why = await new Promise<'expired' | 'signal'>((resolve) => {
    void h.expired.then(() => resolve('expired'));
    for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => resolve('signal'));
  });
  if (why === 'expired') {
    if (!json) out.line(`invitation expired at ${h.invitation.expires_at}; no new guests`);
    await h.idle();
  }
  if (!json) out.line(`served ${served()} session(s)`);
  return 0;
}

/** The hosted session's result, or undefined when none ran (the invitation expired unanswered): a refusal, said on stderr. */
async function hostedResult<R>(done: Promise<R>, out: Output, finish: () => void): Promise<R | undefined> {
  try {
    return await done;
  } catch (e) {
    if (!(e instanceof HostError)) throw e;
    out.refuse(e.code, e.message);
    return undefined;
  } finally {
    finish();
  }
}

/** Leads a group over libp2p, serverless, playing seat 0. */
export async function hostGroupOverLibp2p(flags: Record<string, unknown>, out: Output, x: HostContext, listen: string[] | undefined): Promise<number> {
  const { dataDir, protocol, options, ttl, json, timeoutSeconds } = x;
  const delay = actionDelay(flags);
  const turn = turnTimeout(flags, timeoutSeconds);
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
    if (typeof flags['invitation-file'] === 'string') writeFileAtomic(flags['invitation-file'], `${g.text}\n`);
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

export async function hostOverIroh(flags: Record<string, unknown>, out: Output, x: HostContext): Promise<number> {
  const c = getCrypto();
  const seed = identity(x.dataDir);
  const client = registryClient(flags, seed);
  const events = sessionEvents(out, x.json);
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
    const r = await hostedResult(h.done, out, () => stopRenewal());
    if (r === undefined) return 1;
    const posted = client ? await reportToRegistry(client, r, events) : {};
    return report(out, x.json, r, { role: 'host', transport: 'iroh', invitation: h.text, ...(postId && { post_id: postId }), ...posted }, true);
  } finally {
    await h.stop();
  }
}

/**
 * Leads a new group over iroh through the registry's groups API, as the reference's host does: the
 * invitation is posted and the group opened there, members are admitted through it, the lease renewed.
 */
export async function hostGroupOverIroh(flags: Record<string, unknown>, out: Output, x: HostContext, turnTimeoutMs: number | undefined): Promise<number> {
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
    ...(turnTimeoutMs !== undefined && { turnTimeoutMs }),
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
