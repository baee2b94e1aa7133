/**
 * The rin.host/v2 reference vectors (../shared/conformance/rin-reference/, ten files `rin-<kind>-vectors/1`,
 * described in that folder's README) against one crypto backend: the test suite and `aigenora
 * conformance` both run them through here. A case matches when our accept/reject equals the
 * reference's, accepted cases give the same digest / canonical bytes, and a rejection the reference
 * made at stage `validate` names the same field (any rejection matches a `decode`-stage one).
 */
import type { Crypto } from '../crypto/backend.js';
import { goJsonEncode } from '../crypto/gojson.js';
import {
  actionRequestDigest,
  actionRequestDigestText,
  canonicalizeJsonObject,
  capabilitySpecDigestText,
  sealCapabilitySpec,
  validateCapabilitySpec,
} from '../rin/digest.js';
import { effectPreviewDigest, effectPreviewText, normalizeEffectsWith } from '../rin/effects.js';
import { RinError } from '../rin/errors.js';
import { HostRegistry, MAX_OBSERVATION_GAP } from '../rin/registry.js';
import { canTransitionActionRun } from '../rin/run.js';
import { compileSchema, newSchema } from '../rin/schema.js';
import type { BindingDraft, CapabilitySpec, DurabilityProfile, Epoch, HostManifest, HostRef, Principal, Timepoint } from '../rin/types.js';
import { MAX_INSTANCE_BYTES, validateDurability, validateHostManifest } from '../rin/validate.js';
import {
  decodeActionRequest,
  decodeCapabilitySpec,
  decodeDurability,
  decodeEffects,
  decodeHostManifest,
  decodeWireText,
  EpochShape,
  HostRefShape,
  PrincipalShape,
  TimepointShape,
  type Shape,
} from '../rin/wire.js';
import type { Suite } from './formats.js';
import { eq, vectorSuite, type Vec } from './mp-vectors.js';

export const RIN_KINDS = [
  'capability-digest',
  'capability-validation',
  'action-request-digest',
  'action-request-validation',
  'effect-digest',
  'schema-canonicalization',
  'manifest-validation',
  'durability-validation',
  'epoch-fencing',
  'action-run-transition',
] as const;
export type RinKind = (typeof RIN_KINDS)[number];

export const rinFormat = (kind: RinKind) => `rin-${kind}-vectors/1`;

/** The kind of a format string, if it is one of the ten. */
export function rinKind(format: unknown): RinKind | undefined {
  return RIN_KINDS.find((k) => rinFormat(k) === format);
}

/** What an accepted case produced, compared member by member with the vector's `expect`. */
type Produced = Partial<Record<'digest' | 'sha256' | 'canonical' | 'normalized_arguments', string>> & { required_scopes?: string[] };

function judge(id: string, expect: Vec, run: () => Produced): void {
  let produced: Produced;
  try {
    produced = run();
  } catch (e) {
    if (!(e instanceof RinError)) throw e;
    if (expect['ok'] !== false) throw new Error(`${id}: rejected (${e.message}), the reference accepted`);
    const want = expect['error'] as Vec | undefined;
    if (want?.['stage'] === 'validate' && e.field !== want['field']) {
      throw new Error(`${id}: rejected at field ${String(e.field)} (${e.message}), the reference at ${String(want['field'])}`);
    }
    return;
  }
  if (expect['ok'] !== true) throw new Error(`${id}: accepted, the reference rejected (${JSON.stringify(expect['error'])})`);
  for (const k of ['digest', 'sha256', 'canonical', 'normalized_arguments', 'required_scopes'] as const) {
    if (k in expect) eq(produced[k] ?? (k === 'required_scopes' ? [] : undefined), expect[k], `${id} ${k}`);
  }
}

/** An input the vector gives as a JSON object (not as wire text), decoded as strictly as wire text. */
function strict<T>(value: unknown, shape: Shape): T {
  return decodeWireText<T>(goJsonEncode(value), shape);
}

const text = (v: Vec, k: string): string => {
  const t = v[k];
  if (typeof t !== 'string') throw new Error(`${String(v['id'])}: ${k} is not a string`);
  return t;
};

function sealed(spec: CapabilitySpec): Produced {
  return { digest: spec.digest, canonical: capabilitySpecDigestText(spec), required_scopes: spec.required_scopes ?? [] };
}

/** The register case's host: the shared manifest with its durability set minimally for the profile. */
function manifestWith(base: HostManifest, profile: DurabilityProfile): HostManifest {
  const durable = profile !== 'advisory';
  return {
    ...base,
    durability: {
      profile,
      stable_identity: durable,
      durable_before_network: durable,
      durable_outbox: durable,
      idempotent_apply: profile === 'idempotent-action',
      atomic_apply_and_outbox: profile === 'transactional-action',
    },
  };
}

function capabilityCase(doc: Vec) {
  return (c: Crypto, v: Vec) => {
    const id = String(v['id']);
    judge(id, v['expect'], () => {
      const spec = decodeCapabilitySpec(text(v, 'spec_json'));
      switch (v['op']) {
        case 'seal':
          return sealed(sealCapabilitySpec(spec, c));
        case 'validate':
          validateCapabilitySpec(spec, c);
          return sealed(spec);
        case 'register': {
          const base = decodeHostManifest(text(doc['shared'], 'register_host_manifest_json'));
          const registry = new HostRegistry(manifestWith(base, v['host_durability']), c);
          return sealed(registry.register(spec));
        }
        default:
          throw new Error(`${id}: unknown op ${String(v['op'])}`);
      }
    });
  };
}

