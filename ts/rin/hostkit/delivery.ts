/**
 * The host's check of one control-plane delivery before anything reaches the game (the reference's
 * ValidateActionDelivery): the request, its binding and its policy decision must be one exact, allowed
 * tuple. The final gate (authorize against the live registry) still runs on the authority thread.
 */
import { goJsonEncode } from '../../crypto/gojson.js';
import { actionRequestDigest } from '../digest.js';
import { RinError } from '../errors.js';
import type { HostControlRequest } from '../types.js';
import { validateActionRequest, validateBoundAction, validateEpoch, validateIdentifier, validatePrincipal } from '../validate.js';

const MAX_SAFE = Number.MAX_SAFE_INTEGER;

function refused(message: string): RinError {
  return new RinError('invalid', `delivery: ${message}`, 'delivery', 'validate');
}

const same = (left: unknown, right: unknown): boolean => goJsonEncode(left ?? null) === goJsonEncode(right ?? null);

export function validateActionDelivery(request: HostControlRequest): void {
  if (request.kind !== 'action') throw refused('control request is not a V2 action');
  for (const [field, value] of [
    ['operation_id', request.operation_id],
    ['request_id', request.request_id],
    ['host_id', request.host_id],
    ['world_id', request.world_id],
    ['actor_id', request.actor_id],
  ] as const) {
    validateIdentifier(field, value);
  }
  validatePrincipal(request.principal);
  if (!Number.isInteger(request.submitted_at_unix_millis) || request.submitted_at_unix_millis < 0 || request.submitted_at_unix_millis > MAX_SAFE) {
    throw refused('invalid submitted_at_unix_millis');
  }
  const binding = request.binding;
  if (!binding) throw refused('request binding is required');
  validateEpoch(binding.epoch, 'binding.epoch');
  if (binding.epoch.world_id !== request.world_id) throw refused('binding epoch does not match request world');
  if (!Number.isInteger(binding.observation_seq) || binding.observation_seq < 1 || binding.observation_seq > MAX_SAFE) {
    throw refused('invalid binding observation_seq');
  }
  if (!Number.isInteger(binding.authority_revision) || binding.authority_revision < 1 || binding.authority_revision > MAX_SAFE) {
    throw refused('invalid binding authority_revision');
  }
  if (!binding.controller_lease_id) throw refused('action request requires a controller-bound binding');
  validateIdentifier('binding.controller_lease_id', binding.controller_lease_id);
  const intent = request.action_request;
  const bound = request.bound_action;
  const decision = request.policy_decision;
  if (!intent || !bound || !decision) throw refused('action request requires intent, binding, and policy decision');
  validateActionRequest(intent);
  validateBoundAction(bound);
  const digest = actionRequestDigest(intent);
  if (
    intent.request_id !== request.request_id ||
    intent.actor_id !== request.actor_id ||
    !same(intent.expected_epoch, binding.epoch) ||
    intent.observation_sequence !== binding.observation_seq ||
    bound.request_digest !== digest ||
    bound.request_id !== intent.request_id ||
    bound.controller_id !== intent.controller_id ||
    bound.actor_id !== intent.actor_id ||
    !same(bound.capability, intent.capability) ||
    bound.spec_digest !== intent.spec_digest ||
    !same(bound.expected_epoch, intent.expected_epoch) ||
    bound.observation_sequence !== intent.observation_sequence ||
    (bound.task_id ?? '') !== (intent.task_id ?? '') ||
    bound.idempotency_key !== intent.idempotency_key ||
    !same(bound.requested_targets ?? [], intent.target_refs ?? [])
  ) {
    throw refused('action request, binding, and control target do not match');
  }
  if (
    decision.controller_id !== bound.controller_id ||
    decision.actor_id !== bound.actor_id ||
    decision.principal_id !== request.principal.id ||
    decision.effect_digest !== bound.effect_digest
  ) {
    throw refused('policy decision does not match bound action');
  }
  if (decision.result !== 'allow') throw refused('V2 action delivery requires an allow policy decision');
  if (request.parent_operation_id !== undefined && request.parent_operation_id !== '') {
    validateIdentifier('parent_operation_id', request.parent_operation_id);
    if (request.parent_operation_id === request.operation_id) throw refused('operation cannot be its own parent');
  }
  const scopes = request.principal.granted_scopes ?? [];
  if (!scopes.includes('host.admin') && !scopes.includes('actor.execute')) throw refused('principal is missing actor.execute');
}
