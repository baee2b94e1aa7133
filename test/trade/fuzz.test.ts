// Property-based fuzzing of agent-trade/0.2 envelope verification with tampered evidence: the valid
// envelopes of the project vectors are mutated as objects, as text and as bytes (fields, signatures,
// bytes, and re-encodings that keep the meaning). For every mutant both backends must give the same
// verdict without throwing, and a `valid` verdict must be about the same object:
//   - the same protocol, object_type, canonical body, body_hash and object_id;
//   - every signature it carries is, byte for byte, one the named signer made over that object.
// agent-trade leaves `issued_at` outside what is signed and lets co-signatures stand alone, so a valid
// mutant may differ there (counted apart); it can never attribute anything to a signer who did not
// sign it. The counts of inputs tried are printed at the end (`[fuzz]` lines).
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { fromBase64Url, getCrypto, toHex, utf8 } from '../../ts/crypto/index.js';
import { verifyEnvelope, type KeyMap } from '../../ts/trade/index.js';

const RUNS = Number(process.env['AIGENORA_FUZZ_RUNS'] ?? 300) * 4;
const wasm = getCrypto('wasm');
const js = getCrypto('js');

const vectors = JSON.parse(readFileSync(new URL('../../test-vectors/agent-trade/envelopes.json', import.meta.url), 'utf8')) as {
  identities: Record<string, { public_key: string }>;
  key_map: string[];
  cases: { name: string; expect: string; file?: Record<string, unknown> }[];
};
const keys: KeyMap = Object.fromEntries(vectors.key_map.map((id) => [id, vectors.identities[id]!]));
// A third known key, so that a mutation can name a real signer who did not sign.
const withMallory: KeyMap = { ...keys, agent_mallory: vectors.identities['agent_mallory']! };
const seeds = vectors.cases.filter((k) => k.expect === 'valid' && k.file).map((k) => ({ name: k.name, env: k.file! }));

type Env = Record<string, unknown> & { signatures?: unknown };
interface Sig {
  signer: string;
  algorithm: string;
  signature: string;
  issued_at: string;
}

const canon = (v: unknown) => toHex(wasm.jcs(JSON.stringify(v)));
const sigBytes = (s: string) => {
  try {
    return toHex(fromBase64Url(s));
  } catch {
    return `unreadable:${s}`;
  }
};

const counts = { tried: 0, valid: 0, identical: 0, unsignedMetadata: 0, fewerSignatures: 0, repeatedSignature: 0, reencodedSignature: 0, failures: 0 };
afterAll(() => {
  const c = counts;
  console.log(
    `[fuzz] envelopes: ${c.tried} inputs tried, ${c.valid} valid (${c.identical} identical; ${c.unsignedMetadata} differ only in unsigned issued_at; ${c.fewerSignatures} carry fewer of the original co-signatures; ${c.repeatedSignature} carry one signature twice; ${c.reencodedSignature} spell a signature's bytes in non-canonical base64url), ${c.tried - c.valid - c.failures} refused, failures ${c.failures}`,
  );
});

/** The oracle: both backends agree, nothing throws, and a valid verdict is about the same object. */
function check(original: Env, mutant: unknown, parsed: () => unknown): void {
  counts.tried++;
  try {
    const a = verifyEnvelope(wasm, mutant, withMallory);
    const b = verifyEnvelope(js, mutant, withMallory);
    expect(b.result, 'both backends agree').toBe(a.result);
    if (a.result !== 'valid') return;
    counts.valid++;
    const m = parsed() as Env;
    const ref = verifyEnvelope(wasm, original, keys);
    expect(a.objectId).toBe(ref.objectId);
    for (const k of ['protocol', 'object_type', 'body_hash']) expect(m[k]).toBe(original[k]);
    expect(canon(m['body'])).toBe(canon(original['body']));
    const genuine = new Map((original['signatures'] as Sig[]).map((s) => [s.signer, s]));
    const sigs = m['signatures'] as Sig[];
    let metadata = false;
    let reencoded = false;
    for (const s of sigs) {
      const g = genuine.get(s.signer);
      expect(g, `signature by ${s.signer}, who did not sign`).toBeDefined();
      expect(sigBytes(s.signature)).toBe(sigBytes(g!.signature));
      expect(s.algorithm).toBe('Ed25519');
      if (s.issued_at !== g!.issued_at) metadata = true;
      if (s.signature !== g!.signature) reencoded = true;
    }
    const signers = new Set(sigs.map((s) => s.signer)).size;
    if (reencoded) counts.reencodedSignature++;
    else if (metadata) counts.unsignedMetadata++;
    else if (signers < sigs.length) counts.repeatedSignature++;
    else if (signers < genuine.size) counts.fewerSignatures++;
    else counts.identical++;
  } catch (e) {
    counts.failures++;
    throw e;
  }
}

