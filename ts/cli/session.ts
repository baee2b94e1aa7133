/**
 * `aigenora protocol test`, `receipt verify`, `proof verify`: sessions, run locally and checked offline.
 * The `session` commands on a session's directory are in session-dir.ts and session-decide.ts.
 */
import { closeSync, existsSync, mkdtempSync, openSync, readSync } from 'node:fs';
import { resolveDataDir } from '../library/data-dir.js';
import { resolveProtocol } from '../library/library.js';
import { builtinDir, findBuiltin } from '../protocols/index.js';
import { readText } from '../files/index.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getCrypto } from '../crypto/index.js';
import { runLocal } from '../engine/local.js';
import { runGroupLocal, GroupRunError } from '../group/local.js';
import { isGroupTranscript, verifyGroupSessionAt } from '../group/session-dir.js';
import { GROUP_PROOF_KIND, verifyGroupProof } from '../group/proof.js';
import { GroupMessageError } from '../group/action-message.js';
import { GroupLeaderError } from '../group/leader.js';
import { MAX_PROOF_BYTES, transcriptPaths, verifyProof, verifyTranscriptAt, type Proof, type ProofProtocol } from '../engine/verify.js';
import { HooksError, loadHooks } from '../hooks/load.js';
import type { Message, Role } from '../hooks/types.js';
import { loadSpec, SpecLoadError } from '../spec/index.js';
import { rulesetHashOfDir } from '../realtime/ruleset-dir.js';
import { RealtimeError } from '../realtime/errors.js';
import { flowMode } from '../spec/types.js';
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

export { sessionAbort, sessionEvents, sessionList, sessionSnapshot } from './session-dir.js';
export { DecideError, sessionDecide } from './session-decide.js';
