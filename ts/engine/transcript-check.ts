/**
 * Offline checks a third party can run with nothing but the evidence's text: a session's transcript
 * and receipt (`aigenora receipt verify`, and a browser page checking its own session), and a cheat
 * proof (`aigenora proof verify`). Everything read here may have been written by an attacker: every
 * failure is a result, never an exception. verify.ts reads the same from files.
 */
import type { Crypto } from '../crypto/backend.js';
import { fromHex } from '../crypto/encoding.js';
import type { HooksModule, Message, Role } from '../hooks/types.js';
import { checkSpecText } from '../spec/check.js';
import { messageValidator, type MessageValidator } from '../spec/messages.js';
import type { Spec } from '../spec/types.js';
import { ChainReader, FRAME_VERSION, sessionId, signingBytes, type Frame } from './frame.js';
import { FlowReplay } from './flow.js';
import type { TranscriptHeader } from './record.js';
import { modeDefinition, proofJudges } from './modes/index.js';
import type { ProofCheck, ProofJudge, Violation } from './mode.js';
import { canonical, strictParse } from './strict-json.js';

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
  violation?: Violation;
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
  const invalidInbound = modeDefinition(flow.mode).invalidInbound;
  const sequence = flow.sequence;
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
      if (invalidInbound !== 'drop' && !(invalidInbound === 'mode' && sequence.takeInvalid?.(from, line)))
        refuse(
          from,
          check.errors.map((e) => e.code),
          `the ${from}'s ${msg.action} fails the spec`,
        );
      continue;
    }
    const step = flow.next(from, msg);
    if (!step.ok) {
      if (violation) return fail(`frame ${n} follows the refused frame ${violation.frame}: ${step.reason}`, n, sid);
      refuse(from, ['FLOW_SEQUENCE'], step.reason);
      continue;
    }
    sequence.record?.(from, msg, line);
    // A message the sequence allows may still be one the mode names as a violation (a reveal that does not open its commit).
    if (step.violation) violation = { frame: n, from, ...step.violation };
  }
  if (!violation) {
    const v = sequence.checkFrames?.(crypto);
    if (v) {
      if (allReceipts()) return fail(`receipts were signed over a ${flow.mode} session that fails its checks: ${v.reason}`, n, sid);
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
  if (receipt) {
    const bad = sequence.checkClose?.(crypto, { header, mpReceiptText });
    if (bad) return fail(bad, n, sid);
  }
  if (!receipt && !reason)
    reason = violation
      ? `the ${violation.from} sent a message the ${violation.codes[0]?.startsWith('FLOW') || violation.codes[0]?.startsWith('RECEIPT') ? 'flow' : 'spec'} refuses (frame ${violation.frame}${violation.reason ? `: ${violation.reason}` : ''}); the session was aborted`
      : 'no complete receipt: the session did not end normally';
  return { ok: true, receipt, frames: n, sid, ...(plain && { wire: 'plain' as const }), ...(violation && { violation }), ...(reason ? { reason } : {}) };
}

export interface Proof {
  v: 1;
  /** invalid_message (any mode), or a kind a mode writes (ModeDefinition.proofs). */
  kind: string;
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

export type { ProofCheck } from './mode.js';

/** A protocol's rules for rejudging a balance mismatch: its hooks and the protocol_id they belong to. */
export interface ProofProtocol {
  hooks: HooksModule;
  protocolId: string;
}

/** invalid_message is every mode's: the spec refuses a message its sender signed. The other kinds are the modes'. */
const INVALID_MESSAGE: ProofJudge = {
  // A proof names a handful of frames; more is not a proof this engine writes.
  maxFrames: 64,
  judge(_crypto, claim, spec) {
    const f = claim.frames.find((x) => x.from === claim.offender);
    if (!f) return { proven: false, reason: 'no frame by the offender' };
    const check = messageValidator(claim.protocolId, spec).check(f.msg, f.from === 'host' ? 'host_to_guest' : 'guest_to_host');
    return check.ok
      ? { proven: false, reason: 'the message is valid' }
      : {
          proven: true,
          reason: `the ${claim.offender} signed a ${f.msg.action} the spec refuses: ${check.errors.map((e) => `${e.code} at ${e.pointer}`).join('; ')}`,
        };
  },
};
const JUDGES: Record<string, ProofJudge> = { invalid_message: INVALID_MESSAGE, ...proofJudges() };
const PROOF_KINDS = Object.keys(JUDGES);
const PROOF_KEYS = 'detail,frames,guest_key,host_key,kind,nonce,offender,post_id,protocol_id,sid,v';

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
  const max = JUDGES[proof['kind'] as string]!.maxFrames;
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
    const claim = { ...proof, protocolId: proof.protocol_id, lines: proof.frames, frames };
    return JUDGES[proof.kind]!.judge(crypto, claim, spec, protocol?.hooks);
  } catch (e) {
    return no(`the claim cannot be checked: ${(e as Error).message}`);
  }
}
