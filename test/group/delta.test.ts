// The group JSON delta: exact round trips (a property test over random JSON values, with 1/true,
// 0/false and -0 in the mix), the reference's operation shapes on hand-made cases, and the fallbacks.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyDelta, jsonEqual, makeDelta, MAX_DELTA_OPS, MAX_DELTA_PATH_DEPTH, type DeltaOp } from '../../ts/group/delta.js';
import type { GroupJson } from '../../ts/group/json.js';
import { parseRealtimeJson, rtCanonical } from '../../ts/realtime/json.js';

// Text of a value, with booleans and numbers kept apart (true is `true`, 1 is `1`) and -0 written `0`.
const text = (v: unknown) => rtCanonical(v);

// Few keys and few scalars, so that random pairs share keys, prefixes and suffixes and the confusable
// values (1 / true, 0 / false / -0) meet often.
const scalar = fc.constantFrom<GroupJson>(0, -0, 1, 2, -1, true, false, null, '', 'x', '1', 'true', 2n ** 60n);
const json = fc.letrec<{ value: GroupJson }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalar,
    fc.array(tie('value'), { maxLength: 6 }),
    fc.dictionary(fc.constantFrom('a', 'b', 'c', '__proto__', '\uff61', '\u{1F600}'), tie('value'), { maxKeys: 4 }),
  ),
})).value;

/** A value and an edit of it: arrays grow, shrink and slide; scalars turn into their look-alikes. */
function edit(v: GroupJson, pick: () => number): GroupJson {
  const look: Record<string, GroupJson> = { '1': true, true: 1, '0': false, false: -0 };
  if (Array.isArray(v)) {
    const out = v.map((x) => (pick() < 0.3 ? edit(x, pick) : x));
    const r = pick();
    if (r < 0.2) out.push(1, true);
    else if (r < 0.4) out.splice(0, Math.min(2, out.length));
    else if (r < 0.5) out.unshift(false);
    else if (r < 0.6 && out.length > 2) out.splice(1, 1, 0);
    return out;
  }
  if (v !== null && typeof v === 'object') {
    const out: Record<string, GroupJson> = {};
    for (const k of Object.keys(v))
      if (pick() > 0.15)
        Object.defineProperty(out, k, { value: pick() < 0.4 ? edit(v[k]!, pick) : v[k], enumerable: true, writable: true, configurable: true });
    if (pick() < 0.3) out['b'] = 0;
    return out;
  }
  return look[String(v)] ?? (pick() < 0.5 ? v : [v]);
}

function roundTrip(before: GroupJson, after: GroupJson): DeltaOp[] {
  const [b0, a0] = [text(before), text(after)];
  const ops = makeDelta(before, after);
  expect(text(applyDelta(before, ops))).toBe(a0);
  // As a peer receives them: through the wire's canonical text and the lossless reader.
  expect(text(applyDelta(parseRealtimeJson(b0), parseRealtimeJson(text(ops))))).toBe(a0);
  expect(ops.length).toBeLessThanOrEqual(MAX_DELTA_OPS);
  for (const op of ops) expect(op.path.length).toBeLessThanOrEqual(MAX_DELTA_PATH_DEPTH);
  // Neither input is changed.
  expect([text(before), text(after)]).toEqual([b0, a0]);
  return ops;
}

