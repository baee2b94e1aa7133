/**
 * A group member's session directory, one per member (a group has no host/guest pair):
 * transcript.jsonl (a header line, then every envelope the member applied and every leader change it
 * was fenced to, each written before the member acts on it), spec.json, view.json (the member's last
 * view), and at the end receipt.json: the member's signature over where its replica ended and over the
 * transcript's bytes, or proof.json when the leader was caught signing inconsistent frames.
 *
 * `verifyGroupSession` rechecks a directory offline from nothing but its files: the spec hashes to the
 * header's protocol_id and is a group protocol, every envelope replays through a fresh replica
 * (signatures, hash chain, epoch fences, checkpoint and view hashes after deltas), and the receipt
 * names exactly where that replay ends and is signed by the member the transcript belongs to.
 */
import { lstatSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Crypto } from '../crypto/backend.js';
import { fromHex, toHex, utf8 } from '../crypto/encoding.js';
import { TranscriptFile } from '../engine/record.js';
import { readEvidence } from '../files/index.js';
import { checkSpecText, MAX_SPEC_BYTES } from '../spec/check.js';
import { flowMode } from '../spec/types.js';
import { replayGroupTranscript, type GroupReplica, type ReplayResult, type TranscriptEntry } from './member.js';
import { isPublicKey } from './wire.js';

export const GROUP_RECEIPT_KIND = 'aigenora-group-receipt-v1';
const RECEIPT_DOMAIN = 'aigenora-group-receipt-v1\n';
export const MAX_GROUP_TRANSCRIPT_BYTES = 256 << 20;
export const MAX_GROUP_RECEIPT_BYTES = 64 << 10;

export interface GroupTranscriptHeader {
  _group_transcript: 1;
  protocol_id: string;
  group_id: string;
  member_public_key: string;
  /** The leader and epoch the member started under (later changes are transcript entries). */
  leader_public_key: string;
  leader_epoch: number;
}

export interface GroupReceipt {
  kind: typeof GROUP_RECEIPT_KIND;
  protocol_id: string;
  group_id: string;
  member_public_key: string;
  leader_public_key: string;
  leader_epoch: number;
  seq: number | null;
  frame_hash: string | null;
  checkpoint_hash: string | null;
  completed: boolean;
  outcome: string | null;
  entries: number;
  /** SHA-256 (hex) of transcript.jsonl's bytes. */
  transcript_sha256: string;
  signature: string;
}

const receiptBytes = (crypto: Crypto, unsigned: Omit<GroupReceipt, 'signature'>): Uint8Array => {
  const body = crypto.jcsValue(unsigned);
  const out = new Uint8Array(RECEIPT_DOMAIN.length + body.length);
  out.set(utf8(RECEIPT_DOMAIN));
  out.set(body, RECEIPT_DOMAIN.length);
  return out;
};

/** Writes one member's session directory as the session runs. */
export class GroupSessionRecord {
  readonly transcriptPath: string;
  private readonly file: TranscriptFile;
  private entries = 0;

  constructor(
    readonly dir: string,
    readonly header: GroupTranscriptHeader,
    specText: string | null,
    durable = false,
    existingEntries = 0,
  ) {
    this.file = specText !== null ? TranscriptFile.create(dir, header, specText, durable) : TranscriptFile.reopen(dir, durable);
    this.transcriptPath = this.file.path;
    this.entries = existingEntries;
  }

  /** Continues a member's directory after a crash: entries are appended after the ones it holds. */
  static reopen(dir: string, header: GroupTranscriptHeader, entries: number): GroupSessionRecord {
    return new GroupSessionRecord(dir, header, null, true, entries);
  }

  /** Appends an entry; it is in the file (with `durable`, on disk) when this returns. */
  entry(e: TranscriptEntry): void {
    this.file.append(JSON.stringify(e));
    this.entries++;
  }

  view(v: unknown): void {
    atomicWrite(join(this.dir, 'view.json'), `${JSON.stringify(v, null, 2)}\n`);
  }

  proof(p: unknown): void {
    atomicWrite(join(this.dir, 'proof.json'), `${JSON.stringify(p, null, 2)}\n`);
  }

