/** What `aigenora host` and `aigenora join` print (progress, prompts, results), and report to the registry. */
import { join } from 'node:path';
import { getCrypto } from '../crypto/index.js';
import type { Window } from '../engine/decision-window.js';
import type { SessionResult } from '../engine/session.js';
import { verifyTranscriptAt } from '../engine/verify.js';
import { verifyGroupSessionAt } from '../group/session-dir.js';
import type { Message, Role } from '../hooks/types.js';
import type { GroupRunResult } from '../net/group.js';
import type { IrohGroupRunResult } from '../net/group-iroh.js';
import type { Protocol } from '../net/session.js';
import type { RegistryClient, RegistryError } from '../registry/client.js';
import type { Output } from './args.js';
import { awaitedLine } from './decision-control.js';
import { progressLines } from './progress.js';

/** A session's events, one line each (none with --json, whose stdout holds only JSON lines). */
export function sessionEvents(out: Output, json: boolean) {
  return (type: string, data: Record<string, unknown>) => !json && out.line(`(${type}${data['code'] ? `: ${String(data['code'])}` : ''})`);
}

/** What a person following the session reads of each message: the protocol's narration (./progress.ts). */
export function progress(out: Output, quiet: boolean, me: Role, protocol: Protocol) {
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
export function decisionPrompt(out: Output, json: boolean, me: Role, protocol: Protocol) {
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
export function emitJson(out: Output, oneLine: boolean, value: unknown): void {
  if (oneLine) out.line(JSON.stringify(value));
  else out.json(value);
}

/**
 * The session's result on stdout (where its transcript is, the offline receipt check); a session that
 * did not complete, or whose receipt does not verify, is also said on stderr in the CLI's one line,
 * `aigenora <command>: <REASON>: …`, and exits 1.
 */
export function report(out: Output, json: boolean, r: SessionResult, extra: Record<string, unknown>, oneLine = false): number {
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

export function groupEvents(out: Output, json: boolean) {
  return (type: string, data: Record<string, unknown>) => {
    if (json || type === 'dial_retry') return;
    const detail = ['seat', 'epoch', 'message', 'reason'].filter((k) => data[k] !== undefined).map((k) => `${k} ${String(data[k]).slice(0, 120)}`);
    out.line(`(${type}${detail.length ? `: ${detail.join(', ')}` : ''})`);
  };
}

/** A group's result, as report() gives a session's: stdout, and a group that failed said on stderr too. */
export function groupReport(out: Output, json: boolean, r: GroupRunResult, extra: Record<string, unknown>, oneLine = false): number {
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

export const irohGroupExtra = (r: IrohGroupRunResult, postId: string) => ({
  role: r.role,
  transport: 'iroh',
  post_id: postId,
  group_id: r.groupId,
  ...(r.statusPosted && { status_posted: r.statusPosted }),
});

/**
 * A join that never became a session: the host (or the group) refused it, or could not be reached.
 * Nothing ran, so there is no result: the CLI's one line on stderr, with or without --json, and exit 1.
 */
export function refusedBy(out: Output, e: { code: string; message: string }): number {
  out.refuse(e.code, e.message);
  return 1;
}

/**
 * After a session, as the reference's host and guest both do (NOTES A7): its status, then its result
 * when it completed with an outcome. The registry is bookkeeping: a failure is reported, never fatal.
 */
export async function reportToRegistry(
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
export function renewEvery(client: RegistryClient, postId: string, events: (type: string, data: Record<string, unknown>) => void): () => void {
  const timer = setInterval(() => {
    client.renewInvitation(postId).then(
      () => events('invitation_renewed', {}),
      (e: unknown) => events('invitation_renew_failed', { code: (e as RegistryError).code ?? 'ERROR' }),
    );
  }, RENEW_MS);
  return () => clearInterval(timer);
}
