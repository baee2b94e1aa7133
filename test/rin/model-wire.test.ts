// Strict wire decoding, the scalar validators, schemas, observations and execution results of the rin
// model: what the reference vectors do not cover (its host/manifest_test.go, schema_test.go,
// json_integer_test.go and the observation test of action_test.go, ported), on both backends.
import { describe, expect, it } from 'vitest';
import { goJsonEncode, RawJson } from '../../ts/crypto/gojson.js';
import { getCrypto } from '../../ts/crypto/index.js';
import {
  canonicalizeSchema,
  canTransitionActionRun,
  compileSchema,
  decodeActionRequest,
  decodeEffects,
  decodeHostManifest,
  decodeWireText,
  isMonotonicRunUpdate,
  newSchema,
  validateActionOutcome,
  validateActionRequest,
  validateActionRun,
  validateAgainstSchema,
  validateCapabilityRef,
  validateEpoch,
  validateHostManifest,
  validateObservationEnvelope,
  validateObservationPayload,
  validateObservationQuery,
  validateSchema,
  validateText,
  type ActionOutcome,
  type ActionRun,
  type ObservationEnvelope,
  type ObservationQuery,
} from '../../ts/rin/index.js';
import { epoch, fault, manifest } from './model-fixtures.js';

const DIALECT = 'https://json-schema.org/draft/2020-12/schema';
const UNSAFE = 2 ** 53; // 2^53−1 + 1

const REQUEST = {
  request_id: 'request.move.1',
  controller_id: 'controller.external.1',
  actor_id: 'actor.guide',
  capability: { id: 'rin.navigation.move-to', version: '2.0.0' },
  spec_digest: 'a'.repeat(64),
  arguments: { target: 'dock', count: 2 },
  expected_epoch: epoch(),
  observation_sequence: 7,
  idempotency_key: 'request.move.1',
};
const requestText = (patch: Record<string, unknown> = {}) => JSON.stringify({ ...REQUEST, ...patch });

