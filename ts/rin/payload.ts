/**
 * Direct writers of the two digest payloads hashed most often: an action request's and an effect
 * preview's. Each returns exactly what `goJsonEncode` writes for the reference's payload struct
 * (copy.ts builds it), or undefined when the value holds anything that encoder would treat other than
 * plainly (a string with a lone surrogate, a number that is not a safe integer, a member of the wrong
 * type or missing), so the caller falls back to `goJsonEncode` and its errors. They exist for speed: no
 * copies, no member walk, one text for an epoch shared by every ref.
 */
import { goJsonString, RawJson } from '../crypto/gojson.js';
import { goCompact } from './canon.js';
import type { ActionRequest, Effect, Epoch, HostRef } from './types.js';

const UNPLAIN = new Error('not plain');

/** A string as goJsonEncode writes it, when it is well-formed. */
function str(v: unknown): string {
  if (typeof v !== 'string') throw UNPLAIN;
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    // Anything escaped or a surrogate: the general writer decides.
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c || c === 0x3c || c === 0x3e || c === 0x26) return quoted(v);
  }
  return '"' + v + '"';
}

function quoted(v: string): string {
  try {
    return goJsonString(v);
  } catch {
    throw UNPLAIN;
  }
}

/** A safe integer as goJsonEncode writes it (-0 as 0). */
function int(v: unknown): string {
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw UNPLAIN;
  return v === 0 ? '0' : String(v);
}

function bool(v: unknown): string {
  if (typeof v !== 'boolean') throw UNPLAIN;
  return v ? 'true' : 'false';
}

/** An object member that the copy would read members of (anything else: a hole, null, a primitive). */
function obj<T>(v: T | undefined): T {
  if (typeof v !== 'object' || v === null) throw UNPLAIN;
  return v;
}

/** A list the copy would map over. */
function list<T>(v: readonly T[]): readonly T[] {
  if (!Array.isArray(v)) throw UNPLAIN;
  return v;
}

function epochText(epoch: Epoch): string {
  const e = obj(epoch);
  return `{"session_id":${str(e.session_id)},"world_id":${str(e.world_id)},"host":${int(e.host)},"world":${int(e.world)},"timeline":${int(e.timeline)}}`;
}

/** Writes refs, reusing the text of the last epoch written while the epochs are equal. */
class RefWriter {
  private epoch: Epoch | undefined;
  private text = '';

  ref(ref: HostRef): string {
    const r = obj(ref);
    const e = obj(r.epoch);
    const last = this.epoch;
    if (
      last === undefined ||
      last.session_id !== e.session_id ||
      last.world_id !== e.world_id ||
      last.host !== e.host ||
      last.world !== e.world ||
      last.timeline !== e.timeline
    ) {
      this.text = epochText(e);
      this.epoch = e;
    }
    return `{"namespace":${str(r.namespace)},"type":${str(r.type)},"key":${str(r.key)},"ephemeral":${bool(r.ephemeral)},"epoch":${this.text}}`;
  }
}

function plainOrUndefined(write: () => string): string | undefined {
  try {
    return write();
  } catch (e) {
    if (e === UNPLAIN) return undefined;
    throw e;
  }
}

/** The action request digest payload, its arguments already canonical (`args`). */
export function requestPayloadText(r: ActionRequest, args: string): string | undefined {
  return plainOrUndefined(() => {
    let s = `{"request_id":${str(r.request_id)},"controller_id":${str(r.controller_id)},"actor_id":${str(r.actor_id)}`;
    const capability = obj(r.capability);
    s += `,"capability":{"id":${str(capability.id)},"version":${str(capability.version)}},"spec_digest":${str(r.spec_digest)}`;
    s += `,"arguments":${args}`;
    const writer = new RefWriter();
    if (r.target_refs && r.target_refs.length > 0) {
      const refs = list(r.target_refs);
      s += ',"target_refs":[';
      for (let i = 0; i < refs.length; i++) s += (i > 0 ? ',' : '') + writer.ref(refs[i]!);
      s += ']';
    }
    s += `,"expected_epoch":${epochText(r.expected_epoch)},"observation_sequence":${int(r.observation_sequence)}`;
    if (r.task_id) s += `,"task_id":${str(r.task_id)}`;
    if (r.plan_step_ref) {
      const p = obj(r.plan_step_ref);
      s += `,"plan_step_ref":{"plan_id":${str(p.plan_id)},"plan_revision":${int(p.plan_revision)},"step_id":${str(p.step_id)}}`;
    }
    return s + `,"idempotency_key":${str(r.idempotency_key)}}`;
  });
}

/** The effect preview digest payload: the effects as written, each one's attributes compacted. */
export function effectsPayloadText(effects: readonly Effect[]): string | undefined {
  return plainOrUndefined(() => {
    list(effects);
    const writer = new RefWriter();
    let s = '[';
    for (let i = 0; i < effects.length; i++) {
      const e = obj(effects[i]);
      s += `${i > 0 ? ',' : ''}{"effect_id":${str(e.effect_id)},"kind":${str(e.kind)},"operation":${str(e.operation)}`;
      if (e.subject_ref) s += `,"subject_ref":${writer.ref(e.subject_ref)}`;
      if (e.target_ref) s += `,"target_ref":${writer.ref(e.target_ref)}`;
      if (e.tags && e.tags.length > 0) {
        const tags = list(e.tags);
        s += ',"tags":[';
        for (let k = 0; k < tags.length; k++) s += (k > 0 ? ',' : '') + str(tags[k]);
        s += ']';
      }
      s += `,"ownership":${str(e.ownership)},"scope":${str(e.scope)}`;
      if (e.quantity) s += `,"quantity":${int(e.quantity)}`;
      if (e.unit) s += `,"unit":${str(e.unit)}`;
      const attributes: unknown = e.attributes;
      if (!(attributes instanceof RawJson)) throw UNPLAIN;
      s += `,"reversible":${bool(e.reversible)},"risk":${str(e.risk)},"attributes":${goCompact(attributes.text)}}`;
    }
    return s + ']';
  });
}
