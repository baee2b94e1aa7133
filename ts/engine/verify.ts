/**
 * Offline checks a third party can run with nothing but the files: a session's transcript and receipt
 * (`aigenora receipt verify`), and a cheat proof (`aigenora proof verify`).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Crypto } from '../crypto/backend.js';
import { fromHex } from '../crypto/encoding.js';
import type { HooksModule, Message, Role } from '../hooks/types.js';
import { instantiateHooks } from '../hooks/load.js';
import { MessageValidator } from '../spec/messages.js';
import { protocolId } from '../spec/protocol-id.js';
import type { Spec } from '../spec/types.js';
import { ChainReader, sessionId, signingBytes, type Frame } from './frame.js';
import type { TranscriptHeader } from './record.js';
import { commitText, SHADOW_FIELDS } from './session.js';

export interface TranscriptCheck {
  ok: boolean;
  /** Both sides signed matching receipts over the final chain heads. */
  receipt: boolean;
  frames: number;
  sid?: string;
  reason?: string;
  /** A message the spec refuses, on which the session was then aborted (the chain is still intact). */
  violation?: { frame: number; from: Role; codes: string[] };
}

const fail = (reason: string, frames = 0, sid?: string): TranscriptCheck => ({ ok: false, receipt: false, frames, reason, ...(sid ? { sid } : {}) });

/** Resolves a session directory or a transcript path to (transcript, spec.json). */
export function transcriptPaths(target: string): { transcript: string; spec: string } {
  const transcript = statSync(target).isDirectory() ? join(target, 'transcript.jsonl') : target;
  return { transcript, spec: join(dirname(transcript), 'spec.json') };
}

/**
 * Rechecks a whole transcript: the header's session id, the spec's protocol_id, both signed chains
 * frame by frame, every protocol message against the spec, and the two receipts.
 */
export function verifyTranscript(crypto: Crypto, transcriptText: string, specText: string): TranscriptCheck {
  const lines = transcriptText.split('\n').filter((l) => l.length > 0);
  let header: TranscriptHeader;
  try {
    header = JSON.parse(lines[0] ?? '') as TranscriptHeader;
  } catch {
    return fail('the first line is not a transcript header');
  }
  if (header._transcript !== 1) return fail('the first line is not a transcript header');
  const sid = sessionId(crypto, header.post_id ?? '', header.protocol_id, header.host_key, header.guest_key, header.nonce);
  if (sid !== header.sid) return fail('the header session id does not match its keys, protocol and nonce');
  let pid: string;
  try {
    pid = protocolId(crypto, specText);
  } catch {
    return fail('spec.json is not strict JSON', 0, sid);
  }
  if (pid !== header.protocol_id) return fail(`spec.json hashes to ${pid}, the session used ${header.protocol_id}`, 0, sid);
  const spec = JSON.parse(specText) as Spec;
  const validator = new MessageValidator(spec);
  const readers: Record<Role, ChainReader> = {
    host: new ChainReader(crypto, sid, 'host', fromHex(header.host_key)),
    guest: new ChainReader(crypto, sid, 'guest', fromHex(header.guest_key)),
  };
  const receipts: Partial<Record<Role, Message>> = {};
  let violation: TranscriptCheck['violation'];
  let heads: Message | undefined;
  let n = 0;
  for (const line of lines.slice(1)) {
    n++;
    let obj: Partial<Frame>;
    try {
      crypto.jcs(line);
      obj = JSON.parse(line) as Partial<Frame>;
    } catch {
      return fail(`line ${n + 1} is not strict JSON`, n, sid);
    }
    const from = obj.from === 'host' || obj.from === 'guest' ? obj.from : undefined;
    if (!from) return fail(`frame ${n} names no sender`, n, sid);
    const before = { host_count: readers.host.count, host_head: readers.host.head, guest_count: readers.guest.count, guest_head: readers.guest.head };
    const a = readers[from].accept(obj);
    if (!a.ok) return fail(`frame ${n} (${from}): ${a.step}: ${a.reason}`, n, sid);
    const msg = a.frame.msg;
    if (msg.action === '_receipt') {
      const claimed = JSON.stringify({ host_count: msg['host_count'], host_head: msg['host_head'], guest_count: msg['guest_count'], guest_head: msg['guest_head'] });
      // Each receipt covers the chains as they stood before the first receipt.
      heads ??= { action: '_receipt', ...before } as Message;
      const want = JSON.stringify({ host_count: heads['host_count'], host_head: heads['host_head'], guest_count: heads['guest_count'], guest_head: heads['guest_head'] });
      if (claimed !== want) return fail(`the ${from}'s receipt does not match the chain heads`, n, sid);
      receipts[from] = msg;
      continue;
    }
    if (msg.action === '_abort') continue;
    if (heads) return fail(`frame ${n} follows a receipt`, n, sid);
    // The session stops at a refused message: nothing but an abort may follow it.
    if (violation) return fail(`frame ${n} follows the refused frame ${violation.frame}`, n, sid);
    const check = validator.check(msg, from === 'host' ? 'host_to_guest' : 'guest_to_host');
    // Free mode drops invalid chat messages and carries on, as the reference does.
    if (!check.ok && spec.flow?.mode !== 'free') violation = { frame: n, from, codes: check.errors.map((e) => e.code) };
  }
  const receipt = !!(receipts.host && receipts.guest);
  if (receipt && violation) return fail(`receipts were signed over the refused frame ${violation.frame}`, n, sid);
  return {
    ok: true, receipt, frames: n, sid,
    ...(violation && { violation }),
    ...(receipt ? {} : { reason: violation ? `the ${violation.from} sent a message the spec refuses (frame ${violation.frame}); the session was aborted` : 'no complete receipt: the session did not end normally' }),
  };
}

