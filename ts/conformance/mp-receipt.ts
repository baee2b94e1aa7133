/**
 * The reference's mental-poker transcript-receipt vectors (../shared/conformance/aigenora-reference/
 * aigenora-mp-receipt-vectors.json, format in that folder's README) against one backend: event bytes,
 * roots, receipt signatures and the payloads the transcript refuses (written as Python literals, read by
 * python-literal.ts). The test suite and `aigenora conformance` both run them through here. The file is
 * read from its text (see mp-vectors.ts).
 */
import type { Crypto } from '../crypto/backend.js';
import { fromHex, toHex } from '../crypto/encoding.js';
import { parseJsonExact, type JsonObject } from '../mp/canonical.js';
import { MpError } from '../mp/errors.js';
import { Transcript } from '../mp/transcript.js';
import type { Suite } from './formats.js';
import { PyLiteralError, readPythonLiteral, type PyValue } from './python-literal.js';
import { eq, readVectors, vectorSuite, type Vec } from './mp-vectors.js';

export const RECEIPT_FORMAT = 'aigenora-mp-receipt-vectors/1';

const text = (b: Uint8Array) => new TextDecoder().decode(b);

/** `{"$bigint": hex}` (the file's way to carry an integer beyond 2^53) back to the integer it stands for. */
function revive(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(revive);
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o);
    if (keys.length === 1 && typeof o['$bigint'] === 'string') {
      const s = o['$bigint'];
      return s.startsWith('-') ? -BigInt(`0x${s.slice(1)}`) : BigInt(`0x${s}`);
    }
    if (keys.length === 1 && '$float' in o) throw new Error('a $float in a transcript payload: the reference refuses floats, so no vector should hold one');
    return Object.fromEntries(keys.map((k) => [k, revive(o[k])]));
  }
  return v;
}

function signatures(c: Crypto, t: Transcript, seed: string, publicKey: string, want: string, what: string): void {
  eq(toHex(c.ed25519PublicKey(fromHex(seed))), publicKey, `${what} public key`);
  const sig = t.sign(fromHex(seed));
  eq(toHex(sig), want, `${what} signature`);
  eq(t.verify(fromHex(publicKey), sig), true, `${what} signature verifies`);
}

function gameTranscript(c: Crypto, v: Vec): void {
  const t = new Transcript(c);
  for (const e of v['events'] as Vec[]) {
    const seq = t.append(e['type'], parseJsonExact(e['payload_canonical']) as JsonObject);
    eq(seq, e['seq'], `${v['id']} seq`);
    const ev = t.events[seq]!;
    eq(toHex(ev.bytes.subarray(0, ev.bytes.length - ev.payload.length)), e['header_hex'], `${v['id']} event ${seq} header`);
    eq(text(ev.payload), e['payload_canonical'], `${v['id']} event ${seq} payload`);
  }
  eq(t.length, v['expect'].event_count, `${v['id']} event count`);
  eq(t.rootHex(), v['expect'].root, `${v['id']} root`);
  signatures(c, t, v['host_ed25519_seed'], v['host_public_key'], v['expect'].host_signature, `${v['id']} host`);
  signatures(c, t, v['guest_ed25519_seed'], v['guest_public_key'], v['expect'].guest_signature, `${v['id']} guest`);
  eq(t.verify(fromHex(v['guest_public_key']), fromHex(v['expect'].host_signature)), false, `${v['id']} host signature under the guest key`);
}

function transcript(c: Crypto, v: Vec): void {
  const t = new Transcript(c);
  for (const e of v['events'] as Vec[]) {
    const seq = e['payload_was_none'] ? t.append(e['type']) : t.append(e['type'], revive(e['payload']) as JsonObject);
    if (e['payload_was_none']) eq(text(t.events[seq]!.payload), '{}', `${v['id']} no payload`);
    eq(toHex(t.events[seq]!.bytes), e['bytes_hex'], `${v['id']} event ${seq} bytes`);
  }
  eq(t.rootHex(), v['expect'].root, `${v['id']} root`);
  signatures(c, t, v['signer_ed25519_seed'], v['signer_public_key'], v['expect'].signature, v['id']);
  const sig = fromHex(v['expect'].signature);
  const otherSeed = fromHex(v['signer_ed25519_seed']);
  otherSeed[0]! ^= 1;
  eq(t.verify(c.ed25519PublicKey(otherSeed), sig), v['expect'].verify_other_key, `${v['id']} verify under another key`);
  const flipped = sig.slice();
  flipped[0]! ^= 1;
  eq(t.verify(fromHex(v['signer_public_key']), flipped), v['expect'].verify_flipped_signature, `${v['id']} verify a flipped signature`);
}

