// The mp-receipt runner's `append_refusals` cases (ts/conformance/mp-receipt.ts) with payloads other than
// the corpus's own, as a regenerated vector file would hold them: each `payload_python` is read as the
// Python value and must be refused with the message the case expects, on both backends. The messages are
// what the reference's Transcript.append (src/aigenora/proto/mental_poker.py, commit 25ede27) raises for
// these payloads, obtained by calling it.
import { describe, expect, it } from 'vitest';
import { getCrypto, type Crypto } from '../../ts/crypto/index.js';
import { checkReceiptCase, receiptSuite, RECEIPT_FORMAT } from '../../ts/conformance/mp-receipt.js';

const FLOAT = 'transcript payload must not contain float (non-deterministic)';
const BYTES_OR_SET = 'transcript payload must not contain bytes/set (non-JSON)';
const KEYS = 'transcript payload dict keys must be str';
const NOT_DICT = 'transcript payload must be a dict';
const TUPLE = 'transcript payload unsupported type: tuple';

/** payload_python → the reference's refusal (null: appended). */
const PAYLOADS: [string, string | null][] = [
  ["{'x': 12345.5}", FLOAT],
  ["{'a': [{'b': [12345.0]}]}", FLOAT],
  ["{'a': {'b': {'c': [1, [2, [3.25]]]}}}", FLOAT],
  ["{'x': -0.0}", FLOAT],
  ["{'x': 1e400}", FLOAT],
  ["{'x': -inf}", FLOAT],
  ["{'x': nan}", FLOAT],
  ["{'x': {'y': 1.5}, 'z': {3}}", FLOAT],
  ["{'a': 1.5, 'b': b''}", FLOAT],
  // A container is refused for what it is before what it holds: a float inside a tuple or a set is not reached.
  ["{'a': (1, 2.25)}", TUPLE],
  ["{'x': [1, 2, {'y': (3,)}]}", TUPLE],
  ["{'x': ()}", TUPLE],
  ["{'b': {1.0}}", BYTES_OR_SET],
  ["{'x': set()}", BYTES_OR_SET],
  ["{'x': b'\\x00\\xff'}", BYTES_OR_SET],
  ["{'a': b'', 'b': 1.5}", BYTES_OR_SET],
  ['{2: 1.5}', KEYS],
  ["{'x': {1: 1.5}}", KEYS],
  ["{1.5: 'a'}", KEYS],
  ["{(1, 2): 'a'}", KEYS],
  ['[1.5]', NOT_DICT],
  ['(1,)', NOT_DICT],
  ['()', NOT_DICT],
  ['set()', NOT_DICT],
  // JS lists the key '1' first; the reference meets 'b' first.
  ["{'b': 1.5, '1': b'x'}", FLOAT],
  ["{'__proto__': 1.5}", FLOAT],
  ['None', null],
  ['{}', null],
  ["{'a': [None, True, 1000000000000000000000000000000], 'b': 'x', 'c': -5}", null],
];

const item = (payload: string, message: string | null, name = payload) => ({
  name,
  payload_python: payload,
  expect: message === null ? { ok: true } : { ok: false, error: 'ValueError', message },
});

const refusals = (items: unknown[]) => ({ kind: 'append_refusals', id: 'built-in-test', items });

describe.each(['wasm', 'js'])('%s backend', (name) => {
  const c: Crypto = getCrypto(name);

  it.each(PAYLOADS)('checks %s against the refusal the case expects', (payload, message) => {
    expect(() => checkReceiptCase(c, refusals([item(payload, message)]))).not.toThrow();
  });

  it("passes a file whose append_refusals case holds other payloads than the corpus's", () => {
    // The corpus case's seven items with 12345 for its 327654: the shape a regenerated file would have.
    const file = {
      format: RECEIPT_FORMAT,
      cases: [
        refusals([
          item("{'x': 12345.5}", FLOAT, 'float'),
          item("{'x': b'\\xd9\\xd9'}", BYTES_OR_SET, 'bytes'),
          item("{'x': {12345}}", BYTES_OR_SET, 'set'),
          item("{'x': {12345: 'a'}}", KEYS, 'int_key'),
          item("['12345']", NOT_DICT, 'list_payload'),
          item("{'x': (12345, 2)}", TUPLE, 'tuple_value'),
          item("{'a': [{'b': [12345.0]}]}", FLOAT, 'nested_float'),
        ]),
      ],
    };
    const suite = receiptSuite(JSON.stringify(file));
    expect(suite.cases.map((x) => x.run(c))).toEqual([{ ok: true, outcome: 'ok' }]);
  });

  it('fails a case whose expectation is not what the reference says of the payload, and says why', () => {
    expect(() => checkReceiptCase(c, refusals([item("{'x': 12345.5}", BYTES_OR_SET)]))).toThrow(
      `built-in-test {'x': 12345.5}: the reference's payload rules on {'x': 12345.5}: got "${FLOAT}", want "${BYTES_OR_SET}"`,
    );
    expect(() => checkReceiptCase(c, refusals([item("{'x': 12345}", FLOAT)]))).toThrow('got null');
    expect(() => checkReceiptCase(c, refusals([item("{'x': 1+2j}", FLOAT)]))).toThrow(
      `payload_python "{'x': 1+2j}" is not read: PY_LITERAL_UNSUPPORTED at offset 7`,
    );
    expect(() => checkReceiptCase(c, refusals([]))).toThrow('no items');
  });
});
