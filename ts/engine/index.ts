/**
 * Two-party sessions as a library: play both sides of a protocol in one process (runLocal on the
 * real clock, runVirtual on a virtual one that replays exactly from a seed), and check what a session
 * left behind as a third party would, from its files alone (verifyTranscriptAt over a session
 * directory, verifyTranscript over the texts, verifyProof for a cheat proof). A session between two
 * machines is aigenora's `host` and `join`.
 */
export { runLocal, type LocalRun } from './local.js';
export { runVirtual, type VirtualResult, type VirtualRun } from './virtual.js';
export type { SessionResult } from './session.js';
export type { EndReason, Outcome } from './mode.js';
export {
  MAX_PROOF_BYTES,
  MAX_TRANSCRIPT_BYTES,
  transcriptPaths,
  verifyProof,
  verifyTranscript,
  verifyTranscriptAt,
  type Proof,
  type ProofCheck,
  type ProofProtocol,
  type TranscriptCheck,
} from './verify.js';
