/**
 * The policy engine on its own: kernel before rules, the reference's default profile, most
 * restrictive result, single-use confirmation challenges, budgets, configuration validation.
 */
import { describe, expect, it } from 'vitest';
import { RawJson } from '../../ts/crypto/gojson.js';
import {
  DEFAULT_POLICY_CONFIG,
  parsePolicyConfig,
  PolicyEngine,
  sealPolicyConfig,
  type PolicyConfig,
  type PolicyContext,
} from '../../ts/rin/control/policy.js';
import { RinError } from '../../ts/rin/errors.js';
import type { BoundAction, Effect, Epoch } from '../../ts/rin/types.js';

const epoch: Epoch = { session_id: 'session.one', world_id: 'world.one', host: 1, world: 1, timeline: 1 };
const DIGEST = 'a'.repeat(64);

function effect(over: Partial<Effect> = {}): Effect {
  return {
    effect_id: 'effect.one',
    kind: 'cargo.move',
    operation: 'update',
    ownership: 'actor',
    scope: 'harbor.dock',
    reversible: true,
    risk: 'low',
    attributes: new RawJson('{}'),
    ...over,
  };
}

function action(effects: Effect[], over: Partial<BoundAction> = {}): BoundAction {
  return {
    binding_id: 'binding.one',
    request_id: 'request.one',
    request_digest: DIGEST,
    controller_id: 'controller.one',
    actor_id: 'actor.one',
    capability: { id: 'harbor.cargo', version: '1.0.0' },
    spec_digest: DIGEST,
    normalized_arguments: new RawJson('{}'),
    expected_epoch: { ...epoch },
    observation_sequence: 3,
    idempotency_key: 'key.one',
    effect_preview: effects,
    effect_digest: 'b'.repeat(64),
    bound_at: { clock: 'step', value: 100 },
    valid_until: { clock: 'step', value: 200 },
    ...over,
  };
}

const ctx = (over: Partial<PolicyContext> = {}): PolicyContext => ({
  now: { clock: 'step', value: 100 },
  current_epoch: { ...epoch },
  principal: { id: 'alice', granted_scopes: ['actor.execute'] },
  server_id: 'host.one',
  owner_id: 'alice',
  emergency_stopped: false,
  ...over,
});

const KNOWN: PolicyConfig = { ...DEFAULT_POLICY_CONFIG, known_effect_kinds: ['cargo.move', 'cargo.talk'], known_scopes: ['harbor.dock'] };

describe('kernel', () => {
  it('the built-in default (no known kinds) denies every effect as unknown', () => {
    const d = new PolicyEngine().evaluate(action([effect()]), ctx());
    expect(d.result).toBe('deny');
    expect(d.reason_code).toBe('policy.unknown_effect');
    expect(d.matched_rule_ids).toEqual(['kernel.unknown-effect']);
    expect(d.policy_revision).toBe(1);
  });

  it('emergency stop, stale epoch and an expired binding are denied before anything else', () => {
    const e = new PolicyEngine(KNOWN);
    expect(e.evaluate(action([effect()]), ctx({ emergency_stopped: true })).reason_code).toBe('policy.emergency_stop');
    expect(e.evaluate(action([effect()]), ctx({ current_epoch: { ...epoch, timeline: 2 } })).reason_code).toBe('policy.stale_epoch');
    expect(e.evaluate(action([effect()]), ctx({ now: { clock: 'step', value: 200 } })).reason_code).toBe('policy.expired_binding');
    expect(e.evaluate(action([effect()]), ctx({ now: { clock: 'event', value: 100 } })).reason_code).toBe('policy.expired_binding');
  });

  it('forbidden kinds and tags, unknown ownership and unknown scopes cannot be allowed by a rule', () => {
    const config: PolicyConfig = {
      ...KNOWN,
      known_effect_kinds: ['cargo.move', 'secret.exposure'],
      rules: [{ rule_id: 'server.allow-all', layer: 'server', priority: 0, result: 'allow', reason_code: 'server.allow', human_summary: 'Everything.' }],
    };
    const e = new PolicyEngine(config);
    expect(e.evaluate(action([effect({ kind: 'secret.exposure' })]), ctx()).reason_code).toBe('policy.secret_exposure_denied');
    expect(e.evaluate(action([effect({ tags: ['system.file-access'] })]), ctx()).reason_code).toBe('policy.file_access_denied');
    expect(e.evaluate(action([effect({ ownership: 'unknown' })]), ctx()).reason_code).toBe('policy.unknown_ownership');
    expect(e.evaluate(action([effect({ scope: 'harbor.vault' })]), ctx()).reason_code).toBe('policy.unknown_scope');
    expect(e.evaluate(action([effect()]), ctx()).result).toBe('allow');
  });
});