// ---- mutations of the parsed envelope ----------------------------------------------------------

const jsonValue = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom(
    'agent-trade/0.2',
    'agent-trade/0.1',
    'DEAL',
    'LISTING_REF',
    'TRADE_EVENT',
    'TRADE_RECEIPT',
    'Ed25519',
    'agent_alice',
    'agent_bob',
    'agent_mallory',
    'agent_small_order',
    '2026-11-30T10:00:00Z',
    '2026-11-30T10:00:00.5+01:00',
    `sha256:${'0'.repeat(64)}`,
    '125.5',
    '125.50',
    '0125.50',
    10,
    10.0,
    1e21,
    -0,
    '',
    null,
    true,
  ),
);

function paths(v: unknown, at: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  if (typeof v === 'object' && v !== null && at.length < 5) {
    for (const k of Array.isArray(v) ? v.map((_, i) => i) : Object.keys(v)) {
      out.push([...at, k]);
      paths((v as Record<string | number, unknown>)[k], [...at, k], out);
    }
  }
  return out;
}

function edit(root: unknown, path: (string | number)[], value: unknown | undefined, op: 'set' | 'delete' | 'add'): void {
  let o = root as Record<string | number, unknown>;
  for (const k of path.slice(0, -1)) o = o[k] as Record<string | number, unknown>;
  const last = path.at(-1)!;
  if (op === 'delete') {
    if (Array.isArray(o)) o.splice(last as number, 1);
    else delete o[last];
  } else if (op === 'add') {
    if (Array.isArray(o)) o.splice(last as number, 0, value);
    else o[`${String(last)}_x`] = value;
  } else o[last] = value;
}

const objectMutation = fc.oneof(
  // any field anywhere: set, delete, or add a sibling
  fc.tuple(fc.nat(), jsonValue, fc.constantFrom<'set' | 'delete' | 'add'>('set', 'delete', 'add')).map(([p, value, op]) => (env: Env) => {
    const ps = paths(env);
    edit(env, ps[p % ps.length]!, value, op);
  }),
  // the signatures: drop, duplicate, swap, rename the signer, take one from another envelope
  fc
    .tuple(
      fc.nat(),
      fc.nat(),
      fc.constantFrom('drop', 'duplicate', 'swap', 'rename', 'foreign', 'reverse'),
      fc.constantFrom('agent_alice', 'agent_bob', 'agent_mallory', 'agent_small_order', 'nobody'),
    )
    .map(([i, j, op, who]) => (env: Env) => {
      const sigs = env.signatures;
      if (!Array.isArray(sigs) || sigs.length === 0) return;
      const a = i % sigs.length;
      const b = j % sigs.length;
      if (op === 'drop') sigs.splice(a, 1);
      else if (op === 'duplicate') sigs.push(structuredClone(sigs[a]));
      else if (op === 'swap') [sigs[a], sigs[b]] = [sigs[b], sigs[a]];
      else if (op === 'reverse') sigs.reverse();
      else if (op === 'rename' && typeof sigs[a] === 'object' && sigs[a] !== null) (sigs[a] as Sig).signer = who;
      else if (op === 'foreign') sigs[a] = structuredClone((seeds[j % seeds.length]!.env['signatures'] as Sig[])[0]);
    }),
  // a signature's text: one character changed (the last one carries 4 spare bits in base64url)
  fc.tuple(fc.nat(), fc.nat(), fc.constantFrom(...'AQgwBCDEabc_-0129'.split(''))).map(([i, at, ch]) => (env: Env) => {
    const sigs = env.signatures as Sig[] | undefined;
    const s = Array.isArray(sigs) ? sigs[i % Math.max(1, sigs.length)] : undefined;
    if (!s || typeof s.signature !== 'string' || s.signature.length === 0) return;
    const p = at % 3 === 0 ? s.signature.length - 1 : at % s.signature.length;
    s.signature = s.signature.slice(0, p) + ch + s.signature.slice(p + 1);
  }),
);

