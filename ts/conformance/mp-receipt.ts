/**
 * The reference's mental-poker transcript-receipt vectors (../shared/conformance/aigenora-reference/
 * aigenora-mp-receipt-vectors.json, format in that folder's README) against one backend: event bytes,
 * roots, receipt signatures and the payloads the transcript refuses. The test suite and `aigenora
 * conformance` both run them through here. The file is read from its text (see mp-vectors.ts).
 */
import type { Crypto } from '../crypto/backend.js';
import { fromHex, toHex } from '../crypto/encoding.js';
import { parseJsonExact, type JsonObject } from '../mp/canonical.js';
import { MpError } from '../mp/errors.js';
import { Transcript } from '../mp/transcript.js';
import type { Suite } from './formats.js';
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

/**
 * Each refusal case as a JS value. Python's values are written as literals in the file; JS has no
 * tuple and no whole-valued float, so those two are `adapted`: a Date stands for the tuple (another
 * type JSON cannot carry) and 327654.5 for 327654.0 (the refusal of a float nested in lists and dicts).
 */
const REFUSALS: Record<string, { python: string; value: () => unknown; ourMessage?: string }> = {
  float: { python: "{'x': 327654.5}", value: () => ({ x: 327654.5 }) },
  bytes: { python: "{'x': b'\\xd9\\xd9'}", value: () => ({ x: Uint8Array.of(0xd9, 0xd9) }) },
  set: { python: "{'x': {327654}}", value: () => ({ x: new Set([327654]) }) },
  int_key: { python: "{'x': {327654: 'a'}}", value: () => ({ x: new Map([[327654, 'a']]) }) },
  list_payload: { python: "['327654']", value: () => ['327654'] },
  tuple_value: { python: "{'x': (327654, 2)}", value: () => ({ x: new Date(0) }), ourMessage: 'transcript payload unsupported type: Date' },
  nested_float: { python: "{'a': [{'b': [327654.0]}]}", value: () => ({ a: [{ b: [327654.5] }] }) },
};

/** Our code for each reference message. */
const CODES: Record<string, string> = {
  'transcript payload must not contain float (non-deterministic)': 'MP_JSON_FLOAT',
  'transcript payload must not contain bytes/set (non-JSON)': 'MP_JSON_BYTES_OR_SET',
  'transcript payload dict keys must be str': 'MP_JSON_KEY_NOT_STRING',
  'transcript payload must be a dict': 'MP_JSON_NOT_OBJECT',
};

function appendRefusals(c: Crypto, v: Vec): void {
  eq(
    (v['items'] as Vec[]).map((i) => i['name']),
    Object.keys(REFUSALS),
    `${v['id']} cases`,
  );
  for (const item of v['items'] as Vec[]) {
    const r = REFUSALS[item['name']]!;
    const what = `${v['id']} ${item['name']}`;
    eq(item['payload_python'], r.python, `${what} payload`);
    eq([item['expect'].ok, item['expect'].error], [false, 'ValueError'], what);
    const t = new Transcript(c);
    let got: unknown = 'no error';
    try {
      t.append('x', r.value() as JsonObject);
    } catch (e) {
      if (!(e instanceof MpError)) throw e;
      got = [e.code, e.detail];
    }
    const message: string = item['expect'].message;
    const want = r.ourMessage ? ['MP_JSON_UNSUPPORTED', r.ourMessage] : [CODES[message], message];
    eq(got, want, what);
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
