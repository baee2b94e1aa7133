/** `aigenora protocol test`, `receipt verify`, `proof verify`: sessions, run locally and checked offline. */
import { closeSync, existsSync, mkdtempSync, openSync, readdirSync, readSync, statSync, writeFileSync } from 'node:fs';
import { resolveDataDir } from '../library/data-dir.js';
import { resolveProtocol } from '../library/library.js';
import { builtinDir, findBuiltin } from '../protocols/index.js';
import { FileError, readText } from '../files/index.js';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { getCrypto } from '../crypto/index.js';
import { runLocal } from '../engine/local.js';
import { runGroupLocal, GroupRunError } from '../group/local.js';
import { isGroupTranscript, verifyGroupSessionAt } from '../group/session-dir.js';
import { GROUP_PROOF_KIND, verifyGroupProof } from '../group/proof.js';
import { GroupMessageError } from '../group/action-message.js';
import { GroupLeaderError } from '../group/leader.js';
import { MAX_PROOF_BYTES, MAX_TRANSCRIPT_BYTES, transcriptPaths, verifyProof, verifyTranscriptAt, type Proof, type ProofProtocol } from '../engine/verify.js';
import { appendDecision, type DecisionRecord, type Window } from '../engine/decision.js';
import { allowedText, controlFor } from './decision-control.js';
import { waitForVerdict, watchVerdicts } from './decision-verdict.js';
import { HooksError, loadHooks } from '../hooks/load.js';
import type { Message, Role } from '../hooks/types.js';
import { loadSpec, SpecLoadError } from '../spec/index.js';
import { rulesetHashOfDir } from '../realtime/ruleset-dir.js';
import { RealtimeError } from '../realtime/errors.js';
import { flowMode, type Spec } from '../spec/types.js';
import { MAX_SPEC_BYTES } from '../spec/check.js';
import { UsageError, type Command } from './args.js';
import { optionsFromFlag, reportOptionErrors } from './options.js';

/** A field's value on one line: long strings cut, and arrays (a deck's 52 blobs) cut to their first items. */
function shorten(v: unknown): string {
  if (typeof v === 'string' && v.length > 24) return `${v.slice(0, 12)}…`;
  if (Array.isArray(v) && (v.length > 4 || JSON.stringify(v).length > 80)) return `[${v.slice(0, 2).map(shorten).join(',')},…${v.length} items]`;
  return JSON.stringify(v);
}

function compact(msg: Message): string {
  const { action, ...rest } = msg;
  const fields = Object.entries(rest).map(([k, v]) => `${k}=${shorten(v)}`);
  return `${action}${fields.length ? ` ${fields.join(' ')}` : ''}`;
}

function loadOr2(target: string) {
  try {
    return loadSpec(getCrypto(), target);
  } catch (e) {
    if (e instanceof SpecLoadError) throw new UsageError(e.message);
    throw e;
  }
}

/**
 * What `protocol test` plays: a directory, else a protocol of the library (alias, protocol_id or 8+ hex
 * prefix, as `host --protocol` takes), else a built-in by alias, which needs no `aigenora init`.
 */
function protocolTarget(ref: string, dataDirFlag: unknown): string {
  if (existsSync(ref)) return ref;
  let libraryError = '';
  try {
    const r = resolveProtocol(resolveDataDir(typeof dataDirFlag === 'string' ? dataDirFlag : undefined), ref);
    if (!('error' in r)) return r.dir;
    libraryError = r.error;
  } catch (e) {
    libraryError = e instanceof Error ? e.message : String(e);
  }
  const builtin = findBuiltin(ref);
  if (builtin) return builtinDir(builtin);
  throw new UsageError(`${ref}: not a directory, nor a built-in protocol; ${libraryError}`);
}

const intFlag = (v: unknown, name: string): number | undefined => {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (typeof v !== 'string' || !/^[0-9]+$/.test(v) || !Number.isSafeInteger(n)) throw new UsageError(`--${name} must be a non-negative integer`);
  return n;
};

