/**
 * Reading the reference's mental-poker vector files as the reference wrote them: objects keep their
 * key order (they were Python dicts, and the audit reports the first failure in that order; JSON.parse
 * would move keys such as "15" ahead of others), and integers beyond 2^53 stay exact.
 */
import type { Crypto } from '../crypto/backend.js';
import { Entries, parseJson, RawNumber, type JsonNode } from '../crypto/jcs.js';
import type { Suite } from './formats.js';

/** Non-enumerable key list of each object read by `readVectors`. */
const ORDER = Symbol('key order');

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a parsed vector, checked field by field: a missing or mistyped field fails the case
export type Vec = Record<string, any>;

function fromNode(n: JsonNode): unknown {
  if (n instanceof RawNumber) {
    const x = Number(n.text);
    return n.isInteger && !Number.isSafeInteger(x) ? BigInt(n.text) : x;
  }
  if (n instanceof Entries) {
    const o: Record<string, unknown> = {};
    for (const [k, v] of n.entries) Object.defineProperty(o, k, { value: fromNode(v), enumerable: true, writable: true, configurable: true });
    Object.defineProperty(o, ORDER, { value: n.entries.map(([k]) => k) });
    return o;
  }
  if (Array.isArray(n)) return n.map(fromNode);
  return n;
}

/**
 * The reference vectors' stand-ins as the values they stand for: `{"$bigint": hex}` an exact integer,
 * `{"$float": repr}` a float (finite ones kept as written, so `1.0` stays a float), and
 * `{"$python_int_key": {...}}` a Python dict with int keys (a Map, the one JS mapping whose keys can be numbers).
 */
export function revive(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(revive);
  if (typeof v !== 'object' || v === null) return v;
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o);
  if (keys.length === 1 && typeof o['$bigint'] === 'string') {
    const t = o['$bigint'];
    return t.startsWith('-') ? -BigInt(`0x${t.slice(1)}`) : BigInt(`0x${t}`);
  }
  if (keys.length === 1 && typeof o['$float'] === 'string') {
    const x = Number(o['$float']);
    return Number.isFinite(x) ? new RawNumber(o['$float']) : x;
  }
  if (keys.length === 1 && typeof o['$python_int_key'] === 'object' && o['$python_int_key'] !== null) {
    return new Map(Object.entries(o['$python_int_key'] as Record<string, unknown>).map(([k, x]) => [Number(k), revive(x)]));
  }
  return Object.fromEntries(keys.map((k) => [k, revive(o[k])]));
}

export function readVectors(text: string): { format: string; cases: Vec[] } {
  const doc = fromNode(parseJson(text, { rawNumbers: true })) as Vec;
  if (!doc || typeof doc['format'] !== 'string' || !Array.isArray(doc['cases'])) throw new Error('not a vector file: no format and cases');
  return doc as { format: string; cases: Vec[] };
}

/** An object's entries in the file's order. */
export function entriesInOrder(o: unknown): [string, Vec[string]][] {
  if (!o || typeof o !== 'object' || Array.isArray(o)) throw new Error('expected an object');
  const keys = (o as { [ORDER]?: string[] })[ORDER] ?? Object.keys(o);
  return keys.map((k) => [k, (o as Record<string, unknown>)[k]]);
}

export function eq(got: unknown, want: unknown, what: string): void {
  const show = (v: unknown) => JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? `${x}n` : x));
  const [g, w] = [show(got), show(want)];
  if (g !== w) throw new Error(`${what}: got ${g?.slice(0, 200)}, want ${w?.slice(0, 200)}`);
}

/** A vector file as a conformance suite: one case per vector, failed by the message of what `check` throws. */
export function vectorSuite<V extends Vec>(format: string, cases: readonly V[], check: (c: Crypto, v: V) => void, keyOf?: (v: V) => string): Suite {
  return {
    format,
    cases: cases.map((v) => ({
      id: String(v['id']),
      // What counts a case once across files and backends: everything it checks.
      key: keyOf ? keyOf(v) : `${format} ${String(v['id'])} ${JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? `${x}n` : x))}`,
      run(c: Crypto) {
        try {
          check(c, v);
          return { ok: true, outcome: 'ok' };
        } catch (e) {
          if (!(e instanceof Error)) throw e;
          return { ok: false, outcome: e.message };
        }
      },
    })),
  };
}
