// Message validation: closed schemas per declared message, matched by action and direction, with a
// pointer and a stable code for every refusal.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MessageValidator, type Spec } from '../../ts/spec/index.js';

const base = JSON.parse(readFileSync(new URL('fixtures/broken-specs.json', import.meta.url), 'utf8')).base as Spec;

function spec(fields: Record<string, unknown>, direction = 'both'): Spec {
  return { name: 't', messages: [{ name: 'm', direction, fields: { action: { type: 'enum', values: ['m'], required: true }, ...fields } }] } as Spec;
}
const codes = (v: MessageValidator, msg: unknown, dir: 'host_to_guest' | 'guest_to_host' = 'guest_to_host') => {
  const r = v.check(msg, dir);
  return r.ok ? [] : r.errors.map((e) => [e.code, e.pointer]);
};

describe('message validation', () => {
  const v = new MessageValidator(base);
  const reveal = { action: 'reveal', round: 0, choice: 'rock', nonce: '0123456789abcdef' };

  it('matches by action and direction', () => {
    expect(v.check(reveal, 'guest_to_host')).toMatchObject({ ok: true, message: 'reveal' });
    expect(v.check({ action: 'ready', best_of: 3 }, 'host_to_guest')).toMatchObject({ ok: true, message: 'ready' });
    expect(codes(v, { action: 'ready', best_of: 3 }, 'guest_to_host')).toEqual([['MESSAGE_ACTION_UNKNOWN', '/action']]);
    expect(codes(v, { action: 'surrender' })).toEqual([['MESSAGE_ACTION_UNKNOWN', '/action']]);
    expect(codes(v, { round: 1 })).toEqual([['MESSAGE_ACTION_MISSING', '/action']]);
    expect(codes(v, [reveal])).toEqual([['MESSAGE_NOT_OBJECT', '/']]);
    expect(codes(v, null)).toEqual([['MESSAGE_NOT_OBJECT', '/']]);
  });

  it('refuses undeclared fields, wrong types, out-of-range values and missing required fields, all at once', () => {
    expect(codes(v, { ...reveal, extra: 1, round: -1, choice: 'lizard', nonce: undefined })).toEqual(
      expect.arrayContaining([
        ['FIELD_UNDECLARED', '/extra'],
        ['FIELD_RANGE', '/round'],
        ['FIELD_RANGE', '/choice'],
      ]),
    );
    expect(codes(v, { action: 'reveal', round: 0, choice: 'rock' })).toEqual([['FIELD_REQUIRED', '/nonce']]);
    expect(codes(v, { ...reveal, round: '0' })).toEqual([['FIELD_TYPE', '/round']]);
    expect(codes(v, { ...reveal, round: true })).toEqual([['FIELD_TYPE', '/round']]);
    expect(codes(v, { ...reveal, round: 1.5 })).toEqual([['FIELD_TYPE', '/round']]);
  });

  it.each([
    ['hash', 'a'.repeat(64), ['A'.repeat(64), 'a'.repeat(63), 7]],
    ['key', 'f'.repeat(64), ['g'.repeat(64)]],
    ['nonce', '0'.repeat(16), ['0'.repeat(15), '0'.repeat(65), 'ABCDEF0123456789']],
    ['signature', 'e'.repeat(128), ['e'.repeat(127)]],
    ['id', 'agent_1:x.y-z', ['', 'a b', 'x'.repeat(129)]],
    ['ticket', 't', ['', 'x'.repeat(2049)]],
    ['ciphertext', 'abcd', ['', 'abc', 'ABCD', 'ab'.repeat(257)]],
  ])('type %s', (type, good, bads) => {
    const m = new MessageValidator(spec({ f: { type, required: true } }));
    expect(m.check({ action: 'm', f: good }, 'guest_to_host').ok).toBe(true);
    for (const bad of bads) expect(m.check({ action: 'm', f: bad }, 'guest_to_host').ok, `${type} ${String(bad).slice(0, 10)}`).toBe(false);
  });

  it('measures text and ot_blob limits in UTF-8 bytes', () => {
    const m = new MessageValidator(spec({ t: { type: 'text', max_length: 6 }, o: { type: 'ot_blob' } }));
    expect(m.check({ action: 'm', t: 'éèà' }, 'guest_to_host').ok).toBe(true); // 6 bytes
    expect(codes(m, { action: 'm', t: 'éèàa' })).toEqual([['FIELD_TOO_LARGE', '/t']]); // 7 bytes, 4 characters
    expect(m.check({ action: 'm', o: 'x'.repeat(16384) }, 'guest_to_host').ok).toBe(true);
    expect(codes(m, { action: 'm', o: 'x'.repeat(16385) })).toEqual([['FIELD_TOO_LARGE', '/o']]);
    const d = new MessageValidator(spec({ t: { type: 'text' } }));
    expect(codes(d, { action: 'm', t: '€'.repeat(667) })).toEqual([['FIELD_TOO_LARGE', '/t']]); // 2001 bytes over the default 2000
  });

  it('checks arrays item by item, by count and by total size', () => {
    const m = new MessageValidator(spec({ a: { type: 'array', items: { type: 'integer', min: 0 }, min_items: 1, max_items: 3, max_total_bytes: 6 } }));
    expect(m.check({ action: 'm', a: [1, 22, 333] }, 'guest_to_host').ok).toBe(true);
    expect(codes(m, { action: 'm', a: [] })).toEqual([['FIELD_RANGE', '/a']]);
    expect(codes(m, { action: 'm', a: [1, 2, 3, 4] })).toEqual([['FIELD_TOO_LARGE', '/a']]);
    expect(codes(m, { action: 'm', a: [1, -2] })).toEqual([['FIELD_RANGE', '/a/1']]);
    expect(codes(m, { action: 'm', a: [1234, 5678] })).toEqual([['FIELD_TOO_LARGE', '/a']]);
  });

  it('checks json containers and their canonical size', () => {
    const m = new MessageValidator(spec({ j: { type: 'json', container: 'object', max_total_bytes: 20 } }));
    expect(m.check({ action: 'm', j: { b: 1, a: [true] } }, 'guest_to_host').ok).toBe(true);
    expect(codes(m, { action: 'm', j: [1] })).toEqual([['FIELD_TYPE', '/j']]);
    expect(codes(m, { action: 'm', j: { long: 'x'.repeat(20) } })).toEqual([['FIELD_TOO_LARGE', '/j']]);
  });

  it('refuses an action two declared messages could answer', () => {
    const amb = new MessageValidator({
      name: 'amb',
      messages: [
        { name: 'a', direction: 'both', fields: { action: { type: 'enum', values: ['go'], required: true } } },
        { name: 'b', direction: 'guest_to_host', fields: { action: { type: 'enum', values: ['go'], required: true } } },
      ],
    } as Spec);
    expect(codes(amb, { action: 'go' })).toEqual([['MESSAGE_ACTION_AMBIGUOUS', '/action']]);
    expect(amb.check({ action: 'go' }, 'host_to_guest')).toMatchObject({ ok: true, message: 'a' });
  });
});