async function groupTest(
  args: Parameters<Command['run']>[0],
  out: Parameters<Command['run']>[1],
  t: {
    spec: import('../spec/types.js').Spec;
    specText: string;
    protocolId: string;
    hooks: import('../hooks/types.js').HooksModule;
    options: Record<string, unknown>;
    seed: number;
    outDir: string;
    quiet: boolean;
  },
): Promise<number> {
  const c = getCrypto();
  const members = intFlag(args.flags['members'], 'members');
  const failoverAfter = intFlag(args.flags['failover-after'], 'failover-after');
  let r;
  try {
    r = await runGroupLocal({
      crypto: c,
      spec: t.spec,
      specText: t.specText,
      protocolId: t.protocolId,
      hooks: t.hooks,
      options: t.options,
      seed: t.seed,
      outDir: t.outDir,
      ...(members !== undefined && { members }),
      ...(failoverAfter !== undefined && { failoverAfter }),
      onAction: (seat, action, accepted, reason) => {
        if (!t.quiet) out.line(`seat ${seat} → ${shorten(action)}${accepted ? '' : `  refused: ${reason ?? ''}`}`);
      },
    });
  } catch (e) {
    if (e instanceof GroupRunError || e instanceof GroupMessageError || e instanceof GroupLeaderError) {
      out.refuse(e.code, e.message);
      return 1;
    }
    throw e;
  }
  const checks = r.members.map((m) => ({ seat: m.seat, dir: m.dir, check: verifyGroupSessionAt(c, m.dir) }));
  const ok = r.completed && r.members.every((m) => !m.present || m.completed) && checks.every((x) => x.check.ok && x.check.receipt);
  if (args.flags['json'])
    out.json({
      ok,
      protocol_id: t.protocolId,
      group_id: r.groupId,
      completed: r.completed,
      outcome: r.outcome,
      reason: r.reason ?? null,
      actions: r.actions,
      refusals: r.refusals,
      frames: r.frames,
      epochs: r.epochs,
      members: r.members.map((m, i) => ({
        seat: m.seat,
        public_key: m.public_key,
        dir: m.dir,
        present: m.present,
        completed: m.completed,
        outcome: m.outcome,
        verify: checks[i]!.check,
      })),
    });
  else {
    out.line(
      `outcome: ${r.completed ? `completed (${r.outcome ?? 'no outcome'})` : `not completed: ${r.reason ?? ''}`}; ${r.frames} frames, ${r.actions} actions (${r.refusals} refused), ${r.epochs} leader epoch${r.epochs === 1 ? '' : 's'}`,
    );
    for (const x of checks)
      out.line(
        `receipt (seat ${x.seat}, ${x.check.entries} entries): ${x.check.ok && x.check.receipt ? 'verified' : `NOT verified: ${x.check.reason ?? ''}`}  ${x.dir}`,
      );
  }
  return ok ? 0 : 1;
}

