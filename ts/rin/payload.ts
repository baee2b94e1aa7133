/**
 * Direct writers of the two digest payloads hashed most often: an action request's and an effect
 * preview's. Each returns the UTF-8 of exactly what `goJsonEncode` writes for the reference's payload
 * struct (copy.ts builds it), or undefined when the value holds anything that encoder would treat other than
 * plainly (a string with a lone surrogate, a number that is not a safe integer, a member of the wrong
 * type or missing), so the caller falls back to `goJsonEncode` and its errors. They exist for speed: no
 * copies, no member walk, one epoch's bytes shared by every ref.
 */
import { goJsonString, RawJson } from '../crypto/gojson.js';
import { goCompact } from './canon.js';
import type { ActionRequest, Effect, Epoch, HostRef } from './types.js';

const UNPLAIN = new Error('not plain');

const encoder = new TextEncoder();

/**
 * The payload's UTF-8, written straight into one buffer kept between calls: a text built piece by
 * piece is a rope of hundreds of strings, and flattening and encoding it to hash it took longer than
 * writing it (an action request with 32 target refs: 7.8 us to build, 6 us to flatten, 3 us to encode).
 */
const KEPT_BYTES = 1 << 16;

class Bytes {
  buf = new Uint8Array(KEPT_BYTES);
  at = 0;

  room(n: number): void {
    if (this.at + n <= this.buf.length) return;
    const grown = new Uint8Array(Math.max(2 * this.buf.length, this.at + n));
    grown.set(this.buf.subarray(0, this.at));
    this.buf = grown;
  }

  /** Text known to be ASCII: the writer's own punctuation and member names, decimal numbers. */
  ascii(s: string): void {
    this.room(s.length);
    const b = this.buf;
    let at = this.at;
    for (let i = 0; i < s.length; i++) b[at++] = s.charCodeAt(i);
    this.at = at;
  }

  /** Any well-formed text. */
  text(s: string): void {
    this.room(3 * s.length);
    this.at += encoder.encodeInto(s, this.buf.subarray(this.at)).written;
  }

  /** Bytes written earlier, from `from` to `to`, again at the end. */
  again(from: number, to: number): void {
    this.room(to - from);
    this.buf.copyWithin(this.at, from, to);
    this.at += to - from;
  }
}

const out = new Bytes();

/** A string as goJsonEncode writes it, when it is well-formed. */
function str(v: unknown): void {
  if (typeof v !== 'string') throw UNPLAIN;
  out.room(v.length + 2);
  const b = out.buf;
  const from = out.at;
  let at = from;
  b[at++] = 0x22;
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    // Anything escaped or a surrogate: the general writer decides.
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c || c === 0x3c || c === 0x3e || c === 0x26) {
      out.at = from;
      return out.text(quoted(v));
    }
    b[at++] = c;
  }
  b[at++] = 0x22;
  out.at = at;
}

function quoted(v: string): string {
  try {
    return goJsonString(v);
  } catch {
    throw UNPLAIN;
  }
}

/** A safe integer as goJsonEncode writes it (-0 as 0). */
function int(v: unknown): void {
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw UNPLAIN;
  out.ascii(v === 0 ? '0' : String(v));
}

