// protocol_id, differential: random spec-like texts (contract keys, flow modes, parameters with
// defaults, floats in every notation, big integers, escapes, astral keys, nesting near the bound) and
// corrupted copies of them give the same id, or the same refusal (code and message), on the wasm
// backend (the Rust core) and the js backend (the TypeScript parser). Seeded, so a failure repeats.
import { describe, expect, it } from 'vitest';
import { getCrypto } from '../../ts/crypto/index.js';
import { CryptoError } from '../../ts/crypto/errors.js';

const wasm = getCrypto('wasm');
const js = getCrypto('js');

function outcome(f: () => string): string {
  try {
    return `id ${f()}`;
  } catch (e) {
    if (e instanceof CryptoError) return `error ${e.message}`;
    throw e;
  }
}

/** xorshift32: a small seeded generator. */
function rng(seed: number) {
  let s = seed >>> 0 || 1;
  const next = () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 2 ** 32;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
  return { next, int, pick };
}

type Rng = ReturnType<typeof rng>;

const KEYS = [
  'messages',
  'rules',
  'choices',
  'commit_reveal',
  'flow',
  'parameters',
  'timing',
  'name',
  'default',
  'mode',
  'phases',
  'round',
  'realtime',
  'group',
  'type',
  '',
  'é',
  '\u00ff',
  '\ue000',
  '\uffff',
  '😀',
  '\u{10000}',
  'a\u0000',
  'A',
  'z',
];
const MODES = ['simultaneous_round', 'authoritative_realtime', 'authoritative_group', 'session_loop', '', 'free', 'constructor'];
const CHARS = ['a', 'Z', ' ', 'é', '中', '😀', '\u2028', '\u007f', '\ue000', '\uffff', '"', '\\', '/', '\n', '\t', '\u0000', '\u001f', '\b', '\f', '\r'];

function str(r: Rng, s: string): string {
  // Each character raw (where JSON allows it) or escaped, in upper- or lower-case hex.
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    const mustEscape = ch === '"' || ch === '\\' || cp < 0x20;
    const form = r.int(4);
    if (!mustEscape && form < 2) out += ch;
    else if (form === 2 && ch.length === 1 && '"\\/\b\f\n\r\t'.includes(ch)) out += JSON.stringify(ch).slice(1, -1) || `\\${ch}`;
    else {
      const units = Array.from({ length: ch.length }, (_, i) => ch.charCodeAt(i));
      out += units
        .map((u) => `\\u${u.toString(16).padStart(4, '0')}`)
        .map((e) => (r.int(2) ? e.toUpperCase().replace('\\U', '\\u') : e))
        .join('');
    }
  }
  return `${out}"`;
}

function number(r: Rng): string {
  switch (r.int(8)) {
    case 0:
      return String(r.int(1000) - 500);
    case 1:
      return `${r.pick(['', '-'])}${'9'.repeat(1 + r.int(60))}`;
    case 2:
      return r.pick(['-0', '0', '-0.0', '0.0', '0e0', '-0E-5', '1e-400', '1e308', '1.7976931348623157e308']);
    case 3: {
      const x = (r.next() - 0.5) * 10 ** (r.int(50) - 25);
      return r.pick([String(x), x.toExponential(), x.toPrecision(1 + r.int(21))]).replace('+', r.pick(['+', '']));
    }
    case 4:
      return `${r.int(10)}.${r.int(100000)}e${r.pick(['', '+', '-'])}${r.int(30)}`;
    case 5:
      return `${r.int(100)}.${'0'.repeat(r.int(20))}${r.int(10)}`;
    case 6:
      return `0.${'0'.repeat(r.int(8))}${r.int(1000)}`;
    default:
      return `${1 + r.int(9)}${'0'.repeat(r.int(25))}.0`;
  }
}

