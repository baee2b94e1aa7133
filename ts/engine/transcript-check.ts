/**
 * Offline checks a third party can run with nothing but the evidence's text: a session's transcript
 * and receipt (`aigenora receipt verify`, and a browser page checking its own session), and a cheat
 * proof (`aigenora proof verify`). Everything read here may have been written by an attacker: every
 * failure is a result, never an exception. verify.ts reads the same from files.
 */
import type { Crypto } from '../crypto/backend.js';
import { fromHex } from '../crypto/encoding.js';
import type { HooksModule, Message, Role } from '../hooks/types.js';
import { instantiateHooks } from '../hooks/instantiate.js';
import { checkSpecText } from '../spec/check.js';
import { messageValidator, type MessageValidator } from '../spec/messages.js';
import type { Spec } from '../spec/types.js';
import { ChainReader, FRAME_VERSION, sessionId, signingBytes, type Frame } from './frame.js';
import { commitText, FlowReplay } from './flow.js';
import type { TranscriptHeader } from './record.js';
import { shadowMismatches } from './modes/rounds.js';
import { checkRealtimeProof, realtimeMessagesOfLines, verifyRealtimeTranscript } from '../realtime/transcript.js';
import { RealtimeError } from '../realtime/errors.js';
import type { MentalPokerHooks } from '../hooks/types.js';
import { replayGame, type WireMessage } from '../mp/replay.js';
import { replayRules } from '../mp/mode-rules.js';

export interface TranscriptCheck {
  /** The transcript is authentic and consistently ordered (a party may still have misbehaved: see `violation`). */
  ok: boolean;
  /** Both sides signed matching receipts over the final chain heads, the flow was complete, and receipt.json matches. */
  receipt: boolean;
  frames: number;
  sid?: string;
  reason?: string;
  /**
   * 'plain': the reference's unsigned wire; the peer's frames are the writer's witness of what it
   * received (signed by the writer), and the receipt is the writer's alone.
   */
  wire?: 'plain';
  /** A message the spec or the flow refuses, on which the session was then aborted (the chains are still intact). */
  violation?: { frame: number; from: Role; codes: string[]; reason?: string };
}

/** Largest transcript, receipt.json and proof.json read. */
export const MAX_TRANSCRIPT_BYTES = 256 << 20;
export const MAX_RECEIPT_BYTES = 1 << 20;
export const MAX_PROOF_BYTES = 16 << 20;

const fail = (reason: string, frames = 0, sid?: string): TranscriptCheck => ({ ok: false, receipt: false, frames, reason, ...(sid ? { sid } : {}) });
const other = (r: Role): Role => (r === 'host' ? 'guest' : 'host');
const HEX64 = /^[0-9a-f]{64}$/;
const HEADER_KEYS = '_transcript,guest_key,host_key,nonce,post_id,protocol_id,role,sid';
const HEADER_KEYS_PLAIN = '_transcript,guest_key,host_key,nonce,post_id,protocol_id,role,sid,wire';
const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

/** Strict JSON (duplicate keys, lone surrogates, out-of-range numbers refused), or undefined. */
function strictParse(crypto: Crypto, text: string): { value: unknown } | undefined {
  try {
    crypto.jcs(text);
    return { value: JSON.parse(text) as unknown };
  } catch {
    return undefined;
  }
}

/** Canonical (JCS) text of a parsed JSON value, for comparing two values for equality. */
function canonical(crypto: Crypto, value: unknown): string {
  return new TextDecoder().decode(crypto.jcs(JSON.stringify(value)));
}