// ---- mutations of the text and bytes -----------------------------------------------------------

/** Re-encodings that keep the meaning: spaces, other key orders, \u escapes. */
function reencode(env: Env, how: number): string {
  const order = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(order);
    if (typeof v !== 'object' || v === null) return v;
    const keys = Object.keys(v);
    if (how % 2) keys.reverse();
    return Object.fromEntries(keys.map((k) => [k, order((v as Record<string, unknown>)[k])]));
  };
  let text = JSON.stringify(order(env), null, how % 3);
  if (how % 5 === 0) text = text.replace(/[a-z]/g, (ch) => (ch.charCodeAt(0) % 7 === 0 ? `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}` : ch));
  return text;
}

const textMutation = fc.record({
  at: fc.nat(),
  del: fc.nat({ max: 3 }),
  ins: fc.string({
    maxLength: 3,
    unit: fc.oneof(fc.constantFrom('"', '{', '}', ',', ':', '0', '\\', ' ', '\n', 'e', '.', '-'), fc.string({ minLength: 1, maxLength: 1, unit: 'binary' })),
  }),
});
const byteMutation = fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 3 });

describe('envelope verification under tampering (fast-check)', () => {
  it('the seeds are valid envelopes of every object type', () => {
    expect(new Set(seeds.map((s) => s.env['object_type']))).toEqual(new Set(['LISTING_REF', 'DEAL', 'TRADE_EVENT', 'TRADE_RECEIPT']));
    for (const s of seeds) expect(verifyEnvelope(wasm, s.env, keys).result, s.name).toBe('valid');
  });

  it('mutated envelope objects: refused, or the same object signed by the same signers', () => {
    fc.assert(
      fc.property(fc.nat(), fc.array(objectMutation, { minLength: 1, maxLength: 3 }), (i, ms) => {
        const original = seeds[i % seeds.length]!.env;
        const env = structuredClone(original) as Env;
        for (const m of ms) m(env);
        check(original, env, () => env);
      }),
      { numRuns: RUNS, seed: 0x7a4de },
    );
  });

  it('mutated envelope text: refused, or the same object signed by the same signers', () => {
    fc.assert(
      fc.property(fc.nat(), fc.nat(), fc.array(textMutation, { minLength: 0, maxLength: 3 }), (i, how, ms) => {
        const original = seeds[i % seeds.length]!.env;
        let text = reencode(original, how);
        for (const x of ms) {
          const at = x.at % (text.length + 1);
          text = text.slice(0, at) + x.ins + text.slice(at + x.del);
        }
        check(original, text, () => JSON.parse(text));
      }),
      { numRuns: RUNS, seed: 0x7e47 },
    );
  });

  it('mutated envelope bytes (invalid UTF-8 included): refused, or the same object', () => {
    fc.assert(
      fc.property(fc.nat(), byteMutation, (i, flips) => {
        const original = seeds[i % seeds.length]!.env;
        const bytes = utf8(JSON.stringify(original));
        for (const [at, value] of flips) bytes[at % bytes.length] = value;
        check(original, bytes, () => JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes)));
      }),
      { numRuns: RUNS, seed: 0xb17e5 },
    );
  });
});
