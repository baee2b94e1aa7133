/**
 * Strict decoding of wire JSON into the rin types, with Go's `encoding/json` semantics where they are
 * observable (the reference validates what Go decoded) and without its leniencies:
 *
 *  - the text must be strict JSON (R1–R2: UTF-8, one value, no duplicate names, paired surrogates);
 *  - an unknown member is refused (R3), matched exactly (Go's case-insensitive matching is not copied);
 *  - a member of the wrong JSON type, a negative / fractional (`7.0`) / exponent integer, or one beyond
 *    its Go type (uint64, uint32, int64) is refused. Integers up to 2^64−1 decode (as numbers) so that
 *    the validators, not the decoder, refuse 2^53 with the reference's field;
 *  - an absent member, or `null`, decodes to Go's zero value ("" / 0 / false / [] / zero object), so a
 *    missing required member is reported by the validator with its field, as the reference does;
 *  - members marked omitempty (`name?` below) are dropped when zero, so `goJsonEncode` of a decoded
 *    value is what Go's `json.Marshal` writes for it;
 *  - raw sub-documents keep their exact text (`RawJson`); `null` stays the text `null` and an absent
 *    one is the empty text. A duplicate name or a lone surrogate escape inside a raw sub-document is
 *    reported as the reference's validator reports it: stage validate, with the raw document's field
 *    (`arguments`, `effect_preview[1].attributes`, `input.schema.document`); a syntax fault anywhere
 *    is a decode fault, as it is to Go's decoder.
 *
 * Every failure is a RinError with code `invalid`: stage `decode` with the Go field path where there
 * is one, or stage `validate` for the raw-document case above.
 *
 * ## Shapes (the small DSL `decodeWire` takes)
 *
 *     'string' | 'bool'              a JSON string / boolean
 *     'u64' | 'u32' | 'i64'          an integer literal within that Go type's range
 *     'raw' | { raw: 'schema.document' }
 *                                    any JSON value, kept as text; the object form names the field a
 *                                    fault inside it is reported under (default: the member's name)
 *     { list: Shape }                an array
 *     { ptr: Shape }                 optional: absent or null → undefined (Go pointer)
 *     { fields: { name: Shape, 'name?': Shape, … } }
 *                                    an object with exactly these members, built in this order;
 *                                    `name?` = omitempty (dropped when "" / 0 / false / empty list / empty raw)
 *
 * For example a control-plane body:
 *
 *     const Poll = { fields: { host_id: 'string', lease_id: 'string', limit: 'u32', wait_millis: 'i64' } } as const;
 *     const body = decodeWireText<PollRequest>(text, Poll);
 */
import { GoJsonError, parseWireJson, RawJson, type WireNode } from '../crypto/gojson.js';
import { decodeError, invalid } from './errors.js';
import type {
  ActionOutcome,
  ActionRequest,
  ActionRun,
  BindingDraft,
  BoundAction,
  CapabilitySnapshot,
  CapabilitySpec,
  Durability,
  Effect,
  HostManifest,
  ObservationEnvelope,
  ObservationQuery,
  Principal,
} from './types.js';

export type RawShape = 'raw' | { readonly raw: string };
export type Shape = 'string' | 'bool' | 'u64' | 'u32' | 'i64' | RawShape | { readonly list: Shape } | { readonly ptr: Shape } | ObjectShape;
export interface ObjectShape {
  readonly fields: Readonly<Record<string, Shape>>;
}

const LIMITS = { u64: [0n, 2n ** 64n - 1n], u32: [0n, 2n ** 32n - 1n], i64: [-(2n ** 63n), 2n ** 63n - 1n] } as const;

const member = (prefix: string, name: string) => (prefix ? `${prefix}.${name}` : name);

function kindOf(n: WireNode): string {
  return n.kind === 'bool' ? 'bool' : n.kind;
}

function isRaw(s: Shape): s is RawShape {
  return s === 'raw' || (typeof s === 'object' && 'raw' in s);
}

type MemberTable = Map<string, { shape: Shape; omit: boolean }>;
const tables = new WeakMap<ObjectShape, MemberTable>();

/** The member table of an object shape: wire name → (shape, omitempty). */
function memberTable(s: ObjectShape): MemberTable {
  let t = tables.get(s);
  if (!t) {
    t = new Map();
    for (const [k, v] of Object.entries(s.fields)) {
      const omit = k.endsWith('?');
      t.set(omit ? k.slice(0, -1) : k, { shape: v, omit });
    }
    tables.set(s, t);
  }
  return t;
}