function parseHeader(crypto: Crypto, line: string | undefined): TranscriptHeader | string {
  const p = line === undefined ? undefined : strictParse(crypto, line);
  const h = p?.value;
  if (!isObject(h) || h['_transcript'] !== 1) return 'the first line is not a transcript header';
  const keys = Object.keys(h).sort().join(',');
  if (keys !== HEADER_KEYS && !(keys === HEADER_KEYS_PLAIN && h['wire'] === 'plain'))
    return `a transcript header has exactly ${HEADER_KEYS.split(',').join(', ')} (and wire "plain" for the unsigned profile)`;
  for (const k of ['sid', 'post_id', 'protocol_id', 'host_key', 'guest_key', 'nonce']) if (typeof h[k] !== 'string') return `the header's ${k} is not a string`;
  if (!HEX64.test(h['host_key'] as string) || !HEX64.test(h['guest_key'] as string)) return "the header's keys are not 64 lowercase hex";
  if (h['role'] !== 'host' && h['role'] !== 'guest') return "the header's role is neither host nor guest";
  return h as unknown as TranscriptHeader;
}

/** The guest's checks replayed over a realtime session's protocol frames; undefined when they all hold. */
function realtimeVerdict(crypto: Crypto, lines: string[]): TranscriptCheck['violation'] {
  try {
    const v = verifyRealtimeTranscript(crypto, realtimeMessagesOfLines(lines));
    if (v.ok) return undefined;
    return { frame: v.index + 1, from: v.offender, codes: [`REALTIME_${v.fault.code.toUpperCase()}`], reason: v.fault.message };
  } catch (e) {
    if (e instanceof RealtimeError) return { frame: 0, from: 'host', codes: [e.code], reason: e.message };
    throw e;
  }
}

/**
 * Rechecks a whole transcript: the header's session id; that spec.json is a valid spec hashing to the
 * session's protocol_id; both signed chains frame by frame, and the acknowledgements that tie them into
 * one causal order (each frame names the latest frame its sender had accepted from the peer, which must
 * come before it; the frames of the side that wrote this copy name exactly the peer's latest one); every
 * protocol message against the spec; the mode's message sequence replayed over the transcript; the two
 * receipts over the final chain heads; and receipt.json (`null`: none) against those receipts.
 */
