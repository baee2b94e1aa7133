// Protocol contracts, side by side in one run: message validation before and after messages were
// checked on their number literals (a parsed RPS reveal, its text, and a frame line carrying it),
// compiling the largest built-in spec beside ajv compiling the same schemas, and protocol_id of the
// largest spec on the wasm and js backends. Each group of cases is measured interleaved (SAMPLES
// rounds, the order rotating) and every floor is the median of paired ratios from the same rounds.
// In memory, nothing written. Prints a table; writes bench/results/spec.md and spec.floors.json.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { getCrypto } from '../ts/crypto/index.js';
import { builtinDir, BUILTINS } from '../ts/protocols/index.js';
import { makeAjv } from '../ts/spec/messages.js';
import { MessageValidator, messageJsonSchema, protocolId, type Spec } from '../ts/spec/index.js';
import { floorTable, fmt, interleaved, median, ratioFloor, SAMPLE_MS, SAMPLES, writeFloors, type Floor } from './measure.js';

const builtinTexts = BUILTINS.map((b) => readFileSync(join(builtinDir(b), 'spec.json'), 'utf8'));
const refDir = new URL('../../shared/reference/aigenora/src/aigenora/protocols/', import.meta.url).pathname;
const refTexts = existsSync(refDir)
  ? readdirSync(refDir)
      .filter((d) => /^[0-9a-f]{8}$/.test(d))
      .flatMap((a) => readdirSync(join(refDir, a)).map((b) => readFileSync(join(refDir, a, b, 'spec.json'), 'utf8')))
  : [];
const largest = (texts: string[]) => texts.reduce((a, b) => (b.length > a.length ? b : a));
const largestBuiltin = largest(builtinTexts);
const largestAny = largest([...builtinTexts, ...refTexts]);
const rps = JSON.parse(readFileSync(join(builtinDir(BUILTINS[0]!), 'spec.json'), 'utf8')) as Spec;
const validator = new MessageValidator(rps);
const reveal = { action: 'reveal', round: 3, choice: 'paper', nonce: '0123456789abcdef' };
const revealText = JSON.stringify(reveal);
const frameLine = JSON.stringify({
  v: 2,
  sid: 'a'.repeat(64),
  from: 'guest',
  seq: 7,
  prev: 'b'.repeat(64),
  ack: 'c'.repeat(64),
  msg: reveal,
  sig: 'd'.repeat(128),
});

/**
 * The path before messages were checked on their literals: JSON.parse's numbers and ajv's own
 * `integer` (which takes 1.0 and rounds 2^53 + 1). Rebuilt here from today's schema, whose only
 * difference for these fields is the integer keywords.
 */
function legacySchema(schema: Record<string, unknown>): Record<string, unknown> {
  const props = schema['properties'] as Record<string, Record<string, unknown>>;
  const old = Object.fromEntries(
    Object.entries(props).map(([k, p]) => {
      if (!('wireInteger' in p)) return [k, p];
      const { wireMinimum, wireMaximum } = p as { wireMinimum?: string; wireMaximum?: string };
      return [
        k,
        {
          type: 'integer',
          ...(wireMinimum !== undefined && { minimum: Number(wireMinimum) }),
          ...(wireMaximum !== undefined && { maximum: Number(wireMaximum) }),
        },
      ];
    }),
  );
  return { ...schema, properties: old };
}
const revealSpec = rps.messages.find((m) => m.name === 'reveal')!;
const legacy = makeAjv().compile(legacySchema(messageJsonSchema(revealSpec)));
const compiled = makeAjv().compile(messageJsonSchema(revealSpec));
if (!legacy(reveal) || !validator.check(reveal, 'guest_to_host').ok || !validator.checkText(frameLine, 'guest_to_host', undefined, 'msg').ok)
  throw new Error('bench inputs are not valid');

