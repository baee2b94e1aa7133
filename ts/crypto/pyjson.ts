/**
 * protocol_id in pure TypeScript: the `js` backend's implementation (the `wasm` backend runs
 * crates/core/src/pyjson.rs, which mirrors this file and PROTOCOL_ID_JSON rule for rule). protocol_id
 * (NOTES A2) is the SHA-256 of the contract subset of spec.json, serialised as Python's
 * `json.dumps(sort_keys=True, ensure_ascii=False, separators=(",", ":"))` would. That is not RFC 8785:
 * keys sort by code point (not UTF-16 unit), integers are exact at any size, and non-integer numbers
 * print as Python's float repr (`1.0`, `1e+16`, `1e-05`). The spec text is therefore parsed losslessly
 * (number literals kept as written) by jcs.ts's strict parser, whose refusals (code and message) both
 * backends give.
 */
import { CryptoError } from './errors.js';
import { Entries, parseJson, RawNumber, type JsonNode } from './jcs.js';
import { pythonJson, type PythonJsonFault, type PythonJsonPolicy } from './python-json.js';

function refusal(fault: PythonJsonFault): CryptoError {
  if (fault.kind === 'not-finite') return new CryptoError('JSON_NUMBER_RANGE', `${fault.value} has no JSON form`);
  const v = fault.kind === 'unsupported' ? fault.value : undefined;
  const type = typeof v === 'object' && v !== null ? ((v as { constructor?: { name?: string } }).constructor?.name ?? 'object') : typeof v;
  return new CryptoError('JSON_UNSUPPORTED_VALUE', `a ${type} has no JSON form`);
}

/**
 * A parsed tree (Entries, RawNumbers), or a plain JS value whose whole numbers are integers of any
 * size (-0 is the float -0.0), as Python's json.dumps writes it: members met in sorted order, nothing
 * refused but what JSON has no form for (an unpaired surrogate is escaped, as JSON.stringify does).
 */
export const PROTOCOL_ID_JSON: PythonJsonPolicy = {
  floats: 'repr',
  negativeZero: 'float',
  integersBelow: Infinity,
  rawNumbers: true,
  entries: true,
  loneSurrogates: 'escaped',
  maxStringBytes: Infinity,
  depthCounts: 'containers',
  maxDepth: Infinity,
  maxItems: Infinity,
  mapKeys: 'ignored',
  symbolKeys: 'ignored',
  bytesAndSets: 'unsupported',
  memberOrder: 'sorted',
  refuse: refusal,
};

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
    out.push([
      'parameters',
      new Entries(params.entries.map(([k, v]) => [k, v instanceof Entries ? new Entries(v.entries.filter(([pk]) => pk !== 'default')) : v])),
    ]);
  if (has(spec, 'timing')) out.push(['timing', get(spec, 'timing')!]);
  return new Entries(out);
}

/** The serialised contract (the exact bytes that are hashed, as text). */
export function contractText(specText: string): string {
  return pythonJson(contractOf(parseJson(specText, { rawNumbers: true })), PROTOCOL_ID_JSON);
}
