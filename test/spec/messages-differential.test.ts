// Message validation against the reference implementation's own verdicts: test-vectors/messages.json
// (recorded by scripts/vectors/gen_messages.py from the reference's validate_message_obj), and the same
// generator run live over the reference's 20 built-in specs as well (python3 and the reference sources
// in ../shared; a missing one fails unless AIGENORA_SKIP_CORPORA=1). Every case must agree, except the
// documented strict-JSON policy classes, where this project refuses the text (MESSAGE_NOT_JSON) whatever
// the reference says.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { needCommand, needShared } from '../shared/require.js';
import { parseJson } from '../../ts/crypto/jcs.js';
import { MessageValidator, type Spec, type WireDirection } from '../../ts/spec/index.js';

interface VectorSpec {
  name: string;
  origin: string;
  sha256: string;
  text?: string;
}
interface VectorCase {
  spec: number;
  class: string;
  direction: WireDirection | null;
  message: string | null;
  text: string;
  reference: { valid: boolean; error?: string };
}
interface Vectors {
  source: string;
  policy: Record<string, string>;
  specs: VectorSpec[];
  cases: VectorCase[];
}

const ROOT = new URL('../../', import.meta.url).pathname;
const REF_SRC = join(ROOT, '../shared/reference/aigenora-src/src');
const REF_SPECS = join(REF_SRC, 'aigenora/protocols');

function specText(s: VectorSpec): string {
  if (s.text !== undefined) return s.text;
  const text = readFileSync(join(ROOT, 'ts/protocols', s.name.replace(/^builtin-/, ''), 'spec.json'), 'utf8');
  const sha = createHash('sha256').update(text).digest('hex');
  if (sha !== s.sha256) throw new Error(`${s.name}: spec.json changed since the vectors were recorded; run scripts/vectors/gen_messages.py`);
  return text;
}

interface Tally {
  agree: Record<string, number>;
  disagree: { class: string; spec: string; text: string; direction: string | null; reference: boolean; ours: boolean; why: string }[];
  policy: Record<string, { refused: number; referenceAccepted: number }>;
}

function run(v: Vectors): Tally {
  const validators = v.specs.map((s) => {
    const text = specText(s);
    return new MessageValidator(JSON.parse(text) as Spec, { specText: text });
  });
  const t: Tally = { agree: {}, disagree: [], policy: {} };
  for (const c of v.cases) {
    const r = validators[c.spec]!.checkText(c.text, c.direction ?? undefined, c.message ?? undefined);
    /** Records this case as a disagreement, saying `why`. */
    const disagree = (why: string) =>
      t.disagree.push({
        class: c.class,
        spec: v.specs[c.spec]!.name,
        text: c.text.slice(0, 160),
        direction: c.direction,
        reference: c.reference.valid,
        ours: r.ok,
        why,
      });
    // checkText reads plain texts with JSON.parse: the lossless path must give the same verdict.
    let lossless = false;
    try {
      lossless = validators[c.spec]!.checkNode(parseJson(c.text, { rawNumbers: true }), c.direction ?? undefined, c.message ?? undefined).ok;
    } catch {
      lossless = false;
    }
    if (lossless !== r.ok) disagree('the JSON.parse shortcut and the lossless path disagree');
    if (c.class.startsWith('policy-')) {
      const p = (t.policy[c.class] ??= { refused: 0, referenceAccepted: 0 });
      if (!r.ok && r.errors[0]!.code === 'MESSAGE_NOT_JSON') p.refused++;
      else disagree('policy case not refused as strict JSON');
      if (c.reference.valid) p.referenceAccepted++;
      continue;
    }
    if (r.ok === c.reference.valid) t.agree[c.class] = (t.agree[c.class] ?? 0) + 1;
    else disagree(r.ok ? `reference: ${c.reference.error}` : r.errors.map((e) => `${e.code} at ${e.pointer}`).join('; '));
  }
  return t;
}

function report(label: string, v: Vectors, t: Tally): void {
  const agreed = Object.values(t.agree).reduce((a, b) => a + b, 0);
  const policy = Object.entries(t.policy)
    .map(([k, p]) => `${k} ${p.refused} refused (reference accepted ${p.referenceAccepted})`)
    .join(', ');
  console.log(`${label}: ${v.cases.length} cases over ${v.specs.length} specs; ${agreed} agree, ${t.disagree.length} disagree; policy: ${policy}`);
}

const vectors = JSON.parse(readFileSync(join(ROOT, 'test-vectors/messages.json'), 'utf8')) as Vectors;

describe('message verdicts agree with the reference implementation', () => {
  it('on the recorded vectors, outside the documented policy classes', () => {
    expect(vectors.source).toMatch(/validate_message_obj/);
    expect(vectors.cases.length).toBeGreaterThan(5000);
    const t = run(vectors);
    report('recorded', vectors, t);
    expect(t.disagree).toEqual([]);
    // Each class the issue names is exercised, with both verdicts where both exist.
    for (const cls of ['valid', 'integer-literal', 'integer-range', 'array-number', 'json-number', 'json-size', 'ciphertext', 'integer-digits'])
      expect(t.agree[cls] ?? 0, cls).toBeGreaterThan(0);
    for (const cls of Object.keys(vectors.policy)) expect(t.policy[cls]?.refused ?? 0, cls).toBeGreaterThan(0);
  });

  const live =
    needShared('reference/aigenora-src/src/aigenora/proto/validate.py', "the reference's message validator (the live differential run)") &&
    needCommand('python3', 'the live differential run against the reference', 'install python3 (>= 3.10)');
  it.skipIf(!live)(
    "live, over this project's and the reference's built-in specs",
    () => {
      const r = spawnSync('python3', [join(ROOT, 'scripts/vectors/gen_messages.py'), '--stdout', '--reference-specs', REF_SPECS], {
        encoding: 'utf8',
        env: { ...process.env, PYTHONPATH: REF_SRC },
        maxBuffer: 1 << 30,
      });
      expect(r.status, r.stderr).toBe(0);
      const v = JSON.parse(r.stdout) as Vectors;
      expect(v.specs.filter((s) => s.name.startsWith('reference-')).length).toBe(20);
      const t = run(v);
      report('live', v, t);
      expect(t.disagree).toEqual([]);
    },
    120_000,
  );
});