function zero(s: Shape): unknown {
  if (s === 'string') return '';
  if (s === 'bool') return false;
  if (s === 'u64' || s === 'u32' || s === 'i64') return 0;
  if (isRaw(s)) return new RawJson('');
  if ('list' in s) return [];
  if ('ptr' in s) return undefined;
  const o: Record<string, unknown> = {};
  for (const [name, m] of memberTable(s)) {
    const z = zero(m.shape);
    if (!m.omit || !isEmpty(z)) o[name] = z;
  }
  return o;
}

/** Go's omitempty: false, 0, "", an empty slice, an empty RawMessage, a nil pointer. Structs never are. */
function isEmpty(v: unknown): boolean {
  return v === undefined || v === '' || v === 0 || v === false || (Array.isArray(v) && v.length === 0) || (v instanceof RawJson && v.text === '');
}

function decodeInt(n: WireNode, s: 'u64' | 'u32' | 'i64', path: string): number {
  if (n.kind !== 'number') throw decodeError(path, `cannot unmarshal ${kindOf(n)} into an integer`);
  const lexeme = n.lexeme;
  // Go parses unsigned members with ParseUint, which takes no sign at all (not even -0).
  const pattern = s === 'i64' ? /^-?(0|[1-9][0-9]*)$/ : /^(0|[1-9][0-9]*)$/;
  if (!pattern.test(lexeme)) throw decodeError(path, `cannot unmarshal number ${lexeme} into an integer`);
  const v = BigInt(lexeme);
  const [lo, hi] = LIMITS[s];
  if (v < lo || v > hi) throw decodeError(path, `cannot unmarshal number ${lexeme} into ${s === 'u32' ? 'uint32' : s === 'u64' ? 'uint64' : 'int64'}`);
  return Number(v);
}

function decodeNode(text: string, n: WireNode, s: Shape, path: string): unknown {
  if (isRaw(s)) return new RawJson(text.slice(n.start, n.end));
  if (typeof s === 'object' && 'ptr' in s) return n.kind === 'null' ? undefined : decodeNode(text, n, s.ptr, path);
  if (n.kind === 'null') return zero(s);
  if (s === 'string') {
    if (n.kind !== 'string') throw decodeError(path, `cannot unmarshal ${kindOf(n)} into string`);
    return n.value;
  }
  if (s === 'bool') {
    if (n.kind !== 'bool') throw decodeError(path, `cannot unmarshal ${kindOf(n)} into bool`);
    return n.value;
  }
  if (s === 'u64' || s === 'u32' || s === 'i64') return decodeInt(n, s, path);
  if ('list' in s) {
    if (n.kind !== 'array') throw decodeError(path, `cannot unmarshal ${kindOf(n)} into an array`);
    return n.items.map((item, i) => decodeNode(text, item, s.list, `${path}[${i}]`));
  }
  if (n.kind !== 'object') throw decodeError(path, `cannot unmarshal ${kindOf(n)} into an object`);
  const table = memberTable(s);
  const given = new Map<string, WireNode>();
  for (const [name, value] of n.members) {
    if (!table.has(name)) throw decodeError(member(path, name), `unknown field "${name}"`);
    given.set(name, value);
  }
  const o: Record<string, unknown> = {};
  for (const [name, m] of table) {
    const node = given.get(name);
    const v = node === undefined ? zero(m.shape) : decodeNode(text, node, m.shape, member(path, name));
    if (!m.omit || !isEmpty(v)) o[name] = v;
  }
  return o;
}

/** Decodes one parsed node (`text` is the text the node was parsed from) into the shape's type. */
export function decodeWire<T>(text: string, node: WireNode, shape: Shape): T {
  return decodeNode(text, node, shape, '') as T;
}

/**
 * The field a validator names for a fault at `path` of the wire text, when the path runs into a raw
 * sub-document of the shape; undefined otherwise.
 */
function rawFieldAt(shape: Shape, path: readonly (string | number)[], root: string): string | undefined {
  let s: Shape = shape;
  let prefix = root;
  for (const seg of path) {
    while (typeof s === 'object' && 'ptr' in s) s = s.ptr;
    if (isRaw(s)) return undefined;
    if (typeof s !== 'object') return undefined;
    if ('list' in s) {
      if (typeof seg !== 'number') return undefined;
      prefix = `${prefix}[${seg}]`;
      s = s.list;
      continue;
    }
    if (!('fields' in s) || typeof seg !== 'string') return undefined;
    const m = memberTable(s).get(seg);
    if (!m) return undefined;
    let inner = m.shape;
    while (typeof inner === 'object' && 'ptr' in inner) inner = inner.ptr;
    if (isRaw(inner)) return member(prefix, inner === 'raw' ? seg : inner.raw);
    prefix = member(prefix, seg);
    s = m.shape;
  }
  return undefined;
}