function bool(v: unknown): void {
  if (typeof v !== 'boolean') throw UNPLAIN;
  out.ascii(v ? 'true' : 'false');
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

/** A JSON array of the items, each written by `write`. */
function array<T>(items: readonly T[], write: (item: T) => void): void {
  list(items);
  out.ascii('[');
  for (let i = 0; i < items.length; i++) {
    if (i > 0) out.ascii(',');
    write(items[i]!);
  }
  out.ascii(']');
}

function epoch(epoch: Epoch): void {
  const e = obj(epoch);
  out.ascii('{"session_id":');
  str(e.session_id);
  out.ascii(',"world_id":');
  str(e.world_id);
  out.ascii(',"host":');
  int(e.host);
  out.ascii(',"world":');
  int(e.world);
  out.ascii(',"timeline":');
  int(e.timeline);
  out.ascii('}');
}

/** Writes refs, copying the bytes of the last epoch written while the epochs are equal. */
class RefWriter {
  private epoch: Epoch | undefined;
  private from = 0;
  private to = 0;

  ref(ref: HostRef): void {
    const r = obj(ref);
    const e = obj(r.epoch);
    out.ascii('{"namespace":');
    str(r.namespace);
    out.ascii(',"type":');
    str(r.type);
    out.ascii(',"key":');
    str(r.key);
    out.ascii(',"ephemeral":');
    bool(r.ephemeral);
    out.ascii(',"epoch":');
    const last = this.epoch;
    if (
      last === undefined ||
      last.session_id !== e.session_id ||
      last.world_id !== e.world_id ||
      last.host !== e.host ||
      last.world !== e.world ||
      last.timeline !== e.timeline
    ) {
      this.from = out.at;
      epoch(e);
      this.to = out.at;
      this.epoch = e;
    } else out.again(this.from, this.to);
    out.ascii('}');
  }
}

/** The bytes `write` puts in the shared buffer, or undefined when it finds the value not plain. */
function plainOrUndefined(write: () => void): Uint8Array | undefined {
  out.at = 0;
  // A large payload's buffer is kept only until the next call.
  if (out.buf.length > KEPT_BYTES) out.buf = new Uint8Array(KEPT_BYTES);
  try {
    write();
  } catch (e) {
    if (e === UNPLAIN) return undefined;
    throw e;
  }
  return out.buf.subarray(0, out.at);
}

/**
 * The UTF-8 of the action request digest payload, its arguments already canonical (`args`), in a
 * buffer the next call of this module overwrites: hash or decode it at once.
 */
export function requestPayloadBytes(r: ActionRequest, args: string): Uint8Array | undefined {
  return plainOrUndefined(() => {
    out.ascii('{"request_id":');
    str(r.request_id);
    out.ascii(',"controller_id":');
    str(r.controller_id);
    out.ascii(',"actor_id":');
    str(r.actor_id);
    const capability = obj(r.capability);
    out.ascii(',"capability":{"id":');
    str(capability.id);
    out.ascii(',"version":');
    str(capability.version);
    out.ascii('},"spec_digest":');
    str(r.spec_digest);
    out.ascii(',"arguments":');
    out.text(args);
    const writer = new RefWriter();
    if (r.target_refs && r.target_refs.length > 0) {
      out.ascii(',"target_refs":');
      array(r.target_refs, (ref) => writer.ref(ref));
    }
    out.ascii(',"expected_epoch":');
    epoch(r.expected_epoch);
    out.ascii(',"observation_sequence":');
    int(r.observation_sequence);
    if (r.task_id) {
      out.ascii(',"task_id":');
      str(r.task_id);
    }
    if (r.plan_step_ref) {
      const p = obj(r.plan_step_ref);
      out.ascii(',"plan_step_ref":{"plan_id":');
      str(p.plan_id);
      out.ascii(',"plan_revision":');
      int(p.plan_revision);
      out.ascii(',"step_id":');
      str(p.step_id);
      out.ascii('}');
    }
    out.ascii(',"idempotency_key":');
    str(r.idempotency_key);
    out.ascii('}');
  });
}

/**
 * The UTF-8 of the effect preview digest payload, each effect's attributes compacted, in a buffer the
 * next call of this module overwrites: hash or decode it at once.
 */
export function effectsPayloadBytes(effects: readonly Effect[]): Uint8Array | undefined {
  return plainOrUndefined(() => {
    const writer = new RefWriter();
    array(effects, (effect) => {
      const e = obj(effect);
      out.ascii('{"effect_id":');
      str(e.effect_id);
      out.ascii(',"kind":');
      str(e.kind);
      out.ascii(',"operation":');
      str(e.operation);
      if (e.subject_ref) {
        out.ascii(',"subject_ref":');
        writer.ref(e.subject_ref);
      }
      if (e.target_ref) {
        out.ascii(',"target_ref":');
        writer.ref(e.target_ref);
      }
      if (e.tags && e.tags.length > 0) {
        out.ascii(',"tags":');
        array(e.tags, str);
      }
      out.ascii(',"ownership":');
      str(e.ownership);
      out.ascii(',"scope":');
      str(e.scope);
      if (e.quantity) {
        out.ascii(',"quantity":');
        int(e.quantity);
      }
      if (e.unit) {
        out.ascii(',"unit":');
        str(e.unit);
      }
      const attributes: unknown = e.attributes;
      if (!(attributes instanceof RawJson)) throw UNPLAIN;
      out.ascii(',"reversible":');
      bool(e.reversible);
      out.ascii(',"risk":');
      str(e.risk);
      out.ascii(',"attributes":');
      out.text(goCompact(attributes.text));
      out.ascii('}');
    });
  });
}
