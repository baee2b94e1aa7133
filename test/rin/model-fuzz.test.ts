// Hostile wire texts: the reference vectors' own texts cut, spliced and bit-flipped (a seeded PRNG, so
// a failure reproduces). Whatever the text, decoding, validating, sealing, normalizing and binding
// either succeed or throw a RinError: never another exception, never a stack overflow.
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { needShared } from '../shared/require.js';
import { getCrypto } from '../../ts/crypto/index.js';
import {
  actionRequestDigest,
  compileSchema,
  decodeActionRequest,
  decodeCapabilitySpec,
  decodeEffects,
  decodeHostManifest,
  HostRegistry,
  newSchema,
  normalizeEffectsWith,
  RinError,
  sealCapabilitySpec,
  validateHostManifest,
} from '../../ts/rin/index.js';

const DIR = new URL('../../../shared/conformance/rin-reference/', import.meta.url);
const skip = !needShared('conformance/rin-reference', 'the rin.host/v2 reference vectors (their texts are the fuzz seeds)');

function doc(kind: string): { shared?: Record<string, any>; cases: Record<string, any>[] } {
  const file = new URL(`${kind}.json`, DIR);
  if (!existsSync(file)) throw new Error(`${file.pathname} is absent; put the corpora there or set AIGENORA_SKIP_CORPORA=1 to skip`);
  return JSON.parse(readFileSync(file, 'utf8'));
}

/** xorshift32: a small deterministic generator. */
function prng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

const PIECES = [
  '{',
  '}',
  '[',
  ']',
  '"',
  ',',
  ':',
  '\\',
  '\\u',
  'd800',
  '-',
  '0',
  '1e400',
  '9007199254740992',
  'null',
  'true',
  ' ',
  '\u0000',
  '\u2028',
  'é',
  '𝄞',
];

function mutate(text: string, rnd: () => number): string {
  const at = () => Math.floor(rnd() * (text.length + 1));
  switch (Math.floor(rnd() * 5)) {
    case 0:
      return text.slice(0, at());
    case 1: {
      const i = at();
      return text.slice(0, i) + PIECES[Math.floor(rnd() * PIECES.length)] + text.slice(i);
    }
    case 2: {
      const i = at();
      return text.slice(0, i) + text.slice(i + 1 + Math.floor(rnd() * 8));
    }
    case 3: {
      const i = Math.min(at(), text.length - 1);
      return text.slice(0, i) + String.fromCharCode(text.charCodeAt(i) ^ (1 << Math.floor(rnd() * 7))) + text.slice(i + 1);
    }
    default: {
      // A member's value replaced by another JSON value.
      const values = ['0', '-1', '7.0', '18446744073709551616', '"x"', '[]', '{}', 'null', 'false', `"${'a'.repeat(300)}"`];
      return text.replace(/:("[^"]*"|-?[0-9][0-9.eE+-]*|true|false|null)/, (_m) => `:${values[Math.floor(rnd() * values.length)]}`);
    }
  }
}

/** Runs `f`; anything thrown that is not a RinError fails the test with the input. */
function only(f: () => unknown, input: string): 'ok' | 'refused' {
  try {
    f();
    return 'ok';
  } catch (e) {
    if (e instanceof RinError) return 'refused';
    throw new Error(`${(e as Error).name}: ${(e as Error).message} for input ${JSON.stringify(input.slice(0, 300))}`);
  }
}

describe.each(['wasm', 'js'])('%s backend', (backend) => {
  const c = getCrypto(backend);
  const ROUNDS = 6;

  it.skipIf(skip)('mutated requests, specs, effects and manifests are refused with a RinError or accepted', () => {
    const rnd = prng(0x5eed);
    const seen = { ok: 0, refused: 0 };
    const tally = (r: 'ok' | 'refused') => seen[r]++;
    const fence = doc('epoch-fencing');
    const registry = new HostRegistry(decodeHostManifest(fence.shared!['host_manifest_json']), c);
    registry.register(decodeCapabilitySpec(fence.shared!['capability_spec_json']));
    const effectSchema = compileSchema(newSchema(doc('effect-digest').shared!['effect_schema_document'], c), c);

    for (const v of doc('action-request-validation').cases.concat(doc('epoch-fencing').cases)) {
      for (let k = 0; k < ROUNDS; k++) {
        const t = mutate(v['request_json'], rnd);
        tally(only(() => actionRequestDigest(decodeActionRequest(t), c), t));
        if (v['current']) tally(only(() => registry.validateRequest(decodeActionRequest(t), v['current'].epoch, v['current'].observation_sequence), t));
      }
    }
    for (const v of doc('capability-validation').cases) {
      for (let k = 0; k < ROUNDS; k++) {
        const t = mutate(v['spec_json'], rnd);
        tally(only(() => sealCapabilitySpec(decodeCapabilitySpec(t), c), t));
      }
    }
    for (const v of doc('effect-digest').cases) {
      for (let k = 0; k < ROUNDS; k++) {
        const t = mutate(v['effects_json'], rnd);
        tally(only(() => normalizeEffectsWith(decodeEffects(t), v['epoch'], v['max_effects'], v['risk_floor'], effectSchema, c), t));
      }
    }
    for (const v of doc('manifest-validation').cases) {
      for (let k = 0; k < ROUNDS; k++) {
        const t = mutate(v['manifest_json'], rnd);
        tally(only(() => validateHostManifest(decodeHostManifest(t)), t));
      }
    }
    for (const v of doc('schema-canonicalization').cases) {
      for (let k = 0; k < ROUNDS; k++) {
        const t = mutate(v['document'], rnd);
        tally(only(() => newSchema(t, c), t));
      }
    }
    // Both outcomes occur: the mutations are neither all harmless nor all fatal.
    expect(seen.ok).toBeGreaterThan(50);
    expect(seen.refused).toBeGreaterThan(500);
  });

  it('texts nested to the parser limit and beyond are refused or decoded, not a stack overflow', () => {
    for (const depth of [9990, 10001, 200_000]) {
      const deep = `{"arguments":{"a":${'['.repeat(depth)}${']'.repeat(depth)}}}`;
      only(() => decodeActionRequest(deep), deep);
      only(
        () =>
          newSchema(
            `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","additionalProperties":false,"x":${'['.repeat(depth)}${']'.repeat(depth)}}`,
            c,
          ),
        'deep schema',
      );
    }
  });
});