export function verifyTranscriptAt(crypto: Crypto, target: string, specPath?: string): TranscriptCheck {
  const p = transcriptPaths(target);
  const spec = specPath ?? p.spec;
  if (!existsSync(p.transcript)) return fail(`no transcript at ${p.transcript}`);
  if (!existsSync(spec)) return fail(`no spec.json at ${spec}; pass --spec`);
  return verifyTranscript(crypto, readFileSync(p.transcript, 'utf8'), readFileSync(spec, 'utf8'));
}

export interface Proof {
  v: 1;
  kind: 'commit_mismatch' | 'invalid_message' | 'balance_mismatch';
  sid: string;
  post_id: string;
  protocol_id: string;
  nonce: string;
  host_key: string;
  guest_key: string;
  offender: Role;
  frames: string[];
  detail: Record<string, unknown>;
}

export interface ProofCheck {
  proven: boolean;
  reason: string;
}

/**
 * Checks a cheat proof without either party: every frame must carry a valid signature of its sender
 * for this session, and the claim must follow from the signed frames alone (for a balance mismatch,
 * with the protocol's own pure judge).
 */
export function verifyProof(crypto: Crypto, proof: Proof, specText: string, hooks?: HooksModule): ProofCheck {
  const no = (reason: string): ProofCheck => ({ proven: false, reason });
  const sid = sessionId(crypto, proof.post_id ?? '', proof.protocol_id, proof.host_key, proof.guest_key, proof.nonce);
  if (sid !== proof.sid) return no('the session id does not match the keys, protocol and nonce');
  if (protocolId(crypto, specText) !== proof.protocol_id) return no('spec.json is not the protocol of this session');
  const spec = JSON.parse(specText) as Spec;
  const keys: Record<Role, Uint8Array> = { host: fromHex(proof.host_key), guest: fromHex(proof.guest_key) };
  const frames: Frame[] = [];
  for (const line of proof.frames) {
    const f = JSON.parse(line) as Frame;
    if (f.sid !== sid || (f.from !== 'host' && f.from !== 'guest')) return no('a frame belongs to another session');
    if (!crypto.ed25519Verify(keys[f.from], signingBytes(crypto, f), fromHex(f.sig))) return no(`a frame is not signed by the ${f.from}`);
    frames.push(f);
  }
  const byOffender = frames.filter((f) => f.from === proof.offender);
  if (proof.kind === 'commit_mismatch') {
    const field = spec.flow?.round?.value_field ?? 'value';
    const [commit, reveal] = byOffender;
    if (!commit || !reveal || commit.msg.action !== 'commit' || reveal.msg.action !== 'reveal' || commit.msg['round'] !== reveal.msg['round'] || commit.seq >= reveal.seq)
      return no('a commit mismatch needs the offender\'s commit and later reveal of the same round');
    const ok = crypto.verifyReveal(commit.msg['hash'] as string, commitText(reveal.msg[field] as never), reveal.msg['nonce'] as string);
    return ok ? no('the reveal matches the commit') : { proven: true, reason: `the ${proof.offender}'s reveal in round ${String(reveal.msg['round'])} does not open its commit` };
  }
  if (proof.kind === 'invalid_message') {
    const f = byOffender[0];
    if (!f) return no('no frame by the offender');
    const check = new MessageValidator(spec).check(f.msg, f.from === 'host' ? 'host_to_guest' : 'guest_to_host');
    return check.ok ? no('the message is valid') : { proven: true, reason: `the ${proof.offender} signed a ${f.msg.action} the spec refuses: ${check.errors.map((e) => `${e.code} at ${e.pointer}`).join('; ')}` };
  }
  // balance_mismatch: rejudge the round with the protocol's pure judge from the signed frames.
  if (!hooks) return no('a balance mismatch is checked with the protocol\'s hooks: pass --protocol-dir');
  const ready = frames.find((f) => f.from === 'host' && f.msg.action === 'ready');
  const results = frames.filter((f) => f.from === 'host' && f.msg.action === 'round_result');
  const disputed = results.at(-1);
  const previous = results.length > 1 ? results.at(-2)!.msg : null;
  const field = spec.flow?.round?.value_field ?? 'value';
  const hostReveal = frames.find((f) => f.from === 'host' && f.msg.action === 'reveal');
  const guestReveal = frames.find((f) => f.from === 'guest' && f.msg.action === 'reveal');
  if (!ready || !disputed || !hostReveal || !guestReveal) return no('a balance mismatch needs the ready, both reveals and the disputed round_result');
  const h = instantiateHooks(hooks, { role: 'guest', options: {}, args: [], stateDir: '', decision: null, random: () => 0 }) as unknown as Record<string, (...a: unknown[]) => unknown>;
  const pure = h['proto_round_judge_pure'];
  if (!pure) return no('the protocol has no pure judge');
  const round = disputed.msg['round'] as number;
  const state = { results: previous ? [previous] : [], last_result: previous, ready: ready.msg };
  const expected = pure(round, hostReveal.msg[field], guestReveal.msg[field], state) as Message;
  const diff = SHADOW_FIELDS.filter((k) => JSON.stringify(expected[k]) !== JSON.stringify(disputed.msg[k]));
  return diff.length ? { proven: true, reason: `the host's round ${round} result differs from the rules in ${diff.join(', ')}` } : no('the round_result follows the rules');
}