function requestCase(c: Crypto, v: Vec): void {
  judge(String(v['id']), v['expect'], () => {
    const req = decodeActionRequest(text(v, 'request_json'));
    return {
      digest: actionRequestDigest(req, c),
      canonical: actionRequestDigestText(req, c),
      normalized_arguments: canonicalizeJsonObject('arguments', req.arguments, MAX_INSTANCE_BYTES, c),
    };
  });
}

function effectCase(doc: Vec) {
  const schemaText = text(doc['shared'], 'effect_schema_document');
  return (c: Crypto, v: Vec) => {
    const schema = compileSchema(newSchema(schemaText, c), c);
    judge(String(v['id']), v['expect'], () => {
      const epoch = strict<Epoch>(v['epoch'], EpochShape);
      const effects = normalizeEffectsWith(decodeEffects(text(v, 'effects_json')), epoch, v['max_effects'], v['risk_floor'], schema, c);
      return { digest: effectPreviewDigest(effects, c), canonical: effectPreviewText(effects) };
    });
  };
}

function schemaCase(c: Crypto, v: Vec): void {
  judge(String(v['id']), v['expect'], () => {
    const s = newSchema(text(v, 'document'), c);
    return { sha256: s.sha256, canonical: s.document.text };
  });
}

const CurrentShape = { fields: { epoch: EpochShape, observation_sequence: 'u64', 'now?': { ptr: TimepointShape } } } as const;
const DraftShape = { fields: { binding_id: 'string', 'resolved_targets?': { list: HostRefShape }, valid_until: TimepointShape } } as const;
const AuthorizeShape = { fields: { now: TimepointShape, epoch: EpochShape, observation_sequence: 'u64', principal: PrincipalShape } } as const;

function fencingCase(doc: Vec) {
  const shared = doc['shared'] as Vec;
  if (shared['max_observation_gap'] !== MAX_OBSERVATION_GAP)
    throw new Error(`the vectors' observation gap is ${String(shared['max_observation_gap'])}, ours ${MAX_OBSERVATION_GAP}`);
  return (c: Crypto, v: Vec) => {
    const registry = new HostRegistry(decodeHostManifest(text(shared, 'host_manifest_json')), c);
    registry.register(decodeCapabilitySpec(text(shared, 'capability_spec_json')));
    const current = strict<{ epoch: Epoch; observation_sequence: number; now?: Timepoint }>(v['current'], CurrentShape);
    judge(String(v['id']), v['expect'], () => {
      const req = decodeActionRequest(text(v, 'request_json'));
      if (v['phase'] === 'validate_request') {
        registry.validateRequest(req, current.epoch, current.observation_sequence);
        return {};
      }
      const d = strict<{ binding_id: string; resolved_targets?: HostRef[]; valid_until: Timepoint }>(v['draft'], DraftShape);
      const draft: BindingDraft = { ...d, effect_preview: decodeEffects(text(shared, 'draft_effects_json')) };
      if (!current.now) throw new Error(`${String(v['id'])}: no current.now to bind at`);
      if (v['phase'] === 'seal_binding') {
        registry.sealBinding(req, draft, current.now, current.epoch, current.observation_sequence);
        return {};
      }
      if (v['phase'] !== 'authorize_bound_action') throw new Error(`${String(v['id'])}: unknown phase ${String(v['phase'])}`);
      let bound;
      try {
        bound = registry.sealBinding(req, draft, current.now, current.epoch, current.observation_sequence);
      } catch (e) {
        throw new Error(`${String(v['id'])}: sealing failed, which the vectors say always succeeds: ${(e as Error).message}`);
      }
      const a = strict<{ now: Timepoint; epoch: Epoch; observation_sequence: number; principal: Principal }>(v['authorize'], AuthorizeShape);
      registry.authorize(bound, a.now, a.epoch, a.observation_sequence, a.principal);
      return {};
    });
  };
}

function checker(kind: RinKind, doc: Vec): (c: Crypto, v: Vec) => void {
  switch (kind) {
    case 'capability-digest':
    case 'capability-validation':
      return capabilityCase(doc);
    case 'action-request-digest':
    case 'action-request-validation':
      return requestCase;
    case 'effect-digest':
      return effectCase(doc);
    case 'schema-canonicalization':
      return schemaCase;
    case 'manifest-validation':
      return (_c, v) => judge(String(v['id']), v['expect'], () => (validateHostManifest(decodeHostManifest(text(v, 'manifest_json'))), {}));
    case 'durability-validation':
      return (_c, v) => judge(String(v['id']), v['expect'], () => (validateDurability(decodeDurability(text(v, 'durability_json'))), {}));
    case 'epoch-fencing':
      return fencingCase(doc);
    case 'action-run-transition':
      return (_c, v) => eq(canTransitionActionRun(v['from'], v['to']), v['expect']['ok'], `${String(v['id'])} ${String(v['from'])} → ${String(v['to'])}`);
  }
}

/** One of the ten rin vector files (its text) as a suite. */
export function rinSuite(text: string): Suite {
  const doc = JSON.parse(text) as Vec;
  const kind = rinKind(doc['format']);
  if (!kind || !Array.isArray(doc['cases'])) throw new Error('not a rin vector file');
  return vectorSuite(rinFormat(kind), doc['cases'] as Vec[], checker(kind, doc));
}
