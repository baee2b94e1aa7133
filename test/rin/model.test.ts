// The rin model beyond the reference vectors: the reference's own fixtures (v2_action_fixture.json and
// the derived capability digest), and its registry tests ported (host/action_test.go): bind and
// authorize with pinned digests, tampered bindings, observation windows, scopes, revocation, binding
// store rules and defensive copies. Both backends. The fixtures are read in place from ../shared.
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseWireJson, RawJson, type WireNode } from '../../ts/crypto/gojson.js';
import { getCrypto } from '../../ts/crypto/index.js';
import {
  actionRequestDigest,
  ActionRequestShape,
  capabilitySpecDigestText,
  decodeWire,
  effectPreviewDigest,
  EffectsShape,
  HostRegistry,
  newSchema,
  sealCapabilitySpec,
  validateAgainstSchema,
  validateBoundAction,
  validateEffect,
  type ActionRequest,
  type BoundAction,
  type CapabilitySpec,
  type Effect,
  type HostRef,
  type Principal,
} from '../../ts/rin/index.js';
import { goJsonEncode } from '../../ts/crypto/gojson.js';
import { epoch, fault, manifest } from './model-fixtures.js';

const REF = new URL('../../../shared/reference/rin/', import.meta.url);

function shared(path: string): string {
  const file = new URL(path, REF);
  if (!existsSync(file)) throw new Error(`${file.pathname} is absent: the rin reference fixtures live in ../shared/reference/rin`);
  return readFileSync(file, 'utf8');
}

const SPEC_DIGEST = 'eb6781411eb3558d55c01dd710952c06111f0d1c3d0a220eef0824f6b5806f38';
const REQUEST_DIGEST = '8227d8c696b50aeb5c74323d3bb3c978576c617c516a72628db730d4ee1d69d7';
const EFFECT_DIGEST = 'de4b9b1f3329993edcf4e9cdd045f1a6a558db48a025b2a0fa9597431f530619';

const dock = (e = epoch()): HostRef => ({ namespace: 'test.world', type: 'location', key: 'dock', ephemeral: false, epoch: e });
const realtime = (value: number) => ({ clock: 'realtime' as const, value });
const principal: Principal = { id: 'principal.guide', granted_scopes: ['rin.actor.move'] };

