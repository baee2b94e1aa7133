/**
 * authoritative_group: a leader and up to 32 members. The leader (GroupLeader) and each member's
 * replica (GroupReplica) are pure state machines; runGroupLocal plays every seat in one process and
 * writes one session directory per member, which verifyGroupSessionAt rechecks offline; a leader that
 * signs inconsistent frames is caught with a proof verifyGroupProof checks. The network driver is
 * aigenora's `host` and `join` (ts/net/group.ts).
 */
export {
  GroupLeader,
  GroupLeaderError,
  groupConfigFromSpec,
  declaredTurnTimeoutMs,
  type GroupConfig,
  type GroupInput,
  type Envelopes,
  type Receipt,
  type LeaderOptions,
  type TurnTimeout,
  type TurnTimeoutFailure,
  type TurnTimerResult,
  type TurnTimeoutReason,
} from './leader.js';
export {
  GroupReplica,
  GroupEpochError,
  replayGroupTranscript,
  type ApplyResult,
  type ReplicaRefusal,
  type TranscriptEntry,
  type ReplayResult,
} from './member.js';
export { LeaderAdmission, AdmissionError, checkAdmissionPost, type AdmissionPost, type AdmissionRefusal } from './admission.js';
export { groupProofOf, verifyGroupProof, GROUP_PROOF_KIND, type GroupProof, type GroupFault, type ProofVerdict } from './proof.js';
export { LocalArbiter, serverlessSuccessor, type LeaderArbiter, type LeaderClaim, type ClaimResult } from './arbiter.js';
export { makeDelta, applyDelta, type DeltaOp } from './delta.js';
export { groupCanonical, groupJsonHash } from './json.js';
export { GroupError } from './errors.js';
export { groupMessages, GroupMessageError, type GroupMessages } from './action-message.js';
export { runGroupLocal, GroupRunError, type GroupLocalRun, type GroupLocalResult, type GroupMemberResult, type GroupAbsence } from './local.js';
export {
  GroupSessionRecord,
  verifyGroupSession,
  verifyGroupSessionAt,
  GROUP_RECEIPT_KIND,
  type GroupReceipt,
  type GroupSessionCheck,
  type GroupTranscriptHeader,
} from './session-dir.js';