export function verifyTranscript(
  crypto: Crypto,
  transcriptText: string,
  specText: string,
  receiptText: string | null,
  mpReceiptText: string | null = null,
): TranscriptCheck {
  const lines = transcriptText.split('\n').filter((l) => l.length > 0);
  const header = parseHeader(crypto, lines[0]);
  if (typeof header === 'string') return fail(header);
  const sid = sessionId(crypto, header.post_id, header.protocol_id, header.host_key, header.guest_key, header.nonce);
  if (sid !== header.sid) return fail('the header session id does not match its keys, protocol and nonce');
  let checked;
  try {
    checked = checkSpecText(crypto, specText);
  } catch (e) {
    return fail(`spec.json cannot be checked: ${(e as Error).message}`, 0, sid);
  }
  if (!checked.protocolId) return fail('spec.json is not strict JSON', 0, sid);
  if (checked.protocolId !== header.protocol_id) return fail(`spec.json hashes to ${checked.protocolId}, the session used ${header.protocol_id}`, 0, sid);
  if (!checked.ok)
    return fail(
      `spec.json is not a valid spec: ${checked.issues
        .filter((i) => i.severity === 'error')
        .map((i) => i.code)
        .join(', ')}`,
      0,
      sid,
    );
  const spec: Spec = checked.spec;
  let validator: MessageValidator;
  let flow: FlowReplay;
  try {
    validator = messageValidator(checked.protocolId, spec);
    flow = new FlowReplay(crypto, spec);
  } catch (e) {
    return fail(`spec.json cannot be used: ${(e as Error).message}`, 0, sid);
  }
  const free = flow.mode === 'free';
  const plain = header.wire === 'plain';
  // Plain profile: both chains are signed by the writer (its own frames, and its witness of the peer's).
  const keys = plain
    ? { host: fromHex(header[`${header.role}_key`]), guest: fromHex(header[`${header.role}_key`]) }
    : { host: fromHex(header.host_key), guest: fromHex(header.guest_key) };
  // Each reader's acks point into the other reader: a frame may only acknowledge what precedes it.
  const readers = {} as Record<Role, ChainReader>;
  readers.host = new ChainReader(crypto, sid, 'host', keys.host, { from: 'guest', indexOf: (h) => readers.guest.indexOf(h) });
  readers.guest = new ChainReader(crypto, sid, 'guest', keys.guest, { from: 'host', indexOf: (h) => readers.host.indexOf(h) });
  const writer = header.role;
  const receipts: Partial<Record<Role, { msg: Message; line: string }>> = {};
  const allReceipts = () => (plain ? !!receipts[writer] : !!(receipts.host && receipts.guest));
  let heads: string | undefined;
  let violation: TranscriptCheck['violation'];
  let aborted = false;
  let n = 0;
  /** mental_poker: each side's terminal receipt over the game's own transcript. */
  const mpReceipts: Partial<Record<Role, Message>> = {};
  /** authoritative_realtime: the protocol frames, replayed through the guest's checks at the end. */
  const rtLines: string[] = [];
  let rtPlaying = false;
  const refuse = (from: Role, codes: string[], reason: string) => {
    violation = { frame: n, from, codes, reason };
    flow.halt();
  };
  for (const line of lines.slice(1)) {
    n++;
    const parsed = strictParse(crypto, line);
    if (!parsed) return fail(`line ${n + 1} is not strict JSON`, n, sid);
    const obj = parsed.value;
    const from = isObject(obj) && (obj['from'] === 'host' || obj['from'] === 'guest') ? obj['from'] : undefined;
    if (!from) return fail(`frame ${n} names no sender`, n, sid);
    if (aborted) return fail(`frame ${n} follows an abort`, n, sid);
    if (allReceipts()) return fail(`frame ${n} follows ${plain ? 'the receipt' : 'both receipts'}`, n, sid);
    const before = { host_count: readers.host.count, host_head: readers.host.head, guest_count: readers.guest.count, guest_head: readers.guest.head };
    const a = readers[from].accept(obj);
    if (!a.ok) return fail(`frame ${n} (${from}): ${a.step}: ${a.reason}`, n, sid);
    if (from === writer && a.acks !== readers[other(from)].count - 1)
      return fail(`frame ${n} was written by the ${writer} but does not acknowledge the ${other(from)}'s latest frame before it`, n, sid);
    const msg = a.frame.msg;
    if (plain && from !== writer && msg.action.startsWith('_'))
      return fail(`frame ${n}: a witnessed ${from} message cannot be the engine's ${msg.action}`, n, sid);
    if (msg.action === '_abort') {
      aborted = true;
      continue;
    }
    if (msg.action === '_receipt') {
      if (violation) return fail(`frame ${n} follows the refused frame ${violation.frame}`, n, sid);
      if (receipts[from]) refuse(from, ['RECEIPT_REPEATED'], `the ${from} signed a second receipt`);
      else if (!flow.complete) refuse(from, ['RECEIPT_EARLY'], `the ${from} signed a receipt before the ${flow.mode} sequence was complete`);
      else {
        // Each receipt covers the chains as they stood before the first receipt.
        heads ??= canonical(crypto, { action: '_receipt', ...before });
        if (canonical(crypto, msg) !== heads) refuse(from, ['RECEIPT_HEADS'], `the ${from}'s receipt does not match the chain heads`);
        else receipts[from] = { msg, line };
      }
      continue;
    }
    if (msg.action.startsWith('_')) {
      if (violation) return fail(`frame ${n} follows the refused frame ${violation.frame}`, n, sid);
      refuse(from, ['MESSAGE_SYSTEM_UNKNOWN'], `${msg.action} is not a frame the engine sends`);
      continue;
    }
    if (receipts.host || receipts.guest) {
      if (violation) return fail(`frame ${n} follows the refused frame ${violation.frame}`, n, sid);
      refuse(from, ['FLOW_AFTER_RECEIPT'], `the ${from}'s ${msg.action} follows a receipt`);
      continue;
    }
    const check = validator.check(msg, from === 'host' ? 'host_to_guest' : 'guest_to_host');
    if (!check.ok) {
      if (violation) return fail(`frame ${n} follows the refused frame ${violation.frame}`, n, sid);
      // Free mode drops invalid chat messages and carries on, as the reference does; a realtime host
      // acks a guest's invalid command rejected and plays on.
      if (flow.mode === 'authoritative_realtime' && from === 'guest' && rtPlaying) rtLines.push(line);
      else if (!free)
        refuse(
          from,
          check.errors.map((e) => e.code),
          `the ${from}'s ${msg.action} fails the spec`,
        );
      continue;
    }
    const hadMismatch = flow.mismatch;
    const step = flow.next(from, msg);
    if (!step.ok) {
      if (violation) return fail(`frame ${n} follows the refused frame ${violation.frame}: ${step.reason}`, n, sid);
      refuse(from, ['FLOW_SEQUENCE'], step.reason);
      continue;
    }
    if (msg.action === 'mp_terminal_receipt') mpReceipts[from] = msg;
    if (flow.mode === 'authoritative_realtime') {
      rtLines.push(line);
      if (from === 'host' && msg.action === 'rt_ready') rtPlaying = true;
    }
    if (flow.mismatch && !hadMismatch) {
      violation = { frame: n, from, codes: ['COMMIT_MISMATCH'], reason: `the ${from}'s reveal in round ${flow.mismatch.round} does not open its commit` };
    }
  }
  if (flow.mode === 'authoritative_realtime' && !violation) {
    const v = realtimeVerdict(crypto, rtLines);
    if (v) {
      if (allReceipts()) return fail(`receipts were signed over a realtime session that fails the guest's checks: ${v.reason}`, n, sid);
      violation = v;
    }
  }
  let receipt = allReceipts();
  let reason: string | undefined;
  if (receipt && violation) return fail(`receipts were signed over the refused frame ${violation.frame}`, n, sid);
  if (receiptText !== null) {
    if (!receipt) return fail('receipt.json is beside a transcript that does not hold both receipts', n, sid);
    const expected = plain
      ? {
          v: 1,
          wire: 'plain',
          sid,
          protocol_id: header.protocol_id,
          host_key: header.host_key,
          guest_key: header.guest_key,
          heads: receipts[writer]!.msg,
          frames: { [writer]: receipts[writer]!.line },
        }
      : {
          v: 1,
          sid,
          protocol_id: header.protocol_id,
          host_key: header.host_key,
          guest_key: header.guest_key,
          heads: receipts.host!.msg,
          frames: { host: receipts.host!.line, guest: receipts.guest!.line },
        };
    const got = strictParse(crypto, receiptText);
    if (!got) return fail('receipt.json is not strict JSON', n, sid);
    if (canonical(crypto, got.value) !== canonical(crypto, expected)) return fail('receipt.json does not match the receipts in the transcript', n, sid);
  } else if (receipt) {
    receipt = false;
    reason = 'receipt.json is missing: the transcript holds both receipts, but there is no receipt file to check';
  }
  if (receipt && flow.mode === 'mental_poker') {
    const bad = mentalPokerReceipts(crypto, header, mpReceipts, mpReceiptText);
    if (bad) return fail(bad, n, sid);
  }
  if (!receipt && !reason)
    reason = violation
      ? `the ${violation.from} sent a message the ${violation.codes[0]?.startsWith('FLOW') || violation.codes[0]?.startsWith('RECEIPT') ? 'flow' : 'spec'} refuses (frame ${violation.frame}${violation.reason ? `: ${violation.reason}` : ''}); the session was aborted`
      : 'no complete receipt: the session did not end normally';
  return { ok: true, receipt, frames: n, sid, ...(plain && { wire: 'plain' as const }), ...(violation && { violation }), ...(reason ? { reason } : {}) };
}

