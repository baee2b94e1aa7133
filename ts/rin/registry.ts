/**
 * The host-local capability catalog and binding store (host/registry.go, action_registry.go): it
 * registers sealed capability specs (R24, R36, R97), fences controller requests against the current
 * epoch and observation (R42), seals an adapter's draft into an immutable BoundAction within its
 * binding window (R43–R44), and authorizes a BoundAction right before execution (R45), detecting any
 * change to it by its fingerprint (R19). Everything it returns is a copy.
 */
import type { Crypto } from '../crypto/backend.js';
import { compareUtf8, RawJson } from '../crypto/gojson.js';
import { utf8Length } from '../crypto/unicode.js';
import { backend } from './canon.js';
import { copyBoundAction, copyCapabilityRef, copyEpoch, copyRefs, copyPlanStepRef, copySpec, copyTimepoint } from './copy.js';
import {
  actionRequestDigest,
  boundActionFingerprint,
  canonicalizeJsonObject,
  prepareCapabilitySpec,
  validateBoundAction,
  type PreparedSpec,
} from './digest.js';
import { effectPreviewDigest, effectPreviewText, normalizeEffectsWith } from './effects.js';
import { invalid } from './errors.js';
import { parseInstance } from './schema.js';
import type {
  ActionRequest,
  BindingDraft,
  BoundAction,
  CapabilityRef,
  CapabilitySnapshot,
  CapabilitySpec,
  Epoch,
  HostManifest,
  Principal,
  Timepoint,
} from './types.js';
import {
  durabilityRank,
  epochEquals,
  MAX_JSON_SAFE,
  validateActionRequest,
  validateCapabilityRef,
  validateEpoch,
  validateHostManifest,
  validateIdentifier,
  validatePrincipal,
  validateTimepoint,
} from './validate.js';

/**
 * How many newer observations may lie between a request's and the Host's current one (R42): hosts
 * publish often, so exact equality would make every submission a race; binding and authorization
 * remain the safety checks.
 */
export const MAX_OBSERVATION_GAP = 8;
export const MAX_ACTIVE_BINDINGS = 4096;

interface Binding {
  fingerprint: string;
  capability: CapabilityRef;
  epoch: Epoch;
  validUntil: Timepoint;
}

const specKey = (ref: CapabilityRef) => `${ref.id}\u0000${ref.version}`;

function withinGap(current: number, requested: number): boolean {
  return current >= requested && current - requested <= MAX_OBSERVATION_GAP;
}

export class HostRegistry {
  private readonly hostManifest: HostManifest;
  private readonly c: Crypto;
  private revision = 0;
  private readonly specs = new Map<string, PreparedSpec>();
  private readonly bindings = new Map<string, Binding>();

  constructor(manifest: HostManifest, crypto?: Crypto) {
    validateHostManifest(manifest);
    this.hostManifest = structuredClone(manifest);
    this.c = backend(crypto);
  }

  get manifest(): HostManifest {
    return structuredClone(this.hostManifest);
  }

  /** Seals and registers one exact capability version; the same spec again is a no-op (R36). */
  register(spec: CapabilitySpec): CapabilitySpec {
    const prepared = prepareCapabilitySpec(spec, this.c);
    const sealed = prepared.spec;
    const profile = this.hostManifest.durability.profile;
    if (durabilityRank(sealed.required_durability) > durabilityRank(profile)) {
      throw invalid('required_durability', `exceeds host durability ${profile}`);
    }
    const current = this.specs.get(specKey(sealed.capability));
    if (current) {
      if (current.spec.digest === sealed.digest) return copySpec(current.spec);
      throw invalid('capability', 'exact version is already registered with a different capability spec');
    }
    this.specs.set(specKey(sealed.capability), { ...prepared, spec: copySpec(sealed) });
    this.revision++;
    return copySpec(sealed);
  }

  /** Revokes one exact version and drops its bindings; false when it was not registered. */
  unregister(ref: CapabilityRef): boolean {
    try {
      validateCapabilityRef(ref, 'capability');
    } catch {
      return false;
    }
    const key = specKey(ref);
    if (!this.specs.delete(key)) return false;
    for (const [id, b] of this.bindings) if (specKey(b.capability) === key) this.bindings.delete(id);
    this.revision++;
    return true;
  }

