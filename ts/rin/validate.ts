/**
 * The reference's validators for rin.host/v2 values (host/validate.go, action_validate.go), with its
 * check order, field paths and messages: each throws RinError `invalid` for the first failure.
 * Validators of sealed specs, bindings, runs and observations live next to what they need
 * (digest.ts, run.ts, observation.ts) and are re-exported here, so this is the one place to import
 * a validator from.
 */
import { parseWireJson, GoJsonError, type WireNode } from '../crypto/gojson.js';
import { isWellFormed, utf8Length } from '../crypto/unicode.js';
import { invalid } from './errors.js';
import type {
  ActionRequest,
  CapabilityRef,
  ClockMode,
  Duration,
  Durability,
  DurabilityProfile,
  Epoch,
  HostManifest,
  HostRef,
  PlanStepRef,
  Principal,
  RawJson,
  Timepoint,
} from './types.js';
import { HOST_CONTRACT_VERSION } from './types.js';

export { validateBoundAction, validateCapabilitySpec } from './digest.js';
export { canTransitionActionRun, validateActionOutcome, validateActionRun, isTerminalActionRunStatus } from './run.js';
export { validateObservationEnvelope, validateObservationPayload, validateObservationQuery } from './observation.js';

/** 2^53−1: every sequence, generation and revision must fit a JSON number exactly (R6). */
export const MAX_JSON_SAFE = Number.MAX_SAFE_INTEGER;
/** Instances (arguments, outputs) validated against a schema are at most 1 MiB (R18). */
export const MAX_INSTANCE_BYTES = 1 << 20;

const VERSION = /^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(?:-([0-9A-Za-z.-]+))?(?:\+([0-9A-Za-z.-]+))?$/;
const ID = /^[a-z][a-z0-9]*(?:[._-][a-z0-9]+)*$/;
const SHA256_HEX = /^[0-9a-f]{64}$/;

/** Code points (Go's utf8.RuneCountInString). */
function runeCount(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) i++;
    n++;
  }
  return n;
}

/** Go's unicode.IsSpace, which strings.TrimSpace trims (JavaScript's trim differs on U+0085 and U+FEFF). */
const GO_SPACE = /^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*$/;

export const isSha256Hex = (s: string): boolean => SHA256_HEX.test(s);
export const epochEquals = (a: Epoch, b: Epoch): boolean =>
  a.session_id === b.session_id && a.world_id === b.world_id && a.host === b.host && a.world === b.world && a.timeline === b.timeline;
const isPositiveSafe = (n: number) => n > 0 && n <= MAX_JSON_SAFE;

const CLOCKS: readonly string[] = ['event', 'step', 'realtime'];
export const isClockMode = (v: string): v is ClockMode => CLOCKS.includes(v);
const PROFILES: readonly string[] = ['advisory', 'idempotent-action', 'transactional-action'];
export const isDurabilityProfile = (v: string): v is DurabilityProfile => PROFILES.includes(v);

/** Rank of a durability profile (R24): advisory 0 < idempotent-action 1 < transactional-action 2; −1 unknown. */
export const durabilityRank = (p: string): number => PROFILES.indexOf(p);

const RISKS: readonly string[] = ['low', 'moderate', 'high', 'critical'];
/** Rank of a risk level: low 0 … critical 3; −1 unknown. */
export const riskRank = (r: string): number => RISKS.indexOf(r);

/**
 * `ID.test(value)` as a scan: requests and effects carry dozens of identifiers, and the scan costs a
 * fraction of a RegExp call.
 */
function isIdentifier(value: string): boolean {
  // Anything but a string is taken as the expression did: as its String() text.
  if (typeof value !== 'string') return ID.test(value);
  const first = value.charCodeAt(0);
  if (!(first >= 0x61 && first <= 0x7a)) return false;
  let separated = false;
  for (let i = 1; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if ((c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39)) separated = false;
    else if ((c === 0x2e || c === 0x5f || c === 0x2d) && !separated) separated = true;
    else return false;
  }
  return !separated;
}

/** R4: a lowercase safe identifier of 1..96 bytes; namespaced ones also contain a dot. */
export function validateIdentifier(field: string, value: string, namespaced = false): void {
  if (value.length === 0 || value.length > 96 || !isIdentifier(value)) throw invalid(field, 'must be a lowercase safe identifier of at most 96 bytes');
  if (namespaced && !value.includes('.')) throw invalid(field, 'must be namespaced');
}