const rows: [string, number, string][] = [];
const floors: Floor[] = [];
/** Interleaved samples of each case; each case's median becomes a row. */
function group<K extends string>(cases: Record<K, [label: string, f: () => unknown, unit?: string]>, ms = SAMPLE_MS): Record<K, number[]> {
  const s = interleaved(Object.fromEntries(Object.entries(cases).map(([k, v]) => [k, (v as [string, () => unknown])[1]])) as Record<K, () => unknown>, 1, ms);
  for (const k of Object.keys(cases) as K[]) rows.push([cases[k][0], median(s[k]), cases[k][2] ?? 'msgs/s']);
  return s;
}
// Old and new validation paths side by side: a parsed value, the message text, and a frame line.
// "old" rows call the compiled function alone; check() and checkText() also find the message by action.
const parsed = group({
  old: ['old: compiled validator (ajv integer), a parsed RPS reveal', () => legacy(reveal)],
  compiled: ['new: compiled validator (wire integer keywords), a parsed RPS reveal', () => compiled(reveal)],
  check: ['new: check() of a parsed RPS reveal (lookup by action + compiled validator)', () => validator.check(reveal, 'guest_to_host')],
});
const text = group({
  old: ['old: JSON.parse + validate, reveal text', () => legacy(JSON.parse(revealText))],
  checkText: ['new: checkText (literal numbers: JSON.parse shortcut or lossless parse), reveal text', () => validator.checkText(revealText, 'guest_to_host')],
  lossless: [
    'new: checkText of a reveal with round written 3.0 (the lossless path; refused)',
    () => validator.checkText(revealText.replace('"round":3', '"round":3.0'), 'guest_to_host'),
  ],
});
const frame = group({
  old: [`old: JSON.parse + validate msg, frame line (${frameLine.length} B)`, () => legacy((JSON.parse(frameLine) as { msg: unknown }).msg)],
  checkText: [`new: checkText of msg, frame line (${frameLine.length} B)`, () => validator.checkText(frameLine, 'guest_to_host', undefined, 'msg')],
});
// protocol_id through ts/spec's protocolId(crypto, text), whichever path the backend takes to it.
const [wasmC, jsC] = [getCrypto('wasm'), getCrypto('js')];
if (protocolId(wasmC, largestAny) !== protocolId(jsC, largestAny)) throw new Error('protocol_id differs between the backends');
const ids = group({
  wasm: [`protocol_id of the largest spec (${largestAny.length} B), wasm backend`, () => protocolId(wasmC, largestAny), 'ids/s'],
  js: [`protocol_id of the largest spec (${largestAny.length} B), js backend`, () => protocolId(jsC, largestAny), 'ids/s'],
});
// Compiling is a one-off per protocol: MessageValidator beside a fresh ajv (the same options)
// compiling the same message schemas, which is the part of the work ajv does.
const largestSpec = JSON.parse(largestBuiltin) as Spec;
const compile = group(
  {
    ours: [
      `compile the largest built-in spec (${largestSpec.name}, ${largestSpec.messages.length} messages): new MessageValidator`,
      () => new MessageValidator(largestSpec),
      'compiles/s',
    ],
    ajv: [
      'the same message schemas compiled by a fresh ajv alone',
      () => {
        const ajv = makeAjv();
        for (const m of largestSpec.messages) ajv.compile(messageJsonSchema(m));
      },
      'compiles/s',
    ],
  },
  Math.max(SAMPLE_MS, 300),
);

floors.push(
  ratioFloor('new compiled validator ÷ old compiled validator, parsed reveal', parsed.compiled, parsed.old, 0.8),
  ratioFloor('new check() ÷ old compiled validator, parsed reveal', parsed.check, parsed.old, 0.4),
  ratioFloor('new checkText ÷ old JSON.parse + validate, reveal text', text.checkText, text.old, 0.6),
  ratioFloor('new checkText, lossless path (3.0) ÷ old JSON.parse + validate, reveal text', text.lossless, text.old, 0.12),
  ratioFloor('new checkText of msg ÷ old JSON.parse + validate msg, frame line', frame.checkText, frame.old, 0.5),
  ratioFloor('protocol_id of the largest spec, wasm ÷ js backend', ids.wasm, ids.js, 3),
  ratioFloor('compile the largest built-in spec, MessageValidator ÷ ajv alone on its schemas', compile.ours, compile.ajv, 0.7),
);
writeFloors('spec', floors);

const lines = [
  '# Protocol contracts',
  '',
  `${new Date().toISOString()} · Node ${process.version} · ${SAMPLES} interleaved samples of ${SAMPLE_MS} ms per case (compiles: ${Math.max(SAMPLE_MS, 300)} ms) · in memory, nothing written`,
  '',
  'Medians of the samples. Cases are measured in groups, interleaved: the old and new validators of each input, protocol_id on both backends, MessageValidator beside ajv alone.',
  '',
  '| case | median |',
  '|---|---:|',
  ...rows.map(([name, v, unit]) => `| ${name} | ${fmt(v)} ${unit} |`),
  '',
  `Compile time of the largest built-in spec: ${(1000 / median(compile.ours)).toFixed(2)} ms (median), ajv alone ${(1000 / median(compile.ajv)).toFixed(2)} ms. A figure, not a floor in ms: the floor is the ratio to ajv below.`,
  '',
  '## Floors, from this run',
  '',
  "Each ratio divides the first case's rate by the second's, measured in the same round. The validation floors say how much the literal-number checks may cost beside the path before them; protocol_id's, that the wasm backend is 3× the js twin; the compile floor, that what MessageValidator adds to ajv's own compile stays small.",
  '',
  ...floorTable(floors),
];
const report = `${lines.join('\n')}\n`;
process.stdout.write(report);
writeFileSync(new URL('results/spec.md', import.meta.url), report);
