// The direct digest-payload writers (ts/rin/payload.ts) and the scanning validators must say exactly
// what the general ones say: the payload text goJsonEncode writes for the reference's struct (built here
// from the copies, member by member), the fallback to it for anything unusual, and the identifier
// grammar as its regular expression states it. The corpus cases pin the accepted payloads byte for
// byte (test/rin/conformance.test.ts); these pin the edges the corpus does not reach.
import { readFileSync, existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { type GoJsonError, goJsonEncode, RawJson } from '../../ts/crypto/gojson.js';
import { actionRequestDigest, decodeActionRequest, decodeEffects, effectPreviewDigest, RinError, type ActionRequest, type Effect } from '../../ts/rin/index.js';
import { actionRequestPayload } from '../../ts/rin/digest.js';
import { compactEffect, effectPreviewText } from '../../ts/rin/effects.js';
import { effectsPayloadBytes, requestPayloadBytes } from '../../ts/rin/payload.js';
import { validateIdentifier, validateRefs, validateText } from '../../ts/rin/validate.js';

const CORPUS = new URL('../../../shared/conformance/rin-reference/', import.meta.url);

function cases(name: string): Array<Record<string, unknown> & { id: string; expect: Record<string, unknown> }> {
  const file = new URL(name, CORPUS);
  if (!existsSync(file)) throw new Error(`conformance corpus missing: ${file.pathname} (../shared/conformance/rin-reference)`);
  return JSON.parse(readFileSync(file, 'utf8')).cases;
}

/** The direct writers' bytes as text (undefined where they leave the value to the general encoder). */
const decoder = new TextDecoder();
const requestPayloadText = (r: ActionRequest, args: string) => {
  const bytes = requestPayloadBytes(r, args);
  return bytes && decoder.decode(bytes);
};
const effectsPayloadText = (effects: readonly Effect[]) => {
  const bytes = effectsPayloadBytes(effects);
  return bytes && decoder.decode(bytes);
};

/** The general encoder's text of each payload. */
const generalRequest = (r: ActionRequest, args: string) => goJsonEncode(actionRequestPayload(r, args));
const generalEffects = (effects: readonly Effect[]) => goJsonEncode(effects.map(compactEffect));

/** A call's text or its error, comparable with toEqual. */
function outcome(f: () => string): unknown {
  try {
    return { text: f() };
  } catch (e) {
    const { name, message, code, path } = e as GoJsonError;
    return { name, message, code, path };
  }
}

function thrown(f: () => unknown): unknown {
  try {
    f();
  } catch (e) {
    return e;
  }
  throw new Error('did not throw');
}

const requests = cases('action-request-digest.json').map((c) => decodeActionRequest(c['request_json'] as string));
const request = requests.reduce((a, b) => ((b.target_refs?.length ?? 0) > (a.target_refs?.length ?? 0) ? b : a));
const withPlan = requests.find((r) => r.plan_step_ref) ?? request;
const effects = decodeEffects(cases('effect-digest.json').find((c) => c.id === 'effects-01')!.expect['canonical'] as string);

describe('request payload writer', () => {
  it('writes what the general encoder writes for every corpus request', () => {
    for (const r of requests) expect(requestPayloadText(r, '{"a":1}')).toBe(generalRequest(r, '{"a":1}'));
    expect(withPlan.plan_step_ref).toBeDefined();
  });

  it('writes the UTF-8 of that text, large payloads and small ones after them', () => {
    const encoder = new TextEncoder();
    // Arguments of 200 KiB grow the shared buffer; the next, small payloads are written from its start.
    const big = `{"a":"${'\u00e9x'.repeat(100_000)}"}`;
    for (const args of ['{"a":1}', big, '{}', '{"b":[1,2]}']) {
      for (const r of requests) expect(requestPayloadBytes(r, args)).toEqual(encoder.encode(generalRequest(r, args)));
    }
    expect(effectsPayloadBytes(effects)).toEqual(encoder.encode(generalEffects(effects)));
  });

  it('escapes keys as Go does, refs at other epochs included', () => {
    const refs = request.target_refs!;
    const odd = ['a"b\\c', '<&>', 'x\u2028y\u2029', 'caf\u00e9 \u{1d11e}', 'tab\tnl\n\u0000\u007f', ' lead'];
    const r: ActionRequest = {
      ...request,
      target_refs: refs
        .slice(0, odd.length)
        .map((ref, i) => ({ ...ref, key: odd[i]!, epoch: i % 2 ? { ...ref.epoch, world: ref.epoch.world + i } : ref.epoch })),
    };
    expect(requestPayloadText(r, '{}')).toBe(generalRequest(r, '{}'));
  });

  it('leaves anything unusual to the general encoder', () => {
    const ref = request.target_refs![0]!;
    const unusual: ActionRequest[] = [
      { ...request, target_refs: [{ ...ref, key: 'lone \ud800' }] },
      { ...request, target_refs: [{ ...ref, ephemeral: undefined as unknown as boolean }] },
      { ...request, observation_sequence: 2 ** 53 },
      { ...request, observation_sequence: '7' as unknown as number },
      { ...request, target_refs: [ref, undefined as unknown as typeof ref] },
      { ...request, capability: { id: 7 as unknown as string, version: '1.0.0' } },
    ];
    for (const r of unusual) expect(requestPayloadText(r, '{}')).toBeUndefined();
    // A lone surrogate in a key is refused by validation before any encoding.
    expect(thrown(() => actionRequestDigest(unusual[0]!))).toBeInstanceOf(RinError);
  });
});

describe('effect payload writer', () => {
  it('writes what the general encoder writes, whitespace and escapes in attributes compacted', () => {
    expect(effectsPayloadText(effects)).toBe(generalEffects(effects));
    const loose = effects.map((e, i) => ({
      ...e,
      attributes: new RawJson(` { "n" : ${i} , "s" : "a <b> & c\u2028" }\n`),
      quantity: i % 3,
      unit: i % 2 ? 'hp' : '',
    }));
    expect(effectsPayloadText(loose)).toBe(generalEffects(loose));
    expect(effectPreviewDigest(loose)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('leaves anything unusual to the general encoder, which reports it', () => {
    const first = effects[0]!;
    const unusual: Effect[][] = [
      [{ ...first, effect_id: 'x\udc00' }],
      [{ ...first, quantity: 2 ** 60 }],
      [{ ...first, attributes: { text: '{}' } as unknown as RawJson }],
      [{ ...first, reversible: 'yes' as unknown as boolean }],
      [first, undefined as unknown as Effect],
    ];
    for (const list of unusual) {
      expect(effectsPayloadText(list)).toBeUndefined();
      expect(outcome(() => effectPreviewText(list))).toEqual(outcome(() => generalEffects(list)));
    }
    expect(thrown(() => effectPreviewDigest(unusual[0]!))).toMatchObject({ code: 'JSON_UTF8', path: [0, 'effect_id'] });
    expect(thrown(() => effectPreviewDigest(unusual[1]!))).toMatchObject({ code: 'JSON_VALUE', path: [0, 'quantity'] });
  });
});

describe('scanning validators', () => {
  const GRAMMAR = /^[a-z][a-z0-9]*(?:[._-][a-z0-9]+)*$/;

  it('an identifier is what the grammar says, for every string over its alphabet up to length 4', () => {
    const alphabet = ['a', 'z', '0', '9', '.', '_', '-', 'A', ' ', '\u00e9'];
    let words = [''];
    for (let n = 0; n < 4; n++) {
      words = words.flatMap((w) => alphabet.map((ch) => w + ch));
      for (const w of words) {
        const ok = !(
          thrown(() => {
            validateIdentifier('f', w);
            throw 'passed';
          }) instanceof RinError
        );
        expect(ok, JSON.stringify(w)).toBe(GRAMMAR.test(w));
      }
    }
  });

  it('texts: blank, lone surrogates, NUL and length in code points', () => {
    for (const [text, max, message] of [
      ['\u00a0 \u3000', 10, 'is required'],
      ['a\ud800', 10, 'must be valid UTF-8 without NUL'],
      ['a\u0000', 10, 'must be valid UTF-8 without NUL'],
      ['abcd', 3, 'must contain at most 3 characters'],
    ] as const) {
      expect(thrown(() => validateText('t', text, max, true))).toMatchObject({ message: `t: ${message}` });
    }
    expect(() => validateText('t', '\u{1d11e}\u{1d11e}\u{1d11e}', 3, true)).not.toThrow();
  });

  it('refs: duplicates by (namespace, type, key), and each ref still checked at the action epoch', () => {
    const refs = request.target_refs!;
    const epoch = request.expected_epoch;
    expect(() => validateRefs('target_refs', [refs[0]!, { ...refs[1]!, key: refs[0]!.key }], epoch)).not.toThrow();
    expect(thrown(() => validateRefs('target_refs', [refs[0]!, refs[1]!, { ...refs[0]! }], epoch))).toMatchObject({
      message: 'target_refs: must not contain duplicates',
    });
    expect(thrown(() => validateRefs('target_refs', [refs[0]!, { ...refs[1]!, epoch: { ...epoch, world: epoch.world + 1 } }], epoch))).toMatchObject({
      message: 'target_refs[1].epoch: must equal action epoch',
    });
    expect(thrown(() => validateRefs('target_refs', [refs[0]!, { ...refs[1]!, type: 'Door' }], epoch))).toMatchObject({
      field: 'target_refs[1].type',
    });
    // An invalid action epoch: the ref's equal epoch is judged on its own, with the ref's field name.
    const bad = { ...epoch, session_id: 'Bad' };
    expect(thrown(() => validateRefs('target_refs', [{ ...refs[0]!, epoch: bad }], bad))).toMatchObject({
      field: 'target_refs[0].epoch.session_id',
    });
  });
});