function versionIdentifiers(value: string | undefined, prerelease: boolean): string | undefined {
  if (!value) return undefined;
  for (const id of value.split('.')) {
    if (id === '') return 'version identifiers must not be empty';
    // Go's strconv.ParseUint decides what is numeric: digits that fit 64 bits.
    if (prerelease && id.length > 1 && id[0] === '0' && /^[0-9]+$/.test(id) && BigInt(id) < 2n ** 64n) {
      return 'numeric prerelease identifiers must not contain leading zeroes';
    }
  }
  return undefined;
}

/** R5: exact SemVer. */
export function validateExactVersion(field: string, value: string): void {
  const m = VERSION.exec(value);
  if (!m) throw invalid(field, 'must be an exact SemVer version');
  const fault = versionIdentifiers(m[4], true) ?? versionIdentifiers(m[5], false);
  if (fault) throw invalid(field, fault);
}

/** R7: text counted in code points, valid UTF-8 without NUL, non-blank when required. */
export function validateText(field: string, value: string, maximum: number, required: boolean): void {
  // A text starting with a visible ASCII character is not blank.
  const first = value.charCodeAt(0);
  if (required && !(first > 0x20 && first < 0x7f) && GO_SPACE.test(value)) throw invalid(field, 'is required');
  if (!isWellFormed(value) || value.includes('\u0000')) throw invalid(field, 'must be valid UTF-8 without NUL');
  // There are never more code points than UTF-16 units.
  if (value.length > maximum && runeCount(value) > maximum) throw invalid(field, `must contain at most ${maximum} characters`);
}

export function validateEpoch(epoch: Epoch, field: string): void {
  validateIdentifier(`${field}.session_id`, epoch.session_id);
  validateIdentifier(`${field}.world_id`, epoch.world_id);
  if (!isPositiveSafe(epoch.host) || !isPositiveSafe(epoch.world) || !isPositiveSafe(epoch.timeline)) {
    throw invalid(field, 'host, world, and timeline generations must be positive JSON-safe integers');
  }
}

export function validateTimepoint(tp: Timepoint, field: string): void {
  if (!isClockMode(tp.clock)) throw invalid(`${field}.clock`, 'is not supported');
  if (!(tp.value >= 0 && tp.value <= MAX_JSON_SAFE)) throw invalid(`${field}.value`, 'must be a non-negative JSON-safe integer');
}

export function validateDuration(d: Duration, field: string): void {
  if (!isClockMode(d.clock)) throw invalid(`${field}.clock`, 'is not supported');
  if (!isPositiveSafe(d.value)) throw invalid(`${field}.value`, 'must be a positive JSON-safe integer');
}

export function validateHostRef(ref: HostRef, field: string): void {
  validateIdentifier(`${field}.namespace`, ref.namespace, true);
  validateIdentifier(`${field}.type`, ref.type);
  validateText(`${field}.key`, ref.key, 256, true);
  validateEpoch(ref.epoch, `${field}.epoch`);
}

const isObject = (v: unknown): boolean => typeof v === 'object' && v !== null;

const isPlainIdentifier = (v: unknown, namespaced: boolean): boolean =>
  typeof v === 'string' && v.length <= 96 && isIdentifier(v) && (!namespaced || v.includes('.'));