  resolve(ref: CapabilityRef): CapabilitySpec | undefined {
    const r = this.specs.get(specKey(ref));
    return r ? copySpec(r.spec) : undefined;
  }

  /** R97: specs sorted by (id, version) in byte order, with the catalog revision. */
  snapshot(): CapabilitySnapshot {
    const specs = [...this.specs.values()].map((r) => copySpec(r.spec));
    specs.sort((a, b) => compareUtf8(a.capability.id, b.capability.id) || compareUtf8(a.capability.version, b.capability.version));
    return { revision: this.revision, specs };
  }

  private lookup(ref: CapabilityRef, digest: string): PreparedSpec {
    const r = this.specs.get(specKey(ref));
    if (!r) throw invalid('capability', `${ref.id}@${ref.version} is not registered`);
    if (r.spec.digest !== digest) throw invalid('spec_digest', 'does not match the active capability spec');
    return r;
  }

  private fenceRequest(req: ActionRequest, epoch: Epoch, seq: number): { spec: PreparedSpec; args: string } {
    validateActionRequest(req);
    validateEpoch(epoch, 'current_epoch');
    if (!(seq > 0 && seq <= MAX_JSON_SAFE)) throw invalid('current_observation_sequence', 'must be a positive JSON-safe integer');
    if (!epochEquals(req.expected_epoch, epoch)) throw invalid('expected_epoch', 'request belongs to a stale host epoch');
    if (!withinGap(seq, req.observation_sequence)) throw invalid('observation_sequence', 'request does not match the current host observation');
    const spec = this.lookup(req.capability, req.spec_digest);
    if (utf8Length(req.arguments.text) > spec.spec.max_input_bytes) throw invalid('arguments', 'exceeds capability input limit');
    const args = canonicalizeJsonObject('arguments', req.arguments, spec.spec.max_input_bytes, this.c);
    spec.input.check('arguments', parseInstance('arguments', args));
    return { spec, args };
  }

  /** R42: controller intent against the catalog and the current epoch and observation. */
  validateRequest(req: ActionRequest, epoch: Epoch, seq: number): void {
    this.fenceRequest(req, epoch, seq);
  }

  /** R43: seals an adapter's draft for a request into a BoundAction and remembers its fingerprint. */
  sealBinding(req: ActionRequest, draft: BindingDraft, now: Timepoint, epoch: Epoch, seq: number): BoundAction {
    const { spec, args } = this.fenceRequest(req, epoch, seq);
    validateIdentifier('binding_id', draft.binding_id);
    validateTimepoint(now, 'now');
    validateTimepoint(draft.valid_until, 'valid_until');
    if ((req.target_refs?.length ?? 0) > 0 && (draft.resolved_targets?.length ?? 0) === 0) {
      throw invalid('resolved_targets', 'must resolve every targeted request to at least one HostRef');
    }
    const budget = spec.spec.execution_budget;
    if (now.clock !== draft.valid_until.clock || budget.clock !== now.clock) {
      throw invalid('valid_until.clock', 'must match the current host clock and capability execution budget');
    }
    if (now.value > MAX_JSON_SAFE - budget.value) throw invalid('now.value', 'cannot add execution budget safely');
    if (draft.valid_until.value <= now.value || draft.valid_until.value > now.value + budget.value) {
      throw invalid('valid_until', 'must be after now and within the capability execution budget');
    }
    const effects = normalizeEffectsWith(
      draft.effect_preview ?? [],
      req.expected_epoch,
      spec.spec.max_effects,
      spec.spec.risk_floor,
      spec.effectSchema,
      this.c,
    );
    const action: BoundAction = {
      binding_id: draft.binding_id,
      request_id: req.request_id,
      request_digest: actionRequestDigest({ ...req, arguments: new RawJson(args) }, this.c),
      controller_id: req.controller_id,
      actor_id: req.actor_id,
      capability: copyCapabilityRef(req.capability),
      spec_digest: req.spec_digest,
      normalized_arguments: new RawJson(args),
      requested_targets: copyRefs(req.target_refs),
      resolved_targets: copyRefs(draft.resolved_targets),
      expected_epoch: copyEpoch(req.expected_epoch),
      observation_sequence: req.observation_sequence,
      task_id: req.task_id ? req.task_id : undefined,
      plan_step_ref: req.plan_step_ref ? copyPlanStepRef(req.plan_step_ref) : undefined,
      idempotency_key: req.idempotency_key,
      effect_preview: effects,
      effect_digest: effectPreviewDigest(effects, this.c),
      bound_at: copyTimepoint(now),
      valid_until: copyTimepoint(draft.valid_until),
    };
    validateBoundAction(action, this.c);
    this.remember(action, now);
    return copyBoundAction(action);
  }

