/**
 * What the host agent reads from the control plane and says back to it: the shape of a `host/poll`
 * batch, the gateway and acknowledgement codes a failure is sent as (R88, R94), and messages clipped
 * to the control plane's bounds.
 */
import { RinError } from './errors.js';
import type { GatewayErrorCode } from './types.js';
import { ActionRequestShape, BoundActionShape, EpochShape, PrincipalShape, TimepointShape, type Shape } from './wire.js';

// The parts of a poll batch the model's wire shapes do not already describe.
const PolicyDecisionShape = {
  fields: {
    decision_id: 'string',
    result: 'string',
    controller_id: 'string',
    actor_id: 'string',
    principal_id: 'string',
    effect_digest: 'string',
    policy_revision: 'u64',
    matched_rule_ids: { list: 'string' },
    reason_code: 'string',
    human_summary: 'string',
    'effective_limits?': {
      list: {
        fields: {
          budget_id: 'string',
          usage_key: 'string',
          max_actions: 'u64',
          actions_used: 'u64',
          actions_remaining: 'u64',
          max_quantity: 'u64',
          quantity_used: 'u64',
          quantity_remaining: 'u64',
        },
      },
    },
    'confirmation_challenge?': {
      ptr: {
        fields: {
          challenge_id: 'string',
          controller_id: 'string',
          actor_id: 'string',
          principal_id: 'string',
          effect_digest: 'string',
          epoch: EpochShape,
          expires_at: TimepointShape,
          policy_revision: 'u64',
          single_use: 'bool',
        },
      },
    },
    evaluated_at: TimepointShape,
  },
} as const satisfies Shape;

const ActorTargetShape = { fields: { host_id: 'string', world_id: 'string', actor_id: 'string' } } as const;

export const HostControlBatchShape = {
  fields: {
    gateway_requests: {
      list: {
        fields: {
          request: {
            fields: {
              gateway_request_id: 'string',
              kind: 'string',
              target: ActorTargetShape,
              'action_request?': { ptr: ActionRequestShape },
              submitted_at_unix_millis: 'i64',
            },
          },
          delivery_attempt: 'u32',
        },
      },
    },
    requests: {
      list: {
        fields: {
          request: {
            fields: {
              operation_id: 'string',
              request_id: 'string',
              principal: PrincipalShape,
              host_id: 'string',
              world_id: 'string',
              actor_id: 'string',
              kind: 'string',
              binding: { ptr: { fields: { epoch: EpochShape, observation_seq: 'u64', authority_revision: 'u64', 'controller_lease_id?': 'string' } } },
              action_request: { ptr: ActionRequestShape },
              bound_action: { ptr: BoundActionShape },
              policy_decision: { ptr: PolicyDecisionShape },
              'parent_operation_id?': 'string',
              submitted_at_unix_millis: 'i64',
            },
          },
          delivery_attempt: 'u32',
        },
      },
    },
    cancellations: { list: 'string' },
  },
} as const satisfies Shape;

/** Go accepts these gateway error codes (R94); anything else is sent as the nearest of them. */
export function gatewayCode(e: unknown): GatewayErrorCode {
  if (!(e instanceof RinError)) return 'internal';
  if (e.code === 'invalid') {
    // A request fenced by the registry (epoch, observation window, spec digest) is stale, not malformed.
    const field = e.field ?? '';
    if (/^(expected_epoch|observation_sequence|spec_digest|capability)/.test(field)) return 'stale';
    return 'invalid';
  }
  switch (e.code) {
    case 'stale':
    case 'forbidden':
    case 'conflict':
    case 'unavailable':
    case 'internal':
      return e.code;
    case 'not_found':
      return 'invalid';
    case 'capacity':
    case 'lease_expired':
      return 'unavailable';
    default:
      return 'conflict';
  }
}

/** An acknowledgement code is an identifier (R88). */
export function ackCode(e: unknown): string {
  if (e instanceof RinError) return gatewayCode(e) === 'stale' ? 'stale' : e.code.replace(/_/g, '-');
  return 'internal';
}

/** A message for the control plane: one line, at most `max` bytes, cut between code points. */
export function clip(text: string, max = 500): string {
  const clean =
    text
      .replace(/[\u0000-\u001f\u007f]/g, ' ')
      .replace(/\p{Cs}/gu, '\ufffd')
      .trim() || 'refused';
  let out = '';
  let bytes = 0;
  for (const ch of clean) {
    bytes += Buffer.byteLength(ch, 'utf8');
    if (bytes > max) break;
    out += ch;
  }
  return out;
}

export const asRinError = (e: unknown): RinError => (e instanceof RinError ? e : new RinError('internal', e instanceof Error ? e.message : String(e)));
export const isNetwork = (e: unknown): boolean => e instanceof RinError && e.code === 'unavailable' && (e as { status?: number }).status === 0;

/** Bounded insertion-ordered map: the oldest entry goes first when full. */
export class Bounded<K, V> extends Map<K, V> {
  constructor(private readonly limit: number) {
    super();
  }
  override set(key: K, value: V): this {
    if (!this.has(key) && this.size >= this.limit) {
      const oldest = this.keys().next();
      if (!oldest.done) this.delete(oldest.value);
    }
    return super.set(key, value);
  }
}
