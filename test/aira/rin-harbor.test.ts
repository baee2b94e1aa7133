// The harbor's declared effects against the world itself (no daemon): what HARBOR_EFFECTS declares must be
// what the harbor authors when it binds each capability, and the harbor policy predicted over them must
// give what the harbor's catalog documents (inspect, load-cargo, sail, shift allowed; repair confirmed;
// tow and scuttle denied).
import { describe, expect, it } from 'vitest';
import { RawJson } from '../../ts/crypto/gojson.js';
import { HARBOR_EFFECTS } from '../../ts/aira/rin/index.js';
import { harborRinPolicy, rinPolicyFromText } from '../../ts/aira/rin/local-policy.js';
import type { ActionRequest } from '../../ts/rin/types.js';
import { harborCapabilities } from '../../ts/rin/world/catalog.js';
import { HarborWorld } from '../../ts/rin/world/harbor.js';

const ARGS: Record<string, Record<string, unknown>> = {
  'harbor.inspect': {},
  'harbor.load-cargo': { crates: 2 },
  'harbor.sail': { distance: 3 },
  'harbor.repair': {},
  'harbor.shift': { steps: 2 },
  'harbor.tow': {},
  'harbor.scuttle': {},
};

const facts = (e: { kind: string; operation: string; ownership: string; scope: string; reversible: boolean; risk: string }) => ({
  kind: e.kind,
  operation: e.operation,
  ownership: e.ownership,
  scope: e.scope,
  reversible: e.reversible,
  risk: e.risk,
});

describe('the harbor effect profile', () => {
  it('declares every harbor capability, exactly as the world authors its effects', () => {
    const ids = harborCapabilities().map((s) => s.capability.id);
    expect(Object.keys(HARBOR_EFFECTS).sort()).toEqual([...ids].sort());
    const world = new HarborWorld({ owner: 'alice' });
    const target = { host_id: 'h', world_id: world.worldId, actor_id: 'gull' };
    const tern = { namespace: 'harbor.fleet', type: 'boat', key: 'tern', ephemeral: false, epoch: world.epoch };
    for (const id of ids) {
      const request = { capability: { id, version: '1.0.0' }, arguments: new RawJson(JSON.stringify(ARGS[id])) } as ActionRequest;
      const binding = { binding_id: 'b', ...(id === 'harbor.tow' ? { resolved_targets: [tern] } : {}), valid_until: { clock: 'step' as const, value: 99 } };
      const authored = world.preview(target, request, binding).map(facts);
      expect(HARBOR_EFFECTS[id]!.map(facts), id).toEqual(authored);
    }
  });

  it('predicts the harbor policy decisions its catalog documents', () => {
    const policy = harborRinPolicy();
    const decide = (id: string) =>
      policy.decide({ actorId: 'gull', controllerId: 'c.one', principalId: 'alice', clock: 'step', effects: HARBOR_EFFECTS[id]! }).result;
    expect(Object.fromEntries(Object.keys(ARGS).map((id) => [id, decide(id)]))).toEqual({
      'harbor.inspect': 'allow',
      'harbor.load-cargo': 'allow',
      'harbor.sail': 'allow',
      'harbor.repair': 'require_confirmation',
      'harbor.shift': 'allow',
      'harbor.tow': 'deny',
      'harbor.scuttle': 'deny',
    });
    // A prediction reserves nothing: the same question twice, the same answer.
    expect(decide('harbor.repair')).toBe('require_confirmation');
  });

  it('predicts with any policy file, and refuses a bad one with the engine typed error', () => {
    const open = rinPolicyFromText(
      JSON.stringify({
        revision: 2,
        profile: 'open',
        known_effect_kinds: ['harbor.vessel'],
        known_scopes: ['harbor.public'],
        confirmation_ttl: { step: 10 },
        confirmation_scopes: ['rin.policy.confirm'],
      }),
      'open',
    );
    expect(
      open.decide({ actorId: 'gull', controllerId: 'c.one', principalId: 'alice', clock: 'step', effects: HARBOR_EFFECTS['harbor.scuttle']! }).result,
    ).toBe('require_confirmation');
    // Confirmation lifetimes are per clock: a clock with none cannot confirm, so it denies.
    expect(
      open.decide({ actorId: 'gull', controllerId: 'c.one', principalId: 'alice', clock: 'event', effects: HARBOR_EFFECTS['harbor.scuttle']! }),
    ).toMatchObject({ result: 'deny', reasonCode: 'policy.confirmation_clock_disabled' });
    // The guarded default knows no effect kinds: everything is denied.
    const guarded = rinPolicyFromText(
      JSON.stringify({ revision: 1, profile: 'guarded', confirmation_ttl: { step: 10 }, confirmation_scopes: ['rin.policy.confirm'] }),
      'guarded',
    );
    expect(
      guarded.decide({ actorId: 'gull', controllerId: 'c.one', principalId: 'alice', clock: 'step', effects: HARBOR_EFFECTS['harbor.load-cargo']! }),
    ).toMatchObject({ result: 'deny' });
    expect(() => rinPolicyFromText('{"revision":0}', 'bad')).toThrow(expect.objectContaining({ code: 'invalid' }));
  });
});
