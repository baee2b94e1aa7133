/**
 * The rin daemon's policy engine run locally over declared effects: the validate step's prediction of
 * what the daemon will decide. Node-only (the engine uses node:crypto), hence apart from the authority.
 *
 * Each question gets a fresh engine, so a prediction never reserves budget or opens a confirmation
 * challenge; budgets the daemon has already spent are therefore not seen here.
 */
import { RawJson } from '../../crypto/gojson.js';
import { parsePolicyConfig, PolicyEngine, type PolicyConfig } from '../../rin/control/policy.js';
import type { BoundAction, Effect, Epoch, HostRef } from '../../rin/types.js';
import { harborPolicy } from '../../rin/world/catalog.js';
import type { PolicyQuestion, PolicyVerdict, RinPolicy } from './types.js';

const EPOCH: Epoch = { session_id: 'aira.prediction', world_id: 'aira.prediction', host: 1, world: 1, timeline: 1 };
const SUBJECT: HostRef = { namespace: 'aira.prediction', type: 'actor', key: 'self', ephemeral: false, epoch: EPOCH };

function predictedAction(q: PolicyQuestion): BoundAction {
  const effects: Effect[] = q.effects.map((e, i) => ({
    effect_id: `declared.${i}`,
    kind: e.kind,
    operation: e.operation,
    subject_ref: SUBJECT,
    ...(e.tags && e.tags.length > 0 ? { tags: [...e.tags] } : {}),
    ownership: e.ownership,
    scope: e.scope,
    reversible: e.reversible,
    risk: e.risk,
    attributes: new RawJson('{}'),
  }));
  return {
    binding_id: 'aira.prediction',
    request_id: 'aira.prediction',
    request_digest: '0'.repeat(64),
    controller_id: q.controllerId,
    actor_id: q.actorId,
    capability: { id: 'aira.prediction', version: '1.0.0' },
    spec_digest: '0'.repeat(64),
    normalized_arguments: new RawJson('{}'),
    expected_epoch: EPOCH,
    observation_sequence: 1,
    idempotency_key: 'aira.prediction',
    effect_preview: effects,
    effect_digest: '0'.repeat(64),
    bound_at: { clock: q.clock, value: 1 },
    valid_until: { clock: q.clock, value: 2 },
  };
}

/** A RinPolicy from a sealed policy configuration (the daemon's `--policy` file format). */
export function rinPolicyFromConfig(config: PolicyConfig, name: string): RinPolicy {
  const sealed = new PolicyEngine(config).activeConfig();
  return {
    name,
    decide(q: PolicyQuestion): PolicyVerdict {
      const d = new PolicyEngine(sealed).evaluate(predictedAction(q), {
        now: { clock: q.clock, value: 1 },
        current_epoch: EPOCH,
        principal: { id: q.principalId },
        server_id: 'aira.prediction',
        emergency_stopped: false,
      });
      return { result: d.result, matchedRuleIds: [...d.matched_rule_ids], reasonCode: d.reason_code, summary: d.human_summary };
    },
  };
}

/** A RinPolicy from the text of a policy file; a bad file throws the engine's `invalid` RinError. */
export function rinPolicyFromText(text: string, name: string): RinPolicy {
  return rinPolicyFromConfig(parsePolicyConfig(text), name);
}

/** The policy `aigenora rin serve --policy harbor` runs. */
export function harborRinPolicy(): RinPolicy {
  return rinPolicyFromText(harborPolicy(), 'harbor');
}
