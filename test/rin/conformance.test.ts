// The ten rin.host/v2 reference vector files on both backends, read in place from
// ../shared/conformance/rin-reference. A missing file fails, unless AIGENORA_SKIP_CORPORA=1 asks to skip it.
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { needShared } from '../shared/require.js';
import { getCrypto } from '../../ts/crypto/index.js';
import { RIN_KINDS, rinFormat, rinSuite, type RinKind } from '../../ts/conformance/rin.js';

const DIR = new URL('../../../shared/conformance/rin-reference/', import.meta.url);
const skip = !needShared('conformance/rin-reference', 'the rin.host/v2 reference vectors');

// Case counts from the corpus README's table.
const COUNTS: Record<RinKind, number> = {
  'capability-digest': 40,
  'capability-validation': 40,
  'action-request-digest': 40,
  'action-request-validation': 39,
  'effect-digest': 40,
  'schema-canonicalization': 40,
  'manifest-validation': 40,
  'durability-validation': 40,
  'epoch-fencing': 36,
  'action-run-transition': 40,
};

function text(kind: RinKind): string {
  const file = new URL(`${kind}.json`, DIR);
  if (!existsSync(file)) throw new Error(`${file.pathname} is absent, so nothing can be checked; put the corpora there or set AIGENORA_SKIP_CORPORA=1 to skip`);
  return readFileSync(file, 'utf8');
}

type Doc = { cases: Record<string, any>[] };

/** The file of `kind` after `change` edits its case `id`. */
function altered(kind: RinKind, id: string, change: (v: Record<string, any>) => void): string {
  const doc = JSON.parse(text(kind)) as Doc;
  const v = doc.cases.find((x) => x['id'] === id);
  if (!v) throw new Error(`no case ${id} in ${kind}`);
  change(v);
  return JSON.stringify(doc);
}

const runCase = (fileText: string, id: string, backend: string) =>
  rinSuite(fileText)
    .cases.find((x) => x.id === id)!
    .run(getCrypto(backend));

describe.each(['wasm', 'js'])('%s backend', (backend) => {
  const c = getCrypto(backend);

  it.skipIf(skip).each(RIN_KINDS)('passes every case of %s', (kind) => {
    const suite = rinSuite(text(kind));
    expect(suite.format).toBe(rinFormat(kind));
    expect(suite.cases).toHaveLength(COUNTS[kind]);
    const failures = suite.cases.map((k) => [k.id, k.run(c)] as const).filter(([, r]) => !r.ok);
    expect(failures).toEqual([]);
  });

  it.skipIf(skip)('fails a case whose expected digest, canonical bytes or field differs from ours', () => {
    const flip = (h: string) => (h[0] === '0' ? '1' : '0') + h.slice(1);
    expect(
      runCase(
        altered('action-request-digest', 'reqdigest-07', (v) => (v['expect']['digest'] = flip(v['expect']['digest']))),
        'reqdigest-07',
        backend,
      ).ok,
    ).toBe(false);
    expect(
      runCase(
        altered('capability-digest', 'capdigest-01', (v) => (v['expect']['canonical'] += ' ')),
        'capdigest-01',
        backend,
      ).ok,
    ).toBe(false);
    expect(
      runCase(
        altered('schema-canonicalization', 'schema-05', (v) => (v['expect']['sha256'] = flip(v['expect']['sha256']))),
        'schema-05',
        backend,
      ).ok,
    ).toBe(false);
    expect(
      runCase(
        altered('effect-digest', 'effects-11', (v) => (v['expect']['error']['field'] = 'effect_preview[0].tags')),
        'effects-11',
        backend,
      ).ok,
    ).toBe(false);
    expect(
      runCase(
        altered('epoch-fencing', 'fence-34', (v) => (v['expect']['error']['field'] = 'principal.id')),
        'fence-34',
        backend,
      ).ok,
    ).toBe(false);
  });

  it.skipIf(skip)('fails a case whose verdict is flipped, either way', () => {
    expect(
      runCase(
        altered('durability-validation', 'durability-01', (v) => (v['expect'] = { ok: true })),
        'durability-01',
        backend,
      ).ok,
    ).toBe(false);
    expect(
      runCase(
        altered('manifest-validation', 'manifest-01', (v) => (v['expect'] = { ok: false, error: { stage: 'decode' } })),
        'manifest-01',
        backend,
      ).ok,
    ).toBe(false);
    expect(
      runCase(
        altered('action-run-transition', 'transition-01', (v) => (v['expect'] = { ok: !v['expect']['ok'] })),
        'transition-01',
        backend,
      ).ok,
    ).toBe(false);
  });

  it.skipIf(skip)('a decode-stage rejection matches any rejection, a validate-stage one only its field', () => {
    // reqvalid-35 carries an unknown member: its field is irrelevant at stage decode.
    expect(
      runCase(
        altered('action-request-validation', 'reqvalid-35', (v) => (v['expect']['error']['field'] = 'anything')),
        'reqvalid-35',
        backend,
      ).ok,
    ).toBe(true);
    expect(
      runCase(
        altered('action-request-validation', 'reqvalid-10', (v) => (v['expect']['error']['field'] = 'controller_id')),
        'reqvalid-10',
        backend,
      ).ok,
    ).toBe(false);
  });
});
