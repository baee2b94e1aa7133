/**
 * Effect previews (R38–R40, R14): Host-authored effects checked, normalized (tags sorted, attributes
 * canonical, effects sorted by id) and digested exactly as the reference's normalizeEffects and
 * EffectPreviewDigest do, with its field paths (`effect_preview[i]…` by input position).
 */
import type { Crypto } from '../crypto/backend.js';
import { fromUtf8 } from '../crypto/encoding.js';
import { compareUtf8, goJsonEncode, goJsonString, GoJsonError, parseWireJson, RawJson, type WireNode } from '../crypto/gojson.js';
import { utf8Length } from '../crypto/unicode.js';
import { backend, goCanonical, goCompact, sha256Hex } from './canon.js';
import { copyEffect } from './copy.js';
import { invalid, prefixed } from './errors.js';
import { effectsPayloadBytes } from './payload.js';
import { compileSchemaAt, type CompiledSchema } from './schema.js';
import type { CapabilitySpec, Effect, Epoch, RiskLevel } from './types.js';
import { MAX_JSON_SAFE, riskRank, validateIdentifier, validateRefAtEpoch, validateSortedTags, validateText } from './validate.js';

const MAX_ATTRIBUTE_BYTES = 16 << 10;
const MAX_ATTRIBUTES = 64;
/** The largest scalar (fact value, attribute value) in bytes of its JSON text. */
export const MAX_SCALAR_BYTES = 4 << 10;

const OPERATIONS: readonly string[] = ['read', 'create', 'update', 'delete', 'transfer', 'consume', 'execute', 'communicate'];
const OWNERSHIP: readonly string[] = ['unknown', 'system', 'actor', 'controller', 'player', 'shared', 'unowned'];
export const isOwnershipClass = (v: string): boolean => OWNERSHIP.includes(v);

function parseStrict(field: string, text: string): WireNode {
  try {
    return parseWireJson(text).root;
  } catch (e) {
    if (e instanceof GoJsonError) throw invalid(field, e.message);
    throw e;
  }
}

/** Checks one parsed scalar (R31) and returns its canonical text. */
function scalarText(field: string, n: WireNode): string {
  switch (n.kind) {
    case 'bool':
      return n.value ? 'true' : 'false';
    case 'number': {
      if (n.lexeme.length > 64) throw invalid(field, 'number representation is too long');
      const x = Number(n.lexeme);
      if (!Number.isFinite(x) || Math.abs(x) > MAX_JSON_SAFE) throw invalid(field, 'number must be finite and interoperable');
      return n.lexeme;
    }
    case 'string':
      validateText(field, n.value, 1024, false);
      return goJsonString(n.value);
    default:
      throw invalid(field, 'must be a string, number, or boolean');
  }
}

/** A raw JSON scalar (fact value): bounded, strict, a bool / interoperable number / short string; its canonical text. */
export function canonicalizeScalar(field: string, raw: RawJson | undefined, maximum = MAX_SCALAR_BYTES): string {
  const text = raw?.text ?? '';
  if (text.length === 0 || utf8Length(text) > maximum) throw invalid(field, 'must be a bounded JSON scalar');
  return scalarText(field, parseStrict(field, text));
}

/**
 * A flat object of scalars (effect attributes, resource attributes, R38): ≤ 16 KiB, ≤ 64 members named
 * by identifiers, each value a scalar of ≤ 4 KiB; its canonical text. `null` is taken as `{}`, as the
 * reference's decoder does.
 */
export function canonicalizeScalarObject(field: string, raw: RawJson | undefined, c?: Crypto): string {
  const text = raw?.text ?? '';
  if (text.length === 0 || utf8Length(text) > MAX_ATTRIBUTE_BYTES) throw invalid(field, 'must be a bounded JSON object');
  const root = parseStrict(field, text);
  if (root.kind === 'null') return '{}';
  if (root.kind !== 'object') throw invalid(field, 'must be a JSON object');
  if (root.members.length > MAX_ATTRIBUTES) throw invalid(field, `must contain at most ${MAX_ATTRIBUTES} properties`);
  for (const [name, value] of root.members) {
    validateIdentifier(`${field}.${name}`, name);
    if (utf8Length(text.slice(value.start, value.end)) > MAX_SCALAR_BYTES) throw invalid(`${field}.${name}`, 'must be a bounded JSON scalar');
    scalarText(`${field}.${name}`, value);
  }
  return goCanonical(backend(c), text);
}