// The reference's texts (mental_poker.py `_validate_payload` and `Transcript.append`), and our code for each.
const FLOAT = 'transcript payload must not contain float (non-deterministic)';
const BYTES_OR_SET = 'transcript payload must not contain bytes/set (non-JSON)';
const KEYS = 'transcript payload dict keys must be str';
const NOT_DICT = 'transcript payload must be a dict';
const UNSUPPORTED = 'transcript payload unsupported type: ';
const CODES: Record<string, string> = {
  [FLOAT]: 'MP_JSON_FLOAT',
  [BYTES_OR_SET]: 'MP_JSON_BYTES_OR_SET',
  [KEYS]: 'MP_JSON_KEY_NOT_STRING',
  [NOT_DICT]: 'MP_JSON_NOT_OBJECT',
};

/**
 * What the reference's `Transcript.append(type, payload)` says of a payload: the text of the ValueError
 * it raises, or null when it appends. A port of its checks over the Python value, first fault in the
 * order they meet it (a dict's key before its value, a container itself before what it holds), so that
 * the runner knows the literal was read as the reference held it before asking our transcript.
 */
export function referenceRefusal(payload: PyValue): string | null {
  if (payload.type === 'NoneType') return null; // append(t, None) appends {}
  if (payload.type !== 'dict') return NOT_DICT;
  return validatePayload(payload);
}

function validatePayload(v: PyValue): string | null {
  switch (v.type) {
    case 'NoneType':
    case 'bool':
    case 'int':
    case 'str':
      return null;
    case 'float':
      return FLOAT;
    case 'bytes':
    case 'set':
      return BYTES_OR_SET;
    case 'dict':
      for (const [k, x] of v.entries) {
        if (k.type !== 'str') return KEYS;
        const r = validatePayload(x);
        if (r !== null) return r;
      }
      return null;
    case 'list':
      for (const x of v.items) {
        const r = validatePayload(x);
        if (r !== null) return r;
      }
      return null;
    default:
      return `${UNSUPPORTED}${v.type}`;
  }
}

/**
 * JS has no tuple: this class stands for one. Our payload check refuses any object that is not plain
 * by its constructor's name without looking inside, as the reference refuses a tuple by its type name.
 */
class tuple {
  constructor(readonly items: readonly unknown[]) {}
}

/**
 * A Python value as a JS caller would hand it to our Transcript: None null, int a number (a bigint past
 * 2^53), str and bool as such, bytes a Uint8Array, set a Set, list an array, tuple the class above, a
 * dict a plain object, or a Map when a key is not a str (the one JS mapping with such keys). A float
 * keeps its value unless it is whole: JS cannot tell 327654.0 from 327654, so a whole float becomes 0.5,
 * another float in the same place (what is under test is that a float there is refused).
 */