describe.each(['wasm', 'js'])('%s backend', (backend) => {
  const c = getCrypto(backend);

  /** The reference's testCapabilitySpec, from the derived vector's authored schemas. */
  function testSpec(): CapabilitySpec {
    const authored = JSON.parse(shared('derived/capability-spec-digest-vector.json'))['schemas_as_authored'];
    return {
      capability: { id: 'rin.navigation.move-to', version: '2.0.0' },
      description: 'Move through the authoritative Host navigation system.',
      input: newSchema(JSON.stringify(authored.input, null, 2), c),
      output: newSchema(JSON.stringify(authored.output), c),
      effect_schema: newSchema(JSON.stringify(authored.effect_schema), c),
      kind: 'atomic',
      execution: 'long-running',
      cancellation: 'cooperative',
      risk_floor: 'moderate',
      required_durability: 'advisory',
      required_scopes: ['rin.actor.move'],
      execution_budget: realtime(10_000),
      max_input_bytes: 1024,
      max_output_bytes: 1024,
      max_effects: 4,
      produces_child_operations: false,
      digest: '',
    };
  }

  const request = (spec: CapabilitySpec, e = epoch()): ActionRequest => ({
    request_id: 'request.move.1',
    controller_id: 'controller.external.1',
    actor_id: 'actor.guide',
    capability: { ...spec.capability },
    spec_digest: spec.digest,
    arguments: new RawJson('{ "target": "dock", "count": 2 }'),
    target_refs: [dock(e)],
    expected_epoch: e,
    observation_sequence: 7,
    task_id: 'task.reach.dock',
    idempotency_key: 'request.move.1',
  });

  const effects = (e = epoch()): Effect[] => [
    {
      effect_id: 'effect.move.position',
      kind: 'world.position',
      operation: 'update',
      subject_ref: dock(e),
      tags: ['world.travel', 'actor.movement'],
      ownership: 'actor',
      scope: 'world.public',
      quantity: 12,
      unit: 'block',
      reversible: true,
      risk: 'moderate',
      attributes: new RawJson('{ "mode": "walk", "distance": 12 }'),
    },
    {
      effect_id: 'effect.move.stamina',
      kind: 'actor.stamina',
      operation: 'consume',
      subject_ref: dock(e),
      tags: ['world.travel', 'actor.resource'],
      ownership: 'actor',
      scope: 'actor.self',
      quantity: 1,
      unit: 'point',
      reversible: false,
      risk: 'moderate',
      attributes: new RawJson('{"mode":"walk","distance":12}'),
    },
  ];

  function bound(): { registry: HostRegistry; spec: CapabilitySpec; req: ActionRequest; draftEffects: Effect[]; action: BoundAction } {
    const registry = new HostRegistry(manifest(), c);
    const spec = registry.register(testSpec());
    const req = request(spec);
    const draftEffects = effects();
    const action = registry.sealBinding(
      req,
      { binding_id: 'binding.move.1', resolved_targets: [dock()], effect_preview: draftEffects, valid_until: realtime(15_000) },
      realtime(10_000),
      epoch(),
      7,
    );
    return { registry, spec, req, draftEffects, action };
  }

  it('the derived capability vector: schema digests, the digest payload and the pinned spec digest', () => {
    const v = JSON.parse(shared('derived/capability-spec-digest-vector.json'));
    const spec = testSpec();
    expect({ input: spec.input.sha256, output: spec.output.sha256, effect_schema: spec.effect_schema.sha256 }).toEqual(
      v['schema_sha256_over_canonical_sorted_compact_json'],
    );
    const sealed = sealCapabilitySpec(spec, c);
    expect(sealed.digest).toBe(v['expected_capability_spec_digest']);
    expect(capabilitySpecDigestText(sealed)).toBe(goJsonEncode(v['digest_payload_in_field_order']));
  });

  it('the reference fixture: request and effect digests from its (indented) wire text, and the public request schema', () => {
    const { text, root } = parseWireJson(shared('host/testdata/v2_action_fixture.json'));
    const member = (name: string): WireNode => (root as Extract<WireNode, { kind: 'object' }>).members.find(([k]) => k === name)![1];
    const str = (name: string) => (member(name) as { value: string }).value;
    expect(str('capability_spec_digest')).toBe(SPEC_DIGEST);
    const req = decodeWire<ActionRequest>(text, member('action_request'), ActionRequestShape);
    expect(req.spec_digest).toBe(SPEC_DIGEST);
    expect(actionRequestDigest(req, c)).toBe(str('action_request_digest'));
    const fx = decodeWire<Effect[]>(text, member('effect_preview'), EffectsShape);
    for (const e of fx) validateEffect(e, req.expected_epoch, c);
    // Go's json.Marshal compacts the indented raw attributes before hashing.
    expect(fx[0]!.attributes.text).toMatch(/\s/);
    expect(effectPreviewDigest(fx, c)).toBe(str('effect_digest'));
    const schema = newSchema(shared('api/action-request-v2.schema.json'), c);
    validateAgainstSchema(schema, goJsonEncode(req), c);
    expect(fault(() => validateAgainstSchema(schema, goJsonEncode({ ...req, effect_preview: [] }), c)).field).toBe('instance');
  });

  it('binds and authorizes Host effects with the reference digests', () => {
    const { registry, spec, action } = bound();
    expect(spec.digest).toBe(SPEC_DIGEST);
    expect(registry.snapshot().revision).toBe(1);
    expect([action.request_digest, action.effect_digest]).toEqual([REQUEST_DIGEST, EFFECT_DIGEST]);
    expect(action.normalized_arguments.text).toBe('{"count":2,"target":"dock"}');
    expect(action.effect_preview.map((e) => e.effect_id)).toEqual(['effect.move.position', 'effect.move.stamina']);
    expect(action.effect_preview[0]!.tags).toEqual(['actor.movement', 'world.travel']);
    expect(action.effect_preview[0]!.attributes.text).toBe('{"distance":12,"mode":"walk"}');
    validateBoundAction(action, c);
    registry.authorize(action, realtime(12_000), epoch(), 7, principal);
    registry.validateSpecOutput(spec.capability, spec.digest, '{"state":"reached"}');
    expect(fault(() => registry.validateSpecOutput(spec.capability, spec.digest, '{"state":"lost"}')).field).toBe('output');
  });

  it('a binding does not alias its inputs', () => {
    const { req, draftEffects, action } = bound();
    req.target_refs![0]!.key = 'elsewhere';
    req.expected_epoch.world = 99;
    draftEffects[0]!.tags!.push('world.extra');
    draftEffects[0]!.subject_ref!.key = 'elsewhere';
    expect(action.requested_targets![0]!.key).toBe('dock');
    expect(action.expected_epoch.world).toBe(2);
    expect(action.effect_preview[0]!.tags).toEqual(['actor.movement', 'world.travel']);
    expect(action.effect_preview[0]!.subject_ref!.key).toBe('dock');
  });

  it('refuses a tampered binding even when its digests were recomputed', () => {
    const { registry, action } = bound();
    const forged = structuredClone(action);
    forged.effect_preview = action.effect_preview.map((e, i) => ({ ...e, ownership: i === 0 ? 'unowned' : e.ownership }));
    forged.effect_digest = effectPreviewDigest(forged.effect_preview, c);
    validateBoundAction(forged, c);
    const e = fault(() => registry.authorize(forged, realtime(12_000), epoch(), 7, principal));
    expect([e.field, e.message]).toEqual(['binding_id', 'binding_id: Host binding data was modified']);
    // A later deadline is a change too, and a digest left stale is caught before the registry is asked.
    expect(fault(() => registry.authorize({ ...action, valid_until: realtime(16_000) }, realtime(12_000), epoch(), 7, principal)).message).toMatch(/modified/);
    expect(fault(() => registry.authorize({ ...action, effect_preview: forged.effect_preview }, realtime(12_000), epoch(), 7, principal)).field).toBe(
      'effect_digest',
    );
    const other = new HostRegistry(manifest(), c);
    other.register(testSpec());
    expect(fault(() => other.authorize(action, realtime(12_000), epoch(), 7, principal)).message).toBe('binding_id: was not issued by this Host registry');
  });

  it('authorizes within the observation window and the binding window only, for a principal holding every scope', () => {
    const { registry, spec, action } = bound();
    registry.authorize(action, realtime(12_000), epoch(), 15, principal);
    expect(fault(() => registry.authorize(action, realtime(12_000), epoch(), 16, principal)).field).toBe('observation_sequence');
    expect(fault(() => registry.authorize(action, realtime(12_000), epoch(), 6, principal)).field).toBe('observation_sequence');
    expect(fault(() => registry.authorize(action, realtime(15_000), epoch(), 7, principal)).message).toBe('valid_until: bound action has expired');
    expect(fault(() => registry.authorize(action, { clock: 'step', value: 12_000 }, epoch(), 7, principal)).field).toBe('valid_until.clock');
    expect(fault(() => registry.authorize(action, realtime(12_000), { ...epoch(), timeline: 4 }, 7, principal)).field).toBe('expected_epoch');
    const viewer = fault(() => registry.authorize(action, realtime(12_000), epoch(), 7, { id: 'principal.viewer' }));
    expect(viewer.message).toBe('principal.granted_scopes: principal "principal.viewer" is missing required scope "rin.actor.move"');
    expect(registry.unregister(spec.capability)).toBe(true);
    expect(registry.unregister(spec.capability)).toBe(false);
    expect(fault(() => registry.authorize(action, realtime(12_000), epoch(), 7, principal)).field).toBe('binding_id');
    expect(registry.snapshot()).toEqual({ revision: 2, specs: [] });
  });

  it('refuses invalid requests and effects with the reference fields', () => {
    const registry = new HostRegistry(manifest(), c);
    const spec = registry.register(testSpec());
    const req = request(spec);
    expect(fault(() => registry.validateRequest({ ...req, arguments: new RawJson('{"target":"dock","target":"gate","count":2}') }, epoch(), 7)).field).toBe(
      'arguments',
    );
    expect(fault(() => registry.validateRequest(req, { ...epoch(), world: 3 }, 7)).message).toBe('expected_epoch: request belongs to a stale host epoch');
    registry.validateRequest(req, epoch(), 15);
    expect(fault(() => registry.validateRequest(req, epoch(), 16)).field).toBe('observation_sequence');
    expect(fault(() => registry.validateRequest({ ...req, arguments: new RawJson('{"target":"dock","count":9}') }, epoch(), 7)).field).toBe('arguments');
    expect(fault(() => registry.validateRequest({ ...req, spec_digest: '0'.repeat(64) }, epoch(), 7)).field).toBe('spec_digest');
    const low: Effect = {
      effect_id: 'effect.move',
      kind: 'world.position',
      operation: 'update',
      subject_ref: dock(),
      tags: ['actor.movement'],
      ownership: 'actor',
      scope: 'world.public',
      reversible: false,
      risk: 'low',
      attributes: new RawJson('{"distance":1,"mode":"walk"}'),
    };
    const seal = (id: string, e: Effect) =>
      fault(() =>
        registry.sealBinding(req, { binding_id: id, resolved_targets: [dock()], effect_preview: [e], valid_until: realtime(20) }, realtime(10), epoch(), 7),
      );
    expect(seal('binding.low-risk', low).field).toBe('effect_preview[0].risk');
    expect(seal('binding.invalid-attributes', { ...low, risk: 'moderate', attributes: new RawJson('{"distance":1,"mode":"walk","secret":"x"}') }).field).toBe(
      'effect_preview[0].attributes',
    );
    expect(seal('binding.nested', { ...low, risk: 'moderate', attributes: new RawJson('{"distance":1,"mode":{"unsafe":true}}') }).field).toBe(
      'effect_preview[0].attributes.mode',
    );
    expect(seal('binding.stale-ref', { ...low, risk: 'moderate', subject_ref: dock({ ...epoch(), host: 9 }) }).field).toBe(
      'effect_preview[0].subject_ref.epoch',
    );
    expect(
      fault(() =>
        registry.sealBinding(
          req,
          { binding_id: 'binding.x', effect_preview: [{ ...low, risk: 'moderate' }], valid_until: realtime(20) },
          realtime(10),
          epoch(),
          7,
        ),
      ).field,
    ).toBe('resolved_targets');
  });

  it('keeps one binding per id: identical data again is the same binding, other data is refused', () => {
    const { registry, req, action } = bound();
    const again = registry.sealBinding(
      req,
      { binding_id: 'binding.move.1', resolved_targets: [dock()], effect_preview: effects(), valid_until: realtime(15_000) },
      realtime(10_000),
      epoch(),
      7,
    );
    expect(again).toEqual(action);
    const e = fault(() =>
      registry.sealBinding(
        req,
        { binding_id: 'binding.move.1', resolved_targets: [dock()], effect_preview: effects(), valid_until: realtime(14_000) },
        realtime(10_000),
        epoch(),
        7,
      ),
    );
    expect(e.message).toBe('binding_id: is already bound to different action data');
  });

  it('forgets the bindings of an old epoch of the same world when one is sealed at a new epoch', () => {
    const { registry, spec, action } = bound();
    const next = { ...epoch(), timeline: 4 };
    registry.sealBinding(
      request(spec, next),
      { binding_id: 'binding.move.2', resolved_targets: [dock(next)], effect_preview: effects(next), valid_until: realtime(15_000) },
      realtime(10_000),
      next,
      7,
    );
    expect(fault(() => registry.authorize(action, realtime(12_000), epoch(), 7, principal)).message).toBe('binding_id: was not issued by this Host registry');
  });

  it('registers idempotently, refuses a changed spec at the same version and a durability above the host', () => {
    const registry = new HostRegistry(manifest(), c);
    const first = registry.register(testSpec());
    expect(registry.register(testSpec())).toEqual(first);
    expect(registry.snapshot().revision).toBe(1);
    expect(fault(() => registry.register({ ...testSpec(), description: 'Another description.' })).message).toBe(
      'capability: exact version is already registered with a different capability spec',
    );
    expect(
      fault(() =>
        registry.register({ ...testSpec(), capability: { id: 'rin.navigation.move-to', version: '2.1.0' }, required_durability: 'idempotent-action' }),
      ).message,
    ).toBe('required_durability: exceeds host durability advisory');
    registry.register({ ...testSpec(), capability: { id: 'rin.navigation.move-to', version: '10.0.0' } });
    registry.register({ ...testSpec(), capability: { id: 'rin.a.first', version: '1.0.0' } });
    const snap = registry.snapshot();
    expect(snap.revision).toBe(3);
    // Byte order: "10.0.0" sorts before "2.0.0".
    expect(snap.specs.map((s) => `${s.capability.id}@${s.capability.version}`)).toEqual([
      'rin.a.first@1.0.0',
      'rin.navigation.move-to@10.0.0',
      'rin.navigation.move-to@2.0.0',
    ]);
  });

  it('returns defensive copies: a caller cannot reach the registry state', () => {
    const m = manifest();
    const registry = new HostRegistry(m, c);
    m.durability.profile = 'transactional-action';
    expect(registry.manifest.durability.profile).toBe('advisory');
    const sealed = registry.register(testSpec());
    sealed.required_scopes![0] = 'rin.elevated';
    sealed.input.sha256 = '0'.repeat(64);
    registry.snapshot().specs[0]!.required_scopes!.push('rin.more');
    const resolved = registry.resolve(sealed.capability)!;
    expect(resolved.required_scopes).toEqual(['rin.actor.move']);
    expect(resolved.input.sha256).not.toBe('0'.repeat(64));
    expect(resolved.digest).toBe(SPEC_DIGEST);
  });

  it('refuses an invalid manifest at construction', () => {
    expect(fault(() => new HostRegistry({ ...manifest(), durability: { ...manifest().durability, profile: 'transactional-action' } }, c)).field).toBe(
      'durability',
    );
  });
});