describe('strict wire decoding', () => {
  it('keeps the raw text of arguments and drops omitempty members that are empty, as Go re-encodes them', () => {
    const text = requestText({ arguments: { b: 1.0, a: '<x>' }, target_refs: [], task_id: '', plan_step_ref: null }).replace('"b":1', '"b" : 1.0');
    const req = decodeActionRequest(text);
    expect(req.arguments).toBeInstanceOf(RawJson);
    expect(req.arguments.text).toBe('{"b" : 1.0,"a":"<x>"}');
    expect(
      Object.entries(req)
        .filter(([, v]) => v !== undefined)
        .map(([k]) => k),
    ).toEqual([
      'request_id',
      'controller_id',
      'actor_id',
      'capability',
      'spec_digest',
      'arguments',
      'expected_epoch',
      'observation_sequence',
      'idempotency_key',
    ]);
    expect(goJsonEncode(req)).toBe(JSON.stringify({ ...REQUEST, arguments: '@' }).replace('"@"', '{"b" : 1.0,"a":"<x>"}'));
  });

  it('refuses unknown members, matched exactly (no case folding), at decode stage', () => {
    for (const text of [requestText({ effect_preview: [] }), requestText().replace('"request_id"', '"Request_ID"')]) {
      const e = fault(() => decodeActionRequest(text));
      expect([e.code, e.stage]).toEqual(['invalid', 'decode']);
    }
  });

  it('refuses integers Go cannot decode into the member type: 7.0, 1e1, -1, a string, 2^64, and 2^32 for uint32', () => {
    for (const bad of ['7.0', '1e1', '-1', '-0', '"7"', '18446744073709551616', 'true']) {
      const e = fault(() => decodeActionRequest(requestText().replace('"observation_sequence":7', `"observation_sequence":${bad}`)));
      expect([e.stage, e.field]).toEqual(['decode', 'observation_sequence']);
    }
    expect(fault(() => decodeActionRequest(requestText().replace('"world":2', '"world":-2'))).field).toBe('expected_epoch.world');
    // A signed member (Timepoint.value) takes -0 and a negative value, for the validator to refuse.
    expect(decodeWireText<{ value: number }>('{"clock":"step","value":-0}', { fields: { clock: 'string', value: 'i64' } }).value).toBe(0);
    const manifest = JSON.stringify({ max_concurrent_actors: 4294967296 });
    expect(fault(() => decodeHostManifest(manifest)).stage).toBe('decode');
  });

  it('decodes 2^53 so the validator refuses it with the reference field, and the largest uint64', () => {
    const req = decodeActionRequest(requestText().replace('"observation_sequence":7', '"observation_sequence":18446744073709551615'));
    expect(fault(() => validateActionRequest(req)).field).toBe('observation_sequence');
    const e = decodeActionRequest(requestText({ expected_epoch: { ...epoch(), host: UNSAFE } }));
    expect(fault(() => validateActionRequest(e)).message).toBe('expected_epoch: host, world, and timeline generations must be positive JSON-safe integers');
  });

  it('decodes absent members and null to Go zero values, so the validator names the missing field', () => {
    const { request_id: _omit, ...rest } = REQUEST;
    expect(fault(() => validateActionRequest(decodeActionRequest(JSON.stringify(rest)))).field).toBe('request_id');
    expect(fault(() => validateActionRequest(decodeActionRequest(requestText({ controller_id: null })))).field).toBe('controller_id');
    expect(fault(() => validateActionRequest(decodeActionRequest(requestText({ arguments: undefined })))).message).toBe(
      'arguments: must be a bounded JSON object',
    );
    expect(decodeActionRequest(requestText({ arguments: null })).arguments.text).toBe('null');
  });

  it('reports a duplicate or a lone surrogate inside a raw document under its field, elsewhere at decode stage', () => {
    const dup = requestText().replace('"target":"dock"', '"target":"dock","t\\u0061rget":"gate"');
    expect([fault(() => decodeActionRequest(dup)).stage, fault(() => decodeActionRequest(dup)).field]).toEqual(['validate', 'arguments']);
    const lone = requestText().replace('"target":"dock"', '"target":"\\ud800"');
    expect(fault(() => decodeActionRequest(lone)).field).toBe('arguments');
    const effects = `[${JSON.stringify({ effect_id: 'e', attributes: { a: 1 } }).replace('"a":1', '"a":1,"a":2')}]`;
    expect(fault(() => decodeEffects(effects)).field).toBe('effect_preview[0].attributes');
    expect(fault(() => decodeActionRequest(requestText().replace('"actor_id":"actor.guide"', '"actor_id":"actor.guide","actor_id":"x"'))).stage).toBe('decode');
    expect(fault(() => decodeActionRequest('{"request_id":"a"} {}')).stage).toBe('decode');
    expect(fault(() => decodeActionRequest(requestText().replace('"count":2', '"count":'))).stage).toBe('decode');
    expect(fault(() => decodeActionRequest(new Uint8Array([0x7b, 0xff, 0x7d]))).stage).toBe('decode');
  });

  it('decodes a control-plane body with a shape written in place', () => {
    const Poll = { fields: { host_id: 'string', lease_id: 'string', limit: 'u32', wait_millis: 'i64', 'cursor?': 'string' } } as const;
    expect(decodeWireText(JSON.stringify({ host_id: 'h', lease_id: 'l', limit: 8, wait_millis: 0, cursor: '' }), Poll)).toEqual({
      host_id: 'h',
      lease_id: 'l',
      limit: 8,
      wait_millis: 0,
    });
    expect(fault(() => decodeWireText('[]', Poll)).stage).toBe('decode');
    expect(fault(() => decodeWireText('{"host_id":1}', Poll)).field).toBe('host_id');
  });
});