  /** R44: the binding store, purged of other epochs of the same world and of expired bindings. */
  private remember(action: BoundAction, now: Timepoint): void {
    const fingerprint = boundActionFingerprint(action, this.c);
    const active = this.specs.get(specKey(action.capability));
    if (!active || active.spec.digest !== action.spec_digest) throw invalid('capability', 'was revoked or changed while the Host binding was created');
    for (const [id, b] of this.bindings) {
      const sameWorld = b.epoch.session_id === action.expected_epoch.session_id && b.epoch.world_id === action.expected_epoch.world_id;
      if ((sameWorld && !epochEquals(b.epoch, action.expected_epoch)) || (b.validUntil.clock === now.clock && b.validUntil.value <= now.value)) {
        this.bindings.delete(id);
      }
    }
    const current = this.bindings.get(action.binding_id);
    if (current) {
      if (current.fingerprint === fingerprint) return;
      throw invalid('binding_id', 'is already bound to different action data');
    }
    if (this.bindings.size >= MAX_ACTIVE_BINDINGS) throw invalid('binding_id', 'active Host binding limit reached');
    this.bindings.set(action.binding_id, {
      fingerprint,
      capability: copyCapabilityRef(action.capability),
      epoch: copyEpoch(action.expected_epoch),
      validUntil: copyTimepoint(action.valid_until),
    });
  }

  /** R45: the final check right before execution, at the current time, epoch and observation, for a principal. */
  authorize(action: BoundAction, now: Timepoint, epoch: Epoch, seq: number, principal: Principal): void {
    validateBoundAction(action, this.c);
    validateTimepoint(now, 'now');
    if (now.clock !== action.valid_until.clock) throw invalid('valid_until.clock', 'must match the current host clock');
    if (now.value >= action.valid_until.value) throw invalid('valid_until', 'bound action has expired');
    if (!epochEquals(action.expected_epoch, epoch)) throw invalid('expected_epoch', 'bound action belongs to a stale host epoch');
    if (!withinGap(seq, action.observation_sequence)) {
      throw invalid('observation_sequence', 'bound action does not match the current host observation');
    }
    const stored = this.bindings.get(action.binding_id);
    if (!stored) throw invalid('binding_id', 'was not issued by this Host registry');
    if (stored.fingerprint !== boundActionFingerprint(action, this.c)) throw invalid('binding_id', 'Host binding data was modified');
    const spec = this.lookup(action.capability, action.spec_digest);
    const args = action.normalized_arguments.text;
    if (utf8Length(args) > spec.spec.max_input_bytes) throw invalid('normalized_arguments', 'exceeds capability input limit');
    spec.input.check('normalized_arguments', parseInstance('normalized_arguments', args));
    const effects = normalizeEffectsWith(action.effect_preview, action.expected_epoch, spec.spec.max_effects, spec.spec.risk_floor, spec.effectSchema, this.c);
    if (effectPreviewText(effects) !== effectPreviewText(action.effect_preview)) {
      throw invalid('effect_preview', 'must be normalized by the Host binding path');
    }
    validatePrincipal(principal);
    const granted = new Set(principal.granted_scopes ?? []);
    for (const required of spec.spec.required_scopes ?? []) {
      if (!granted.has(required)) {
        throw invalid('principal.granted_scopes', `principal ${JSON.stringify(principal.id)} is missing required scope ${JSON.stringify(required)}`);
      }
    }
  }

  /** An action's output against its active capability: size bound and output schema. */
  validateSpecOutput(ref: CapabilityRef, digest: string, outputText: string): void {
    const spec = this.lookup(ref, digest);
    if (utf8Length(outputText) > spec.spec.max_output_bytes) throw invalid('output', 'exceeds capability output limit');
    spec.output.check('output', parseInstance('output', outputText));
  }

  /** ValidateBoundAction with this registry's crypto backend. */
  validateBoundAction(action: BoundAction): void {
    validateBoundAction(action, this.c);
  }
}
