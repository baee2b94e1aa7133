/**
 * The spec's flow.group block as the reference reads it (GroupConfig.from_spec), and the leader's typed
 * refusal. Its own module so that what only reads a group spec (the registry's groups API, a member)
 * does not load the leader.
 */

/** The spec's flow.group block with the reference's defaults. */
export interface GroupConfig {
  min_participants: number;
  max_participants: number;
  allow_late_join: boolean;
  recovery_mode: string;
  start_policy: string;
  checkpoint_every_events: number;
  max_action_bytes: number;
  max_events_per_action: number;
}

export type LeaderErrorCode =
  | 'GROUP_CONFIG'
  | 'GROUP_COMPLETED'
  | 'NOT_ACTIVE_MEMBER'
  | 'CLIENT_SEQ_INVALID'
  | 'CLIENT_SEQ_GAP'
  | 'ACTION_NOT_OBJECT'
  | 'ACTION_TOO_LARGE'
  | 'ACTION_INVALID'
  | 'HOOK_REJECTED'
  | 'HOOK_RESULT'
  | 'GROUP_FULL'
  | 'TOO_FEW_MEMBERS'
  | 'LATE_JOIN_CLOSED'
  | 'SEAT_TAKEN'
  | 'UNKNOWN_MEMBER'
  | 'MEMBER_INVALID'
  | 'INPUT_INVALID'
  | 'CHECKPOINT_INVALID'
  | 'CHECKPOINT_HASH'
  | 'CHECKPOINT_SIGNATURE';

/** A refusal by the leader; `message` is the reference's text where it has one (a peer sees it as `{_group: "error", reason}`). */
export class GroupLeaderError extends Error {
  constructor(
    readonly code: LeaderErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'GroupLeaderError';
  }
}

const fail = (code: LeaderErrorCode, message: string): never => {
  throw new GroupLeaderError(code, message);
};

const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v);

function intField(group: Record<string, unknown>, key: string, fallback?: number): number {
  const v = group[key] ?? fallback;
  if (!isInt(v)) fail('GROUP_CONFIG', `flow.group.${key} must be an integer`);
  return v as number;
}

/** The flow.group block of a spec as the reference reads it (GroupConfig.from_spec). */
export function groupConfigFromSpec(spec: unknown): GroupConfig {
  const flow = typeof spec === 'object' && spec !== null ? (spec as Record<string, unknown>)['flow'] : undefined;
  const group = typeof flow === 'object' && flow !== null ? (flow as Record<string, unknown>)['group'] : undefined;
  if (typeof group !== 'object' || group === null || Array.isArray(group)) return fail('GROUP_CONFIG', 'authoritative_group spec has no flow.group');
  const g = group as Record<string, unknown>;
  const every = intField(g, 'checkpoint_every_events', 20);
  if (every < 1 || every > 256) fail('GROUP_CONFIG', 'checkpoint_every_events must be between 1 and 256');
  return {
    min_participants: intField(g, 'min_participants'),
    max_participants: intField(g, 'max_participants'),
    allow_late_join: g['allow_late_join'] === true,
    recovery_mode: String(g['recovery_mode']),
    start_policy: String(g['start_policy']),
    checkpoint_every_events: every,
    max_action_bytes: intField(g, 'max_action_bytes', 8192),
    max_events_per_action: intField(g, 'max_events_per_action', 64),
  };
}