  /** Writes the replica's last view, closes the transcript and signs the receipt over where the replica ended. */
  finish(crypto: Crypto, memberSeed: Uint8Array, replica: GroupReplica): GroupReceipt {
    const view = replica.view;
    if (view) this.view(view);
    const cp = replica.checkpoint;
    const end = {
      seq: replica.seq,
      frame_hash: replica.frameHash,
      checkpoint_hash: cp ? String(cp['checkpoint_hash']) : null,
      completed: cp?.['completed'] === true,
      outcome: (cp?.['outcome'] as string | null | undefined) ?? null,
      leader_public_key: replica.leaderPublicKey,
      leader_epoch: replica.leaderEpoch,
    };
    this.close();
    const unsigned: Omit<GroupReceipt, 'signature'> = {
      kind: GROUP_RECEIPT_KIND,
      protocol_id: this.header.protocol_id,
      group_id: this.header.group_id,
      member_public_key: this.header.member_public_key,
      leader_public_key: end.leader_public_key,
      leader_epoch: end.leader_epoch,
      seq: end.seq,
      frame_hash: end.frame_hash,
      checkpoint_hash: end.checkpoint_hash,
      completed: end.completed,
      outcome: end.outcome,
      entries: this.entries,
      transcript_sha256: toHex(crypto.sha256(readFileSync(this.transcriptPath))),
    };
    const receipt: GroupReceipt = { ...unsigned, signature: toHex(crypto.ed25519Sign(memberSeed, receiptBytes(crypto, unsigned))) };
    atomicWrite(join(this.dir, 'receipt.json'), `${JSON.stringify(receipt, null, 2)}\n`);
    return receipt;
  }

  close(): void {
    this.file.close();
  }
}

function atomicWrite(path: string, text: string): void {
  const tmp = `${path}.tmp`;
  writeFileSync(tmp, text, { mode: 0o600 });
  renameSync(tmp, path);
}

export interface GroupSessionCheck {
  ok: boolean;
  /** A receipt was present and matches the replay. */
  receipt: boolean;
  reason?: string;
  protocol_id?: string;
  group_id?: string;
  member_public_key?: string;
  entries: number;
  seq: number | null;
  completed: boolean;
  outcome: string | null;
}

const fail = (reason: string, extra: Partial<GroupSessionCheck> = {}): GroupSessionCheck => ({
  ok: false,
  receipt: false,
  reason,
  entries: 0,
  seq: null,
  completed: false,
  outcome: null,
  ...extra,
});

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** True when a transcript's first line is a group transcript header. */
export function isGroupTranscript(firstLine: string): boolean {
  try {
    const h = JSON.parse(firstLine) as unknown;
    return isObject(h) && h['_group_transcript'] === 1;
  } catch {
    return false;
  }
}

function parseHeader(line: string | undefined): GroupTranscriptHeader | string {
  let h: unknown;
  try {
    h = JSON.parse(line ?? '');
  } catch {
    return 'the transcript header is not JSON';
  }
  if (!isObject(h) || h['_group_transcript'] !== 1) return 'the transcript has no group header';
  if (typeof h['protocol_id'] !== 'string' || !/^[0-9a-f]{64}$/.test(h['protocol_id'])) return 'the header protocol_id is not a 64-hex id';
  if (typeof h['group_id'] !== 'string' || !h['group_id']) return 'the header has no group_id';
  if (!isPublicKey(h['member_public_key']) || !isPublicKey(h['leader_public_key'])) return 'the header keys are not 64-hex lowercase public keys';
  if (typeof h['leader_epoch'] !== 'number' || !Number.isInteger(h['leader_epoch']) || h['leader_epoch'] < 0)
    return 'the header leader_epoch is not a non-negative integer';
  return h as unknown as GroupTranscriptHeader;
}

/**
 * Rechecks a member's transcript, spec and receipt (`null`: none): see the module comment. A receipt
 * that disagrees with the replay, covers other bytes or is not the member's signature fails the check.
 */