export const protocolTest: Command = {
  name: 'test',
  usage:
    'aigenora protocol test <DIR | ALIAS> [--data-dir DIR] [--options JSON] [--seed N] [--out DIR] [--members N] [--failover-after N] [--allow-skeleton-hooks] [--quiet] [--json]',
  help: `Runs a host and a guest in one process with the protocol's hooks: handshake, the flow mode's loop, signed
hash-chained frames, transcripts and the receipt exchange; prints the exchange and the outcome, then
verifies both transcripts and receipts offline. --seed makes the hooks' randomness reproducible.
The protocol is a directory, or a protocol of the library by alias, protocol_id or 8+ hex prefix (as
host --protocol takes it), or a built-in by alias without a library (e.g. rps-v1).
Session directories go to --out (default: a new temporary directory). Exit 0 when the session completed
and both receipts verify, 1 otherwise, 2 for usage errors.
An authoritative_group protocol runs every seat instead (--members, default the spec's minimum): seat 0
leads, each member verifies every envelope and plays from its own view by the protocol's autoplay, and
each writes its own session directory (seat-N), verified the same way. --failover-after N stops the
leader after N accepted actions; the next member by seat takes over from its checkpoint.`,
  flags: {
    'data-dir': 'string',
    options: 'string',
    seed: 'string',
    out: 'string',
    members: 'string',
    'failover-after': 'string',
    'allow-skeleton-hooks': 'boolean',
    quiet: 'boolean',
    json: 'boolean',
  },
  async run(args, out) {
    if (args.positional.length !== 1) throw new UsageError('expected one protocol directory or alias');
    const l = loadOr2(protocolTarget(args.positional[0]!, args.flags['data-dir']));
    if (!l.ok || !l.protocolId) {
      const errors = l.issues.filter((i) => i.severity === 'error');
      out.refuse(
        'SPEC_INVALID',
        `${l.path} is not a valid spec: ${errors.length} error(s)${errors[0] ? `, first ${errors[0].code} at ${errors[0].pointer || '/'}` : ''}`,
      );
      for (const i of l.issues) out.error(`${i.severity} ${i.code} at ${i.pointer || '/'}: ${i.message}`);
      return 1;
    }
    const { options, errors } = optionsFromFlag(args.flags['options'], l.spec);
    if (errors.length) return reportOptionErrors(out, errors);
    const seed = args.flags['seed'] === undefined ? 1 : Number(args.flags['seed']);
    if (!Number.isInteger(seed)) throw new UsageError('--seed must be an integer');
    const c = getCrypto();
    let hooks;
    try {
      hooks = await loadHooks(c, l.dir, l.spec, { allowSkeleton: args.flags['allow-skeleton-hooks'] === true });
    } catch (e) {
      if (e instanceof HooksError) {
        out.refuse(e.code, e.message);
        return 1;
      }
      throw e;
    }
    let rulesetHash: string | undefined;
    try {
      if (flowMode(l.spec) === 'authoritative_realtime') rulesetHash = rulesetHashOfDir(c, l.dir);
    } catch (e) {
      if (!(e instanceof RealtimeError)) throw e;
      out.refuse(e.code, e.message);
      return 1;
    }
    const outDir = typeof args.flags['out'] === 'string' ? args.flags['out'] : mkdtempSync(join(tmpdir(), 'aigenora-test-'));
    const quiet = args.flags['quiet'] === true || args.flags['json'] === true;
    if (flowMode(l.spec) === 'authoritative_group')
      return groupTest(args, out, { spec: l.spec, specText: l.text, protocolId: l.protocolId, hooks, options, seed, outDir, quiet });
    const exchange: { from: Role; msg: Message }[] = [];
    const r = await runLocal({
      crypto: c,
      spec: l.spec,
      specText: l.text,
      protocolId: l.protocolId,
      hooks,
      options,
      seed,
      outDir,
      ...(rulesetHash && { rulesetHash }),
      chat: { host: ['hello from the host', 'bye'], guest: ['hello from the guest'] },
      onMessage: (from, msg) => {
        exchange.push({ from, msg });
        if (!quiet && !msg.action.startsWith('_')) out.line(`${from === 'host' ? 'host  →' : 'guest →'} ${compact(msg)}`);
      },
    });
    const checks = { host: verifyTranscriptAt(c, r.host.dir), guest: verifyTranscriptAt(c, r.guest.dir) };
    const ok = r.host.completed && r.guest.completed && checks.host.ok && checks.host.receipt && checks.guest.ok && checks.guest.receipt;
    if (args.flags['json']) out.json({ ok, protocol_id: l.protocolId, sid: r.host.sid, host: r.host, guest: r.guest, verify: checks, frames: exchange.length });
    else {
      const winner = r.host.outcome === r.guest.outcome ? r.host.outcome : `host says ${r.host.outcome ?? 'none'}, guest says ${r.guest.outcome ?? 'none'}`;
      out.line(
        `outcome: host ${r.host.completed ? 'completed' : `aborted (${r.host.reason}: ${r.host.detail ?? ''})`}, guest ${r.guest.completed ? 'completed' : `aborted (${r.guest.reason}: ${r.guest.detail ?? ''})`}${winner ? `; winner ${winner}` : ''}`,
      );
      for (const side of ['host', 'guest'] as const) {
        const ch = checks[side];
        out.line(`receipt (${side} copy, ${ch.frames} frames): ${ch.ok && ch.receipt ? 'verified' : `NOT verified: ${ch.reason ?? ''}`}  ${r[side].dir}`);
      }
    }
    return ok ? 0 : 1;
  },
};