describe('scalar rules', () => {
  it('accepts exact SemVer only (host/manifest_test.go)', () => {
    for (const v of ['1', '1.0', '01.0.0', '1.0.0-01', '1.0.0-alpha..1', '1.0.0+build..1', 'v1.0.0']) {
      expect(fault(() => validateCapabilityRef({ id: 'rin.test.capability', version: v }, 'capability')).field).toBe('capability.version');
    }
    for (const v of ['0.0.0', '1.2.3', '1.2.3-alpha.1', '1.2.3-alpha+build.01', '1.0.0-0abc', `1.0.0-0${'9'.repeat(20)}`]) {
      validateCapabilityRef({ id: 'rin.test.capability', version: v }, 'capability');
    }
  });

  it('caps identifiers at 96 bytes and requires a dot where namespaced', () => {
    validateCapabilityRef({ id: `a.${'b'.repeat(94)}`, version: '1.0.0' }, 'capability');
    expect(fault(() => validateCapabilityRef({ id: `a.${'b'.repeat(95)}`, version: '1.0.0' }, 'capability')).field).toBe('capability.id');
    expect(fault(() => validateCapabilityRef({ id: 'rin', version: '1.0.0' }, 'capability')).message).toBe('capability.id: must be namespaced');
  });

  it('counts text in code points, trims Go whitespace for required text, and refuses NUL', () => {
    validateText('t', '𝄞'.repeat(500), 500, true);
    expect(fault(() => validateText('t', '𝄞'.repeat(501), 500, true)).message).toBe('t: must contain at most 500 characters');
    expect(fault(() => validateText('t', ' \u0085\u3000\t', 10, true)).message).toBe('t: is required');
    validateText('t', '\ufeff', 10, true); // not space to Go
    expect(fault(() => validateText('t', 'a\u0000', 10, false)).message).toBe('t: must be valid UTF-8 without NUL');
  });

  it('refuses 2^53 sequences and generations (host/json_integer_test.go)', () => {
    expect(fault(() => validateEpoch({ ...epoch(), host: UNSAFE }, 'epoch')).field).toBe('epoch');
    const run: ActionRun = { operation_id: 'operation.test', status: 'running', progress_seq: UNSAFE, progress: 0, updated_at: { clock: 'step', value: 1 } };
    expect(fault(() => validateActionRun(run)).field).toBe('progress_seq');
    expect(fault(() => validateActionRun({ ...run, progress_seq: 0 })).field).toBe('progress_seq');
    const outcome: ActionOutcome = {
      operation_id: 'operation.test',
      status: 'succeeded',
      summary: 'Done.',
      epoch: epoch(),
      world_seq: UNSAFE,
      occurred_at: { clock: 'step', value: 1 },
    };
    expect(fault(() => validateActionOutcome(outcome)).field).toBe('world_seq');
  });
});