export function verifyGroupSession(crypto: Crypto, transcriptText: string, specText: string, receiptText: string | null): GroupSessionCheck {
  const lines = transcriptText.split('\n').filter((l) => l.length > 0);
  const header = parseHeader(lines[0]);
  if (typeof header === 'string') return fail(header);
  const base = { protocol_id: header.protocol_id, group_id: header.group_id, member_public_key: header.member_public_key };
  let checked;
  try {
    checked = checkSpecText(crypto, specText);
  } catch (e) {
    return fail(`spec.json cannot be checked: ${(e as Error).message}`, base);
  }
  if (!checked.protocolId) return fail('spec.json is not strict JSON', base);
  if (checked.protocolId !== header.protocol_id) return fail(`spec.json hashes to ${checked.protocolId}, the session used ${header.protocol_id}`, base);
  if (!checked.ok)
    return fail(
      `spec.json is not a valid spec: ${checked.issues
        .filter((i) => i.severity === 'error')
        .map((i) => i.code)
        .join(', ')}`,
      base,
    );
  if (flowMode(checked.spec) !== 'authoritative_group') return fail(`spec.json is a ${flowMode(checked.spec)} protocol, not authoritative_group`, base);
  const entries: TranscriptEntry[] = [];
  for (let i = 1; i < lines.length; i++) {
    try {
      entries.push(JSON.parse(lines[i]!) as TranscriptEntry);
    } catch {
      return fail(`transcript line ${i + 1} is not JSON`, base);
    }
  }
  const r = replayGroupTranscript(
    crypto,
    { groupId: header.group_id, viewerPublicKey: header.member_public_key, leaderPublicKey: header.leader_public_key, leaderEpoch: header.leader_epoch },
    entries,
  );
  const result = { ...base, entries: entries.length, seq: r.seq, completed: r.completed, outcome: r.outcome };
  if (!r.ok) return { ...result, ok: false, receipt: false, reason: `transcript entry ${r.applied + 1}: ${r.reason ?? ''}` };
  if (receiptText === null) return { ...result, ok: true, receipt: false, reason: 'no receipt.json' };
  const bad = checkReceipt(crypto, receiptText, header, r, entries, transcriptText);
  if (bad) return { ...result, ok: false, receipt: false, reason: `receipt.json: ${bad}` };
  return { ...result, ok: true, receipt: true };
}

function checkReceipt(
  crypto: Crypto,
  text: string,
  header: GroupTranscriptHeader,
  r: ReplayResult,
  entries: TranscriptEntry[],
  transcriptText: string,
): string | undefined {
  let raw: unknown;
  try {
    crypto.jcs(text);
    raw = JSON.parse(text);
  } catch {
    return 'not strict JSON';
  }
  if (!isObject(raw) || raw['kind'] !== GROUP_RECEIPT_KIND) return `not a ${GROUP_RECEIPT_KIND}`;
  const { signature, ...unsigned } = raw;
  let leader = header.leader_public_key;
  let epoch = header.leader_epoch;
  for (const e of entries) {
    if (e.kind === 'epoch') {
      leader = e.leader_public_key;
      epoch = e.leader_epoch;
    }
  }
  const want: Omit<GroupReceipt, 'signature'> = {
    kind: GROUP_RECEIPT_KIND,
    protocol_id: header.protocol_id,
    group_id: header.group_id,
    member_public_key: header.member_public_key,
    leader_public_key: leader,
    leader_epoch: epoch,
    seq: r.seq,
    frame_hash: r.frame_hash,
    checkpoint_hash: r.checkpoint_hash,
    completed: r.completed,
    outcome: r.outcome,
    entries: entries.length,
    transcript_sha256: toHex(crypto.sha256(utf8(transcriptText))),
  };
  const keys = Object.keys(want);
  if (Object.keys(unsigned).length !== keys.length || keys.some((k) => !(k in unsigned))) return 'its fields are not those of a group receipt';
  for (const k of keys) {
    const a = JSON.stringify((unsigned as Record<string, unknown>)[k]);
    const b = JSON.stringify((want as unknown as Record<string, unknown>)[k]);
    if (a !== b) return `${k} is ${a}, the transcript gives ${b}`;
  }
  if (typeof signature !== 'string' || !/^[0-9a-f]{128}$/.test(signature)) return 'signature is not 128 lowercase hex';
  if (!crypto.ed25519Verify(fromHex(header.member_public_key), receiptBytes(crypto, want), fromHex(signature))) return "the signature is not the member's";
  return undefined;
}

/** verifyGroupSession over a member's session directory (or its transcript.jsonl). */
export function verifyGroupSessionAt(crypto: Crypto, target: string, specPath?: string): GroupSessionCheck {
  let dir = target;
  try {
    if (!lstatSync(target).isDirectory()) dir = dirname(target);
  } catch {
    // reported when the transcript is read
  }
  const transcript = readEvidence(join(dir, 'transcript.jsonl'), MAX_GROUP_TRANSCRIPT_BYTES, 'the transcript');
  if (!transcript.ok) return fail(transcript.reason);
  const spec = readEvidence(specPath ?? join(dir, 'spec.json'), MAX_SPEC_BYTES, 'spec.json');
  if (!spec.ok) return fail(specPath ? spec.reason : `${spec.reason}; pass --spec`);
  const receiptPath = join(dir, 'receipt.json');
  let receipt: string | null = null;
  let exists = true;
  try {
    lstatSync(receiptPath);
  } catch {
    exists = false;
  }
  if (exists) {
    const r = readEvidence(receiptPath, MAX_GROUP_RECEIPT_BYTES, 'receipt.json');
    if (!r.ok) return fail(r.reason);
    receipt = r.text;
  }
  return verifyGroupSession(crypto, transcript.text, spec.text, receipt);
}