/** ValidateEffect: one Host-authored effect at `epoch`, independent of the capability's schema. */
export function validateEffect(e: Effect, epoch: Epoch, c?: Crypto): void {
  validateIdentifier('effect_id', e.effect_id);
  validateIdentifier('kind', e.kind, true);
  if (!OPERATIONS.includes(e.operation)) throw invalid('operation', 'is not supported');
  if (e.subject_ref) validateRefAtEpoch('subject_ref', e.subject_ref, epoch);
  if (e.target_ref) validateRefAtEpoch('target_ref', e.target_ref, epoch);
  validateSortedTags('tags', e.tags);
  if (!OWNERSHIP.includes(e.ownership)) throw invalid('ownership', 'is not supported');
  validateIdentifier('scope', e.scope, true);
  if ((e.quantity ?? 0) > MAX_JSON_SAFE) throw invalid('quantity', 'must be a JSON-safe integer');
  if (e.unit) validateIdentifier('unit', e.unit);
  if (riskRank(e.risk) < 0) throw invalid('risk', 'is not supported');
  canonicalizeScalarObject('attributes', e.attributes, c);
}

/** EffectPreviewDigest of already normalized effects. */
export function effectPreviewDigest(effects: readonly Effect[], c?: Crypto): string {
  if (effects.length === 0 || effects.length > 64) throw invalid('effect_preview', 'must contain between 1 and 64 values');
  return sha256Hex(backend(c), effectsPayload(effects));
}

/** The exact text the effect digest is computed over. */
export function effectPreviewText(effects: readonly Effect[]): string {
  const p = effectsPayload(effects);
  return typeof p === 'string' ? p : fromUtf8(p);
}

/** The digest payload: the direct writer's UTF-8, or the general encoder's text for effects it leaves to that encoder. */
function effectsPayload(effects: readonly Effect[]): Uint8Array | string {
  return effectsPayloadBytes(effects) ?? goJsonEncode(effects.map(compactEffect));
}

/** An effect as Go's json.Marshal sees it: its attributes compacted. */
export function compactEffect(e: Effect): Effect {
  return { ...copyEffect(e), attributes: new RawJson(goCompact(e.attributes.text)) };
}

/** normalizeEffects with the capability's limits and compiled effect schema (R40). */
export function normalizeEffectsWith(
  effects: readonly Effect[],
  epoch: Epoch,
  maximum: number,
  riskFloor: RiskLevel,
  attributes: CompiledSchema,
  c?: Crypto,
): Effect[] {
  if (effects.length === 0 || effects.length > maximum) throw invalid('effect_preview', `must contain between 1 and ${maximum} values`);
  const normalized = effects.map((effect, i) => {
    const at = `effect_preview[${i}]`;
    const e = copyEffect(effect);
    const tags = [...(effect.tags ?? [])].sort(compareUtf8);
    if (tags.some((t, k) => k > 0 && t === tags[k - 1])) throw invalid(`${at}.tags`, 'must not contain duplicates');
    e.tags = tags.length > 0 ? tags : undefined;
    let canonical: string;
    try {
      canonical = canonicalizeScalarObject('attributes', effect.attributes, c);
      e.attributes = new RawJson(canonical);
      validateEffect(e, epoch, c);
    } catch (err) {
      throw prefixed(at, err);
    }
    if (riskRank(e.risk) < riskRank(riskFloor)) throw invalid(`${at}.risk`, 'must not be below capability risk_floor');
    attributes.check(`${at}.attributes`, parseStrict(`${at}.attributes`, canonical));
    return e;
  });
  normalized.sort((a, b) => compareUtf8(a.effect_id, b.effect_id));
  for (let i = 1; i < normalized.length; i++) {
    if (normalized[i - 1]!.effect_id === normalized[i]!.effect_id) throw invalid('effect_preview', 'must not contain duplicate effect_id values');
  }
  return normalized;
}

/**
 * Normalizes a draft effect preview for a capability and a request epoch, and digests it. The spec
 * must be sealed; its effect schema is compiled (and cached) here.
 */
export function normalizeEffects(effects: readonly Effect[], spec: CapabilitySpec, epoch: Epoch, c?: Crypto): { effects: Effect[]; digest: string } {
  const schema = compileSchemaAt('effect_schema', spec.effect_schema, c);
  const normalized = normalizeEffectsWith(effects, epoch, spec.max_effects, spec.risk_floor, schema, c);
  return { effects: normalized, digest: effectPreviewDigest(normalized, c) };
}