describe('manifests, runs and outcomes (host/manifest_test.go)', () => {
  it('refuses inflated durability and a client-advisory host claiming durable mutation', () => {
    validateHostManifest(manifest());
    expect(fault(() => validateHostManifest({ ...manifest(), durability: { ...manifest().durability, profile: 'transactional-action' } })).field).toBe(
      'durability',
    );
    const client = {
      ...manifest(),
      authority: 'client-advisory' as const,
      durability: {
        profile: 'idempotent-action' as const,
        stable_identity: true,
        durable_before_network: true,
        durable_outbox: true,
        idempotent_apply: true,
        atomic_apply_and_outbox: false,
      },
    };
    expect(fault(() => validateHostManifest(client)).field).toBe('durability.profile');
  });

  it('allows exactly the 16 legal run transitions', () => {
    const all = ['queued', 'running', 'succeeded', 'failed', 'cancelled', 'interrupted', 'stale', 'outcome-unknown'];
    const legal = all.flatMap((f) => all.filter((t) => canTransitionActionRun(f, t)).map((t) => `${f}>${t}`));
    expect(legal).toHaveLength(16);
    expect(legal).toContain('outcome-unknown>succeeded');
    expect(canTransitionActionRun('succeeded', 'running')).toBe(false);
    expect(canTransitionActionRun('constructor', 'running')).toBe(false);
  });

  it('validates runs and outcomes, and orders progress updates monotonically', () => {
    const run: ActionRun = {
      operation_id: 'operation.move.1',
      status: 'succeeded',
      progress_seq: 3,
      progress: 100,
      updated_at: { clock: 'realtime', value: 12_000 },
    };
    validateActionRun(run);
    expect(fault(() => validateActionRun({ ...run, progress: 99 })).message).toBe('progress: succeeded action must have 100 progress');
    expect(fault(() => validateActionRun({ ...run, status: 'queued', progress: 1 })).message).toBe('progress: queued action must have zero progress');
    expect(fault(() => validateActionRun({ ...run, progress: 101 })).field).toBe('progress');
    validateActionOutcome({
      operation_id: 'operation.move.1',
      status: 'outcome-unknown',
      code: 'host.outcome_unknown',
      summary: 'The Host cannot prove whether the effect completed.',
      epoch: epoch(),
      world_seq: 7,
      occurred_at: { clock: 'step', value: 8 },
    });
    const ok: ActionOutcome = {
      operation_id: 'operation.move.1',
      status: 'succeeded',
      summary: 'Done.',
      epoch: epoch(),
      world_seq: 7,
      occurred_at: { clock: 'step', value: 8 },
    };
    expect(fault(() => validateActionOutcome({ ...ok, code: 'host.x' })).field).toBe('code');
    expect(fault(() => validateActionOutcome({ ...ok, status: 'failed' })).field).toBe('code');
    expect(fault(() => validateActionOutcome({ ...ok, status: 'running' })).field).toBe('status');
    const evidence = [{ namespace: 'test.world', type: 'location', key: 'dock', ephemeral: false, epoch: { ...epoch(), world: 9 } }];
    expect(fault(() => validateActionOutcome({ ...ok, evidence })).field).toBe('evidence[0].epoch');

    const r1: ActionRun = { operation_id: 'op', status: 'running', progress_seq: 1, progress: 10, updated_at: { clock: 'step', value: 5 } };
    expect(isMonotonicRunUpdate(r1, { ...r1 })).toBe(true);
    expect(isMonotonicRunUpdate(r1, { ...r1, progress: 20 })).toBe(false);
    expect(isMonotonicRunUpdate(r1, { ...r1, progress_seq: 2, progress: 20 })).toBe(true);
    expect(isMonotonicRunUpdate(r1, { ...r1, progress_seq: 2, progress: 5 })).toBe(false);
    expect(isMonotonicRunUpdate(r1, { ...r1, progress_seq: 2, status: 'queued' })).toBe(false);
    expect(isMonotonicRunUpdate(r1, { ...r1, progress_seq: 2, updated_at: { clock: 'realtime', value: 6 } })).toBe(false);
  });
});