function value(r: Rng, depth: number): string {
  const ws = () => (r.int(6) === 0 ? r.pick([' ', '\n', '\t', '\r\n  ']) : '');
  const k = depth > 6 ? r.int(5) : r.int(9);
  switch (k) {
    case 0:
      return number(r);
    case 1:
      return str(r, Array.from({ length: r.int(6) }, () => r.pick(CHARS)).join(''));
    case 2:
      return r.pick(['true', 'false', 'null']);
    case 3:
      return str(r, r.pick(MODES));
    case 4:
      return r.pick(['[]', '{}', '""', '0', '0.0']);
    case 5:
    case 6: {
      const n = r.int(5);
      return `[${ws()}${Array.from({ length: n }, () => value(r, depth + 1)).join(`${ws()},${ws()}`)}${ws()}]`;
    }
    default:
      return object(r, depth + 1, r.int(6));
  }
}

function object(r: Rng, depth: number, n: number): string {
  const keys = new Set<string>();
  while (keys.size < n) keys.add(r.pick(KEYS) + (r.int(4) === 0 ? r.pick(CHARS.slice(0, 8)) : ''));
  const members = [...keys].map((key) => `${str(r, key)}:${key === 'mode' ? str(r, r.pick(MODES)) : value(r, depth)}`);
  return `{${members.join(',')}}`;
}

function spec(r: Rng): string {
  const parts: string[] = [];
  for (const key of ['messages', 'rules', 'choices', 'commit_reveal', 'timing', 'name']) if (r.int(2)) parts.push(`"${key}":${value(r, 1)}`);
  if (r.int(3)) {
    const mode = r.pick(MODES);
    const flow = [`"mode":${r.int(5) ? str(r, mode) : value(r, 2)}`, `"phases":${value(r, 2)}`];
    for (const conf of ['round', 'realtime', 'group']) if (r.int(2)) flow.push(`"${conf}":${r.int(3) ? object(r, 3, r.int(3)) : value(r, 3)}`);
    parts.push(`"flow":{${flow.join(',')}}`);
  }
  if (r.int(2)) {
    const params = Array.from({ length: r.int(4) }, (_, i) => `"p${i}":${r.int(3) ? `{"default":${value(r, 3)},"type":${value(r, 3)}}` : value(r, 2)}`);
    parts.push(`"parameters":{${params.join(',')}}`);
  }
  if (r.int(8) === 0) parts.push(`"rules":${'['.repeat(120 + r.int(12))}${']'.repeat(120 + r.int(12))}`);
  return `{${parts.sort(() => r.next() - 0.5).join(',')}}`;
}

/** A copy of `text` with a few characters deleted, duplicated or replaced. */
function corrupt(r: Rng, text: string): string {
  const cs = Array.from(text);
  for (let k = 1 + r.int(3); k > 0 && cs.length > 0; k--) {
    const at = r.int(cs.length);
    const op = r.int(3);
    if (op === 0) cs.splice(at, 1);
    else if (op === 1) cs.splice(at, 0, cs[at]!);
    else cs[at] = r.pick(['{', '}', '[', ']', '"', ',', ':', '\\', 'u', '0', '-', '.', 'e', ' ', 't', '😀', '\u0001']);
  }
  return cs.join('');
}

describe('protocol_id, wasm backend against js backend', () => {
  it('agree on random spec-like texts and their corruptions', () => {
    const r = rng(0x5eed17);
    const seen = { ids: 0, errors: new Set<string>() };
    for (let i = 0; i < 1500; i++) {
      const good = spec(r);
      for (const text of [good, corrupt(r, good), corrupt(r, good)]) {
        const a = outcome(() => wasm.protocolId(text));
        expect(a, text).toBe(outcome(() => js.protocolId(text)));
        if (a.startsWith('id ')) seen.ids++;
        else seen.errors.add(a.split(':')[0]!);
      }
    }
    // The generator reaches both outcomes and several kinds of refusal.
    expect(seen.ids).toBeGreaterThan(1500);
    expect(seen.errors.size).toBeGreaterThanOrEqual(4);
  });
});