/**
 * A finished mental-poker game: both terminal receipts name one transcript hash, each signed by its
 * sender's handshake key over that root, and transcript_receipt.json (when given) holds exactly the
 * writer's signature, the peer's and `passed`. Answers why not, or undefined.
 */
function mentalPokerReceipts(crypto: Crypto, header: TranscriptHeader, r: Partial<Record<Role, Message>>, text: string | null): string | undefined {
  const [h, g] = [r.host, r.guest];
  if (!h || !g) return 'a mental_poker game completed without both terminal receipts';
  const hash = h['transcript_hash'];
  if (typeof hash !== 'string' || !HEX64.test(hash) || g['transcript_hash'] !== hash) return 'the two terminal receipts name different transcript hashes';
  for (const [side, m] of [
    ['host', h],
    ['guest', g],
  ] as const) {
    const key = side === 'host' ? header.host_key : header.guest_key;
    const sig = m['signature'];
    if (m['public_key'] !== key || typeof sig !== 'string' || !/^[0-9a-f]{128}$/.test(sig) || !crypto.ed25519Verify(fromHex(key), fromHex(hash), fromHex(sig)))
      return `the ${side}'s terminal receipt is not signed by its handshake key over the transcript hash`;
  }
  if (text === null) return 'transcript_receipt.json is missing beside a finished mental_poker game';
  const got = strictParse(crypto, text);
  const [mine, theirs] = header.role === 'host' ? [h, g] : [g, h];
  const expected = { transcript_hash: hash, signature: mine['signature'], peer_signature: theirs['signature'], audit_status: 'passed' };
  if (!got || canonical(crypto, got.value) !== canonical(crypto, expected))
    return 'transcript_receipt.json does not match the terminal receipts in the transcript';
  return undefined;
}