export const receiptVerify: Command = {
  name: 'verify',
  usage: 'aigenora receipt verify <SESSION_DIR|transcript.jsonl> [--spec spec.json] [--json]',
  help: `Checks the session id against the keys, protocol and nonce in the header; that spec.json (beside the
transcript, or --spec) is a valid spec hashing to the session's protocol_id; every frame's sequence, chain,
signature and acknowledgement (each frame names the latest frame its sender had accepted from the peer, so
the order between the two parties is fixed); every message against the spec; the flow mode's message
sequence replayed over the transcript; that both sides signed receipts over the same final chain heads;
and that receipt.json beside the transcript holds exactly those receipts.
A group member's session directory (authoritative_group) is recognised by its transcript header: every
envelope is replayed through a fresh replica (leader signatures, hash chain, epoch fences, checkpoint and
view hashes after deltas), and receipt.json must be the member's signature over where that replay ends
and over the transcript's bytes.
Exit 0 when all of it verifies, 1 otherwise, 2 for a missing path.`,
  flags: { spec: 'string', json: 'boolean' },
  run(args, out) {
    if (args.positional.length !== 1) throw new UsageError('expected a session directory or transcript');
    const target = args.positional[0]!;
    if (!existsSync(target)) throw new UsageError(`${target} does not exist`, 'FILE_NOT_FOUND');
    if (isGroupTranscript(firstLineOf(transcriptPaths(target).transcript))) {
      const g = verifyGroupSessionAt(getCrypto(), target, args.flags['spec'] as string | undefined);
      const gok = g.ok && g.receipt;
      if (args.flags['json']) out.json(g);
      else
        out.line(
          gok
            ? `verified: ${g.entries} entries of group ${g.group_id ?? ''} as seen by member ${(g.member_public_key ?? '').slice(0, 16)}…, ${g.completed ? `completed (${g.outcome ?? 'no outcome'})` : 'not completed'}, receipt signed by the member`
            : `not verified: ${g.reason ?? ''}`,
        );
      return gok ? 0 : 1;
    }
    const r = verifyTranscriptAt(getCrypto(), target, args.flags['spec'] as string | undefined);
    const ok = r.ok && r.receipt;
    if (args.flags['json']) out.json(r);
    else
      out.line(
        ok
          ? `verified: ${r.frames} frames, session ${r.sid}, ${r.wire === 'plain' ? "receipt signed by this side; the peer's messages as this side received them (unsigned iroh wire)" : 'receipts signed by both sides'}`
          : `not verified: ${r.reason ?? ''}`,
      );
    return ok ? 0 : 1;
  },
};

export const proofVerify: Command = {
  name: 'verify',
  usage: 'aigenora proof verify <proof.json> [--spec spec.json] [--protocol-dir DIR] [--json]',
  help: `Checks that every frame in the proof is signed by its sender for that session, and that the claim follows
from the signed frames: a reveal that does not open its commit, a message the spec refuses, or (with the
protocol's hooks, --protocol-dir) a round_result that differs from the rules. --protocol-dir must hold the
proof's own protocol (the same protocol_id), else it is refused before its hooks are loaded. spec.json
defaults to the one beside proof.json. A group proof (aigenora-group-proof-v1: two frames one leader
signed for one seq, or that do not chain) needs no spec: the frames and the leader's key suffice.
Exit 0 when proven, 1 when not, 2 for usage errors.`,
  flags: { spec: 'string', 'protocol-dir': 'string', json: 'boolean' },
  async run(args, out) {
    if (args.positional.length !== 1) throw new UsageError('expected one proof.json');
    const path = args.positional[0]!;
    const proofText = readText(path, { maxBytes: MAX_PROOF_BYTES, what: 'the proof' });
    const group = groupProofOrUndefined(proofText);
    if (group !== undefined) {
      // A group proof carries the frames and the leader key that signed them; it needs no spec.
      const v = verifyGroupProof(getCrypto(), group);
      const fault = typeof (group as { fault?: unknown }).fault === 'string' ? (group as { fault: string }).fault : '?';
      const leader = String((group as { leader_public_key?: unknown }).leader_public_key ?? '?');
      if (args.flags['json'])
        out.json({
          kind: GROUP_PROOF_KIND,
          fault,
          offender: leader,
          proven: v.ok,
          reason: v.ok
            ? `the leader signed ${fault === 'equivocation' ? 'two different frames for one seq' : 'a frame that does not chain from its previous one'}`
            : v.reason,
        });
      else out.line(v.ok ? `proven (${GROUP_PROOF_KIND}, ${fault}, leader ${leader.slice(0, 16)}…)` : `not proven (${GROUP_PROOF_KIND}): ${v.reason}`);
      return v.ok ? 0 : 1;
    }
    const specPath = (args.flags['spec'] as string | undefined) ?? join(path, '..', 'spec.json');
    if (args.flags['spec'] === undefined && !existsSync(specPath)) throw new UsageError(`no spec.json at ${specPath}; pass --spec`);
    const specText = readText(specPath, { maxBytes: MAX_SPEC_BYTES, what: 'spec.json' });
    const c = getCrypto();
    let proof: unknown;
    try {
      c.jcs(proofText);
      proof = JSON.parse(proofText) as unknown;
    } catch {
      proof = undefined;
    }
    const claim = (typeof proof === 'object' && proof !== null ? proof : {}) as Partial<Proof>;
    let protocol: ProofProtocol | undefined;
    if (typeof args.flags['protocol-dir'] === 'string') {
      const dir = args.flags['protocol-dir'];
      const l = loadOr2(dir);
      if (!l.ok || !l.protocolId) throw new UsageError(`--protocol-dir ${dir} does not hold a valid spec`);
      // Checked before the hooks are loaded: another protocol's code never runs for this proof.
      if (l.protocolId !== claim.protocol_id)
        throw new UsageError(`--protocol-dir ${dir} holds protocol ${l.protocolId}; the proof is about ${String(claim.protocol_id)}`);
      try {
        protocol = { hooks: await loadHooks(c, l.dir, l.spec), protocolId: l.protocolId };
      } catch (e) {
        if (e instanceof HooksError) throw new UsageError(`--protocol-dir ${dir}: ${e.message}`);
        throw e;
      }
    }
    const r = proof === undefined ? { proven: false, reason: `${path} is not strict JSON` } : verifyProof(c, proof, specText, protocol);
    const kind = typeof claim.kind === 'string' ? claim.kind : '?';
    const offender = typeof claim.offender === 'string' ? claim.offender : '?';
    if (args.flags['json']) out.json({ kind, offender, ...r });
    else out.line(`${r.proven ? 'proven' : 'not proven'} (${kind}, offender ${offender}): ${r.reason}`);
    return r.proven ? 0 : 1;
  },
};