describe('message text from the wire', () => {
  const v = new MessageValidator(spec({ i: { type: 'integer' }, j: { type: 'json' }, t: { type: 'text' } }));
  const codesOf = (text: string) => {
    const r = v.checkText(text);
    return r.ok ? [] : r.errors.map((e) => [e.code, e.pointer]);
  };

  it('refuses what strict JSON refuses, however deep it hides', () => {
    expect(codesOf('{"action":"m","j":{"a":1,"b":{"c":1,"c":2}}}')).toEqual([['MESSAGE_NOT_JSON', '/']]);
    expect(codesOf('{"action":"m","t":"\\ud800"}')).toEqual([['MESSAGE_NOT_JSON', '/']]);
    expect(codesOf(`{"action":"m","j":${'['.repeat(127)}${']'.repeat(127)}}`)).toEqual([['MESSAGE_NOT_JSON', '/']]);
    expect(codesOf(`{"action":"m","j":${'['.repeat(126)}${']'.repeat(126)}}`)).toEqual([]);
    expect(codesOf('{"action":"m","i":01}')).toEqual([['MESSAGE_NOT_JSON', '/']]);
    expect(codesOf('{"action":"m"} x')).toEqual([['MESSAGE_NOT_JSON', '/']]);
  });

  it('hands on exact values: -0 is the integer 0, a paired surrogate escape is its character, __proto__ an ordinary key', () => {
    const r = v.checkText('{"action":"m","i":-0,"t":"\\ud83d\\ude00","j":{"__proto__":[1.5,12345678901234567890]}}');
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(Object.is(r.value['i'], 0)).toBe(true);
    expect(r.value['t']).toBe('😀');
    const j = r.value['j'] as Record<string, unknown>;
    expect(Object.keys(j)).toEqual(['__proto__']);
    expect(j['__proto__']).toEqual([1.5, 12345678901234567890n]);
  });

  it('checks the member of a frame that holds the message', () => {
    expect(v.checkText('{"seq":1,"msg":{"action":"m","i":2}}', undefined, undefined, 'msg').ok).toBe(true);
    expect(v.checkText('{"seq":1,"msg":{"action":"m","i":2.0}}', undefined, undefined, 'msg').ok).toBe(false);
    expect(v.checkText('{"seq":1.5,"msg":{"action":"m","i":2}}', undefined, undefined, 'msg').ok).toBe(true);
    expect(v.checkText('{"seq":1}', undefined, undefined, 'msg').ok).toBe(false);
  });
});

describe('generated schemas', () => {
  it('of every built-in pass ajv meta-schema validation (skipped at run time for speed)', async () => {
    const { BUILTINS, builtinDir } = await import('../../ts/protocols/index.js');
    const { join } = await import('node:path');
    for (const b of BUILTINS) {
      const s = JSON.parse(readFileSync(join(builtinDir(b), 'spec.json'), 'utf8')) as Spec;
      expect(() => new MessageValidator(s, true), b.alias).not.toThrow();
    }
  });
});