export interface Proof {
  v: 1;
  kind: 'commit_mismatch' | 'invalid_message' | 'balance_mismatch' | 'mp_play_rejected' | 'mp_rule_rejected' | 'mp_audit_failed' | 'realtime_integrity_failed';
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

/** A protocol's rules for rejudging a balance mismatch: its hooks and the protocol_id they belong to. */
export interface ProofProtocol {
  hooks: HooksModule;
  protocolId: string;
}

const PROOF_KINDS = [
  'commit_mismatch',
  'invalid_message',
  'balance_mismatch',
  'mp_play_rejected',
  'mp_rule_rejected',
  'mp_audit_failed',
  'realtime_integrity_failed',
];
const PROOF_KEYS = 'detail,frames,guest_key,host_key,kind,nonce,offender,post_id,protocol_id,sid,v';
/** A proof names a handful of frames; more is not a proof this engine writes. A mental-poker proof holds the whole game. */
const MAX_PROOF_FRAMES = 64;
const MAX_MP_PROOF_FRAMES = 4096;

/** The shape of a proof, or why it is not one. */
function proofShape(proof: unknown): Proof | string {
  if (!isObject(proof)) return 'proof.json is not a JSON object';
  if (Object.keys(proof).sort().join(',') !== PROOF_KEYS) return `a proof has exactly ${PROOF_KEYS.split(',').join(', ')}`;
  if (proof['v'] !== 1) return 'proof version is not 1';
  if (!PROOF_KINDS.includes(proof['kind'] as string)) return `kind is not one of ${PROOF_KINDS.join(', ')}`;
  for (const k of ['sid', 'post_id', 'protocol_id', 'nonce', 'host_key', 'guest_key']) if (typeof proof[k] !== 'string') return `${k} is not a string`;
  if (!HEX64.test(proof['host_key'] as string) || !HEX64.test(proof['guest_key'] as string)) return 'the keys are not 64 lowercase hex';
  if (proof['offender'] !== 'host' && proof['offender'] !== 'guest') return 'offender is neither host nor guest';
  const frames = proof['frames'];
  const max = (proof['kind'] as string).startsWith('mp_') ? MAX_MP_PROOF_FRAMES : MAX_PROOF_FRAMES;
  if (!Array.isArray(frames) || frames.length === 0 || frames.length > max || !frames.every((f) => typeof f === 'string'))
    return `frames is not a list of 1 to ${max} frame lines`;
  if (!isObject(proof['detail'])) return 'detail is not an object';
  return proof as unknown as Proof;
}

/**
 * Checks a cheat proof without either party: every frame must be a well-formed frame carrying a valid
 * signature of its sender for this session, and the claim must follow from the signed frames alone
 * (for a balance mismatch, with the protocol's own pure judge, which must be the proof's protocol).
 */
export function verifyProof(crypto: Crypto, input: unknown, specText: string, protocol?: ProofProtocol): ProofCheck {
  const no = (reason: string): ProofCheck => ({ proven: false, reason });
  const proof = proofShape(input);
  if (typeof proof === 'string') return no(proof);
  const sid = sessionId(crypto, proof.post_id, proof.protocol_id, proof.host_key, proof.guest_key, proof.nonce);
  if (sid !== proof.sid) return no('the session id does not match the keys, protocol and nonce');
  if (protocol && protocol.protocolId !== proof.protocol_id) return no(`the protocol given (${protocol.protocolId}) is not the proof's (${proof.protocol_id})`);
  let checked;
  try {
    checked = checkSpecText(crypto, specText);
  } catch (e) {
    return no(`spec.json cannot be checked: ${(e as Error).message}`);
  }
  if (checked.protocolId !== proof.protocol_id) return no('spec.json is not the protocol of this session');
  if (!checked.ok) return no('spec.json is not a valid spec');
  const spec = checked.spec;
  const keys: Record<Role, Uint8Array> = { host: fromHex(proof.host_key), guest: fromHex(proof.guest_key) };
  const frames: Frame[] = [];
  for (const [i, line] of proof.frames.entries()) {
    const p = strictParse(crypto, line);
    const f = p?.value;
    if (!isObject(f) || Object.keys(f).sort().join(',') !== 'ack,from,msg,prev,seq,sid,sig,v' || f['v'] !== FRAME_VERSION)
      return no(`frame ${i} is not a frame`);
    if (f['sid'] !== sid || (f['from'] !== 'host' && f['from'] !== 'guest')) return no(`frame ${i} belongs to another session`);
    if (
      typeof f['seq'] !== 'number' ||
      typeof f['prev'] !== 'string' ||
      typeof f['ack'] !== 'string' ||
      !isObject(f['msg']) ||
      typeof f['msg']['action'] !== 'string' ||
      typeof f['sig'] !== 'string' ||
      !/^[0-9a-f]{128}$/.test(f['sig'])
    )
      return no(`frame ${i} has fields of the wrong types`);
    const frame = f as unknown as Frame;
    if (!crypto.ed25519Verify(keys[frame.from], signingBytes(crypto, frame), fromHex(frame.sig))) return no(`frame ${i} is not signed by the ${frame.from}`);
    frames.push(frame);
  }
  try {
    return judge(crypto, proof, spec, frames, protocol?.hooks);
  } catch (e) {
    return no(`the claim cannot be checked: ${(e as Error).message}`);
  }
}

function judge(crypto: Crypto, proof: Proof, spec: Spec, frames: Frame[], hooks: HooksModule | undefined): ProofCheck {
  const no = (reason: string): ProofCheck => ({ proven: false, reason });
  if (proof.kind.startsWith('mp_')) return judgeMentalPoker(crypto, proof, spec, frames, hooks);
  if (proof.kind === 'realtime_integrity_failed') return judgeRealtime(crypto, proof, frames);
  const byOffender = frames.filter((f) => f.from === proof.offender);
  if (proof.kind === 'commit_mismatch') {
    const field = spec.flow?.round?.value_field || 'value';
    const [commit, reveal] = byOffender;
    if (
      !commit ||
      !reveal ||
      commit.msg.action !== 'commit' ||
      reveal.msg.action !== 'reveal' ||
      commit.msg['round'] !== reveal.msg['round'] ||
      commit.seq >= reveal.seq
    )
      return no("a commit mismatch needs the offender's commit and later reveal of the same round");
    if (typeof commit.msg['hash'] !== 'string' || typeof reveal.msg['nonce'] !== 'string') return no('the commit or the reveal lacks its hash or nonce');
    let opens: boolean;
    try {
      opens = crypto.verifyReveal(commit.msg['hash'], commitText(reveal.msg[field] as never), reveal.msg['nonce']);
    } catch {
      return no('the commit is not a commitment hash');
    }
    return opens
      ? no('the reveal matches the commit')
      : { proven: true, reason: `the ${proof.offender}'s reveal in round ${String(reveal.msg['round'])} does not open its commit` };
  }
  if (proof.kind === 'invalid_message') {
    const f = byOffender[0];
    if (!f) return no('no frame by the offender');
    const check = messageValidator(proof.protocol_id, spec).check(f.msg, f.from === 'host' ? 'host_to_guest' : 'guest_to_host');
    return check.ok
      ? no('the message is valid')
      : {
          proven: true,
          reason: `the ${proof.offender} signed a ${f.msg.action} the spec refuses: ${check.errors.map((e) => `${e.code} at ${e.pointer}`).join('; ')}`,
        };
  }
  // balance_mismatch: rejudge the round with the protocol's pure judge from the signed frames.
  if (proof.offender !== 'host') return no('only the host judges rounds: a balance mismatch names the host');
  if (!hooks) return no("a balance mismatch is checked with the protocol's hooks: pass --protocol-dir");
  const ready = frames.find((f) => f.from === 'host' && f.msg.action === 'ready');
  const results = frames.filter((f) => f.from === 'host' && f.msg.action === 'round_result');
  const disputed = results.at(-1);
  const previous = results.length > 1 ? results.at(-2)!.msg : null;
  const field = spec.flow?.round?.value_field || 'value';
  const hostReveal = frames.find((f) => f.from === 'host' && f.msg.action === 'reveal');
  const guestReveal = frames.find((f) => f.from === 'guest' && f.msg.action === 'reveal');
  if (!ready || !disputed || !hostReveal || !guestReveal) return no('a balance mismatch needs the ready, both reveals and the disputed round_result');
  const h = instantiateHooks(hooks, { role: 'guest', options: {}, args: [], stateDir: '', decision: null, random: () => 0 }) as unknown as Record<
    string,
    (...a: unknown[]) => unknown
  >;
  const pure = h['proto_round_judge_pure'];
  if (typeof pure !== 'function') return no('the protocol has no pure judge');
  const round = disputed.msg['round'];
  if (typeof round !== 'number') return no('the disputed round_result names no round');
  const state = { results: previous ? [previous] : [], last_result: previous, ready: ready.msg };
  const expected = pure(round, hostReveal.msg[field], guestReveal.msg[field], state);
  if (!isObject(expected)) return no('the pure judge returned no round_result');
  const diff = shadowMismatches(h as never, expected as Message, disputed.msg).map((m) => m.field);
  return diff.length
    ? { proven: true, reason: `the host's round ${round} result differs from the rules in ${diff.join(', ')}` }
    : no('the round_result follows the rules');
}

/** Both senders' frames from their first, each in order: a proof may not leave out what would clear the offender. */
function wholeChains(frames: Frame[]): string | undefined {
  const seqs: Record<Role, number> = { host: 0, guest: 0 };
  for (const f of frames) {
    if (f.seq !== seqs[f.from]) return `the ${f.from}'s frames are not the whole chain from its first (expected seq ${seqs[f.from]}, got ${f.seq})`;
    seqs[f.from]++;
  }
  return undefined;
}

/**
 * A realtime host caught breaking its frame chain or the commands it acknowledged: every frame of the
 * session up to the failure, replayed through the guest's own checks (ts/realtime/transcript.ts).
 */
function judgeRealtime(crypto: Crypto, proof: Proof, frames: Frame[]): ProofCheck {
  if (proof.offender !== 'host') return { proven: false, reason: 'only the host runs a realtime match: an integrity failure names the host' };
  const gap = wholeChains(frames);
  if (gap) return { proven: false, reason: gap };
  const j = checkRealtimeProof(crypto, proof.frames, { code: proof.detail['code'] });
  return j.proven ? { proven: true, reason: j.reason } : { proven: false, reason: j.reason };
}

/**
 * A mental-poker cheat: the proof holds every frame of the game, each sender's from its first, and the
 * game is replayed from the accuser's side (ts/mp/replay.ts) up to the claimed failure: a play that fails
 * the card check, a play the game's rules refuse (replayed through the protocol's hooks), or the audit
 * step (or refused receipt) named. The deck comes from the protocol's hooks,
 * the deal plan from the proof (it shows in the frames anyway: that many OTs before the first play).
 */
function judgeMentalPoker(crypto: Crypto, proof: Proof, spec: Spec, frames: Frame[], hooks: HooksModule | undefined): ProofCheck {
  const no = (reason: string): ProofCheck => ({ proven: false, reason });
  if (!hooks) return no("a mental-poker proof is checked with the protocol's deck: pass --protocol-dir");
  const gap = wholeChains(frames);
  if (gap) return no(gap);
  const d = proof.detail;
  const deal = d['deal'] as { host?: unknown; guest?: unknown } | null;
  if (!isObject(deal) || !Number.isSafeInteger(deal['host']) || !Number.isSafeInteger(deal['guest'])) return no('the proof names no deal plan');
  if (typeof d['reason'] !== 'string') return no('the proof names no failed step');
  const verifier = other(proof.offender);
  const h = instantiateHooks(hooks as HooksModule<'mental_poker'>, {
    role: verifier,
    options: {},
    args: [],
    stateDir: '',
    decision: null,
    random: () => 0,
  }) as unknown as MentalPokerHooks;
  const messages: WireMessage[] = frames
    .filter((f) => !f.msg.action.startsWith('_'))
    .map((f) => ({ direction: f.from === 'host' ? 'host_to_guest' : 'guest_to_host', message: f.msg }));
  const specId = (spec as { protocol_id?: unknown }).protocol_id;
  const replay = replayGame(crypto, messages, {
    verifier,
    protocolId: typeof specId === 'string' && specId ? specId : spec.name || 'mental-poker',
    sessionId: proof.sid,
    universe: h.proto_mp_deck_universe(),
    deal: { host: deal['host'] as number, guest: deal['guest'] as number },
    peerPublicKey: fromHex(proof.offender === 'host' ? proof.host_key : proof.guest_key),
  });
  const v = replay.verdict;
  if (proof.kind === 'mp_play_rejected') {
    return v.raised === `peer play rejected: ${d['reason']}`
      ? { proven: true, reason: `the ${proof.offender}'s play fails the card check: ${d['reason']}` }
      : no(`the replay does not reject that play (${v.raised ?? 'no stop'})`);
  }
  if (proof.kind === 'mp_rule_rejected') {
    if (v.raised?.startsWith('peer play rejected')) return no(`that play fails the card check, not the rules (${v.raised})`);
    const fresh = instantiateHooks(hooks as HooksModule<'mental_poker'>, {
      role: verifier,
      options: {},
      args: [],
      stateDir: '',
      decision: null,
      random: () => 0,
    }) as unknown as MentalPokerHooks;
    fresh.proto_init?.({}, verifier, [], '', null);
    const played = frames.filter((f) => !f.msg.action.startsWith('_')).map((f) => ({ from: f.from, msg: f.msg }));
    const r = replayRules(fresh, played, verifier, { host: deal['host'] as number, guest: deal['guest'] as number });
    if (r.ok === null) return no(`the game cannot be replayed: ${r.error}`);
    if (r.ok) return no("the game's rules accept every play of the offender");
    const lastPlay = played
      .map((m, i) => [m, i] as const)
      .filter(([m]) => m.from === proof.offender && m.msg.action === 'mp_play')
      .at(-1)?.[1];
    if (r.index !== lastPlay) return no('the rules refuse an earlier play than the one the session ended on');
    return r.reason === d['reason']
      ? { proven: true, reason: `the ${proof.offender}'s play breaks the game's rules: ${r.reason}` }
      : no(`the rules refuse that play for another reason (${r.reason})`);
  }
  const f = v.auditFailure;
  if (!f || f.reason !== d['reason']) return no(`the replayed audit does not fail with ${String(d['reason'])} (${f ? f.reason : (v.raised ?? 'it passes')})`);
  if (f.evidence !== undefined && canonical(crypto, f.evidence ?? null) !== canonical(crypto, d['evidence'] ?? null))
    return no('the replayed audit fails with other evidence');
  return { proven: true, reason: `the ${proof.offender} is caught by the audit: ${f.reason}` };
}