/** The first line of a file (up to 64 KiB of it), or '' when it cannot be read. */
export function firstLineOf(path: string): string {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const buf = Buffer.alloc(64 << 10);
    const n = readSync(fd, buf, 0, buf.length, 0);
    const text = buf.subarray(0, n).toString('utf8');
    const end = text.indexOf('\n');
    return end < 0 ? text : text.slice(0, end);
  } catch {
    return '';
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** The parsed proof when it is strict JSON of the group proof kind. */
function groupProofOrUndefined(text: string): unknown {
  try {
    const v = JSON.parse(text) as unknown;
    return typeof v === 'object' && v !== null && (v as { kind?: unknown }).kind === GROUP_PROOF_KIND ? v : undefined;
  } catch {
    return undefined;
  }
}

function sessionDir(target: string): string {
  if (!existsSync(target)) throw new UsageError(`${target} does not exist`);
  return target;
}

/** The files one of which every session side's directory holds once its session started. */
const SESSION_FILES = ['snapshot.json', 'events.jsonl', 'transcript.jsonl'];

/** A session side's directory, or a usage error (exit 2) naming why the path is not one. */
function sessionSideDir(target: string): string {
  const st = statSync(target, { throwIfNoEntry: false });
  if (!st) throw new UsageError(`${target} does not exist`, 'FILE_NOT_FOUND');
  if (!st.isDirectory()) throw new UsageError(`${target} is not a directory, it must be a session directory`, 'NOT_A_SESSION_DIR');
  if (!SESSION_FILES.some((f) => existsSync(join(target, f))))
    throw new UsageError(`${target} is not a session directory (no ${SESSION_FILES.join(', ')})`, 'NOT_A_SESSION_DIR');
  return target;
}

/** A session file's JSON object, or undefined when it is missing, unreadable or not an object. */
function readObject(path: string): Record<string, unknown> | undefined {
  try {
    return parseObject(readText(path, { maxBytes: STATE_FILE_BYTES }));
  } catch (e) {
    if (e instanceof FileError) return undefined;
    throw e;
  }
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(text) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** snapshot.json and decision/state.json are small; anything larger is not one the engine wrote. */
const STATE_FILE_BYTES = 1 << 20;

/** Prints a file's lines, then (with --follow) new lines as they are appended, until the session ends. */
async function follow(path: string, onLine: (line: string) => boolean, followOn: boolean): Promise<void> {
  let offset = 0;
  let ended = false;
  const drain = () => {
    if (!existsSync(path)) return;
    const text = readText(path, { maxBytes: MAX_TRANSCRIPT_BYTES, what: 'events.jsonl' });
    const fresh = text.slice(offset);
    const lastNl = fresh.lastIndexOf('\n');
    if (lastNl < 0) return;
    for (const line of fresh.slice(0, lastNl).split('\n')) if (line) ended = onLine(line) || ended;
    offset += lastNl + 1;
  };
  drain();
  while (followOn && !ended) {
    await new Promise((r) => setTimeout(r, 200));
    drain();
  }
}

export const sessionEvents: Command = {
  name: 'events',
  usage: 'aigenora session events <SESSION_DIR> [--follow] [--json]',
  help: 'One event per line (time, type, data); --follow keeps printing new events until session_ended.',
  flags: { follow: 'boolean', json: 'boolean' },
  async run(args, out) {
    if (args.positional.length !== 1) throw new UsageError('expected a session directory');
    const dir = sessionSideDir(args.positional[0]!);
    await follow(
      join(dir, 'events.jsonl'),
      (line) => {
        const e = parseObject(line);
        if (!e) {
          out.warn(`skipped a line of events.jsonl that is not a JSON object: ${line.slice(0, 80)}`);
          return false;
        }
        if (args.flags['json']) out.line(line);
        else out.line(`${String(e['ts'])} ${String(e['type'])}${e['data'] ? ` ${JSON.stringify(e['data'])}` : ''}`);
        return e['type'] === 'session_ended';
      },
      args.flags['follow'] === true,
    );
    return 0;
  },
};

export const sessionSnapshot: Command = {
  name: 'snapshot',
  usage: 'aigenora session snapshot <SESSION_DIR> [--follow] [--json]',
  help: 'Prints the phase (in_progress, ended, aborted) and details; --follow prints each change until the session ends.',
  flags: { follow: 'boolean', json: 'boolean' },
  async run(args, out) {
    if (args.positional.length !== 1) throw new UsageError('expected a session directory');
    const path = join(sessionSideDir(args.positional[0]!), 'snapshot.json');
    // Without --follow there is nothing to wait for: a session side that has not written its snapshot yet is refused.
    if (!args.flags['follow'] && !existsSync(path))
      throw new FileError('FILE_NOT_FOUND', path, `snapshot.json ${path} does not exist (yet): --follow waits for it`);
    let last = '';
    for (;;) {
      const text = existsSync(path) ? readText(path, { maxBytes: STATE_FILE_BYTES, what: 'snapshot.json' }) : '';
      if (text && text !== last) {
        last = text;
        const s = parseObject(text);
        if (!s) {
          out.refuse('SNAPSHOT_INVALID', `${path} is not a JSON object`);
          return 1;
        }
        if (args.flags['json']) out.line(JSON.stringify(s));
        else out.line(`${String(s['phase'])}${s['reason'] ? ` (${String(s['reason'])})` : ''} ${String(s['updated_at'] ?? '')}`);
        if (s['phase'] !== 'in_progress') return 0;
      }
      if (!args.flags['follow']) {
        if (text) return 0;
        out.refuse('SNAPSHOT_INVALID', `${path} is empty`);
        return 1;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  },
};

/** Why `session decide` ended without the engine taking the decision: exit 1, `aigenora session decide: CODE: …`. */
export class DecideError extends Error {
  override readonly name = 'DecideError';
  constructor(
    readonly code: 'NO_WINDOW' | 'DECISION_REFUSED' | 'DECISION_SUPERSEDED' | 'DECISION_WINDOW_CLOSED' | 'DECISION_TIMEOUT',
    message: string,
  ) {
    super(`${code}: ${message}`);
  }
}

/** How long `session decide` waits for the engine's verdict: it reads decisions every 50 ms, so this is slack for a loaded machine. */
const DECIDE_WAIT_SECONDS = 30;

/** Where the session stands, for a decide that found no window to answer. */
function phaseNote(dir: string): string {
  const s = readObject(join(dir, 'snapshot.json'));
  const phase = s?.['phase'];
  if (phase === undefined) return 'no session has run in this directory yet';
  if (phase === 'in_progress' || phase === 'action_submitted') return 'the session is running and asks for no decision now';
  return `the session has ended (${String(s?.['reason'] ?? phase)})`;
}

/** What the window accepts and until when, from the session's own spec.json, for a refused decision's message. */
function windowNote(dir: string, key: string, value: number): string {
  const w = readObject(join(dir, 'decision', 'state.json')) as Partial<Window> | undefined;
  if (w?.match_key !== key || w.match_value !== value || (w.expects !== 'value' && w.expects !== 'message')) return `the window ${key} ${value} is closed`;
  let spec: Spec | undefined;
  try {
    spec = parseObject(readText(join(dir, 'spec.json'), { maxBytes: MAX_SPEC_BYTES })) as Spec | undefined;
  } catch (e) {
    if (!(e instanceof FileError)) throw e;
  }
  const role = readObject(join(dir, 'snapshot.json'))?.['role'];
  const allowed = allowedText(controlFor(spec, typeof role === 'string' ? role : basename(dir), { expects: w.expects, match_key: key }));
  const until = w.deadline_at ?? w.release_at;
  return `allowed: ${allowed}; the window ${key} ${value} stays open${until ? ` until ${until}` : ''}`;
}

export const sessionDecide: Command = {
  name: 'decide',
  usage:
    'aigenora session decide <SESSION_DIR> (--value V | --message JSON) [--match-key K --match-value N] [--origin NAME] [--timeout-seconds N] [--no-wait] [--json]',
  help: `Appends a decision to SESSION_DIR/decision/decisions.jsonl for the engine to consume (hybrid and human
control modes), then waits for the engine's verdict. Without --match-key/--match-value it answers the window
open now (decision/state.json; the running host or join prints "decision awaited: …" with the command when
one opens). simultaneous_round windows take --value (a round's value, e.g. rock); session_loop and free
windows take --message, the whole next message.
Prints "accepted" once the engine has taken the decision. A decision it refuses (local_decision_rejected)
ends with DECISION_REFUSED, the engine's reason and what the window allows, and the window stays open for
another; a decision another one for the same window was preferred to ends with DECISION_SUPERSEDED; a
window that closed, or a session that ended, before the engine read it with DECISION_WINDOW_CLOSED; no
verdict within --timeout-seconds (default ${DECIDE_WAIT_SECONDS}) with DECISION_TIMEOUT (the decision stays
written and may still be taken).
--no-wait only writes the decision. Exit 0 when accepted (or written, with --no-wait), 1 when refused, not
taken or no window is open (NO_WINDOW), 2 for usage errors.`,
  flags: {
    value: 'string',
    message: 'string',
    'match-key': 'string',
    'match-value': 'string',
    origin: 'string',
    'timeout-seconds': 'string',
    'no-wait': 'boolean',
    json: 'boolean',
  },
  async run(args, out) {
    if (args.positional.length !== 1) throw new UsageError('expected a session directory');
    const dir = sessionDir(args.positional[0]!);
    const wait = args.flags['no-wait'] !== true;
    let timeoutSeconds = DECIDE_WAIT_SECONDS;
    if (args.flags['timeout-seconds'] !== undefined) {
      if (!wait) throw new UsageError('--timeout-seconds is how long to wait for the verdict; --no-wait does not wait');
      timeoutSeconds = Number(args.flags['timeout-seconds']);
      if (typeof args.flags['timeout-seconds'] !== 'string' || !(timeoutSeconds > 0 && timeoutSeconds <= 86_400))
        throw new UsageError('--timeout-seconds must be a number of seconds, above 0 and at most 86400');
    }
    let key = args.flags['match-key'] as string | undefined;
    let value = args.flags['match-value'] === undefined ? undefined : Number(args.flags['match-value']);
    let windowWasOpen = false;
    if (key === undefined || value === undefined) {
      const w = (readObject(join(dir, 'decision', 'state.json')) ?? {}) as Partial<Window>;
      if (typeof w.match_key !== 'string' || typeof w.match_value !== 'number')
        throw new DecideError('NO_WINDOW', `no decision window is open in ${dir}: ${phaseNote(dir)} (--match-key and --match-value decide a window ahead)`);
      key = w.match_key;
      value = w.match_value;
      windowWasOpen = true;
      // The engine would refuse it too, but only after it was written: the wrong flag is the caller's mistake.
      if (w.expects === 'message' && args.flags['value'] !== undefined)
        throw new UsageError(`the open window ${key} ${value} takes a whole message: give --message JSON, not --value`);
      if (w.expects === 'value' && args.flags['message'] !== undefined)
        throw new UsageError(`the open window ${key} ${value} takes a value: give --value, not --message`);
    }
    if (!Number.isInteger(value)) throw new UsageError('--match-value must be an integer');
    const rec: DecisionRecord = {
      match_key: key,
      match_value: value,
      _meta: { decision_id: `cli:${Date.now()}:${Math.random().toString(36).slice(2, 8)}`, origin: (args.flags['origin'] as string | undefined) ?? 'cli' },
    };
    if (typeof args.flags['value'] === 'string') {
      const v = args.flags['value'];
      try {
        rec.value = JSON.parse(v);
      } catch {
        rec.value = v;
      }
    } else if (typeof args.flags['message'] === 'string') {
      const m = parseObject(args.flags['message']);
      if (!m) throw new UsageError('--message must be a JSON object');
      rec.message = m;
    } else throw new UsageError('give --value or --message');
    const id = rec._meta!.decision_id!;
    // Followed from where the engine's files end now: whatever it writes about this decision comes later.
    const watch = watchVerdicts(dir);
    appendDecision(dir, rec);
    if (!wait) {
      if (args.flags['json']) out.json(rec);
      else out.line(`decision ${id} for ${key} ${value} written`);
      return 0;
    }
    const v = await waitForVerdict(dir, watch, { decision_id: id, match_key: key, match_value: value!, windowWasOpen, timeoutMs: timeoutSeconds * 1000 });
    if (v.kind === 'accepted') {
      if (args.flags['json']) out.json({ ...rec, verdict: 'accepted' });
      else out.line(`accepted: decision ${id} for ${key} ${value}`);
      return 0;
    }
    const e =
      v.kind === 'refused'
        ? new DecideError('DECISION_REFUSED', `${v.reason}; ${windowNote(dir, key, value!)}`)
        : v.kind === 'superseded'
          ? new DecideError('DECISION_SUPERSEDED', `another decision for ${key} ${value} was taken instead of ${id}`)
          : v.kind === 'closed'
            ? new DecideError('DECISION_WINDOW_CLOSED', v.why)
            : new DecideError(
                'DECISION_TIMEOUT',
                `no verdict on ${id} for ${key} ${value} within ${timeoutSeconds} s (is the session's host or join still running?); the decision stays in decisions.jsonl`,
              );
    // A script reads the verdict from stdout; the refusal's one line goes to stderr all the same.
    if (args.flags['json']) out.json({ ...rec, verdict: v.kind, code: e.code, reason: e.message.slice(e.code.length + 2) });
    throw e;
  },
};

export const sessionList: Command = {
  name: 'list',
  usage: 'aigenora session list [--data-dir DIR] [--json]',
  help: 'One line per session side: session id (prefix), role, phase, reason, directory.',
  flags: { 'data-dir': 'string', json: 'boolean' },
  run(args, out) {
    const dataDir = resolveDataDir(args.flags['data-dir'] as string | undefined);
    const base = join(dataDir, 'sessions');
    for (const d of [dataDir, base])
      if (statSync(d, { throwIfNoEntry: false })?.isDirectory() === false) throw new UsageError(`${d} is not a directory`, 'DATA_DIR_INVALID');
    const rows: Record<string, unknown>[] = [];
    for (const sid of existsSync(base) ? readdirSync(base).sort() : []) {
      for (const role of ['host', 'guest']) {
        const dir = join(base, sid, role);
        const snap = join(dir, 'snapshot.json');
        if (!existsSync(snap)) continue;
        const s = readObject(snap) ?? { phase: 'unreadable' };
        rows.push({ session: String(s['sid'] ?? sid), role, phase: s['phase'], reason: s['reason'] ?? null, updated_at: s['updated_at'], dir });
      }
    }
    if (args.flags['json']) out.json(rows);
    else if (!rows.length) out.line(`no sessions under ${base}`);
    else
      for (const r of rows)
        out.line(
          `${String(r['session']).slice(0, 16)}  ${String(r['role']).padEnd(5)}  ${String(r['phase']).padEnd(11)} ${r['reason'] ? String(r['reason']).padEnd(18) : ''.padEnd(18)} ${String(r['dir'])}`,
        );
    return 0;
  },
};

export const sessionAbort: Command = {
  name: 'abort',
  usage: 'aigenora session abort <SESSION_DIR> [--json]',
  help: 'Leaves an abort request the running engine picks up within 200 ms: it tells the peer, writes its transcript and ends with reason local_abort.',
  flags: { json: 'boolean' },
  run(args, out) {
    if (args.positional.length !== 1) throw new UsageError('expected a session directory');
    const dir = sessionSideDir(args.positional[0]!);
    const requestedAt = new Date().toISOString();
    writeFileSync(join(dir, 'abort.request'), `${requestedAt}\n`);
    if (args.flags['json']) out.json({ session_dir: dir, abort_requested_at: requestedAt });
    else out.line(`abort requested for ${dir}`);
    return 0;
  },
};