describe('profiles and rules', () => {
  it('guarded: reads allowed, high risk denied, reversible low-risk own effects allowed, the rest confirmed', () => {
    const e = new PolicyEngine(KNOWN);
    const result = (x: Partial<Effect>) => e.evaluate(action([effect(x)], { binding_id: `binding.${JSON.stringify(x).length}` }), ctx()).matched_rule_ids[0];
    expect(result({ operation: 'read', risk: 'moderate', reversible: false })).toBe('profile.guarded.safe-interaction');
    expect(result({ risk: 'high' })).toBe('profile.guarded.high-risk');
    expect(result({ risk: 'low', reversible: true, ownership: 'unowned' })).toBe('profile.guarded.low-risk');
    expect(result({ risk: 'low', reversible: true, ownership: 'player' })).toBe('profile.guarded.confirm');
  });

  it('survival and open profiles', () => {
    const survival = new PolicyEngine({ ...KNOWN, profile: 'survival' });
    expect(survival.evaluate(action([effect({ risk: 'critical' })]), ctx()).result).toBe('deny');
    expect(survival.evaluate(action([effect({ ownership: 'shared' })], { binding_id: 'binding.two' }), ctx()).result).toBe('require_confirmation');
    expect(survival.evaluate(action([effect({ reversible: false, risk: 'moderate' })], { binding_id: 'binding.three' }), ctx()).result).toBe('allow');
    const open = new PolicyEngine({ ...KNOWN, profile: 'open' });
    expect(open.evaluate(action([effect({ risk: 'critical' })]), ctx()).result).toBe('require_confirmation');
    expect(open.evaluate(action([effect({ risk: 'high' })], { binding_id: 'binding.two' }), ctx()).result).toBe('allow');
  });

  it('the most restrictive result over all effects wins, and matched rule ids accumulate', () => {
    const e = new PolicyEngine({
      ...KNOWN,
      rules: [
        {
          rule_id: 'world.talk',
          layer: 'world',
          priority: 0,
          result: 'allow',
          effect_kinds: ['cargo.talk'],
          reason_code: 'world.talk',
          human_summary: 'Talking is fine.',
        },
        {
          rule_id: 'task.no-heavy',
          layer: 'task',
          priority: 0,
          result: 'deny',
          risk_at_least: 'moderate',
          reason_code: 'task.heavy',
          human_summary: 'Not in this task.',
        },
      ],
    });
    const two = [effect({ effect_id: 'effect.a', kind: 'cargo.talk' }), effect({ effect_id: 'effect.b', risk: 'moderate', reversible: false })];
    const withoutTask = e.evaluate(action(two), ctx());
    expect(withoutTask.result).toBe('require_confirmation');
    expect(withoutTask.matched_rule_ids).toEqual(['world.talk', 'profile.guarded.confirm']);
    const withTask = e.evaluate(action(two, { task_id: 'task.one', binding_id: 'binding.task' }), ctx());
    expect(withTask.result).toBe('deny');
    expect(withTask.reason_code).toBe('task.heavy');
  });
});

describe('confirmation', () => {
  const confirmAction = () => action([effect({ risk: 'moderate', reversible: false })]);

  it('issues one challenge bound to the exact effect, consumes it once after approval', () => {
    const e = new PolicyEngine(KNOWN);
    const first = e.evaluate(confirmAction(), ctx());
    expect(first.result).toBe('require_confirmation');
    const challenge = first.confirmation_challenge!;
    expect(challenge.expires_at).toEqual({ clock: 'step', value: 200 });
    expect(challenge.single_use).toBe(true);
    // Asking again for the same binding returns the same open challenge.
    expect(e.evaluate(confirmAction(), ctx()).confirmation_challenge?.challenge_id).toBe(challenge.challenge_id);
    // Unapproved: the confirmation id alone is not enough.
    expect(e.evaluate(confirmAction(), ctx({ confirmation_id: challenge.challenge_id })).reason_code).toBe('policy.invalid_confirmation');
    expect(() => e.approve(challenge.challenge_id, { id: 'bob', granted_scopes: ['actor.control'] }, { clock: 'step', value: 110 })).toThrow(RinError);
    e.approve(challenge.challenge_id, { id: 'bob', granted_scopes: ['rin.policy.confirm'] }, { clock: 'step', value: 110 });
    const allowed = e.evaluate(confirmAction(), ctx({ now: { clock: 'step', value: 111 }, confirmation_id: challenge.challenge_id }));
    expect(allowed.result).toBe('allow');
    expect(allowed.reason_code).toBe('policy.confirmed');
    expect(allowed.matched_rule_ids).toContain('confirmation.consumed');
    // The same binding and confirmation again: the cached authorization, not a second consumption.
    expect(e.evaluate(confirmAction(), ctx({ now: { clock: 'step', value: 112 }, confirmation_id: challenge.challenge_id })).decision_id).toBe(
      allowed.decision_id,
    );
    // Another effect digest with the consumed challenge is refused.
    expect(
      e.evaluate(action([effect({ risk: 'moderate', reversible: false })], { effect_digest: 'c'.repeat(64) }), ctx({ confirmation_id: challenge.challenge_id }))
        .reason_code,
    ).toBe('policy.invalid_confirmation');
  });

  it('a challenge expires with the per-clock TTL; a clock without TTL denies', () => {
    const e = new PolicyEngine({ ...KNOWN, confirmation_ttl: { step: 10 } });
    const c = e.evaluate(confirmAction(), ctx()).confirmation_challenge!;
    expect(c.expires_at.value).toBe(110);
    expect(() => e.approve(c.challenge_id, { id: 'bob', granted_scopes: ['rin.policy.confirm'] }, { clock: 'step', value: 110 })).toThrow(/expired/);
    const realtime = action([effect({ risk: 'moderate', reversible: false })], {
      bound_at: { clock: 'realtime', value: 100 },
      valid_until: { clock: 'realtime', value: 200 },
    });
    expect(e.evaluate(realtime, ctx({ now: { clock: 'realtime', value: 100 } })).reason_code).toBe('policy.confirmation_clock_disabled');
  });

  it('a confirmation attached to an action that needs none is denied', () => {
    const e = new PolicyEngine(KNOWN);
    expect(e.evaluate(action([effect()]), ctx({ confirmation_id: 'confirmation.x' })).reason_code).toBe('policy.confirmation_not_required');
  });
});

