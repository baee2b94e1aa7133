/**
 * protocol_id in pure TypeScript: the `js` backend's implementation (the `wasm` backend runs
 * crates/core/src/pyjson.rs, which mirrors this file rule for rule). protocol_id (NOTES A2) is the
 * SHA-256 of the contract subset of spec.json, serialised as Python's `json.dumps(sort_keys=True,
 * ensure_ascii=False, separators=(",", ":"))` would. That is not RFC 8785: keys sort by code point (not
 * UTF-16 unit), integers are exact at any size, and non-integer numbers print as Python's float repr
 * (`1.0`, `1e+16`, `1e-05`). The spec text is therefore parsed losslessly (number literals kept as
 * written) by jcs.ts's strict parser, whose refusals (code and message) both backends give.
 */
import { CryptoError } from './errors.js';
import { Entries, parseJson, RawNumber, type JsonNode } from './jcs.js';

/** Python's repr() of a finite double: shortest round-trip digits, fixed for 1e-4 <= |x| < 1e16. */
export function pythonFloatRepr(x: number): string {
  if (!Number.isFinite(x)) throw new CryptoError('JSON_NUMBER_RANGE', `${x} has no JSON form`);
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const [mant, expText] = x.toExponential().split('e') as [string, string];
  const sign = mant.startsWith('-') ? '-' : '';
  const digits = mant.replace('-', '').replace('.', '');
  const k = Number(expText);
  if (k >= -4 && k < 16) {
    if (k >= 0) {
      const int = digits.slice(0, k + 1).padEnd(k + 1, '0');
      return `${sign}${int}.${digits.slice(k + 1) || '0'}`;
    }
    return `${sign}0.${'0'.repeat(-k - 1)}${digits}`;
  }
  const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
  return `${sign}${m}e${k < 0 ? '-' : '+'}${String(Math.abs(k)).padStart(2, '0')}`;
}

const SURROGATE = /[\ud800-\udfff]/;

export function codePointCompare(a: string, b: string): number {
  // Python compares str by code point; JS `<` compares UTF-16 units, which differs only when a
  // surrogate (an astral character) is involved, so the slow path runs only then.
  if (!SURROGATE.test(a) && !SURROGATE.test(b)) return a < b ? -1 : a > b ? 1 : 0;
  const x = Array.from(a);
  const y = Array.from(b);
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i]!.codePointAt(0)! - y[i]!.codePointAt(0)!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

/**
 * Python json.dumps(sort_keys=True, ensure_ascii=False, separators=(",", ":")) of a parsed tree, or of
 * a plain JS value (whose integral numbers are written as integers).
 */
export function pythonJson(node: JsonNode | Record<string, unknown>): string {
  if (node === null) return 'null';
  if (node === true) return 'true';
  if (node === false) return 'false';
  if (node instanceof RawNumber) return node.isInteger ? BigInt(node.text).toString() : pythonFloatRepr(Number(node.text));
  if (typeof node === 'number') return Number.isInteger(node) && !Object.is(node, -0) ? BigInt(node).toString() : pythonFloatRepr(node);
  if (typeof node === 'string') return JSON.stringify(node); // same escapes as Python for well-formed text
  if (Array.isArray(node)) return `[${node.map((v) => pythonJson(v as JsonNode)).join(',')}]`;
  const entries = node instanceof Entries ? node.entries : (Object.entries(node) as [string, JsonNode][]);
  const sorted = [...entries].sort((a, b) => codePointCompare(a[0], b[0]));
  return `{${sorted.map(([k, v]) => `${JSON.stringify(k)}:${pythonJson(v)}`).join(',')}}`;
}

const get = (o: Entries, key: string): JsonNode | undefined => o.entries.find(([k]) => k === key)?.[1];
const has = (o: Entries, key: string): boolean => o.entries.some(([k]) => k === key);

/** Python truthiness of a parsed value. */
function truthy(v: JsonNode | undefined): boolean {
  if (v === undefined || v === null || v === false) return false;
  if (v instanceof RawNumber) return Number(v.text) !== 0;
  if (typeof v === 'number') return v !== 0;
  if (typeof v === 'string') return v.length > 0;
  if (Array.isArray(v)) return v.length > 0;
  if (v instanceof Entries) return v.entries.length > 0;
  return true;
}

const MODE_KEY: Record<string, string> = { simultaneous_round: 'round', authoritative_realtime: 'realtime', authoritative_group: 'group' };

function flowContract(flow: JsonNode | undefined): Entries | undefined {
  if (!(flow instanceof Entries)) return undefined;
  const out: [string, JsonNode][] = [];
  const phases = get(flow, 'phases');
  if (truthy(phases)) out.push(['phases', phases!]);
  const mode = get(flow, 'mode');
  if (typeof mode === 'string' && mode !== '' && mode !== 'session_loop') {
    out.push(['mode', mode]);
    const key = MODE_KEY[mode];
    const conf = key ? get(flow, key) : undefined;
    if (key && conf instanceof Entries) out.push([key, conf]);
  }
  return out.length ? new Entries(out) : undefined;
}

/** The contract subset of a parsed spec (NOTES A2 step 1–2). */
export function contractOf(spec: JsonNode): Entries {
  if (!(spec instanceof Entries)) throw new CryptoError('JSON_SYNTAX', 'spec.json must be a JSON object');
  const out: [string, JsonNode][] = [];
  for (const key of ['messages', 'rules', 'choices', 'commit_reveal']) if (has(spec, key)) out.push([key, get(spec, key)!]);
  const flow = flowContract(get(spec, 'flow'));
  if (flow) out.push(['flow', flow]);
  const params = get(spec, 'parameters');
  if (params instanceof Entries)
    out.push(['parameters', new Entries(params.entries.map(([k, v]) => [k, v instanceof Entries ? new Entries(v.entries.filter(([pk]) => pk !== 'default')) : v]))]);
  if (has(spec, 'timing')) out.push(['timing', get(spec, 'timing')!]);
  return new Entries(out);
}

/** The serialised contract (the exact bytes that are hashed, as text). */
export function contractText(specText: string): string {
  return pythonJson(contractOf(parseJson(specText, { rawNumbers: true })));
}
