// The reference's authoritative_group vectors on both backends, read in place from ../shared/conformance.
// A missing file fails, unless AIGENORA_SKIP_CORPORA=1 asks to skip it.
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { needShared } from '../shared/require.js';
import { getCrypto } from '../../ts/crypto/index.js';
import { checkGroupVectors, groupSuite } from '../../ts/conformance/group.js';

const CORPUS = new URL('../../../shared/conformance/aigenora-reference/aigenora-group-vectors.json', import.meta.url);
const skip = !needShared('conformance/aigenora-reference/aigenora-group-vectors.json', "the reference's authoritative_group vectors");

function text(): string {
  if (!existsSync(CORPUS))
    throw new Error(`${CORPUS.pathname} is absent, so nothing can be checked; put the corpora there or set AIGENORA_SKIP_CORPORA=1 to skip`);
  return readFileSync(CORPUS, 'utf8');
}

type Doc = { cases: Record<string, any>[] };

/** The file after `change` edits its case `id` (parsed and written back). */
function altered(id: string, change: (v: Record<string, any>) => void): string {
  const doc = JSON.parse(text()) as Doc;
  change(doc.cases.find((v) => v['id'] === id)!);
  return JSON.stringify(doc);
}

const item = (v: Record<string, any>, name: string) => (v['items'] as Record<string, any>[]).find((i) => i['name'] === name)!;
const run = (fileText: string, id: string, name: string) =>
  groupSuite(fileText)
    .cases.find((x) => x.id === id)!
    .run(getCrypto(name));

describe.each(['wasm', 'js'])('%s backend', (name) => {
  const c = getCrypto(name);

  it.skipIf(skip)('passes every case, the Community Room session and its quirk included', () => {
    // The corpus README: 8 cases, one of each kind.
    expect(checkGroupVectors(c, text())).toEqual({
      json_delta: 1,
      json_delta_apply: 1,
      admission: 1,
      admission_handshake: 1,
      session: 1,
      session_quirk: 1,
      checkpoint: 1,
      canonical_json: 1,
    });
    const results = groupSuite(text()).cases.map((k) => [k.id, k.run(c)] as const);
    expect(results.map(([id]) => id)).toContain('community-room-session');
    expect(results.filter(([, r]) => !r.ok)).toEqual([]);
  });

  it.skipIf(skip)('fails the session when one byte of one recorded envelope is flipped', () => {
    const r = run(
      altered('community-room-session', (v) => {
        const step = (v['steps'] as Record<string, any>[]).find((s) => s['step'] === 'send_2')!;
        const env = Object.values(step['envelopes'] as Record<string, Record<string, any>>)[0]!;
        const sig = env['signature'] as string;
        env['signature'] = (sig[0] === '0' ? '1' : '0') + sig.slice(1);
      }),
      'community-room-session',
      name,
    );
    expect(r).toMatchObject({ ok: false });
    expect(r.outcome).toMatch(/send_2: envelope for/);
  });

  it.skipIf(skip)("fails the quirk case if the vector claimed the reference's frame carried the change", () => {
    const r = run(
      altered('bool-int-flip-delta', (v) => void (v['frame_envelope']['view_delta'] = [{ op: 'set', path: ['flag'], value: true }])),
      'bool-int-flip-delta',
      name,
    );
    expect(r).toMatchObject({ ok: false });
    expect(r.outcome).toMatch(/bool-int-flip-delta/);
  });

  it.skipIf(skip)('fails a delta case whose expected ops were altered', () => {
    const r = run(
      altered('json-delta-make', (v) => void (item(v, 'list_append')['expect']['ops'][0]['items'][1] = 3565)),
      'json-delta-make',
      name,
    );
    expect(r).toMatchObject({ ok: false });
    expect(r.outcome).toMatch(/list_append/);
  });

  it.skipIf(skip)('fails the quirk item if the vector claimed the reference had made our ops', () => {
    // The check pins the reference's recorded no-op: without it, our differing ops would prove nothing.
    const r = run(
      altered(
        'json-delta-make',
        (v) =>
          void (item(v, 'bool_int_equal_quirk')['expect']['ops'] = [
            { op: 'set', path: ['flag'], value: true },
            { op: 'set', path: ['n'], value: 0 },
          ]),
      ),
      'json-delta-make',
      name,
    );
    expect(r).toMatchObject({ ok: false });
    expect(r.outcome).toMatch(/bool_int_equal_quirk/);
  });

  it.skipIf(skip)('fails when a refusal text, a signature input, a certificate or a canonical form differs', () => {
    const edits: [string, (v: Record<string, any>) => void][] = [
      ['json-delta-apply', (v) => void (item(v, 'splice_bounds')['expect']['message'] = 'splice bounds are wrong')],
      ['admission-canonical', (v) => void (v['items'][1]['leader_epoch'] = 4)],
      ['admission-handshake', (v) => void (v['messages'][2]['message']['seat'] = 6)],
      ['checkpoint-certificates', (v) => void (v['items'][0]['checkpoint_unsigned']['seq'] = 16)],
      ['group-canonical-json', (v) => void (item(v, 'int_key')['expect']['message'] = 'keys')],
      ['group-canonical-json', (v) => void (item(v, 'depth_16')['value'] = [item(v, 'depth_16')['value']])],
    ];
    for (const [id, change] of edits) expect(run(altered(id, change), id, name).ok, id).toBe(false);
  });
});