/**
 * Parses a wire text strictly and decodes it into the shape's type (see the file comment). `root` is
 * the field path of the whole text in error reports (`effect_preview` for a list of effects).
 */
export function decodeWireText<T>(text: string | Uint8Array, shape: Shape, root = ''): T {
  let parsed: { text: string; root: WireNode };
  try {
    parsed = parseWireJson(text);
  } catch (e) {
    if (!(e instanceof GoJsonError)) throw e;
    // Go's decoder carries these two into a RawMessage untouched, for the validator to refuse by field.
    const field = e.code === 'JSON_DUPLICATE' || e.code === 'JSON_SURROGATE' ? rawFieldAt(shape, e.path, root) : undefined;
    if (field !== undefined) throw invalid(field, e.message);
    throw decodeError(
      e.path.reduce<string>((p, seg) => (typeof seg === 'number' ? `${p}[${seg}]` : member(p, seg)), root),
      e.message,
    );
  }
  return decodeNode(parsed.text, parsed.root, shape, root) as T;
}

// ---- the host contract's types ----

export const EpochShape = { fields: { session_id: 'string', world_id: 'string', host: 'u64', world: 'u64', timeline: 'u64' } } as const;
export const TimepointShape = { fields: { clock: 'string', value: 'i64' } } as const;
export const DurationShape = { fields: { clock: 'string', value: 'u64' } } as const;
export const HostRefShape = { fields: { namespace: 'string', type: 'string', key: 'string', ephemeral: 'bool', epoch: EpochShape } } as const;
export const CapabilityRefShape = { fields: { id: 'string', version: 'string' } } as const;
export const SchemaShape = { fields: { dialect: 'string', document: { raw: 'schema.document' }, sha256: 'string' } } as const;
export const SchemaRefShape = { fields: { id: 'string', version: 'string', sha256: 'string' } } as const;
export const PlanStepRefShape = { fields: { plan_id: 'string', plan_revision: 'u64', step_id: 'string' } } as const;
export const PrincipalShape = { fields: { id: 'string', 'granted_scopes?': { list: 'string' } } } as const;

export const DurabilityShape = {
  fields: {
    profile: 'string',
    stable_identity: 'bool',
    durable_before_network: 'bool',
    durable_outbox: 'bool',
    idempotent_apply: 'bool',
    atomic_apply_and_outbox: 'bool',
  },
} as const;

export const HostManifestShape = {
  fields: {
    contract_version: 'string',
    adapter_id: 'string',
    adapter_version: 'string',
    engine_id: 'string',
    engine_version: 'string',
    runtime: 'string',
    platform: 'string',
    headless: 'bool',
    authority: 'string',
    deployment: 'string',
    control: 'string',
    clock_modes: { list: 'string' },
    decision_modes: { list: 'string' },
    max_concurrent_actors: 'u32',
    durability: DurabilityShape,
  },
} as const;

export const CapabilitySpecShape = {
  fields: {
    capability: CapabilityRefShape,
    description: 'string',
    input: SchemaShape,
    output: SchemaShape,
    effect_schema: SchemaShape,
    kind: 'string',
    execution: 'string',
    cancellation: 'string',
    risk_floor: 'string',
    required_durability: 'string',
    'required_scopes?': { list: 'string' },
    execution_budget: DurationShape,
    max_input_bytes: 'u32',
    max_output_bytes: 'u32',
    max_effects: 'u32',
    produces_child_operations: 'bool',
    digest: 'string',
  },
} as const;

export const CapabilitySnapshotShape = { fields: { revision: 'u64', specs: { list: CapabilitySpecShape } } } as const;

export const ActionRequestShape = {
  fields: {
    request_id: 'string',
    controller_id: 'string',
    actor_id: 'string',
    capability: CapabilityRefShape,
    spec_digest: 'string',
    arguments: 'raw',
    'target_refs?': { list: HostRefShape },
    expected_epoch: EpochShape,
    observation_sequence: 'u64',
    'task_id?': 'string',
    'plan_step_ref?': { ptr: PlanStepRefShape },
    idempotency_key: 'string',
  },
} as const;

export const EffectShape = {
  fields: {
    effect_id: 'string',
    kind: 'string',
    operation: 'string',
    'subject_ref?': { ptr: HostRefShape },
    'target_ref?': { ptr: HostRefShape },
    'tags?': { list: 'string' },
    ownership: 'string',
    scope: 'string',
    'quantity?': 'u64',
    'unit?': 'string',
    reversible: 'bool',
    risk: 'string',
    attributes: 'raw',
  },
} as const;

export const EffectsShape = { list: EffectShape } as const;