describe('makeDelta / applyDelta', () => {
  it('round-trips random pairs of JSON values exactly', () => {
    fc.assert(
      fc.property(json, json, (before, after) => void roundTrip(before, after)),
      { numRuns: 3000 },
    );
  });

  it('round-trips random edits of a value (splices, slides, 1/true, 0/false/-0 swaps)', () => {
    fc.assert(
      fc.property(json, fc.infiniteStream(fc.double({ min: 0, max: 1, noNaN: true })), (before, stream) => {
        const it = stream[Symbol.iterator]();
        roundTrip(
          before,
          edit(before, () => it.next().value as number),
        );
      }),
      { numRuns: 3000 },
    );
  });

  it('makes no operation between equal values, and none between 0 and -0 (one JSON value)', () => {
    fc.assert(
      fc.property(json, (v) => {
        expect(makeDelta(v, parseRealtimeJson(text(v)) as GroupJson)).toEqual([]);
      }),
    );
    expect(makeDelta({ a: 0, l: [0] }, { a: -0, l: [-0] })).toEqual([]);
    expect(makeDelta({ a: 5n }, { a: 5 })).toEqual([]);
  });

  it('never takes a boolean for a number: 1 -> true and 0 -> false are changes', () => {
    // The reference's Python == makes no op here; we set each changed key.
    expect(makeDelta({ flag: 1, n: false }, { flag: true, n: 0 })).toEqual([
      { op: 'set', path: ['flag'], value: true },
      { op: 'set', path: ['n'], value: 0 },
    ]);
    expect(makeDelta(1, true)).toEqual([{ op: 'set', path: [], value: true }]);
    expect(makeDelta(false, -0)).toEqual([{ op: 'set', path: [], value: -0 }]);
    expect(makeDelta([1, 2, 3], [true, 2, 3])).toEqual([{ op: 'splice', path: [], index: 0, delete: 1, items: [true] }]);
    expect(makeDelta({ l: [[0]] }, { l: [[false]] })).toEqual([{ op: 'splice', path: ['l'], index: 0, delete: 1, items: [[false]] }]);
    expect(jsonEqual(1, true)).toBe(false);
    expect(jsonEqual(0, false)).toBe(false);
    expect(jsonEqual(0, -0)).toBe(true);
    expect(jsonEqual({ a: [1n] }, { a: [1] })).toBe(true);
  });

  it("makes the reference's splices: common prefix and suffix, or drop-then-append for a slid window", () => {
    expect(makeDelta([1, 2, 3, 4], [1, 9, 4])).toEqual([{ op: 'splice', path: [], index: 1, delete: 2, items: [9] }]);
    expect(makeDelta([1, 2, 3, 4, 5], [3, 4, 5, 6, 7])).toEqual([
      { op: 'splice', path: [], index: 0, delete: 2, items: [] },
      { op: 'splice', path: [], index: 3, delete: 0, items: [6, 7] },
    ]);
    expect(makeDelta([1, 2], [3])).toEqual([{ op: 'splice', path: [], index: 0, delete: 2, items: [3] }]);
  });

  it('orders object keys by code point, removals first, then common keys, then new ones', () => {
    const ops = makeDelta({ z: 1, '\u{1F600}': 1, '\uff61': 1 }, { '\u{1F600}': 2, '\uff61': 2, a: 0 });
    expect(ops.map((o) => [o.op, ...o.path])).toEqual([
      ['remove', 'z'],
      ['set', '\uff61'],
      ['set', '\u{1F600}'],
      ['set', 'a'],
    ]);
  });

  it('sends the whole value as one root set past 1024 operations or a path deeper than 32', () => {
    const wide = (n: number, v: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, v]));
    expect(makeDelta(wide(1024, 0), wide(1024, 1))).toHaveLength(1024);
    expect(makeDelta(wide(1025, 0), wide(1025, 1))).toEqual([{ op: 'set', path: [], value: wide(1025, 1) }]);
    const deep = (n: number, leaf: GroupJson): GroupJson => (n === 0 ? leaf : { d: deep(n - 1, leaf) });
    expect(makeDelta(deep(32, 0), deep(32, 1))).toEqual([{ op: 'set', path: Array(32).fill('d'), value: 1 }]);
    expect(makeDelta(deep(33, 0), deep(33, 1))).toEqual([{ op: 'set', path: [], value: deep(33, 1) }]);
  });

  it('hands out copies: changing the ops or the result does not reach the inputs', () => {
    const after = { a: { b: [1] } };
    const ops = makeDelta({}, after);
    (ops[0] as unknown as { value: { b: number[] } }).value.b.push(2);
    expect(after).toEqual({ a: { b: [1] } });
    const before = { l: [{ x: 1 }] };
    const out = applyDelta(before, [{ op: 'set', path: ['l', 0, 'x'], value: 2 }]) as { l: { x: number }[] };
    expect(out.l[0]!.x).toBe(2);
    expect(before.l[0]!.x).toBe(1);
  });

  it('treats "__proto__" as an ordinary key', () => {
    const out = applyDelta({}, [{ op: 'set', path: ['__proto__'], value: { polluted: true } }]) as Record<string, unknown>;
    expect(Object.keys(out)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(text(out)).toBe('{"__proto__":{"polluted":true}}');
  });
});
