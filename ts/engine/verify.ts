/**
 * Offline checks over files: transcript-check.ts's checks, given a session directory or a transcript
 * path, with spec.json and the receipts read from beside it under size limits.
 */
import { existsSync, lstatSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Crypto } from '../crypto/backend.js';
import { readEvidence } from '../files/index.js';
import { MAX_SPEC_BYTES } from '../spec/check.js';
import { MAX_RECEIPT_BYTES, MAX_TRANSCRIPT_BYTES, verifyTranscript, type TranscriptCheck } from './transcript-check.js';

export {
  MAX_PROOF_BYTES,
  MAX_TRANSCRIPT_BYTES,
  verifyProof,
  verifyTranscript,
  type Proof,
  type ProofCheck,
  type ProofProtocol,
  type TranscriptCheck,
} from './transcript-check.js';

const fail = (reason: string): TranscriptCheck => ({ ok: false, receipt: false, frames: 0, reason });

/** Resolves a session directory or a transcript path to (transcript, spec.json, receipt.json). */
export function transcriptPaths(target: string): { transcript: string; spec: string; receipt: string } {
  let dir = false;
  try {
    dir = statSync(target).isDirectory();
  } catch {
    // reported when the transcript is read
  }
  const transcript = dir ? join(target, 'transcript.jsonl') : target;
  return { transcript, spec: join(dirname(transcript), 'spec.json'), receipt: join(dirname(transcript), 'receipt.json') };
}

/**
 * verifyTranscript over files: a session directory or transcript path, spec.json and receipt.json
 * beside it (and a mental-poker game's transcript_receipt.json). Everything read may be an attacker's:
 * an unreadable, oversized or malformed file is a result with its reason, never an exception.
 *
 * @param crypto - checks the signatures and protocol_id
 * @param target - a session directory, or its transcript.jsonl
 * @param specPath - a spec.json to use instead of the one beside the transcript
 * @example
 * ```ts
 * const v = verifyTranscriptAt(getCrypto(), './sessions/host');
 * if (!v.ok) console.error(v.reason); // not authentic, or not this protocol
 * else if (!v.receipt) console.error(v.violation ?? v.reason); // authentic, but not a clean end
 * ```
 */
export function verifyTranscriptAt(crypto: Crypto, target: string, specPath?: string): TranscriptCheck {
  const p = transcriptPaths(target);
  const transcript = readEvidence(p.transcript, MAX_TRANSCRIPT_BYTES, 'the transcript');
  if (!transcript.ok) return fail(transcript.reason);
  const spec = readEvidence(specPath ?? p.spec, MAX_SPEC_BYTES, 'spec.json');
  if (!spec.ok) return fail(specPath ? spec.reason : `${spec.reason}; pass --spec`);
  let receipt: string | null = null;
  let exists = true;
  try {
    lstatSync(p.receipt);
  } catch {
    exists = false;
  }
  if (exists) {
    const r = readEvidence(p.receipt, MAX_RECEIPT_BYTES, 'receipt.json');
    if (!r.ok) return fail(r.reason);
    receipt = r.text;
  }
  const mpPath = join(dirname(p.transcript), 'transcript_receipt.json');
  let mpReceipt: string | null = null;
  if (existsSync(mpPath)) {
    const r = readEvidence(mpPath, MAX_RECEIPT_BYTES, 'transcript_receipt.json');
    if (!r.ok) return fail(r.reason);
    mpReceipt = r.text;
  }
  return verifyTranscript(crypto, transcript.text, spec.text, receipt, mpReceipt);
}