describe('budgets', () => {
  it('reserve per decision, deny over the limit, and give the reservation back on a rollback', () => {
    const e = new PolicyEngine({ ...KNOWN, budgets: [{ budget_id: 'actor.moves', layer: 'actor', max_actions: 1 }] });
    const first = e.evaluate(action([effect()]), ctx());
    expect(first.result).toBe('allow');
    expect(first.effective_limits?.[0]).toMatchObject({ budget_id: 'actor.moves', actions_used: 1, actions_remaining: 0 });
    const second = e.evaluate(action([effect()], { binding_id: 'binding.two' }), ctx());
    expect(second.reason_code).toBe('policy.budget_exceeded');
    e.finalize(first.decision_id, false);
    expect(e.evaluate(action([effect()], { binding_id: 'binding.three' }), ctx()).result).toBe('allow');
    expect(e.snapshotState().usage?.[0]?.actions).toBe(1);
  });
});

describe('configuration', () => {
  it('seals lists sorted and rules by layer, priority and id; refuses bad values with the field', () => {
    const sealed = sealPolicyConfig({
      ...KNOWN,
      known_scopes: ['harbor.dock', 'actor.self'],
      rules: [
        { rule_id: 'task.b', layer: 'task', priority: 0, result: 'deny', reason_code: 'x.y', human_summary: 'b' },
        { rule_id: 'server.a', layer: 'server', priority: 1, result: 'allow', reason_code: 'x.y', human_summary: 'a' },
        { rule_id: 'server.z', layer: 'server', priority: 5, result: 'allow', reason_code: 'x.y', human_summary: 'z' },
      ],
    });
    expect(sealed.known_scopes).toEqual(['actor.self', 'harbor.dock']);
    expect(sealed.rules!.map((r) => r.rule_id)).toEqual(['server.z', 'server.a', 'task.b']);
    expect(() => sealPolicyConfig({ ...KNOWN, known_effect_kinds: ['nodot'] })).toThrow('known_effect_kinds[0] must be namespaced');
    expect(() => sealPolicyConfig({ ...KNOWN, confirmation_ttl: {} })).toThrow('confirmation_ttl must enable at least one Host clock');
    expect(() => sealPolicyConfig({ ...KNOWN, profile: 'lenient' as never })).toThrow('unsupported profile');
    expect(() => parsePolicyConfig('{"revision":1,"profile":"open","extra":1}')).toThrow('unknown field "extra"');
    expect(() =>
      parsePolicyConfig(
        JSON.stringify({
          ...KNOWN,
          rules: [{ rule_id: 'a.b', layer: 'server', priority: 0, result: 'allow', reason_code: 'a.b', human_summary: 'x', why: 1 }],
        }),
      ),
    ).toThrow('unknown field "why"');
    expect(() => parsePolicyConfig('{"revision":1,"revision":2}')).toThrow(RinError);
    expect(parsePolicyConfig(JSON.stringify(KNOWN)).known_effect_kinds).toEqual(['cargo.move', 'cargo.talk']);
  });

  it('a newer revision replaces the config and drops open challenges', () => {
    const e = new PolicyEngine(KNOWN);
    const c = e.evaluate(action([effect({ risk: 'moderate', reversible: false })]), ctx()).confirmation_challenge!;
    expect(() => e.update({ ...KNOWN })).toThrow('policy revision must increase');
    e.update({ ...KNOWN, revision: 2 });
    expect(() => e.approve(c.challenge_id, { id: 'bob', granted_scopes: ['rin.policy.confirm'] }, { clock: 'step', value: 101 })).toThrow(/missing or expired/);
    expect(e.evaluate(action([effect()], { binding_id: 'binding.after' }), ctx()).policy_revision).toBe(2);
  });
});