function toJs(v: PyValue): unknown {
  switch (v.type) {
    case 'NoneType':
      return null;
    case 'bool':
    case 'str':
    case 'bytes':
      return v.value;
    case 'int':
      return v.value >= BigInt(Number.MIN_SAFE_INTEGER) && v.value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v.value) : v.value;
    case 'float':
      return Number.isInteger(v.value) && !Object.is(v.value, -0) ? 0.5 : v.value;
    case 'list':
      return v.items.map(toJs);
    case 'tuple':
      return new tuple(v.items.map(toJs));
    case 'set':
      return new Set(v.items.map(toJs));
    case 'dict': {
      if (v.entries.some(([k]) => k.type !== 'str')) return new Map(v.entries.map(([k, x]) => [toJs(k), toJs(x)]));
      const object = (entries: typeof v.entries) => {
        const o: Record<string, unknown> = {};
        // defineProperty, so that a "__proto__" key is a key and not the object's prototype.
        for (const [k, x] of entries)
          Object.defineProperty(o, (k as { value: string }).value, { value: toJs(x), enumerable: true, writable: true, configurable: true });
        return o;
      };
      const o = object(v.entries);
      if (Object.keys(o).join('\0') === v.entries.map(([k]) => (k as { value: string }).value).join('\0')) return o;
      // A JS object lists integer-like keys ("1") first whatever order they were set in, so it cannot hold
      // this dict's order, which decides which fault the reference meets first. Adapted: the entries up to
      // the first one the reference refuses (those before it are all accepted, so their order is moot).
      const fault = v.entries.findIndex(([, x]) => validatePayload(x) !== null);
      return fault < 0 ? o : object(v.entries.slice(0, fault + 1));
    }
  }
}

/**
 * Each item's `payload_python` is read as the Python value it is; the reference's rules must give the
 * item's `expect` for it (else the value was misread), and our Transcript must then refuse its JS form
 * with the code for that message, and that message, leaving the transcript empty (or append it, for an
 * item the reference accepts). A payload of None is appended as no payload.
 */
function appendRefusals(c: Crypto, v: Vec): void {
  const items = v['items'];
  if (!Array.isArray(items) || items.length === 0) throw new Error(`${v['id']}: no items`);
  for (const item of items as Vec[]) {
    const what = `${v['id']} ${item['name']}`;
    const literal = item['payload_python'];
    if (typeof literal !== 'string') throw new Error(`${what}: payload_python is not a string`);
    let payload: PyValue;
    try {
      payload = readPythonLiteral(literal);
    } catch (e) {
      if (e instanceof PyLiteralError) throw new Error(`${what}: payload_python ${JSON.stringify(literal)} is not read: ${e.message}`);
      throw e;
    }
    const expect = item['expect'] as Vec;
    const want: string | null = expect.ok === true ? null : expect.message;
    if (want !== null) eq([expect.ok, expect.error, typeof want], [false, 'ValueError', 'string'], `${what} expect`);
    eq(referenceRefusal(payload), want, `${what}: the reference's payload rules on ${literal}`);
    const t = new Transcript(c);
    let got: unknown = 'appended';
    try {
      t.append('x', (payload.type === 'NoneType' ? undefined : toJs(payload)) as JsonObject | undefined);
    } catch (e) {
      if (!(e instanceof MpError)) throw e;
      got = [e.code, e.detail];
    }
    if (want === null) {
      eq(got, 'appended', what);
      continue;
    }
    const code = CODES[want] ?? (want.startsWith(UNSUPPORTED) ? 'MP_JSON_UNSUPPORTED' : undefined);
    if (code === undefined) throw new Error(`${what}: no code of ours for the reference's ${JSON.stringify(want)}`);
    eq(got, [code, want], what);
    eq(t.length, 0, `${what} leaves the transcript empty`);
  }
}

/** Checks one case of the receipt vectors against one backend; throws on the first mismatch. */
export function checkReceiptCase(c: Crypto, v: Vec): void {
  switch (v['kind']) {
    case 'game_transcript':
      gameTranscript(c, v);
      break;
    case 'transcript':
      transcript(c, v);
      break;
    case 'append_refusals':
      appendRefusals(c, v);
      break;
    default:
      throw new Error(`unknown case kind ${String(v['kind'])}`);
  }
}

/** Every case of the receipt vector file (its text); answers how many cases of each kind it checked. */
export function checkReceiptVectors(c: Crypto, fileText: string): Record<string, number> {
  const doc = readVectors(fileText);
  eq(doc.format, RECEIPT_FORMAT, 'format');
  const counts: Record<string, number> = {};
  for (const v of doc.cases) {
    checkReceiptCase(c, v);
    counts[v['kind']] = (counts[v['kind']] ?? 0) + 1;
  }
  return counts;
}

/** The file (its text) as a conformance suite: one case per vector. */
export function receiptSuite(fileText: string): Suite {
  return vectorSuite(RECEIPT_FORMAT, readVectors(fileText).cases, checkReceiptCase);
}