describe.each(['wasm', 'js'])('schemas and observations, %s backend', (backend) => {
  const c = getCrypto(backend);
  const closed = (extra = '') =>
    `{"$schema":"${DIALECT}","type":"object","properties":{"target":{"type":"string","minLength":1}},"required":["target"],"additionalProperties":false${extra}}`;

  it('canonicalizes independently of formatting and validates instances strictly (host/schema_test.go)', () => {
    const first = newSchema(
      `{\n  "required": ["target"],\n  "type": "object",\n ${closed().slice(1)}`.replace(',"required":["target"]', '').replace(',"type":"object"', ''),
      c,
    );
    const second = newSchema(
      `{"$schema":"${DIALECT}","additionalProperties":false,"properties":{"target":{"minLength":1,"type":"string"}},"required":["target"],"type":"object"}`,
      c,
    );
    expect(first).toEqual(second);
    expect(first.document.text).toBe(second.document.text);
    validateAgainstSchema(first, '{"target":"dock"}', c);
    for (const bad of ['{"target":""}', '{"target":"dock","hidden":true}', '{"target":"dock","target":"harbor"}', '[]', '']) {
      expect(fault(() => validateAgainstSchema(first, bad, c)).field).toBe('instance');
    }
    const tampered = { ...first, document: new RawJson(first.document.text.replace('"minLength":1', '"minLength":2')) };
    expect(fault(() => validateSchema(tampered, c)).field).toBe('schema.sha256');
    const pretty = { ...first, document: new RawJson(JSON.stringify(JSON.parse(first.document.text), null, 1)) };
    expect(fault(() => validateSchema(pretty, c)).message).toBe('schema.document: must be canonical; construct it with NewSchema');
    expect(fault(() => validateSchema({ ...first, dialect: `${DIALECT}#` }, c)).field).toBe('schema.dialect');
  });

  it('refuses ambiguous, open, foreign-dialect and remote documents', () => {
    expect(fault(() => newSchema(`{"$schema":"${DIALECT}","type":"object","type":"object","additionalProperties":false}`, c)).field).toBe('schema.document');
    expect(fault(() => newSchema(`{"$schema":"${DIALECT}","type":"object"}`, c)).field).toBe('schema.document.additionalProperties');
    expect(fault(() => newSchema('{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","additionalProperties":false}', c)).field).toBe(
      'schema.document.$schema',
    );
    const remote = fault(() => newSchema(closed().replace('{"type":"string","minLength":1}', '{"$ref":"https://example.com/x.json"}'), c));
    expect([remote.field, remote.message.startsWith('schema.document: does not compile:')]).toEqual(['schema.document', true]);
    // An internal reference resolves under the urn: base; an unknown keyword is kept, a format is only an annotation.
    const local = newSchema(
      closed(',"$defs":{"id":{"type":"string","format":"uuid"}},"x-note":1').replace('{"type":"string","minLength":1}', '{"$ref":"#/$defs/id"}'),
      c,
    );
    expect(local.document.text).toContain('"x-note":1');
    validateAgainstSchema(local, '{"target":"not-a-uuid"}', c);
    expect(fault(() => validateAgainstSchema(local, '{"target":7}', c)).field).toBe('instance');
    expect(canonicalizeSchema(closed(), c)).toBe(newSchema(closed(), c).document.text);
    // Documents compile apart: the same $id with other content is another schema, and one document's
    // $id is not reachable from another.
    const withId = (minimum: number) => newSchema(closed(`,"$id":"https://example.com/shared.json","minProperties":${minimum}`), c);
    validateAgainstSchema(withId(1), '{"target":"dock"}', c);
    expect(fault(() => validateAgainstSchema(withId(2), '{"target":"dock"}', c)).field).toBe('instance');
    expect(fault(() => newSchema(closed().replace('{"type":"string","minLength":1}', '{"$ref":"https://example.com/shared.json"}'), c)).field).toBe(
      'schema.document',
    );
    // An instance nested as deep as the parser allows is checked, not a stack overflow.
    const open = newSchema(`{"$schema":"${DIALECT}","type":"object","properties":{"a":{}},"additionalProperties":false}`, c);
    validateAgainstSchema(open, `{"a":${'['.repeat(9990)}${']'.repeat(9990)}}`, c);
    // A member named __proto__ never becomes a prototype. ajv cannot match it against a declared
    // property, so such an instance is refused (closed), where the reference would accept it.
    const proto = newSchema(`{"$schema":"${DIALECT}","type":"object","properties":{"__proto__":{"type":"integer"}},"additionalProperties":false}`, c);
    expect(compileSchema(proto, c).sha256).toBe(proto.sha256);
    expect(fault(() => validateAgainstSchema(proto, '{"__proto__":1}', c)).field).toBe('instance');
    expect(({} as Record<string, unknown>)['type']).toBeUndefined();
  });

  it('bounds and schema-checks observations (the observation test of host/action_test.go)', () => {
    const schema = newSchema(
      `{"$schema":"${DIALECT}","type":"object","properties":{"activity":{"type":"string"}},"required":["activity"],"additionalProperties":false}`,
      c,
    );
    const actor = { namespace: 'test.world', type: 'actor', key: 'guide', ephemeral: false, epoch: epoch() };
    const o: ObservationEnvelope = {
      observation_id: 'observation.7',
      host_id: 'host.test',
      world_id: 'world.test',
      actor_id: 'actor.guide',
      epoch: epoch(),
      sequence: 7,
      observed_at: { clock: 'step', value: 7 },
      schema_ref: { id: 'rin.observation.actor', version: '2.0.0', sha256: schema.sha256 },
      payload: new RawJson('{"activity":"walking"}'),
      facts: [{ fact_id: 'fact.activity', kind: 'actor.activity', subject: actor, tags: ['actor.visible'], value: new RawJson('"walking"') }],
      resources: [
        {
          ref: actor,
          kind: 'actor.status',
          tags: ['actor.visible'],
          ownership: 'actor',
          scope: 'actor.self',
          quantity: 1,
          unit: 'actor',
          attributes: new RawJson('{"healthy":true}'),
        },
      ],
      artifacts: [{ artifact_id: 'artifact.view.7', kind: 'world.image', media_type: 'image/png', size_bytes: 128, sha256: 'a'.repeat(64) }],
      continuation_token: 'page.2',
    };
    validateObservationPayload(o, schema, c);
    const q: ObservationQuery = {
      query_id: 'query.actor.7',
      host_id: 'host.test',
      world_id: 'world.test',
      actor_id: 'actor.guide',
      expected_epoch: epoch(),
      after_sequence: 6,
      kinds: ['actor.status', 'world.visible'],
      limit: 64,
    };
    validateObservationQuery(q);
    expect(fault(() => validateObservationQuery({ ...q, kinds: ['world.visible', 'actor.status'] })).field).toBe('kinds');
    expect(fault(() => validateObservationQuery({ ...q, world_id: 'world.other' })).field).toBe('world_id');
    expect(fault(() => validateObservationPayload({ ...o, payload: new RawJson('{"activity":7}') }, schema, c)).field).toBe('payload.instance');
    expect(fault(() => validateObservationPayload({ ...o, schema_ref: { ...o.schema_ref, sha256: 'b'.repeat(64) } }, schema, c)).field).toBe(
      'schema_ref.sha256',
    );
    expect(fault(() => validateObservationEnvelope({ ...o, facts: [o.facts![0]!, o.facts![0]!] })).field).toBe('facts');
    expect(
      fault(() => validateObservationEnvelope({ ...o, resources: [{ ...o.resources![0]!, ref: { ...actor, epoch: { ...epoch(), world: 3 } } }] })).field,
    ).toBe('resources[0].ref.epoch');
    expect(fault(() => validateObservationEnvelope({ ...o, facts: [{ ...o.facts![0]!, value: new RawJson('{"a":1}') }] })).field).toBe('facts[0].value');
    expect(fault(() => validateObservationEnvelope({ ...o, artifacts: [{ ...o.artifacts![0]!, media_type: 'image/png; q=1' }] })).field).toBe(
      'artifacts[0].media_type',
    );
    expect(fault(() => validateObservationEnvelope({ ...o, payload: new RawJson('[]') })).field).toBe('payload');
    const big = new RawJson(`{"activity":"${'x'.repeat(256 * 1024 - 20)}"}`);
    // Each part within its own bound (a fact value of 1024 three-byte characters is 3074 bytes), the whole over 1 MiB.
    const facts = Array.from({ length: 256 }, (_, i) => ({ fact_id: `fact.${i}`, kind: 'actor.note', value: new RawJson(`"${'\u20ac'.repeat(1024)}"`) }));
    validateObservationEnvelope({ ...o, payload: big });
    validateObservationEnvelope({ ...o, facts });
    expect(fault(() => validateObservationEnvelope({ ...o, payload: big, facts })).message).toBe('observation: must contain at most 1048576 bytes');
  });
});