export const BindingDraftShape = {
  fields: { binding_id: 'string', 'resolved_targets?': { list: HostRefShape }, effect_preview: EffectsShape, valid_until: TimepointShape },
} as const;

export const BoundActionShape = {
  fields: {
    binding_id: 'string',
    request_id: 'string',
    request_digest: 'string',
    controller_id: 'string',
    actor_id: 'string',
    capability: CapabilityRefShape,
    spec_digest: 'string',
    normalized_arguments: 'raw',
    'requested_targets?': { list: HostRefShape },
    'resolved_targets?': { list: HostRefShape },
    expected_epoch: EpochShape,
    observation_sequence: 'u64',
    'task_id?': 'string',
    'plan_step_ref?': { ptr: PlanStepRefShape },
    idempotency_key: 'string',
    effect_preview: EffectsShape,
    effect_digest: 'string',
    bound_at: TimepointShape,
    valid_until: TimepointShape,
  },
} as const;

export const ActionRunShape = {
  fields: { operation_id: 'string', status: 'string', progress_seq: 'u64', progress: 'u32', updated_at: TimepointShape, 'message?': 'string' },
} as const;

export const ActionOutcomeShape = {
  fields: {
    operation_id: 'string',
    status: 'string',
    'code?': 'string',
    summary: 'string',
    'evidence?': { list: HostRefShape },
    epoch: EpochShape,
    world_seq: 'u64',
    occurred_at: TimepointShape,
  },
} as const;

export const ObservationFactShape = {
  fields: { fact_id: 'string', kind: 'string', 'subject?': { ptr: HostRefShape }, 'tags?': { list: 'string' }, value: 'raw' },
} as const;

export const ObservationResourceShape = {
  fields: {
    ref: HostRefShape,
    kind: 'string',
    'tags?': { list: 'string' },
    ownership: 'string',
    scope: 'string',
    'quantity?': 'u64',
    'unit?': 'string',
    attributes: 'raw',
  },
} as const;

export const ObservationArtifactShape = {
  fields: { artifact_id: 'string', kind: 'string', media_type: 'string', size_bytes: 'u64', sha256: 'string' },
} as const;

export const ObservationEnvelopeShape = {
  fields: {
    observation_id: 'string',
    host_id: 'string',
    world_id: 'string',
    actor_id: 'string',
    epoch: EpochShape,
    sequence: 'u64',
    observed_at: TimepointShape,
    schema_ref: SchemaRefShape,
    payload: 'raw',
    'facts?': { list: ObservationFactShape },
    'resources?': { list: ObservationResourceShape },
    'artifacts?': { list: ObservationArtifactShape },
    'continuation_token?': 'string',
  },
} as const;

export const ObservationQueryShape = {
  fields: {
    query_id: 'string',
    host_id: 'string',
    world_id: 'string',
    actor_id: 'string',
    expected_epoch: EpochShape,
    'after_sequence?': 'u64',
    'kinds?': { list: 'string' },
    limit: 'u32',
    'continuation_token?': 'string',
  },
} as const;

export const decodeActionRequest = (text: string | Uint8Array) => decodeWireText<ActionRequest>(text, ActionRequestShape);
export const decodeCapabilitySpec = (text: string | Uint8Array) => decodeWireText<CapabilitySpec>(text, CapabilitySpecShape);
export const decodeCapabilitySnapshot = (text: string | Uint8Array) => decodeWireText<CapabilitySnapshot>(text, CapabilitySnapshotShape);
export const decodeHostManifest = (text: string | Uint8Array) => decodeWireText<HostManifest>(text, HostManifestShape);
export const decodeDurability = (text: string | Uint8Array) => decodeWireText<Durability>(text, DurabilityShape);
export const decodeEffects = (text: string | Uint8Array) => decodeWireText<Effect[]>(text, EffectsShape, 'effect_preview');
export const decodeBindingDraft = (text: string | Uint8Array) => decodeWireText<BindingDraft>(text, BindingDraftShape);
export const decodeBoundAction = (text: string | Uint8Array) => decodeWireText<BoundAction>(text, BoundActionShape);
export const decodePrincipal = (text: string | Uint8Array) => decodeWireText<Principal>(text, PrincipalShape);
export const decodeActionRun = (text: string | Uint8Array) => decodeWireText<ActionRun>(text, ActionRunShape);
export const decodeActionOutcome = (text: string | Uint8Array) => decodeWireText<ActionOutcome>(text, ActionOutcomeShape);
export const decodeObservationEnvelope = (text: string | Uint8Array) => decodeWireText<ObservationEnvelope>(text, ObservationEnvelopeShape);
export const decodeObservationQuery = (text: string | Uint8Array) => decodeWireText<ObservationQuery>(text, ObservationQueryShape);