/** True when validateHostRef's checks of namespace, type and key would pass (false: let them speak). */
function plainRefNames(ref: HostRef): boolean {
  const key: unknown = ref.key;
  if (!isPlainIdentifier(ref.namespace, true) || !isPlainIdentifier(ref.type, false) || typeof key !== 'string') return false;
  // Visible ASCII only, at most 256 of it: not blank, no NUL, no surrogate.
  if (key.length === 0 || key.length > 256) return false;
  const first = key.charCodeAt(0);
  if (!(first > 0x20 && first < 0x7f)) return false;
  for (let i = 1; i < key.length; i++) {
    const c = key.charCodeAt(i);
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

export function validateCapabilityRef(ref: CapabilityRef, field: string): void {
  validateIdentifier(`${field}.id`, ref.id, true);
  validateExactVersion(`${field}.version`, ref.version);
}

export function validatePlanStepRef(ref: PlanStepRef, field: string): void {
  validateIdentifier(`${field}.plan_id`, ref.plan_id);
  if (!isPositiveSafe(ref.plan_revision)) throw invalid(`${field}.plan_revision`, 'must be a positive JSON-safe integer');
  validateIdentifier(`${field}.step_id`, ref.step_id);
}

/** R28: ≤ 32 refs, each valid, at exactly `epoch`, unique by (namespace, type, key). */
export function validateRefs(field: string, refs: readonly HostRef[] | undefined, epoch: Epoch): void {
  const list = refs ?? [];
  if (list.length > 32) throw invalid(field, 'must contain at most 32 values');
  if (list.length === 0) return;
  // Refs carry the action epoch; when it is valid, a ref's equal epoch needs no second look.
  let epochValid = true;
  try {
    validateEpoch(epoch, '');
  } catch {
    epochValid = false;
  }
  const keys = new Set<string>();
  list.forEach((ref, i) => {
    // The field names are built only for a ref that may fail.
    const plain = epochValid && isObject(ref) && plainRefNames(ref) && isObject(ref.epoch) && epochEquals(ref.epoch, epoch);
    if (!plain) {
      const item = `${field}[${i}]`;
      validateHostRef(ref, item);
      if (!epochEquals(ref.epoch, epoch)) throw invalid(`${item}.epoch`, 'must equal action epoch');
    }
    // Unique by (namespace, type, key): only a key seen before can make a duplicate.
    if (keys.has(ref.key)) {
      for (let k = 0; k < i; k++) {
        const other = list[k];
        if (other === undefined) continue; // a hole, which forEach skipped
        if (other.key === ref.key && other.type === ref.type && other.namespace === ref.namespace) throw invalid(field, 'must not contain duplicates');
      }
    }
    keys.add(ref.key);
  });
}

/** A ref inside an observation or effect: valid and at the enclosing epoch. */
export function validateRefAtEpoch(field: string, ref: HostRef, epoch: Epoch): void {
  validateHostRef(ref, field);
  if (!epochEquals(ref.epoch, epoch)) throw invalid(`${field}.epoch`, 'must equal the enclosing epoch');
}

/** Tags: ≤ 32 namespaced identifiers, strictly ascending (sorted, no duplicates). */
export function validateSortedTags(field: string, tags: readonly string[] | undefined): void {
  const list = tags ?? [];
  if (list.length > 32) throw invalid(field, 'must contain at most 32 values');
  list.forEach((tag, i) => {
    validateIdentifier(`${field}[${i}]`, tag, true);
    if (i > 0 && !(list[i - 1]! < tag)) throw invalid(field, 'must be sorted and contain no duplicates');
  });
}

/**
 * A raw sub-document that must be one bounded JSON object (the reference's validateJSONObject):
 * 1..maximum bytes, strict JSON, an object. Returns the parsed object.
 */
export function parseJsonObject(field: string, raw: RawJson | undefined, maximum: number): { text: string; root: Extract<WireNode, { kind: 'object' }> } {
  const text = raw?.text ?? '';
  if (text.length === 0 || utf8Length(text) > maximum) throw invalid(field, 'must be a bounded JSON object');
  let parsed: { text: string; root: WireNode };
  try {
    parsed = parseWireJson(text);
  } catch (e) {
    if (e instanceof GoJsonError) throw invalid(field, e.message);
    throw e;
  }
  if (parsed.root.kind !== 'object') throw invalid(field, 'must be a JSON object');
  return { text: parsed.text, root: parsed.root };
}

export function validateDurability(d: Durability): void {
  if (!isDurabilityProfile(d.profile)) throw invalid('durability.profile', 'is not supported');
  switch (d.profile) {
    case 'advisory':
      if (d.durable_before_network || d.durable_outbox || d.idempotent_apply || d.atomic_apply_and_outbox) {
        throw invalid('durability', 'advisory profile must not claim stronger guarantees');
      }
      break;
    case 'idempotent-action':
      if (!d.stable_identity || !d.durable_before_network || !d.durable_outbox || !d.idempotent_apply) {
        throw invalid('durability', 'idempotent-action requires stable identity, durable pending work and outbox, and idempotent apply');
      }
      if (d.atomic_apply_and_outbox) throw invalid('durability.atomic_apply_and_outbox', 'requires transactional-action profile');
      break;
    case 'transactional-action':
      if (!d.stable_identity || !d.durable_before_network || !d.durable_outbox || !d.atomic_apply_and_outbox) {
        throw invalid('durability', 'transactional-action requires stable identity, durable pending work and outbox, and atomic apply/outbox');
      }
      break;
  }
}

function validateUnique(field: string, values: readonly string[], allowed: readonly string[]): void {
  if (values.length === 0 || values.length > 3) throw invalid(field, 'must contain 1-3 values');
  const seen = new Set<string>();
  values.forEach((v, i) => {
    if (!allowed.includes(v)) throw invalid(`${field}[${i}]`, 'is not supported');
    if (seen.has(v)) throw invalid(field, 'must not contain duplicates');
    seen.add(v);
  });
}

/** R20–R23 in the reference's order. */
export function validateHostManifest(m: HostManifest): void {
  if (m.contract_version !== HOST_CONTRACT_VERSION) throw invalid('contract_version', `must equal ${HOST_CONTRACT_VERSION}`);
  validateIdentifier('adapter_id', m.adapter_id);
  validateIdentifier('engine_id', m.engine_id);
  validateIdentifier('runtime', m.runtime);
  validateIdentifier('platform', m.platform);
  validateExactVersion('adapter_version', m.adapter_version);
  validateText('engine_version', m.engine_version, 64, true);
  if (!['standalone', 'server', 'client-advisory'].includes(m.authority)) throw invalid('authority', 'is not supported');
  if (!['loopback-sidecar', 'dedicated-server', 'remote-https', 'embedded-offline', 'computer-control'].includes(m.deployment)) {
    throw invalid('deployment', 'is not supported');
  }
  if (!['semantic', 'accessibility', 'computer-control'].includes(m.control)) throw invalid('control', 'is not supported');
  if (m.deployment === 'computer-control' && m.control !== 'computer-control') {
    throw invalid('control', 'must be computer-control for computer-control deployment');
  }
  if (m.control === 'computer-control' && m.deployment !== 'computer-control') {
    throw invalid('deployment', 'must be computer-control for computer-control control mode');
  }
  validateUnique('clock_modes', m.clock_modes, CLOCKS);
  validateUnique('decision_modes', m.decision_modes, ['sequential', 'simultaneous', 'asynchronous']);
  if (!(m.max_concurrent_actors >= 1 && m.max_concurrent_actors <= 1_000_000)) {
    throw invalid('max_concurrent_actors', 'must be between 1 and 1000000');
  }
  validateDurability(m.durability);
  if (m.authority === 'client-advisory' && m.durability.profile !== 'advisory') {
    throw invalid('durability.profile', 'client-advisory hosts cannot claim world mutation durability');
  }
}

/** R47. */
export function validatePrincipal(p: Principal): void {
  validateIdentifier('principal.id', p.id);
  const scopes = p.granted_scopes ?? [];
  if (scopes.length > 64) throw invalid('principal.granted_scopes', 'must contain at most 64 values');
  const seen = new Set<string>();
  scopes.forEach((scope, i) => {
    validateIdentifier(`principal.granted_scopes[${i}]`, scope, true);
    if (seen.has(scope)) throw invalid('principal.granted_scopes', 'must not contain duplicates');
    seen.add(scope);
  });
}

/** R37 in the reference's order. */
export function validateActionRequest(r: ActionRequest): void {
  checkActionRequest(r);
}

/** validateActionRequest, returning the arguments' text it has checked to be one bounded JSON object. */
export function checkActionRequest(r: ActionRequest): string {
  for (const f of ['request_id', 'controller_id', 'actor_id', 'idempotency_key'] as const) validateIdentifier(f, r[f]);
  if (r.task_id) validateIdentifier('task_id', r.task_id);
  if (r.plan_step_ref) {
    if (!r.task_id) throw invalid('plan_step_ref', 'requires task_id');
    validatePlanStepRef(r.plan_step_ref, 'plan_step_ref');
  }
  validateCapabilityRef(r.capability, 'capability');
  if (!isSha256Hex(r.spec_digest)) throw invalid('spec_digest', 'must be a lowercase SHA-256 digest');
  validateEpoch(r.expected_epoch, 'expected_epoch');
  const args = parseJsonObject('arguments', r.arguments, MAX_INSTANCE_BYTES).text;
  validateRefs('target_refs', r.target_refs, r.expected_epoch);
  if (!isPositiveSafe(r.observation_sequence)) throw invalid('observation_sequence', 'must be a positive JSON-safe integer');
  return args;
}
